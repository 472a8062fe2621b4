//! Management statements (surface §2–§3, and the reference system's forms of
//! shared/reference-surface.md): virtual catalogs and tables, roles, grants.
//!
//! `parse` turns one statement into a `Command`; `apply` changes a `Policy` in place. The two are
//! split so a caller can check a scope against the parsed command before touching any policy, and
//! so `apply` can run on a clone that is dropped if it fails. Every spelling of a statement parses
//! into one `Command` (`CAPS '{…}'` and `WITH (…)`, `CLAIMS 'k=v'` and `CLAIMS (k = 'v')`, `ADD
//! TABLE` and `CREATE OR REPLACE VIRTUAL TABLE`, …); an `ALTER` that changes one field of a record
//! is applied and validated as the whole statement it amounts to (`alter::resolve`).
mod alter;
mod apply;
pub mod calls;
pub mod check;
pub mod claims;
mod expand;
pub mod export;
pub mod functions;
mod grants;
mod issuer;
mod lists;
mod objects;
mod parse;
pub mod policy_sql;
mod references;
pub mod resource_groups;
mod roles;
mod schemas;
pub mod scope;
mod slice;
pub mod sources;
pub mod validate;
mod virtual_fns;

use crate::policy::{AdminScope, Caps, Column, Declared, ObjKey, PhysName, Reference, Slice, Unmapped};
use std::collections::{BTreeMap, BTreeSet};
use sqlparser::dialect::DuckDbDialect;
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token, Tokenizer};

pub use alter::resolve;
pub use apply::apply;
pub use issuer::{check_issuer as check_stored_issuer, IssuerSpec, KeySource};
pub use parse::parse;
pub use slice::check_stored as check_stored_slice;

/// How a CREATE treats a name that already exists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CreateMode {
    /// Plain CREATE: an existing name is an error.
    Create,
    /// CREATE OR REPLACE: an existing object is replaced as a whole.
    OrReplace,
    /// CREATE … IF NOT EXISTS: an existing name leaves everything as it is.
    IfNotExists,
}

/// The word a GRANT/REVOKE used for an object. Kept for messages; all three resolve any virtual
/// relation (as PostgreSQL's `GRANT … ON TABLE` also covers views).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ObjectWord {
    Table,
    View,
    Object,
}

impl ObjectWord {
    pub fn sql(self) -> &'static str {
        match self {
            ObjectWord::Table => "TABLE",
            ObjectWord::View => "VIEW",
            ObjectWord::Object => "OBJECT",
        }
    }
}

