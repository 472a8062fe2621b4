//! `acl_view_guard(name, definer, body, persistent, digest)`: the guard every view a principal
//! creates reads beside its body (src/rewrite/views.rs, specs/005). Its *bind* runs whenever
//! DuckDB binds the view — at creation and at every use — and re-judges the view under the
//! current policy, refusing before anything runs. It returns one row of one column, which the
//! view does not select. Only the rewriter emits calls to it (`acl_*` is never callable under a
//! principal).
use crate::rewrite::GuardArgs;
use libduckdb_sys as sys;
use std::ffi::{c_void, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};

use super::table_fn::Param;

const NAME: &str = "acl_view_guard";

pub(super) const GUARD: super::table_fn::TableFn = super::table_fn::TableFn {
    name: NAME,
    params: &[Param::VARCHAR, Param::VARCHAR, Param::VARCHAR, Param::BOOLEAN, Param::VARCHAR],
    bind: guard_bind,
    init: guard_init,
    function: guard_function,
};

/// `acl_jwt_clock_skew` in the caller's context; 0 (the strictest) when it cannot be read.
///
/// # Safety
/// `info` is the live bind info of `acl_view_guard`.
unsafe fn clock_skew(info: sys::duckdb_bind_info) -> u64 {
    // SAFETY: `info` is the live bind info; the context and the value are destroyed after use. An
    // API table without the function panics in the wrapper, which is caught (skew 0).
    let read = catch_unwind(AssertUnwindSafe(|| unsafe {
        let mut ctx: sys::duckdb_client_context = std::ptr::null_mut();
        sys::duckdb_table_function_get_client_context(info, &mut ctx);
        if ctx.is_null() {
            return None;
        }
        let name = CString::new("acl_jwt_clock_skew").expect("static name");
        let mut value = sys::duckdb_client_context_get_config_option(ctx, name.as_ptr(), std::ptr::null_mut());
        sys::duckdb_destroy_client_context(&mut ctx);
        if value.is_null() {
            return None;
        }
        let skew = (!sys::duckdb_is_null_value(value)).then(|| sys::duckdb_get_uint64(value));
        sys::duckdb_destroy_value(&mut value);
        skew
    }));
    read.ok().flatten().unwrap_or(0)
}

/// `guard_bind`'s body.
///
/// # Safety
/// `info` is the live bind info of `acl_view_guard`, registered by `table_fn::register`.
unsafe fn bind(info: sys::duckdb_bind_info) -> Result<(), String> {
    // SAFETY: `info` is the live bind info; its extra info is the `Arc<State>` `register` set.
    unsafe {
        let _guard = crate::engine::nesting::enter(crate::engine::nesting::Bind::Guard).map_err(|e| e.to_string())?;
        let state = super::table_fn::state_of(info);
        let mut boolean = sys::duckdb_create_logical_type(sys::DUCKDB_TYPE_DUCKDB_TYPE_BOOLEAN);
        let col = CString::new("__acl_guard").expect("static name");
        sys::duckdb_bind_add_result_column(info, col.as_ptr(), boolean);
        sys::duckdb_destroy_logical_type(&mut boolean);
        sys::duckdb_bind_set_cardinality(info, 1, true);
        let malformed = || "acl: internal error: a malformed view guard".to_string();
        let args = GuardArgs::decode(
            &super::table_fn::text_param(info, 0).ok_or_else(malformed)?,
            &super::table_fn::text_param(info, 1).ok_or_else(malformed)?,
            &super::table_fn::text_param(info, 2).ok_or_else(malformed)?,
            super::table_fn::bool_param(info, 3).ok_or_else(malformed)?,
            &super::table_fn::text_param(info, 4).ok_or_else(malformed)?,
        )
        .map_err(|e| e.to_string())?;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_err(|_| "acl: internal error: the system clock is before 1970".to_string())?
            .as_secs() as i64;
        crate::rewrite::view_guard(&state.policy(), &state.rewrites, &args, now, clock_skew(info))
            .map_err(|e| e.to_string())
    }
}

/// # Safety
/// DuckDB calls it with the live bind info of `acl_view_guard`.
unsafe extern "C" fn guard_bind(info: sys::duckdb_bind_info) {
    // Read on DuckDB's stack, before the bind moves to the thread's region: the guard binds once
    // per nested view, deeper each time, so a chain of views stops here (spec 011, "Nesting").
    let room = crate::engine::nesting::stack_room();
    // SAFETY: DuckDB calls this with a live bind info of acl_view_guard.
    unsafe {
        super::table_fn::bind_with(info, "acl: internal error in the view guard; the view was refused", || {
            room.map_err(|e| e.to_string())?;
            bind(info)
        })
    }
}

/// # Safety
/// DuckDB calls it with the live init info of `acl_view_guard`.
unsafe extern "C" fn guard_init(info: sys::duckdb_init_info) {
    let data = Box::into_raw(Box::new(AtomicBool::new(false))) as *mut c_void;
    // SAFETY: DuckDB owns `data` from here and frees it with `drop_box`.
    unsafe { sys::duckdb_init_set_init_data(info, data, Some(super::table_fn::drop_box::<AtomicBool>)) };
}

/// # Safety
/// DuckDB calls it with the live function info and output chunk of `acl_view_guard`.
unsafe extern "C" fn guard_function(info: sys::duckdb_function_info, output: sys::duckdb_data_chunk) {
    // SAFETY: the init data is the `AtomicBool` of `guard_init`; the output chunk has one BOOLEAN
    // column with room for a vector of rows.
    let r = catch_unwind(AssertUnwindSafe(|| unsafe {
        let done = &*(sys::duckdb_function_get_init_data(info) as *const AtomicBool);
        if done.swap(true, Ordering::SeqCst) {
            sys::duckdb_data_chunk_set_size(output, 0);
            return;
        }
        let vector = sys::duckdb_data_chunk_get_vector(output, 0);
        let data = sys::duckdb_vector_get_data(vector) as *mut bool;
        *data = true;
        sys::duckdb_data_chunk_set_size(output, 1);
    }));
    if r.is_err() {
        let msg = CString::new("acl: internal error in the view guard").expect("static");
        // SAFETY: DuckDB copies the message.
        unsafe { sys::duckdb_function_set_error(info, msg.as_ptr()) };
    }
}
