//! The metadata rule's own tests (relation SQL, kinds).
use super::*;

#[test]
fn every_relation_parses_and_names_only_the_listing() {
    let p = Policy::default();
    let principal = Principal::role("r");
    let view = View::new(&p, &principal);
    assert!(view.is_err()); // no such role; relation_sql is checked without a view below
    for name in ["duckdb_databases", "duckdb_schemas", "duckdb_tables", "duckdb_views", "duckdb_columns", "schemata",
        "tables", "columns", "show tables", "show all tables", "show databases", "show schemas", "show tables from",
        "pragma table_info"]
    {
        let mut sql = relation_sql(name).unwrap().replace("{main}", "NULL").replace("{filter}", "true");
        for (k, _) in KINDS {
            sql = sql.replace(&format!("{{{k}}}"), &format!("{META_FN}('{k}', '{{}}')"));
        }
        let q = Parser::new(&DuckDbDialect {}).try_with_sql(&sql).and_then(|mut p| p.parse_query());
        assert!(q.is_ok(), "{name}: {q:?}");
    }
}

/// `relation_query` takes the text's length from the room before parsing: a lower bound of
/// what the statement grows by only if the printed form is never shorter.
#[test]
fn a_relation_prints_no_shorter_than_it_takes() {
    let p = policy();
    let principal = Principal::role("analyst");
    let view = View::new(&p, &principal).unwrap();
    for name in ["duckdb_databases", "duckdb_schemas", "duckdb_tables", "duckdb_views", "duckdb_columns", "schemata",
        "tables", "columns", "show tables", "show all tables", "show databases", "show schemas", "show tables from",
        "pragma table_info"]
    {
        let mut room = super::super::Room::new(1 << 20);
        let printed = relation_query(&view, name, &mut room).unwrap().to_string().len();
        let taken = (1 << 20) - room.left();
        assert!(printed >= taken && taken > 0, "{name}: printed {printed} < taken {taken}");
        assert!(relation_query(&view, name, &mut super::super::Room::new(taken - 1)).is_err());
    }
}

#[test]
fn the_principal_round_trips() {
    let mut p = Principal::role("Ana'lyst");
    p.claims.insert("tenant".into(), Some("a'\"b".into()));
    p.claims.insert("region".into(), None);
    assert_eq!(principal_from_arg(&principal_arg(&p)).unwrap(), p);
    assert!(principal_from_arg("{").is_err());
}

fn policy() -> Policy {
    let mut p = Policy::default();
    for s in [
        "CREATE VIRTUAL CATALOG sales",
        "CREATE VIRTUAL TABLE sales.orders AS phys.main.orders_raw",
        "CREATE VIRTUAL TABLE sales.people AS phys.main.payroll COLUMNS (id, ssn = left(secret, 2)) RLS (tenant = acl_claim('t'))",
        "CREATE VIRTUAL VIEW sales.v AS SELECT id FROM phys.main.orders_raw",
        "CREATE ROLE analyst CLAIMS (t = 'acme')",
        "GRANT CATALOG sales TO ROLE analyst WITH (select) MAIN",
    ] {
        crate::admin::apply(&mut p, &crate::admin::parse(s).unwrap()).unwrap();
    }
    p
}

#[test]
fn listing_rows_hold_virtual_names_and_the_exposed_shapes() {
    let p = policy();
    let arg = principal_arg(&Principal::role("analyst"));
    let mut asked = Vec::new();
    let mut describe = |sql: &str| {
        asked.push(sql.to_string());
        let cols = if sql.contains("left(secret, 2)") {
            vec![("id".to_string(), "INTEGER".to_string()), ("ssn".into(), "VARCHAR".into())]
        } else {
            vec![("id".to_string(), "INTEGER".to_string())]
        };
        Some(std::sync::Arc::new(cols))
    };
    let rows = listing_rows(&p, &arg, &mut describe, &mut |_, _| None).unwrap();
    // each object's exposed query, claims substituted, is what gets bound
    assert_eq!(asked.len(), 3);
    assert!(asked.iter().any(|q| q.contains("tenant = 'acme'")), "{asked:?}");
    let all = format!("{rows:?}");
    for physical in ["phys", "orders_raw", "payroll", "secret", "tenant"] {
        assert!(!all.contains(physical), "{physical} in {all}");
    }
    let tables: Vec<(&str, &str)> =
        rows.tables.iter().map(|r| (r[2].as_deref().unwrap(), r[3].as_deref().unwrap())).collect();
    assert_eq!(tables, [("orders", "BASE TABLE"), ("people", "BASE TABLE"), ("v", "VIEW")]);
    assert_eq!(rows.columns.len(), 4);
    // a shape that does not bind: listed without columns, marked broken (issue 31, finding 4)
    let rows = listing_rows(&p, &arg, &mut |_| None, &mut |_, _| None).unwrap();
    assert_eq!((rows.tables.len(), rows.columns.len()), (3, 0));
    assert!(rows.tables.iter().all(|r| r[4].as_deref() == Some(BROKEN) && r[5].is_none()), "{:?}", rows.tables);
    let all = format!("{rows:?}");
    assert!(!all.contains("phys") && !all.contains("secret"), "{all}");
    // a principal whose role is gone gets an error, not someone else's listing
    assert!(listing_rows(&p, &principal_arg(&Principal::role("ghost")), &mut |_| None, &mut |_, _| None).is_err());
}

