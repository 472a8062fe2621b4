use super::*;
use crate::policy::policy_sql::Home;
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

type Parsed = Vec<(RefKind, u32, Vec<&'static str>)>;

/// The built-ins the tests' parses call bare.
fn host() -> HostFunctions {
    let r = crate::policy::categories::HostRow::builtin;
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
        r("duckdb_tables", "table"),
    ])
    .with_spellings(super::spellings::duckdb_v2_for_tests())
}

fn run(a: &Allowed, parsed: &Parsed) -> Result<()> {
    check(a, &host(), None, parsed.iter().map(|(k, r, p)| (*k, *r, p.as_slice())))
}

#[test]
fn a_bare_name_must_be_a_builtin_of_system_main() {
    let mut with_bare = allowed();
    with_bare.outside.functions.push(s(&["my_macro"]));
    for path in [vec!["->"], vec!["<#>"], vec!["my_macro"], vec!["date_part"]] {
        let parsed: Parsed = vec![(RefKind::Statement, 0, vec!["SELECT"]), (RefKind::Function, 0, path.clone())];
        assert!(run(&with_bare, &parsed).is_err(), "{path:?}");
    }
    // bound by name, never looked up: fine without a scalar built-in
    run(&allowed(), &vec![(RefKind::Statement, 0, vec!["SELECT"]), (RefKind::Function, 0, vec!["unnest"])]).unwrap();
    // a bare table function (policy SQL) is a table built-in, but only where it is one
    let mut reader = allowed();
    reader.outside.table_functions.push(s(&["read_csv"]));
    let statement = (RefKind::Statement, 0, vec!["SELECT"]);
    run(&reader, &vec![statement.clone(), (RefKind::TableFunction, 0, vec!["read_csv"]), (RefKind::Function, 0, vec!["read_csv"])])
        .unwrap();
    assert!(run(&reader, &vec![statement, (RefKind::Function, 0, vec!["read_csv"])]).is_err());
}

/// Our text coming back (a relation's text parsed again): a one-part call must be a built-in of
/// `system.main` (a table built-in only where it stands as a table function); qualified names,
/// tables and columns are not its business.
#[test]
fn text_that_comes_back_calls_only_built_ins_bare() {
    let reparsed_ok = |parsed: &Parsed| reparsed(&host(), parsed.iter().map(|(k, r, p)| (*k, *r, p.as_slice())));
    let base = vec![(RefKind::Statement, 0, vec!["SELECT"]), (RefKind::Table, 0, vec!["__duckdb_s0"]), (RefKind::Column, 0, vec!["x"])];
    for bare in [vec!["+"], vec!["LOWER"], vec!["unnest"], vec!["memory", "main", "twice"]] {
        let mut parsed = base.clone();
        parsed.push((RefKind::Function, 0, bare.clone()));
        reparsed_ok(&parsed).unwrap_or_else(|e| panic!("{bare:?}: {e}"));
    }
    for bare in [vec!["twice"], vec!["date_part"], vec!["->"], vec!["read_csv"]] {
        let mut parsed = base.clone();
        parsed.push((RefKind::Operator, 0, bare.clone()));
        assert!(matches!(reparsed_ok(&parsed), Err(AclError::Reparsed { .. })), "{bare:?}");
    }
    let mut reader = base.clone();
    reader.extend([(RefKind::TableFunction, 0, vec!["read_csv"]), (RefKind::Function, 0, vec!["read_csv"])]);
    reparsed_ok(&reader).unwrap();
    // a construct the walk does not model (its calls unlisted): refused
    let mut pivot = base.clone();
    pivot.push((RefKind::Other, 0, vec!["PIVOT"]));
    assert!(matches!(reparsed_ok(&pivot), Err(AclError::SecondCheck { .. })));
}

#[test]
fn what_the_rules_allowed_passes() {
    let parsed: Parsed = vec![
        (RefKind::Statement, 0, vec!["SELECT"]),
        (RefKind::Table, 0, vec!["PHYS", "main", "orders"]),
        (RefKind::Table, 0, vec!["__acl_cte1_x"]),
        (RefKind::CteDef, 0, vec!["__acl_cte1_x"]),
        (RefKind::Function, 0, vec!["system", "main", "lower"]),
        (RefKind::Operator, 0, vec!["+"]),
        (RefKind::Function, 0, vec!["list_value"]),
        (RefKind::Function, 0, vec!["count_star"]),
        (RefKind::Function, 0, vec!["system", "main", "range"]),
        (RefKind::TableFunction, 0, vec!["system", "main", "range"]),
        (RefKind::Column, 0, vec!["anything", "at", "all"]),
    ];
    run(&allowed(), &parsed).unwrap();
}

