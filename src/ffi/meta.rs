//! `acl_meta(kind, principal)`: the rows behind metadata relations under a principal (specs/005).
//! Only the rewriter emits calls to it (`acl_*` is never callable under a principal). At bind it
//! re-derives the principal's view from the current policy, and asks the shim to bind each
//! object's exposed query in the caller's context for its column names and types; the result is
//! cached by policy version, principal and the host's catalog stamp.
use crate::authz::ObjectType;
use libduckdb_sys as sys;
use std::ffi::{c_void, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

type ColumnSink = unsafe extern "C" fn(*mut c_void, *const u8, usize, *const u8, usize);

extern "C" {
    fn acl_shim_describe(ctx: sys::duckdb_client_context, sql: *const u8, len: usize, sink: ColumnSink, user: *mut c_void) -> bool;
    fn acl_shim_catalog_stamp(ctx: sys::duckdb_client_context) -> u64;
    fn acl_shim_schema_objects(
        ctx: sys::duckdb_client_context,
        db: *const u8,
        db_len: usize,
        schema: *const u8,
        schema_len: usize,
        sink: ColumnSink,
        user: *mut c_void,
    ) -> bool;
}

pub(super) const META: super::table_fn::TableFn = super::table_fn::TableFn {
    name: "acl_meta",
    params: &[sys::DUCKDB_TYPE_DUCKDB_TYPE_VARCHAR, sys::DUCKDB_TYPE_DUCKDB_TYPE_VARCHAR],
    bind: meta_bind,
    init: meta_init,
    function: meta_function,
};

struct Bound {
    rows: Arc<crate::rewrite::MetaRows>,
    kind: &'static str,
    width: usize,
}

unsafe extern "C" fn sink(user: *mut c_void, name: *const u8, name_len: usize, ty: *const u8, ty_len: usize) {
    let _ = catch_unwind(AssertUnwindSafe(|| unsafe {
        let cols = &mut *(user as *mut Vec<(String, String)>);
        let s = |p: *const u8, n: usize| String::from_utf8_lossy(std::slice::from_raw_parts(p, n)).into_owned();
        cols.push((s(name, name_len), s(ty, ty_len)));
    }));
}

unsafe fn bind(info: sys::duckdb_bind_info) -> Result<(), String> {
    unsafe {
        let state = super::table_fn::state_of(info);
        let kind = super::table_fn::text_param(info, 0).unwrap_or_default();
        let arg = super::table_fn::text_param(info, 1).unwrap_or_default();
        let (kind, columns) = crate::rewrite::metadata_kind(&kind).ok_or("acl: unknown metadata listing")?;
        let mut varchar = sys::duckdb_create_logical_type(sys::DUCKDB_TYPE_DUCKDB_TYPE_VARCHAR);
        for c in columns {
            let col = CString::new(*c).expect("static name");
            sys::duckdb_bind_add_result_column(info, col.as_ptr(), varchar);
        }
        sys::duckdb_destroy_logical_type(&mut varchar);
        let mut ctx: sys::duckdb_client_context = std::ptr::null_mut();
        sys::duckdb_table_function_get_client_context(info, &mut ctx);
        if ctx.is_null() {
            return Err("acl: internal error: no client context for the metadata listing".into());
        }
        let stamp = acl_shim_catalog_stamp(ctx);
        let mut describe = |sql: &str| -> Option<Arc<Vec<(String, String)>>> {
            let mut cols: Vec<(String, String)> = Vec::new();
            let ok = acl_shim_describe(ctx, sql.as_ptr(), sql.len(), sink, &mut cols as *mut _ as *mut c_void);
            ok.then(|| Arc::new(cols))
        };
        // A virtual schema's tables and views, enumerated in the caller's context as well.
        let mut schema_objects = |db: &str, schema: &str| -> Option<Vec<(String, ObjectType)>> {
            let mut found: Vec<(String, String)> = Vec::new();
            let user = &mut found as *mut _ as *mut c_void;
            let ok = acl_shim_schema_objects(ctx, db.as_ptr(), db.len(), schema.as_ptr(), schema.len(), sink, user);
            ok.then(|| {
                found
                    .into_iter()
                    .map(|(name, kind)| (name, if kind == "VIEW" { ObjectType::View } else { ObjectType::Table }))
                    .collect()
            })
        };
        let rows = state.meta.rows(&state.policy(), &arg, stamp, &mut describe, &mut schema_objects);
        sys::duckdb_destroy_client_context(&mut ctx);
        let rows = rows.map_err(|e| e.to_string())?;
        let data = Box::into_raw(Box::new(Bound { rows, kind, width: columns.len() })) as *mut c_void;
        sys::duckdb_bind_set_bind_data(info, data, Some(super::table_fn::drop_box::<Bound>));
        Ok(())
    }
}

unsafe extern "C" fn meta_bind(info: sys::duckdb_bind_info) {
    // SAFETY: DuckDB calls this with a live bind info of acl_meta.
    unsafe { super::table_fn::bind_with(info, "acl: internal error in the metadata listing", || bind(info)) }
}

unsafe extern "C" fn meta_init(info: sys::duckdb_init_info) {
    let data = Box::into_raw(Box::new(AtomicUsize::new(0))) as *mut c_void;
    unsafe { sys::duckdb_init_set_init_data(info, data, Some(super::table_fn::drop_box::<AtomicUsize>)) };
}

unsafe extern "C" fn meta_function(info: sys::duckdb_function_info, output: sys::duckdb_data_chunk) {
    // SAFETY: DuckDB calls this with live function info and output, bound and initialised above.
    unsafe {
        super::table_fn::function_with(info, "acl: internal error in the metadata listing", || {
            let pos = &*(sys::duckdb_function_get_init_data(info) as *const AtomicUsize);
            let bound = &*(sys::duckdb_function_get_bind_data(info) as *const Bound);
            let rows = bound.rows.kind(bound.kind).unwrap_or(&[]);
            super::functions::emit_rows(output, pos, rows.len(), bound.width, |r, c| rows[r].get(c).and_then(|x| x.as_deref()));
            Ok(())
        })
    }
}
