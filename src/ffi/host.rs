//! The host's function list (read at load from `duckdb_functions()`, on the registration
//! connection) and the operator listing `acl_function_categories()`.
use crate::policy::categories::HostRow;
use crate::policy::functions::{Class, FnKey, FnKind, SYSTEM_DB};
use crate::engine::State;
use libduckdb_sys as sys;
use std::ffi::{c_void, CStr, CString};
use std::sync::atomic::AtomicUsize;

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
    let rows = unsafe { query_rows(con, LIST_SQL, 5) }?;
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
    let types: Vec<String> = unsafe { query_rows(con, TYPES_SQL, 1) }?.into_iter().filter_map(|mut r| r.pop().flatten()).collect();
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

/// Runs `sql` and returns every row as `ncols` nullable strings (all columns VARCHAR).
///
/// # Safety
/// `con` is a live connection; `sql` yields at least `ncols` VARCHAR columns.
unsafe fn query_rows(con: sys::duckdb_connection, sql: &str, ncols: usize) -> Result<Vec<Vec<Option<String>>>, String> {
    let sql = CString::new(sql).map_err(|_| "bad query")?;
    // SAFETY: `duckdb_result` is a plain C struct that `duckdb_query` fills; all zeros is its
    // documented initial state.
    let mut res: sys::duckdb_result = unsafe { std::mem::zeroed() };
    // SAFETY: the function's contract; the result and every chunk are destroyed once, and a
    // string is read only from a valid row of a VARCHAR vector of the chunk it came from.
    unsafe {
        if sys::duckdb_query(con, sql.as_ptr(), &mut res) != sys::duckdb_state_DuckDBSuccess {
            let e = sys::duckdb_result_error(&mut res);
            let msg = if e.is_null() { "unknown error".into() } else { CStr::from_ptr(e).to_string_lossy().into_owned() };
            sys::duckdb_destroy_result(&mut res);
            return Err(format!("could not read the host's list ({msg})"));
        }
        let mut out = Vec::new();
        loop {
            let mut chunk = sys::duckdb_fetch_chunk(res);
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
        sys::duckdb_destroy_result(&mut res);
        Ok(out)
    }
}

/// A `duckdb_string_t`: up to 12 bytes inline, else a pointer.
///
/// # Safety
/// `s` is a valid string of a live vector.
unsafe fn read_string(s: &sys::duckdb_string_t) -> String {
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

/// `acl_function_categories()` → (database_name, schema_name, function_name, function_kind,
/// category): every host key with each category that holds it now (`never` for the never set,
/// NULL when no category does), pragmas as `never`, and functions operators added by name.
pub(super) const LISTING: super::table_fn::TableFn = super::table_fn::TableFn {
    name: "acl_function_categories",
    params: &[],
    bind: listing_bind,
    init: listing_init,
    function: listing_function,
};

const COLUMNS: [&str; 5] = ["database_name", "schema_name", "function_name", "function_kind", "category"];

type Row = [Option<String>; 5];

/// The listing's rows from the current policy snapshot.
pub fn listing_rows(policy: &crate::policy::Policy) -> Vec<Row> {
    let f = &policy.functions;
    let mut rows: Vec<Row> = Vec::new();
    let row = |k: &FnKey, kind: &str, cat: Option<&str>| -> Row {
        [Some(k.db.clone()), Some(k.schema.clone()), Some(k.name.clone()), Some(kind.into()), cat.map(String::from)]
    };
    for h in f.host.all() {
        if h.class == Class::Never {
            rows.push(row(&h.key, h.key.kind.sql(), Some("never")));
            continue;
        }
        let cats = f.categories_of(&h.key);
        if cats.is_empty() {
            rows.push(row(&h.key, h.key.kind.sql(), None));
        }
        for c in cats {
            rows.push(row(&h.key, h.key.kind.sql(), Some(c)));
        }
    }
    for (db, schema, name) in &f.host.pragmas {
        let k = FnKey { db: db.clone(), schema: schema.clone(), name: name.clone(), kind: FnKind::Scalar };
        rows.push(row(&k, "pragma", Some("never")));
    }
    // Functions named db.schema.name that the host list does not hold (a user macro).
    for (cname, c) in &f.categories {
        for n in &c.added {
            let Some((db, schema)) = &n.qualifier else { continue };
            if db == SYSTEM_DB {
                continue;
            }
            for kind in [FnKind::Scalar, FnKind::Table] {
                let k = FnKey { db: db.clone(), schema: schema.clone(), name: n.name.clone(), kind };
                if f.host.get(&k).is_none() {
                    rows.push(row(&k, kind.sql(), Some(cname)));
                }
            }
        }
    }
    rows
}

struct Listing {
    rows: Vec<Row>,
}

/// # Safety
/// DuckDB calls it with the live bind info of `acl_function_categories`.
unsafe extern "C" fn listing_bind(info: sys::duckdb_bind_info) {
    // SAFETY: DuckDB calls this with a live bind info of acl_function_categories.
    unsafe {
        super::table_fn::bind_with(info, "acl: internal error in acl_function_categories", || {
            let mut varchar = sys::duckdb_create_logical_type(sys::DUCKDB_TYPE_DUCKDB_TYPE_VARCHAR);
            for c in COLUMNS {
                let col = CString::new(c).expect("static name");
                sys::duckdb_bind_add_result_column(info, col.as_ptr(), varchar);
            }
            sys::duckdb_destroy_logical_type(&mut varchar);
            let state = super::table_fn::state_of(info);
            let data = Box::into_raw(Box::new(Listing { rows: listing_rows(&state.policy()) })) as *mut c_void;
            sys::duckdb_bind_set_bind_data(info, data, Some(super::table_fn::drop_box::<Listing>));
            Ok(())
        })
    }
}

/// # Safety
/// DuckDB calls it with the live init info of `acl_function_categories`.
unsafe extern "C" fn listing_init(info: sys::duckdb_init_info) {
    let data = Box::into_raw(Box::new(AtomicUsize::new(0))) as *mut c_void;
    // SAFETY: DuckDB owns `data` from here and frees it with `drop_box`.
    unsafe { sys::duckdb_init_set_init_data(info, data, Some(super::table_fn::drop_box::<AtomicUsize>)) };
}

/// # Safety
/// DuckDB calls it with the live function info and output chunk of `acl_function_categories`.
unsafe extern "C" fn listing_function(info: sys::duckdb_function_info, output: sys::duckdb_data_chunk) {
    // SAFETY: DuckDB calls this with live function info and output, bound and initialised above.
    unsafe {
        super::table_fn::function_with(info, "acl: internal error in acl_function_categories", || {
            let pos = &*(sys::duckdb_function_get_init_data(info) as *const AtomicUsize);
            let bind = &*(sys::duckdb_function_get_bind_data(info) as *const Listing);
            super::functions::emit_rows(output, pos, bind.rows.len(), COLUMNS.len(), |r, c| bind.rows[r][c].as_deref());
            Ok(())
        })
    }
}