#[test]
fn anything_else_is_refused_without_naming_it() {
    for (k, path) in [
        (RefKind::Table, vec!["orders"]),
        (RefKind::Table, vec!["phys", "main", "secret"]),
        (RefKind::Table, vec!["main", "orders"]),
        (RefKind::InsertTarget, vec!["__acl_cte1_x"]),
        (RefKind::Function, vec!["lower"]),
        (RefKind::Function, vec!["memory", "main", "lower"]),
        (RefKind::Operator, vec!["+++"]),
        (RefKind::Function, vec!["system", "main", "count_star"]),
        (RefKind::TableFunction, vec!["system", "main", "lower"]),
        (RefKind::CteDef, vec!["orders"]),
        (RefKind::Other, vec!["PIVOT"]),
        (RefKind::Statement, vec!["INSERT"]),
        (RefKind::Region, vec!["__acl_p0"]),
    ] {
        let parsed: Parsed = vec![(RefKind::Statement, 0, vec!["SELECT"]), (k, 0, path.clone())];
        let e = run(&allowed(), &parsed).unwrap_err();
        assert!(matches!(e, AclError::SecondCheck { .. }), "{e:?}");
        let e = e.to_string();
        assert!(!e.contains("orders") && !e.contains("phys") && !e.contains("lower"), "{e}");
    }
    assert!(run(&allowed(), &vec![]).is_err(), "a parse without a statement type is refused");
}

#[test]
fn a_kind_byte_reads_back_and_an_unknown_one_is_refused() {
    use RefKind::*;
    let all = [Statement, Table, InsertTarget, Function, Operator, TableFunction, CteDef, Other, Column, Region];
    for k in all {
        assert_eq!(RefKind::from_u8(k as u8), k);
    }
    for b in 10..=u8::MAX {
        assert_eq!(RefKind::from_u8(b), Other);
        // A shim that listed a kind Rust does not know never gets the statement through.
        let parsed: Parsed = vec![(Statement, 0, vec!["SELECT"]), (RefKind::from_u8(b), 0, vec!["a"])];
        let e = run(&allowed(), &parsed).unwrap_err().to_string();
        assert!(e.contains("the second check found a construct"), "{e}");
    }
}

/// DuckDB's parse of the body as the rewrite inserts it, inside region 1.
fn body_parse() -> Parsed {
    vec![
        (RefKind::Statement, 0, vec!["SELECT"]),
        (RefKind::Table, 0, vec!["phys", "main", "orders"]),
        (RefKind::Region, 0, vec!["__acl_p0"]),
        (RefKind::Table, 1, vec!["phys", "main", "people"]),
        (RefKind::Column, 1, vec!["id"]),
        (RefKind::Column, 1, vec!["NAME"]),
        (RefKind::Column, 1, vec!["id"]),
        (RefKind::Column, 1, vec!["__acl_args", "a1"]),
        (RefKind::Function, 1, vec!["upper"]),
        (RefKind::Column, 1, vec!["name"]),
        (RefKind::Operator, 1, vec!["+"]),
        (RefKind::Column, 0, vec!["ssn"]),
    ]
}

#[test]
fn a_region_may_name_what_its_policy_sql_names() {
    run(&with_region(), &body_parse()).unwrap();
}

