//! Tests of `parse` (kept apart so parse.rs stays short).
use super::*;
use super::super::{Command, CreateMode, ObjectWord};
use crate::policy::{Caps, Declared, ObjKey};
use crate::error::AclError;

fn key(c: &str, s: &str, n: &str) -> ObjKey {
    ObjKey {
        catalog: c.into(),
        schema: s.into(),
        name: n.into(),
    }
}

fn msg(sql: &str) -> String {
    parse(sql).expect_err(sql).to_string()
}

fn syntax(sql: &str) -> String {
    match parse(sql) {
        Err(AclError::Syntax(m)) => m.to_string(),
        other => panic!("{sql}: expected a syntax error, got {other:?}"),
    }
}

fn invalid(sql: &str) -> String {
    match parse(sql) {
        Err(AclError::Invalid(m)) => m.to_string(),
        other => panic!("{sql}: expected an invalid error, got {other:?}"),
    }
}

#[test]
fn create_catalog_forms() {
    assert_eq!(
        parse("CREATE VIRTUAL CATALOG sales").unwrap(),
        Command::CreateCatalog {
            name: "sales".into(),
            comment: None,
            mode: CreateMode::Create
        }
    );
    assert_eq!(
        parse("create or replace virtual catalog Sales comment 'It''s sales';").unwrap(),
        Command::CreateCatalog {
            name: "sales".into(),
            comment: Some("It's sales".into()),
            mode: CreateMode::OrReplace
        }
    );
    assert_eq!(
        parse("CREATE VIRTUAL CATALOG IF NOT EXISTS \"My Cat\"").unwrap(),
        Command::CreateCatalog {
            name: "my cat".into(),
            comment: None,
            mode: CreateMode::IfNotExists
        }
    );
    assert_eq!(
        parse("/* c */ CREATE VIRTUAL CATALOG s COMMENT $$x$$").unwrap(),
        Command::CreateCatalog {
            name: "s".into(),
            comment: Some("x".into()),
            mode: CreateMode::Create
        }
    );
}

#[test]
fn or_replace_with_if_not_exists_is_refused() {
    assert!(
        syntax("CREATE OR REPLACE VIRTUAL CATALOG IF NOT EXISTS s").contains("cannot be combined")
    );
    assert!(syntax("CREATE OR REPLACE ROLE IF NOT EXISTS r").contains("cannot be combined"));
    assert!(
        syntax("CREATE OR REPLACE VIRTUAL TABLE IF NOT EXISTS c.t AS a.b.c")
            .contains("cannot be combined")
    );
}

#[test]
fn drop_catalog_forms() {
    assert_eq!(
        parse("DROP VIRTUAL CATALOG sales").unwrap(),
        Command::DropCatalog {
            name: "sales".into(),
            if_exists: false,
            cascade: false
        }
    );
    assert_eq!(
        parse("drop virtual catalog if exists SALES cascade").unwrap(),
        Command::DropCatalog {
            name: "sales".into(),
            if_exists: true,
            cascade: true
        }
    );
}

