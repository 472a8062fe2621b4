//! The types of the C boundary with the shim (cpp/), passed by pointer or by value. They are
//! defined here once: cbindgen turns them (with the `extern` functions of `ffi` and the enums
//! `prefix::TokenKind` and `rewrite::RefKind`) into cpp/acl_ffi.hpp, which the shim includes and
//! src/ffi/header.rs keeps current.
//!
//! A field the shim writes is an integer that Rust reads through a total conversion (an enum
//! field holding a value no variant has would be undefined behaviour); what only Rust writes may
//! be an enum.
use super::Checks;
use crate::rewrite;
use crate::engine::State;
use std::ffi::{c_char, c_void};
use std::panic::catch_unwind;

/// What `acl_rs_rewrite` answers; the shim throws the matching DuckDB
/// exception with `AclOut::text` for the three refusals.
#[repr(i32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AclStatus {
    /// Not a principal's statement: DuckDB parses the text itself.
    NotOurs = 0,
    /// `AclOut` holds the rewritten batch.
    Rewritten = 1,
    /// A refusal (a `PermissionException`).
    Refused = 2,
    /// A syntax error in the principal's text (a `ParserException`).
    Syntax = 3,
    /// Anything else, internal errors included (an `InvalidInputException`).
    Invalid = 4,
}

/// `acl_jwt_clock_skew`'s default, seconds: the shim registers the setting with it.
pub const ACL_DEFAULT_CLOCK_SKEW: u64 = 60;
/// `acl_max_rewrite_bytes`'s default.
pub const ACL_DEFAULT_MAX_REWRITE_BYTES: u64 = 1 << 20;
/// `acl_jwks_refresh_interval`'s default, seconds.
pub const ACL_DEFAULT_JWKS_REFRESH_INTERVAL: u64 = 300;
/// `acl_jwks_max_stale`'s default, seconds.
pub const ACL_DEFAULT_JWKS_MAX_STALE: u64 = 3600;
/// `acl_session_idle_timeout`'s default, seconds.
pub const ACL_DEFAULT_SESSION_IDLE_TIMEOUT: u64 = 900;
/// `acl_max_sessions`'s default.
pub const ACL_DEFAULT_MAX_SESSIONS: u64 = 1000;
/// `acl_flight_stream_idle`'s default, seconds.
pub const ACL_DEFAULT_STREAM_IDLE: u64 = 30;
/// `acl_version_check_interval`'s default, milliseconds.
pub const ACL_DEFAULT_VERSION_CHECK_INTERVAL: u64 = 1000;
// cbindgen exports literals only: the defaults the rewriter falls back to must be the same.
const _: () = assert!(
    ACL_DEFAULT_VERSION_CHECK_INTERVAL == crate::engine::source::DEFAULT_VERSION_CHECK_MS
        && ACL_DEFAULT_CLOCK_SKEW == rewrite::DEFAULT_CLOCK_SKEW
        && ACL_DEFAULT_MAX_REWRITE_BYTES == rewrite::DEFAULT_MAX_REWRITE_BYTES
        && ACL_DEFAULT_JWKS_REFRESH_INTERVAL == crate::auth::DEFAULT_REFRESH_SECS
        && ACL_DEFAULT_JWKS_MAX_STALE == crate::auth::DEFAULT_MAX_STALE_SECS
        && ACL_DEFAULT_SESSION_IDLE_TIMEOUT == crate::engine::sessions::DEFAULT_IDLE_TIMEOUT
        && ACL_DEFAULT_MAX_SESSIONS == crate::engine::sessions::DEFAULT_MAX_SESSIONS
        && ACL_DEFAULT_STREAM_IDLE == crate::door::DEFAULT_STREAM_IDLE
);

/// One token of DuckDB's tokenizer (`Parser::Tokenize`): where it starts in the text and its type.
#[repr(C)]
pub struct AclToken {
    pub(super) start: u64,
    /// An `AclTokenKind` (`prefix::TokenKind`), read with `TokenKind::from_u8`.
    pub(super) kind: u8,
}

/// The shim's tokenizer (DuckDB's `Parser::Tokenize`): tokenizes `len` bytes at `query` into
/// storage `ctx` owns and points `tokens`/`n_tokens` at it (valid until the next call with `ctx`
/// or the end of `acl_rs_rewrite`). False when it failed (the shim keeps DuckDB's exception and
/// throws it once `acl_rs_rewrite` returns). Must not unwind.
pub type AclTokenize = unsafe extern "C" fn(
    ctx: *mut c_void,
    query: *const c_char,
    len: usize,
    tokens: *mut *const AclToken,
    n_tokens: *mut usize,
) -> bool;

/// A string Rust allocated and hands the shim; freed with the `AclOut` that holds it.
#[repr(C)]
pub struct AclBuf {
    pub(super) ptr: *mut c_char,
    pub(super) len: usize,
}

