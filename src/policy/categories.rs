//! The shipped function categories, derived from the host's own `duckdb_functions()` at load.
//!
//! Every row of the host's list becomes a key `(database, schema, name, scalar|table)`
//! (aggregates, windows and macros are scalar; table macros are table) and lands in exactly one
//! place, by the first rule that matches:
//!
//! 0. **never** — `never_callable` (`acl_*`, `query`, `query_table`,
//!    `json_execute_serialized_sql`, `*_query`, `*_execute`, `*_attach`, `__internal*`), every
//!    pragma (they run only through PRAGMA/CALL, which the statement gate refuses) and any
//!    function type this code does not know;
//! 1. **readers** — reach data outside the virtual catalog: `read_*`, `glob`, `parquet_*`,
//!    `sniff_csv`, scanners (`*_scan`, `*_scan_*`), and functions that read a table named in a
//!    string (`index_key`, `duckdb_table_sample`);
//! 2. **node** — change or wait on the node: `*checkpoint*`, `enable_*`/`disable_*` (logging,
//!    profiling), `*external_resource*`, `truncate_*`, sequences (`nextval`, `currval`, `setval`),
//!    `setseed`, `write_log`, `sleep_ms`, `pg_sleep`;
//! 3. **environment** — facts about the node and the session rather than data: `getvariable`,
//!    `current_setting`, `version`, `which_secret`, the user functions (`current_user`, `user`,
//!    `session_user`, `current_role`), connection/query/transaction ids, `inet_*`, server times,
//!    and the listings of the same facts (`duckdb_settings`, `duckdb_variables`, `duckdb_secrets`),
//!    so a `meta` grant does not hand out what `environment` guards;
//! 4. **meta** — listings and catalog introspection, which name physical objects: `duckdb_*`,
//!    `pragma_*`, `test_*`, `stats`, `current_database`/`current_catalog`/`current_schema(s)`,
//!    `in_search_path`, `get_block_size`, `json_serialize_plan` (binds SQL against the catalog),
//!    the static listings `icu_calendar_names`/`pg_timezone_names`, PostgreSQL catalog helpers
//!    (`pg_*`, `has_*_privilege`, `*_description`, everything in schema `pg_catalog`);
//! 5. **json** — `json`, `json_*`, `*_to_json`, `to_json`, `from_json*` (incl. `json_each`/`json_tree`);
//! 6. a table function no rule above placed: **base** if it only generates rows from its
//!    arguments (`range`, `generate_series`, `unnest`, `repeat`, `repeat_row`), else **node**
//!    (a new table function needs a review before every role may call it);
//! 7. everything else (ordinary scalar, aggregate and window functions, operators, built-in
//!    macros): **base**.
//!
//! Then built-in macros inherit from their bodies: a macro lands in the most restrictive place of
//! itself and every function its body names (transitively), in the order never > readers > node >
//! meta > environment > json > base. So `histogram_values` (which calls `query_table`) is never
//! callable, and `get_block_size` (which calls `pragma_database_size`) is meta. Body names are
//! read with sqlparser's tokenizer: every word followed by `(`, plus the SQL value keywords; this
//! over-approximates, which can only make a macro stricter.
use super::functions::{Class, FnKey, FnKind, HostFn, HostFunctions};
use sqlparser::dialect::DuckDbDialect;
use sqlparser::tokenizer::{Token, Tokenizer};
use std::collections::HashMap;

/// The categories every instance ships with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Shipped {
    Base,
    Json,
    Readers,
    Meta,
    Environment,
    Node,
}

impl Shipped {
    pub const ALL: [Shipped; 6] =
        [Shipped::Base, Shipped::Json, Shipped::Readers, Shipped::Meta, Shipped::Environment, Shipped::Node];

    pub fn name(self) -> &'static str {
        match self {
            Shipped::Base => "base",
            Shipped::Json => "json",
            Shipped::Readers => "readers",
            Shipped::Meta => "meta",
            Shipped::Environment => "environment",
            Shipped::Node => "node",
        }
    }

    /// Ordinary SQL: granted to every role unless an operator revokes it.
    pub fn granted_by_default(self) -> bool {
        matches!(self, Shipped::Base | Shipped::Json)
    }
}

/// One row of `duckdb_functions()`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostRow {
    pub db: String,
    pub schema: String,
    pub name: String,
    pub function_type: String,
    pub macro_definition: Option<String>,
}

