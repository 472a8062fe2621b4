//! The session functions (spec 017) for the shim's scalar functions (cpp/sessions.cpp) and its
//! statement tags: each converts and calls `engine::sessions`. Native only: `acl_*` is in the
//! never set, so no principal can call one.
use super::abi::{AclBuf, AclOut, AclSettings, AclStatus};
use crate::engine::sessions;
use crate::engine::State;
use crate::error::{AclError, Class};
use std::ffi::c_char;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// `len` bytes at `p` as text (`None`: not UTF-8).
///
/// # Safety
/// `p` points to `len` readable bytes (any pointer when `len` is 0).
unsafe fn text<'a>(p: *const c_char, len: usize) -> Option<&'a str> {
    // SAFETY: the function's contract.
    let b = if len == 0 { &[][..] } else { unsafe { std::slice::from_raw_parts(p as *const u8, len) } };
    std::str::from_utf8(b).ok()
}

/// Writes `result` into `out`: the text, or the error's message; the status the shim throws by.
fn answer(out: &mut AclOut, result: std::thread::Result<Result<String, AclError>>) -> AclStatus {
    let (text, status) = match result {
        Ok(Ok(text)) => (text, AclStatus::Rewritten),
        Ok(Err(e)) => {
            let status = match e.class() {
                Class::Refused => AclStatus::Refused,
                Class::Syntax => AclStatus::Syntax,
                Class::Invalid | Class::Internal => AclStatus::Invalid,
            };
            (e.to_string(), status)
        }
        Err(_) => (AclError::internal("a session function failed").to_string(), AclStatus::Invalid),
    };
    out.text = AclBuf::from(text);
    status
}

/// `acl_session_open(token[, door])`: `Rewritten` with the handle in `out.text`, or a refusal's
/// status with its message (a token's reason, as for `ACL TOKEN`; never the token).
///
/// # Safety
/// `state` came from `acl_rs_state_new`; `token`/`door` point to their lengths of readable
/// bytes; `settings` to a live `AclSettings`; `out` is writable, released with `acl_rs_out_free`.
#[no_mangle]
pub unsafe extern "C" fn acl_rs_session_open(
    state: *const State,
    token: *const c_char,
    token_len: usize,
    door: *const c_char,
    door_len: usize,
    settings: *const AclSettings,
    out: *mut AclOut,
) -> AclStatus {
    // SAFETY: the caller's contract.
    let (state, out) = unsafe { (&*state, &mut *out) };
    // SAFETY: the caller's contract.
    let settings = unsafe { &*settings }.read(state);
    // SAFETY: the caller's contract.
    let (token, door) = unsafe { (text(token, token_len), text(door, door_len)) };
    let result = catch_unwind(AssertUnwindSafe(|| {
        let token = token.ok_or(AclError::token(crate::error::TokenReason::Malformed))?;
        let door = door.ok_or(AclError::from(crate::error::SessionProblem::Door))?;
        sessions::open(state, token, door, &settings).map(|(handle, _)| handle.expose().to_string())
    }));
    answer(out, result)
}

/// `acl_session_sql(handle, sql)`: the prefixed text in `out.text`; false on a panic.
///
/// # Safety
/// `handle`/`sql` point to their lengths of readable bytes; `out` is writable.
#[no_mangle]
pub unsafe extern "C" fn acl_rs_session_sql(
    handle: *const c_char,
    handle_len: usize,
    sql: *const c_char,
    sql_len: usize,
    out: *mut AclOut,
) -> bool {
    // SAFETY: the caller's contract.
    let (handle, sql, out) = unsafe { (text(handle, handle_len), text(sql, sql_len), &mut *out) };
    let result = catch_unwind(|| match (handle, sql) {
        (Some(h), Some(s)) => Ok(sessions::prefixed(h, s)),
        _ => Err(AclError::internal("a session function got text that is not UTF-8")),
    });
    answer(out, result) == AclStatus::Rewritten
}

/// `acl_session_close(handle)`: true if this call closed a live session (false for one already
/// ended, an unknown handle, or a panic).
///
/// # Safety
/// `state` came from `acl_rs_state_new`; `handle` points to `len` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn acl_rs_session_close(state: *const State, handle: *const c_char, len: usize) -> bool {
    // SAFETY: the caller's contract.
    let (state, handle) = unsafe { (&*state, text(handle, len)) };
    catch_unwind(AssertUnwindSafe(|| handle.is_some_and(|h| state.sessions.close(h)))).unwrap_or(false)
}

