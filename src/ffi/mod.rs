//! The entry points the C++ shim calls. Each one catches panics: nothing unwinds into C++,
//! and a panic on any input is reported as a refusal, never a crash.
mod abi;
mod check;
mod door;
#[cfg(feature = "flight-sql")]
mod door_node;
mod drift;
mod enums;
mod export;
mod functions;
mod host;
mod host_sql;
mod listing;
mod meta;
mod sessions;
mod shape;
mod sql;
mod store;
mod table_fn;
mod validate;
mod view_guard;

use abi::{AclBuf, AclOut, AclRef, AclSettings, AclStatus, AclStr};
pub use abi::AclTokenize;
use crate::engine::{self, Outcome, State};
use crate::error::{AclError, Class, Syntax};
use crate::prefix::{self, Token, TokenKind};
use crate::rewrite;
use std::ffi::{c_char, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

/// One batch's allowed sets, per statement (opaque to the shim, `AclChecks`).
pub struct Checks {
    statements: Vec<Option<Arc<rewrite::Allowed>>>,
    /// Test-only fault: accept everything.
    off: bool,
    /// `ACL NATIVE`: its unchecked statements are versioned all the same.
    native: bool,
    /// The batch cache's entry for this batch, which keeps DuckDB's parse of it (`acl_rs_parsed_*`).
    entry: Option<Arc<engine::BatchEntry>>,
    /// The entry was met before (`Rewritten::repeat`): its parse is worth keeping.
    repeat: bool,
    /// The instance's built-ins: a bare call in DuckDB's parse must be one (`defence::check`).
    host: Arc<crate::policy::functions::HostFunctions>,
    /// The published policy: where its store is (never a source inside policy SQL).
    policy: Arc<crate::policy::Policy>,
    /// The learned shape the batch is an instance of (`acl_rs_shape_*`), and its holes once asked.
    shape: Option<engine::ShapeUse>,
    substs: std::cell::OnceCell<Vec<abi::AclSubst>>,
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
    // SAFETY: the caller's contract; the shim's entry takes the same loader.
    unsafe { acl_shim_init(loader) }
}

/// The instance's state (opaque to the shim, `AclState`), or null on a failure.
#[no_mangle]
pub extern "C" fn acl_rs_state_new() -> *mut State {
    catch_unwind(|| Arc::into_raw(Arc::new(State::new())) as *mut State).unwrap_or(std::ptr::null_mut())
}

/// # Safety
/// `state` is null or came from `acl_rs_state_new` and is freed once.
#[no_mangle]
pub unsafe extern "C" fn acl_rs_state_free(state: *mut State) {
    if !state.is_null() {
        // SAFETY: the caller's contract: the shim's reference, given up here.
        let _ = catch_unwind(AssertUnwindSafe(|| drop(unsafe { Arc::from_raw(state as *const State) })));
    }
}

/// Gives the state the instance's database as a weak pointer (`store::AclDb`, which it owns from
/// here on, also on a failure), so that `acl_use_db` can open connections to it without keeping
/// it alive. False on a failure.
///
/// # Safety
/// `state` came from `acl_rs_state_new`; `db` came from the shim and is not used by it again.
#[no_mangle]
pub unsafe extern "C" fn acl_rs_set_database(state: *const State, db: *mut store::AclDb) -> bool {
    // SAFETY: the caller's contract: `db` is ours from here on, freed when the value drops.
    let weak = std::sync::Arc::new(unsafe { store::WeakDb::new(db) });
    // SAFETY: the caller's contract: the state lives for the call.
    let state = unsafe { &*state };
    catch_unwind(AssertUnwindSafe(|| state.host_db.set(Arc::new(store::InstanceDb(weak))).is_ok())).unwrap_or(false)
}

/// # Safety
/// `query` points to `len` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn acl_rs_is_ours(query: *const c_char, len: usize) -> bool {
    // SAFETY: the caller's contract.
    let bytes = unsafe { std::slice::from_raw_parts(query as *const u8, len) };
    // On a panic say "ours": the full path then refuses instead of letting DuckDB run the text.
    catch_unwind(|| prefix::maybe_ours(bytes)).unwrap_or(true)
}

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
        if !unsafe { (self.tokenize)(self.ctx, query.as_ptr() as *const c_char, query.len(), &mut tokens, &mut n_tokens) } {
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

    fn print(&self, sql: &str) -> Result<Option<rewrite::Printed>, AclError> {
        host_sql::print(sql).map(Some)
    }
}

