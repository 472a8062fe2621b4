//! The entry points the C++ shim calls. Each one catches panics: nothing unwinds into C++,
//! and a panic on any input is reported as a refusal, never a crash.
mod functions;
mod host;
mod meta;
mod table_fn;
mod view_guard;

use crate::engine::{self, Outcome, State};
use crate::error::{AclError, Class, Syntax};
use crate::prefix::{self, Token, TokenKind};
use crate::rewrite;
use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

#[repr(C)]
pub struct AclToken {
    start: u64,
    kind: u8,
}

#[repr(C)]
pub struct AclBuf {
    ptr: *mut u8,
    len: usize,
}

#[repr(C)]
pub struct AclOut {
    /// The rewritten SQL, or the refusal's message.
    text: AclBuf,
    /// `engine::Rewritten::names`: for translating DuckDB's errors about the statements.
    names: AclBuf,
    n_statements: u64,
    /// `Checks` (the second check's allowed sets) or null; freed with the rest.
    check: *mut c_void,
    /// The policy version the batch was decided under.
    version: u64,
    /// Unix seconds after which the batch's statements must not run any more (the token's `exp`);
    /// 0: no such limit.
    expires: i64,
    /// Who the batch runs as (empty for `ACL ADMIN`), for what the shim keeps per connection.
    principal: AclBuf,
}

/// The caller's settings the shim reads from its context for each batch.
#[repr(C)]
pub struct AclSettings {
    /// `acl_jwt_clock_skew`, seconds.
    clock_skew: u64,
    /// `acl_max_rewrite_bytes`.
    max_rewrite_bytes: u64,
    /// 1 when an explicit transaction is open on the caller's connection.
    in_transaction: u8,
}

impl AclSettings {
    fn read(&self, state: &State) -> rewrite::Settings {
        rewrite::Settings {
            clock_skew: self.clock_skew,
            max_rewrite_bytes: self.max_rewrite_bytes,
            in_transaction: self.in_transaction != 0,
            faults: state.faults,
        }
    }
}

/// What the shim hands `acl_rs_check`: one name DuckDB's parse contains, as `count` strings
/// starting at `first` in the string array.
#[repr(C)]
pub struct AclRef {
    kind: u8,
    first: u32,
    count: u32,
    /// The region of policy SQL it sits in (0: outside every region; see `rewrite::defence`).
    region: u32,
}

#[repr(C)]
pub struct AclStr {
    ptr: *const u8,
    len: usize,
}

/// One batch's allowed sets, per statement.
struct Checks {
    statements: Vec<Option<Arc<rewrite::Allowed>>>,
    /// Test-only fault: accept everything.
    off: bool,
    /// The batch cache's entry for this batch, which keeps DuckDB's parse of it (`acl_rs_parsed_*`).
    entry: Option<Arc<engine::BatchEntry>>,
    /// The instance's built-ins: a bare call in DuckDB's parse must be one (`defence::check`).
    host: Arc<crate::policy::functions::HostFunctions>,
}

extern "C-unwind" {
    fn acl_shim_init(loader: *mut c_void);
}

/// DuckDB's entry point for `acl.duckdb_extension` (C++ ABI): the shim does the C++ work.
/// DuckDB exceptions from the shim unwind through here to DuckDB, which reports a load error.
///
/// # Safety
/// Called by DuckDB (or the stage-1 loader) with a valid `duckdb::ExtensionLoader&`.
#[no_mangle]
pub unsafe extern "C-unwind" fn acl_duckdb_cpp_init(loader: *mut c_void) {
    unsafe { acl_shim_init(loader) }
}

/// Status codes shared with cpp/shim.cpp.
const NOT_OURS: i32 = 0;
const REWRITTEN: i32 = 1;
const REFUSED: i32 = 2;
const SYNTAX: i32 = 3;
const INVALID: i32 = 4;

#[no_mangle]
pub extern "C" fn acl_rs_state_new() -> *mut c_void {
    catch_unwind(|| Arc::into_raw(Arc::new(State::new())) as *mut c_void).unwrap_or(std::ptr::null_mut())
}

/// # Safety
/// `state` is null or came from `acl_rs_state_new` and is freed once.
#[no_mangle]
pub unsafe extern "C" fn acl_rs_state_free(state: *mut c_void) {
    if !state.is_null() {
        let _ = catch_unwind(|| drop(unsafe { Arc::from_raw(state as *const State) }));
    }
}

/// # Safety
/// `query` points to `len` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn acl_rs_is_ours(query: *const u8, len: usize) -> bool {
    let bytes = unsafe { std::slice::from_raw_parts(query, len) };
    // On a panic say "ours": the full path then refuses instead of letting DuckDB run the text.
    catch_unwind(|| prefix::maybe_ours(bytes)).unwrap_or(true)
}

