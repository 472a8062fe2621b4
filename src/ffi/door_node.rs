//! The door's node over DuckDB's C API (spec 018, "Results"): a connection of this instance per
//! statement (or per transaction), a prepared statement executed streaming, and each chunk
//! converted to Arrow by DuckDB itself (`duckdb_data_chunk_to_arrow`, with the connection's Arrow
//! options) and imported without a copy (`arrow_array::ffi::from_ffi`): one chunk, one batch.
use super::store::{Connection, InstanceDb, WeakDb};
use crate::door::node::{Conn, Described, Failure, Node, NodeError, NodeResult, Param, Rows};
use crate::engine::State;
use crate::error::AclError;
use arrow_array::ffi::{from_ffi, FFI_ArrowArray, FFI_ArrowSchema};
use arrow_array::{RecordBatch, StructArray};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use libduckdb_sys as sys;
use std::ffi::{CStr, CString};
use std::sync::{Arc, Weak};

/// The node of `state`'s database.
pub(super) fn node(state: &Arc<State>) -> Result<Arc<dyn Node>, AclError> {
    let host = state.host_db.get().ok_or(AclError::internal("the instance's database is not known"))?;
    let db = host.as_any().downcast_ref::<InstanceDb>().ok_or(AclError::internal("the instance's database is not known"))?;
    Ok(Arc::new(DuckNode { db: Arc::clone(&db.0), state: Arc::downgrade(state) }))
}

struct DuckNode {
    db: Arc<WeakDb>,
    state: Weak<State>,
}

/// DuckDB's message, classified by its error type (`<Type> Error: …`); our refusals are passed on
/// as their own `acl:` text.
fn failure(message: &str) -> NodeError {
    let (kind, rest) = message.split_once(" Error: ").unwrap_or(("", message));
    let failure = match kind {
        "Permission" => Failure::Permission,
        "INTERRUPT" => Failure::Interrupted,
        "Connection" => Failure::Unavailable,
        "Parser" | "Binder" | "Catalog" | "Invalid Input" | "Conversion" | "Constraint" | "Not implemented" | "Syntax" | "Dependency"
        | "Transaction" | "Out of Range" | "Invalid type" | "Mismatch Type" | "TransactionContext" => Failure::Invalid,
        _ if message.contains("Interrupted") => Failure::Interrupted,
        _ => Failure::Other,
    };
    let shown = if rest.starts_with("acl:") { rest } else { message };
    NodeError::new(failure, shown)
}

/// # Safety
/// `p` is null or a NUL-terminated string.
unsafe fn c_text(p: *const std::ffi::c_char) -> String {
    // SAFETY: the function's contract.
    if p.is_null() { String::new() } else { unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned() }
}

/// # Safety
/// `err` is an error data DuckDB returned; it is destroyed here.
unsafe fn checked(mut err: sys::duckdb_error_data) -> NodeResult<()> {
    if err.is_null() {
        return Ok(());
    }
    // SAFETY: the function's contract.
    unsafe {
        let out = if sys::duckdb_error_data_has_error(err) { Err(failure(&c_text(sys::duckdb_error_data_message(err)))) } else { Ok(()) };
        sys::duckdb_destroy_error_data(&mut err);
        out
    }
}

impl Node for DuckNode {
    fn connect(&self) -> NodeResult<Arc<dyn Conn>> {
        let con = self.db.connect().ok_or_else(|| NodeError::new(Failure::Unavailable, "acl: the database is closed"))?;
        Ok(Arc::new(DuckConn { con, state: self.state.clone() }))
    }

    fn memory_limit(&self) -> u64 {
        const FALLBACK: u64 = 1 << 30;
        let Some(con) = self.db.connect() else { return FALLBACK };
        // SAFETY: `con` is the open connection made above.
        let rows = unsafe { super::sql::query_rows(con.0, "SELECT current_setting('memory_limit')::VARCHAR") };
        rows.ok().and_then(|r| r.into_iter().next()).and_then(|r| r.into_iter().next().flatten()).and_then(|t| bytes(&t)).unwrap_or(FALLBACK)
    }
}

