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
    /// Runs `work` in one transaction: commits if it returns `Ok`, rolls back otherwise. A
    /// store that cannot be reached is `StoreError::Unavailable`; a statement or a commit the
    /// store refuses is `StoreError::Failed` (with no credential in either).
    fn transaction(&self, work: &mut dyn FnMut(&mut dyn Txn) -> crate::error::Result<()>) -> crate::error::Result<()>;
    /// Whether `Txn::execute` reports the rows it changed (so a lost version race is seen).
    fn counts_changes(&self) -> bool {
        true
    }
    /// A connection that hears every committed batch's notice on `channel` (PostgreSQL's
    /// `LISTEN`); `None`: the backend has no notices (one process holds the store).
    fn listen(&self, _channel: &str) -> Option<crate::error::Result<Box<dyn Changes>>> {
        None
    }
}

/// Notices of committed batches (`Backend::listen`), on a connection of their own.
pub trait Changes: Send {
    /// Waits up to `timeout` for a notice; `Ok(true)` when one (or more) came. An error: the
    /// connection is lost (listen again).
    fn wait(&mut self, timeout: std::time::Duration) -> crate::error::Result<bool>;
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
    /// The store's policy version as this node last saw it (0 in memory mode).
    pub policy_version: u64,
}

pub mod guard;
pub mod layout;
mod load;
pub mod rows;
mod sql;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod export_tests;
#[cfg(test)]
pub(crate) mod fake;
#[cfg(feature = "extension")]
pub mod postgres;

pub use layout::SCHEMA_VERSION;
pub use load::load;
pub use rows::{rows, Tables};

use crate::error::{AclError, Result, StoreError};
use crate::policy::functions::HostFunctions;
use crate::policy::Policy;
use std::sync::Arc;

/// Where a store's tables are: `catalog.schema` (DuckDB: an attached database), or a schema of
/// the database a connection reaches (PostgreSQL: `catalog` is `None`). Lower-case.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    pub catalog: Option<String>,
    pub schema: String,
}

impl Location {
    pub fn new(catalog: Option<&str>, schema: &str) -> Location {
        Location { catalog: catalog.map(crate::policy::norm), schema: crate::policy::norm(schema) }
    }

    /// `catalog.schema` (or `schema`), for messages and `acl_status()`.
    pub fn shown(&self) -> String {
        match &self.catalog {
            Some(c) => format!("{c}.{}", self.schema),
            None => self.schema.clone(),
        }
    }
}

/// A policy store: a backend and where in it the tables are.
pub struct Store {
    backend: Arc<dyn Backend>,
    location: Location,
}

/// What `Store::open` found.
#[derive(Debug)]
pub enum Opened {
    /// The store was created and the memory policy written into it.
    Created { version: u64 },
    /// The store held a policy (it replaces the memory's).
    Loaded { policy: Policy, version: u64 },
}

/// A batch committed to the store.
#[derive(Debug)]
pub struct Committed<T> {
    /// The policy now in the store (carrying the caller's host list and node version + changes).
    pub policy: Policy,
    /// The store's policy version after the commit.
    pub version: u64,
    /// The store had moved on since the node loaded it: the batch was applied to its policy.
    pub reloaded: bool,
    pub out: T,
}

impl Store {
    pub fn new(backend: Arc<dyn Backend>, location: Location) -> Store {
        Store { backend, location }
    }

    pub fn location(&self) -> &Location {
        &self.location
    }

