//! Policy SQL is input (spec 007, "Policy SQL is input"): what a piece of SQL that enters the
//! policy — a virtual view's query, an RLS predicate, a mask or computed column, a virtual
//! function's body, a physical target — may call and name, decided name by name. The same rules
//! judge it when it is written (`admin::policy_sql`, with its author), when a store is loaded
//! (as an operator's), and when a principal's statement uses it (the second check, inside the
//! region the SQL stands in, `rewrite::defence`): nothing is trusted because of who wrote it.
//!
//! - Calls: a built-in whose shipped category is `base` or `json`; file readers only in an
//!   operator's SQL; never a function of the never set, a listing (`meta`), a fact about the node
//!   (`environment`), a knob (`node`), or a function that reads an object named in a string. A
//!   function that is not a built-in (a macro of an attached database) only in an operator's SQL,
//!   or, for a catalog manager, under its catalog's listed sources.
//! - Names: a physical table as `db.schema.table` (one- and two-part names resolve through the
//!   search path: to `system` views such as `duckdb_tables`, to `information_schema`), never in
//!   `temp` or `system`, never one of the extension's own (`__acl…`), never the policy store's
//!   schema; for a catalog manager only under a source an administrator listed for its catalog.
use super::categories::{never_callable, Shipped};
use super::functions::{Class, FnKind, HostFunctions, SYSTEM_DB};
use crate::error::Forbidden;
use std::collections::BTreeSet;

/// Who wrote a piece of policy SQL, as far as the rules differ.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Author {
    /// Anonymous `ACL ADMIN` (the gateway), a passthrough principal, or the store's own rows
    /// (whoever edits them holds the store): may read files and call functions that are not
    /// built-ins.
    Operator,
    /// `GRANT ADMIN manage`: names any physical object, calls only built-ins.
    GlobalManage,
    /// `manage` on the catalog the SQL belongs to: only what is listed for that catalog.
    CatalogManage,
}

/// A physical database, schema or table an administrator listed for a catalog
/// (`ALTER VIRTUAL CATALOG c SET SOURCES (db, db.schema, db.schema.table)`): where its catalog
/// managers' policy SQL may name objects. Spelled as written; compared as DuckDB folds names.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Source {
    pub db: String,
    pub schema: Option<String>,
    pub name: Option<String>,
}

impl Source {
    /// Whether the object `db.schema.name` is this source or inside it.
    pub fn covers(&self, db: &str, schema: &str, name: &str) -> bool {
        same(&self.db, db)
            && self.schema.as_deref().is_none_or(|s| same(s, schema))
            && self.name.as_deref().is_none_or(|n| same(n, name))
    }

    /// Whether the whole schema `db.schema` is this source or inside it (a table source does not
    /// cover its schema).
    pub fn covers_schema(&self, db: &str, schema: &str) -> bool {
        self.name.is_none() && same(&self.db, db) && self.schema.as_deref().is_none_or(|s| same(s, schema))
    }
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.db)?;
        if let Some(s) = &self.schema {
            write!(f, ".{s}")?;
        }
        if let Some(n) = &self.name {
            write!(f, ".{n}")?;
        }
        Ok(())
    }
}

/// The policy store's own schema (`db.schema`, lower-case), when a DuckDB store is in use: never
/// a source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Home {
    pub db: String,
    pub schema: String,
}

/// What one piece of policy SQL is judged against.
#[derive(Clone, Copy)]
pub struct Rules<'a> {
    pub host: &'a HostFunctions,
    pub author: Author,
    pub home: Option<&'a Home>,
    /// A catalog manager's catalog and what is listed for it (`None` for other authors).
    pub listed: Option<(&'a str, &'a BTreeSet<Source>)>,
}

/// Databases whose objects are never a physical source: every connection's temporary objects
/// (principals' own temp tables among them) and DuckDB's catalog, unfiltered.
const RESERVED_DBS: [&str; 2] = ["temp", "system"];

/// The prefix of every name the extension makes up.
pub const INTERNAL_PREFIX: &str = "__acl";

pub fn reserved_db(db: &str) -> bool {
    RESERVED_DBS.iter().any(|r| same(r, db))
}

