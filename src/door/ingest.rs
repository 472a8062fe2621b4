//! Bulk ingest (CommandStatementIngest, spec 018 "Ingest"): the client's batches become the
//! principal's own `INSERT INTO <table> VALUES (?, …), …` statements through its session — the
//! same capability, write check, slice and masks as any `INSERT` — run in one transaction on one
//! connection: every row is written, or (on any refusal) none. `create` and `replace` are the
//! principal's own `CREATE TABLE` (and `DROP TABLE`) in that transaction, with the capabilities
//! those need.
use super::auth::{self, node_status, Client};
use super::node::{Conn, Param};
use super::params;
use super::server::Door;
use arrow_array::RecordBatch;
use arrow_flight::sql::{TableExistsOption, TableNotExistOption};
use arrow_flight::sql::CommandStatementIngest;
use arrow_schema::{DataType, Schema};
use std::sync::Arc;
use tonic::Status;

/// Rows per `INSERT` statement.
const ROWS_PER_STATEMENT: usize = 256;

fn sql_type(t: &DataType) -> Result<&'static str, Status> {
    Ok(match t {
        DataType::Boolean => "BOOLEAN",
        DataType::Int8 => "TINYINT",
        DataType::Int16 => "SMALLINT",
        DataType::Int32 => "INTEGER",
        DataType::Int64 => "BIGINT",
        DataType::UInt8 => "UTINYINT",
        DataType::UInt16 => "USMALLINT",
        DataType::UInt32 => "UINTEGER",
        DataType::UInt64 => "UBIGINT",
        DataType::Float32 => "FLOAT",
        DataType::Float64 => "DOUBLE",
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => "VARCHAR",
        DataType::Binary | DataType::LargeBinary => "BLOB",
        DataType::Date32 => "DATE",
        DataType::Timestamp(_, None) => "TIMESTAMP",
        other => return Err(Status::invalid_argument(format!("acl: ingest of a column of type {other} is not supported by the door"))),
    })
}

fn table_name(cmd: &CommandStatementIngest) -> String {
    let parts: Vec<&str> = [cmd.catalog.as_deref(), cmd.schema.as_deref(), Some(cmd.table.as_str())].into_iter().flatten().collect();
    parts.iter().map(|p| crate::sqltext::ident(p)).collect::<Vec<_>>().join(".")
}

fn definition(table: &str, schema: &Schema) -> Result<String, Status> {
    let cols = schema.fields().iter().map(|f| Ok(format!("{} {}", crate::sqltext::ident(f.name()), sql_type(f.data_type())?))).collect::<Result<Vec<_>, Status>>()?;
    Ok(format!("{table} ({})", cols.join(", ")))
}

/// Runs one statement of the client on `conn` to its end; DuckDB's count of rows written.
fn run(door: &Door, client: &Client, conn: &Arc<dyn Conn>, sql: &str, params: &[Param]) -> Result<i64, Status> {
    let fail = |e| {
        let s = node_status(e);
        auth::after(door, client, &s);
        s
    };
    let mut rows = Arc::clone(conn).run(&client.prefixed(sql), params).map_err(fail)?;
    let mut count = 0;
    while let Some(b) = rows.next_batch().map_err(fail)? {
        if b.num_columns() == 1 && b.schema().field(0).name() == "Count" {
            if let Some(a) = b.column(0).as_any().downcast_ref::<arrow_array::Int64Array>() {
                count += a.iter().flatten().sum::<i64>();
            }
        }
    }
    Ok(count)
}

fn write(door: &Door, client: &Client, conn: &Arc<dyn Conn>, cmd: &CommandStatementIngest, schema: &Schema, batches: &[RecordBatch]) -> Result<i64, Status> {
    let table = table_name(cmd);
    let opts = cmd.table_definition_options.unwrap_or_default();
    let exists = TableExistsOption::try_from(opts.if_exists).unwrap_or(TableExistsOption::Unspecified);
    let missing = TableNotExistOption::try_from(opts.if_not_exist).unwrap_or(TableNotExistOption::Unspecified);
    match (missing, exists) {
        (_, TableExistsOption::Replace) => {
            run(door, client, conn, &format!("DROP TABLE IF EXISTS {table}"), &[])?;
            run(door, client, conn, &format!("CREATE TABLE {}", definition(&table, schema)?), &[])?;
        }
        (TableNotExistOption::Create, TableExistsOption::Fail | TableExistsOption::Unspecified) => {
            run(door, client, conn, &format!("CREATE TABLE {}", definition(&table, schema)?), &[])?;
        }
        (TableNotExistOption::Create, TableExistsOption::Append) => {
            run(door, client, conn, &format!("CREATE TABLE IF NOT EXISTS {}", definition(&table, schema)?), &[])?;
        }
        _ => {}
    }
    let width = schema.fields().len();
    if width == 0 {
        return Ok(0);
    }
    let columns = schema.fields().iter().map(|f| crate::sqltext::ident(f.name())).collect::<Vec<_>>().join(", ");
    let mut written = 0;
    for b in batches {
        let all = params::rows(b)?;
        for chunk in all.chunks(ROWS_PER_STATEMENT) {
            let row = format!("({})", vec!["?"; width].join(", "));
            let sql = format!("INSERT INTO {table} ({columns}) VALUES {}", vec![row; chunk.len()].join(", "));
            let flat: Vec<Param> = chunk.iter().flatten().cloned().collect();
            written += run(door, client, conn, &sql, &flat)?;
        }
    }
    Ok(written)
}

/// DoPut(CommandStatementIngest): the rows written (blocking).
pub(super) fn ingest(door: &Arc<Door>, client: &Arc<Client>, cmd: CommandStatementIngest, schema: Arc<Schema>, batches: Vec<RecordBatch>) -> Result<i64, Status> {
    if cmd.temporary {
        return Err(Status::invalid_argument("acl: the door does not ingest into temporary tables"));
    }
    if let Some(t) = cmd.transaction_id.as_deref() {
        // inside the client's transaction: its end decides
        let conn = super::query::conn_for(door, client, Some(t))?;
        let _registered = door.register(Arc::clone(&conn));
        return write(door, client, &conn, &cmd, &schema, &batches);
    }
    let conn = door.node.connect().map_err(node_status)?;
    let _registered = door.register(Arc::clone(&conn));
    run(door, client, &conn, "BEGIN TRANSACTION", &[])?;
    match write(door, client, &conn, &cmd, &schema, &batches) {
        Ok(n) => {
            run(door, client, &conn, "COMMIT", &[])?;
            Ok(n)
        }
        Err(e) => {
            let _ = run(door, client, &conn, "ROLLBACK", &[]);
            Err(e)
        }
    }
}