/// The statement path (`engine::rewrite`) for a text `acl_rs_is_ours` let through: `NotOurs`,
/// `Rewritten`, or a refusal's status, with `out` filled (`fill`). The engine asks `tokenize`
/// for DuckDB's tokens only when the batch is not one it kept.
///
/// # Safety
/// `state` came from `acl_rs_state_new`; `query` points to `len` readable bytes; `tokenize` and
/// `ctx` are the shim's tokenizer and its context; `settings` points to a live `AclSettings`;
/// `out` is writable and later released with `acl_rs_out_free`.
#[no_mangle]
pub unsafe extern "C" fn acl_rs_rewrite(
    state: *const State,
    query: *const c_char,
    len: usize,
    tokenize: AclTokenize,
    ctx: *mut c_void,
    settings: *const AclSettings,
    out: *mut AclOut,
) -> AclStatus {
    // SAFETY: the caller's contract: the state lives for the call, `query` has `len` bytes.
    let state = unsafe { &*state };
    // SAFETY: as above.
    let bytes = unsafe { std::slice::from_raw_parts(query as *const u8, len) };
    // SAFETY: the shim passes a pointer to a live `AclSettings` for the duration of the call.
    let settings = unsafe { &*settings }.read(state);
    let tokenizer = ShimTokenizer { tokenize, ctx };
    let outcome = catch_unwind(AssertUnwindSafe(|| match std::str::from_utf8(bytes) {
        Ok(query) => engine::rewrite(state, query, &settings, &tokenizer),
        Err(_) => Outcome::Refused(AclError::from(Syntax::NotUtf8)),
    }))
    .unwrap_or_else(|_| Outcome::Refused(engine::failed()));
    // SAFETY: `out` is writable for the call (the caller's contract).
    fill(unsafe { &mut *out }, state, outcome)
}

