//! SQL functions the extension registers, through DuckDB's C extension API (the shim hands us
//! this instance's database and API table).
//!
//! Raw `libduckdb-sys` calls rather than the `duckdb` crate: the crate's Arrow dependency
//! doubles a clean build for the little this needs.
use crate::engine::State;
use libduckdb_sys as sys;
use super::table_fn::{self, bind_with, drop_box, function_with, Param, TableFn};
use super::abi::AclSettings;
use crate::error::AclError;
use crate::rewrite::Settings;
use std::ffi::{c_void, CString};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// The C API version we ask the host for.
const API_VERSION: &str = "v1.2.0";

/// Registers the extension's table functions on a connection of the instance, then reads the
/// host's function list into `state`.
///
/// # Safety
/// `info`/`access` are the live extension info and access table of the instance being loaded.
pub(super) unsafe fn register(
    state: Arc<State>,
    info: sys::duckdb_extension_info,
    access: *const sys::duckdb_extension_access,
) -> Result<(), String> {
    // SAFETY: the function's contract; the API table is set before any other C API call.
    let ok = unsafe { sys::duckdb_rs_extension_api_init(info, access, API_VERSION) }.map_err(|e| e.to_string())?;
    if !ok {
        return Err("the host offers no C extension API".into());
    }
    // SAFETY: `access` is the live access table (the function's contract).
    let get_database = unsafe { (*access).get_database }.ok_or("no get_database callback")?;
    // SAFETY: the shim's callback returns a pointer to the instance's live database handle.
    let db = unsafe { *get_database(info) };
    let mut con: sys::duckdb_connection = std::ptr::null_mut();
    // SAFETY: `db` is the instance's live database handle.
    if unsafe { sys::duckdb_connect(db, &mut con) } != sys::duckdb_state_DuckDBSuccess {
        return Err("could not connect to the database".into());
    }
    // SAFETY: `con` is a live connection of the instance being loaded.
    let result = unsafe {
        // The list is read last, so it includes the extension's own acl_* functions (never).
        super::listing::register(con, &state)
            .and_then(|()| ACTIONS.iter().try_for_each(|a| a.register(con, &state)))
            .and_then(|()| table_fn::register(con, &super::view_guard::GUARD, state.clone()))
            .and_then(|()| table_fn::register(con, &super::meta::META, state.clone()))
            .and_then(|()| super::check::register(con, &state))
            .and_then(|()| super::export::register(con, &state))
            .and_then(|()| super::validate::register(con, &state))
            .and_then(|()| super::host::load(con, &state))
    };
    // SAFETY: `con` came from `duckdb_connect` and is disconnected once.
    unsafe { sys::duckdb_disconnect(&mut con) };
    result
}

/// Writes the next vector's worth of VARCHAR rows (`cell(row, column)`; `None` is NULL) from
/// `pos` onward into `output`, and advances `pos`: the scan of a listing held in memory.
///
/// # Safety
/// `output` is the chunk DuckDB handed a table function with `width` VARCHAR columns.
pub(super) unsafe fn emit_rows<'a>(
    output: sys::duckdb_data_chunk,
    pos: &std::sync::atomic::AtomicUsize,
    n_rows: usize,
    width: usize,
    cell: impl Fn(usize, usize) -> Option<&'a str>,
) {
    // SAFETY: the function's contract: `width` VARCHAR vectors of at least a vector's size.
    unsafe {
        let start = pos.load(Ordering::SeqCst);
        let n = n_rows.saturating_sub(start).min(sys::duckdb_vector_size() as usize);
        for c in 0..width {
            let v = sys::duckdb_data_chunk_get_vector(output, c as u64);
            for i in 0..n {
                match cell(start + i, c) {
                    Some(s) => sys::duckdb_vector_assign_string_element_len(v, i as u64, s.as_ptr() as *const _, s.len() as u64),
                    None => {
                        sys::duckdb_vector_ensure_validity_writable(v);
                        sys::duckdb_validity_set_row_invalid(sys::duckdb_vector_get_validity(v), i as u64);
                    }
                }
            }
        }
        pos.store(start + n, Ordering::SeqCst);
        sys::duckdb_data_chunk_set_size(output, n as u64);
    }
}

