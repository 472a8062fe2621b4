//! The host's function list, read at load from `duckdb_functions()` on the registration
//! connection (listed by `acl_function_categories()`, `engine::listings`).
use super::sql::query_rows;
use crate::engine::State;
use crate::policy::categories::HostRow;
use libduckdb_sys as sys;

/// Only the system database: user macros that exist at load are not the host's own functions.
const LIST_SQL: &str = "SELECT database_name, schema_name, function_name, function_type, macro_definition \
                        FROM duckdb_functions() WHERE database_name = 'system'";

/// DuckDB's built-in types (the type gate, spec 004): only the system database, so a type a user
/// created (`CREATE TYPE`, in any attached database) is never among them.
const TYPES_SQL: &str = "SELECT DISTINCT type_name FROM duckdb_types() WHERE database_name = 'system'";

/// Reads and categorises the host's functions and reads its built-in types. An empty or
/// unreadable list fails the load: every call (every cast) would be refused, and a silent
/// half-working gate is worse than a clear error.
///
/// # Safety
/// `con` is a live connection of the instance being loaded.
pub(super) unsafe fn load(con: sys::duckdb_connection, state: &State) -> Result<(), String> {
    // SAFETY: the function's contract (also for the second query).
    let rows = unsafe { query_rows(con, LIST_SQL) }.map_err(|e| format!("could not read the host's list ({e})"))?;
    let rows: Vec<HostRow> = rows
        .into_iter()
        .map(|mut r| {
            let macro_definition = r.pop().flatten();
            let mut next = || r.remove(0).unwrap_or_default();
            HostRow { db: next(), schema: next(), name: next(), function_type: next(), macro_definition }
        })
        .collect();
    if rows.is_empty() {
        return Err("duckdb_functions() returned no functions".into());
    }
    // SAFETY: as above.
    let types: Vec<String> = unsafe { query_rows(con, TYPES_SQL) }
        .map_err(|e| format!("could not read the host's list ({e})"))?
        .into_iter().filter_map(|mut r| r.pop().flatten()).collect();
    if types.is_empty() {
        return Err("duckdb_types() returned no built-in types".into());
    }
    state.set_host_functions(crate::policy::categories::categorise(&rows).with_types(types));
    Ok(())
}
