//! The kept parse per shape (spec 012): DuckDB's parse of one instance of a learned statement
//! shape, which the shim copies for a later instance with that instance's numbers put into the
//! constants at the shape's holes, instead of parsing the rewrite again.
use super::abi::{AclStr, AclSubst};
use super::Checks;
use crate::engine;
use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// The kept parse of the shape this batch is an instance of, or null (none yet, or the batch is
/// no instance of a learned shape). With it, `substs`/`n` point at the holes (valid while the
/// output lives) and `kept_text` at the rewrite the parse came from.
///
/// # Safety
/// `check` is null or the `AclOut::check` of a live output; `substs`, `n` and `kept_text` are
/// writable.
#[no_mangle]
pub unsafe extern "C" fn acl_rs_shape_parsed(
    check: *const Checks,
    substs: *mut *const AclSubst,
    n: *mut usize,
    kept_text: *mut AclStr,
) -> *const c_void {
    if check.is_null() {
        return std::ptr::null();
    }
    // SAFETY: not null: the `AclOut::check` of a live output (the caller's contract).
    let checks = unsafe { &*check };
    let found = catch_unwind(AssertUnwindSafe(|| {
        let used = checks.shape.as_ref()?;
        let kept = used.parsed()?;
        let list = checks.substs.get_or_init(|| {
            used.substitutions(kept)
                .into_iter()
                .map(|s: engine::Substitution<'_>| AclSubst {
                    old_at: s.old_at as u64,
                    old_text: AclStr::of(s.old),
                    new_at: s.new_at as u64,
                    new_text: AclStr::of(s.new),
                })
                .collect()
        });
        Some((kept.ptr(), list.as_ptr(), list.len(), AclStr::of(kept.sql())))
    }));
    match found {
        Ok(Some((ptr, list, len, text))) => {
            // SAFETY: the caller's contract: the out-parameters are writable. The strings they
            // point at live in the shape's entry and in `checks`, which the output holds.
            unsafe {
                *substs = list;
                *n = len;
                *kept_text = text;
            }
            ptr
        }
        _ => std::ptr::null(),
    }
}

/// Whether this batch is an instance of a learned shape that has no kept parse yet (so
/// `acl_rs_shape_put` would keep one).
///
/// # Safety
/// `check` is null or the `AclOut::check` of a live output.
#[no_mangle]
pub unsafe extern "C" fn acl_rs_shape_wanted(check: *const Checks) -> bool {
    if check.is_null() {
        return false;
    }
    // SAFETY: not null: the `AclOut::check` of a live output (the caller's contract).
    let checks = unsafe { &*check };
    catch_unwind(AssertUnwindSafe(|| checks.shape.as_ref().is_some_and(|s| s.parse_wanted()))).unwrap_or(false)
}

/// Keeps DuckDB's parse of this batch (after the second check passed on it) as its shape's kept
/// parse. Takes ownership of `parsed` in every case: with no shape, or one already kept, it is
/// freed at once with `free`.
///
/// # Safety
/// As `acl_rs_shape_wanted`; `parsed` is freed only through `free`, which must not unwind.
#[no_mangle]
pub unsafe extern "C" fn acl_rs_shape_put(check: *const Checks, parsed: *mut c_void, free: unsafe extern "C" fn(*mut c_void)) {
    // SAFETY: the caller's contract, which is `hand_over`'s.
    unsafe {
        super::hand_over(check, parsed, free, |checks, parse| {
            if let Some(used) = &checks.shape {
                used.keep_parse(parse);
            }
        })
    }
}

/// The shim copied this statement from its shape's kept parse (`copied`), or had one and parsed
/// the text instead: counted for `acl_status()`.
///
/// # Safety
/// `state` came from `acl_rs_state_new`.
#[no_mangle]
pub unsafe extern "C" fn acl_rs_shape_copied(state: *const crate::engine::State, copied: bool) {
    // SAFETY: the caller's contract.
    let state = unsafe { &*state };
    let _ = catch_unwind(AssertUnwindSafe(|| {
        let stats = &state.shapes.stats;
        let counter = if copied { &stats.copies } else { &stats.fallbacks };
        counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }));
}
