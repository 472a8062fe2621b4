//! DuckDB's print of a principal's statement (cpp/host_parse.cpp, spec 016): the rewrite reads
//! it when sqlparser cannot read the text as written or a select item is named by its text.
use super::abi::AclHostParse;
use crate::error::{AclError, Syntax};
use crate::rewrite::Printed;
use std::ffi::{c_char, c_void};

// cpp/host_parse.cpp; declared to the shim by cpp/acl_ffi.hpp, generated from here.
extern "C" {
    /// DuckDB's parse of `len` bytes at `sql` (with its built-in parser options, no override),
    /// printed back with every item DuckDB names by its text aliased by that name, into `out`;
    /// false when DuckDB's parser refused it (`out.error`) or the shim failed. `out.handle` is set
    /// in every case and freed with `acl_shim_host_parse_free`. Does not unwind.
    fn acl_shim_host_parse(sql: *const c_char, len: usize, out: *mut AclHostParse) -> bool;
    /// Frees what `acl_shim_host_parse` kept (null is fine).
    fn acl_shim_host_parse_free(handle: *mut c_void);
}

fn text(s: &super::abi::AclStr) -> String {
    if s.ptr.is_null() || s.len == 0 {
        return String::new();
    }
    // SAFETY: the shim points `ptr` at `len` bytes it keeps until `acl_shim_host_parse_free`,
    // which runs after this copy.
    String::from_utf8_lossy(unsafe { std::slice::from_raw_parts(s.ptr as *const u8, s.len) }).into_owned()
}

/// DuckDB's print of `sql`, or its parser's refusal (the first line of its message).
pub(super) fn print(sql: &str) -> Result<Printed, AclError> {
    let empty = super::abi::AclStr { ptr: std::ptr::null(), len: 0 };
    let mut out = AclHostParse { handle: std::ptr::null_mut(), printed: empty, error: super::abi::AclStr { ptr: std::ptr::null(), len: 0 }, n_statements: 0 };
    // SAFETY: `sql` is `len` readable bytes and `out` is writable for the call.
    let ok = unsafe { acl_shim_host_parse(sql.as_ptr() as *const c_char, sql.len(), &mut out) };
    let result = if ok {
        Ok(Printed { sql: text(&out.printed), statements: out.n_statements as usize })
    } else {
        let message = text(&out.error);
        // DuckDB's expression depth limit: the same refusal as sqlparser's recursion limit
        if message.starts_with("Max expression depth limit of") {
            Err(AclError::from(Syntax::TooDeep))
        } else {
            let first = message.lines().next().unwrap_or("").chars().take(200).collect::<String>();
            Err(AclError::from(Syntax::Host { message: first }))
        }
    };
    // SAFETY: the handle the call set (or null), freed once.
    unsafe { acl_shim_host_parse_free(out.handle) };
    result
}
