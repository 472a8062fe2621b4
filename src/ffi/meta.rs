//! `acl_meta(kind, principal)`: the rows behind metadata relations under a principal (specs/005).
//! Only the rewriter emits calls to it (`acl_*` is never callable under a principal). At bind it
//! re-derives the principal's view from the current policy, and asks the shim to bind each
//! object's exposed query in the caller's context for its column names and types; the result is
//! cached by policy version, principal and the host's catalog stamp.
use crate::authz::ObjectType;
use libduckdb_sys as sys;
use std::ffi::{c_char, c_void, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

/// Receives one (name, type) pair from the shim: `user` as passed, two strings with their lengths.
pub type AclColumnSink =
    unsafe extern "C" fn(user: *mut c_void, name: *const c_char, name_len: usize, ty: *const c_char, ty_len: usize);

// cpp/meta.cpp; declared to the shim by cpp/acl_ffi.hpp, generated from here.
extern "C" {
    /// The output columns of `sql` (one SELECT) bound in `ctx`, each handed to `sink`; false when
    /// it does not bind.
    fn acl_shim_describe(
        ctx: sys::duckdb_client_context,
        sql: *const c_char,
        len: usize,
        sink: AclColumnSink,
        user: *mut c_void,
    ) -> bool;
    /// A number that changes whenever an attached database's catalog does (0: do not cache).
    fn acl_shim_catalog_stamp(ctx: sys::duckdb_client_context) -> u64;
    /// The tables and views of `db.schema` as (name, "BASE TABLE" | "VIEW") pairs to `sink`;
    /// false when the schema is missing or could not be read.
    fn acl_shim_schema_objects(
        ctx: sys::duckdb_client_context,
        db: *const c_char,
        db_len: usize,
        schema: *const c_char,
        schema_len: usize,
        sink: AclColumnSink,
        user: *mut c_void,
    ) -> bool;
}

pub(super) const META: super::table_fn::TableFn = super::table_fn::TableFn {
    name: "acl_meta",
    params: &[super::table_fn::Param::VARCHAR, super::table_fn::Param::VARCHAR],
    bind: meta_bind,
    init: meta_init,
    function: meta_function,
};

struct Bound {
    rows: Arc<crate::rewrite::MetaRows>,
    kind: &'static str,
    width: usize,
}

/// The output columns of `sql` bound in `ctx` (`None`: it does not bind).
///
/// # Safety
/// `ctx` is a live client context wrapper.
pub(super) unsafe fn describe(ctx: sys::duckdb_client_context, sql: &str) -> Option<Vec<(String, String)>> {
    let mut cols: Vec<(String, String)> = Vec::new();
    // SAFETY: the function's contract; `cols` outlives the call that fills it.
    let ok = unsafe { acl_shim_describe(ctx, sql.as_ptr() as *const c_char, sql.len(), sink, &mut cols as *mut _ as *mut c_void) };
    ok.then_some(cols)
}

/// Whether physical schema `db.schema` exists (and is not temp or system) in `ctx`.
///
/// # Safety
/// `ctx` is a live client context wrapper.
pub(super) unsafe fn schema_exists(ctx: sys::duckdb_client_context, db: &str, schema: &str) -> bool {
    let mut found: Vec<(String, String)> = Vec::new();
    let user = &mut found as *mut _ as *mut c_void;
    // SAFETY: the function's contract; the strings and `found` outlive the call.
    unsafe { acl_shim_schema_objects(ctx, db.as_ptr() as *const c_char, db.len(), schema.as_ptr() as *const c_char, schema.len(), sink, user) }
}

/// The `AclColumnSink` of `bind`: appends the pair to the `Vec<(String, String)>` at `user`.
///
/// # Safety
/// `user` is that vector, not otherwise borrowed; the strings have their lengths of readable bytes.
pub(super) unsafe extern "C" fn sink(user: *mut c_void, name: *const c_char, name_len: usize, ty: *const c_char, ty_len: usize) {
    // SAFETY: the function's contract.
    let _ = catch_unwind(AssertUnwindSafe(|| unsafe {
        let cols = &mut *(user as *mut Vec<(String, String)>);
        let s = |p: *const c_char, n: usize| String::from_utf8_lossy(std::slice::from_raw_parts(p as *const u8, n)).into_owned();
        cols.push((s(name, name_len), s(ty, ty_len)));
    }));
}

/// `meta_bind`'s body.
///
/// # Safety
/// `info` is the live bind info of `acl_meta`, registered by `table_fn::register`.
unsafe fn bind(info: sys::duckdb_bind_info) -> Result<(), String> {
    // SAFETY: the function's contract; every handle made here is destroyed here, and the vectors
    // the sink fills outlive the calls that fill them.
    unsafe {
        // An object this listing describes may read a listing itself: that one is refused, and
        // the object listed without columns (spec 011, "Nesting").
        let _listing = crate::engine::nesting::enter(crate::engine::nesting::Bind::Listing).map_err(|e| e.to_string())?;
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
            let ok = acl_shim_describe(ctx, sql.as_ptr() as *const c_char, sql.len(), sink, &mut cols as *mut _ as *mut c_void);
            ok.then(|| Arc::new(cols))
        };
        // A virtual schema's tables and views, enumerated in the caller's context as well.
        let mut schema_objects = |db: &str, schema: &str| -> Option<Vec<(String, ObjectType)>> {
            let mut found: Vec<(String, String)> = Vec::new();
            let user = &mut found as *mut _ as *mut c_void;
            let (db_ptr, schema_ptr) = (db.as_ptr() as *const c_char, schema.as_ptr() as *const c_char);
            let ok = acl_shim_schema_objects(ctx, db_ptr, db.len(), schema_ptr, schema.len(), sink, user);
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

/// # Safety
/// DuckDB calls it with the live bind info of `acl_meta`.
unsafe extern "C" fn meta_bind(info: sys::duckdb_bind_info) {
    // Read on DuckDB's stack, before the bind moves to the thread's region.
    let room = crate::engine::nesting::stack_room();
    // SAFETY: DuckDB calls this with a live bind info of acl_meta.
    unsafe {
        super::table_fn::bind_with(info, "acl: internal error in the metadata listing", || {
            room.map_err(|e| e.to_string())?;
            bind(info)
        })
    }
}

/// # Safety
/// DuckDB calls it with the live init info of `acl_meta`.
unsafe extern "C" fn meta_init(info: sys::duckdb_init_info) {
    let data = Box::into_raw(Box::new(AtomicUsize::new(0))) as *mut c_void;
    // SAFETY: DuckDB owns `data` from here and frees it with `drop_box`.
    unsafe { sys::duckdb_init_set_init_data(info, data, Some(super::table_fn::drop_box::<AtomicUsize>)) };
}

/// # Safety
/// DuckDB calls it with the live function info and output chunk of `acl_meta`.
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
