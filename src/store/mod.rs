//! The policy store (issue 12, spec 006): the policy as ordinary tables in a database the
//! operator names, so it survives a restart and several nodes share it.
//!
//! The seam: a `Backend` runs SQL in one transaction of the store's database (DuckDB through the
//! host, or PostgreSQL); everything above it — the table layout, loading, the version check, the
//! diff a management batch writes — is written once here over `Txn`, so both stores behave alike.
//! The statement path never touches a backend: it reads the published snapshot (`engine::State`).

/// One value read from the store: every column is selected as text (`CAST(… AS VARCHAR)` /
/// `::text`), so both backends return the same thing.
pub type Row = Vec<Option<String>>;

/// The SQL a store speaks differs in a few places only.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    DuckDb,
    Postgres,
}

/// One open transaction in the store. Dropped without `commit`: rolled back.
pub trait Txn {
    /// Runs a statement that returns rows (every column as text).
    fn query(&mut self, sql: &str) -> crate::error::Result<Vec<Row>>;
    /// Runs a statement; returns the rows it changed where the backend knows it (else 0).
    fn execute(&mut self, sql: &str) -> crate::error::Result<u64>;
}

/// A database that holds a policy: opens transactions in it.
pub trait Backend: Send + Sync {
    fn dialect(&self) -> Dialect;
    /// `"duckdb"` or `"postgres"` (for `acl_status()`).
    fn kind(&self) -> &'static str;
    /// Where the store is, with no credential in it (for `acl_status()` and messages).
    fn describe(&self) -> String;
    /// Runs `work` in one transaction: commits if it returns `Ok`, rolls back otherwise.
    fn transaction(&self, work: &mut dyn FnMut(&mut dyn Txn) -> crate::error::Result<()>) -> crate::error::Result<()>;
}

/// What `acl_status()` shows of the store.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StoreStatus {
    /// `"memory"`, `"duckdb"` or `"postgres"`.
    pub kind: String,
    /// The store's location without credentials; empty in memory mode.
    pub location: String,
    /// `true` unless the last contact with the store failed.
    pub healthy: bool,
    /// The last error's text (no credentials), if unhealthy.
    pub last_error: Option<String>,
    /// Unix milliseconds of the last successful read of the store's version (0: never).
    pub last_refresh_ms: u64,
}
