//! The SQL the store runs, as text for a `Txn`: the tables' DDL, the reads (every column cast to
//! text), `meta`, and the diff a batch writes (delete the rows that went, insert the rows that
//! came). Only a few spellings differ by `Dialect`.
use super::layout::{Table, Ty, META, TABLES};
use super::rows::Tables;
use super::{Dialect, Location, Row};
use crate::sqltext::{ident, literal};
use std::collections::BTreeSet;

/// Statements are cut so that none grows without bound: this many rows per INSERT or DELETE.
const ROWS_PER_STATEMENT: usize = 256;

pub struct Sql<'a> {
    pub dialect: Dialect,
    pub location: &'a Location,
}

impl Sql<'_> {
    fn schema(&self) -> String {
        match &self.location.catalog {
            Some(c) => format!("{}.{}", ident(c), ident(&self.location.schema)),
            None => ident(&self.location.schema),
        }
    }

    pub fn table(&self, t: &Table) -> String {
        format!("{}.{}", self.schema(), ident(t.name))
    }

    fn as_text(&self, column: &str) -> String {
        match self.dialect {
            Dialect::DuckDb => format!("CAST({} AS VARCHAR)", ident(column)),
            Dialect::Postgres => format!("{}::text", ident(column)),
        }
    }

    fn type_sql(&self, ty: Ty) -> &'static str {
        match (self.dialect, ty) {
            (Dialect::Postgres, Ty::Text) => "TEXT",
            (_, ty) => ty.sql(),
        }
    }

    /// The store's catalog, if the dialect has one: one row, its count (0: not attached).
    pub fn catalog_exists(&self) -> Option<String> {
        let c = self.location.catalog.as_ref()?;
        match self.dialect {
            Dialect::DuckDb => Some(format!(
                "SELECT CAST(count(*) AS VARCHAR) FROM duckdb_databases() WHERE lower(database_name) = {}",
                literal(&c.to_lowercase())
            )),
            Dialect::Postgres => None,
        }
    }

    /// One row: how many `meta` tables the location holds (0: no store there).
    pub fn meta_exists(&self) -> String {
        let catalog = match &self.location.catalog {
            Some(c) => format!(" AND lower(table_catalog) = {}", literal(&c.to_lowercase())),
            None => String::new(),
        };
        format!(
            "SELECT CAST(count(*) AS VARCHAR) FROM information_schema.tables WHERE lower(table_schema) = {} AND table_name = {}{catalog}",
            literal(&self.location.schema.to_lowercase()),
            literal(META.name)
        )
    }

    pub fn create_schema(&self) -> String {
        format!("CREATE SCHEMA IF NOT EXISTS {}", self.schema())
    }

    /// `CREATE TABLE` (without IF NOT EXISTS: a table of that name that is not ours must fail the
    /// creation rather than be taken over).
    pub fn create_table(&self, t: &Table) -> String {
        let cols: Vec<String> = t.columns.iter().map(|(n, ty)| format!("{} {}", ident(n), self.type_sql(*ty))).collect();
        format!("CREATE TABLE {} ({})", self.table(t), cols.join(", "))
    }

    /// `ALTER TABLE t ADD COLUMN c <type>` (an upgrade; the column is one of `t`'s).
    pub fn add_column(&self, t: &Table, column: &str) -> String {
        let ty = t.columns.iter().find(|(n, _)| *n == column).map_or(Ty::Text, |(_, ty)| *ty);
        format!("ALTER TABLE {} ADD COLUMN {} {}", self.table(t), ident(column), self.type_sql(ty))
    }

    /// Every row of `t`, every column as text.
    pub fn select(&self, t: &Table) -> String {
        let cols: Vec<String> = t.column_names().map(|c| self.as_text(c)).collect();
        format!("SELECT {} FROM {}", cols.join(", "), self.table(t))
    }

    /// `meta`'s row(s). With `lock`, PostgreSQL locks the row, so two writers' batches queue
    /// there, and a load reads every table while no writer can commit (READ COMMITTED); the
    /// version poll (`Store::version`) reads it without a lock.
    pub fn read_meta(&self, lock: bool) -> String {
        match self.dialect {
            Dialect::Postgres if lock => format!("{} FOR UPDATE", self.select(&META)),
            _ => self.select(&META),
        }
    }

    /// The channel a committed batch notifies (PostgreSQL): one per store schema, so two stores
    /// in one database do not wake each other's nodes.
    pub fn channel(&self) -> String {
        format!("acl_policy_{}", self.location.schema)
    }

    /// What tells every listening node that `version` was committed: PostgreSQL delivers a
    /// `NOTIFY` only when (and if) the transaction commits. `None`: the dialect has none.
    pub fn notify(&self, version: u64) -> Option<String> {
        match self.dialect {
            Dialect::Postgres => Some(format!("NOTIFY {}, {}", ident(&self.channel()), literal(&version.to_string()))),
            Dialect::DuckDb => None,
        }
    }

    pub fn insert_meta(&self, schema_version: u64, policy_version: u64) -> String {
        format!("INSERT INTO {} VALUES ({schema_version}, {policy_version})", self.table(&META))
    }

    /// Moves the policy version from `from` to `to`; changes no row if another writer moved it.
    pub fn set_schema_version(&self, from: u64, to: u64) -> String {
        format!("UPDATE {} SET {} = {to} WHERE {} = {from}", self.table(&META), ident("schema_version"), ident("schema_version"))
    }

    pub fn bump_meta(&self, from: u64, to: u64) -> String {
        format!("UPDATE {} SET {} = {to} WHERE {} = {from}", self.table(&META), ident("policy_version"), ident("policy_version"))
    }

    /// What turns the store's rows `old` into `new`: deletes (by key) of the rows that went or
    /// changed, then inserts of the rows that came or changed, table by table.
    pub fn diff(&self, old: &Tables, new: &Tables) -> Vec<String> {
        let mut deletes = Vec::new();
        let mut inserts = Vec::new();
        for (i, t) in TABLES.iter().enumerate() {
            let (o, n) = (&old.0[i], &new.0[i]);
            let gone: Vec<&Row> = o.difference(n).collect();
            let came: Vec<&Row> = n.difference(o).collect();
            // A changed row is deleted by its key; a key deleted twice is written once.
            let keys: BTreeSet<&[Option<String>]> = gone.iter().map(|r| &r[..t.key]).collect();
            let keys: Vec<&[Option<String>]> = keys.into_iter().collect();
            for chunk in keys.chunks(ROWS_PER_STATEMENT) {
                deletes.push(self.delete(t, chunk));
            }
            for chunk in came.chunks(ROWS_PER_STATEMENT) {
                inserts.push(self.insert(t, chunk));
            }
        }
        deletes.extend(inserts);
        deletes
    }

    fn delete(&self, t: &Table, keys: &[&[Option<String>]]) -> String {
        let conds: Vec<String> = keys
            .iter()
            .map(|key| {
                let parts: Vec<String> = key
                    .iter()
                    .zip(t.columns)
                    .map(|(v, (c, ty))| format!("{} IS NOT DISTINCT FROM {}", ident(c), value(*ty, v)))
                    .collect();
                format!("({})", parts.join(" AND "))
            })
            .collect();
        format!("DELETE FROM {} WHERE {}", self.table(t), conds.join(" OR "))
    }

    fn insert(&self, t: &Table, rows: &[&Row]) -> String {
        let cols: Vec<String> = t.column_names().map(ident).collect();
        let rows: Vec<String> = rows
            .iter()
            .map(|r| {
                let vals: Vec<String> = r.iter().zip(t.columns).map(|(v, (_, ty))| value(*ty, v)).collect();
                format!("({})", vals.join(", "))
            })
            .collect();
        format!("INSERT INTO {} ({}) VALUES {}", self.table(t), cols.join(", "), rows.join(", "))
    }
}

/// A cell as an SQL literal of its column's type. `rows` writes booleans as `true`/`false` and
/// no integer cells; anything else is written as a (typed) string, never unquoted.
fn value(ty: Ty, v: &Option<String>) -> String {
    match (ty, v.as_deref()) {
        (_, None) => "NULL".to_string(),
        (Ty::Bool, Some(b @ ("true" | "false"))) => b.to_string(),
        (Ty::Int, Some(n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => n.to_string(),
        (Ty::Text, Some(s)) => literal(s),
        (ty, Some(s)) => format!("CAST({} AS {})", literal(s), ty.sql()),
    }
}