/// `19.2 GiB` → bytes.
fn bytes(text: &str) -> Option<u64> {
    let (n, unit) = text.trim().split_once(' ').unwrap_or((text.trim(), "bytes"));
    let n: f64 = n.parse().ok()?;
    let mult = match unit.to_ascii_lowercase().as_str() {
        "bytes" | "b" => 1u64,
        "kib" => 1 << 10,
        "mib" => 1 << 20,
        "gib" => 1 << 30,
        "tib" => 1 << 40,
        "kb" => 1000,
        "mb" => 1_000_000,
        "gb" => 1_000_000_000,
        "tb" => 1_000_000_000_000,
        _ => return None,
    };
    Some((n * mult as f64) as u64)
}

/// One connection of the instance, closed when the last `Arc` (a result's or the door's) drops.
struct DuckConn {
    con: Connection,
    state: Weak<State>,
}

// SAFETY: a DuckDB connection may be used from any thread, one call at a time (the door runs one
// statement on a connection at a time); `duckdb_interrupt` may be called from any thread.
unsafe impl Send for DuckConn {}
// SAFETY: as above: the only call made concurrently with another is `duckdb_interrupt`.
unsafe impl Sync for DuckConn {}

struct Prepared(sys::duckdb_prepared_statement);

impl Drop for Prepared {
    fn drop(&mut self) {
        // SAFETY: a statement `duckdb_prepare` made, destroyed once.
        unsafe { sys::duckdb_destroy_prepare(&mut self.0) }
    }
}

struct Options(sys::duckdb_arrow_options);

impl Drop for Options {
    fn drop(&mut self) {
        if !self.0.is_null() {
            // SAFETY: options DuckDB made for us, destroyed once.
            unsafe { sys::duckdb_destroy_arrow_options(&mut self.0) }
        }
    }
}

impl DuckConn {
    fn prepare(&self, sql: &str) -> NodeResult<Prepared> {
        let c = CString::new(sql).map_err(|_| NodeError::new(Failure::Invalid, "acl: the statement holds a NUL byte"))?;
        let mut stmt: sys::duckdb_prepared_statement = std::ptr::null_mut();
        // SAFETY: the connection is open; `stmt` is destroyed by `Prepared` on every path.
        let ok = unsafe { sys::duckdb_prepare(self.con.0, c.as_ptr(), &mut stmt) } == sys::duckdb_state_DuckDBSuccess;
        let p = Prepared(stmt);
        if !ok {
            // SAFETY: the statement `duckdb_prepare` made, failed: its error is readable.
            return Err(failure(&unsafe { c_text(sys::duckdb_prepare_error(p.0)) }));
        }
        Ok(p)
    }

    fn options(&self) -> Options {
        let mut o: sys::duckdb_arrow_options = std::ptr::null_mut();
        // SAFETY: the connection is open; `o` is written.
        unsafe { sys::duckdb_connection_get_arrow_options(self.con.0, &mut o) };
        Options(o)
    }
}

/// An Arrow schema of DuckDB's logical types and names, by DuckDB's own conversion.
///
/// # Safety
/// `types` are live logical types (destroyed here); `options` live.
unsafe fn arrow_schema(options: &Options, mut types: Vec<sys::duckdb_logical_type>, names: &[String]) -> NodeResult<(FFI_ArrowSchema, SchemaRef)> {
    let cnames: Vec<CString> = names.iter().map(|n| CString::new(n.replace('\0', "")).unwrap_or_default()).collect();
    let mut ptrs: Vec<*const std::ffi::c_char> = cnames.iter().map(|c| c.as_ptr()).collect();
    let mut ffi = FFI_ArrowSchema::empty();
    // SAFETY: `types` and `ptrs` hold `len` entries; `ffi` is a writable ArrowSchema (the C
    // struct, same layout as the binding's).
    let done = unsafe {
        checked(sys::duckdb_to_arrow_schema(options.0, types.as_mut_ptr(), ptrs.as_mut_ptr(), types.len() as u64, &mut ffi as *mut FFI_ArrowSchema as *mut sys::ArrowSchema))
    };
    for t in &mut types {
        // SAFETY: each type was handed to us by DuckDB and is destroyed once.
        unsafe { sys::duckdb_destroy_logical_type(t) };
    }
    done?;
    let schema = Schema::try_from(&ffi).map_err(|e| NodeError::new(Failure::Other, format!("acl: internal error: {e}")))?;
    Ok((ffi, Arc::new(schema)))
}

