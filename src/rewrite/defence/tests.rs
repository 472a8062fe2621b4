use super::*;
use crate::policy::PhysName;

fn phys(t: &str) -> PhysName {
    PhysName { db: "phys".into(), schema: "main".into(), name: t.into() }
}

fn s(parts: &[&str]) -> Vec<String> {
    parts.iter().map(|p| p.to_string()).collect()
}

fn allowed() -> Allowed {
    Allowed {
        statement: "SELECT",
        outside: Names {
            tables: vec![phys("orders")],
            ctes: vec!["__acl_cte1_x".into()],
            functions: vec![s(&["system", "main", "lower"])],
            table_functions: vec![s(&["system", "main", "range"])],
        },
        regions: Vec::new(),
        versioned: true,
        granted: Vec::new(),
    }
}

/// A body over `phys.main.people` with one placeholder, as `Region::of` reads it.
fn body_region() -> Region {
    let q = sqlparser::parser::Parser::new(&sqlparser::dialect::DuckDbDialect {})
        .try_with_sql("SELECT id, name FROM \"phys\".\"main\".\"people\" WHERE id = acl_arg(1) AND upper(name) <> ''")
        .and_then(|mut p| p.parse_query())
        .unwrap();
    Region::of(&*q)
}

fn with_region() -> Allowed {
    Allowed { regions: vec![Arc::new(body_region())], ..allowed() }
}

type Parsed = Vec<(u8, u32, Vec<&'static str>)>;

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
        r("=", "scalar"),
        r("<>", "scalar"),
        r("list_value", "scalar"),
        r("count_star", "aggregate"),
        r("lower", "scalar"),
        r("upper", "scalar"),
        r("unnest", "table"),
        r("read_csv", "table"),
    ])
}

fn run(a: &Allowed, parsed: &Parsed) -> Result<()> {
    check(a, &host(), parsed.iter().map(|(k, r, p)| (*k, *r, p.as_slice())))
}

#[test]
fn a_bare_name_must_be_a_builtin_of_system_main() {
    let mut with_bare = allowed();
    with_bare.outside.functions.push(s(&["my_macro"]));
    for path in [vec!["->"], vec!["<#>"], vec!["my_macro"], vec!["date_part"]] {
        let parsed: Parsed = vec![(kind::STATEMENT, 0, vec!["SELECT"]), (kind::FUNCTION, 0, path.clone())];
        assert!(run(&with_bare, &parsed).is_err(), "{path:?}");
    }
    // bound by name, never looked up: fine without a scalar built-in
    run(&allowed(), &vec![(kind::STATEMENT, 0, vec!["SELECT"]), (kind::FUNCTION, 0, vec!["unnest"])]).unwrap();
    // a bare table function (policy SQL) is a table built-in, but only where it is one
    let mut reader = allowed();
    reader.outside.table_functions.push(s(&["read_csv"]));
    let statement = (kind::STATEMENT, 0, vec!["SELECT"]);
    run(&reader, &vec![statement.clone(), (kind::TABLE_FUNCTION, 0, vec!["read_csv"]), (kind::FUNCTION, 0, vec!["read_csv"])])
        .unwrap();
    assert!(run(&reader, &vec![statement, (kind::FUNCTION, 0, vec!["read_csv"])]).is_err());
}

