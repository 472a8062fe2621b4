//! Tests of `apply`, driven through `parse` so they read like the statements an operator types.
use super::*;
use crate::admin::parse;
use crate::policy::{PhysName, DEFAULT_SCHEMA};

fn run(p: &mut Policy, sql: &str) -> Result<String> {
    apply(p, &parse(sql).expect(sql))
}

fn ok(p: &mut Policy, sql: &str) -> String {
    run(p, sql).unwrap_or_else(|e| panic!("{sql}: {e}"))
}

/// The error's message, and that the policy's version did not move.
fn invalid(p: &mut Policy, sql: &str) -> String {
    let before = p.version;
    match run(p, sql) {
        Err(AclError::Invalid(m)) => {
            assert_eq!(
                p.version, before,
                "{sql}: a failed command bumped the version"
            );
            m.to_string()
        }
        other => panic!("{sql}: expected an invalid error, got {other:?}"),
    }
}

fn key(c: &str, s: &str, n: &str) -> ObjKey {
    ObjKey {
        catalog: c.into(),
        schema: s.into(),
        name: n.into(),
    }
}

/// Catalog `sales` with `orders` and `eu.customers`, roles `analyst` and `clerk`.
fn setup() -> Policy {
    let mut p = Policy::default();
    for sql in [
        "CREATE VIRTUAL CATALOG sales COMMENT 'sales data'",
        "CREATE VIRTUAL TABLE sales.orders AS prod.main.orders",
        "CREATE VIRTUAL TABLE sales.eu.customers AS prod.crm.Customers",
        "CREATE ROLE analyst",
        "CREATE ROLE clerk",
    ] {
        ok(&mut p, sql);
    }
    p
}

#[test]
fn create_catalog() {
    let mut p = Policy::default();
    assert_eq!(
        ok(&mut p, "CREATE VIRTUAL CATALOG Sales COMMENT 'x'"),
        "CREATE VIRTUAL CATALOG sales"
    );
    assert_eq!(p.version, 1);
    assert_eq!(p.catalogs["sales"].comment.as_deref(), Some("x"));
    assert_eq!(
        invalid(&mut p, "CREATE VIRTUAL CATALOG sales"),
        "virtual catalog \"sales\" already exists"
    );
    assert_eq!(
        ok(
            &mut p,
            "CREATE VIRTUAL CATALOG IF NOT EXISTS SALES COMMENT 'y'"
        ),
        "CREATE VIRTUAL CATALOG sales (skipped: exists)"
    );
    assert_eq!(p.catalogs["sales"].comment.as_deref(), Some("x"));
    assert_eq!(p.version, 2, "a skip is a success and bumps the version");
    assert_eq!(
        ok(&mut p, "CREATE VIRTUAL CATALOG \"My Cat\""),
        "CREATE VIRTUAL CATALOG \"my cat\""
    );
    assert!(p.catalogs.contains_key("my cat"));
}

#[test]
fn replace_catalog_empties_it_and_drops_object_grants() {
    let mut p = setup();
    ok(&mut p, "GRANT CATALOG sales TO ROLE analyst MAIN");
    ok(
        &mut p,
        "GRANT TABLE sales.orders TO ROLE analyst WITH (select)",
    );
    assert_eq!(
        ok(
            &mut p,
            "CREATE OR REPLACE VIRTUAL CATALOG sales COMMENT 'new'"
        ),
        "CREATE VIRTUAL CATALOG sales (replaced)"
    );
    let cat = &p.catalogs["sales"];
    assert!(cat.objects.is_empty());
    assert_eq!(cat.comment.as_deref(), Some("new"));
    let r = &p.roles["analyst"];
    assert!(r.object_grants.is_empty());
    assert_eq!(
        r.catalog_grants["sales"],
        CatalogGrant {
            caps: Caps::DATA,
            main: true, slice: Default::default()
        }
    );
    // OR REPLACE of a missing catalog simply creates it.
    assert_eq!(
        ok(&mut p, "CREATE OR REPLACE VIRTUAL CATALOG hr"),
        "CREATE VIRTUAL CATALOG hr"
    );
}

