//! `acl_enum_types` (GLOBAL): how ENUM columns are shown to principals (spec 021).
//! The shim hands every SET, RESET and the value at load to `acl_rs_set_enum_types`; the word is
//! checked here, so the setting's spellings live in one place (`policy::EnumTypes`).
use crate::engine::State;
use crate::policy::EnumTypes;
use std::ffi::c_char;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// `acl_enum_types`'s default word (NUL-terminated, static): the shim registers the setting with it.
#[no_mangle]
pub extern "C" fn acl_rs_default_enum_types() -> *const c_char {
    EnumTypes::DEFAULT.c_name().as_ptr()
}

/// `acl_enum_types` was set to `value` (`sliced`, `varchar` or `keep`, any case): the instance's exposure
/// from now on (a change publishes the policy again). False, and nothing changes, for any other
/// word (the shim then refuses the SET), bad input or a panic.
///
/// # Safety
/// `state` came from `acl_rs_state_new`; `value` points to `len` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn acl_rs_set_enum_types(state: *const State, value: *const c_char, len: usize) -> bool {
    // SAFETY: the caller's contract.
    let state = unsafe { &*state };
    // SAFETY: the caller's contract (an empty text may come with any pointer).
    let bytes = if len == 0 { &[][..] } else { unsafe { std::slice::from_raw_parts(value as *const u8, len) } };
    catch_unwind(AssertUnwindSafe(|| match std::str::from_utf8(bytes).ok().and_then(|w| EnumTypes::parse(w.trim())) {
        Some(e) => {
            state.set_enum_types(e);
            true
        }
        None => false,
    }))
    .unwrap_or(false)
}