/// # Safety
/// `stmt` is a live prepared statement.
unsafe fn bind(stmt: sys::duckdb_prepared_statement, params: &[Param]) -> NodeResult<()> {
    for (i, p) in params.iter().enumerate() {
        // SAFETY: creating values has no precondition; each is destroyed once below.
        let mut v = unsafe {
            match p {
                Param::Null => sys::duckdb_create_null_value(),
                Param::Bool(b) => sys::duckdb_create_bool(*b),
                Param::Int(n) => sys::duckdb_create_int64(*n),
                Param::UInt(n) => sys::duckdb_create_uint64(*n),
                Param::Float(f) => sys::duckdb_create_double(*f),
                Param::Text(t) => sys::duckdb_create_varchar_length(t.as_ptr() as *const _, t.len() as u64),
                Param::Blob(b) => sys::duckdb_create_blob(b.as_ptr(), b.len() as u64),
                Param::Date(d) => sys::duckdb_create_date(sys::duckdb_date { days: *d }),
                Param::Timestamp(t) => sys::duckdb_create_timestamp(sys::duckdb_timestamp { micros: *t }),
            }
        };
        // SAFETY: `stmt` is live (the function's contract), `v` the value made above.
        let ok = unsafe { sys::duckdb_bind_value(stmt, i as u64 + 1, v) } == sys::duckdb_state_DuckDBSuccess;
        // SAFETY: destroyed once.
        unsafe { sys::duckdb_destroy_value(&mut v) };
        if !ok {
            // SAFETY: `stmt` is live (the function's contract).
            let n = unsafe { sys::duckdb_nparams(stmt) };
            return Err(NodeError::new(Failure::Invalid, format!("acl: parameter {} could not be bound (the statement takes {n} parameters)", i + 1)));
        }
    }
    Ok(())
}

impl Conn for DuckConn {
    fn settings(&self) -> crate::rewrite::Settings {
        let Some(state) = self.state.upgrade() else { return Default::default() };
        let mut ctx: sys::duckdb_client_context = std::ptr::null_mut();
        // SAFETY: the connection is open; `ctx` is written and destroyed once below.
        unsafe {
            sys::duckdb_connection_get_client_context(self.con.0, &mut ctx);
            let s = super::functions::context_settings(&state, ctx);
            if !ctx.is_null() {
                sys::duckdb_destroy_client_context(&mut ctx);
            }
            s
        }
    }

    fn run(self: Arc<Self>, sql: &str, params: &[Param]) -> NodeResult<Box<dyn Rows>> {
        let stmt = self.prepare(sql)?;
        // SAFETY: `stmt` is live for this call.
        unsafe { bind(stmt.0, params)? };
        // SAFETY: `duckdb_result` is a plain C struct; all zeros is its documented initial state.
        let mut res: sys::duckdb_result = unsafe { std::mem::zeroed() };
        // SAFETY: `stmt` is live; `res` is destroyed by `DuckRows` (or here on failure).
        unsafe {
            if sys::duckdb_execute_prepared_streaming(stmt.0, &mut res) != sys::duckdb_state_DuckDBSuccess {
                let e = failure(&c_text(sys::duckdb_result_error(&mut res)));
                sys::duckdb_destroy_result(&mut res);
                return Err(e);
            }
        }
        let mut rows = DuckRows { res, options: Options(std::ptr::null_mut()), ffi: FFI_ArrowSchema::empty(), schema: Arc::new(Schema::empty()), _stmt: stmt, _conn: Arc::clone(&self) };
        // SAFETY: `rows.res` is the live result executed above.
        unsafe {
            rows.options = Options(sys::duckdb_result_get_arrow_options(&mut rows.res));
            let n = sys::duckdb_column_count(&mut rows.res);
            let types = (0..n).map(|i| sys::duckdb_column_logical_type(&mut rows.res, i)).collect();
            let names: Vec<String> = (0..n).map(|i| c_text(sys::duckdb_column_name(&mut rows.res, i))).collect();
            let (ffi, schema) = arrow_schema(&rows.options, types, &names)?;
            rows.ffi = ffi;
            rows.schema = schema;
        }
        Ok(Box::new(rows))
    }

