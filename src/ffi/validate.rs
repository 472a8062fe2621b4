//! `acl_validate(what, sql)`: what a management batch runs to validate the policy SQL a statement
//! brings (`admin::validate`): binds `sql` (one SELECT, never run) in the caller's context; when it
//! does not bind, the error names the virtual object and DuckDB's reason, never the rewrite's
//! internal text (`acl: RLS of c.t does not bind: Referenced column "tenantt" not found …`). No
//! rows. `acl_*`, in the never set: no principal calls it.
use super::table_fn::{bind_with, drop_box, function_with, Param, TableFn};
use crate::engine::State;
use libduckdb_sys as sys;
use std::ffi::{c_void, CString};
use std::sync::Arc;

const VALIDATE: TableFn = TableFn { name: "acl_validate", params: &[Param::VARCHAR, Param::VARCHAR], bind, init, function };

/// Registers the function on `con`.
///
/// # Safety
/// `con` is a live connection of the instance being loaded.
pub(super) unsafe fn register(con: sys::duckdb_connection, state: &Arc<State>) -> Result<(), String> {
    // SAFETY: the function's contract.
    unsafe { super::table_fn::register(con, &VALIDATE, state.clone()) }
}

/// # Safety
/// DuckDB calls it with the live bind info of the function.
unsafe extern "C" fn bind(info: sys::duckdb_bind_info) {
    // SAFETY: DuckDB calls this with a live bind info of the function `register` registered; the
    // context wrapper made here is destroyed here.
    unsafe {
        bind_with(info, "acl: internal error in acl_validate", || {
            let mut boolean = sys::duckdb_create_logical_type(sys::DUCKDB_TYPE_DUCKDB_TYPE_BOOLEAN);
            let col = CString::new("ok").expect("static name");
            sys::duckdb_bind_add_result_column(info, col.as_ptr(), boolean);
            sys::duckdb_destroy_logical_type(&mut boolean);
            let what = super::table_fn::text_param(info, 0).unwrap_or_default();
            let sql = super::table_fn::text_param(info, 1).unwrap_or_default();
            let mut ctx: sys::duckdb_client_context = std::ptr::null_mut();
            sys::duckdb_table_function_get_client_context(info, &mut ctx);
            if ctx.is_null() {
                return Err("acl: internal error: no client context for acl_validate".into());
            }
            let bound = super::drift::bind(ctx, &sql);
            sys::duckdb_destroy_client_context(&mut ctx);
            bound.map_err(|why| crate::error::AclError::from(crate::error::Invalid::DoesNotBind { what, why: reason(&why) }).to_string())?;
            sys::duckdb_bind_set_bind_data(info, Box::into_raw(Box::new(())) as *mut c_void, Some(drop_box::<()>));
            Ok(())
        })
    }
}

/// DuckDB's reason, first line only (the candidates and the `LINE 1:` excerpt quote the rewrite's
/// text); a reason that names the rewrite's own aliases is replaced by a plain one.
fn reason(message: &str) -> String {
    let first = message.lines().next().unwrap_or_default().trim();
    if first.is_empty() || first.contains("__acl") {
        return "a name it uses does not bind".into();
    }
    first.to_string()
}

/// # Safety
/// DuckDB calls it with the live init info of the function.
unsafe extern "C" fn init(_info: sys::duckdb_init_info) {}

/// # Safety
/// DuckDB calls it with the live function info and output chunk of the function: no rows.
unsafe extern "C" fn function(info: sys::duckdb_function_info, output: sys::duckdb_data_chunk) {
    // SAFETY: DuckDB calls this with live function info and output.
    unsafe {
        function_with(info, "acl: internal error in acl_validate", || {
            sys::duckdb_data_chunk_set_size(output, 0);
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_reason_is_the_first_line_and_never_the_rewrites_text() {
        assert_eq!(
            super::reason("Referenced column \"tenantt\" not found in FROM clause!\nCandidate bindings: \"tenant\"\n\nLINE 1: SELECT …"),
            "Referenced column \"tenantt\" not found in FROM clause!"
        );
        assert!(!super::reason("Referenced table \"__acl_p0\" not found").contains("__acl"));
    }
}