/// One parsed management statement. Virtual names and role names are already normalised
/// (`policy::norm`); physical names keep the operator's spelling.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    CreateCatalog {
        name: String,
        comment: Option<String>,
        mode: CreateMode,
    },
    DropCatalog {
        name: String,
        if_exists: bool,
        cascade: bool,
    },
    /// `ALTER VIRTUAL CATALOG c SET SOURCES (db | db.schema | db.schema.table, …)`: what the
    /// catalog's managers may name in its policy SQL (spec 007); `()` lists nothing.
    SetSources {
        catalog: String,
        sources: Vec<crate::policy::policy_sql::Source>,
    },
    /// Also the legacy `ADD TABLE <phys> AS c.n …` (an upsert: `CreateMode::OrReplace`).
    CreateTable {
        key: ObjKey,
        target: PhysName,
        comment: Option<String>,
        mode: CreateMode,
        /// COLUMNS/RLS: a non-empty slice makes the object SUBQUERY form (read-only).
        slice: Slice,
        /// `col NOT NULL` items of COLUMNS, `PRIMARY KEY (…)`.
        declared: Declared,
    },
    DropTable {
        key: ObjKey,
        if_exists: bool,
    },
    /// `CREATE VIRTUAL VIEW c.v [(col TYPE [NOT NULL], …)] AS <query over physical names>`:
    /// read-only. Also the legacy `ADD VIEW` (an upsert).
    CreateView {
        key: ObjKey,
        query: String,
        comment: Option<String>,
        mode: CreateMode,
        declared: Declared,
    },
    DropView {
        key: ObjKey,
        if_exists: bool,
    },
    /// `ALTER VIRTUAL TABLE c.n SET PHYS|COLUMNS|RLS … | SET/DROP PRIMARY KEY`.
    AlterTable {
        key: ObjKey,
        set: TableSet,
    },
    /// `ALTER VIRTUAL VIEW c.n SET AS <select>` (the declared columns stay and are checked again).
    AlterView {
        key: ObjKey,
        query: String,
    },
    /// `ALTER VIRTUAL TABLE|VIEW c.n SET TYPES (enums = sliced | varchar | keep | default)`: how the
    /// object's ENUM columns are shown (`None`: the instance's `acl_enum_types`; spec 002).
    AlterTypes {
        key: ObjKey,
        word: ObjectWord,
        enums: Option<crate::policy::EnumTypes>,
    },
    /// `COMMENT ON VIRTUAL … IS '…' | NULL`, `ALTER VIRTUAL CATALOG c SET COMMENT '…'`.
    Comment {
        on: CommentOn,
        text: Option<String>,
    },
    /// `CREATE VIRTUAL REFERENCE c.r FROM a TO b ON (x = y, …)`: a hint, grants nothing.
    CreateReference {
        key: ObjKey,
        reference: Reference,
        mode: CreateMode,
    },
    DropReference {
        key: ObjKey,
        if_exists: bool,
    },
    CreateRole {
        name: String,
        mode: CreateMode,
    },
    DropRole {
        name: String,
        if_exists: bool,
    },
    /// `caps` is already defaulted (`Caps::DATA` when the statement named none).
    GrantCatalog {
        catalog: String,
        role: String,
        caps: Caps,
        main: bool,
        slice: Slice,
    },
    /// `caps: None` means the grant named none and inherits its catalog grant's;
    /// `Some(Caps::NONE)` (`CAPS '{}'`) holds nothing on the object.
    GrantObject {
        key: ObjKey,
        role: String,
        caps: Option<Caps>,
        word: ObjectWord,
        slice: Slice,
    },
    /// `ALTER GRANT CATALOG|TABLE|VIEW|OBJECT … TO ROLE r SET …`: one field of an existing grant.
    AlterGrant {
        on: GrantOn,
        role: String,
        set: GrantSet,
    },
    RevokeCatalog {
        catalog: String,
        role: String,
    },
    RevokeObject {
        key: ObjKey,
        role: String,
        word: ObjectWord,
    },
    /// `CREATE ROLE r CLAIMS (…)` or `CLAIMS 'k=v,…'`: claim names lower-case, values as text.
    CreateRoleWithClaims {
        name: String,
        mode: CreateMode,
        claims: BTreeMap<String, String>,
    },
    /// `ALTER ROLE r SET CLAIMS (…) | '…'`: the role's default claims, replaced whole.
    AlterRoleClaims {
        name: String,
        claims: BTreeMap<String, String>,
    },
    CreateIssuer {
        spec: IssuerSpec,
        mode: CreateMode,
    },
    /// `ALTER ISSUER '<iss>' SET <field> …`: the issuer re-created with one field changed.
    AlterIssuer {
        iss: String,
        set: IssuerSet,
    },
    DropIssuer {
        iss: String,
        if_exists: bool,
    },
    /// `MAP CLAIM|GROUP 'value' FROM ISSUER 'iss' TO ROLE r`.
    MapClaim {
        iss: String,
        value: String,
        role: String,
    },
    /// `role: None` removes the value's mapping to every role (`UNMAP CLAIM` without `FROM
    /// ROLE`, `DROP MAP CLAIM|GROUP`).
    UnmapClaim {
        iss: String,
        value: String,
        role: Option<String>,
    },
    /// Function categories, function grants and virtual functions (`functions`).
    Function(functions::FnCommand),
    /// `CREATE VIRTUAL SCHEMA c.s AS db.schema`: `target` is `(db, schema)`, spelling kept.
    CreateSchema {
        catalog: String,
        schema: String,
        target: (String, String),
        comment: Option<String>,
        mode: CreateMode,
    },
    /// `CREATE VIRTUAL SCHEMA c.s FROM db.schema` and `ALTER VIRTUAL SCHEMA c.s REFRESH [PRUNE]`
    /// (`expand`): `objects` are the names of the source's tables and views, `None` as parsed;
    /// the engine lists them from the host when the statement runs (applying `None` is refused).
    ExpandSchema {
        catalog: String,
        schema: String,
        how: Expansion,
        objects: Option<Vec<String>>,
    },
    /// `ALTER VIRTUAL SCHEMA c.s SET PHYS db.schema`: a new target (alias) or source (expansion).
    AlterSchemaPhys {
        catalog: String,
        schema: String,
        target: (String, String),
    },
    /// Without `cascade`, an expanded schema that still holds objects is refused.
    DropSchema {
        catalog: String,
        schema: String,
        if_exists: bool,
        cascade: bool,
    },
    /// `caps` is already defaulted (`Caps::DATA` when the statement named none; `VIRTUAL ONLY`
    /// leaves out `create` and `drop`). `into`: `INTO db.schema`, checked when applied (it must be
    /// where the schema's CREATEs land). `comment`: `COMMENT '…'`, kept with the grant.
    GrantSchema {
        catalog: String,
        schema: String,
        role: String,
        caps: Caps,
        into: Option<(String, String)>,
        comment: Option<String>,
    },
    RevokeSchema {
        catalog: String,
        schema: String,
        role: String,
    },
    /// `GRANT ADMIN manage|passthrough TO ROLE r`: the role's scope over the whole policy; a
    /// second GRANT ADMIN replaces the first.
    GrantAdmin {
        role: String,
        scope: AdminScope,
    },
    /// `REVOKE ADMIN FROM ROLE r`.
    RevokeAdmin {
        role: String,
    },
    /// `CHECK VIRTUAL CATALOG c`: the drift findings of c's objects (`check`), for a catalog
    /// manager who cannot call `acl_check_catalog`. Changes nothing; runs alone in its batch, as
    /// `acl_check_catalog_as` (`engine::admin`), never through `apply`.
    CheckCatalog {
        catalog: String,
    },
    /// `CREATE|ALTER|DROP RESOURCE GROUP`, `GRANT|REVOKE RESOURCE GROUP g TO|FROM ROLE r`.
    ResourceGroup(resource_groups::GroupCommand),
}

