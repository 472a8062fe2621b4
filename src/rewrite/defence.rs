//! The second line of defence (spec 011). `post_check` trusts sqlparser's reading of the
//! rewritten text; DuckDB runs its own reading. After DuckDB parses a rewritten statement, the
//! shim lists what DuckDB's parse names — the statement type, every table, insert target, CTE
//! definition, function, operator and table function — and `check` compares the list with what
//! the rules allowed (`Allowed`, built from the statement's `Decision`). Anything else aborts
//! the statement with an internal error that names nothing.
use super::Decision;
use crate::error::{AclError, Result};
use crate::policy::functions::{FnKind, HostFunctions};
use crate::policy::PhysName;

/// What DuckDB's parse of one rewritten statement may name. Built once per rewrite (cached with
/// it); compared case-insensitively, as DuckDB binds names.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Allowed {
    /// DuckDB's name for the statement type (`StatementTypeToString`).
    pub statement: &'static str,
    /// Physical tables: the rules' and those inside policy SQL (slices, views, function bodies).
    pub tables: Vec<PhysName>,
    pub ctes: Vec<String>,
    /// Scalar, aggregate and window functions as emitted: qualified keys, the syntax names the
    /// gate leaves bare, and the names policy SQL calls as written.
    pub functions: Vec<Vec<String>>,
    pub table_functions: Vec<Vec<String>>,
    /// The statement depends on the policy (a prepared copy is refused after a policy change);
    /// transaction control does not.
    pub versioned: bool,
}

/// What the shim reports, one entry per name (cpp/shim.cpp `RefKind`).
pub mod kind {
    pub const STATEMENT: u8 = 0;
    pub const TABLE: u8 = 1;
    pub const INSERT_TARGET: u8 = 2;
    pub const FUNCTION: u8 = 3;
    pub const OPERATOR: u8 = 4;
    pub const TABLE_FUNCTION: u8 = 5;
    pub const CTE_DEF: u8 = 6;
    /// Something the shim does not model (a PIVOT, a SHOW of a table, …).
    pub const OTHER: u8 = 7;
}

/// Names DuckDB's parser itself produces as bare function calls: operators by symbol (`a + b`,
/// `-x`, `a LIKE b` → `~~`) and functions it synthesises for syntax (`[1, 2]` → `list_value`,
/// `EXTRACT` → `date_part`, `INTERVAL '1' DAY` → `to_days`, …), taken from DuckDB v2.0.0's PEG
/// transformer. They bind by name through the search path (spec 004: keyword syntax is not
/// gated); a bare name outside this fixed list, and outside what the rules emitted, is refused.
const PARSER_NAMES: &[&str] = &[
    // operators
    "+", "-", "*", "/", "//", "%", "**", "^", "||", "&", "|", "<<", ">>", "~", "!", "@", "^@", "@>", "<@", "&&",
    "->", "->>", "<->", "<=>", "<#>", "~~", "!~~", "~~*", "!~~*", "~~~", "!~~~",
    // synthesised for syntax
    "row", "list_value", "list_apply", "list_filter", "list_transform", "list_contains", "struct_pack",
    "struct_extract", "trunc", "timezone", "substring", "position", "overlay", "nullif", "map", "factorial",
    "date_part", "count_star", "contains", "array_agg", "like_escape", "ilike_escape", "not_like_escape",
    "not_ilike_escape", "regexp_matches", "regexp_full_match", "trim", "ltrim", "rtrim", "to_centuries", "to_days",
    "to_decades", "to_hours", "to_microseconds", "to_millennia", "to_milliseconds", "to_minutes", "to_months",
    "to_quarters", "to_seconds", "to_weeks", "to_years",
    // `x = ANY([…])` → `ANY(SELECT unnest(…))`; unnest binds by name, never through the catalog
    "unnest",
];

/// The name a rule or policy SQL wrote for a name DuckDB's parser reports (`count(*)` is
/// `count_star` there, `first … OVER` is `first_value`, …).
fn written_as(name: &str) -> Option<&'static str> {
    const ALIASES: [(&str, &str); 5] = [
        ("count_star", "count"),
        ("first_value", "first"),
        ("last_value", "last"),
        ("quantile_cont", "percentile_cont"),
        ("quantile_disc", "percentile_disc"),
    ];
    ALIASES.iter().find(|(parsed, _)| parsed.eq_ignore_ascii_case(name)).map(|(_, w)| *w)
}

impl Allowed {
    /// The allowed set of a statement the rules rewrote.
    pub(super) fn rewritten(statement: &'static str, d: &Decision) -> Allowed {
        let mut tables = d.physical.clone();
        tables.extend(d.trusted_tables.iter().cloned());
        Allowed {
            statement,
            tables,
            ctes: d.ctes.clone(),
            functions: d.functions.clone(),
            table_functions: d.table_functions.iter().map(parts).collect(),
            versioned: true,
        }
    }