/// The shim's tokenizer (DuckDB's `Parser::Tokenize`): tokenizes `len` bytes at `query` into
/// storage `ctx` owns and points `tokens`/`n_tokens` at it (valid until the next call with `ctx`
/// or the end of `acl_rs_rewrite`). False when it failed (the shim keeps DuckDB's exception and
/// throws it once `acl_rs_rewrite` returns). Must not unwind.
pub type AclTokenize = unsafe extern "C" fn(
    ctx: *mut c_void,
    query: *const u8,
    len: usize,
    tokens: *mut *const AclToken,
    n_tokens: *mut usize,
) -> bool;

/// `engine::Tokenize` over the shim's callback.
struct ShimTokenizer {
    tokenize: AclTokenize,
    ctx: *mut c_void,
}

impl engine::Tokenize for ShimTokenizer {
    fn tokens(&self, query: &str) -> Result<Vec<Token>, AclError> {
        let (mut tokens, mut n_tokens) = (std::ptr::null(), 0usize);
        // SAFETY: the callback and its context come from the shim's `acl_rs_rewrite` call, which
        // is still running; `query` is `len` readable bytes.
        if !unsafe { (self.tokenize)(self.ctx, query.as_ptr(), query.len(), &mut tokens, &mut n_tokens) } {
            return Err(AclError::internal("the statement could not be tokenized"));
        }
        let raw = if n_tokens == 0 || tokens.is_null() {
            &[][..]
        } else {
            // SAFETY: the callback points `tokens` at `n_tokens` tokens it keeps until it is
            // called again or `acl_rs_rewrite` returns; they are copied out here.
            unsafe { std::slice::from_raw_parts(tokens, n_tokens) }
        };
        Ok(raw.iter().map(|t| Token { start: t.start as usize, kind: TokenKind::from_u8(t.kind) }).collect())
    }
}

/// The statement path (`engine::rewrite`) for a text `acl_rs_is_ours` let through: `NOT_OURS`,
/// `REWRITTEN`, or a refusal's status, with `out` filled (`fill`). The engine asks `tokenize`
/// for DuckDB's tokens only when the batch is not one it kept.
///
/// # Safety
/// `state` came from `acl_rs_state_new`; `query` points to `len` readable bytes; `tokenize` and
/// `ctx` are the shim's tokenizer and its context; `settings` points to a live `AclSettings`;
/// `out` is writable and later released with `acl_rs_out_free`.
#[no_mangle]
pub unsafe extern "C" fn acl_rs_rewrite(
    state: *const c_void,
    query: *const u8,
    len: usize,
    tokenize: AclTokenize,
    ctx: *mut c_void,
    settings: *const AclSettings,
    out: *mut AclOut,
) -> i32 {
    let state = unsafe { &*(state as *const State) };
    let bytes = unsafe { std::slice::from_raw_parts(query, len) };
    // SAFETY: the shim passes a pointer to a live `AclSettings` for the duration of the call.
    let settings = unsafe { &*settings }.read(state);
    let tokenizer = ShimTokenizer { tokenize, ctx };
    let outcome = catch_unwind(AssertUnwindSafe(|| match std::str::from_utf8(bytes) {
        Ok(query) => engine::rewrite(state, query, &settings, &tokenizer),
        Err(_) => Outcome::Refused(AclError::from(Syntax::NotUtf8)),
    }))
    .unwrap_or_else(|_| Outcome::Refused(engine::failed()));
    fill(unsafe { &mut *out }, state, outcome)
}

/// Writes an `Outcome` into the shim's `AclOut` (the one place it is filled); returns its status.
fn fill(out: &mut AclOut, state: &State, outcome: Outcome) -> i32 {
    match outcome {
        Outcome::NotOurs => NOT_OURS,
        Outcome::Rewritten(r) => {
            out.text = AclBuf::from(r.sql);
            out.names = AclBuf::from(r.names);
            out.n_statements = r.statements as u64;
            out.version = r.version;
            out.expires = r.expires;
            out.principal = AclBuf::from(r.principal);
            let checks = Checks { statements: r.checks, off: state.faults.no_defence, entry: r.kept, host: state.host_functions() };
            out.check = Box::into_raw(Box::new(checks)) as *mut c_void;
            REWRITTEN
        }
        Outcome::Refused(e) => {
            let code = match e.class() {
                Class::Refused => REFUSED,
                Class::Syntax => SYNTAX,
                Class::Invalid | Class::Internal => INVALID,
            };
            out.text = AclBuf::from(e.to_string());
            code
        }
    }
}