/// Writes an `Outcome` into the shim's `AclOut` (the one place it is filled); returns its status.
fn fill(out: &mut AclOut, state: &State, outcome: Outcome) -> AclStatus {
    match outcome {
        Outcome::NotOurs => AclStatus::NotOurs,
        Outcome::Rewritten(r) => {
            out.text = AclBuf::from(r.sql);
            out.names = AclBuf::from(r.names);
            out.n_statements = r.statements as u64;
            out.version = r.version;
            out.expires = r.expires;
            out.session = r.session;
            out.principal = AclBuf::from(r.principal);
            let checks = Checks {
                statements: r.checks,
                off: state.faults.no_defence,
                native: r.native,
                entry: r.kept,
                repeat: r.repeat,
                host: state.host_functions(),
                policy: state.policy(),
                shape: r.shape,
                substs: Default::default(),
            };
            out.check = Box::into_raw(Box::new(checks));
            AclStatus::Rewritten
        }
        Outcome::Refused(e) => {
            let code = match e.class() {
                Class::Refused => AclStatus::Refused,
                Class::Syntax => AclStatus::Syntax,
                Class::Invalid | Class::Internal => AclStatus::Invalid,
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
pub unsafe extern "C" fn acl_rs_parsed_get(check: *const Checks) -> *const c_void {
    if check.is_null() {
        return std::ptr::null();
    }
    // SAFETY: not null: the `AclOut::check` of a live output (the caller's contract).
    let checks = unsafe { &*check };
    catch_unwind(AssertUnwindSafe(|| checks.entry.as_ref().and_then(|e| e.parsed.get()).map(|p| p.ptr())))
        .ok()
        .flatten()
        .unwrap_or(std::ptr::null())
}

/// Whether this batch has a cache entry met before without a parse yet (so `acl_rs_parsed_put`
/// would keep one): a text's parse is kept the second time it is met, not the first.
///
/// # Safety
/// As `acl_rs_parsed_get`.
#[no_mangle]
pub unsafe extern "C" fn acl_rs_parsed_wanted(check: *const Checks) -> bool {
    if check.is_null() {
        return false;
    }
    // SAFETY: as in `acl_rs_parsed_get`.
    let checks = unsafe { &*check };
    catch_unwind(AssertUnwindSafe(|| checks.repeat && checks.entry.as_ref().is_some_and(|e| e.parsed.get().is_none())))
        .unwrap_or(false)
}

/// Keeps DuckDB's parse of this batch (after the second check passed on it) with the batch
/// cache's entry. Takes ownership of `parsed` in every case: when there is no entry, or one is
/// already kept, it is freed at once with `free`.
///
/// # Safety
/// As `acl_rs_parsed_get`; `parsed` is freed only through `free`, which must not unwind.
#[no_mangle]
pub unsafe extern "C" fn acl_rs_parsed_put(
    check: *const Checks,
    parsed: *mut c_void,
    free: unsafe extern "C" fn(*mut c_void),
) {
    // SAFETY: the caller's contract, which is `hand_over`'s.
    unsafe {
        hand_over(check, parsed, free, |checks, parse| {
            if let Some(entry) = &checks.entry {
                let _ = entry.parsed.set(parse); // already set: this one drops (is freed) here
            }
        })
    }
}

/// Takes ownership of a parse the shim hands over and gives it to `keep` with the batch's
/// checks; with no checks, or on a panic, it is freed (once, when it drops).
///
/// # Safety
/// `check` is null or the `AclOut::check` of a live output; `parsed` is freed only through
/// `free`, which must not unwind.
unsafe fn hand_over(
    check: *const Checks,
    parsed: *mut c_void,
    free: unsafe extern "C" fn(*mut c_void),
    keep: impl FnOnce(&Checks, engine::HostParse),
) {
    // SAFETY: the caller's contract: `parsed` is ours to free through `free`, once.
    let parse = unsafe { engine::HostParse::new(parsed, free) };
    if check.is_null() {
        return;
    }
    // SAFETY: not null: the `AclOut::check` of a live output (the caller's contract).
    let checks = unsafe { &*check };
    let _ = catch_unwind(AssertUnwindSafe(|| keep(checks, parse)));
}


/// # Safety
/// `out` was filled by `acl_rs_rewrite`/`acl_rs_translate_error` (or zeroed) and is freed once.
#[no_mangle]
pub unsafe extern "C" fn acl_rs_out_free(out: *mut AclOut) {
    // SAFETY: the caller's contract: `out` is writable.
    let out = unsafe { &mut *out };
    out.text.free();
    out.names.free();
    out.principal.free();
    if !out.check.is_null() {
        let check = std::mem::replace(&mut out.check, std::ptr::null_mut());
        // SAFETY: a pointer `Box::into_raw` made in `acl_rs_rewrite*`, nulled above so freed once.
        let _ = catch_unwind(AssertUnwindSafe(|| drop(unsafe { Box::from_raw(check) })));
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
    check: *const Checks,
    index: usize,
    refs: *const AclRef,
    n_refs: usize,
    strs: *const AclStr,
    n_strs: usize,
    out: *mut AclOut,
) -> bool {
    if check.is_null() {
        // SAFETY: the caller's contract.
        return unsafe { report(Ok(Err(AclError::internal("the second check has no decision"))), out) };
    }
    // SAFETY: not null: the `AclOut::check` of a live output (the caller's contract).
    let checks = unsafe { &*check };
    // SAFETY: the caller's contract.
    let (refs, strs) = unsafe { list(refs, n_refs, strs, n_strs) };
    let result = catch_unwind(AssertUnwindSafe(|| -> Result<(), AclError> {
        let allowed = match checks.statements.get(index) {
            Some(Some(a)) => a,
            Some(None) => return Ok(()),
            None => return Err(AclError::internal("the second check lost count of the statements")),
        };
        if checks.off {
            return Ok(());
        }
        let texts = texts(strs);
        let parsed = parsed(refs, &texts)?;
        rewrite::defence_check(allowed, &checks.host, checks.policy.home.as_ref(), parsed)
    }));
    // SAFETY: the caller's contract.
    unsafe { report(result, out) }
}

/// A parse's list as the shim hands it over.
///
/// # Safety
/// `refs`/`strs` point to `n_refs`/`n_strs` items (null pointers only with none) that outlive `'a`.
unsafe fn list<'a>(refs: *const AclRef, n_refs: usize, strs: *const AclStr, n_strs: usize) -> (&'a [AclRef], &'a [AclStr]) {
    // SAFETY: the caller's contract.
    let refs = if n_refs == 0 { &[][..] } else { unsafe { std::slice::from_raw_parts(refs, n_refs) } };
    // SAFETY: as above.
    let strs = if n_strs == 0 { &[][..] } else { unsafe { std::slice::from_raw_parts(strs, n_strs) } };
    (refs, strs)
}

/// A check's outcome for the shim: true when it passed; otherwise `out.text` says why (naming
/// nothing), a panic included.
///
/// # Safety
/// `out` is writable.
unsafe fn report(result: std::thread::Result<Result<(), AclError>>, out: *mut AclOut) -> bool {
    let msg = match result {
        Ok(Ok(())) => return true,
        Ok(Err(e)) => e.to_string(),
        Err(_) => AclError::internal("the second check failed; the statement was refused").to_string(),
    };
    // SAFETY: the caller's contract.
    unsafe { (*out).text = AclBuf::from(msg) };
    false
}

/// The strings of a parse's list (`acl_rs_check`, `acl_rs_check_reparsed`).
fn texts(strs: &[AclStr]) -> Vec<&str> {
    strs.iter()
        .map(|p| {
            // SAFETY: the shim passes pointers to `len` readable bytes that live for the call.
            let bytes = if p.len == 0 { &[][..] } else { unsafe { std::slice::from_raw_parts(p.ptr as *const u8, p.len) } };
            // A name that is not UTF-8 matches nothing the rules allowed.
            std::str::from_utf8(bytes).unwrap_or("\u{fffd}")
        })
        .collect()
}

/// A parse's list as `(kind, region, name parts)` over `texts`.
fn parsed<'t, 'a>(refs: &[AclRef], texts: &'t [&'a str]) -> Result<Vec<(rewrite::RefKind, u32, &'t [&'a str])>, AclError> {
    refs.iter()
        .map(|r| {
            let (first, count) = (r.first as usize, r.count as usize);
            let path = first
                .checked_add(count)
                .and_then(|end| texts.get(first..end))
                .ok_or_else(|| AclError::internal("the second check got a malformed list"))?;
            Ok((rewrite::RefKind::from_u8(r.kind), r.region, path))
        })
        .collect()
}

/// Our own text coming back to the parser (a relation re-parses a statement's query, which
/// carries the policy tag), as DuckDB parsed it (`refs` over `strs`): every one-part call must be
/// a built-in of `system.main`, which the shim then qualifies it to, as the first time. True when
/// it passes; otherwise `out.text` says why (naming nothing).
///
/// # Safety
/// `state` came from `acl_rs_state_new`; `refs`/`strs` and `out` as for `acl_rs_check`.
#[no_mangle]
pub unsafe extern "C" fn acl_rs_check_reparsed(
    state: *const State,
    refs: *const AclRef,
    n_refs: usize,
    strs: *const AclStr,
    n_strs: usize,
    out: *mut AclOut,
) -> bool {
    // SAFETY: the caller's contract.
    let state = unsafe { &*state };
    // SAFETY: the caller's contract.
    let (refs, strs) = unsafe { list(refs, n_refs, strs, n_strs) };
    let result = catch_unwind(AssertUnwindSafe(|| -> Result<(), AclError> {
        let texts = texts(strs);
        rewrite::defence_reparsed(&state.host_functions(), parsed(refs, &texts)?)
    }));
    // SAFETY: the caller's contract.
    unsafe { report(result, out) }
}

/// Is statement `index` checked at all (management statements and the `no_defence` test fault
/// are not)? Lets the shim skip listing what nothing will compare.
///
/// # Safety
/// `check` is null or the `AclOut::check` of a live output.
#[no_mangle]
pub unsafe extern "C" fn acl_rs_defence_on(check: *const Checks, index: usize) -> bool {
    if check.is_null() {
        return true; // acl_rs_check then refuses
    }
    // SAFETY: not null: the `AclOut::check` of a live output (the caller's contract).
    let checks = unsafe { &*check };
    !checks.off && !matches!(checks.statements.get(index), Some(None))
}

/// Does statement `index` depend on the policy (a prepared copy must not outlive a change)?
///
/// # Safety
/// `check` is null or the `AclOut::check` of a live output.
#[no_mangle]
pub unsafe extern "C" fn acl_rs_versioned(check: *const Checks, index: usize) -> bool {
    if check.is_null() {
        return false;
    }
    // SAFETY: as in `acl_rs_defence_on`.
    let checks = unsafe { &*check };
    match checks.statements.get(index) {
        Some(Some(a)) => a.versioned,
        // Management statements apply when they run, judged then; native ones were judged now.
        Some(None) => checks.native,
        None => false,
    }
}

/// `acl_version_check_interval` was set (or reset, or read at load): milliseconds between the
/// background thread's reads of a shared store's policy version (0: notices only).
///
/// # Safety
/// `state` came from `acl_rs_state_new`.
#[no_mangle]
pub unsafe extern "C" fn acl_rs_set_version_check_interval(state: *const State, ms: u64) {
    // SAFETY: the caller's contract.
    let state = unsafe { &*state };
    let _ = catch_unwind(AssertUnwindSafe(|| state.set_version_check_interval(ms)));
}

/// The version of the policy published now.
///
/// # Safety
/// `state` came from `acl_rs_state_new`.
#[no_mangle]
pub unsafe extern "C" fn acl_rs_policy_version(state: *const State) -> u64 {
    // SAFETY: the caller's contract.
    let state = unsafe { &*state };
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
    names: *const c_char,
    names_len: usize,
    kind: *const c_char,
    kind_len: usize,
    message: *const c_char,
    message_len: usize,
    out: *mut AclOut,
) -> bool {
    // SAFETY: the caller's contract: each pointer has its length of readable bytes.
    let names = unsafe { std::slice::from_raw_parts(names as *const u8, names_len) };
    // SAFETY: as for `names`.
    let kind = unsafe { std::slice::from_raw_parts(kind as *const u8, kind_len) };
    // SAFETY: as for `names`.
    let message = unsafe { std::slice::from_raw_parts(message as *const u8, message_len) };
    let result = catch_unwind(|| {
        rewrite::translate_error(
            &String::from_utf8_lossy(names),
            &String::from_utf8_lossy(kind),
            &String::from_utf8_lossy(message),
        )
    });
    match result {
        Ok(text) => {
            // SAFETY: the caller's contract: `out` is writable.
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
    state: *const State,
    info: libduckdb_sys::duckdb_extension_info,
    access: *const libduckdb_sys::duckdb_extension_access,
) -> bool {
    // SAFETY: `state` is the shim's live reference (the caller's contract), so counting one more
    // and taking it is sound; `info`/`access` are what `register` expects.
    let result = catch_unwind(AssertUnwindSafe(|| unsafe {
        // A second reference for the registered functions; the shim keeps its own.
        Arc::increment_strong_count(state);
        functions::register(Arc::from_raw(state), info, access)
    }));
    let error = match result {
        Ok(Ok(())) => return true,
        Ok(Err(e)) => e,
        Err(_) => "panic while registering functions".to_string(),
    };
    // SAFETY: `access` is the shim's live callback table (the caller's contract).
    if let Some(set_error) = unsafe { (*access).set_error } {
        let msg = std::ffi::CString::new(error.replace('\0', " ")).unwrap_or_default();
        // SAFETY: the shim copies the message before `msg` drops.
        unsafe { set_error(info, msg.as_ptr()) };
    }
    false
}
