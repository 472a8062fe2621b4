//! The catalog RPCs (spec 018, "Catalog"): answered from the principal's virtual catalog only.
//! Each runs the principal's own `information_schema` query through its session — the same
//! listing a gateway's client gets (spec 006) — so no physical name can appear; a table's schema
//! (GetTables with schemas) is the principal's `SELECT *` of it, described, never run.
use super::auth::{node_status, Client};
use super::server::Door;
use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_flight::sql::metadata::{GetCatalogsBuilder, GetDbSchemasBuilder, GetTablesBuilder};
use arrow_flight::sql::{CommandGetCatalogs, CommandGetDbSchemas, CommandGetTables};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use std::sync::Arc;
use tonic::Status;

/// Rows of a principal's query whose columns are all text.
fn texts(door: &Arc<Door>, client: &Client, sql: &str) -> Result<Vec<Vec<Option<String>>>, Status> {
    let conn = door.node.connect().map_err(node_status)?;
    let _registered = door.register(Arc::clone(&conn));
    let mut rows = Arc::clone(&conn).run(&client.prefixed(sql), &[]).map_err(node_status)?;
    let mut out = Vec::new();
    while let Some(b) = rows.next_batch().map_err(node_status)? {
        for r in 0..b.num_rows() {
            out.push(b.columns().iter().map(|c| text(c, r)).collect());
        }
    }
    Ok(out)
}

fn text(col: &ArrayRef, row: usize) -> Option<String> {
    if col.is_null(row) {
        return None;
    }
    match col.data_type() {
        DataType::Utf8 => Some(col.as_string::<i32>().value(row).to_string()),
        DataType::LargeUtf8 => Some(col.as_string::<i64>().value(row).to_string()),
        DataType::Utf8View => Some(col.as_string_view().value(row).to_string()),
        _ => None,
    }
}

fn arrow(e: impl std::fmt::Display) -> Status {
    Status::internal(format!("acl: internal error: {e}"))
}

pub(super) fn catalogs(door: &Arc<Door>, client: &Client, q: CommandGetCatalogs) -> Result<RecordBatch, Status> {
    let mut b: GetCatalogsBuilder = q.into_builder();
    for r in texts(door, client, "SELECT DISTINCT catalog_name FROM information_schema.schemata ORDER BY 1")? {
        if let Some(Some(c)) = r.into_iter().next() {
            b.append(c);
        }
    }
    b.build().map_err(arrow)
}

pub(super) fn schemas(door: &Arc<Door>, client: &Client, q: CommandGetDbSchemas) -> Result<RecordBatch, Status> {
    let mut b: GetDbSchemasBuilder = q.into_builder();
    for r in texts(door, client, "SELECT catalog_name, schema_name FROM information_schema.schemata ORDER BY 1, 2")? {
        if let [Some(c), Some(s)] = &r[..] {
            b.append(c, s);
        }
    }
    b.build().map_err(arrow)
}

pub(super) fn tables(door: &Arc<Door>, client: &Client, q: CommandGetTables) -> Result<RecordBatch, Status> {
    let include = q.include_schema;
    let mut b: GetTablesBuilder = q.into_builder();
    let rows = texts(door, client, "SELECT table_catalog, table_schema, table_name, table_type FROM information_schema.tables ORDER BY 1, 2, 3")?;
    let empty = Schema::empty();
    let conn = if include { Some(door.node.connect().map_err(node_status)?) } else { None };
    for r in rows {
        let [Some(c), Some(s), Some(t), ty] = &r[..] else { continue };
        let ty = ty.as_deref().unwrap_or("BASE TABLE");
        let described = match &conn {
            Some(conn) => {
                let sql = format!("SELECT * FROM {}.{}.{}", crate::sqltext::ident(c), crate::sqltext::ident(s), crate::sqltext::ident(t));
                conn.describe(&client.prefixed(&sql)).map_err(node_status)?.columns
            }
            None => Arc::new(empty.clone()),
        };
        b.append(c, s, t, ty, &described).map_err(arrow)?;
    }
    b.build().map_err(arrow)
}

/// The primary keys of a virtual table: none. The virtual catalog exposes no constraints (a
/// physical table's keys may name columns the principal cannot see), so the answer is empty.
pub(super) fn primary_keys() -> Result<RecordBatch, Status> {
    RecordBatch::try_new_with_options(primary_keys_schema(), empty_columns(&primary_keys_schema()), &arrow_array::RecordBatchOptions::new().with_row_count(Some(0)))
        .map_err(arrow)
}

pub(super) fn primary_keys_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("catalog_name", DataType::Utf8, true),
        Field::new("db_schema_name", DataType::Utf8, true),
        Field::new("table_name", DataType::Utf8, false),
        Field::new("column_name", DataType::Utf8, false),
        Field::new("key_name", DataType::Utf8, true),
        Field::new("key_sequence", DataType::Int32, false),
    ]))
}

fn empty_columns(schema: &SchemaRef) -> Vec<ArrayRef> {
    schema.fields().iter().map(|f| arrow_array::new_empty_array(f.data_type())).collect()
}

/// The table types a principal's tables have.
pub(super) const TABLE_TYPES: [&str; 3] = ["BASE TABLE", "LOCAL TEMPORARY", "VIEW"];