/// DuckDB's parse of this batch as the shim stored it (already checked), or null.
///
/// # Safety
/// `check` is null or the `AclOut::check` of a live output; the pointer stays valid while it is.
#[no_mangle]
pub unsafe extern "C" fn acl_rs_parsed_get(check: *const c_void) -> *const c_void {
    if check.is_null() {
        return std::ptr::null();
    }
    let checks = unsafe { &*(check as *const Checks) };
    catch_unwind(AssertUnwindSafe(|| checks.entry.as_ref().and_then(|e| e.parsed.get()).map(|p| p.ptr())))
        .ok()
        .flatten()
        .unwrap_or(std::ptr::null())
}

/// Whether this batch has a cache entry without a parse yet (so `acl_rs_parsed_put` would keep one).
///
/// # Safety
/// As `acl_rs_parsed_get`.
#[no_mangle]
pub unsafe extern "C" fn acl_rs_parsed_wanted(check: *const c_void) -> bool {
    if check.is_null() {
        return false;
    }
    let checks = unsafe { &*(check as *const Checks) };
    catch_unwind(AssertUnwindSafe(|| checks.entry.as_ref().is_some_and(|e| e.parsed.get().is_none()))).unwrap_or(false)
}

/// Keeps DuckDB's parse of this batch (after the second check passed on it) with the batch
/// cache's entry. Takes ownership of `parsed` in every case: when there is no entry, or one is
/// already kept, it is freed at once with `free`.
///
/// # Safety
/// As `acl_rs_parsed_get`; `parsed` is freed only through `free`, which must not unwind.
#[no_mangle]
pub unsafe extern "C" fn acl_rs_parsed_put(
    check: *const c_void,
    parsed: *mut c_void,
    free: unsafe extern "C" fn(*mut c_void),
) {
    let parse = unsafe { engine::HostParse::new(parsed, free) };
    if check.is_null() {
        return;
    }
    let checks = unsafe { &*(check as *const Checks) };
    let _ = catch_unwind(AssertUnwindSafe(|| {
        if let Some(entry) = &checks.entry {
            let _ = entry.parsed.set(parse); // already set: this one drops (is freed) here
        }
    }));
}

impl AclBuf {
    fn from(s: String) -> AclBuf {
        let b = s.into_bytes().into_boxed_slice();
        let len = b.len();
        AclBuf { ptr: Box::into_raw(b) as *mut u8, len }
    }

    fn free(&mut self) {
        if !self.ptr.is_null() {
            let (ptr, len) = (self.ptr, self.len);
            let _ = catch_unwind(|| unsafe { drop(Box::from_raw(std::ptr::slice_from_raw_parts_mut(ptr, len))) });
            self.ptr = std::ptr::null_mut();
            self.len = 0;
        }
    }
}

/// # Safety
/// `out` was filled by `acl_rs_rewrite`/`acl_rs_translate_error` (or zeroed) and is freed once.
#[no_mangle]
pub unsafe extern "C" fn acl_rs_out_free(out: *mut AclOut) {
    let out = unsafe { &mut *out };
    out.text.free();
    out.names.free();
    out.principal.free();
    if !out.check.is_null() {
        let check = std::mem::replace(&mut out.check, std::ptr::null_mut());
        let _ = catch_unwind(|| drop(unsafe { Box::from_raw(check as *mut Checks) }));
    }
}

/// The second line of defence: statement `index` of a batch, as DuckDB parsed it (`refs` over
/// `strs`), against what the rules allowed. True when it passes; otherwise `out.text` says why
/// (naming nothing). A statement with no allowed set (management) passes.
///
/// # Safety
/// `check` is the `AclOut::check` of a live output; `refs`/`strs` point to `n_refs`/`n_strs`
/// items whose strings are readable; `out` is writable and later released with `acl_rs_out_free`.
#[no_mangle]
pub unsafe extern "C" fn acl_rs_check(
    check: *const c_void,
    index: usize,
    refs: *const AclRef,
    n_refs: usize,
    strs: *const AclStr,
    n_strs: usize,
    out: *mut AclOut,
) -> bool {
    let fail = |out: *mut AclOut, msg: String| {
        unsafe { (*out).text = AclBuf::from(msg) };
        false
    };
    if check.is_null() {
        return fail(out, AclError::internal("the second check has no decision").to_string());
    }
    let checks = unsafe { &*(check as *const Checks) };
    let refs = if n_refs == 0 { &[][..] } else { unsafe { std::slice::from_raw_parts(refs, n_refs) } };
    let strs = if n_strs == 0 { &[][..] } else { unsafe { std::slice::from_raw_parts(strs, n_strs) } };
    let result = catch_unwind(AssertUnwindSafe(|| -> Result<(), AclError> {
        let allowed = match checks.statements.get(index) {
            Some(Some(a)) => a,
            Some(None) => return Ok(()),
            None => return Err(AclError::internal("the second check lost count of the statements")),
        };
        if checks.off {
            return Ok(());
        }
        let texts: Vec<&str> = strs
            .iter()
            .map(|p| {
                // SAFETY: the shim passes pointers to `len` readable bytes that live for the call.
                let bytes = if p.len == 0 { &[][..] } else { unsafe { std::slice::from_raw_parts(p.ptr, p.len) } };
                // A name that is not UTF-8 matches nothing the rules allowed.
                std::str::from_utf8(bytes).unwrap_or("\u{fffd}")
            })
            .collect();
        let mut parsed = Vec::with_capacity(refs.len());
        for r in refs {
            let (first, count) = (r.first as usize, r.count as usize);
            let Some(path) = first.checked_add(count).and_then(|end| texts.get(first..end)) else {
                return Err(AclError::internal("the second check got a malformed list"));
            };
            parsed.push((r.kind, r.region, path));
        }
        rewrite::defence_check(allowed, &checks.host, parsed)
    }));
    match result {
        Ok(Ok(())) => true,
        Ok(Err(e)) => fail(out, e.to_string()),
        Err(_) => fail(out, AclError::internal("the second check failed; the statement was refused").to_string()),
    }
}