#[test]
fn drop_catalog() {
    let mut p = setup();
    assert_eq!(
        invalid(&mut p, "DROP VIRTUAL CATALOG hr"),
        "virtual catalog \"hr\" does not exist"
    );
    assert_eq!(
        ok(&mut p, "DROP VIRTUAL CATALOG IF EXISTS hr"),
        "DROP VIRTUAL CATALOG hr (skipped: does not exist)"
    );
    assert_eq!(
        invalid(&mut p, "DROP VIRTUAL CATALOG sales"),
        "virtual catalog \"sales\" is not empty (use CASCADE)"
    );
    ok(&mut p, "CREATE VIRTUAL CATALOG hr");
    ok(&mut p, "GRANT CATALOG sales TO ROLE analyst");
    ok(&mut p, "GRANT CATALOG hr TO ROLE analyst");
    ok(&mut p, "GRANT CATALOG sales TO ROLE clerk");
    ok(&mut p, "GRANT TABLE sales.eu.customers TO ROLE clerk");
    assert_eq!(
        ok(&mut p, "DROP VIRTUAL CATALOG sales CASCADE"),
        "DROP VIRTUAL CATALOG sales (and 2 objects)"
    );
    assert!(!p.catalogs.contains_key("sales"));
    assert_eq!(
        p.roles["analyst"].catalog_grants.keys().collect::<Vec<_>>(),
        ["hr"]
    );
    assert!(p.roles["clerk"].catalog_grants.is_empty());
    assert!(p.roles["clerk"].object_grants.is_empty());
    // An empty catalog still granted needs CASCADE (the reference system's rule: the refusal
    // names the roles), and the policy is unchanged.
    assert_eq!(
        invalid(&mut p, "DROP VIRTUAL CATALOG hr"),
        "virtual catalog \"hr\" is still granted to role \"analyst\" (revoke the grants or use CASCADE)"
    );
    ok(&mut p, "REVOKE CATALOG hr FROM ROLE analyst");
    assert_eq!(ok(&mut p, "DROP VIRTUAL CATALOG hr"), "DROP VIRTUAL CATALOG hr");
    assert!(p.roles["analyst"].catalog_grants.is_empty());
}

#[test]
fn create_table() {
    let mut p = setup();
    let rel = p.relation(&key("sales", "eu", "customers")).unwrap();
    assert_eq!(
        rel.kind,
        RelationKind::Table(PhysName {
            db: "prod".into(),
            schema: "crm".into(),
            name: "Customers".into()
        })
    );
    assert_eq!(
        invalid(&mut p, "CREATE VIRTUAL TABLE hr.people AS prod.main.people"),
        "virtual catalog \"hr\" does not exist"
    );
    assert_eq!(
        invalid(
            &mut p,
            "CREATE VIRTUAL TABLE IF NOT EXISTS hr.people AS prod.main.people"
        ),
        "virtual catalog \"hr\" does not exist"
    );
    assert_eq!(
        invalid(&mut p, "CREATE VIRTUAL TABLE sales.main.orders AS x.y.z"),
        "virtual table \"sales.orders\" already exists"
    );
    assert_eq!(
        invalid(&mut p, "CREATE VIRTUAL TABLE sales.EU.Customers AS x.y.z"),
        "virtual table \"sales.eu.customers\" already exists"
    );
    assert_eq!(
        ok(
            &mut p,
            "CREATE VIRTUAL TABLE IF NOT EXISTS sales.orders AS x.y.z"
        ),
        "CREATE VIRTUAL TABLE sales.orders (skipped: exists)"
    );
    assert_eq!(
        phys_db(&p, &key("sales", DEFAULT_SCHEMA, "orders")),
        "prod"
    );
    assert_eq!(
        ok(
            &mut p,
            "CREATE VIRTUAL TABLE sales.\"Q1\".\"Big Orders\" AS p.s.t COMMENT 'c'"
        ),
        "CREATE VIRTUAL TABLE sales.q1.\"big orders\""
    );
    assert_eq!(
        p.relation(&key("sales", "q1", "big orders"))
            .unwrap()
            .comment
            .as_deref(),
        Some("c")
    );
}

#[test]
fn replace_table_keeps_its_grants() {
    let mut p = setup();
    ok(
        &mut p,
        "GRANT TABLE sales.orders TO ROLE analyst WITH (select)",
    );
    assert_eq!(
        ok(
            &mut p,
            "CREATE OR REPLACE VIRTUAL TABLE sales.orders AS archive.main.orders"
        ),
        "CREATE VIRTUAL TABLE sales.orders (replaced)"
    );
    let k = key("sales", "main", "orders");
    assert_eq!(phys_db(&p, &k), "archive");
    assert_eq!(
        p.roles["analyst"].object_grants[&k],
        ObjectGrant {
            caps: Some(Caps::SELECT), slice: Default::default()
        }
    );
}