/// What an entry point hands back: the shim zeroes it, Rust fills it, `acl_rs_out_free` frees it.
#[repr(C)]
pub struct AclOut {
    /// The rewritten SQL, or the refusal's message.
    pub(super) text: AclBuf,
    /// `engine::Rewritten::names`: for translating DuckDB's errors about the statements.
    pub(super) names: AclBuf,
    pub(super) n_statements: u64,
    /// The second check's allowed sets, or null; freed with the rest.
    pub(super) check: *mut Checks,
    /// The policy version the batch was decided under.
    pub(super) version: u64,
    /// Unix seconds after which the batch's statements must not run any more (the token's `exp`);
    /// 0: no such limit.
    pub(super) expires: i64,
    /// The session the batch runs under (its operator id, never its handle); 0: none. The
    /// statements run only while it is live (`acl_rs_session_check`).
    pub(super) session: u64,
    /// Who the batch runs as (empty for `ACL ADMIN`), for what the shim keeps per connection.
    pub(super) principal: AclBuf,
}

/// The caller's settings the shim reads from its context for each batch (and for `acl_exec`
/// when it runs, `acl_shim_context_settings`).
#[repr(C)]
#[derive(Default)]
pub struct AclSettings {
    /// `acl_jwt_clock_skew`, seconds.
    pub(super) clock_skew: u64,
    /// `acl_max_rewrite_bytes`.
    pub(super) max_rewrite_bytes: u64,
    /// 1 when an explicit transaction is open on the caller's connection.
    pub(super) in_transaction: u8,
    /// `acl_jwks_refresh_interval`, seconds.
    pub(super) jwks_refresh_interval: u64,
    /// `acl_jwks_max_stale`, seconds.
    pub(super) jwks_max_stale: u64,
    /// 1 when `acl_allow_anonymous_admin` is on.
    pub(super) allow_anonymous_admin: u8,
    /// 1 when `allow_parser_override_extension` is DuckDB's `DEFAULT` (our parser hook never
    /// runs); read for the actions only (`acl_shim_context_settings`), 0 on the statement path.
    pub(super) parser_override_off: u8,
}

impl AclSettings {
    pub(super) fn read(&self, state: &State) -> rewrite::Settings {
        rewrite::Settings {
            clock_skew: self.clock_skew,
            max_rewrite_bytes: self.max_rewrite_bytes,
            in_transaction: self.in_transaction != 0,
            key_times: crate::auth::KeyTimes { refresh_secs: self.jwks_refresh_interval, max_stale_secs: self.jwks_max_stale },
            anonymous_admin: self.allow_anonymous_admin != 0,
            parser_override_off: self.parser_override_off != 0,
            faults: state.faults,
        }
    }
}

/// What the shim hands `acl_rs_check`: one name DuckDB's parse contains, as `count` strings
/// starting at `first` in the string array.
#[repr(C)]
pub struct AclRef {
    /// An `AclRefKind` (`rewrite::RefKind`), read with `RefKind::from_u8`.
    pub(super) kind: u8,
    pub(super) first: u32,
    pub(super) count: u32,
    /// The region of policy SQL it sits in (0: outside every region; see `rewrite::defence`).
    pub(super) region: u32,
}

/// A string the shim owns, readable for the duration of the call it is passed to (or one Rust
/// owns, readable while the output that holds it lives).
#[repr(C)]
pub struct AclStr {
    pub(super) ptr: *const c_char,
    pub(super) len: usize,
}

impl AclStr {
    /// `s` as the shim reads it; valid while `s` is.
    pub(super) fn of(s: &str) -> AclStr {
        AclStr { ptr: s.as_ptr() as *const c_char, len: s.len() }
    }
}

/// One hole of a statement shape (`acl_rs_shape_parsed`): where its literal stands in the kept
/// parse's rewrite (`old_at`, the text DuckDB parsed) and in this instance's (`new_at`), and both
/// literals' texts.
#[repr(C)]
pub struct AclSubst {
    pub(super) old_at: u64,
    pub(super) old_text: AclStr,
    pub(super) new_at: u64,
    pub(super) new_text: AclStr,
}

impl AclBuf {
    pub(super) fn from(s: String) -> AclBuf {
        let b = s.into_bytes().into_boxed_slice();
        let len = b.len();
        AclBuf { ptr: Box::into_raw(b) as *mut c_char, len }
    }

    pub(super) fn free(&mut self) {
        if !self.ptr.is_null() {
            let (ptr, len) = (self.ptr as *mut u8, self.len);
            // SAFETY: `ptr`/`len` are the boxed slice `from` leaked, not freed yet (null after).
            let _ = catch_unwind(|| unsafe { drop(Box::from_raw(std::ptr::slice_from_raw_parts_mut(ptr, len))) });
            self.ptr = std::ptr::null_mut();
            self.len = 0;
        }
    }
}

/// What `acl_shim_host_parse` hands back: DuckDB's print of a principal's statement (or its
/// parser's message), held by the shim until `acl_shim_host_parse_free(handle)`.
#[repr(C)]
pub struct AclHostParse {
    /// The shim's storage for the strings below.
    pub(super) handle: *mut c_void,
    /// The statements printed back (`ToString()`), `;\n`-joined.
    pub(super) printed: AclStr,
    /// DuckDB's parser's message when it refused the text.
    pub(super) error: AclStr,
    /// How many statements DuckDB read (a dynamic PIVOT counts as two).
    pub(super) n_statements: u64,
}
