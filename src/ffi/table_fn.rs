//! What every table function of ours does the same way through the C API: registering it with the
//! instance's state as extra info, and reporting an error (or a panic) from a callback without
//! letting anything unwind into DuckDB.
use crate::engine::State;
use libduckdb_sys as sys;
use std::ffi::{c_char, c_void, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

/// A parameter's type.
#[derive(Clone, Copy)]
pub(super) enum Param {
    Of(sys::DUCKDB_TYPE),
}

/// Any type: the bind reads what came (a table function registered twice under one name through
/// the C API keeps only the first, so `acl_exec` takes a text or a list in one parameter).
pub(super) const ANY: Param = Param::Of(sys::DUCKDB_TYPE_DUCKDB_TYPE_ANY);

impl Param {
    pub const VARCHAR: Param = Param::Of(sys::DUCKDB_TYPE_DUCKDB_TYPE_VARCHAR);
    pub const BOOLEAN: Param = Param::Of(sys::DUCKDB_TYPE_DUCKDB_TYPE_BOOLEAN);

    /// A new logical type the caller destroys.
    ///
    /// # Safety
    /// The C API is initialised.
    pub unsafe fn logical_type(self) -> sys::duckdb_logical_type {
        let Param::Of(t) = self;
        // SAFETY: the function's contract.
        unsafe { sys::duckdb_create_logical_type(t) }
    }
}

/// A table function: its name, parameter types and callbacks.
pub(super) struct TableFn {
    pub name: &'static str,
    pub params: &'static [Param],
    pub bind: unsafe extern "C" fn(sys::duckdb_bind_info),
    pub init: unsafe extern "C" fn(sys::duckdb_init_info),
    pub function: unsafe extern "C" fn(sys::duckdb_function_info, sys::duckdb_data_chunk),
}

/// Registers `f` on `con`; its extra info is `state` (read back with `state_of`).
///
/// # Safety
/// `con` is a live connection of the instance being loaded.
pub(super) unsafe fn register(con: sys::duckdb_connection, f: &TableFn, state: Arc<State>) -> Result<(), String> {
    // SAFETY: the function's contract.
    unsafe { register_with(con, f, state) }
}

/// Registers `f` on `con` with `extra` as its extra info (owned by the function from then on).
///
/// # Safety
/// `con` is a live connection of the instance being loaded.
pub(super) unsafe fn register_with<E: Send + 'static>(con: sys::duckdb_connection, f: &TableFn, extra: E) -> Result<(), String> {
    // SAFETY: every handle created here is destroyed here; `extra` is owned by the function from
    // then on (freed by `drop_box` when DuckDB drops the function).
    unsafe {
        let mut tf = sys::duckdb_create_table_function();
        let name = CString::new(f.name).map_err(|_| "a function name holds NUL".to_string())?;
        sys::duckdb_table_function_set_name(tf, name.as_ptr());
        for &p in f.params {
            let mut ty = p.logical_type();
            sys::duckdb_table_function_add_parameter(tf, ty);
            sys::duckdb_destroy_logical_type(&mut ty);
        }
        let extra = Box::into_raw(Box::new(extra)) as *mut c_void;
        sys::duckdb_table_function_set_extra_info(tf, extra, Some(drop_box::<E>));
        sys::duckdb_table_function_set_bind(tf, Some(f.bind));
        sys::duckdb_table_function_set_init(tf, Some(f.init));
        sys::duckdb_table_function_set_function(tf, Some(f.function));
        let rc = sys::duckdb_register_table_function(con, tf);
        sys::duckdb_destroy_table_function(&mut tf);
        if rc == sys::duckdb_state_DuckDBSuccess {
            Ok(())
        } else {
            Err(format!("could not register {}", f.name))
        }
    }
}

/// Frees a boxed `T` DuckDB hands back (extra info, bind and init data).
///
/// # Safety
/// `p` is null or came from `Box::into_raw(Box::<T>::new(…))` and is freed once.
pub(super) unsafe extern "C" fn drop_box<T>(p: *mut c_void) {
    if !p.is_null() {
        // SAFETY: as the function's contract says.
        let _ = catch_unwind(AssertUnwindSafe(|| drop(unsafe { Box::from_raw(p as *mut T) })));
    }
}

/// The instance's state, as `register` gave it to a bind callback.
///
/// # Safety
/// `info` is the live bind info of a function `register` registered.
pub(super) unsafe fn state_of<'a>(info: sys::duckdb_bind_info) -> &'a Arc<State> {
    // SAFETY: the extra info is the `Arc<State>` `register` boxed; it lives as long as the function.
    unsafe { &*(sys::duckdb_bind_get_extra_info(info) as *const Arc<State>) }
}

/// Runs a callback's body on the thread's large stack (`stack::run`: management statements and
/// the view guard parse and rewrite); the message of its error, or `on_panic` for a panic, if any.
fn failure(on_panic: &str, body: impl FnOnce() -> Result<(), String>) -> Option<CString> {
    let msg = match catch_unwind(AssertUnwindSafe(|| crate::stack::run(body))) {
        Ok(Ok(Ok(()))) => return None,
        Ok(Ok(Err(e))) => e,
        Ok(Err(crate::stack::NoRoom)) => crate::engine::no_room().to_string(),
        Err(_) => on_panic.to_string(),
    };
    Some(CString::new(msg.replace('\0', " ")).unwrap_or_default())
}