#[test]
fn drop_table() {
    let mut p = setup();
    ok(&mut p, "GRANT TABLE sales.orders TO ROLE analyst");
    ok(
        &mut p,
        "GRANT OBJECT sales.orders TO ROLE clerk WITH (reader)",
    );
    ok(&mut p, "GRANT TABLE sales.eu.customers TO ROLE clerk");
    assert_eq!(
        ok(&mut p, "DROP VIRTUAL TABLE Sales.Orders"),
        "DROP VIRTUAL TABLE sales.orders"
    );
    assert!(p.relation(&key("sales", "main", "orders")).is_none());
    assert!(p.roles["analyst"].object_grants.is_empty());
    assert_eq!(
        p.roles["clerk"]
            .object_grants
            .keys()
            .cloned()
            .collect::<Vec<_>>(),
        [key("sales", "eu", "customers")]
    );
    assert_eq!(
        invalid(&mut p, "DROP VIRTUAL TABLE sales.orders"),
        "virtual table \"sales.orders\" does not exist"
    );
    assert_eq!(
        ok(&mut p, "DROP VIRTUAL TABLE IF EXISTS sales.orders"),
        "DROP VIRTUAL TABLE sales.orders (skipped: does not exist)"
    );
    assert_eq!(
        invalid(&mut p, "DROP VIRTUAL TABLE hr.x"),
        "virtual catalog \"hr\" does not exist"
    );
    assert_eq!(
        ok(&mut p, "DROP VIRTUAL TABLE IF EXISTS hr.x"),
        "DROP VIRTUAL TABLE hr.x (skipped: does not exist)"
    );
    // The catalog is empty once its last table is gone.
    ok(&mut p, "DROP VIRTUAL TABLE sales.eu.customers");
    assert_eq!(
        ok(&mut p, "DROP VIRTUAL CATALOG sales"),
        "DROP VIRTUAL CATALOG sales"
    );
}

#[test]
fn roles() {
    let mut p = setup();
    assert_eq!(
        invalid(&mut p, "CREATE ROLE Analyst"),
        "role \"analyst\" already exists"
    );
    assert_eq!(
        ok(&mut p, "CREATE ROLE IF NOT EXISTS analyst"),
        "CREATE ROLE analyst (skipped: exists)"
    );
    ok(&mut p, "GRANT CATALOG sales TO ROLE analyst");
    assert_eq!(
        ok(&mut p, "CREATE ROLE IF NOT EXISTS analyst"),
        "CREATE ROLE analyst (skipped: exists)"
    );
    assert_eq!(p.roles["analyst"].catalog_grants.len(), 1);
    assert_eq!(
        ok(&mut p, "CREATE OR REPLACE ROLE analyst"),
        "CREATE ROLE analyst (replaced)"
    );
    assert!(p.roles["analyst"].catalog_grants.is_empty());
    assert_eq!(
        ok(&mut p, "CREATE OR REPLACE ROLE \"Ops-Team\""),
        "CREATE ROLE \"ops-team\""
    );
    assert_eq!(
        ok(&mut p, "DROP ROLE \"OPS-TEAM\""),
        "DROP ROLE \"ops-team\""
    );
    assert_eq!(
        invalid(&mut p, "DROP ROLE ghost"),
        "role \"ghost\" does not exist"
    );
    assert_eq!(
        ok(&mut p, "DROP ROLE IF EXISTS ghost"),
        "DROP ROLE ghost (skipped: does not exist)"
    );
    ok(&mut p, "GRANT TABLE sales.orders TO ROLE clerk");
    ok(&mut p, "DROP ROLE clerk");
    assert!(!p.roles.contains_key("clerk"));
    // A new role of the same name starts without the old grants.
    ok(&mut p, "CREATE ROLE clerk");
    assert!(p.roles["clerk"].object_grants.is_empty());
}