/// Is statement `index` checked at all (management statements and the `no_defence` test fault
/// are not)? Lets the shim skip listing what nothing will compare.
///
/// # Safety
/// `check` is null or the `AclOut::check` of a live output.
#[no_mangle]
pub unsafe extern "C" fn acl_rs_defence_on(check: *const c_void, index: usize) -> bool {
    if check.is_null() {
        return true; // acl_rs_check then refuses
    }
    let checks = unsafe { &*(check as *const Checks) };
    !checks.off && !matches!(checks.statements.get(index), Some(None))
}

/// Does statement `index` depend on the policy (a prepared copy must not outlive a change)?
///
/// # Safety
/// `check` is null or the `AclOut::check` of a live output.
#[no_mangle]
pub unsafe extern "C" fn acl_rs_versioned(check: *const c_void, index: usize) -> bool {
    if check.is_null() {
        return false;
    }
    let checks = unsafe { &*(check as *const Checks) };
    matches!(checks.statements.get(index), Some(Some(a)) if a.versioned)
}

/// The version of the policy published now.
///
/// # Safety
/// `state` came from `acl_rs_state_new`.
#[no_mangle]
pub unsafe extern "C" fn acl_rs_policy_version(state: *const c_void) -> u64 {
    let state = unsafe { &*(state as *const State) };
    catch_unwind(AssertUnwindSafe(|| state.policy_version())).unwrap_or(u64::MAX)
}

/// DuckDB's error about a principal's statement as the principal sees it (`names` as
/// `acl_rs_rewrite` returned it, `kind` DuckDB's exception type name; `rewrite::translate_error`).
/// Writes `out.text`; false on a panic.
///
/// # Safety
/// `names`/`kind`/`message` point to `names_len`/`kind_len`/`message_len` readable bytes; `out` is
/// writable.
#[no_mangle]
pub unsafe extern "C" fn acl_rs_translate_error(
    names: *const u8,
    names_len: usize,
    kind: *const u8,
    kind_len: usize,
    message: *const u8,
    message_len: usize,
    out: *mut AclOut,
) -> bool {
    let names = unsafe { std::slice::from_raw_parts(names, names_len) };
    let kind = unsafe { std::slice::from_raw_parts(kind, kind_len) };
    let message = unsafe { std::slice::from_raw_parts(message, message_len) };
    let result = catch_unwind(|| {
        rewrite::translate_error(
            &String::from_utf8_lossy(names),
            &String::from_utf8_lossy(kind),
            &String::from_utf8_lossy(message),
        )
    });
    match result {
        Ok(text) => {
            unsafe { (*out).text = AclBuf::from(text) };
            true
        }
        Err(_) => false,
    }
}

/// Registers the extension's SQL functions through the C extension API.
///
/// # Safety
/// `state` came from `acl_rs_state_new`; `info`/`access` are the shim's access callbacks.
#[no_mangle]
pub unsafe extern "C" fn acl_rs_register(
    state: *const c_void,
    info: libduckdb_sys::duckdb_extension_info,
    access: *const libduckdb_sys::duckdb_extension_access,
) -> bool {
    let result = catch_unwind(AssertUnwindSafe(|| unsafe {
        // A second reference for the registered functions; the shim keeps its own.
        Arc::increment_strong_count(state as *const State);
        functions::register(Arc::from_raw(state as *const State), info, access)
    }));
    let error = match result {
        Ok(Ok(())) => return true,
        Ok(Err(e)) => e,
        Err(_) => "panic while registering functions".to_string(),
    };
    if let Some(set_error) = unsafe { (*access).set_error } {
        let msg = std::ffi::CString::new(error.replace('\0', " ")).unwrap_or_default();
        unsafe { set_error(info, msg.as_ptr()) };
    }
    false
}