#[test]
fn a_principals_name_inside_a_region_is_caught_by_name_and_by_count() {
    let caught = |extra: (RefKind, u32, Vec<&'static str>), what: &'static str| {
        let mut parsed = body_parse();
        parsed.push(extra);
        let e = run(&with_region(), &parsed).unwrap_err();
        assert_eq!(e, AclError::SecondCheck { found: what });
        let e = e.to_string();
        assert!(!e.contains("people") && !e.contains("ssn"), "{e}");
    };
    caught((RefKind::Column, 1, vec!["ssn"]), "a column");
    caught((RefKind::Column, 1, vec!["id"]), "a column"); // a third `id`: over the body's count
    caught((RefKind::Column, 1, vec!["people", "name"]), "a column");
    caught((RefKind::Column, 1, vec!["#"]), "a column");
    caught((RefKind::Function, 1, vec!["system", "main", "lower"]), "a function"); // the principal's, not the body's
    caught((RefKind::Function, 1, vec!["error"]), "a function");
    caught((RefKind::Table, 1, vec!["phys", "main", "orders"]), "a table"); // the principal's table
    caught((RefKind::Table, 0, vec!["phys", "main", "people"]), "a table"); // the body's table, outside it
    caught((RefKind::Function, 0, vec!["upper"]), "a function"); // the body's call, outside it
    caught((RefKind::InsertTarget, 1, vec!["phys", "main", "people"]), "a table");
    caught((RefKind::Region, 0, vec!["__acl_p0"]), "a construct"); // opened twice
    caught((RefKind::Region, 1, vec!["__acl_p1"]), "a construct"); // nested
    caught((RefKind::Column, 2, vec!["id"]), "a construct"); // a region never opened
}

#[test]
fn every_region_must_appear() {
    let parsed: Parsed = vec![(RefKind::Statement, 0, vec!["SELECT"])];
    let e = run(&with_region(), &parsed).unwrap_err();
    assert_eq!(e, AclError::SecondCheck { found: "policy SQL missing" });
}

/// Policy SQL that names what policy SQL may not (written before the rule, or by a direct edit of
/// the store), as `Region::of` reads it, and DuckDB's parse of it inside region 1.
fn forbidden_region(sql: &str, parsed: Parsed, home: Option<&Home>) -> Result<()> {
    let q = sqlparser::parser::Parser::new(&sqlparser::dialect::DuckDbDialect {}).try_with_sql(sql).and_then(|mut p| p.parse_query()).unwrap();
    let a = Allowed { regions: vec![Arc::new(Region::of(&*q))], ..allowed() };
    let mut all: Parsed = vec![(RefKind::Statement, 0, vec!["SELECT"]), (RefKind::Region, 0, vec!["__acl_p0"])];
    all.extend(parsed);
    check(&a, &host(), home, all.iter().map(|(k, r, p)| (*k, *r, p.as_slice())))
}

#[test]
fn inside_policy_sql_the_never_set_listings_and_reserved_sources_are_refused_whatever_it_names() {
    let refused = |sql: &str, item: (RefKind, u32, Vec<&'static str>), home: Option<&Home>, what: &'static str| {
        let e = forbidden_region(sql, vec![item], home).unwrap_err();
        assert_eq!(e, AclError::SecondCheck { found: what }, "{sql}");
    };
    let f = RefKind::Function;
    let tf = RefKind::TableFunction;
    refused("SELECT * FROM acl_exec('x')", (f, 1, vec!["acl_exec"]), None, "a function");
    refused("SELECT * FROM acl_exec('x')", (tf, 1, vec!["acl_exec"]), None, "a function");
    refused("SELECT * FROM system.main.acl_exec_as('r', 'x', 'y')", (tf, 1, vec!["system", "main", "acl_exec_as"]), None, "a function");
    refused("SELECT * FROM query_table('t')", (tf, 1, vec!["query_table"]), None, "a function");
    refused("SELECT * FROM duckdb_tables()", (tf, 1, vec!["duckdb_tables"]), None, "a function");
    refused("SELECT * FROM temp.main.t", (RefKind::Table, 1, vec!["temp", "main", "t"]), None, "a table");
    refused("SELECT * FROM system.main.duckdb_tables", (RefKind::Table, 1, vec!["system", "main", "duckdb_tables"]), None, "a table");
    let home = Home { db: "aclcat".into(), schema: "acl".into() };
    refused("SELECT * FROM aclcat.acl.issuers", (RefKind::Table, 1, vec!["aclcat", "acl", "issuers"]), Some(&home), "a table");
    // Ordinary policy SQL still passes, as does the ENUM cast the slices put there; the typed
    // guard's old probe is gone, so its name is an `acl_*` function like any other.
    forbidden_region("SELECT * FROM aclcat.other.t", vec![(RefKind::Table, 1, vec!["aclcat", "other", "t"])], Some(&home)).unwrap();
    let cast = "SELECT \"system\".main.acl_enum_varchar(x) FROM phys.main.t";
    forbidden_region(cast, vec![(f, 1, vec!["system", "main", "acl_enum_varchar"])], None).unwrap();
    let probe = "SELECT CASE WHEN \"system\".main.acl_leakproof('k', 'i', x) THEN 1 END FROM phys.main.t";
    assert!(forbidden_region(probe, vec![(f, 1, vec!["system", "main", "acl_leakproof"])], None).is_err());
}

#[test]
fn a_listing_of_ours_calls_acl_meta_and_nothing_of_the_never_set_passes_outside_but_the_view_guard() {
    let sql = "SELECT * FROM \"system\".main.acl_meta('tables', '{}')";
    let q = sqlparser::parser::Parser::new(&sqlparser::dialect::DuckDbDialect {}).try_with_sql(sql).and_then(|mut p| p.parse_query()).unwrap();
    let listing = Allowed { regions: vec![Arc::new(Region::of(&*q).ours())], ..allowed() };
    let parsed: Parsed = vec![
        (RefKind::Statement, 0, vec!["SELECT"]),
        (RefKind::Region, 0, vec!["__acl_p0"]),
        (RefKind::TableFunction, 1, vec!["system", "main", "acl_meta"]),
        (RefKind::Function, 1, vec!["system", "main", "acl_meta"]),
    ];
    run(&listing, &parsed).unwrap();
    // Outside every region, even a name the allowed set lists (a rule's mistake) is refused…
    let mut a = allowed();
    a.outside.table_functions.push(s(&["system", "main", "acl_exec"]));
    let parsed: Parsed = vec![(RefKind::Statement, 0, vec!["SELECT"]), (RefKind::TableFunction, 0, vec!["system", "main", "acl_exec"])];
    assert_eq!(run(&a, &parsed).unwrap_err(), AclError::SecondCheck { found: "a function" });
    // … but the guard the rules put before a principal's view.
    a.outside.table_functions.push(s(&crate::rewrite::views::GUARD_FN));
    let parsed: Parsed = vec![(RefKind::Statement, 0, vec!["SELECT"]), (RefKind::TableFunction, 0, GUARD_FN_PATH.to_vec())];
    run(&a, &parsed).unwrap();
}

const GUARD_FN_PATH: [&str; 3] = ["system", "main", "acl_view_guard"];

/// A slice named more than once stands in a CTE `__acl_s<j>` whose body is region j (spec 002,
/// "One slice per statement"): the definition, then the region's marker, then the references.
#[test]
fn a_shared_slice_is_its_ctes_body_and_nothing_else() {
    let mut a = with_region();
    a.outside.ctes.push("__acl_s0".into());
    let stmt = (RefKind::Statement, 0, vec!["SELECT"]);
    let def = (RefKind::CteDef, 0, vec!["__acl_s0"]);
    let marker = (RefKind::Region, 0, vec!["__acl_p0"]);
    let body = (RefKind::Table, 1, vec!["phys", "main", "people"]);
    let reference = (RefKind::Table, 0, vec!["__acl_s0"]);
    run(&a, &vec![stmt.clone(), def.clone(), marker.clone(), body.clone(), reference.clone(), reference.clone()]).unwrap();
    // DuckDB's parse may hold the CTE's name in any case
    run(&a, &vec![stmt.clone(), (RefKind::CteDef, 0, vec!["__ACL_S0"]), marker.clone(), body.clone(), reference.clone()]).unwrap();
    let refused = |parsed: Parsed| run(&a, &parsed).unwrap_err();
    let missing = AclError::SecondCheck { found: "policy SQL missing" };
    // the CTE's body is something else; the region stands apart from it (a differential)
    assert_eq!(refused(vec![stmt.clone(), def.clone(), (RefKind::Table, 0, vec!["phys", "main", "orders"]), marker.clone(), body.clone()]), missing);
    assert_eq!(refused(vec![stmt.clone(), marker.clone(), body.clone(), def.clone(), reference.clone()]), missing);
    // another region's body under this CTE's name
    let mut two = with_region();
    two.outside.ctes.push("__acl_s0".into());
    two.regions.push(Arc::new(body_region()));
    assert_eq!(
        run(&two, &vec![stmt.clone(), def.clone(), (RefKind::Region, 0, vec!["__acl_p1"]), body.clone(), marker.clone(), (RefKind::Table, 2, vec!["phys", "main", "people"])]).unwrap_err(),
        missing
    );
    // the CTE never defined: its references would be looked up in the catalog
    assert_eq!(refused(vec![stmt.clone(), marker.clone(), body.clone(), reference.clone()]), missing);
    // the definition last, with nothing after it
    assert_eq!(refused(vec![stmt.clone(), marker.clone(), body.clone(), def.clone()]), missing);
    // a CTE name the rules did not create is no CTE here
    assert_eq!(
        refused(vec![stmt.clone(), (RefKind::CteDef, 0, vec!["__acl_s1"]), marker.clone(), body.clone()]),
        AclError::SecondCheck { found: "a table" }
    );
    // inside a region the name opens nothing (and is not the region's)
    assert_eq!(refused(vec![stmt, marker, body, (RefKind::Table, 1, vec!["__acl_s0"]), def]), AclError::SecondCheck { found: "a table" });
}
