//! `acl_check_catalog_of(catalog)` (behind the macro `acl_check_catalog([catalog])`, the gateway's
//! native call) and `acl_check_catalog_as('role'|'token', '<who>', catalog)` (what a catalog
//! manager's `CHECK VIRTUAL CATALOG c` becomes): the drift findings of `admin::check`, computed at
//! bind in the caller's context and transaction (spec 007, "Drift"). Both are `acl_*`, in the never
//! set: no principal calls them itself.
use super::table_fn::{bind_with, drop_box, function_with, Param, TableFn};
use crate::engine::State;
use crate::store::Row;
use libduckdb_sys as sys;
use std::ffi::{c_void, CString};
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

const OF: TableFn = TableFn { name: "acl_check_catalog_of", params: &[Param::VARCHAR], bind, init, function };
const AS: TableFn =
    TableFn { name: "acl_check_catalog_as", params: &[Param::VARCHAR, Param::VARCHAR, Param::VARCHAR], bind, init, function };

/// Registers both functions on `con`.
///
/// # Safety
/// `con` is a live connection of the instance being loaded.
pub(super) unsafe fn register(con: sys::duckdb_connection, state: &Arc<State>) -> Result<(), String> {
    // SAFETY: the function's contract.
    unsafe {
        super::table_fn::register(con, &OF, state.clone())?;
        super::table_fn::register(con, &AS, state.clone())
    }
}

/// The physical catalog as the caller's context sees it.
struct Host(sys::duckdb_client_context);

impl crate::admin::check::Host for Host {
    fn columns(&mut self, t: &crate::policy::PhysName) -> Option<Vec<String>> {
        let sql = format!("SELECT * FROM {}.{}.{}", crate::sqltext::ident(&t.db), crate::sqltext::ident(&t.schema), crate::sqltext::ident(&t.name));
        // SAFETY: the context is live for the bind that made this host.
        let cols = unsafe { super::meta::describe(self.0, &sql) }?;
        Some(cols.into_iter().map(|(n, _)| crate::policy::norm(&n)).collect())
    }
    fn schema_exists(&mut self, db: &str, schema: &str) -> bool {
        // SAFETY: as above.
        unsafe { super::meta::schema_exists(self.0, db, schema) }
    }
    fn bind(&mut self, sql: &str) -> Result<(), String> {
        // SAFETY: as above.
        unsafe { super::drift::bind(self.0, sql) }
    }
}

/// # Safety
/// `info` is the live bind info of one of the two functions.
unsafe fn rows(info: sys::duckdb_bind_info, ctx: sys::duckdb_client_context) -> Result<Vec<Row>, String> {
    // SAFETY: the function's contract.
    unsafe {
        let state = super::table_fn::state_of(info);
        let n = sys::duckdb_bind_get_parameter_count(info);
        let settings = super::functions::context_settings(state, ctx);
        let mut host = Host(ctx);
        let (catalog, who) = if n == 3 {
            let who = super::table_fn::text_param(info, 1).unwrap_or_default();
            let kind = super::table_fn::text_param(info, 0);
            let prefix = crate::engine::admin::runner_prefix(state, kind.as_deref(), who).map_err(|e| e.to_string())?;
            (super::table_fn::text_param(info, 2), Some(prefix))
        } else {
            (super::table_fn::text_param(info, 0), None)
        };
        let found = crate::engine::admin::check_catalog(state, catalog.as_deref(), who.as_ref(), &settings, &mut host).map_err(|e| e.to_string())?;
        Ok(found.iter().map(crate::admin::check::Finding::row).collect())
    }
}

struct Bound {
    rows: Vec<Row>,
}

/// # Safety
/// DuckDB calls it with the live bind info of one of the two functions.
unsafe extern "C" fn bind(info: sys::duckdb_bind_info) {
    // SAFETY: DuckDB calls this with a live bind info of a function `register` registered; the
    // context wrapper made here is destroyed here.
    unsafe {
        bind_with(info, "acl: internal error in acl_check_catalog", || {
            let mut varchar = sys::duckdb_create_logical_type(sys::DUCKDB_TYPE_DUCKDB_TYPE_VARCHAR);
            for c in crate::admin::check::COLUMNS {
                let col = CString::new(c).expect("static name");
                sys::duckdb_bind_add_result_column(info, col.as_ptr(), varchar);
            }
            sys::duckdb_destroy_logical_type(&mut varchar);
            let mut ctx: sys::duckdb_client_context = std::ptr::null_mut();
            sys::duckdb_table_function_get_client_context(info, &mut ctx);
            if ctx.is_null() {
                return Err("acl: internal error: no client context for acl_check_catalog".into());
            }
            let rows = rows(info, ctx);
            sys::duckdb_destroy_client_context(&mut ctx);
            let data = Box::into_raw(Box::new(Bound { rows: rows? })) as *mut c_void;
            sys::duckdb_bind_set_bind_data(info, data, Some(drop_box::<Bound>));
            Ok(())
        })
    }
}

/// # Safety
/// DuckDB calls it with the live init info of one of the two functions.
unsafe extern "C" fn init(info: sys::duckdb_init_info) {
    let data = Box::into_raw(Box::new(AtomicUsize::new(0))) as *mut c_void;
    // SAFETY: DuckDB owns `data` from here and frees it with `drop_box`.
    unsafe { sys::duckdb_init_set_init_data(info, data, Some(drop_box::<AtomicUsize>)) };
}

/// # Safety
/// DuckDB calls it with the live function info and output chunk of one of the two functions.
unsafe extern "C" fn function(info: sys::duckdb_function_info, output: sys::duckdb_data_chunk) {
    // SAFETY: DuckDB calls this with live function info and output, bound and initialised above.
    unsafe {
        function_with(info, "acl: internal error in acl_check_catalog", || {
            let pos = &*(sys::duckdb_function_get_init_data(info) as *const AtomicUsize);
            let bound = &*(sys::duckdb_function_get_bind_data(info) as *const Bound);
            let width = crate::admin::check::COLUMNS.len();
            super::functions::emit_rows(output, pos, bound.rows.len(), width, |r, c| bound.rows[r].get(c).and_then(|x| x.as_deref()));
            Ok(())
        })
    }
}
