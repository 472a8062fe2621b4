//! SQL functions the extension registers, through DuckDB's C extension API (the shim hands us
//! this instance's database and API table).
//!
//! Raw `libduckdb-sys` calls rather than the `duckdb` crate: the crate's Arrow dependency
//! doubles a clean build for the little this needs.
use crate::engine::State;
use libduckdb_sys as sys;
use super::table_fn::{self, bind_with, drop_box, function_with, TableFn};
use std::ffi::{c_void, CString};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// The C API version we ask the host for.
const API_VERSION: &str = "v1.2.0";

/// Registers the extension's table functions on a connection of the instance, then reads the
/// host's function list into `state`.
///
/// # Safety
/// `info`/`access` are the live extension info and access table of the instance being loaded.
pub(super) unsafe fn register(
    state: Arc<State>,
    info: sys::duckdb_extension_info,
    access: *const sys::duckdb_extension_access,
) -> Result<(), String> {
    // SAFETY: the function's contract; the API table is set before any other C API call.
    let ok = unsafe { sys::duckdb_rs_extension_api_init(info, access, API_VERSION) }.map_err(|e| e.to_string())?;
    if !ok {
        return Err("the host offers no C extension API".into());
    }
    // SAFETY: `access` is the live access table (the function's contract).
    let get_database = unsafe { (*access).get_database }.ok_or("no get_database callback")?;
    // SAFETY: the shim's callback returns a pointer to the instance's live database handle.
    let db = unsafe { *get_database(info) };
    let mut con: sys::duckdb_connection = std::ptr::null_mut();
    // SAFETY: `db` is the instance's live database handle.
    if unsafe { sys::duckdb_connect(db, &mut con) } != sys::duckdb_state_DuckDBSuccess {
        return Err("could not connect to the database".into());
    }
    // SAFETY: `con` is a live connection of the instance being loaded.
    let result = unsafe {
        // The list is read last, so it includes the extension's own acl_* functions (never).
        table_fn::register(con, &super::host::LISTING, state.clone())
            .and_then(|()| table_fn::register(con, &ACL_EXEC, state.clone()))
            .and_then(|()| table_fn::register(con, &super::view_guard::GUARD, state.clone()))
            .and_then(|()| table_fn::register(con, &super::meta::META, state.clone()))
            .and_then(|()| super::host::load(con, &state))
    };
    // SAFETY: `con` came from `duckdb_connect` and is disconnected once.
    unsafe { sys::duckdb_disconnect(&mut con) };
    result
}

/// `acl_exec('<management statement>') → status`: what `ACL ADMIN …` becomes. It runs when DuckDB
/// executes the statement, so a batch applies in order and a prepared-but-unexecuted statement
/// changes nothing.
const ACL_EXEC: TableFn = TableFn {
    name: "acl_exec",
    params: &[sys::DUCKDB_TYPE_DUCKDB_TYPE_VARCHAR],
    bind: exec_bind,
    init: exec_init,
    function: exec_function,
};

/// Writes the next vector's worth of VARCHAR rows (`cell(row, column)`; `None` is NULL) from
/// `pos` onward into `output`, and advances `pos`: the scan of a listing held in memory.
///
/// # Safety
/// `output` is the chunk DuckDB handed a table function with `width` VARCHAR columns.
pub(super) unsafe fn emit_rows<'a>(
    output: sys::duckdb_data_chunk,
    pos: &std::sync::atomic::AtomicUsize,
    n_rows: usize,
    width: usize,
    cell: impl Fn(usize, usize) -> Option<&'a str>,
) {
    // SAFETY: the function's contract: `width` VARCHAR vectors of at least a vector's size.
    unsafe {
        let start = pos.load(Ordering::SeqCst);
        let n = n_rows.saturating_sub(start).min(sys::duckdb_vector_size() as usize);
        for c in 0..width {
            let v = sys::duckdb_data_chunk_get_vector(output, c as u64);
            for i in 0..n {
                match cell(start + i, c) {
                    Some(s) => sys::duckdb_vector_assign_string_element_len(v, i as u64, s.as_ptr() as *const _, s.len() as u64),
                    None => {
                        sys::duckdb_vector_ensure_validity_writable(v);
                        sys::duckdb_validity_set_row_invalid(sys::duckdb_vector_get_validity(v), i as u64);
                    }
                }
            }
        }
        pos.store(start + n, Ordering::SeqCst);
        sys::duckdb_data_chunk_set_size(output, n as u64);
    }
}