    fn describe(&self, sql: &str) -> NodeResult<Described> {
        let stmt = self.prepare(sql)?;
        let options = self.options();
        // SAFETY: `stmt` is live; every name DuckDB allocates is freed with `duckdb_free`.
        unsafe {
            let n = sys::duckdb_prepared_statement_column_count(stmt.0);
            let types = (0..n).map(|i| sys::duckdb_prepared_statement_column_logical_type(stmt.0, i)).collect();
            let names: Vec<String> = (0..n)
                .map(|i| {
                    let p = sys::duckdb_prepared_statement_column_name(stmt.0, i);
                    let t = c_text(p);
                    if !p.is_null() {
                        sys::duckdb_free(p as *mut std::ffi::c_void);
                    }
                    t
                })
                .collect();
            let (_, columns) = arrow_schema(&options, types, &names)?;
            let np = sys::duckdb_nparams(stmt.0);
            let ptypes: Vec<sys::duckdb_logical_type> = (1..=np).map(|i| sys::duckdb_param_logical_type(stmt.0, i)).collect();
            let pnames: Vec<String> = (1..=np).map(|i| format!("parameter_{i}")).collect();
            // A parameter DuckDB has not typed converts to nothing Arrow knows: say Null.
            let parameters = if ptypes.iter().any(|t| t.is_null()) {
                for mut t in ptypes.into_iter().filter(|t| !t.is_null()) {
                    sys::duckdb_destroy_logical_type(&mut t);
                }
                Arc::new(Schema::new(pnames.iter().map(|n| Field::new(n, DataType::Null, true)).collect::<Vec<_>>()))
            } else {
                match arrow_schema(&options, ptypes, &pnames) {
                    Ok((_, s)) => s,
                    Err(_) => Arc::new(Schema::new(pnames.iter().map(|n| Field::new(n, DataType::Null, true)).collect::<Vec<_>>())),
                }
            };
            Ok(Described { columns, parameters })
        }
    }

    fn interrupt(&self) {
        // SAFETY: the connection is open while `self` lives; interrupting is thread-safe.
        unsafe { sys::duckdb_interrupt(self.con.0) }
    }
}

/// A streaming result; keeps its statement and connection alive.
struct DuckRows {
    res: sys::duckdb_result,
    options: Options,
    ffi: FFI_ArrowSchema,
    schema: SchemaRef,
    _stmt: Prepared,
    _conn: Arc<DuckConn>,
}

// SAFETY: the result is used by one thread at a time (`Rows` is `Send`, not `Sync`).
unsafe impl Send for DuckRows {}

impl Rows for DuckRows {
    fn schema(&self) -> SchemaRef {
        Arc::clone(&self.schema)
    }

    fn next_batch(&mut self) -> NodeResult<Option<RecordBatch>> {
        loop {
            // SAFETY: `self.res` is the live streaming result.
            let mut chunk = unsafe { sys::duckdb_fetch_chunk(self.res) };
            if chunk.is_null() {
                // SAFETY: as above: the error, if the stream ended on one.
                let e = unsafe { sys::duckdb_result_error(&mut self.res) };
                // SAFETY: a non-null error is a NUL-terminated string the result keeps.
                let message = (!e.is_null()).then(|| unsafe { c_text(e) });
                return message.map_or(Ok(None), |m| Err(failure(&m)));
            }
            // SAFETY: `chunk` is the live chunk fetched above, destroyed once.
            let n = unsafe { sys::duckdb_data_chunk_get_size(chunk) };
            if n == 0 {
                // SAFETY: as above.
                unsafe { sys::duckdb_destroy_data_chunk(&mut chunk) };
                continue;
            }
            let mut array = FFI_ArrowArray::empty();
            // SAFETY: `array` is a writable ArrowArray (the C struct); the chunk is destroyed once
            // after DuckDB converted it (the array owns its own buffers).
            let done = unsafe {
                let r = checked(sys::duckdb_data_chunk_to_arrow(self.options.0, chunk, &mut array as *mut FFI_ArrowArray as *mut sys::ArrowArray));
                sys::duckdb_destroy_data_chunk(&mut chunk);
                r
            };
            done?;
            // SAFETY: `array` is an ArrowArray DuckDB filled for the schema `self.ffi` describes.
            let data = unsafe { from_ffi(array, &self.ffi) }.map_err(|e| NodeError::new(Failure::Other, format!("acl: internal error: {e}")))?;
            let columns = StructArray::from(data).columns().to_vec();
            let options = arrow_array::RecordBatchOptions::new().with_row_count(Some(n as usize));
            return RecordBatch::try_new_with_options(Arc::clone(&self.schema), columns, &options)
                .map(Some)
                .map_err(|e| NodeError::new(Failure::Other, format!("acl: internal error: {e}")));
        }
    }
}

impl Drop for DuckRows {
    fn drop(&mut self) {
        // SAFETY: the result executed in `run`, destroyed once (before its statement and
        // connection, which the fields drop after this).
        unsafe { sys::duckdb_destroy_result(&mut self.res) };
    }
}