#[test]
fn create_table_forms() {
    assert_eq!(
        parse("CREATE VIRTUAL TABLE sales.orders AS Prod.Main.\"Orders\" COMMENT 'o'").unwrap(),
        Command::CreateTable { slice: Default::default(), declared: Declared::default(),
            key: key("sales", "main", "orders"),
            target: PhysName {
                db: "Prod".into(),
                schema: "Main".into(),
                name: "Orders".into()
            },
            comment: Some("o".into()),
            mode: CreateMode::Create,
        }
    );
    assert_eq!(
        parse("create or replace virtual table Sales.EU.Orders as p.s.t").unwrap(),
        Command::CreateTable { slice: Default::default(), declared: Declared::default(),
            key: key("sales", "eu", "orders"),
            target: PhysName {
                db: "p".into(),
                schema: "s".into(),
                name: "t".into()
            },
            comment: None,
            mode: CreateMode::OrReplace,
        }
    );
    match parse("CREATE VIRTUAL TABLE IF NOT EXISTS c.\"a.b\" AS p.s.t").unwrap() {
        Command::CreateTable { key: k, mode, .. } => {
            assert_eq!(k, key("c", "main", "a.b"));
            assert_eq!(mode, CreateMode::IfNotExists);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn physical_name_needs_three_parts() {
    for sql in [
        "CREATE VIRTUAL TABLE c.t AS s.t",
        "CREATE VIRTUAL TABLE c.t AS t",
        "CREATE VIRTUAL TABLE c.t AS a.b.c.d",
    ] {
        assert_eq!(invalid(sql), "the physical name must be db.schema.table");
    }
    assert!(syntax("CREATE VIRTUAL TABLE c.t AS (SELECT 1)")
        .contains("expected a physical name, found '('"));
    assert!(syntax("CREATE VIRTUAL TABLE c.t p.s.t").contains("expected AS, found p"));
}

#[test]
fn virtual_name_needs_two_or_three_parts() {
    let m = "a virtual table name must be catalog.table or catalog.schema.table";
    assert_eq!(invalid("CREATE VIRTUAL TABLE t AS a.b.c"), m);
    assert_eq!(invalid("CREATE VIRTUAL TABLE a.b.c.d AS a.b.c"), m);
    assert_eq!(invalid("DROP VIRTUAL TABLE t"), m);
    assert_eq!(invalid("GRANT TABLE t TO ROLE r"), m);
    assert_eq!(invalid("REVOKE OBJECT t FROM ROLE r"), m);
}

#[test]
fn drop_table_forms() {
    assert_eq!(
        parse("DROP VIRTUAL TABLE c.t").unwrap(),
        Command::DropTable {
            key: key("c", "main", "t"),
            if_exists: false
        }
    );
    assert_eq!(
        parse("drop virtual table if exists C.S.T").unwrap(),
        Command::DropTable {
            key: key("c", "s", "t"),
            if_exists: true
        }
    );
    assert!(syntax("DROP VIRTUAL TABLE c.t CASCADE")
        .contains("expected end of statement, found CASCADE"));
}

#[test]
fn role_forms() {
    assert_eq!(
        parse("CREATE ROLE Analyst").unwrap(),
        Command::CreateRole {
            name: "analyst".into(),
            mode: CreateMode::Create
        }
    );
    assert_eq!(
        parse("create or replace role \"Analyst\"").unwrap(),
        Command::CreateRole {
            name: "analyst".into(),
            mode: CreateMode::OrReplace
        }
    );
    assert_eq!(
        parse("CREATE ROLE IF NOT EXISTS r").unwrap(),
        Command::CreateRole {
            name: "r".into(),
            mode: CreateMode::IfNotExists
        }
    );
    assert_eq!(
        parse("DROP ROLE r").unwrap(),
        Command::DropRole {
            name: "r".into(),
            if_exists: false
        }
    );
    assert_eq!(
        parse("drop role if exists R;").unwrap(),
        Command::DropRole {
            name: "r".into(),
            if_exists: true
        }
    );
    assert!(syntax("CREATE ROLE a.b").contains("a role name has a single part"));
    assert!(syntax("CREATE ROLE 'r'").contains("expected a role name, found a string"));
}

#[test]
fn grant_catalog_forms() {
    assert_eq!(
        parse("GRANT CATALOG sales TO ROLE analyst").unwrap(),
        Command::GrantCatalog { slice: Default::default(),
            catalog: "sales".into(),
            role: "analyst".into(),
            caps: Caps::DATA,
            main: false
        }
    );
    let both = Command::GrantCatalog { slice: Default::default(),
        catalog: "sales".into(),
        role: "analyst".into(),
        caps: Caps::SELECT.union(Caps::EXPLAIN),
        main: true,
    };
    assert_eq!(
        parse("grant catalog Sales to role Analyst with (select, explain) main").unwrap(),
        both
    );
    assert_eq!(
        parse("GRANT CATALOG sales TO ROLE analyst MAIN WITH (SELECT, Explain)").unwrap(),
        both
    );
    assert_eq!(
        parse("GRANT CATALOG c TO ROLE r WITH (reader, temp)").unwrap(),
        Command::GrantCatalog { slice: Default::default(),
            catalog: "c".into(),
            role: "r".into(),
            caps: Caps::SELECT.union(Caps::TEMP),
            main: false
        }
    );
    let admin = Caps::DATA
        .union(Caps::CREATE)
        .union(Caps::DROP)
        .union(Caps::MANAGE);
    assert_eq!(
        parse("GRANT CATALOG c TO ROLE r WITH (admin)").unwrap(),
        Command::GrantCatalog { slice: Default::default(),
            catalog: "c".into(),
            role: "r".into(),
            caps: admin,
            main: false
        }
    );
    assert_eq!(
        parse("GRANT CATALOG c TO ROLE r WITH (\"writer\") MAIN").unwrap(),
        Command::GrantCatalog { slice: Default::default(),
            catalog: "c".into(),
            role: "r".into(),
            caps: Caps::DATA,
            main: true
        }
    );
}

#[test]
fn grant_clause_errors() {
    assert!(
        syntax("GRANT CATALOG c TO ROLE r WITH ()").contains("expected a capability, found ')'")
    );
    assert!(syntax("GRANT CATALOG c TO ROLE r WITH select")
        .contains("expected '(' after WITH, found select"));
    assert!(syntax("GRANT CATALOG c TO ROLE r WITH (select")
        .contains("expected ',' or ')', found end of statement"));
    assert!(syntax("GRANT CATALOG c TO ROLE r WITH (select, 1)")
        .contains("expected a capability, found a number"));
    assert!(
        syntax("GRANT CATALOG c TO ROLE r WITH (select) WITH (insert)")
            .contains("WITH or CAPS given twice")
    );
    assert!(syntax("GRANT CATALOG c TO ROLE r MAIN MAIN").contains("MAIN given twice"));
    assert!(syntax("GRANT CATALOG c TO r").contains("expected ROLE, found r"));
    assert!(syntax("GRANT CATALOG TO ROLE r").contains("expected a catalog name, found TO"));
    assert!(syntax("GRANT CATALOG c FROM ROLE r").contains("expected TO, found FROM"));
    assert!(syntax("GRANT CATALOG a.b TO ROLE r").contains("a catalog name has a single part"));
    assert!(invalid("GRANT CATALOG c TO ROLE r WITH (selec)")
        .starts_with("unknown capability \"selec\""));
    assert!(syntax("GRANT TABLE c.t TO ROLE r MAIN").contains("MAIN applies only to GRANT CATALOG"));
    assert!(syntax("GRANT SELECT ON c.t TO r")
        .contains("expected CATALOG, TABLE, VIEW or OBJECT, found SELECT"));
}

#[test]
fn grant_object_forms() {
    assert_eq!(
        parse("GRANT TABLE c.t TO ROLE r").unwrap(),
        Command::GrantObject { slice: Default::default(),
            key: key("c", "main", "t"),
            role: "r".into(),
            caps: None,
            word: ObjectWord::Table
        }
    );
    assert_eq!(
        parse("grant view C.S.V to role R with (reader)").unwrap(),
        Command::GrantObject { slice: Default::default(),
            key: key("c", "s", "v"),
            role: "r".into(),
            caps: Some(Caps::SELECT),
            word: ObjectWord::View
        }
    );
    assert_eq!(
        parse("GRANT OBJECT c.t TO ROLE r WITH (select, insert, writer)").unwrap(),
        Command::GrantObject { slice: Default::default(),
            key: key("c", "main", "t"),
            role: "r".into(),
            caps: Some(Caps::DATA),
            word: ObjectWord::Object
        }
    );
}

#[test]
fn object_grants_take_only_data_capabilities() {
    for (w, sql) in [
        (
            "explain",
            "GRANT TABLE c.t TO ROLE r WITH (select, explain)",
        ),
        ("admin", "GRANT OBJECT c.t TO ROLE r WITH (Admin)"),
        ("manage", "GRANT VIEW c.t TO ROLE r WITH (MANAGE)"),
    ] {
        assert_eq!(
            invalid(sql),
            format!("capability {w} can only be granted on a catalog")
        );
    }
}

#[test]
fn revoke_forms() {
    assert_eq!(
        parse("REVOKE CATALOG Sales FROM ROLE Analyst").unwrap(),
        Command::RevokeCatalog {
            catalog: "sales".into(),
            role: "analyst".into()
        }
    );
    assert_eq!(
        parse("revoke table c.s.t from role r").unwrap(),
        Command::RevokeObject {
            key: key("c", "s", "t"),
            role: "r".into(),
            word: ObjectWord::Table
        }
    );
    assert!(syntax("REVOKE CATALOG c TO ROLE r").contains("expected FROM, found TO"));
    assert!(syntax("REVOKE CATALOG c FROM ROLE r WITH (select)")
        .contains("expected end of statement, found WITH"));
}

#[test]
fn out_of_scope_forms_are_not_supported_yet() {
    for (sql, what) in [
        (
            "GRANT CATALOG c TO ROLE r EXPIRES '2030-01-01'",
            "EXPIRES in GRANT CATALOG",
        ),
        ("GRANT SCHEMA c.s TO ROLE r RLS (a = 1)", "RLS in GRANT SCHEMA"),
    ] {
        assert_eq!(syntax(sql), format!("{what} is not supported yet"), "{sql}");
    }
}

#[test]
fn trailing_input_is_refused() {
    assert!(parse("DROP ROLE r;").is_ok());
    assert!(syntax("DROP ROLE r;;").contains("expected end of statement, found ';'"));
    assert!(syntax("DROP ROLE r; DROP ROLE s").contains("expected end of statement, found DROP"));
    assert!(
        syntax("CREATE VIRTUAL CATALOG c extra").contains("expected end of statement, found extra")
    );
    assert!(syntax("DROP VIRTUAL CATALOG c CASCADE CASCADE").contains("found CASCADE"));
}

#[test]
fn other_syntax_errors() {
    assert_eq!(msg("SELECT 1"), "acl: could not parse management statement: expected CREATE, DROP, ALTER, GRANT or REVOKE, found SELECT");
    assert!(syntax("").contains("found end of statement"));
    assert!(syntax("CREATE TABLE t (a INT)").contains("expected VIRTUAL, ROLE, ISSUER or FUNCTION CATEGORY, found TABLE"));
    assert!(syntax("DROP TABLE t").contains("expected VIRTUAL, RELATION, ROLE, ISSUER, MAP or FUNCTION CATEGORY, found TABLE"));
    assert!(syntax("CREATE VIRTUAL THING x")
        .contains("expected CATALOG, SCHEMA, TABLE, VIEW, TABLE FUNCTION, SCALAR or REFERENCE, found THING"));
    assert!(syntax("CREATE VIRTUAL CATALOG")
        .contains("expected a catalog name, found end of statement"));
    assert!(syntax("CREATE VIRTUAL CATALOG c COMMENT x")
        .contains("expected a string after COMMENT, found x"));
    assert!(syntax("CREATE VIRTUAL CATALOG \"\"").contains("a name must not be empty"));
    assert!(syntax("CREATE VIRTUAL CATALOG c COMMENT 'open")
        .starts_with("could not parse management statement: "));
    assert!(syntax("CREATE VIRTUAL TABLE c. AS p.s.t")
        .contains("expected a virtual table name, found AS"));
}

#[test]
fn long_input_is_not_echoed() {
    let long = "x".repeat(500);
    let m = syntax(&format!("CREATE VIRTUAL CATALOG c {long}"));
    assert!(m.len() < 150, "{m}");
    let m = syntax(&format!("CREATE VIRTUAL CATALOG c '{long}'"));
    assert!(m.ends_with("found a string"), "{m}");
}

#[test]
fn keywords_can_be_names() {
    // `main` is the default schema's name and must work as a name part.
    assert_eq!(
        parse("DROP VIRTUAL TABLE c.main.t").unwrap(),
        Command::DropTable {
            key: key("c", "main", "t"),
            if_exists: false
        }
    );
    assert_eq!(
        parse("CREATE ROLE \"to\"").unwrap(),
        Command::CreateRole {
            name: "to".into(),
            mode: CreateMode::Create
        }
    );
    assert_eq!(
        parse("GRANT CATALOG \"select\" TO ROLE role MAIN").unwrap(),
        Command::GrantCatalog { slice: Default::default(),
            catalog: "select".into(),
            role: "role".into(),
            caps: Caps::DATA,
            main: true
        }
    );
}

#[test]
fn slices_parse() {
    match parse("CREATE VIRTUAL TABLE c.t AS p.s.t COLUMNS (id, client = customer, ssn = NULL, mail = left(email, 2) || '…') RLS (tenant = acl_claim('tenant')) COMMENT 'x'").unwrap() {
        Command::CreateTable { slice, .. } => {
            assert_eq!(slice.rls.as_deref(), Some("tenant = acl_claim('tenant')"));
            let cols = slice.columns.unwrap();
            assert_eq!(cols.len(), 4);
            assert_eq!(cols[0], crate::policy::Column { name: "id".into(), expr: None });
            assert_eq!(cols[1].expr.as_deref(), Some("customer"));
            assert_eq!(cols[3].expr.as_deref(), Some("left(email, 2) || '…'"));
        }
        other => panic!("{other:?}"),
    }
    match parse("GRANT CATALOG c TO ROLE r WITH (select) RLS (region = 'eu') MAIN COLUMNS (id)").unwrap() {
        Command::GrantCatalog { slice, main, .. } => {
            assert!(main);
            assert_eq!(slice.rls.as_deref(), Some("region = 'eu'"));
        }
        other => panic!("{other:?}"),
    }
    assert!(msg("CREATE VIRTUAL TABLE c.t AS p.s.t RLS (id IN (SELECT 1))").contains("subqueries"));
    assert!(msg("CREATE VIRTUAL TABLE c.t AS p.s.t RLS (x = acl_claim(1))").contains("one string literal"));
    assert!(msg("CREATE VIRTUAL TABLE c.t AS p.s.t COLUMNS (a, a)").contains("listed twice"));
    assert!(msg("CREATE VIRTUAL TABLE c.t AS p.s.t RLS (a = 1) RLS (b = 1)").contains("RLS given twice"));
}

#[test]
fn views_parse() {
    assert_eq!(
        parse("CREATE OR REPLACE VIRTUAL VIEW sales.big AS SELECT id FROM phys.main.orders WHERE amount > 10 COMMENT 'x'").unwrap(),
        Command::CreateView {
            key: key("sales", "main", "big"),
            query: "SELECT id FROM phys.main.orders WHERE amount > 10".into(),
            comment: Some("x".into()),
            mode: CreateMode::OrReplace,
            declared: Declared::default(),
        }
    );
    assert_eq!(
        parse("DROP VIRTUAL VIEW IF EXISTS sales.big").unwrap(),
        Command::DropView { key: key("sales", "main", "big"), if_exists: true }
    );
    assert!(msg("CREATE VIRTUAL VIEW sales.v AS").contains("expected a query after AS"));
}

#[test]
fn virtual_schema_forms() {
    assert_eq!(
        parse("CREATE OR REPLACE VIRTUAL SCHEMA Sales.Lake AS \"LakeDB\".raw COMMENT 'x'").unwrap(),
        Command::CreateSchema {
            catalog: "sales".into(),
            schema: "lake".into(),
            target: ("LakeDB".into(), "raw".into()),
            comment: Some("x".into()),
            mode: CreateMode::OrReplace
        }
    );
    assert_eq!(
        parse("DROP VIRTUAL SCHEMA IF EXISTS c.s").unwrap(),
        Command::DropSchema { catalog: "c".into(), schema: "s".into(), if_exists: true, cascade: false }
    );
    assert!(invalid("CREATE VIRTUAL SCHEMA c AS p.s").contains("catalog.schema"));
    assert!(invalid("CREATE VIRTUAL SCHEMA c.s AS p.s.t").contains("db.schema"));
}

#[test]
fn schema_grant_forms() {
    assert_eq!(
        parse("GRANT SCHEMA c.s TO ROLE r").unwrap(),
        Command::GrantSchema { catalog: "c".into(), schema: "s".into(), role: "r".into(), caps: Caps::DATA, into: None, comment: None }
    );
    assert_eq!(
        parse("GRANT SCHEMA c.s TO ROLE r WITH (select, create, drop)").unwrap(),
        Command::GrantSchema {
            catalog: "c".into(),
            schema: "s".into(),
            role: "r".into(),
            caps: Caps::SELECT.union(Caps::CREATE).union(Caps::DROP),
            into: None,
            comment: None,
        }
    );
    assert_eq!(
        parse("REVOKE SCHEMA c.s FROM ROLE r").unwrap(),
        Command::RevokeSchema { catalog: "c".into(), schema: "s".into(), role: "r".into() }
    );
    for cap in ["temp", "explain", "manage", "secrets"] {
        assert_eq!(
            invalid(&format!("GRANT SCHEMA c.s TO ROLE r WITH ({cap})")),
            format!("capability {cap} can only be granted on a catalog")
        );
    }
}