pub fn internal(name: &str) -> bool {
    name.get(..INTERNAL_PREFIX.len()).is_some_and(|p| same(p, INTERNAL_PREFIX))
}

fn same(a: &str, b: &str) -> bool {
    a.eq_ignore_ascii_case(b)
}

/// Built-ins that read a table named in a string: the store by name, whatever the grant says.
const NAMES_OBJECTS: [&str; 2] = ["index_key", "duckdb_table_sample"];

/// The source rules for a physical table `db.schema.name`, whoever wrote the SQL (also the
/// second check's, inside a region).
pub fn table_anywhere(db: &str, schema: &str, name: &str, home: Option<&Home>) -> Result<(), Forbidden> {
    let shown = || format!("{db}.{schema}.{name}");
    if reserved_db(db) || internal(db) || internal(schema) || internal(name) {
        return Err(Forbidden::Reserved { name: shown() });
    }
    if home.is_some_and(|h| same(&h.db, db) && same(&h.schema, schema)) {
        return Err(Forbidden::Store { name: shown() });
    }
    Ok(())
}

impl Rules<'_> {
    /// A table name as written (identifier parts); a name of a CTE in scope is the caller's to
    /// accept before asking.
    pub fn table(&self, parts: &[&str]) -> Result<(), Forbidden> {
        let [db, schema, name] = parts else {
            return Err(Forbidden::Unqualified { name: parts.join(".") });
        };
        table_anywhere(db, schema, name, self.home)?;
        match self.listed {
            Some((catalog, sources)) if !sources.iter().any(|s| s.covers(db, schema, name)) => {
                Err(Forbidden::NotListed { name: parts.join("."), catalog: catalog.to_string() })
            }
            _ => Ok(()),
        }
    }

    /// A physical schema (a virtual schema's alias target or expansion source).
    pub fn schema(&self, db: &str, schema: &str) -> Result<(), Forbidden> {
        let shown = || format!("{db}.{schema}");
        if reserved_db(db) || internal(db) || internal(schema) {
            return Err(Forbidden::Reserved { name: shown() });
        }
        if self.home.is_some_and(|h| same(&h.db, db) && same(&h.schema, schema)) {
            return Err(Forbidden::Store { name: shown() });
        }
        match self.listed {
            Some((catalog, sources)) if !sources.iter().any(|s| s.covers_schema(db, schema)) => {
                Err(Forbidden::NotListed { name: shown(), catalog: catalog.to_string() })
            }
            _ => Ok(()),
        }
    }

    /// A call as written: `f`, `main.f`, `pg_catalog.f`, `system.<schema>.f` (a built-in) or
    /// `db.schema.f` (a function of an attached database).
    pub fn function(&self, parts: &[&str], kind: FnKind) -> Result<(), Forbidden> {
        let shown = || parts.join(".");
        let Some(name) = parts.last().map(|n| n.to_ascii_lowercase()) else {
            return Err(Forbidden::NotBuiltin { name: shown() });
        };
        if never_callable(&name) {
            return Err(Forbidden::Never { name: shown() });
        }
        let builtin = match parts {
            [_] => self.host.resolve(&name, kind),
            [schema, _] if same(schema, "main") || same(schema, "pg_catalog") => {
                self.host.resolve_in(&schema.to_ascii_lowercase(), &name, kind)
            }
            [_, _] => return Err(Forbidden::Qualifier { name: shown() }),
            [db, schema, _] if same(db, SYSTEM_DB) => self.host.resolve_in(&schema.to_ascii_lowercase(), &name, kind),
            [db, schema, _] => {
                method_call(self.host, &name, kind, self.author == Author::Operator).map_err(|why| why(shown()))?;
                return self.attached_function(db, schema, shown());
            }
            _ => return Err(Forbidden::NotBuiltin { name: shown() }),
        };
        let Some(f) = builtin else { return Err(Forbidden::NotBuiltin { name: shown() }) };
        admit_class(f.class, &name, self.author == Author::Operator).map_err(|why| why(shown()))
    }

    /// A function of an attached database (a macro someone created): its body is nobody's
    /// policy SQL, so only an operator may call one — or a catalog manager, where an
    /// administrator listed its schema.
    fn attached_function(&self, db: &str, schema: &str, shown: String) -> Result<(), Forbidden> {
        table_anywhere(db, schema, "", self.home).map_err(|_| Forbidden::Reserved { name: shown.clone() })?;
        match (self.author, self.listed) {
            (Author::Operator, _) => Ok(()),
            (Author::CatalogManage, Some((_, sources))) if sources.iter().any(|s| s.covers_schema(db, schema)) => Ok(()),
            _ => Err(Forbidden::NotBuiltin { name: shown }),
        }
    }
}

