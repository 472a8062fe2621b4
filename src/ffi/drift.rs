//! What the shim asks about a principal's statement after DuckDB bound it (issue 31): on a binder
//! or catalog error, whether a policy object it used no longer matches its source (the drift
//! refusal, `rewrite::drift_refusal`); before an UPDATE or MERGE of a column-restricted target
//! runs, whether a CHECK of its table would be an oracle on a hidden column
//! (`rewrite::hidden_check_refusal`). Both bind or read the catalog through the shim, in the
//! caller's context and transaction.
use super::abi::{AclBuf, AclOut};
use super::meta::{sink, AclColumnSink};
use crate::engine::State;
use libduckdb_sys as sys;
use std::ffi::{c_char, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};

// cpp/meta.cpp; declared to the shim by cpp/acl_ffi.hpp, generated from here.
extern "C" {
    /// Binds `sql` (one SELECT) in `ctx`: true when it binds; otherwise DuckDB's message is handed
    /// to `sink` as the name (the type empty) and false is returned.
    pub(super) fn acl_shim_bind_error(
        ctx: sys::duckdb_client_context,
        sql: *const c_char,
        len: usize,
        sink: AclColumnSink,
        user: *mut c_void,
    ) -> bool;
    /// The CHECK constraints of table `db.schema.name` (each expression as DuckDB prints it, as the
    /// name; the type empty) to `sink`; false when the table is missing or could not be read.
    fn acl_shim_table_checks(
        ctx: sys::duckdb_client_context,
        db: *const c_char,
        db_len: usize,
        schema: *const c_char,
        schema_len: usize,
        name: *const c_char,
        name_len: usize,
        sink: AclColumnSink,
        user: *mut c_void,
    ) -> bool;
}

/// `sql` binds in `ctx` (`Err`: DuckDB's message).
///
/// # Safety
/// `ctx` is a live client context wrapper.
pub(super) unsafe fn bind(ctx: sys::duckdb_client_context, sql: &str) -> Result<(), String> {
    let mut found: Vec<(String, String)> = Vec::new();
    // SAFETY: the function's contract; `found` outlives the call that fills it.
    let ok = unsafe { acl_shim_bind_error(ctx, sql.as_ptr() as *const c_char, sql.len(), sink, &mut found as *mut _ as *mut c_void) };
    if ok {
        Ok(())
    } else {
        Err(found.pop().map(|(m, _)| m).unwrap_or_default())
    }
}

/// The text at `p` (`len` bytes), lossily.
///
/// # Safety
/// `p` points to `len` readable bytes.
unsafe fn text<'a>(p: *const c_char, len: usize) -> std::borrow::Cow<'a, str> {
    // SAFETY: the function's contract.
    String::from_utf8_lossy(if len == 0 { &[] } else { unsafe { std::slice::from_raw_parts(p as *const u8, len) } })
}

/// DuckDB refused a principal's statement with a binder or catalog error: `out.text` is the drift
/// refusal when a policy object it used (`names`, its blob) no longer binds, empty otherwise.
/// False on a panic (the shim then withholds DuckDB's error).
///
/// # Safety
/// `state` came from `acl_rs_state_new`; `ctx` is a live client context wrapper of the caller's
/// context; `names` points to `names_len` readable bytes; `out` is writable.
#[no_mangle]
pub unsafe extern "C" fn acl_rs_drift(
    state: *const State,
    ctx: sys::duckdb_client_context,
    names: *const c_char,
    names_len: usize,
    out: *mut AclOut,
) -> bool {
    let result = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: the function's contract.
        let (state, names) = unsafe { (&*state, text(names, names_len)) };
        // SAFETY: `ctx` is live for the call (the function's contract).
        let mut binds = |sql: &str| unsafe { bind(ctx, sql) }.is_ok();
        crate::rewrite::drift_refusal(&state.policy(), &names, &mut binds).map(|e| e.to_string()).unwrap_or_default()
    }));
    match result {
        Ok(text) => {
            // SAFETY: the caller's contract: `out` is writable.
            unsafe { (*out).text = AclBuf::from(text) };
            true
        }
        Err(_) => false,
    }
}

/// An UPDATE (`merge` false) or MERGE of a principal is about to run: `out.text` is the refusal
/// when a column-restricted target's table has a CHECK relating a visible column to a hidden one,
/// empty otherwise. False on a panic (the shim then refuses).
///
/// # Safety
/// `ctx` is a live client context wrapper of the caller's context; `names` points to `names_len`
/// readable bytes; `out` is writable.
#[no_mangle]
pub unsafe extern "C" fn acl_rs_hidden_check(
    ctx: sys::duckdb_client_context,
    names: *const c_char,
    names_len: usize,
    merge: bool,
    out: *mut AclOut,
) -> bool {
    let result = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: the function's contract.
        let names = unsafe { text(names, names_len) };
        let mut checks_of = |t: &crate::policy::PhysName| -> Option<Vec<String>> {
            let mut found: Vec<(String, String)> = Vec::new();
            let user = &mut found as *mut _ as *mut c_void;
            let p = |s: &String| s.as_ptr() as *const c_char;
            // SAFETY: `ctx` is live for the call; the strings and `found` outlive it.
            let ok = unsafe {
                acl_shim_table_checks(ctx, p(&t.db), t.db.len(), p(&t.schema), t.schema.len(), p(&t.name), t.name.len(), sink, user)
            };
            ok.then(|| found.into_iter().map(|(c, _)| c).collect())
        };
        let verb = if merge { "MERGE" } else { "UPDATE" };
        crate::rewrite::hidden_check_refusal(&names, verb, &mut checks_of).map(|e| e.to_string()).unwrap_or_default()
    }));
    match result {
        Ok(text) => {
            // SAFETY: the caller's contract: `out` is writable.
            unsafe { (*out).text = AclBuf::from(text) };
            true
        }
        Err(_) => false,
    }
}
