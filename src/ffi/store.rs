//! The DuckDB policy store (spec 006): the store's SQL runs on a connection of its own to the
//! same database instance, opened for one transaction and closed after it.
//!
//! The instance owns the extension's state (its functions and parser extension hold it), so the
//! state must not own the instance: a `DuckDB` or `DatabaseWrapper` in it would keep the instance
//! alive for ever (closing the database would free nothing, and the file would stay locked).
//! The shim hands us a `weak_ptr<DatabaseInstance>` (`AclDb`) instead; each transaction locks it
//! for the lifetime of one `Connection` (which holds the instance, as any connection does, only
//! while it is open). Once the instance is gone the weak pointer is empty and the store is
//! unavailable.
use crate::error::{store_why, AclError, Result, StoreError};
use crate::store::{Backend, Dialect, Row, Txn};
use libduckdb_sys as sys;
use std::sync::Arc;

/// The instance's database as the shim keeps it for us: a `weak_ptr<DatabaseInstance>` (opaque).
pub struct AclDb {
    _private: [u8; 0],
}

// Declared to the shim by cpp/acl_ffi.hpp, generated from here. `AclDb` is opaque on this side
// (the shim defines it): only pointers to it cross, so its Rust layout does not matter.
#[allow(improper_ctypes)]
extern "C" {
    /// cpp/shim.cpp: a new connection to the instance, or null once it is gone (or on a failure).
    fn acl_shim_db_connect(db: *const AclDb) -> sys::duckdb_connection;
    /// cpp/shim.cpp: frees the weak pointer (never the instance).
    fn acl_shim_db_free(db: *mut AclDb);
}

/// Owns the shim's `AclDb`.
pub(crate) struct WeakDb(*mut AclDb);

// SAFETY: a `weak_ptr` may be locked from any thread (each lock is a const, atomic operation), and
// the pointer is freed once, in `drop`.
unsafe impl Send for WeakDb {}
// SAFETY: as above: `connect` only reads it.
unsafe impl Sync for WeakDb {}

impl WeakDb {
    /// # Safety
    /// `db` came from the shim and is given up to this value.
    pub(super) unsafe fn new(db: *mut AclDb) -> WeakDb {
        WeakDb(db)
    }

    pub(super) fn connect(&self) -> Option<Connection> {
        // SAFETY: `self.0` is the live weak pointer this value owns.
        let con = unsafe { acl_shim_db_connect(self.0) };
        (!con.is_null()).then_some(Connection(con))
    }
}

impl Drop for WeakDb {
    fn drop(&mut self) {
        // SAFETY: the pointer this value owns, freed once.
        unsafe { acl_shim_db_free(self.0) }
    }
}

/// A connection of our own, closed when dropped (an open transaction is then rolled back).
pub(super) struct Connection(pub(super) sys::duckdb_connection);

impl Drop for Connection {
    fn drop(&mut self) {
        // SAFETY: a connection `acl_shim_db_connect` made (a `Connection*`, as the C API's),
        // disconnected once.
        unsafe { sys::duckdb_disconnect(&mut self.0) }
    }
}

/// How `engine::source` opens a store in this instance's own database.
pub(super) struct InstanceDb(pub Arc<WeakDb>);

impl crate::engine::HostDb for InstanceDb {
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn duckdb_store(&self, catalog: &str, schema: &str) -> Arc<dyn Backend> {
        Arc::new(DuckDbBackend { db: self.0.clone(), shown: crate::store::Location::new(Some(catalog), schema).shown() })
    }

    fn physical_objects(&self, db: &str, schema: &str) -> Result<Vec<String>> {
        let name = format!("{db}.{schema}");
        let failed = |why: String| AclError::from(crate::error::Invalid::SourceUnreadable { name: name.clone(), why });
        let con = self.0.connect().ok_or_else(|| failed("the database is closed".into()))?;
        let (db, schema) = (crate::sqltext::literal(db), crate::sqltext::literal(schema));
        // Qualified: a macro of the same name on the search path must not answer. DuckDB's names
        // are case-insensitive; temporary objects are the listing connection's own (none).
        let at = format!("lower(database_name) = lower({db}) AND lower(schema_name) = lower({schema}) AND NOT temporary");
        let sql = format!(
            "SELECT table_name FROM \"system\".main.duckdb_tables() WHERE {at} \
             UNION SELECT view_name FROM \"system\".main.duckdb_views() WHERE {at} AND NOT internal ORDER BY 1"
        );
        // SAFETY: `con` is the open connection made above, closed when it drops after this.
        let rows = unsafe { super::sql::query_rows(con.0, &sql) }.map_err(failed)?;
        Ok(rows.into_iter().filter_map(|r| r.into_iter().next().flatten()).collect())
    }