/// What an `ExpandSchema` does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expansion {
    /// `CREATE [OR REPLACE] VIRTUAL SCHEMA [IF NOT EXISTS] c.s FROM db.schema [COMMENT '…']`.
    Create { source: (String, String), comment: Option<String>, mode: CreateMode },
    /// `ALTER VIRTUAL SCHEMA c.s REFRESH [PRUNE]`.
    Refresh { prune: bool },
}

/// What `ALTER VIRTUAL TABLE … SET` changes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TableSet {
    Phys(PhysName),
    /// `SET COLUMNS (…) | '…'` (an empty quoted list: every column again); its `NOT NULL` items.
    Columns { columns: Option<Vec<Column>>, not_null: BTreeSet<String> },
    /// `SET RLS (…) | '…'` (an empty quoted predicate: no row policy).
    Rls(Option<String>),
    /// `SET PRIMARY KEY (…)`; empty: `DROP PRIMARY KEY`.
    PrimaryKey(Vec<String>),
}

/// The grant an `ALTER GRANT` names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GrantOn {
    Catalog(String),
    Object { key: ObjKey, word: ObjectWord },
}

/// What `ALTER GRANT … SET` changes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GrantSet {
    /// `SET CAPS '<json>'` (or `SET WITH (…)`).
    Caps(Caps),
    Rls(Option<String>),
    Columns(Option<Vec<Column>>),
    /// `SET MAIN true|false` (catalog grants only).
    Main(bool),
}