#[test]
fn grant_catalog() {
    let mut p = setup();
    ok(&mut p, "CREATE VIRTUAL CATALOG hr");
    assert_eq!(
        ok(&mut p, "GRANT CATALOG sales TO ROLE analyst"),
        "GRANT CATALOG sales TO ROLE analyst"
    );
    assert_eq!(
        p.roles["analyst"].catalog_grants["sales"],
        CatalogGrant {
            caps: Caps::DATA,
            main: false, slice: Default::default()
        }
    );
    // A second grant replaces the first, narrowing too.
    assert_eq!(
        ok(
            &mut p,
            "GRANT CATALOG sales TO ROLE analyst WITH (reader, lineage) MAIN"
        ),
        "GRANT CATALOG sales TO ROLE analyst (replaced)"
    );
    assert_eq!(
        p.roles["analyst"].catalog_grants["sales"],
        CatalogGrant {
            caps: Caps::SELECT.union(Caps::LINEAGE),
            main: true, slice: Default::default()
        }
    );
    // Two MAIN catalogs for one role are allowed; the ambiguity is judged at query time.
    ok(&mut p, "GRANT CATALOG hr TO ROLE analyst MAIN");
    assert!(p.roles["analyst"].catalog_grants.values().all(|g| g.main));
    assert_eq!(
        invalid(&mut p, "GRANT CATALOG sales TO ROLE ghost"),
        "role \"ghost\" does not exist"
    );
    assert_eq!(
        invalid(&mut p, "GRANT CATALOG nope TO ROLE analyst"),
        "virtual catalog \"nope\" does not exist"
    );
}

#[test]
fn grant_object() {
    let mut p = setup();
    let k = key("sales", "eu", "customers");
    assert_eq!(
        ok(&mut p, "GRANT TABLE sales.eu.customers TO ROLE clerk"),
        "GRANT TABLE sales.eu.customers TO ROLE clerk"
    );
    assert_eq!(
        p.roles["clerk"].object_grants[&k],
        ObjectGrant { caps: None, slice: Default::default() }
    );
    assert_eq!(
        ok(
            &mut p,
            "GRANT OBJECT sales.eu.customers TO ROLE clerk WITH (select, insert)"
        ),
        "GRANT OBJECT sales.eu.customers TO ROLE clerk (replaced)"
    );
    assert_eq!(
        p.roles["clerk"].object_grants[&k],
        ObjectGrant {
            caps: Some(Caps::SELECT.union(Caps::INSERT)), slice: Default::default()
        }
    );
    ok(
        &mut p,
        "GRANT VIEW sales.orders TO ROLE clerk WITH (writer)",
    );
    assert_eq!(
        p.roles["clerk"].object_grants[&key("sales", "main", "orders")],
        ObjectGrant {
            caps: Some(Caps::DATA), slice: Default::default()
        }
    );
    assert_eq!(
        invalid(&mut p, "GRANT TABLE sales.orders TO ROLE ghost"),
        "role \"ghost\" does not exist"
    );
    assert_eq!(
        invalid(&mut p, "GRANT TABLE hr.people TO ROLE clerk"),
        "virtual catalog \"hr\" does not exist"
    );
    assert_eq!(
        invalid(&mut p, "GRANT TABLE sales.refunds TO ROLE clerk"),
        "virtual table \"sales.refunds\" does not exist"
    );
    assert_eq!(
        invalid(&mut p, "GRANT VIEW sales.eu.refunds TO ROLE clerk"),
        "virtual view \"sales.eu.refunds\" does not exist"
    );
    assert_eq!(
        invalid(&mut p, "GRANT OBJECT sales.refunds TO ROLE clerk"),
        "virtual object \"sales.refunds\" does not exist"
    );
}

#[test]
fn object_grants_refuse_catalog_capabilities_when_built_in_code() {
    let mut p = setup();
    let cmd = Command::GrantObject { slice: Default::default(),
        key: key("sales", "main", "orders"),
        role: "clerk".into(),
        caps: Some(Caps::SELECT.union(Caps::SECRETS)),
        word: ObjectWord::Table,
    };
    assert_eq!(
        apply(&mut p, &cmd),
        Err(AclError::Invalid(crate::error::Invalid::CatalogOnly { capability: "secrets".into() }))
    );
}