    /// Transaction control, run as written.
    pub(super) fn as_is() -> Allowed {
        Allowed { statement: "TRANSACTION", ..Allowed::default() }
    }
}

/// The parts of a name as sqlparser holds them (identifier values, without quotes).
pub(super) fn parts(name: &sqlparser::ast::ObjectName) -> Vec<String> {
    name.0
        .iter()
        .map(|p| match p {
            sqlparser::ast::ObjectNamePart::Identifier(i) => i.value.clone(),
            other => other.to_string(),
        })
        .collect()
}

fn same(a: &str, b: &str) -> bool {
    a.eq_ignore_ascii_case(b)
}

fn same_path(a: &[String], b: &[&str]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same(x, y))
}

fn outside(what: &str) -> AclError {
    AclError::internal(format!("the second check found {what} outside the decision; the statement was refused"))
}

/// Compares one statement as DuckDB parsed it (`(kind, name parts)` in any order) with `allowed`.
/// `host`: the instance's built-ins. Once the check passes, the shim qualifies every one-part call
/// to `system.main` (spec 004), so such a name must be a built-in there: otherwise DuckDB would
/// fall back to reading `system.main.f()` as a method call `f(system.main)` and look `f` up
/// through the search path, where only a macro could answer.
pub fn check<'a>(
    allowed: &Allowed,
    host: &HostFunctions,
    parsed: impl IntoIterator<Item = (u8, Vec<&'a str>)>,
) -> Result<()> {
    let parsed: Vec<(u8, Vec<&str>)> = parsed.into_iter().collect();
    // A table function's call is also listed as a function: a bare one is a table built-in.
    let table_fns: Vec<&str> =
        parsed.iter().filter(|(k, _)| *k == kind::TABLE_FUNCTION).filter_map(|(_, p)| p.first().filter(|_| p.len() == 1)).copied().collect();
    let mut saw_statement = false;
    for (k, path) in parsed.iter().map(|(k, p)| (*k, p)) {
        let ok = match k {
            kind::STATEMENT => {
                saw_statement = true;
                matches!(path.as_slice(), [s] if same(s, allowed.statement))
            }
            kind::TABLE => match path.as_slice() {
                [cte] => allowed.ctes.iter().any(|c| same(c, cte)),
                [db, schema, name] => allowed_table(allowed, db, schema, name),
                _ => false,
            },
            kind::INSERT_TARGET => {
                matches!(path.as_slice(), [db, schema, name] if allowed_table(allowed, db, schema, name))
            }
            kind::CTE_DEF => matches!(path.as_slice(), [c] if allowed.ctes.iter().any(|a| same(a, c))),
            kind::FUNCTION | kind::OPERATOR => allowed_function(allowed, path) && builtin_if_bare(host, path, &table_fns),
            kind::TABLE_FUNCTION => allowed.table_functions.iter().any(|f| same_path(f, &path)),
            _ => false,
        };
        if !ok {
            return Err(outside(match k {
                kind::STATEMENT => "a statement type",
                kind::TABLE | kind::INSERT_TARGET | kind::CTE_DEF => "a table",
                kind::FUNCTION | kind::OPERATOR | kind::TABLE_FUNCTION => "a function",
                _ => "a construct",
            }));
        }
    }
    if !saw_statement {
        return Err(outside("no statement type"));
    }
    Ok(())
}

fn allowed_function(allowed: &Allowed, path: &[&str]) -> bool {
    if let [name] = path {
        if PARSER_NAMES.iter().any(|p| same(p, name)) {
            return true;
        }
    }
    let listed = |path: &[&str]| allowed.functions.iter().chain(&allowed.table_functions).any(|f| same_path(f, path));
    if listed(path) {
        return true;
    }
    match path.split_last().and_then(|(last, rest)| Some((written_as(last)?, rest))) {
        Some((written, rest)) => {
            let mut alias: Vec<&str> = rest.to_vec();
            alias.push(written);
            listed(&alias)
        }
        None => false,
    }
}

/// Names the binder resolves by name before any catalog lookup; the shim leaves them unqualified.
pub const BOUND_BY_NAME: [&str; 2] = ["unnest", "unlist"];

/// A one-part call is a built-in in `system.main` (or bound by name); qualified calls pass as is.
fn builtin_if_bare(host: &HostFunctions, path: &[&str], table_fns: &[&str]) -> bool {
    match path {
        [name] => {
            let lower = name.to_ascii_lowercase();
            let in_main = |kind| host.resolve_in("main", &lower, kind).is_some();
            BOUND_BY_NAME.contains(&lower.as_str())
                || in_main(FnKind::Scalar)
                || (table_fns.iter().any(|t| t.eq_ignore_ascii_case(name)) && in_main(FnKind::Table))
        }
        _ => true,
    }
}

