//! The Flight SQL door's entry points (`acl_flight_serve`, `acl_flight_stop`, the door's settings;
//! cpp/flight.cpp) and its node: connections of this instance over DuckDB's C API, whose results
//! come out as Arrow through DuckDB's own conversion (`ffi/door_node.rs`). Converts only: the
//! door decides (`crate::door`).
use super::abi::{AclBuf, AclOut, AclSettings, AclStatus};
use crate::engine::State;
use crate::error::{AclError, Class};
use std::ffi::c_char;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// `len` bytes at `p` as text; `None` for a null pointer or text that is not UTF-8.
///
/// # Safety
/// `p` is null or points to `len` readable bytes.
unsafe fn text<'a>(p: *const c_char, len: usize) -> Option<&'a str> {
    if p.is_null() {
        return None;
    }
    // SAFETY: the function's contract.
    let b = if len == 0 { &[][..] } else { unsafe { std::slice::from_raw_parts(p as *const u8, len) } };
    std::str::from_utf8(b).ok()
}

fn answer(out: &mut AclOut, result: std::thread::Result<Result<String, AclError>>) -> AclStatus {
    let (text, status) = match result {
        Ok(Ok(t)) => (t, AclStatus::Rewritten),
        Ok(Err(e)) => {
            let status = match e.class() {
                Class::Refused => AclStatus::Refused,
                Class::Syntax => AclStatus::Syntax,
                Class::Invalid | Class::Internal => AclStatus::Invalid,
            };
            (e.to_string(), status)
        }
        Err(_) => (AclError::internal("a Flight SQL door function failed").to_string(), AclStatus::Invalid),
    };
    out.text = AclBuf::from(text);
    status
}

/// The shim's state pointer as a counted reference (the door keeps a weak one).
///
/// # Safety
/// `state` came from `acl_rs_state_new` (an `Arc::into_raw`) and is alive.
#[cfg(feature = "flight-sql")]
unsafe fn shared(state: *const State) -> std::sync::Arc<State> {
    // SAFETY: the function's contract: one more strong count, given to the `Arc` made here.
    unsafe {
        std::sync::Arc::increment_strong_count(state);
        std::sync::Arc::from_raw(state)
    }
}

/// `acl_flight_serve(uri [, cert, key])`: `Rewritten` with the URI served in `out.text`, or a
/// refusal's status and message. `strict`: `allow_parser_override_extension` is `strict` in the
/// caller's context.
///
/// # Safety
/// `state` came from `acl_rs_state_new`; each text is null or its length of readable bytes;
/// `settings` points to a live `AclSettings`; `out` is writable.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn acl_rs_flight_serve(
    state: *const State,
    uri: *const c_char,
    uri_len: usize,
    cert: *const c_char,
    cert_len: usize,
    key: *const c_char,
    key_len: usize,
    settings: *const AclSettings,
    strict: bool,
    out: *mut AclOut,
) -> AclStatus {
    // SAFETY: the caller's contract.
    let out = unsafe { &mut *out };
    // SAFETY: the caller's contract.
    let (uri, cert, key) = unsafe { (text(uri, uri_len), text(cert, cert_len), text(key, key_len)) };
    // SAFETY: the caller's contract.
    let anonymous_admin = unsafe { (*settings).allow_anonymous_admin != 0 };
    let result = catch_unwind(AssertUnwindSafe(|| -> Result<String, AclError> {
        let uri = uri.ok_or(AclError::internal("a URI that is not UTF-8"))?;
        #[cfg(feature = "flight-sql")]
        {
            // SAFETY: the caller's contract.
            let state = unsafe { shared(state) };
            let node = super::door_node::node(&state)?;
            crate::door::serve(&state, node, crate::door::ServeArgs { uri, cert, key, anonymous_admin, strict })
        }
        #[cfg(not(feature = "flight-sql"))]
        {
            let _ = (state, uri, cert, key, anonymous_admin, strict);
            Err(crate::error::DoorProblem::NotBuilt.into())
        }
    }));
    answer(out, result)
}

/// `acl_flight_stop(uri)`: `Rewritten` with the number of sessions it closed in `out.text`.
///
/// # Safety
/// `state` came from `acl_rs_state_new`; `uri` points to `uri_len` readable bytes; `out` is writable.
#[no_mangle]
pub unsafe extern "C" fn acl_rs_flight_stop(state: *const State, uri: *const c_char, uri_len: usize, out: *mut AclOut) -> AclStatus {
    // SAFETY: the caller's contract.
    let (state, uri, out) = unsafe { (&*state, text(uri, uri_len), &mut *out) };
    let result = catch_unwind(AssertUnwindSafe(|| -> Result<String, AclError> {
        let uri = uri.ok_or(AclError::internal("a URI that is not UTF-8"))?;
        #[cfg(feature = "flight-sql")]
        {
            crate::door::stop(state, uri).map(|n| n.to_string())
        }
        #[cfg(not(feature = "flight-sql"))]
        {
            let _ = (state, uri);
            Err(crate::error::DoorProblem::NotBuilt.into())
        }
    }));
    answer(out, result)
}

/// A door setting's new value (`OnSet` of `acl_max_result_rows`, `acl_flight_stream_idle`,
/// `acl_node_stream_budget`): true with the value kept in `out.text`, or false with why it is
/// refused (nothing changes).
///
/// # Safety
/// `state` came from `acl_rs_state_new`; `name`/`value` point to their lengths of readable bytes;
/// `out` is writable.
#[no_mangle]
pub unsafe extern "C" fn acl_rs_door_setting(state: *const State, name: *const c_char, name_len: usize, value: *const c_char, value_len: usize, out: *mut AclOut) -> bool {
    // SAFETY: the caller's contract.
    let (state, name, value, out) = unsafe { (&*state, text(name, name_len), text(value, value_len), &mut *out) };
    let result = catch_unwind(AssertUnwindSafe(|| -> Result<String, AclError> {
        let (Some(name), Some(value)) = (name, value) else { return Err(AclError::internal("a door setting that is not UTF-8")) };
        #[cfg(feature = "flight-sql")]
        {
            let doors = crate::door::Doors::of(state).ok_or(AclError::internal("the node's doors"))?;
            doors.limits.set(name, value).map(|v| v.to_string())
        }
        #[cfg(not(feature = "flight-sql"))]
        {
            let _ = state;
            crate::door::validate_setting(name, value).map(|v| v.to_string())
        }
    }));
    answer(out, result) == AclStatus::Rewritten
}