/// A table function that does something when DuckDB executes it (not when it is bound or
/// prepared) and returns one status row per thing done: `acl_exec` (a management batch, spec
/// 001), `acl_store_use` and `acl_store_reload` (behind the macros `acl_use_db` and `acl_reload`,
/// spec 006).
struct Action {
    name: &'static str,
    params: &'static [Param],
    /// With the settings of the context it runs in (`in_transaction` among them).
    run: fn(&Arc<State>, &[Arg], &Settings) -> Result<Vec<String>, AclError>,
}

/// A parameter's value, read at bind.
enum Arg {
    Text(Option<String>),
    List(Option<Vec<String>>),
    /// A list whose NULL elements count (`acl_api`'s arguments).
    Values(Option<Vec<Option<String>>>),
    Bool(Option<bool>),
}

impl Arg {
    fn text(&self) -> Option<&str> {
        match self {
            Arg::Text(t) => t.as_deref(),
            _ => None,
        }
    }
}

const ACTIONS: &[Action] = &[
    // `acl_exec('<management statement>')` and `acl_exec(['<statement>', …])`: what `ACL ADMIN …`
    // becomes. It runs when DuckDB executes the statement, so a prepared-but-unexecuted batch
    // changes nothing; all of a batch applies, in one transaction, or none of it.
    Action { name: "acl_exec", params: &[table_fn::ANY], run: exec },
    // `acl_exec_as('role'|'token'|'session', '<role, token or session id>', <statements>)`: what a
    // principal's `ACL ROLE "r" ACL …` / `ACL TOKEN '…' ACL …` / `ACL SESSION '…' ACL …` becomes;
    // the principal is judged again when it runs.
    Action { name: "acl_exec_as", params: &[Param::VARCHAR, Param::VARCHAR, table_fn::ANY], run: exec_as },
    // `acl_whoami('<jwt>')`: what a token resolves to now, or why it is rejected (operators only:
    // `acl_` names are never a principal's).
    Action { name: "acl_whoami", params: &[Param::VARCHAR], run: whoami },
    // `acl_api('<function>', [<arguments>])`: the reference's function API (`acl_grant_catalog(…)`
    // and the rest, macros over this one, cpp/api.cpp): the statements each call stands for,
    // run as `acl_exec` runs them (spec 007, "The function API").
    Action { name: "acl_api", params: &[Param::VARCHAR, table_fn::ANY], run: api },
    Action { name: "acl_store_use", params: &[Param::VARCHAR, Param::VARCHAR, Param::BOOLEAN], run: use_store },
    Action { name: "acl_store_use_postgres", params: &[Param::VARCHAR, Param::VARCHAR, Param::BOOLEAN], run: use_postgres },
    Action {
        name: "acl_store_reload",
        params: &[],
        run: |state, _, settings| crate::engine::source::reload(state, settings.in_transaction).map(|s| vec![s]),
    },
];

/// A batch's statements: one as text, several as a list; NULL is nothing to parse, refused as
/// an empty statement is.
fn statements(arg: Option<&Arg>) -> Vec<String> {
    match arg {
        Some(Arg::Text(Some(one))) => vec![one.clone()],
        Some(Arg::List(Some(many))) => many.clone(),
        _ => vec![String::new()],
    }
}

fn exec(state: &Arc<State>, args: &[Arg], settings: &Settings) -> Result<Vec<String>, AclError> {
    crate::engine::admin::execute_all(state, &statements(args.first()), settings, None)
}

fn exec_as(state: &Arc<State>, args: &[Arg], settings: &Settings) -> Result<Vec<String>, AclError> {
    let who = args.get(1).and_then(Arg::text).unwrap_or_default().to_string();
    let prefix = crate::engine::admin::runner_prefix(state, args.first().and_then(Arg::text), who)?;
    crate::engine::admin::execute_all(state, &statements(args.get(2)), settings, Some(&prefix))
}

fn whoami(state: &Arc<State>, args: &[Arg], settings: &Settings) -> Result<Vec<String>, AclError> {
    Ok(crate::engine::whoami(state, args.first().and_then(Arg::text).unwrap_or_default(), settings))
}

fn api(state: &Arc<State>, args: &[Arg], settings: &Settings) -> Result<Vec<String>, AclError> {
    let function = args.first().and_then(Arg::text).unwrap_or_default();
    let values = match args.get(1) {
        Some(Arg::Values(Some(v))) => v.as_slice(),
        _ => &[],
    };
    crate::engine::admin::call(state, function, values, settings)
}

