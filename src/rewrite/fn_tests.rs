//! The function gate: admission, qualified emission, special forms, virtual functions.
use super::{statement, FnGate};
use crate::authz::{Principal, View};
use crate::error::{AclError, BadCall, FunctionNotPermitted, NotGranted, StatementNotPermitted, Unsupported};
use crate::policy::categories::{categorise, HostRow};
use crate::policy::Policy;
use std::sync::Arc;

/// A small host list in `duckdb_functions()` shape.
fn host() -> crate::policy::functions::HostFunctions {
    let r = |schema: &str, name: &str, t: &str, body: Option<&str>| HostRow {
        db: "system".into(),
        schema: schema.into(),
        name: name.into(),
        function_type: t.into(),
        macro_definition: body.map(String::from),
    };
    categorise(&[
        r("main", "lower", "scalar", None),
        r("main", "upper", "scalar", None),
        r("main", "count", "aggregate", None),
        r("main", "count_star", "aggregate", None),
        r("main", "sum", "aggregate", None),
        r("main", "max", "aggregate", None),
        r("main", "string_agg", "aggregate", None),
        r("main", "first_value", "window", None),
        r("main", "row_number", "window", None),
        r("main", "quantile_cont", "aggregate", None),
        r("main", "list_transform", "scalar", None),
        r("main", "current_date", "scalar", None),
        r("main", "current_user", "macro", Some("'duckdb'")),
        r("main", "user", "macro", Some("current_user")),
        r("main", "getvariable", "scalar", None),
        r("main", "json_extract", "scalar", None),
        r("main", "range", "table", None),
        r("main", "range", "scalar", None),
        r("main", "unnest", "table", None),
        r("main", "read_csv", "table", None),
        r("main", "query", "table", None),
        r("main", "query_table", "table", None),
        r("main", "histogram_values", "table_macro", Some("SELECT * FROM query_table(source)")),
        r("main", "duckdb_tables", "table", None),
        r("main", "duckdb_constraints", "table", None),
        r("main", "current_database", "scalar", None),
        r("pg_catalog", "current_database", "macro", Some("\"system\".main.current_database()")),
        r("main", "version", "pragma", None),
    ])
    .with_spellings(crate::rewrite::defence::spellings::duckdb_v2_for_tests())
}

fn policy(admin: &[&str]) -> Policy {
    let mut p = Policy::default();
    // ENUM exposure has tests of its own (`enum_tests`): here DuckDB's types keep the SQL as it was.
    p.enum_types = crate::policy::EnumTypes::Keep;
    p.functions.host = Arc::new(host().with_types(super::types::BUILTIN_TYPES.iter().copied()));
    let setup = [
        "CREATE VIRTUAL CATALOG sales",
        "CREATE VIRTUAL TABLE sales.orders AS phys.main.orders",
        "CREATE VIRTUAL CATALOG hr",
        "CREATE ROLE analyst",
        "GRANT CATALOG sales TO ROLE analyst WITH (select) MAIN",
        "CREATE ROLE loader",
        "GRANT CATALOG sales TO ROLE loader WITH (select) MAIN",
    ];
    for s in setup.iter().chain(admin) {
        let cmd = crate::admin::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"));
        crate::admin::apply(&mut p, &cmd).unwrap_or_else(|e| panic!("{s}: {e}"));
    }
    p
}

fn run(p: &Policy, role: &str, sql: &str) -> crate::error::Result<String> {
    let principal = Principal::role(role);
    let view = View::new(p, &principal)?;
    let fns = FnGate::new(p, &principal);
    statement(&view, &fns, sql)
}

#[track_caller]
fn rewrites(p: &Policy, role: &str, sql: &str, expected: &str) {
    assert_eq!(run(p, role, sql).unwrap(), expected);
}

#[track_caller]
fn refused(p: &Policy, role: &str, sql: &str, expected: impl Fn(&AclError) -> bool) {
    let e = run(p, role, sql).unwrap_err();
    assert!(expected(&e), "{sql}: {e:?}");
    let e = e.to_string();
    assert!(!e.contains("phys"), "names a physical object: {e}");
}

/// The function gate refused `name`, as the principal wrote it.
fn not_permitted(name: &'static str) -> impl Fn(&AclError) -> bool {
    move |e| matches!(e, AclError::FunctionNotPermitted(FunctionNotPermitted::Named { name: n }) if n == name)
}

const ORDERS: &str = r#""phys"."main"."orders" AS "orders""#;

