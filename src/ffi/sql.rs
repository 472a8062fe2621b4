//! Running SQL on a connection of our own through the C API: every column read as text. Used for
//! the host's function list at load and by the DuckDB policy store (`ffi::store`).
use libduckdb_sys as sys;
use std::ffi::{CStr, CString};

/// Runs `sql`; on success hands the result to `read` (and destroys it), on failure returns
/// DuckDB's message.
///
/// # Safety
/// `con` is a live connection.
unsafe fn run<T>(con: sys::duckdb_connection, sql: &str, read: impl FnOnce(&mut sys::duckdb_result) -> Result<T, String>) -> Result<T, String> {
    let sql = CString::new(sql).map_err(|_| "the statement holds a NUL byte".to_string())?;
    // SAFETY: `duckdb_result` is a plain C struct that `duckdb_query` fills; all zeros is its
    // documented initial state.
    let mut res: sys::duckdb_result = unsafe { std::mem::zeroed() };
    // SAFETY: the function's contract; the result is destroyed once, on both paths.
    unsafe {
        if sys::duckdb_query(con, sql.as_ptr(), &mut res) != sys::duckdb_state_DuckDBSuccess {
            let e = sys::duckdb_result_error(&mut res);
            let msg = if e.is_null() { "unknown error".into() } else { CStr::from_ptr(e).to_string_lossy().into_owned() };
            sys::duckdb_destroy_result(&mut res);
            return Err(msg);
        }
        let out = read(&mut res);
        sys::duckdb_destroy_result(&mut res);
        out
    }
}

/// Runs a statement; the rows it changed.
///
/// # Safety
/// `con` is a live connection.
pub(super) unsafe fn execute(con: sys::duckdb_connection, sql: &str) -> Result<u64, String> {
    // SAFETY: the function's contract; `res` is the live result `run` hands over.
    unsafe { run(con, sql, |res| Ok(sys::duckdb_rows_changed(res))) }
}

/// Runs `sql`, whose columns must all be VARCHAR, and returns every row as nullable strings.
///
/// # Safety
/// `con` is a live connection.
pub(super) unsafe fn query_rows(con: sys::duckdb_connection, sql: &str) -> Result<Vec<Vec<Option<String>>>, String> {
    // SAFETY: the function's contract. Every chunk is destroyed once, and a string is read only
    // from a valid row of a VARCHAR vector of the chunk it came from.
    unsafe {
        run(con, sql, |res| {
            let ncols = sys::duckdb_column_count(res) as usize;
            for c in 0..ncols {
                if sys::duckdb_column_type(res, c as u64) != sys::DUCKDB_TYPE_DUCKDB_TYPE_VARCHAR {
                    return Err("a column of the result is not VARCHAR".into());
                }
            }
            let mut out = Vec::new();
            loop {
                let mut chunk = sys::duckdb_fetch_chunk(*res);
                if chunk.is_null() {
                    break;
                }
                let n = sys::duckdb_data_chunk_get_size(chunk) as usize;
                if n == 0 {
                    sys::duckdb_destroy_data_chunk(&mut chunk);
                    break;
                }
                let start = out.len();
                out.resize_with(start + n, || Vec::with_capacity(ncols));
                for c in 0..ncols {
                    let v = sys::duckdb_data_chunk_get_vector(chunk, c as u64);
                    let data = sys::duckdb_vector_get_data(v) as *const sys::duckdb_string_t;
                    let validity = sys::duckdb_vector_get_validity(v);
                    for (row, slot) in out[start..].iter_mut().enumerate() {
                        let valid = validity.is_null() || sys::duckdb_validity_row_is_valid(validity, row as u64);
                        slot.push(valid.then(|| read_string(&*data.add(row))));
                    }
                }
                sys::duckdb_destroy_data_chunk(&mut chunk);
            }
            Ok(out)
        })
    }
}

/// A `duckdb_string_t`: up to 12 bytes inline, else a pointer.
///
/// # Safety
/// `s` is a valid string of a live vector.
pub(super) unsafe fn read_string(s: &sys::duckdb_string_t) -> String {
    // SAFETY: the function's contract: the union's variant follows from the length.
    unsafe {
        let len = s.value.inlined.length as usize;
        let bytes = if len <= 12 {
            std::slice::from_raw_parts(s.value.inlined.inlined.as_ptr() as *const u8, len)
        } else {
            std::slice::from_raw_parts(s.value.pointer.ptr as *const u8, len)
        };
        String::from_utf8_lossy(bytes).into_owned()
    }
}
