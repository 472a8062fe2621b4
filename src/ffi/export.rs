//! `acl_export_of(secrets)` (behind the macro `acl_export(secrets := false)`, spec 023): the
//! published policy as `ACL ADMIN` statements (`admin::export`), one row each with its place in
//! the script (`ordinal`, from 1). Computed at bind, from the snapshot the statement sees. It is
//! `acl_*`, in the never set: no principal calls it.
use super::table_fn::{bind_with, drop_box, function_with, Param, TableFn};
use crate::engine::State;
use libduckdb_sys as sys;
use std::ffi::{c_void, CString};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

const EXPORT: TableFn = TableFn { name: "acl_export_of", params: &[Param::BOOLEAN], bind, init, function };

/// # Safety
/// `con` is a live connection of the instance being loaded.
pub(super) unsafe fn register(con: sys::duckdb_connection, state: &Arc<State>) -> Result<(), String> {
    // SAFETY: the function's contract.
    unsafe { super::table_fn::register(con, &EXPORT, state.clone()) }
}

struct Bound {
    statements: Vec<String>,
}

/// # Safety
/// DuckDB calls it with the live bind info of `acl_export_of`.
unsafe extern "C" fn bind(info: sys::duckdb_bind_info) {
    // SAFETY: DuckDB calls this with a live bind info of the function `register` registered,
    // whose extra info is the instance's state and whose one parameter is a BOOLEAN.
    unsafe {
        bind_with(info, "acl: internal error in acl_export", || {
            for (name, ty) in [("ordinal", sys::DUCKDB_TYPE_DUCKDB_TYPE_BIGINT), ("statement", sys::DUCKDB_TYPE_DUCKDB_TYPE_VARCHAR)] {
                let mut t = sys::duckdb_create_logical_type(ty);
                let col = CString::new(name).expect("static name");
                sys::duckdb_bind_add_result_column(info, col.as_ptr(), t);
                sys::duckdb_destroy_logical_type(&mut t);
            }
            let state = super::table_fn::state_of(info);
            let secrets = super::table_fn::bool_param(info, 0).unwrap_or(false);
            let statements = crate::admin::export::export(&state.policy(), secrets);
            let data = Box::into_raw(Box::new(Bound { statements })) as *mut c_void;
            sys::duckdb_bind_set_bind_data(info, data, Some(drop_box::<Bound>));
            Ok(())
        })
    }
}

/// # Safety
/// DuckDB calls it with the live init info of `acl_export_of`.
unsafe extern "C" fn init(info: sys::duckdb_init_info) {
    let data = Box::into_raw(Box::new(AtomicUsize::new(0))) as *mut c_void;
    // SAFETY: DuckDB owns `data` from here and frees it with `drop_box`.
    unsafe { sys::duckdb_init_set_init_data(info, data, Some(drop_box::<AtomicUsize>)) };
}

/// # Safety
/// DuckDB calls it with the live function info and output chunk of `acl_export_of`.
unsafe extern "C" fn function(info: sys::duckdb_function_info, output: sys::duckdb_data_chunk) {
    // SAFETY: DuckDB calls this with live function info and an output chunk of a BIGINT and a
    // VARCHAR column of at least a vector's size, bound and initialised above.
    unsafe {
        function_with(info, "acl: internal error in acl_export", || {
            let pos = &*(sys::duckdb_function_get_init_data(info) as *const AtomicUsize);
            let bound = &*(sys::duckdb_function_get_bind_data(info) as *const Bound);
            let start = pos.load(Ordering::SeqCst);
            let n = bound.statements.len().saturating_sub(start).min(sys::duckdb_vector_size() as usize);
            let ordinals = sys::duckdb_vector_get_data(sys::duckdb_data_chunk_get_vector(output, 0)) as *mut i64;
            let texts = sys::duckdb_data_chunk_get_vector(output, 1);
            for i in 0..n {
                let s = &bound.statements[start + i];
                *ordinals.add(i) = (start + i + 1) as i64;
                sys::duckdb_vector_assign_string_element_len(texts, i as u64, s.as_ptr() as *const _, s.len() as u64);
            }
            pos.store(start + n, Ordering::SeqCst);
            sys::duckdb_data_chunk_set_size(output, n as u64);
            Ok(())
        })
    }
}