#[test]
fn a_virtual_schema_lists_what_its_physical_schema_holds_under_virtual_names() {
    let mut p = policy();
    for s in [
        "CREATE VIRTUAL SCHEMA sales.lake AS lakedb.raw_zone",
        "CREATE ROLE reader",
        "GRANT SCHEMA sales.lake TO ROLE reader WITH (select, insert)",
        "CREATE ROLE maker",
        "GRANT SCHEMA sales.lake TO ROLE maker WITH (create, drop)",
    ] {
        crate::admin::apply(&mut p, &crate::admin::parse(s).unwrap()).unwrap();
    }
    let mut enumerated = Vec::new();
    let mut schema_objects = |db: &str, schema: &str| {
        enumerated.push(format!("{db}.{schema}"));
        Some(vec![("zeta_v".to_string(), ObjectType::View), ("events".to_string(), ObjectType::Table)])
    };
    let mut asked = Vec::new();
    let mut describe = |sql: &str| {
        asked.push(sql.to_string());
        Some(std::sync::Arc::new(vec![("id".to_string(), "BIGINT".to_string())]))
    };
    let rows = listing_rows(&p, &principal_arg(&Principal::role("reader")), &mut describe, &mut schema_objects).unwrap();
    assert_eq!(enumerated, ["lakedb.raw_zone"]);
    assert_eq!(asked, [r#"SELECT * FROM "lakedb"."raw_zone"."events""#, r#"SELECT * FROM "lakedb"."raw_zone"."zeta_v""#]);
    let tables: Vec<Vec<&str>> =
        rows.tables.iter().map(|r| r.iter().map(|v| v.as_deref().unwrap_or("NULL")).collect()).collect();
    assert_eq!(
        tables,
        [
            ["sales", "lake", "events", "BASE TABLE", "NULL", "1", "YES", "false", "CREATE TABLE lake.events(id BIGINT);"],
            ["sales", "lake", "zeta_v", "VIEW", "NULL", "1", "NO", "false", "NULL"]
        ]
    );
    assert_eq!(rows.columns.len(), 2);
    let schemas: Vec<&str> = rows.schemas.iter().map(|r| r[1].as_deref().unwrap()).collect();
    assert_eq!(schemas, ["lake", "main"]);
    let all = format!("{rows:?}");
    assert!(!all.contains("lakedb") && !all.contains("raw_zone"), "{all}");
    // a grant without a data capability shows the schema, not what is in it
    let rows = listing_rows(&p, &principal_arg(&Principal::role("maker")), &mut |_| None, &mut |_, _| {
        panic!("enumerated for a grant without data capabilities")
    })
    .unwrap();
    assert_eq!((rows.schemas.len(), rows.tables.len()), (2, 0));
    // a catalog grant with a slice does not reach into the virtual schema; one without does
    for s in ["CREATE ROLE sliced", "GRANT CATALOG sales TO ROLE sliced WITH (select) RLS (id > 0)", "CREATE ROLE plain",
        "GRANT CATALOG sales TO ROLE plain WITH (select)", "CREATE ROLE empty", "GRANT CATALOG sales TO ROLE empty WITH (select)",
        "GRANT SCHEMA sales.lake TO ROLE empty CAPS '{}'"]
    {
        crate::admin::apply(&mut p, &crate::admin::parse(s).unwrap()).unwrap();
    }
    for role in ["sliced", "empty"] {
        let rows =
            listing_rows(&p, &principal_arg(&Principal::role(role)), &mut |_| None, &mut |_, _| panic!("enumerated")).unwrap();
        assert!(rows.schemas.iter().all(|r| r[1].as_deref() != Some("lake")), "{role}");
    }
    let rows = listing_rows(
        &p,
        &principal_arg(&Principal::role("plain")),
        &mut |_| Some(std::sync::Arc::new(vec![("id".to_string(), "BIGINT".to_string())])),
        &mut |_, _| Some(vec![("events".to_string(), ObjectType::Table)]),
    )
    .unwrap();
    assert!(rows.schemas.iter().any(|r| r[1].as_deref() == Some("lake")));
    assert!(rows.tables.iter().any(|r| r[1].as_deref() == Some("lake") && r[2].as_deref() == Some("events") && r[6].as_deref() == Some("NO")));
}

#[test]
fn numeric_columns_follow_duckdb() {
    assert_eq!(numeric("DECIMAL(10,2)"), (Some("10".into()), Some("10".into()), Some("2".into())));
    assert_eq!(numeric("INTEGER").0.as_deref(), Some("32"));
    assert_eq!(numeric("VARCHAR"), (None, None, None));
}

/// A token's claims travel in the listing's argument: text in them that looks like a hole of the
/// relation's SQL is data, never filled (it would put quotes inside the argument's literal).
#[test]
fn claims_that_look_like_holes_stay_in_the_argument() {
    let p = policy();
    let mut principal = Principal::role("analyst");
    principal.claims.insert("k".into(), Some("{columns}' OR true --{filter}{main}".into()));
    let view = View::new(&p, &principal).unwrap();
    for name in ["show all tables", "tables", "show tables from"] {
        let q = relation_query_where(&view, name, "true", &mut super::super::Room::new(1 << 20)).unwrap();
        let mut args = Vec::new();
        let _ = sqlparser::ast::visit_expressions(&q, |e| {
            if let sqlparser::ast::Expr::Value(v) = e {
                if let sqlparser::ast::Value::SingleQuotedString(s) = &v.value {
                    args.push(s.clone());
                }
            }
            ControlFlow::<()>::Continue(())
        });
        let arg = args.iter().find(|a| a.starts_with('{')).expect("the principal's argument");
        assert_eq!(principal_from_arg(arg).unwrap().claims, principal.claims, "{name}");
    }
    assert!(fill("a {x", |_| Some(String::new())).is_err());
}