#[test]
fn calls_are_emitted_by_key_and_keep_their_column_names() {
    let p = policy(&[]);
    // A built-in of system.main by its quoted name alone: the shim qualifies it in DuckDB's parse
    // once the second check found it one (spec 004, "Emission"); windows, WITHIN GROUP and table
    // functions are qualified in the text (below).
    rewrites(&p, "analyst", "SELECT lower(name) FROM orders",
        &format!(r#"SELECT "lower"(name) AS "lower(name)" FROM {ORDERS}"#));
    rewrites(&p, "analyst", "SELECT LOWER(name) AS n FROM orders WHERE upper(name) = 'A'",
        &format!(r#"SELECT "lower"(name) AS n FROM {ORDERS} WHERE "upper"(name) = 'A'"#));
    rewrites(&p, "analyst", "SELECT count(*), sum(DISTINCT amount) FROM orders",
        &format!(r#"SELECT "count"(*) AS "count(*)", "sum"(DISTINCT amount) AS "sum(DISTINCT amount)" FROM {ORDERS}"#));
    rewrites(&p, "analyst", "SELECT system.main.lower('A')",
        r#"SELECT "lower"('A') AS "system.main.lower('A')""#);
    // a name DuckDB's parser maps to another function is admitted under that one, emitted as written
    rewrites(&p, "analyst", "SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY amount) AS m FROM orders",
        &format!(r#"SELECT "system"."main"."percentile_cont"(0.5) WITHIN GROUP (ORDER BY amount) AS m FROM {ORDERS}"#));
    rewrites(&p, "analyst", "SELECT first(amount) OVER (ORDER BY id) AS f FROM orders",
        &format!(r#"SELECT "system"."main"."first"(amount) OVER (ORDER BY id) AS f FROM {ORDERS}"#));
}

#[test]
fn special_forms_keep_working() {
    let p = policy(&[]);
    rewrites(&p, "analyst", "SELECT COLUMNS(*) FROM orders", &format!("SELECT COLUMNS(*) FROM {ORDERS}"));
    rewrites(&p, "analyst", r#"SELECT "coalesce"(a, 1) AS c, TRY(a) AS t FROM orders"#,
        &format!("SELECT coalesce(a, 1) AS c, TRY(a) AS t FROM {ORDERS}"));
    rewrites(&p, "analyst", "SELECT CAST(a AS INT) AS c, EXTRACT(YEAR FROM d) AS y, a::TEXT AS t FROM orders",
        &format!("SELECT CAST(a AS INT) AS c, EXTRACT(YEAR FROM d) AS y, a::TEXT AS t FROM {ORDERS}"));
    rewrites(&p, "analyst", "SELECT list_transform(l, lambda x: lower(x)) AS l FROM orders",
        &format!(r#"SELECT "list_transform"(l, lambda x : "lower"(x)) AS l FROM {ORDERS}"#));
    rewrites(&p, "analyst", "SELECT unnest([1, 2])", "SELECT unnest([1, 2])");
    rewrites(&p, "analyst", "SELECT current_date", "SELECT current_date");
    rewrites(&p, "analyst", "SELECT row_number() OVER () AS n FROM orders",
        &format!(r#"SELECT "system"."main"."row_number"() OVER () AS n FROM {ORDERS}"#));
}

#[test]
fn table_functions_are_gated_and_qualified() {
    let p = policy(&[]);
    rewrites(&p, "analyst", "SELECT * FROM range(3) AS r(x)", r#"SELECT * FROM "system"."main"."range"(3) AS r (x)"#);
    rewrites(&p, "analyst", "SELECT o.id FROM orders AS o, unnest([1]) AS u(v)",
        r#"SELECT o.id FROM "phys"."main"."orders" AS o, "system"."main"."unnest"([1]) AS u (v)"#);
    refused(&p, "analyst", "SELECT * FROM read_csv('/etc/passwd')", not_permitted("read_csv"));
    refused(&p, "analyst", "SELECT * FROM duckdb_constraints()", not_permitted("duckdb_constraints"));
    refused(&p, "analyst", "SELECT * FROM query('SELECT 1')", not_permitted("query"));
    refused(&p, "analyst", "SELECT * FROM histogram_values('t', 'c')", |e| matches!(e, AclError::FunctionNotPermitted(FunctionNotPermitted::Named { .. })));
    refused(&p, "analyst", "SELECT * FROM nosuch(1)", not_permitted("nosuch"));
}

#[test]
fn grants_denies_and_all_roles() {
    let p = policy(&["GRANT FUNCTION CATEGORY readers TO ROLE loader"]);
    rewrites(&p, "loader", "SELECT * FROM read_csv('x.csv')", r#"SELECT * FROM "system"."main"."read_csv"('x.csv')"#);
    refused(&p, "analyst", "SELECT * FROM read_csv('x.csv')", |e| matches!(e, AclError::FunctionNotPermitted(FunctionNotPermitted::Named { .. })));
    // a deny anywhere wins over a grant
    let p = policy(&["GRANT FUNCTION CATEGORY readers TO ROLE loader", "DENY FUNCTION read_csv TO ALL ROLES"]);
    refused(&p, "loader", "SELECT * FROM read_csv('x.csv')", |e| matches!(e, AclError::FunctionNotPermitted(FunctionNotPermitted::Named { .. })));
    let p = policy(&["GRANT FUNCTION read_csv TO ALL ROLES", "DENY FUNCTION CATEGORY readers TO ROLE analyst"]);
    rewrites(&p, "loader", "SELECT * FROM read_csv('x')", r#"SELECT * FROM "system"."main"."read_csv"('x')"#);
    refused(&p, "analyst", "SELECT * FROM read_csv('x')", |e| matches!(e, AclError::FunctionNotPermitted(FunctionNotPermitted::Named { .. })));
    // base is an ordinary grant to ALL ROLES: revoking it takes lower away
    let p = policy(&["REVOKE FUNCTION CATEGORY base FROM ALL ROLES"]);
    refused(&p, "analyst", "SELECT lower('A')", not_permitted("lower"));
    // nothing admits the never set, not even a category grant of its class
    let p = policy(&["GRANT FUNCTION CATEGORY meta TO ALL ROLES", "GRANT FUNCTION CATEGORY node TO ALL ROLES"]);
    refused(&p, "analyst", "SELECT * FROM query_table('t')", |e| matches!(e, AclError::FunctionNotPermitted(FunctionNotPermitted::Named { .. })));
    rewrites(&p, "analyst", "SELECT * FROM duckdb_constraints()", r#"SELECT * FROM "system"."main"."duckdb_constraints"()"#);
}

#[test]
fn environment_and_value_keywords() {
    let p = policy(&[]);
    refused(&p, "analyst", "SELECT getvariable('secret')", not_permitted("getvariable"));
    refused(&p, "analyst", "SELECT user", |e| matches!(e, AclError::FunctionNotPermitted(FunctionNotPermitted::BareWord { .. })));
    refused(&p, "analyst", "SELECT current_user", |e| matches!(e, AclError::FunctionNotPermitted(FunctionNotPermitted::BareWord { .. })));
    let p = policy(&["GRANT FUNCTION CATEGORY environment TO ROLE analyst"]);
    rewrites(&p, "analyst", "SELECT current_user", "SELECT current_user");
    rewrites(&p, "analyst", "SELECT getvariable('x') AS v", r#"SELECT "getvariable"('x') AS v"#);
}

#[test]
fn qualified_names_need_their_key_admitted() {
    let p = policy(&[]);
    refused(&p, "analyst", "SELECT phys.main.m(1)", not_permitted("m"));
    refused(&p, "analyst", "SELECT memory.main.lower('a')", not_permitted("lower"));
    // `x.f()` names no function in schema x: a call of f on x (a column), as DuckDB reads it
    rewrites(&p, "analyst", "SELECT pg_catalog.lower('a') AS l", r#"SELECT "lower"(pg_catalog, 'a') AS l"#);
    // (current_database() in any spelling is answered with the virtual catalog: spec 005)
    rewrites(&p, "analyst", "SELECT pg_catalog.current_database() AS d", "SELECT 'sales' AS d");
    rewrites(&p, "analyst", "SELECT customer.lower() AS l FROM orders", r#"SELECT "lower"(customer) AS l FROM "phys"."main"."orders" AS "orders""#);
    rewrites(&p, "analyst", "SELECT 'abc'.upper() AS u", r#"SELECT "upper"('abc') AS u"#);
    rewrites(&p, "analyst", "SELECT customer.lower().upper()[1:2] AS l FROM orders",
        r#"SELECT "upper"("lower"(customer))[1:2] AS l FROM "phys"."main"."orders" AS "orders""#);
    // a method that is no admitted function is refused like the call
    refused(&p, "analyst", "SELECT customer.getvariable() FROM orders", not_permitted("getvariable"));
    refused(&p, "analyst", "SELECT customer.nosuch() FROM orders", not_permitted("nosuch"));
    let p = policy(&["CREATE FUNCTION CATEGORY macros", "ALTER FUNCTION CATEGORY macros ADD (phys.main.m)",
        "GRANT FUNCTION CATEGORY macros TO ROLE analyst"]);
    rewrites(&p, "analyst", "SELECT phys.main.m(1) AS x", r#"SELECT "phys"."main"."m"(1) AS x"#);
    refused(&p, "loader", "SELECT phys.main.m(1)", |e| matches!(e, AclError::FunctionNotPermitted(FunctionNotPermitted::Named { .. })));
    // dropping a built-in from its shipped category takes it away
    let p = policy(&["ALTER FUNCTION CATEGORY base DROP (upper)"]);
    refused(&p, "analyst", "SELECT upper('a')", not_permitted("upper"));
    rewrites(&p, "analyst", "SELECT lower('a') AS l", r#"SELECT "lower"('a') AS l"#);
}

#[test]
fn management_validates_names() {
    let mut p = policy(&[]);
    let bad = |p: &mut Policy, sql: &str| crate::admin::apply(p, &crate::admin::parse(sql).unwrap()).unwrap_err().to_string();
    assert!(bad(&mut p, "GRANT FUNCTION query TO ROLE analyst").contains("never callable"));
    assert!(bad(&mut p, "ALTER FUNCTION CATEGORY base ADD (acl_exec)").contains("never callable"));
    assert!(bad(&mut p, "GRANT FUNCTION nosuch TO ROLE analyst").contains("not a built-in"));
    assert!(bad(&mut p, "GRANT FUNCTION CATEGORY nosuch TO ALL ROLES").contains("does not exist"));
    assert!(bad(&mut p, "DROP FUNCTION CATEGORY base").contains("shipped"));
    assert!(bad(&mut p, "GRANT FUNCTION lower TO ROLE ghost").contains("role \"ghost\" does not exist"));
    assert!(crate::admin::parse("GRANT FUNCTION a.b TO ROLE analyst").is_err());
}

#[test]
fn virtual_scalar_functions() {
    let p = policy(&["CREATE VIRTUAL SCALAR sales.gross(x DOUBLE) AS acl_arg(1) * 1.2",
        "CREATE VIRTUAL SCALAR sales.shout ALIAS OF upper",
        "CREATE VIRTUAL SCALAR hr.secret() AS 42"]);
    // a body that opens no scope takes its argument in place, bound in the caller's scope
    rewrites(&p, "analyst", "SELECT gross(amount) AS g FROM orders",
        &format!("SELECT ((CAST(amount AS DOUBLE)) * 1.2) AS g FROM {ORDERS}"));
    rewrites(&p, "analyst", "SELECT sales.shout(lower(name)) AS s FROM orders",
        &format!(r#"SELECT "system"."main"."upper"("lower"(name)) AS s FROM {ORDERS}"#));
    refused(&p, "analyst", "SELECT gross(1, 2)", |e| matches!(e, AclError::BadCall(BadCall::ArgumentCount { .. })));
    refused(&p, "analyst", "SELECT hr.secret()", not_permitted("secret"));
    refused(&p, "analyst", "SELECT gross(getvariable('x'))", not_permitted("getvariable"));
}

#[test]
fn scalar_bodies_with_a_scope_take_their_arguments_as_values() {
    let p = policy(&[
        "CREATE VIRTUAL SCALAR sales.name_of(i INT) AS (SELECT name FROM phys.main.people WHERE id = acl_arg(1))",
        "CREATE VIRTUAL SCALAR sales.plus(l INT[], k INT) AS list_transform(acl_arg(1), lambda x: x + acl_arg(2))",
        "CREATE VIRTUAL SCALAR sales.twice(x INT) AS acl_arg(1) + acl_arg(1)",
        "CREATE VIRTUAL SCALAR sales.firsts(l INT[]) AS list_transform(acl_arg(1), lambda x: x[1])",
    ]);
    rewrites(&p, "analyst", "SELECT name_of(id) AS n FROM orders",
        &format!(r#"SELECT (SELECT "__acl_p0".* FROM (VALUES (CAST(id AS INT))) AS "__acl_args" ("a1"), LATERAL (SELECT (SELECT name FROM "phys"."main"."people" WHERE id = "__acl_args"."a1")) AS "__acl_p0") AS n FROM {ORDERS}"#));
    // a placeholder under a lambda: the lambda's parameter cannot capture the caller's `x`
    rewrites(&p, "analyst", "SELECT plus([1], x) AS n FROM orders",
        &format!(r#"SELECT (SELECT "__acl_p0".* FROM (VALUES (CAST([1] AS INT[]), CAST(x AS INT))) AS "__acl_args" ("a1", "a2"), LATERAL (SELECT list_transform("__acl_args"."a1", lambda x : x + "__acl_args"."a2")) AS "__acl_p0") AS n FROM {ORDERS}"#));
    // an argument used twice is evaluated once
    rewrites(&p, "analyst", "SELECT twice(lower('x')::INT) AS n",
        r#"SELECT (SELECT "__acl_p0".* FROM (VALUES (CAST("lower"('x')::INT AS INT))) AS "__acl_args" ("a1"), LATERAL (SELECT "__acl_args"."a1" + "__acl_args"."a1") AS "__acl_p0") AS n"#);
    // the argument outside the lambda: in place
    rewrites(&p, "analyst", "SELECT firsts(l) AS n FROM orders",
        &format!(r#"SELECT (list_transform((CAST(l AS INT[])), lambda x : x[1])) AS n FROM {ORDERS}"#));
    // nested calls: the inner one is expanded first, inside the outer one's VALUES
    let out = run(&p, "analyst", "SELECT name_of(name_of(id)::INT) AS n FROM orders").unwrap();
    assert!(out.starts_with(r#"SELECT (SELECT "__acl_p1".* FROM (VALUES (CAST((SELECT "__acl_p0".* FROM (VALUES (CAST(id AS INT)))"#), "{out}");
    assert!(out.contains(r#"AS "__acl_p0")::INT AS INT))) AS "__acl_args" ("a1"), LATERAL"#), "{out}");
    assert!(out.contains(r#"AS "__acl_p1") AS n"#), "{out}");
    // windows would see one row in the VALUES list; several values are never one argument
    refused(&p, "analyst", "SELECT name_of(row_number() OVER ()) FROM orders", |e| matches!(e, AclError::BadCall(BadCall::WindowArgument { .. })));
    for sql in ["SELECT name_of(*) FROM orders", "SELECT name_of(orders.*) FROM orders", "SELECT name_of(COLUMNS(*)) FROM orders",
        "SELECT plus([1], COLUMNS('id') + 1) FROM orders"] {
        refused(&p, "analyst", sql, |e| matches!(e, AclError::BadCall(BadCall::OneValuePerArgument { .. })));
    }
    // a subquery of the argument's own may use anything it likes
    assert!(run(&p, "analyst", "SELECT name_of((SELECT count(*) FROM orders WHERE id IN (SELECT * FROM orders)))").is_ok());
}

#[test]
fn virtual_table_functions() {
    let p = policy(&[
        "CREATE VIRTUAL TABLE FUNCTION sales.big(n INT) AS SELECT id FROM phys.main.orders WHERE amount > acl_arg(1)",
        "CREATE VIRTUAL TABLE FUNCTION sales.files(p VARCHAR) ALIAS OF read_csv",
        "CREATE VIRTUAL TABLE FUNCTION sales.mine() AS SELECT * FROM read_csv('/data/' || acl_claim('tenant') || '.csv')",
    ]);
    rewrites(&p, "analyst", "SELECT * FROM big(10)",
        r#"SELECT * FROM (SELECT "__acl_p0".* FROM (VALUES (CAST(10 AS INT))) AS "__acl_args" ("a1"), LATERAL (SELECT id FROM "phys"."main"."orders" WHERE amount > "__acl_args"."a1") AS "__acl_p0") AS "big""#);
    rewrites(&p, "analyst", "SELECT b.id FROM sales.big((SELECT max(id) FROM orders)) AS b",
        r#"SELECT b.id FROM (SELECT "__acl_p0".* FROM (VALUES (CAST((SELECT "max"(id) AS "max(id)" FROM "phys"."main"."orders" AS "orders") AS INT))) AS "__acl_args" ("a1"), LATERAL (SELECT id FROM "phys"."main"."orders" WHERE amount > "__acl_args"."a1") AS "__acl_p0") AS b"#);
    // a lateral reference to the caller's own earlier FROM item
    rewrites(&p, "analyst", "SELECT * FROM orders o, big(o.amount) AS b",
        r#"SELECT * FROM "phys"."main"."orders" o, (SELECT "__acl_p0".* FROM (VALUES (CAST(o.amount AS INT))) AS "__acl_args" ("a1"), LATERAL (SELECT id FROM "phys"."main"."orders" WHERE amount > "__acl_args"."a1") AS "__acl_p0") AS b"#);
    // ALIAS OF: the real function, its arguments in the caller's scope
    rewrites(&p, "analyst", "SELECT * FROM files('a.csv')",
        r#"SELECT * FROM "system"."main"."read_csv"(CAST('a.csv' AS VARCHAR)) AS "files""#);
    rewrites(&p, "analyst", "SELECT * FROM mine()",
        r#"SELECT * FROM (SELECT "__acl_p0".* FROM (SELECT * FROM read_csv('/data/' || NULL || '.csv')) AS "__acl_p0") AS "mine""#);
    refused(&p, "analyst", "SELECT * FROM big(*)", |e| matches!(e, AclError::BadCall(BadCall::OneValuePerArgument { .. })));
    refused(&p, "analyst", "SELECT * FROM orders o, big(o.*)", |e| matches!(e, AclError::BadCall(BadCall::OneValuePerArgument { .. })));
    refused(&p, "analyst", "SELECT * FROM big(n := 1)", |e| matches!(e, AclError::BadCall(BadCall::PositionalOnly { .. })));
    refused(&p, "analyst", "SELECT * FROM orders o, big(COLUMNS(*))", |e| matches!(e, AclError::BadCall(BadCall::OneValuePerArgument { .. })));
    refused(&p, "analyst", "SELECT * FROM big(sum(1) OVER ())", |e| matches!(e, AclError::BadCall(BadCall::WindowArgument { .. })));
}

#[test]
fn what_the_second_check_allows_comes_from_the_policy_sql() {
    let p = policy(&[
        "CREATE VIRTUAL TABLE FUNCTION sales.big(n INT) AS SELECT id FROM phys.main.orders WHERE amount > acl_arg(1)",
        "CREATE VIRTUAL TABLE sales.items AS phys.main.order_items",
    ]);
    let principal = Principal::role("analyst");
    let view = View::new(&p, &principal).unwrap();
    let fns = FnGate::new(&p, &principal);
    let (_, allowed) = super::statement_allowed(&view, &fns, "SELECT * FROM items i, big((SELECT max(id) FROM items))").unwrap();
    let phys = |t: &str| crate::policy::PhysName { db: "phys".into(), schema: "main".into(), name: t.into() };
    // the principal's own names resolve outside; the body's table only inside its region
    assert!(allowed.outside.tables.contains(&phys("order_items")), "{allowed:?}");
    assert!(!allowed.outside.tables.contains(&phys("orders")), "{allowed:?}");
    assert_eq!(allowed.regions.len(), 1);
    assert_eq!(allowed.regions[0].names.tables, vec![phys("orders")]);
    assert!(!allowed.regions[0].names.tables.contains(&phys("order_items")));
    let cols: Vec<&str> = allowed.regions[0].columns.iter().map(|(c, _)| c.as_str()).collect();
    assert_eq!(cols, ["__acl_args", "a1", "amount", "id"]);
    // a sliced object: its physical table and its calls only inside its region
    let p = policy(&["CREATE VIRTUAL TABLE sales.masked AS phys.main.m COLUMNS (id, name = upper(name)) RLS (id > 1)"]);
    let view = View::new(&p, &principal).unwrap();
    let fns = FnGate::new(&p, &principal);
    let (sql, allowed) = super::statement_allowed(&view, &fns, "SELECT lower(name) AS n FROM masked").unwrap();
    assert!(sql.contains(r#"FROM "phys"."main"."m" AS "__acl_l0" WHERE id > 1) AS "__acl_p0") AS "masked""#), "{sql}");
    assert!(allowed.outside.tables.is_empty(), "{allowed:?}");
    assert_eq!(allowed.regions[0].names.tables, vec![phys("m")]);
    // the mask's call, and the guard's COLUMNS(*) (every slice is guarded since issue 32)
    assert_eq!(allowed.regions[0].names.functions, vec![vec!["upper".to_string()], vec!["COLUMNS".to_string()]]);
    assert_eq!(allowed.outside.functions, vec![vec!["lower".to_string()]]);
}

#[test]
fn reserved_names_are_refused() {
    let p = policy(&["CREATE VIRTUAL TABLE FUNCTION sales.big(n INT) AS SELECT id FROM phys.main.orders WHERE amount > acl_arg(1)"]);
    for sql in [
        "SELECT * FROM orders AS __acl_p0",
        "SELECT id AS \"__ACL_x\" FROM orders",
        "WITH __acl_cte1_orders AS (SELECT 1) SELECT * FROM __acl_cte1_orders",
        "SELECT \"__acl_args\".a1 FROM big(1)",
        "SELECT * FROM big(1) AS b(__acl_x)",
        "SELECT \"__acl_vfn0\"(1)",
        "SELECT * FROM orders WHERE id IN (SELECT __acl_l0.id FROM orders)",
        "SELECT * FROM __acl_x",
        "SELECT * FROM sales.__acl_x.orders",
        "SELECT * FROM __acl_range(1)",
        "SELECT list_transform([1], lambda __acl_x: 1)",
        "SELECT * EXCLUDE (__acl_x) FROM orders",
        "SELECT s.__acl_x FROM orders AS s",
        "INSERT INTO orders (__acl_x) VALUES (1)",
        "UPDATE orders SET __acl_x = 1",
    ] {
        refused(&p, "analyst", sql, |e| matches!(e, AclError::Unsupported(Unsupported::ReservedName)));
    }
    // a string is not a name
    assert!(run(&p, "analyst", "SELECT '__acl_p0' AS x").is_ok());
}

#[test]
fn virtual_function_bodies_are_checked_at_create() {
    let mut p = policy(&[]);
    let bad = |p: &mut Policy, sql: &str| match crate::admin::parse(sql) {
        Ok(cmd) => crate::admin::apply(p, &cmd).unwrap_err().to_string(),
        Err(e) => e.to_string(),
    };
    assert!(bad(&mut p, "CREATE VIRTUAL TABLE FUNCTION sales.f() AS SELECT * FROM orders").contains("db.schema.table"));
    assert!(bad(&mut p, "CREATE VIRTUAL SCALAR sales.f(a INT) AS acl_arg(2)").contains("acl_arg(2)"));
    assert!(bad(&mut p, "CREATE VIRTUAL TABLE FUNCTION sales.f() AS SELECT * FROM query('x')").contains("\"query\""));
    assert!(bad(&mut p, "CREATE VIRTUAL SCALAR sales.f ALIAS OF query").contains("never callable"));
    assert!(bad(&mut p, "CREATE VIRTUAL SCALAR nocat.f() AS 1").contains("does not exist"));
}

#[test]
fn every_expression_position_is_walked() {
    let p = policy(&[]);
    for sql in [
        "SELECT * REPLACE (getvariable('x') AS id) FROM orders",
        "SELECT string_agg(name ORDER BY getvariable('x')) FROM orders",
        "SELECT count(*) FILTER (WHERE getvariable('x') = 1) FROM orders",
        "SELECT row_number() OVER (PARTITION BY getvariable('x')) FROM orders",
        "SELECT id FROM orders QUALIFY getvariable('x') = 1",
        "SELECT id FROM orders GROUP BY ROLLUP (getvariable('x'), id)",
        "SELECT id FROM orders ORDER BY getvariable('x') LIMIT 1",
        "WITH c AS (SELECT getvariable('x') AS v) SELECT * FROM c",
        "SELECT (SELECT getvariable('x'))",
        "SELECT id FROM orders WHERE EXISTS (SELECT 1 WHERE getvariable('x') = 1)",
        "SELECT CAST(getvariable('x') AS INT)",
        "SELECT INTERVAL (getvariable('x')) DAY",
        "SELECT [getvariable('x')]",
        "SELECT {'a': getvariable('x')}",
        "SELECT COLUMNS(lambda c: getvariable(c) IS NULL) FROM orders",
        "UPDATE orders SET name = getvariable('x')",
        "INSERT INTO orders VALUES (getvariable('x'))",
        "DELETE FROM orders WHERE id = getvariable('x')",
    ] {
        refused(&p, "analyst", sql, |e| matches!(e, AclError::FunctionNotPermitted(FunctionNotPermitted::Named { .. })));
    }
}

#[test]
fn aliases_quote_what_they_repeat() {
    let p = policy(&[]);
    rewrites(&p, "analyst", r#"SELECT lower('a"b')"#, r#"SELECT "lower"('a"b') AS "lower('a""b')""#);
}


#[test]
fn metadata_is_answered_from_the_listing() {
    let p = policy(&[]);
    let out = run(&p, "analyst", "SELECT table_name FROM information_schema.tables t WHERE t.table_schema = 'main'").unwrap();
    assert!(out.starts_with("SELECT table_name FROM (SELECT * FROM (SELECT database_name AS table_catalog"), "{out}");
    assert!(out.contains(r#""acl_meta"('tables', '{"#) && out.ends_with(r#") t WHERE t.table_schema = 'main'"#), "{out}");
    assert!(!out.contains("phys"), "{out}");
    // duckdb_*() are answered even though the meta category is not granted
    let out = run(&p, "analyst", "SELECT * FROM duckdb_columns()").unwrap();
    assert!(out.contains("acl_meta\"('columns'") && out.ends_with(r#"AS "duckdb_columns""#), "{out}");
    assert!(run(&p, "analyst", "SELECT * FROM duckdb_constraints()").is_err());
    let out = run(&p, "analyst", "SHOW TABLES").unwrap();
    assert!(out.starts_with("SELECT * FROM (SELECT table_name AS name FROM") && out.contains("IS NOT DISTINCT FROM 'sales'"), "{out}");
    assert!(run(&p, "analyst", "SHOW ALL TABLES").unwrap().contains("acl_meta\"('columns'"));
    assert!(run(&p, "analyst", "SHOW DATABASES").unwrap().contains("acl_meta\"('databases'"));
    // SHOW TABLES FROM a catalog the principal sees; anything else is the unknown-name refusal
    let out = run(&p, "analyst", "SHOW TABLES FROM sales").unwrap();
    assert!(out.contains("WHERE database_name = 'sales' ORDER BY name"), "{out}");
    refused(&p, "analyst", "SHOW TABLES FROM phys", |e| matches!(e, AclError::NotGranted(NotGranted::SchemaOrCatalog)));
    refused(&p, "analyst", "SHOW TABLES LIKE 'o%'", |e| matches!(e, AclError::StatementNotPermitted(StatementNotPermitted::Kind { .. })));
    refused(&p, "analyst", "PRAGMA database_list", |e| matches!(e, AclError::StatementNotPermitted(StatementNotPermitted::Kind { .. })));
    // PRAGMA table_info places its name like a FROM item; bare duckdb_tables is the listing
    let out = run(&p, "analyst", "PRAGMA table_info('orders')").unwrap();
    assert!(out.contains("table_name = 'orders'") && !out.contains("phys"), "{out}");
    refused(&p, "analyst", "PRAGMA table_info('phys.main.orders')", |e| matches!(e, AclError::NotGranted(_)));
    assert!(run(&p, "analyst", "SELECT * FROM duckdb_tables").unwrap().contains("acl_meta\"('tables'"));
    let cte = run(&p, "analyst", "WITH duckdb_tables AS (SELECT 1 AS x) SELECT * FROM duckdb_tables").unwrap();
    assert!(!cte.contains("acl_meta"), "{cte}");
    // the listing function itself is not the principal's
    refused(&p, "analyst", "SELECT * FROM acl_meta('tables', '{}')", not_permitted("acl_meta"));
    refused(&p, "analyst", "SELECT * FROM duckdb_tables(1)", |e| matches!(e, AclError::BadCall(BadCall::TakesNoArguments { .. })));
    // names fold as DuckDB folds them, in every spelling the listing accepts
    for sql in ["SELECT * FROM INFORMATION_SCHEMA.Tables", "SELECT * FROM System.Information_Schema.TABLES"] {
        assert!(run(&p, "analyst", sql).unwrap().contains("acl_meta\"('tables'"), "{sql}");
    }
    for sql in ["SELECT * FROM DuckDB_Columns()", "SELECT * FROM MAIN.duckdb_columns()", "SELECT * FROM system.Main.DUCKDB_COLUMNS()"] {
        assert!(run(&p, "analyst", sql).unwrap().contains("acl_meta\"('columns'"), "{sql}");
    }
    refused(&p, "analyst", "SELECT * FROM DUCKDB_TABLES(1)", |e| {
        matches!(e, AclError::BadCall(BadCall::TakesNoArguments { name }) if name == "duckdb_tables")
    });
}

#[test]
fn current_database_is_the_main_catalog() {
    let p = policy(&[]);
    rewrites(&p, "analyst", "SELECT current_database(), current_schema()", r#"SELECT 'sales' AS "current_database()", 'main' AS "current_schema()""#);
    let p = policy(&["CREATE ROLE nomain", "GRANT CATALOG sales TO ROLE nomain"]);
    rewrites(&p, "nomain", "SELECT current_database() AS d", "SELECT NULL AS d");
    // qualified spellings too, even with the meta category granted: never the physical name
    let p = policy(&["GRANT FUNCTION CATEGORY meta TO ALL ROLES"]);
    rewrites(&p, "analyst", "SELECT pg_catalog.current_database() AS a, system.main.current_schema() AS b", "SELECT 'sales' AS a, 'main' AS b");
}