#[cfg(test)]
impl HostRow {
    /// A built-in of the system database (the tests' host lists).
    pub fn builtin(name: &str, function_type: &str) -> HostRow {
        HostRow { db: "system".into(), schema: "main".into(), name: name.into(), function_type: function_type.into(), macro_definition: None }
    }
}

/// DuckDB turns these bare words into function calls when no column of that name is in scope;
/// the value is the function it calls.
pub const SQL_VALUE_FUNCTIONS: [(&str, &str); 11] = [
    ("current_catalog", "current_catalog"),
    ("current_date", "current_date"),
    ("current_schema", "current_schema"),
    ("current_role", "current_role"),
    ("current_time", "get_current_time"),
    ("current_timestamp", "get_current_timestamp"),
    ("current_user", "current_user"),
    ("localtime", "current_localtime"),
    ("localtimestamp", "current_localtimestamp"),
    ("session_user", "session_user"),
    ("user", "user"),
];

pub fn sql_value_function(word: &str) -> Option<&'static str> {
    SQL_VALUE_FUNCTIONS.iter().find(|(w, _)| w.eq_ignore_ascii_case(word)).map(|(_, f)| *f)
}

/// Names DuckDB's parser or binder turns into syntax before any catalog lookup (COLUMNS(*),
/// TRY, IFNULL, …). They are not functions: they stay unqualified (and unquoted, since a quoted
/// name would reach the catalog) and their arguments are walked like any expression.
const SYNTAX: [&str; 11] =
    ["columns", "unpack", "coalesce", "grouping", "grouping_id", "try", "construct_array", "ifnull", "date", "unnest", "unlist"];

pub fn is_syntax(name: &str) -> bool {
    SYNTAX.iter().any(|s| s.eq_ignore_ascii_case(name))
}

/// True for names in the never-callable set.
pub fn never_callable(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n.starts_with("acl_")
        || n.starts_with("__internal")
        || matches!(n.as_str(), "query" | "query_table" | "json_execute_serialized_sql")
        || n.ends_with("_query")
        || n.ends_with("_execute")
        || n.ends_with("_attach")
}

/// How restrictive a class is (higher: stricter), for macro inheritance.
fn strictness(c: Class) -> u8 {
    match c {
        Class::Never => 6,
        Class::Shipped(Shipped::Readers) => 5,
        Class::Shipped(Shipped::Node) => 4,
        Class::Shipped(Shipped::Meta) => 3,
        Class::Shipped(Shipped::Environment) => 2,
        Class::Shipped(Shipped::Json) => 1,
        Class::Shipped(Shipped::Base) => 0,
    }
}

fn kind_of(function_type: &str) -> Option<FnKind> {
    match function_type {
        "scalar" | "aggregate" | "window" | "macro" => Some(FnKind::Scalar),
        "table" | "table_macro" => Some(FnKind::Table),
        _ => None,
    }
}

/// Rules 0–7 for one key (without macro inheritance).
pub fn rule(schema: &str, name: &str, kind: FnKind) -> Class {
    use Shipped::*;
    let n = name;
    let any = |list: &[&str]| list.contains(&n);
    if never_callable(n) {
        return Class::Never;
    }
    let readers = n.starts_with("read_")
        || n.starts_with("parquet_")
        || n.ends_with("_scan")
        || n.contains("_scan_")
        || any(&["glob", "sniff_csv", "index_key", "duckdb_table_sample"]);
    if readers {
        return Class::Shipped(Readers);
    }
    let node = n.contains("checkpoint")
        || n.starts_with("enable_")
        || n.starts_with("disable_")
        || n.contains("external_resource")
        || n.starts_with("truncate_")
        || any(&["nextval", "currval", "setval", "setseed", "write_log", "sleep_ms", "pg_sleep"]);
    if node {
        return Class::Shipped(Node);
    }
    let environment = n.starts_with("inet_")
        || any(&[
            "getvariable",
            "current_setting",
            "version",
            "which_secret",
            "current_user",
            "user",
            "session_user",
            "current_role",
            "current_connection_id",
            "current_query_id",
            "current_transaction_id",
            "txid_current",
            "pg_conf_load_time",
            "pg_postmaster_start_time",
            "duckdb_settings",
            "duckdb_variables",
            "duckdb_secrets",
        ]);
    if environment {
        return Class::Shipped(Environment);
    }
    let meta = n.starts_with("duckdb_")
        || n.starts_with("pragma_")
        || n.starts_with("test_")
        || n.starts_with("pg_")
        || (n.starts_with("has_") && n.ends_with("_privilege"))
        || n.ends_with("_description")
        || schema == "pg_catalog"
        || any(&[
            "stats",
            "current_database",
            "current_catalog",
            "current_schema",
            "current_schemas",
            "in_search_path",
            "get_block_size",
            "json_serialize_plan",
            "icu_calendar_names",
        ]);
    if meta {
        return Class::Shipped(Meta);
    }
    if n == "json" || n.starts_with("json_") || n.ends_with("_to_json") || n == "to_json" || n.starts_with("from_json")
    {
        return Class::Shipped(Json);
    }
    if kind == FnKind::Table {
        let generator = any(&["range", "generate_series", "unnest", "repeat", "repeat_row"]);
        return Class::Shipped(if generator { Base } else { Node });
    }
    Class::Shipped(Base)
}

