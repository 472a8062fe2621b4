//! SQL functions the extension registers (through the `duckdb` crate's C API bindings).
use crate::state::State;
use duckdb::core::{DataChunkHandle, Inserter, LogicalTypeHandle, LogicalTypeId};
use duckdb::vtab::{BindInfo, InitInfo, TableFunctionInfo, VTab};
use duckdb::Connection;
use std::error::Error;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// The C API version we ask the host for.
const API_VERSION: &str = "v1.2.0";

pub(super) unsafe fn register(
    state: Arc<State>,
    info: libduckdb_sys::duckdb_extension_info,
    access: *const libduckdb_sys::duckdb_extension_access,
) -> Result<(), String> {
    let ok = unsafe { libduckdb_sys::duckdb_rs_extension_api_init(info, access, API_VERSION) }.map_err(|e| e.to_string())?;
    if !ok {
        return Err("the host offers no C extension API".into());
    }
    let get_database = unsafe { (*access).get_database }.ok_or("no get_database callback")?;
    let db = unsafe { *get_database(info) };
    let con = unsafe { Connection::open_from_raw(db) }.map_err(|e| e.to_string())?;
    con.register_table_function_with_extra_info::<AclExec, _>("acl_exec", &state).map_err(|e| e.to_string())?;
    Ok(())
}

/// `acl_exec('<management statement>')`: what `ACL ADMIN …` becomes. It runs when DuckDB
/// executes the statement, so a batch applies in order and a prepared-but-unexecuted
/// statement changes nothing.
struct AclExec;

struct ExecBind {
    sql: String,
}

struct ExecInit {
    done: AtomicBool,
}

impl VTab for AclExec {
    type InitData = ExecInit;
    type BindData = ExecBind;

    fn bind(bind: &BindInfo) -> Result<ExecBind, Box<dyn Error>> {
        bind.add_result_column("status", LogicalTypeHandle::from(LogicalTypeId::Varchar));
        Ok(ExecBind { sql: bind.get_parameter(0).to_string() })
    }

    fn init(_: &InitInfo) -> Result<ExecInit, Box<dyn Error>> {
        Ok(ExecInit { done: AtomicBool::new(false) })
    }

    fn func(func: &TableFunctionInfo<Self>, output: &mut DataChunkHandle) -> Result<(), Box<dyn Error>> {
        if func.get_init_data().done.swap(true, Ordering::SeqCst) {
            output.set_len(0);
            return Ok(());
        }
        let state = unsafe { &*func.get_extra_info::<Arc<State>>() };
        let status = state.execute_admin(&func.get_bind_data().sql)?;
        output.flat_vector(0).insert(0, status.as_str());
        output.set_len(1);
        Ok(())
    }

    fn parameters() -> Option<Vec<LogicalTypeHandle>> {
        Some(vec![LogicalTypeHandle::from(LogicalTypeId::Varchar)])
    }
}
