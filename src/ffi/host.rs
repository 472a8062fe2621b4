//! The host's function list, read at load from `duckdb_functions()` on the registration
//! connection (listed by `acl_function_categories()`, `engine::listings`).
use super::sql::query_rows;
use crate::engine::State;
use crate::policy::categories::HostRow;
use crate::policy::functions::SYSTEM_DB;
use std::ffi::c_void;
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
    let spellings = learn_spellings(&rows)?;
    state.set_host_functions(crate::policy::categories::categorise(&rows).with_types(types).with_spellings(spellings));
    Ok(())
}

/// Receives one call of a probe's select item from the shim: its name parts.
pub type AclProbeSink = unsafe extern "C" fn(user: *mut c_void, item: u32, parts: *const super::abi::AclStr, n_parts: usize);

// cpp/host_parse.cpp; declared to the shim by cpp/acl_ffi.hpp, generated from here.
extern "C" {
    /// Parses `sql` with DuckDB's parser and hands `sink` every call in each select item of its
    /// first statement (a SELECT); false when it does not parse. Does not unwind.
    fn acl_shim_probe_calls(sql: *const std::ffi::c_char, len: usize, sink: AclProbeSink, user: *mut c_void) -> bool;
}

/// # Safety
/// Called by the shim with the `user` that `probe` passed and `n_parts` readable strings.
unsafe extern "C" fn probe_sink(user: *mut c_void, item: u32, parts: *const super::abi::AclStr, n_parts: usize) {
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        // SAFETY: `user` is the `Vec` `probe` passed, alive for its call.
        let calls = unsafe { &mut *(user as *mut Vec<(u32, Vec<String>)>) };
        // SAFETY: the shim passes `n_parts` strings readable for the call.
        let parts = if n_parts == 0 { &[][..] } else { unsafe { std::slice::from_raw_parts(parts, n_parts) } };
        let names = parts
            .iter()
            .map(|p| {
                // SAFETY: each part is `len` readable bytes for the call.
                let b = if p.len == 0 { &[][..] } else { unsafe { std::slice::from_raw_parts(p.ptr as *const u8, p.len) } };
                String::from_utf8_lossy(b).into_owned()
            })
            .collect();
        calls.push((item, names));
    }));
}

/// The calls DuckDB's parse of `sql` holds, per select item; `None` when it does not parse.
fn probe(sql: &str) -> Option<Vec<(u32, Vec<String>)>> {
    let mut calls: Vec<(u32, Vec<String>)> = Vec::new();
    // SAFETY: `sql` is `len` readable bytes; the sink's user is `calls`, alive for the call.
    let ok = unsafe { acl_shim_probe_calls(sql.as_ptr() as *const std::ffi::c_char, sql.len(), probe_sink, &mut calls as *mut _ as *mut c_void) };
    ok.then_some(calls)
}

/// DuckDB's parser's spellings (spec 011, "Spellings"): the syntax probe must parse (else no bare
/// call could pass the second check: the load fails rather than refuse every statement later);
/// a form probe that does not parse teaches nothing.
fn learn_spellings(rows: &[HostRow]) -> Result<crate::policy::functions::Spellings, String> {
    use crate::policy::functions::CallForm;
    use crate::rewrite::spellings::{form_probe, learn, SYNTAX_PROBE};
    let syntax = probe(SYNTAX_PROBE).ok_or("DuckDB's parser did not read the syntax probe")?;
    let mut names: Vec<&str> = rows
        .iter()
        .filter(|r| r.db == SYSTEM_DB && r.schema == "main" && !matches!(r.function_type.as_str(), "table" | "table_macro" | "pragma"))
        .map(|r| r.name.as_str())
        .collect();
    names.sort_unstable();
    names.dedup();
    let mut aggregates: Vec<&str> =
        rows.iter().filter(|r| r.db == SYSTEM_DB && r.schema == "main" && r.function_type == "aggregate").map(|r| r.name.as_str()).collect();
    aggregates.sort_unstable();
    aggregates.dedup();
    let mut forms: Vec<(CallForm, &str, Vec<Vec<String>>)> = Vec::new();
    for form in [CallForm::NoArguments, CallForm::Over] {
        let Some(calls) = probe(&form_probe(form, &names)) else { continue };
        let mut per_item: Vec<Vec<Vec<String>>> = vec![Vec::new(); names.len()];
        for (item, parts) in calls {
            if let Some(slot) = per_item.get_mut(item as usize) {
                slot.push(parts);
            }
        }
        forms.extend(names.iter().zip(per_item).map(|(n, calls)| (form, *n, calls)));
    }
    // DuckDB's parser refuses WITHIN GROUP of an aggregate it does not rename: one probe each
    for name in &aggregates {
        if let Some(calls) = probe(&form_probe(CallForm::WithinGroup, &[name])) {
            forms.push((CallForm::WithinGroup, name, calls.into_iter().map(|(_, p)| p).collect()));
        }
    }
    Ok(learn(syntax.into_iter().map(|(_, parts)| parts), forms))
}