    pub fn kind(&self) -> &'static str {
        self.backend.kind()
    }

    /// Where the store is, without credentials.
    pub fn describe(&self) -> String {
        self.backend.describe()
    }

    /// Notices of the batches committed to this store by any node (`None`: the backend has none).
    pub fn listen(&self) -> Option<Result<Box<dyn Changes>>> {
        self.backend.listen(&self.sql().channel())
    }

    fn sql(&self) -> sql::Sql<'_> {
        sql::Sql { dialect: self.backend.dialect(), location: &self.location }
    }

    /// A failure to reach the store's `meta`: the store is unavailable.
    fn unavailable(&self, e: AclError) -> AclError {
        match e {
            AclError::Store(StoreError::Failed { why, .. }) => StoreError::Unavailable { location: self.describe(), why }.into(),
            other => other,
        }
    }

    /// `meta`'s policy version, checking the schema version. `None`: the location has no store.
    fn read_meta(&self, txn: &mut dyn Txn, lock: bool) -> Result<Option<u64>> {
        let sql = self.sql();
        if let Some(q) = sql.catalog_exists() {
            if count(txn.query(&q).map_err(|e| self.unavailable(e))?) == 0 {
                let catalog = self.location.catalog.clone().unwrap_or_default();
                return Err(StoreError::Unavailable { location: self.describe(), why: format!("no attached database named \"{catalog}\"") }.into());
            }
        }
        if count(txn.query(&sql.meta_exists()).map_err(|e| self.unavailable(e))?) == 0 {
            return Ok(None);
        }
        let rows = txn.query(&sql.read_meta(lock)).map_err(|e| self.unavailable(e))?;
        let corrupt = |why: &str| AclError::from(StoreError::Corrupt { location: self.describe(), table: layout::META.name, why: why.into() });
        let [row] = rows.as_slice() else { return Err(corrupt("meta must hold exactly one row")) };
        let found = row.first().cloned().flatten().unwrap_or_else(|| "NULL".into());
        if found != SCHEMA_VERSION.to_string() {
            return Err(StoreError::SchemaVersion { location: self.describe(), found, expected: SCHEMA_VERSION }.into());
        }
        let version = row.get(1).cloned().flatten().and_then(|v| v.parse::<u64>().ok());
        version.map(Some).ok_or_else(|| corrupt("policy_version is not a number"))
    }

    fn read_tables(&self, txn: &mut dyn Txn) -> Result<Tables> {
        let sql = self.sql();
        let mut tables = Tables::empty();
        for (i, t) in layout::TABLES.iter().enumerate() {
            for row in txn.query(&sql.select(t))? {
                if row.len() != t.width() {
                    return Err(AclError::internal("the store returned a row of the wrong width"));
                }
                tables.0[i].insert(row);
            }
        }
        Ok(tables)
    }

    fn load_in(&self, txn: &mut dyn Txn, host: &Arc<HostFunctions>) -> Result<Policy> {
        let tables = self.read_tables(txn)?;
        let mut policy = load(&tables, host.clone(), &self.describe())?;
        policy.home = self.home();
        self.check_policy(&policy)?;
        Ok(policy)
    }

    /// What management would refuse of a whole policy, before it is written into the store or
    /// read from it: the store's own tables as a source, and policy SQL (spec 007).
    fn check_policy(&self, policy: &Policy) -> Result<()> {
        guard::check_policy(&self.location, &self.describe(), policy)?;
        let findings = crate::admin::policy_sql::findings(policy);
        if !findings.is_empty() {
            return Err(StoreError::PolicySql { location: self.describe(), findings }.into());
        }
        Ok(())
    }

    /// The store's own schema as DuckDB names it (none for a store outside DuckDB's catalogs).
    pub fn home(&self) -> Option<crate::policy::policy_sql::Home> {
        let db = self.location.catalog.clone()?;
        Some(crate::policy::policy_sql::Home { db, schema: self.location.schema.clone() })
    }

    /// Comes into use: loads the store's policy; or, with `create` and no store at the location,
    /// creates the tables and writes `memory` into them (one transaction either way).
    pub fn open(&self, create: bool, memory: &Policy) -> Result<Opened> {
        let mut opened = None;
        self.backend.transaction(&mut |txn| {
            self.upgrade(txn)?;
            opened = Some(match self.read_meta(txn, true)? {
                Some(version) => Opened::Loaded { policy: self.load_in(txn, &memory.functions.host)?, version },
                None if !create => return Err(StoreError::Missing { location: self.describe() }.into()),
                None => {
                    let mut memory = memory.clone();
                    memory.home = self.home();
                    self.check_policy(&memory)?;
                    let memory = &memory;
                    let sql = self.sql();
                    txn.execute(&sql.create_schema())?;
                    txn.execute(&sql.create_table(&layout::META))?;
                    for t in layout::TABLES {
                        txn.execute(&sql.create_table(t))?;
                    }
                    txn.execute(&sql.insert_meta(SCHEMA_VERSION, 1))?;
                    for stmt in sql.diff(&Tables::empty(), &rows(memory)) {
                        txn.execute(&stmt)?;
                    }
                    Opened::Created { version: 1 }
                }
            });
            Ok(())
        })?;
        opened.ok_or_else(|| AclError::internal("the store's transaction did not run"))
    }

    /// A store of an earlier layout (schema version 2, without `catalog_sources`; 3, without the
    /// resource-group tables) is brought to this one when a node opens it, in the transaction that
    /// opens it: the tables each later version added are created (`layout::ADDED`), and nodes of
    /// the older version then refuse it by its schema version, as they refuse any other.
    fn upgrade(&self, txn: &mut dyn Txn) -> Result<()> {
        let sql = self.sql();
        if count(txn.query(&sql.meta_exists()).map_err(|e| self.unavailable(e))?) == 0 {
            return Ok(());
        }
        let rows = txn.query(&sql.read_meta(true)).map_err(|e| self.unavailable(e))?;
        let Some(from) = (match rows.as_slice() {
            [row] => row.first().cloned().flatten().and_then(|v| v.parse::<u64>().ok()),
            _ => None,
        }) else {
            return Ok(());
        };
        if !(2..SCHEMA_VERSION).contains(&from) {
            return Ok(());
        }
        for (version, tables) in layout::ADDED {
            if version > from {
                for t in tables {
                    txn.execute(&sql.create_table(t))?;
                }
            }
        }
        for (version, table, column) in layout::ADDED_COLUMNS {
            // A table added after `from` was created above with every column.
            let created = layout::ADDED.iter().any(|(v, ts)| *v > from && ts.iter().any(|t| t.name == table.name));
            if version > from && !created {
                txn.execute(&sql.add_column(table, column))?;
            }
        }
        txn.execute(&sql.set_schema_version(from, SCHEMA_VERSION))?;
        Ok(())
    }

    /// The store's policy and version, read again (`acl_reload()`).
    pub fn load(&self, host: &Arc<HostFunctions>) -> Result<(Policy, u64)> {
        let mut out = None;
        self.backend.transaction(&mut |txn| {
            let version = self.read_meta(txn, true)?.ok_or_else(|| StoreError::Missing { location: self.describe() })?;
            out = Some((self.load_in(txn, host)?, version));
            Ok(())
        })?;
        out.ok_or_else(|| AclError::internal("the store's transaction did not run"))
    }

    /// The store's policy version now (`acl_status()` asks, to say whether the store answers).
    pub fn version(&self) -> Result<u64> {
        let mut out = None;
        self.backend.transaction(&mut |txn| {
            out = Some(self.read_meta(txn, false)?.ok_or_else(|| StoreError::Missing { location: self.describe() })?);
            Ok(())
        })?;
        out.ok_or_else(|| AclError::internal("the store's transaction did not run"))
    }

    /// One management batch, in one store transaction: `change` is applied to a copy of
    /// `current` (or, if the store's version is no longer `loaded`, of the store's own policy,
    /// read in the same transaction), the difference is written, the version moves on, and the
    /// transaction commits. Any failure rolls everything back and is returned.
    pub fn commit<T>(&self, loaded: u64, current: &Policy, change: &mut dyn FnMut(&mut Policy) -> Result<T>) -> Result<Committed<T>> {
        let mut done = None;
        self.backend.transaction(&mut |txn| {
            let version = self.read_meta(txn, true)?.ok_or_else(|| StoreError::Missing { location: self.describe() })?;
            let reloaded = version != loaded;
            let base = if reloaded {
                let mut p = self.load_in(txn, &current.functions.host)?;
                p.version = current.version;
                p
            } else {
                current.clone()
            };
            let mut next = base.clone();
            let out = change(&mut next)?;
            let failed = |e: AclError| match e {
                AclError::Store(_) => e,
                other => StoreError::Failed { location: self.describe(), why: other.to_string() }.into(),
            };
            for stmt in self.sql().diff(&rows(&base), &rows(&next)) {
                txn.execute(&stmt).map_err(failed)?;
            }
            if txn.execute(&self.sql().bump_meta(version, version + 1)).map_err(failed)? == 0 && self.backend.counts_changes() {
                return Err(StoreError::Failed { location: self.describe(), why: "another writer moved the policy version".into() }.into());
            }
            if let Some(notify) = self.sql().notify(version + 1) {
                txn.execute(&notify).map_err(failed)?;
            }
            done = Some(Committed { policy: next, version: version + 1, reloaded, out });
            Ok(())
        })?;
        done.ok_or_else(|| AclError::internal("the store's transaction did not run"))
    }
}

/// The one cell of a `count(*)` query.
fn count(rows: Vec<Row>) -> u64 {
    rows.first().and_then(|r| r.first().cloned().flatten()).and_then(|c| c.parse().ok()).unwrap_or(0)
}