/// Categorises the host's rows (rules, then macro inheritance) into the lookup structure.
pub fn categorise(rows: &[HostRow]) -> HostFunctions {
    let mut fns: Vec<HostFn> = Vec::with_capacity(rows.len());
    let mut pragmas = Vec::new();
    // Per key: the names its macro bodies call.
    let mut calls: HashMap<FnKey, Vec<String>> = HashMap::new();
    for r in rows {
        let (db, schema, name) = (r.db.to_lowercase(), r.schema.to_lowercase(), r.name.to_lowercase());
        let Some(kind) = kind_of(&r.function_type) else {
            if r.function_type == "pragma" {
                pragmas.push((db, schema, name));
            } else {
                // An unknown function type: never, rather than guess.
                fns.push(HostFn { key: FnKey { db, schema, name, kind: FnKind::Scalar }, class: Class::Never });
            }
            continue;
        };
        let key = FnKey { db, schema, name, kind };
        let class = rule(&key.schema, &key.name, kind);
        if let Some(body) = &r.macro_definition {
            calls.entry(key.clone()).or_default().extend(called_names(body));
        }
        fns.push(HostFn { key, class });
    }
    inherit(&mut fns, &calls);
    HostFunctions::new(fns, pragmas)
}

/// Raises each macro to the strictest class of what its body calls, until nothing changes.
fn inherit(fns: &mut [HostFn], calls: &HashMap<FnKey, Vec<String>>) {
    loop {
        // The strictest class per name, over every key of that name (both kinds, all schemas).
        let mut by_name: HashMap<&str, Class> = HashMap::new();
        for f in fns.iter() {
            let e = by_name.entry(f.key.name.as_str()).or_insert(f.class);
            if strictness(f.class) > strictness(*e) {
                *e = f.class;
            }
        }
        let mut raised: Vec<(usize, Class)> = Vec::new();
        for (i, f) in fns.iter().enumerate() {
            let Some(names) = calls.get(&f.key) else { continue };
            let mut class = f.class;
            for n in names {
                // A name the host does not know may be a never-callable one under another guise.
                let c = by_name.get(n.as_str()).copied().unwrap_or_else(|| rule("", n, FnKind::Scalar));
                if strictness(c) > strictness(class) {
                    class = c;
                }
            }
            if class != f.class {
                raised.push((i, class));
            }
        }
        if raised.is_empty() {
            return;
        }
        for (i, c) in raised {
            fns[i].class = c;
        }
    }
}