#[test]
fn what_the_rules_allowed_passes() {
    let parsed: Parsed = vec![
        (kind::STATEMENT, 0, vec!["SELECT"]),
        (kind::TABLE, 0, vec!["PHYS", "main", "orders"]),
        (kind::TABLE, 0, vec!["__acl_cte1_x"]),
        (kind::CTE_DEF, 0, vec!["__acl_cte1_x"]),
        (kind::FUNCTION, 0, vec!["system", "main", "lower"]),
        (kind::OPERATOR, 0, vec!["+"]),
        (kind::FUNCTION, 0, vec!["list_value"]),
        (kind::FUNCTION, 0, vec!["count_star"]),
        (kind::FUNCTION, 0, vec!["system", "main", "range"]),
        (kind::TABLE_FUNCTION, 0, vec!["system", "main", "range"]),
        (kind::COLUMN, 0, vec!["anything", "at", "all"]),
    ];
    run(&allowed(), &parsed).unwrap();
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
        (kind::REGION, vec!["__acl_p0"]),
    ] {
        let parsed: Parsed = vec![(kind::STATEMENT, 0, vec!["SELECT"]), (k, 0, path.clone())];
        let e = run(&allowed(), &parsed).unwrap_err();
        assert!(matches!(e, AclError::SecondCheck { .. }), "{e:?}");
        let e = e.to_string();
        assert!(!e.contains("orders") && !e.contains("phys") && !e.contains("lower"), "{e}");
    }
    assert!(run(&allowed(), &vec![]).is_err(), "a parse without a statement type is refused");
}

/// DuckDB's parse of the body as the rewrite inserts it, inside region 1.
fn body_parse() -> Parsed {
    vec![
        (kind::STATEMENT, 0, vec!["SELECT"]),
        (kind::TABLE, 0, vec!["phys", "main", "orders"]),
        (kind::REGION, 0, vec!["__acl_p0"]),
        (kind::TABLE, 1, vec!["phys", "main", "people"]),
        (kind::COLUMN, 1, vec!["id"]),
        (kind::COLUMN, 1, vec!["NAME"]),
        (kind::COLUMN, 1, vec!["id"]),
        (kind::COLUMN, 1, vec!["__acl_args", "a1"]),
        (kind::FUNCTION, 1, vec!["upper"]),
        (kind::COLUMN, 1, vec!["name"]),
        (kind::OPERATOR, 1, vec!["+"]),
        (kind::COLUMN, 0, vec!["ssn"]),
    ]
}

#[test]
fn a_region_may_name_what_its_policy_sql_names() {
    run(&with_region(), &body_parse()).unwrap();
}

#[test]
fn a_principals_name_inside_a_region_is_caught_by_name_and_by_count() {
    let caught = |extra: (u8, u32, Vec<&'static str>), what: &'static str| {
        let mut parsed = body_parse();
        parsed.push(extra);
        let e = run(&with_region(), &parsed).unwrap_err();
        assert_eq!(e, AclError::SecondCheck { found: what });
        let e = e.to_string();
        assert!(!e.contains("people") && !e.contains("ssn"), "{e}");
    };
    caught((kind::COLUMN, 1, vec!["ssn"]), "a column");
    caught((kind::COLUMN, 1, vec!["id"]), "a column"); // a third `id`: over the body's count
    caught((kind::COLUMN, 1, vec!["people", "name"]), "a column");
    caught((kind::COLUMN, 1, vec!["#"]), "a column");
    caught((kind::FUNCTION, 1, vec!["system", "main", "lower"]), "a function"); // the principal's, not the body's
    caught((kind::FUNCTION, 1, vec!["error"]), "a function");
    caught((kind::TABLE, 1, vec!["phys", "main", "orders"]), "a table"); // the principal's table
    caught((kind::TABLE, 0, vec!["phys", "main", "people"]), "a table"); // the body's table, outside it
    caught((kind::FUNCTION, 0, vec!["upper"]), "a function"); // the body's call, outside it
    caught((kind::INSERT_TARGET, 1, vec!["phys", "main", "people"]), "a table");
    caught((kind::REGION, 0, vec!["__acl_p0"]), "a construct"); // opened twice
    caught((kind::REGION, 1, vec!["__acl_p1"]), "a construct"); // nested
    caught((kind::COLUMN, 2, vec!["id"]), "a construct"); // a region never opened
}

#[test]
fn every_region_must_appear() {
    let parsed: Parsed = vec![(kind::STATEMENT, 0, vec!["SELECT"])];
    let e = run(&with_region(), &parsed).unwrap_err();
    assert_eq!(e, AclError::SecondCheck { found: "policy SQL missing" });
}
