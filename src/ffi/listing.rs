//! The operator listings of `engine::listings` as table functions (`SELECT * FROM acl_roles()`):
//! one bind/init/scan for all of them. The rows are taken at bind, from the snapshot of that
//! moment, and scanned a vector at a time; cells arrive as text and are written in their
//! column's type.
use super::table_fn::{bind_with, drop_box, function_with, TableFn};
use crate::engine::listings::{Listing, LISTINGS};
use crate::engine::State;
use crate::store::layout::Ty;
use crate::store::Row;
use libduckdb_sys as sys;
use std::ffi::{c_void, CString};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// A listing's extra info.
struct Info {
    state: Arc<State>,
    listing: &'static Listing,
}

struct Bound {
    rows: Vec<Row>,
    listing: &'static Listing,
}

/// Registers every listing on `con`.
///
/// # Safety
/// `con` is a live connection of the instance being loaded.
pub(super) unsafe fn register(con: sys::duckdb_connection, state: &Arc<State>) -> Result<(), String> {
    for listing in LISTINGS {
        let f = TableFn { name: listing.name, params: &[], bind, init, function };
        // SAFETY: the function's contract.
        unsafe { super::table_fn::register_with(con, &f, Info { state: state.clone(), listing }) }?;
    }
    Ok(())
}

fn duck_type(ty: Ty) -> sys::DUCKDB_TYPE {
    match ty {
        Ty::Text => sys::DUCKDB_TYPE_DUCKDB_TYPE_VARCHAR,
        Ty::Bool => sys::DUCKDB_TYPE_DUCKDB_TYPE_BOOLEAN,
        Ty::Int => sys::DUCKDB_TYPE_DUCKDB_TYPE_BIGINT,
        Ty::Time => sys::DUCKDB_TYPE_DUCKDB_TYPE_TIMESTAMP_TZ,
    }
}

/// # Safety
/// DuckDB calls it with the live bind info of a listing.
unsafe extern "C" fn bind(info: sys::duckdb_bind_info) {
    // SAFETY: DuckDB calls this with a live bind info of a function `register` registered, whose
    // extra info is an `Info`.
    unsafe {
        bind_with(info, "acl: internal error in a listing", || {
            let extra = &*(sys::duckdb_bind_get_extra_info(info) as *const Info);
            for (name, ty) in extra.listing.columns {
                let mut t = sys::duckdb_create_logical_type(duck_type(*ty));
                let col = CString::new(*name).expect("static name");
                sys::duckdb_bind_add_result_column(info, col.as_ptr(), t);
                sys::duckdb_destroy_logical_type(&mut t);
            }
            let rows = (extra.listing.rows)(&extra.state);
            let data = Box::into_raw(Box::new(Bound { rows, listing: extra.listing })) as *mut c_void;
            sys::duckdb_bind_set_bind_data(info, data, Some(drop_box::<Bound>));
            Ok(())
        })
    }
}

/// # Safety
/// DuckDB calls it with the live init info of a listing.
unsafe extern "C" fn init(info: sys::duckdb_init_info) {
    let data = Box::into_raw(Box::new(AtomicUsize::new(0))) as *mut c_void;
    // SAFETY: DuckDB owns `data` from here and frees it with `drop_box`.
    unsafe { sys::duckdb_init_set_init_data(info, data, Some(drop_box::<AtomicUsize>)) };
}

/// # Safety
/// DuckDB calls it with the live function info and output chunk of a listing.
unsafe extern "C" fn function(info: sys::duckdb_function_info, output: sys::duckdb_data_chunk) {
    // SAFETY: DuckDB calls this with live function info and output, bound and initialised above.
    unsafe {
        function_with(info, "acl: internal error in a listing", || {
            let pos = &*(sys::duckdb_function_get_init_data(info) as *const AtomicUsize);
            let bound = &*(sys::duckdb_function_get_bind_data(info) as *const Bound);
            emit(output, pos, &bound.rows, bound.listing.columns)
        })
    }
}

/// Writes the next vector's worth of `rows` from `pos` onward into `output`, each cell in its
/// column's type, and advances `pos`.
///
/// # Safety
/// `output` is the chunk DuckDB handed a table function bound with `columns`.
unsafe fn emit(output: sys::duckdb_data_chunk, pos: &AtomicUsize, rows: &[Row], columns: &[(&str, Ty)]) -> Result<(), String> {
    // SAFETY: the function's contract: one vector of each column's type, of a vector's size.
    unsafe {
        let start = pos.load(Ordering::SeqCst);
        let n = rows.len().saturating_sub(start).min(sys::duckdb_vector_size() as usize);
        for (c, (name, ty)) in columns.iter().enumerate() {
            let v = sys::duckdb_data_chunk_get_vector(output, c as u64);
            for i in 0..n {
                let bad = || format!("acl: internal error: the listing's {name} is not a {}", ty.sql());
                match (rows[start + i][c].as_deref(), ty) {
                    (None, _) => {
                        sys::duckdb_vector_ensure_validity_writable(v);
                        sys::duckdb_validity_set_row_invalid(sys::duckdb_vector_get_validity(v), i as u64);
                    }
                    (Some(s), Ty::Text) => sys::duckdb_vector_assign_string_element_len(v, i as u64, s.as_ptr() as *const _, s.len() as u64),
                    (Some(s), Ty::Bool) => *(sys::duckdb_vector_get_data(v) as *mut bool).add(i) = s == "true",
                    (Some(s), Ty::Int | Ty::Time) => *(sys::duckdb_vector_get_data(v) as *mut i64).add(i) = s.parse().map_err(|_| bad())?,
                }
            }
        }
        pos.store(start + n, Ordering::SeqCst);
        sys::duckdb_data_chunk_set_size(output, n as u64);
        Ok(())
    }
}