/// `acl_use_db(db, schema := 'acl', init := false)`.
fn use_store(state: &Arc<State>, args: &[Arg], settings: &Settings) -> Result<Vec<String>, AclError> {
    let in_transaction = settings.in_transaction;
    if settings.parser_override_off {
        return Err(crate::error::StoreError::ParserOverrideOff.into());
    }
    let catalog = args.first().and_then(Arg::text).unwrap_or_default();
    let schema = args.get(1).and_then(Arg::text).unwrap_or("acl");
    let init = matches!(args.get(2), Some(Arg::Bool(Some(true))));
    if catalog.is_empty() || schema.is_empty() {
        return Err(crate::error::StoreError::NoCatalog { catalog: catalog.to_string() }.into());
    }
    let host = state.host_db.get().ok_or(AclError::internal("the instance's database is not known"))?;
    let store = crate::store::Store::new(host.duckdb_store(catalog, schema), crate::store::Location::new(Some(catalog), schema));
    crate::engine::source::use_store(state, store, init, in_transaction).map(|s| vec![s])
}

/// `acl_use_postgres('<libpq connection string>', schema := 'acl', init := false)`: the store in a
/// PostgreSQL database that several nodes share; once it is in use, a background thread of the
/// instance applies the other nodes' batches (`engine::watch`).
fn use_postgres(state: &Arc<State>, args: &[Arg], settings: &Settings) -> Result<Vec<String>, AclError> {
    let in_transaction = settings.in_transaction;
    if settings.parser_override_off {
        return Err(crate::error::StoreError::ParserOverrideOff.into());
    }
    let connection = args.first().and_then(Arg::text).unwrap_or_default();
    let schema = args.get(1).and_then(Arg::text).unwrap_or("acl");
    let init = matches!(args.get(2), Some(Arg::Bool(Some(true))));
    if schema.is_empty() {
        return Err(crate::error::StoreError::BadConnection { why: "the schema is empty".into() }.into());
    }
    let backend = crate::store::postgres::PgBackend::new(connection, schema)?;
    let store = crate::store::Store::new(Arc::new(backend), crate::store::Location::new(None, schema));
    let status = crate::engine::source::use_store(state, store, init, in_transaction)?;
    crate::engine::watch::start(state);
    Ok(vec![status])
}

/// An action's extra info.
struct ActionInfo {
    state: Arc<State>,
    action: &'static Action,
}

impl Action {
    /// # Safety
    /// `con` is a live connection of the instance being loaded.
    unsafe fn register(&'static self, con: sys::duckdb_connection, state: &Arc<State>) -> Result<(), String> {
        let f = TableFn { name: self.name, params: self.params, bind: action_bind, init: action_init, function: action_function };
        // SAFETY: the function's contract.
        unsafe { table_fn::register_with(con, &f, ActionInfo { state: state.clone(), action: self }) }
    }
}

/// What a bound action keeps until it runs.
struct Bound {
    args: Vec<Arg>,
    /// The client context the statement was bound in (and runs in: a plan belongs to its
    /// connection, which outlives it), to see at execution whether a transaction is open.
    context: sys::duckdb_client_context,
}

impl Drop for Bound {
    fn drop(&mut self) {
        if !self.context.is_null() {
            // SAFETY: the wrapper came from duckdb_table_function_get_client_context, freed once.
            unsafe { sys::duckdb_destroy_client_context(&mut self.context) };
        }
    }
}

/// An action's progress in one execution: its statuses, once it ran, and how many were emitted.
#[derive(Default)]
struct Ran {
    statuses: Option<Vec<String>>,
    pos: AtomicUsize,
}

// Declared to the shim by cpp/acl_ffi.hpp, generated from here.
extern "C" {
    /// cpp/txn.cpp: is an explicit transaction open in this `duckdb_client_context`? True (refuse)
    /// for a null context or on a failure.
    fn acl_shim_explicit_transaction(context: sys::duckdb_client_context) -> bool;
    /// cpp/shim.cpp: the settings of this `duckdb_client_context` into `out`; false (nothing
    /// written) for a null context or on a failure.
    fn acl_shim_context_settings(context: sys::duckdb_client_context, out: *mut AclSettings) -> bool;
}

