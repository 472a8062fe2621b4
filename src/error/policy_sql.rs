//! Policy SQL that calls or names what policy SQL may not (spec 007, "Policy SQL is input"): a
//! view's query, a predicate, a mask, a function body, a physical target. The place names the
//! virtual object (or grant) the SQL belongs to; the name is what its author wrote.
use thiserror::Error;

/// `<place> may not <why>`: `the query of virtual view c.v may not call acl_exec: …`.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{place} may not {why}")]
pub struct PolicySql {
    /// Which piece of policy SQL: `the query of virtual view c.v`, `the RLS of virtual table c.t`, …
    pub place: String,
    pub why: Forbidden,
}

/// What a piece of policy SQL may not do, whoever wrote it (or, where it says so, unless an
/// operator did: anonymous `ACL ADMIN`, a passthrough principal, the store's own rows).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum Forbidden {
    /// `acl_*`, `query`, `query_table`, `*_query`, … (`policy::categories::never_callable`).
    #[error("call {name}: it is never callable")]
    Never { name: String },
    /// A listing (`meta`), a fact about the node (`environment`) or a knob (`node`).
    #[error("call {name}: policy SQL may not call {category} functions")]
    Category { name: String, category: &'static str },
    /// A function that reads a table named in a string (`index_key`, `duckdb_table_sample`).
    #[error("call {name}: it reads an object named in a string")]
    NamesObject { name: String },
    /// A file reader (`read_csv`, `glob`, …) in SQL that no operator wrote.
    #[error("call {name}: only an operator's policy SQL (anonymous ACL ADMIN or passthrough) may read files")]
    Reader { name: String },
    /// No built-in of that name and kind; other functions only in an operator's SQL.
    #[error("call {name}: it is not a built-in function (only an operator's policy SQL may call other functions)")]
    NotBuiltin { name: String },
    /// `a.f(…)` with `a` no schema of the built-ins: a method call or a macro of schema `a`.
    #[error("call {name}: call a built-in as f(x) or main.f(x)")]
    Qualifier { name: String },
    #[error("name {name}: the temp and system databases and the extension's own names are never sources")]
    Reserved { name: String },
    #[error("name {name}: it is, or may name, a table of the policy store")]
    Store { name: String },
    /// A one- or two-part name (it resolves through the search path), a string (a file), or
    /// more than three parts.
    #[error("name {name}: name a physical table as database.schema.table")]
    Unqualified { name: String },
    /// A catalog manager's SQL naming a physical object outside its catalog's listed sources.
    #[error("name {name}: it is not under a source listed for catalog {catalog} (ALTER VIRTUAL CATALOG {catalog} SET SOURCES (…))")]
    NotListed { name: String, catalog: String },
    /// A form policy SQL has no use for (a parameter, a table-valued construct we do not model).
    #[error("use {what}")]
    Construct { what: &'static str },
}