/// What `ALTER ISSUER … SET` changes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IssuerSet {
    Keys(KeySource),
    Audiences(Vec<String>),
    Algs(Vec<String>),
    RoleClaim(String),
    ClaimMap(Vec<(String, String)>),
    Unmapped(Unmapped),
}

/// What a comment is on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CommentOn {
    Catalog(String),
    /// A virtual schema (live alias) `(catalog, schema)`.
    Schema(String, String),
    /// A virtual table or view.
    Object { key: ObjKey, word: ObjectWord },
    Function { key: ObjKey, kind: crate::policy::functions::FnKind },
    /// A column of a virtual table or view.
    Column { key: ObjKey, word: ObjectWord, column: String },
}

/// Does this statement start like a management statement (CREATE [OR REPLACE] VIRTUAL|ROLE|ISSUER,
/// DROP VIRTUAL|ROLE|ISSUER|MAP, ALTER VIRTUAL|ROLE|ISSUER|GRANT, ADD TABLE|VIEW|SCALAR, COMMENT ON
/// VIRTUAL, GRANT, REVOKE, MAP|UNMAP CLAIM|GROUP)? Only routes the text; `parse` does the real
/// checking.
pub fn is_management(sql: &str) -> bool {
    let dialect = DuckDbDialect {};
    let tokens = match Tokenizer::new(&dialect, sql).tokenize() {
        Ok(t) => t,
        // A broken literal further on must not hide the statement's kind: look at the text
        // before the error (the parser then reports the error properly).
        Err(e) => {
            let end = byte_offset(sql, e.location.line, e.location.column);
            match Tokenizer::new(&dialect, &sql[..end]).tokenize() {
                Ok(t) => t,
                Err(_) => return false,
            }
        }
    };
    let mut words = tokens.iter().filter(|t| !matches!(t, Token::Whitespace(_)));
    // Keyword and upper-case text: ISSUER, UNMAP and CLAIM are no sqlparser keywords.
    let mut next = || match words.next() {
        Some(Token::Word(w)) if w.quote_style.is_none() => (w.keyword, w.value.to_ascii_uppercase()),
        _ => (Keyword::NoKeyword, String::new()),
    };
    let object = |(k, w): &(Keyword, String)| matches!(k, Keyword::VIRTUAL | Keyword::ROLE) || w == "ISSUER";
    let (first, word) = next();
    match first {
        Keyword::GRANT | Keyword::REVOKE | Keyword::DENY => true,
        // FUNCTION CATEGORY only: ALTER FUNCTION alone is not ours.
        Keyword::ALTER => {
            let k = next();
            object(&k) || k.0 == Keyword::GRANT || k.1 == "RESOURCE" || (k.0 == Keyword::FUNCTION && next().1 == "CATEGORY")
        }
        // FUNCTION CATEGORY only: CREATE/DROP FUNCTION alone is DuckDB's macro statement.
        Keyword::DROP => {
            let k = next();
            object(&k)
                || matches!(k.1.as_str(), "MAP" | "RESOURCE" | "RELATION" | "REFERENCE")
                || (k.0 == Keyword::FUNCTION && next().1 == "CATEGORY")
        }
        Keyword::CREATE => {
            let mut k = next();
            if k.0 == Keyword::OR {
                if next().0 != Keyword::REPLACE {
                    return false;
                }
                k = next();
            }
            object(&k) || k.1 == "RESOURCE" || (k.0 == Keyword::FUNCTION && next().1 == "CATEGORY")
        }
        Keyword::ADD => matches!(next().0, Keyword::TABLE | Keyword::VIEW | Keyword::SCALAR | Keyword::SCHEMA),
        Keyword::COMMENT => next().0 == Keyword::ON && next().0 == Keyword::VIRTUAL,
        Keyword::CHECK => next().0 == Keyword::VIRTUAL,
        _ if word == "MAP" || word == "UNMAP" => matches!(next().1.as_str(), "CLAIM" | "GROUP"),
        _ => false,
    }
}