/// Runs a bind callback's body; its error, or `on_panic` for a panic, becomes the bind's error.
///
/// # Safety
/// `info` is the live bind info DuckDB passed to the callback.
pub(super) unsafe fn bind_with(info: sys::duckdb_bind_info, on_panic: &str, body: impl FnOnce() -> Result<(), String>) {
    if let Some(msg) = failure(on_panic, body) {
        // SAFETY: DuckDB copies the message before `msg` drops.
        unsafe { sys::duckdb_bind_set_error(info, msg.as_ptr()) };
    }
}

/// Runs a table function's body; its error, or `on_panic` for a panic, becomes the function's error.
///
/// # Safety
/// `info` is the live function info DuckDB passed to the callback.
pub(super) unsafe fn function_with(info: sys::duckdb_function_info, on_panic: &str, body: impl FnOnce() -> Result<(), String>) {
    if let Some(msg) = failure(on_panic, body) {
        // SAFETY: DuckDB copies the message before `msg` drops.
        unsafe { sys::duckdb_function_set_error(info, msg.as_ptr()) };
    }
}

/// A value as text (`None`: a null pointer or NULL). The value stays the caller's.
///
/// # Safety
/// `value` is null or a live value.
unsafe fn value_text(value: sys::duckdb_value) -> Option<String> {
    // SAFETY: the function's contract; the string DuckDB makes is freed after it was copied; the
    // shim's bytes belong to `value`, alive for this call.
    unsafe {
        if value.is_null() || sys::duckdb_is_null_value(value) {
            return None;
        }
        let (mut data, mut len): (*const c_char, usize) = (std::ptr::null(), 0);
        if acl_shim_value_text(value, &mut data, &mut len) {
            let bytes = if len == 0 { &[][..] } else { std::slice::from_raw_parts(data as *const u8, len) };
            // A NUL is kept in the text (never a silent cut): every reader refuses it as it
            // refuses the statement form's (`acl_exec`, names, keys, predicates).
            return Some(String::from_utf8_lossy(bytes).into_owned());
        }
        let text = sys::duckdb_get_varchar(value);
        if text.is_null() {
            return None;
        }
        let out = CStr::from_ptr(text).to_string_lossy().into_owned();
        sys::duckdb_free(text as *mut c_void);
        Some(out)
    }
}

extern "C" {
    /// cpp/txn.cpp: a VARCHAR value's bytes and length (`duckdb_get_varchar` ends at a NUL);
    /// false for NULL, another type or a failure (nothing written). Does not unwind.
    fn acl_shim_value_text(value: sys::duckdb_value, data: *mut *const c_char, len: *mut usize) -> bool;
}

/// Parameter `i` as text (`None`: NULL).
///
/// # Safety
/// `info` is the live bind info of a function with at least `i + 1` parameters.
pub(super) unsafe fn text_param(info: sys::duckdb_bind_info, i: u64) -> Option<String> {
    // SAFETY: `info` is the live bind info of the callback; the value is ours to destroy, and is.
    unsafe {
        let mut value = sys::duckdb_bind_get_parameter(info, i);
        let out = value_text(value);
        sys::duckdb_destroy_value(&mut value);
        out
    }
}

/// Parameter `i` as a list of texts (`None`: NULL or not a list; a NULL item is an empty text).
///
/// # Safety
/// As `text_param`.
pub(super) unsafe fn list_param(info: sys::duckdb_bind_info, i: u64) -> Option<Vec<String>> {
    // SAFETY: as in `text_param`; every child value is destroyed after it was read, and the
    // value's type belongs to the value (not destroyed).
    unsafe {
        let mut value = sys::duckdb_bind_get_parameter(info, i);
        let is_list = !value.is_null()
            && !sys::duckdb_is_null_value(value)
            && sys::duckdb_get_type_id(sys::duckdb_get_value_type(value)) == sys::DUCKDB_TYPE_DUCKDB_TYPE_LIST;
        let out = is_list.then(|| {
            (0..sys::duckdb_get_list_size(value))
                .map(|k| {
                    let mut child = sys::duckdb_get_list_child(value, k);
                    let text = value_text(child).unwrap_or_default();
                    sys::duckdb_destroy_value(&mut child);
                    text
                })
                .collect()
        });
        sys::duckdb_destroy_value(&mut value);
        out
    }
}

/// Parameter `i` as a list of texts with its NULL elements kept (`None`: not a list, or NULL).
///
/// # Safety
/// As `text_param`.
pub(super) unsafe fn list_param_nullable(info: sys::duckdb_bind_info, i: u64) -> Option<Vec<Option<String>>> {
    // SAFETY: as in `list_param`.
    unsafe {
        let mut value = sys::duckdb_bind_get_parameter(info, i);
        let is_list = !value.is_null()
            && !sys::duckdb_is_null_value(value)
            && sys::duckdb_get_type_id(sys::duckdb_get_value_type(value)) == sys::DUCKDB_TYPE_DUCKDB_TYPE_LIST;
        let out = is_list.then(|| {
            (0..sys::duckdb_get_list_size(value))
                .map(|k| {
                    let mut child = sys::duckdb_get_list_child(value, k);
                    let text = value_text(child);
                    sys::duckdb_destroy_value(&mut child);
                    text
                })
                .collect()
        });
        sys::duckdb_destroy_value(&mut value);
        out
    }
}

/// Parameter `i` as a boolean (`None`: NULL).
///
/// # Safety
/// As `text_param`.
pub(super) unsafe fn bool_param(info: sys::duckdb_bind_info, i: u64) -> Option<bool> {
    // SAFETY: as in `text_param`.
    unsafe {
        let mut value = sys::duckdb_bind_get_parameter(info, i);
        let out = (!value.is_null() && !sys::duckdb_is_null_value(value)).then(|| sys::duckdb_get_bool(value));
        sys::duckdb_destroy_value(&mut value);
        out
    }
}