/// `db.schema.f(…)` where `db.schema` holds no `f` is, to DuckDB's binder, the method call
/// `f(db.schema)` on a column `db.schema` with `f` looked up through the search path
/// (`ColumnQualifier::QualifyFunction`): `t.c.sleep_ms()` sleeps, `t.c.has_table_privilege('select')`
/// probes the catalog. Whether the database holds an `f` is not known when the SQL is judged (and
/// may change), so the name is judged as the built-in it may reach too.
fn method_call(host: &HostFunctions, name: &str, kind: FnKind, readers: bool) -> Result<(), fn(String) -> Forbidden> {
    match host.resolve(name, kind) {
        Some(f) => admit_class(f.class, name, readers),
        None => Ok(()),
    }
}

/// A built-in's class against the rules; `readers`: the author may read files. The error is
/// completed with the name as written.
pub fn admit_class(class: Class, name: &str, readers: bool) -> Result<(), fn(String) -> Forbidden> {
    if NAMES_OBJECTS.contains(&name) {
        return Err(|name| Forbidden::NamesObject { name });
    }
    match class {
        Class::Never => Err(|name| Forbidden::Never { name }),
        Class::Shipped(Shipped::Base | Shipped::Json) => Ok(()),
        Class::Shipped(Shipped::Readers) if readers => Ok(()),
        Class::Shipped(Shipped::Readers) => Err(|name| Forbidden::Reader { name }),
        Class::Shipped(Shipped::Meta) => Err(|name| Forbidden::Category { name, category: "meta (listing)" }),
        Class::Shipped(Shipped::Environment) => Err(|name| Forbidden::Category { name, category: "environment" }),
        Class::Shipped(Shipped::Node) => Err(|name| Forbidden::Category { name, category: "node" }),
    }
}

/// The second check's rule for a call inside a region of policy SQL (spec 011): the author is
/// not known there, so file readers and functions of attached databases pass (the rules above
/// judged them when written and loaded); the never set, listings, node facts and knobs do not,
/// under any spelling the parse holds.
pub fn call_in_region(host: &HostFunctions, parts: &[&str]) -> bool {
    let Some(name) = parts.last().map(|n| n.to_ascii_lowercase()) else { return false };
    if never_callable(&name) {
        return false;
    }
    let builtins: Vec<Class> = match parts {
        [_] => [FnKind::Scalar, FnKind::Table].iter().filter_map(|k| host.resolve(&name, *k)).map(|f| f.class).collect(),
        [schema, _] | [_, schema, _] => {
            let schema = schema.to_ascii_lowercase();
            [FnKind::Scalar, FnKind::Table].iter().filter_map(|k| host.resolve_in(&schema, &name, *k)).map(|f| f.class).collect()
        }
        _ => return false,
    };
    let system = match parts {
        [_] => true,
        [schema, _] => same(schema, "main") || same(schema, "pg_catalog"),
        [db, _, _] => same(db, SYSTEM_DB),
        _ => false,
    };
    match parts {
        // a method call on a column `db.schema` when the database holds no such function
        [db, schema, _] if !system => {
            table_anywhere(db, schema, "", None).is_ok()
                && [FnKind::Scalar, FnKind::Table].iter().all(|k| method_call(host, &name, *k, true).is_ok())
        }
        _ if !system => false,
        _ => builtins.iter().all(|c| admit_class(*c, &name, true).is_ok()),
    }
}

#[cfg(test)]
mod tests;