/// Byte offset of a 1-based (line, column-in-chars) location; clamps to the text's end.
fn byte_offset(sql: &str, line: u64, column: u64) -> usize {
    let mut cur_line = 1u64;
    let mut cur_col = 1u64;
    for (i, ch) in sql.char_indices() {
        if cur_line >= line && cur_col >= column {
            return i;
        }
        if ch == '\n' {
            cur_line += 1;
            cur_col = 1;
        } else {
            cur_col += 1;
        }
    }
    sql.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn management_forms_are_recognised() {
        for s in [
            "CREATE VIRTUAL CATALOG sales",
            "create or replace virtual table s.t as a.b.c",
            "  -- a comment\n /* another */ Create Role r",
            "CREATE OR REPLACE ROLE r",
            "DROP VIRTUAL CATALOG sales",
            "drop role r",
            "GRANT CATALOG c TO ROLE r",
            "revoke catalog c from role r",
            "GRANT ADMIN manage TO ROLE r",
            "REVOKE ADMIN FROM ROLE r",
            "CREATE VIRTUAL VIEW c.v AS SELECT 1",
            "ALTER VIRTUAL CATALOG c SET COMMENT 'x'",
            "ALTER ROLE r SET CLAIMS 'a=b'",
            "ALTER ISSUER 'i' SET ROLE CLAIM 'groups'",
            "ALTER GRANT CATALOG c TO ROLE r SET MAIN true",
            "ADD TABLE a.b.c AS c.t",
            "add view c.v as select 1",
            "ADD SCALAR c.f(x INT) MACRO 'acl_arg(1)'",
            "COMMENT ON VIRTUAL TABLE c.t IS 'x'",
            "MAP GROUP 'g' FROM ISSUER 'i' TO ROLE r",
            "DROP MAP CLAIM 'g' FROM ISSUER 'i'",
            "CREATE RESOURCE GROUP g (max_sessions = 2)",
            "create or replace resource group g",
            "ALTER RESOURCE GROUP g SET (max_sessions = 3)",
            "DROP RESOURCE GROUP IF EXISTS g",
            "GRANT RESOURCE GROUP g TO ROLE r",
        ] {
            assert!(is_management(s), "{s}");
        }
    }

    #[test]
    fn other_statements_are_not_management() {
        for s in [
            "",
            "   ",
            "SELECT 1",
            "CREATE TABLE t (a INT)",
            "CREATE OR REPLACE TABLE t (a INT)",
            "CREATE OR VIRTUAL x",
            "DROP TABLE t",
            "\"GRANT\" CATALOG c",
            "-- GRANT CATALOG c TO ROLE r\nSELECT 1",
            "INSERT INTO grant VALUES (1)",
            "ALTER TABLE t ADD COLUMN x INT",
            "ALTER VIEW v RENAME TO w",
            "COMMENT ON TABLE t IS 'x'",
            "COMMENT ON COLUMN t.x IS 'x'",
            "MAP x",
        ] {
            assert!(!is_management(s), "{s}");
        }
    }

    #[test]
    fn broken_tail_still_routes() {
        assert!(is_management("GRANT CATALOG c TO ROLE 'unterminated"));
        assert!(is_management("CREATE VIRTUAL CATALOG c COMMENT 'x\n y"));
        assert!(!is_management("SELECT 'unterminated"));
    }

    #[test]
    fn byte_offset_counts_chars_and_lines() {
        assert_eq!(byte_offset("abc", 1, 1), 0);
        assert_eq!(byte_offset("abc", 1, 3), 2);
        assert_eq!(byte_offset("é\nxy", 2, 2), 4);
        assert_eq!(byte_offset("ab", 9, 9), 2);
    }
}

#[cfg(test)]
#[path = "forms_tests.rs"]
mod forms_tests;

#[cfg(test)]
#[path = "forms_apply_tests.rs"]
mod forms_apply_tests;

#[cfg(test)]
#[path = "types_tests.rs"]
mod types_tests;

#[cfg(test)]
#[path = "more_forms_tests.rs"]
mod more_forms_tests;