struct ExecBind {
    sql: String,
    /// The client context the statement was bound in (and runs in: a plan belongs to its
    /// connection, which outlives it), to see at execution whether a transaction is open.
    context: sys::duckdb_client_context,
}

impl Drop for ExecBind {
    fn drop(&mut self) {
        if !self.context.is_null() {
            // SAFETY: the wrapper came from duckdb_table_function_get_client_context, freed once.
            unsafe { sys::duckdb_destroy_client_context(&mut self.context) };
        }
    }
}

// Declared to the shim by cpp/acl_ffi.hpp, generated from here.
extern "C" {
    /// cpp/txn.cpp: is an explicit transaction open in this `duckdb_client_context`? True (refuse)
    /// for a null context or on a failure.
    fn acl_shim_explicit_transaction(context: sys::duckdb_client_context) -> bool;
}

/// # Safety
/// DuckDB calls it with the live bind info of `acl_exec`.
unsafe extern "C" fn exec_bind(info: sys::duckdb_bind_info) {
    // SAFETY: DuckDB calls this with a live bind info of acl_exec (one VARCHAR parameter).
    unsafe {
        bind_with(info, "acl: internal error in acl_exec", || {
            let mut varchar = sys::duckdb_create_logical_type(sys::DUCKDB_TYPE_DUCKDB_TYPE_VARCHAR);
            let col = CString::new("status").expect("static name");
            sys::duckdb_bind_add_result_column(info, col.as_ptr(), varchar);
            sys::duckdb_destroy_logical_type(&mut varchar);
            let sql = table_fn::text_param(info, 0).unwrap_or_default();
            let mut context: sys::duckdb_client_context = std::ptr::null_mut();
            sys::duckdb_table_function_get_client_context(info, &mut context);
            let data = Box::into_raw(Box::new(ExecBind { sql, context })) as *mut c_void;
            sys::duckdb_bind_set_bind_data(info, data, Some(drop_box::<ExecBind>));
            Ok(())
        })
    }
}

/// # Safety
/// DuckDB calls it with the live init info of `acl_exec`.
unsafe extern "C" fn exec_init(info: sys::duckdb_init_info) {
    let data = Box::into_raw(Box::new(AtomicBool::new(false))) as *mut c_void;
    // SAFETY: DuckDB owns `data` from here and frees it with `drop_box`.
    unsafe { sys::duckdb_init_set_init_data(info, data, Some(drop_box::<AtomicBool>)) };
}

/// # Safety
/// DuckDB calls it with the live function info and output chunk of `acl_exec`.
unsafe extern "C" fn exec_function(info: sys::duckdb_function_info, output: sys::duckdb_data_chunk) {
    // SAFETY: DuckDB calls this with live function info and output of acl_exec, bound and
    // initialised by the callbacks above.
    unsafe {
        function_with(info, "acl: internal error in acl_exec", || {
            let done = &*(sys::duckdb_function_get_init_data(info) as *const AtomicBool);
            if done.swap(true, Ordering::SeqCst) {
                sys::duckdb_data_chunk_set_size(output, 0);
                return Ok(());
            }
            let state = &*(sys::duckdb_function_get_extra_info(info) as *const Arc<State>);
            let bind = &*(sys::duckdb_function_get_bind_data(info) as *const ExecBind);
            // No context: an explicit transaction cannot be ruled out (fail closed).
            let in_transaction = bind.context.is_null() || acl_shim_explicit_transaction(bind.context);
            let status = crate::engine::admin::execute(state, &bind.sql, in_transaction).map_err(|e| e.to_string())?;
            let vector = sys::duckdb_data_chunk_get_vector(output, 0);
            sys::duckdb_vector_assign_string_element_len(vector, 0, status.as_ptr() as *const _, status.len() as u64);
            sys::duckdb_data_chunk_set_size(output, 1);
            Ok(())
        })
    }
}