/// `acl_session_reason(handle)`: `live`, `closed`, `idle`, `expired`, `killed`, `revoked` or `unknown` in
/// `out.text` (read-only); false on a panic.
///
/// # Safety
/// `state` came from `acl_rs_state_new`; `handle` points to `len` readable bytes; `out` is writable.
#[no_mangle]
pub unsafe extern "C" fn acl_rs_session_reason(state: *const State, handle: *const c_char, len: usize, clock_skew: u64, out: *mut AclOut) -> bool {
    // SAFETY: the caller's contract.
    let (state, handle, out) = unsafe { (&*state, text(handle, len), &mut *out) };
    let result = catch_unwind(AssertUnwindSafe(|| {
        let reason = handle.map_or(Some(crate::error::SessionReason::Unknown), |h| state.sessions.reason(h, clock_skew));
        Ok(reason.map_or("live", |r| r.code()).to_string())
    }));
    answer(out, result) == AclStatus::Rewritten
}

/// `acl_session_kill(id)`: true if this call ended a live session.
///
/// # Safety
/// `state` came from `acl_rs_state_new`.
#[no_mangle]
pub unsafe extern "C" fn acl_rs_session_kill(state: *const State, id: i64) -> bool {
    // SAFETY: the caller's contract.
    let state = unsafe { &*state };
    catch_unwind(AssertUnwindSafe(|| u64::try_from(id).is_ok_and(|id| state.sessions.kill(id)))).unwrap_or(false)
}

/// `acl_session_sweep()`: how many sessions it ended (0 on a panic).
///
/// # Safety
/// `state` came from `acl_rs_state_new`.
#[no_mangle]
pub unsafe extern "C" fn acl_rs_session_sweep(state: *const State, clock_skew: u64) -> u64 {
    // SAFETY: the caller's contract.
    let state = unsafe { &*state };
    catch_unwind(AssertUnwindSafe(|| state.sessions.sweep(clock_skew))).unwrap_or(0)
}

/// `acl_session_count()`: the live sessions (0 on a panic).
///
/// # Safety
/// `state` came from `acl_rs_state_new`.
#[no_mangle]
pub unsafe extern "C" fn acl_rs_session_count(state: *const State, clock_skew: u64) -> u64 {
    // SAFETY: the caller's contract.
    let state = unsafe { &*state };
    catch_unwind(AssertUnwindSafe(|| state.sessions.count(clock_skew))).unwrap_or(0)
}

/// A statement kept from session `id` (its tag) runs now: true while the session is live (and it
/// counts as the session's use); otherwise `out.text` says why (`AclError::SessionEnded`).
///
/// # Safety
/// `state` came from `acl_rs_state_new`; `out` is writable.
#[no_mangle]
pub unsafe extern "C" fn acl_rs_session_check(state: *const State, id: u64, clock_skew: u64, out: *mut AclOut) -> bool {
    // SAFETY: the caller's contract.
    let (state, out) = unsafe { (&*state, &mut *out) };
    let result = catch_unwind(AssertUnwindSafe(|| crate::engine::session_vouch::enter_kept(state, id, clock_skew).map(|()| String::new())));
    answer(out, result) == AclStatus::Rewritten
}

/// A session setting's new value (`OnSet` of `acl_session_idle_timeout`, `acl_max_sessions`,
/// `acl_session_token_binding`, as text): true with the value kept in `out.text`, or false with
/// why it is refused (nothing changes).
///
/// # Safety
/// `state` came from `acl_rs_state_new`; `name`/`value` point to their lengths of readable bytes;
/// `out` is writable.
#[no_mangle]
pub unsafe extern "C" fn acl_rs_session_setting(
    state: *const State,
    name: *const c_char,
    name_len: usize,
    value: *const c_char,
    value_len: usize,
    out: *mut AclOut,
) -> bool {
    // SAFETY: the caller's contract.
    let (state, name, value, out) = unsafe { (&*state, text(name, name_len), text(value, value_len), &mut *out) };
    let result = catch_unwind(AssertUnwindSafe(|| match (name, value) {
        (Some(n), Some(v)) => state.sessions.set(n, v),
        _ => Err(AclError::internal("a session setting that is not UTF-8")),
    }));
    answer(out, result) == AclStatus::Rewritten
}