fn allowed_table(allowed: &Allowed, db: &str, schema: &str, name: &str) -> bool {
    allowed.tables.iter().any(|t| same(&t.db, db) && same(&t.schema, schema) && same(&t.name, name))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allowed() -> Allowed {
        Allowed {
            statement: "SELECT",
            tables: vec![PhysName { db: "phys".into(), schema: "main".into(), name: "orders".into() }],
            ctes: vec!["__acl_cte1_x".into()],
            functions: vec![vec!["system".into(), "main".into(), "lower".into()]],
            table_functions: vec![vec!["system".into(), "main".into(), "range".into()]],
            versioned: true,
        }
    }

    /// The built-ins the tests' parses call bare.
    fn host() -> HostFunctions {
        let r = |name: &str, t: &str| crate::policy::categories::HostRow {
            db: "system".into(),
            schema: "main".into(),
            name: name.into(),
            function_type: t.into(),
            macro_definition: None,
        };
        crate::policy::categories::categorise(&[
            r("+", "scalar"),
            r("list_value", "scalar"),
            r("count_star", "aggregate"),
            r("lower", "scalar"),
            r("unnest", "table"),
            r("read_csv", "table"),
        ])
    }

    fn check(allowed: &Allowed, parsed: Vec<(u8, Vec<&str>)>) -> Result<()> {
        super::check(allowed, &host(), parsed)
    }

    #[test]
    fn a_bare_name_must_be_a_builtin_of_system_main() {
        let mut with_bare = allowed();
        with_bare.functions.push(vec!["my_macro".into()]);
        for path in [vec!["->"], vec!["<#>"], vec!["my_macro"], vec!["date_part"]] {
            let parsed = vec![(kind::STATEMENT, vec!["SELECT"]), (kind::FUNCTION, path.clone())];
            assert!(check(&with_bare, parsed).is_err(), "{path:?}");
        }
        // bound by name, never looked up: fine without a scalar built-in
        check(&allowed(), vec![(kind::STATEMENT, vec!["SELECT"]), (kind::FUNCTION, vec!["unnest"])]).unwrap();
        // a bare table function (policy SQL) is a table built-in, but only where it is one
        let mut reader = allowed();
        reader.table_functions.push(vec!["read_csv".into()]);
        let statement = (kind::STATEMENT, vec!["SELECT"]);
        check(&reader, vec![statement.clone(), (kind::TABLE_FUNCTION, vec!["read_csv"]), (kind::FUNCTION, vec!["read_csv"])])
            .unwrap();
        assert!(check(&reader, vec![statement, (kind::FUNCTION, vec!["read_csv"])]).is_err());
    }

    #[test]
    fn what_the_rules_allowed_passes() {
        let parsed = vec![
            (kind::STATEMENT, vec!["SELECT"]),
            (kind::TABLE, vec!["PHYS", "main", "orders"]),
            (kind::TABLE, vec!["__acl_cte1_x"]),
            (kind::CTE_DEF, vec!["__acl_cte1_x"]),
            (kind::FUNCTION, vec!["system", "main", "lower"]),
            (kind::OPERATOR, vec!["+"]),
            (kind::FUNCTION, vec!["list_value"]),
            (kind::FUNCTION, vec!["count_star"]),
            (kind::FUNCTION, vec!["system", "main", "range"]),
            (kind::TABLE_FUNCTION, vec!["system", "main", "range"]),
        ];
        check(&allowed(), parsed).unwrap();
    }

    #[test]
    fn anything_else_is_refused_without_naming_it() {
        for (k, path) in [
            (kind::TABLE, vec!["orders"]),
            (kind::TABLE, vec!["phys", "main", "secret"]),
            (kind::TABLE, vec!["main", "orders"]),
            (kind::INSERT_TARGET, vec!["__acl_cte1_x"]),
            (kind::FUNCTION, vec!["lower"]),
            (kind::FUNCTION, vec!["memory", "main", "lower"]),
            (kind::OPERATOR, vec!["+++"]),
            (kind::FUNCTION, vec!["system", "main", "count_star"]),
            (kind::TABLE_FUNCTION, vec!["system", "main", "lower"]),
            (kind::CTE_DEF, vec!["orders"]),
            (kind::OTHER, vec!["PIVOT"]),
            (kind::STATEMENT, vec!["INSERT"]),
        ] {
            let parsed = vec![(kind::STATEMENT, vec!["SELECT"]), (k, path.clone())];
            let e = check(&allowed(), parsed).unwrap_err().to_string();
            assert!(e.starts_with("acl: internal error: the second check found"), "{e}");
            assert!(!e.contains("orders") && !e.contains("phys") && !e.contains("lower"), "{e}");
        }
        assert!(check(&allowed(), vec![]).is_err(), "a parse without a statement type is refused");
    }
}