/// The settings of the context an action runs in. Without them: the defaults, anonymous admin
/// off, and an explicit transaction assumed (fail closed: management is refused).
///
/// # Safety
/// `context` is null or a live client context wrapper.
pub(super) unsafe fn context_settings(state: &State, context: sys::duckdb_client_context) -> Settings {
    let mut raw = AclSettings::default();
    // SAFETY: the function's contract; `raw` is writable.
    let read = !context.is_null() && unsafe { acl_shim_context_settings(context, &mut raw) };
    let mut settings = if read { raw.read(state) } else { Settings { faults: state.faults, ..Settings::default() } };
    // SAFETY: as above.
    settings.in_transaction = !read || unsafe { acl_shim_explicit_transaction(context) };
    settings
}

/// # Safety
/// DuckDB calls it with the live bind info of an action.
unsafe extern "C" fn action_bind(info: sys::duckdb_bind_info) {
    // SAFETY: DuckDB calls this with a live bind info of a function `Action::register`
    // registered, whose extra info is an `ActionInfo` and whose parameters are its `params`.
    unsafe {
        bind_with(info, "acl: internal error in an acl_* function", || {
            let extra = &*(sys::duckdb_bind_get_extra_info(info) as *const ActionInfo);
            let mut varchar = sys::duckdb_create_logical_type(sys::DUCKDB_TYPE_DUCKDB_TYPE_VARCHAR);
            let col = CString::new("status").expect("static name");
            sys::duckdb_bind_add_result_column(info, col.as_ptr(), varchar);
            sys::duckdb_destroy_logical_type(&mut varchar);
            let args = (0..extra.action.params.len() as u64)
                .zip(extra.action.params)
                .map(|(i, p)| match p {
                    Param::Of(t) if *t == sys::DUCKDB_TYPE_DUCKDB_TYPE_ANY && extra.action.name == "acl_api" => {
                        Arg::Values(table_fn::list_param_nullable(info, i))
                    }
                    Param::Of(t) if *t == sys::DUCKDB_TYPE_DUCKDB_TYPE_ANY => match table_fn::list_param(info, i) {
                        Some(list) => Arg::List(Some(list)),
                        None => Arg::Text(table_fn::text_param(info, i)),
                    },
                    Param::Of(t) if *t == sys::DUCKDB_TYPE_DUCKDB_TYPE_BOOLEAN => Arg::Bool(table_fn::bool_param(info, i)),
                    Param::Of(_) => Arg::Text(table_fn::text_param(info, i)),
                })
                .collect();
            let mut context: sys::duckdb_client_context = std::ptr::null_mut();
            sys::duckdb_table_function_get_client_context(info, &mut context);
            let data = Box::into_raw(Box::new(Bound { args, context })) as *mut c_void;
            sys::duckdb_bind_set_bind_data(info, data, Some(drop_box::<Bound>));
            Ok(())
        })
    }
}

/// # Safety
/// DuckDB calls it with the live init info of an action.
unsafe extern "C" fn action_init(info: sys::duckdb_init_info) {
    let data = Box::into_raw(Box::new(parking_lot::Mutex::new(Ran::default()))) as *mut c_void;
    // SAFETY: DuckDB owns `data` from here and frees it with `drop_box`.
    unsafe { sys::duckdb_init_set_init_data(info, data, Some(drop_box::<parking_lot::Mutex<Ran>>)) };
}

/// # Safety
/// DuckDB calls it with the live function info and output chunk of an action.
unsafe extern "C" fn action_function(info: sys::duckdb_function_info, output: sys::duckdb_data_chunk) {
    // SAFETY: DuckDB calls this with live function info and output of an action, bound and
    // initialised by the callbacks above.
    unsafe {
        function_with(info, "acl: internal error in an acl_* function", || {
            let ran = &*(sys::duckdb_function_get_init_data(info) as *const parking_lot::Mutex<Ran>);
            let mut ran = ran.lock();
            if ran.statuses.is_none() {
                let extra = &*(sys::duckdb_function_get_extra_info(info) as *const ActionInfo);
                let bound = &*(sys::duckdb_function_get_bind_data(info) as *const Bound);
                // No context: an explicit transaction cannot be ruled out (fail closed).
                let settings = context_settings(&extra.state, bound.context);
                let statuses = (extra.action.run)(&extra.state, &bound.args, &settings).map_err(|e| e.to_string())?;
                ran.statuses = Some(statuses);
            }
            let ran = &*ran;
            let statuses = ran.statuses.as_deref().unwrap_or_default();
            emit_rows(output, &ran.pos, statuses.len(), 1, |r, _| Some(statuses[r].as_str()));
            Ok(())
        })
    }
}