#[test]
fn revoke() {
    let mut p = setup();
    ok(&mut p, "GRANT CATALOG sales TO ROLE analyst");
    ok(
        &mut p,
        "GRANT TABLE sales.orders TO ROLE analyst WITH (select)",
    );
    assert_eq!(
        ok(&mut p, "REVOKE CATALOG sales FROM ROLE analyst"),
        "REVOKE CATALOG sales FROM ROLE analyst (and 1 object grant)"
    );
    assert!(p.roles["analyst"].catalog_grants.is_empty());
    // The role's object grants in the catalog go with it (the reference system's rule).
    assert!(p.roles["analyst"].object_grants.is_empty());
    assert_eq!(
        ok(&mut p, "REVOKE CATALOG sales FROM ROLE analyst"),
        "REVOKE CATALOG sales FROM ROLE analyst (nothing to revoke)"
    );
    // an object grant alone is revoked by REVOKE CATALOG too; another catalog's stays
    ok(&mut p, "CREATE VIRTUAL CATALOG hr2");
    ok(&mut p, "CREATE VIRTUAL TABLE hr2.pay AS prod.main.pay");
    ok(&mut p, "GRANT TABLE hr2.pay TO ROLE analyst");
    ok(&mut p, "GRANT TABLE sales.orders TO ROLE analyst WITH (select)");
    ok(&mut p, "GRANT TABLE sales.eu.customers TO ROLE analyst WITH (select)");
    assert_eq!(ok(&mut p, "REVOKE CATALOG sales FROM ROLE analyst"), "REVOKE CATALOG sales FROM ROLE analyst (and 2 object grants)");
    assert_eq!(p.roles["analyst"].object_grants.keys().map(|k| k.catalog.as_str()).collect::<Vec<_>>(), ["hr2"]);
    ok(&mut p, "GRANT TABLE sales.orders TO ROLE analyst WITH (select)");
    assert_eq!(
        ok(&mut p, "REVOKE TABLE sales.orders FROM ROLE analyst"),
        "REVOKE TABLE sales.orders FROM ROLE analyst"
    );
    assert_eq!(p.roles["analyst"].object_grants.keys().map(|k| k.catalog.as_str()).collect::<Vec<_>>(), ["hr2"]);
    assert_eq!(
        ok(&mut p, "REVOKE OBJECT sales.orders FROM ROLE analyst"),
        "REVOKE OBJECT sales.orders FROM ROLE analyst (nothing to revoke)"
    );
    assert_eq!(
        invalid(&mut p, "REVOKE CATALOG sales FROM ROLE ghost"),
        "role \"ghost\" does not exist"
    );
    assert_eq!(
        invalid(&mut p, "REVOKE CATALOG hr FROM ROLE analyst"),
        "virtual catalog \"hr\" does not exist"
    );
    assert_eq!(
        invalid(&mut p, "REVOKE TABLE sales.refunds FROM ROLE analyst"),
        "virtual table \"sales.refunds\" does not exist"
    );
    assert_eq!(
        invalid(&mut p, "REVOKE TABLE hr.x FROM ROLE analyst"),
        "virtual catalog \"hr\" does not exist"
    );
}

#[test]
fn version_counts_successes() {
    let mut p = Policy::default();
    ok(&mut p, "CREATE ROLE r");
    ok(&mut p, "CREATE ROLE IF NOT EXISTS r");
    let _ = run(&mut p, "CREATE ROLE r");
    ok(&mut p, "DROP ROLE r");
    assert_eq!(p.version, 3);
}

#[test]
fn errors_display_with_the_acl_prefix() {
    let mut p = Policy::default();
    let e = run(&mut p, "DROP ROLE ghost").unwrap_err();
    assert_eq!(e.to_string(), "acl: role \"ghost\" does not exist");
}

#[test]
fn status_quotes_only_when_needed() {
    assert_eq!(q("sales_2"), "sales_2");
    assert_eq!(q("_x"), "_x");
    assert_eq!(q("2x"), "\"2x\"");
    assert_eq!(q("a\"b"), "\"a\"\"b\"");
    assert_eq!(q(""), "\"\"");
    assert_eq!(qkey(&key("c", "main", "t")), "c.t");
    assert_eq!(qkey(&key("c", "S s", "t")), "c.\"S s\".t");
}

fn phys_db(p: &Policy, k: &ObjKey) -> String {
    match &p.relation(k).unwrap().kind {
        RelationKind::Table(t) => t.db.clone(),
        other => panic!("{other:?}"),
    }
}