    fn physical_columns(&self, t: &crate::policy::PhysName) -> Result<Option<Vec<(String, String)>>> {
        let name = format!("{}.{}.{}", t.db, t.schema, t.name);
        let failed = |why: String| AclError::from(crate::error::Invalid::SourceUnreadable { name: name.clone(), why });
        let con = self.0.connect().ok_or_else(|| failed("the database is closed".into()))?;
        let lit = crate::sqltext::literal;
        let sql = format!(
            "SELECT column_name, data_type FROM \"system\".main.duckdb_columns() WHERE lower(database_name) = lower({}) \
             AND lower(schema_name) = lower({}) AND lower(table_name) = lower({}) AND database_name <> 'temp' ORDER BY column_index",
            lit(&t.db),
            lit(&t.schema),
            lit(&t.name)
        );
        // SAFETY: `con` is the open connection made above, closed when it drops after this.
        let rows = unsafe { super::sql::query_rows(con.0, &sql) }.map_err(failed)?;
        let cols: Vec<(String, String)> = rows
            .into_iter()
            .filter_map(|r| {
                let mut r = r.into_iter();
                Some((r.next().flatten()?, r.next().flatten()?))
            })
            .collect();
        Ok((!cols.is_empty()).then_some(cols))
    }

    fn bind_checks(&self, statements: &[String]) -> Result<()> {
        let unbound = |why: String| AclError::from(crate::error::Invalid::Unbound { why });
        let con = self.0.connect().ok_or_else(|| unbound("the database is closed".into()))?;
        for sql in statements {
            // SAFETY: `con` is the open connection made above, closed when it drops after this.
            // Run to the end (a check raises while its result is made); the rows are not read.
            if let Err(m) = unsafe { super::sql::execute(con.0, sql) } {
                let first = m.lines().next().unwrap_or_default();
                // Our own `error('acl: …')` as it was raised; DuckDB's binder message as it is.
                let why = match first.find("acl: ") {
                    Some(at) => first[at + 5..].to_string(),
                    None => format!("the statement does not bind: {first}"),
                };
                return Err(unbound(why));
            }
        }
        Ok(())
    }
}

/// A store in an attached database of the instance.
pub(super) struct DuckDbBackend {
    db: Arc<WeakDb>,
    shown: String,
}

struct DuckTxn<'a> {
    con: &'a Connection,
    shown: &'a str,
}

impl DuckTxn<'_> {
    fn failed(&self, message: String) -> AclError {
        StoreError::Failed { location: self.shown.to_string(), why: store_why(&message) }.into()
    }
}

impl Txn for DuckTxn<'_> {
    fn query(&mut self, sql: &str) -> Result<Vec<Row>> {
        // SAFETY: the connection is open for the transaction.
        unsafe { super::sql::query_rows(self.con.0, sql) }.map_err(|m| self.failed(m))
    }

    fn execute(&mut self, sql: &str) -> Result<u64> {
        // SAFETY: as above.
        unsafe { super::sql::execute(self.con.0, sql) }.map_err(|m| self.failed(m))
    }
}

impl Backend for DuckDbBackend {
    fn dialect(&self) -> Dialect {
        Dialect::DuckDb
    }

    fn kind(&self) -> &'static str {
        "duckdb"
    }

    fn describe(&self) -> String {
        self.shown.clone()
    }

    fn transaction(&self, work: &mut dyn FnMut(&mut dyn Txn) -> Result<()>) -> Result<()> {
        let unavailable = |why: &str| AclError::from(StoreError::Unavailable { location: self.shown.clone(), why: store_why(why) });
        let con = self.db.connect().ok_or_else(|| unavailable("the database is closed"))?;
        let mut txn = DuckTxn { con: &con, shown: &self.shown };
        txn.execute("BEGIN TRANSACTION").map_err(|e| unavailable(&e.to_string()))?;
        match work(&mut txn) {
            Ok(()) => {
                txn.execute("COMMIT")?;
                Ok(())
            }
            Err(e) => {
                let _ = txn.execute("ROLLBACK");
                Err(e)
            }
        }
    }
}