/// Names a macro body calls: words followed by `(`, and SQL value keywords. A body that does
/// not tokenize calls "query", which makes the macro never callable (fail closed).
pub fn called_names(body: &str) -> Vec<String> {
    let dialect = DuckDbDialect {};
    let Ok(tokens) = Tokenizer::new(&dialect, body).tokenize() else { return vec!["query".into()] };
    let words: Vec<&Token> = tokens.iter().filter(|t| !matches!(t, Token::Whitespace(_))).collect();
    let mut out = Vec::new();
    for (i, t) in words.iter().enumerate() {
        let Token::Word(w) = t else { continue };
        let v = w.value.to_lowercase();
        if matches!(words.get(i + 1), Some(Token::LParen)) {
            out.push(v);
        } else if let Some(f) = sql_value_function(&v) {
            out.push(f.to_string());
        }
    }
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(schema: &str, name: &str, t: &str, body: Option<&str>) -> HostRow {
        HostRow {
            db: "system".into(),
            schema: schema.into(),
            name: name.into(),
            function_type: t.into(),
            macro_definition: body.map(String::from),
        }
    }

    fn class_of(h: &HostFunctions, name: &str, kind: FnKind) -> Class {
        h.resolve(name, kind).unwrap_or_else(|| panic!("{name}")).class
    }

    #[test]
    fn rules_place_each_function_once() {
        use Shipped::*;
        let cases = [
            ("lower", "scalar", Class::Shipped(Base)),
            ("sum", "aggregate", Class::Shipped(Base)),
            ("row_number", "window", Class::Shipped(Base)),
            ("json_extract", "scalar", Class::Shipped(Json)),
            ("json_each", "table", Class::Shipped(Json)),
            ("read_csv", "table", Class::Shipped(Readers)),
            ("glob", "table", Class::Shipped(Readers)),
            ("parquet_metadata", "table", Class::Shipped(Readers)),
            ("arrow_scan_dumb", "table", Class::Shipped(Readers)),
            ("duckdb_tables", "table", Class::Shipped(Meta)),
            ("pragma_table_info", "table", Class::Shipped(Meta)),
            ("stats", "scalar", Class::Shipped(Meta)),
            ("getvariable", "scalar", Class::Shipped(Environment)),
            ("current_setting", "scalar", Class::Shipped(Environment)),
            ("which_secret", "table", Class::Shipped(Environment)),
            ("duckdb_variables", "table", Class::Shipped(Environment)),
            ("checkpoint", "table", Class::Shipped(Node)),
            ("nextval", "scalar", Class::Shipped(Node)),
            ("summary", "table", Class::Shipped(Node)),
            ("range", "table", Class::Shipped(Base)),
            ("query", "table", Class::Never),
            ("current_query", "scalar", Class::Never),
            ("__internal_compress_string_uhugeint", "scalar", Class::Never),
            ("postgres_attach", "table", Class::Never),
        ];
        for (name, t, want) in cases {
            let kind = kind_of(t).unwrap();
            assert_eq!(rule("main", name, kind), want, "{name}");
        }
        assert_eq!(rule("pg_catalog", "format_type", FnKind::Scalar), Class::Shipped(Meta));
    }

    #[test]
    fn macros_inherit_from_their_bodies() {
        let h = categorise(&[
            row("main", "query_table", "table", None),
            row("main", "pragma_database_size", "table", None),
            row("main", "count", "aggregate", None),
            row("main", "hv", "table_macro", Some("SELECT count(*) FROM query_table(CAST(source AS VARCHAR))")),
            row("main", "h", "table_macro", Some("SELECT * FROM hv(source)")),
            row("main", "bs", "macro", Some("(SELECT block_size FROM pragma_database_size())")),
            row("main", "ago", "macro", Some("(current_timestamp - CAST(i AS INTERVAL))")),
            row("main", "me", "macro", Some("current_user")),
        ]);
        assert_eq!(class_of(&h, "hv", FnKind::Table), Class::Never);
        assert_eq!(class_of(&h, "h", FnKind::Table), Class::Never);
        assert_eq!(class_of(&h, "bs", FnKind::Scalar), Class::Shipped(Shipped::Meta));
        assert_eq!(class_of(&h, "ago", FnKind::Scalar), Class::Shipped(Shipped::Base));
        assert_eq!(class_of(&h, "me", FnKind::Scalar), Class::Shipped(Shipped::Environment));
    }

    #[test]
    fn pragmas_and_unknown_types_have_no_callable_key() {
        let h = categorise(&[row("main", "version", "pragma", None), row("main", "odd", "something_new", None)]);
        assert_eq!(h.pragmas.len(), 1);
        assert!(h.resolve("version", FnKind::Scalar).is_none());
        assert_eq!(class_of(&h, "odd", FnKind::Scalar), Class::Never);
    }

    #[test]
    fn resolution_follows_the_search_order() {
        let h = categorise(&[
            row("pg_catalog", "current_database", "macro", None),
            row("main", "current_database", "scalar", None),
            HostRow { db: "memory".into(), ..row("main", "lower", "macro", None) },
            row("main", "lower", "scalar", None),
        ]);
        assert_eq!(h.resolve("current_database", FnKind::Scalar).unwrap().key.schema, "main");
        assert_eq!(h.resolve("lower", FnKind::Scalar).unwrap().key.db, "system");
    }
}