#[test]
fn two_masks_on_one_column_are_refused_at_grant_time() {
    let mut p = setup();
    ok(&mut p, "CREATE ROLE other");
    ok(&mut p, "GRANT CATALOG sales TO ROLE analyst COLUMNS (id, email = left(email, 2))");
    // the same mask, or the column plain, is fine for another role
    ok(&mut p, "GRANT CATALOG sales TO ROLE other COLUMNS (id, email = left(email, 2))");
    ok(&mut p, "GRANT CATALOG sales TO ROLE other COLUMNS (id, email)");
    assert!(invalid(&mut p, "GRANT CATALOG sales TO ROLE other COLUMNS (email = NULL)")
        .contains("column \"email\" is masked differently by the grant to role \"analyst\""));
    assert!(invalid(&mut p, "GRANT TABLE sales.orders TO ROLE other COLUMNS (email = 'x')").contains("masked differently"));
    // the same role may refine its own catalog grant with an object grant
    ok(&mut p, "GRANT TABLE sales.orders TO ROLE analyst COLUMNS (id, email = NULL)");
}

#[test]
fn virtual_schemas_and_schema_grants() {
    let mut p = setup();
    assert_eq!(ok(&mut p, "CREATE VIRTUAL SCHEMA sales.lake AS lakedb.raw"), "CREATE VIRTUAL SCHEMA sales.lake");
    assert!(invalid(&mut p, "CREATE VIRTUAL SCHEMA sales.lake AS lakedb.raw").contains("already exists"));
    assert!(ok(&mut p, "CREATE VIRTUAL SCHEMA IF NOT EXISTS sales.lake AS x.y").ends_with("(skipped: exists)"));
    assert!(ok(&mut p, "CREATE OR REPLACE VIRTUAL SCHEMA sales.lake AS lakedb.curated").ends_with("(replaced)"));
    assert_eq!(p.virtual_schema("sales", "lake").unwrap().schema, "curated");
    // a virtual schema and listed objects never share a schema
    assert!(invalid(&mut p, "CREATE VIRTUAL SCHEMA sales.eu AS lakedb.raw").contains("already holds virtual objects"));
    assert!(invalid(&mut p, "CREATE VIRTUAL TABLE sales.lake.t AS a.b.c").contains("is a virtual schema"));
    assert!(invalid(&mut p, "CREATE VIRTUAL SCHEMA nope.s AS a.b").contains("virtual catalog \"nope\" does not exist"));
    // grants
    ok(&mut p, "GRANT SCHEMA sales.lake TO ROLE analyst WITH (select, create)");
    let lake = ("sales".to_string(), "lake".to_string());
    assert_eq!(p.roles["analyst"].schema_grants[&lake], Caps::SELECT.union(Caps::CREATE));
    assert!(ok(&mut p, "GRANT SCHEMA sales.lake TO ROLE analyst").ends_with("(replaced)"));
    assert_eq!(p.roles["analyst"].schema_grants[&lake], Caps::DATA);
    assert!(invalid(&mut p, "GRANT SCHEMA sales.nope TO ROLE analyst").contains("does not exist"));
    assert!(invalid(&mut p, "GRANT SCHEMA sales.lake TO ROLE nobody").contains("role \"nobody\" does not exist"));
    assert_eq!(ok(&mut p, "REVOKE SCHEMA sales.lake FROM ROLE analyst"), "REVOKE SCHEMA sales.lake FROM ROLE analyst");
    assert!(ok(&mut p, "REVOKE SCHEMA sales.lake FROM ROLE analyst").ends_with("(nothing to revoke)"));
    // dropping the schema (or its catalog) drops its grants
    ok(&mut p, "GRANT SCHEMA sales.lake TO ROLE clerk");
    ok(&mut p, "DROP VIRTUAL SCHEMA sales.lake");
    assert!(p.roles["clerk"].schema_grants.is_empty());
    assert!(invalid(&mut p, "DROP VIRTUAL SCHEMA sales.lake").contains("does not exist"));
    assert!(ok(&mut p, "DROP VIRTUAL SCHEMA IF EXISTS sales.lake").ends_with("(skipped: does not exist)"));
    ok(&mut p, "CREATE VIRTUAL SCHEMA sales.lake AS lakedb.raw");
    ok(&mut p, "GRANT SCHEMA sales.lake TO ROLE clerk");
    assert!(invalid(&mut p, "DROP VIRTUAL CATALOG sales").contains("not empty"));
    ok(&mut p, "DROP VIRTUAL CATALOG sales CASCADE");
    assert!(p.roles["clerk"].schema_grants.is_empty());
}

#[test]
fn the_catalog_name_temp_is_reserved() {
    let mut p = Policy::default();
    assert!(invalid(&mut p, "CREATE VIRTUAL CATALOG temp").contains("reserved"));
    assert!(invalid(&mut p, "CREATE VIRTUAL CATALOG \"TEMP\"").contains("reserved"));
}
