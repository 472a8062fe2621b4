//! What the door needs of the node: connections of its DuckDB instance that run text and hand
//! back Arrow record batches from DuckDB's own Arrow conversion. `ffi` implements it over the C
//! API (`ffi::door`); the door never calls DuckDB itself.
use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use std::sync::Arc;

/// How DuckDB refused or failed a statement, by the class of its error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// A permission error: our refusals (`acl: …`).
    Permission,
    /// The text, a name, a type or a value the statement gave is wrong.
    Invalid,
    /// The statement was interrupted (a cancel, a stop).
    Interrupted,
    /// The database is closed, or the node could not serve the call.
    Unavailable,
    /// Anything else DuckDB reports.
    Other,
}

/// A failure and DuckDB's message (ours start `acl:`, and name no physical object).
#[derive(Debug, Clone)]
pub struct NodeError {
    pub failure: Failure,
    pub message: String,
}

impl NodeError {
    pub fn new(failure: Failure, message: impl Into<String>) -> NodeError {
        NodeError { failure, message: message.into() }
    }
}

pub type NodeResult<T> = Result<T, NodeError>;

/// A parameter value bound to a prepared statement (one value of a client's parameter batch).
#[derive(Debug, Clone, PartialEq)]
pub enum Param {
    Null,
    Bool(bool),
    Int(i64),
    UInt(u64),
    Float(f64),
    Text(String),
    Blob(Vec<u8>),
    /// Days since the epoch.
    Date(i32),
    /// Microseconds since the epoch (no zone).
    Timestamp(i64),
}

/// A statement's shape before it runs: its columns and its parameters.
pub struct Described {
    pub columns: SchemaRef,
    pub parameters: SchemaRef,
}

/// A running statement's result, chunk by chunk: one DuckDB chunk is one record batch.
pub trait Rows: Send {
    fn schema(&self) -> SchemaRef;
    /// The next batch; `None` at the end.
    fn next_batch(&mut self) -> NodeResult<Option<RecordBatch>>;
}

/// One connection of the node.
pub trait Conn: Send + Sync {
    /// The GLOBAL and connection settings the rewrite reads (clock skew, key times, …), as this
    /// connection sees them now.
    fn settings(&self) -> crate::rewrite::Settings;
    /// Runs `sql` with `params`; its result streams (`Rows` keeps the connection alive).
    fn run(self: Arc<Self>, sql: &str, params: &[Param]) -> NodeResult<Box<dyn Rows>>;
    /// Prepares `sql` without running it.
    fn describe(&self, sql: &str) -> NodeResult<Described>;
    /// Interrupts what runs on the connection now (from any thread).
    fn interrupt(&self);
}

/// The node's database.
pub trait Node: Send + Sync {
    fn connect(&self) -> NodeResult<Arc<dyn Conn>>;
    /// DuckDB's `memory_limit`, bytes (for `acl_node_stream_budget`'s default).
    fn memory_limit(&self) -> u64;
}
