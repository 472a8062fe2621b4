//! Apply tests of the reference system's forms: what each does to the policy, that an ALTER
//! goes through its twin's checks, and the validation statements the batch runs before it.
use super::*;
use crate::authz::{Principal, View};
use crate::error::{AclError, Invalid, Noun, Result};
use crate::policy::{Cardinality, Policy, RelationKind, Unmapped};

fn run(p: &mut Policy, sql: &str) -> Result<String> {
    apply(p, &parse(sql).unwrap_or_else(|e| panic!("{sql}: {e}")))
}

fn ok(p: &mut Policy, sql: &str) -> String {
    run(p, sql).unwrap_or_else(|e| panic!("{sql}: {e}"))
}

/// The error, and that the policy's version did not move.
fn fails(p: &mut Policy, sql: &str) -> AclError {
    let before = p.version;
    let e = run(p, sql).expect_err(sql);
    assert_eq!(p.version, before, "{sql}: a failed command bumped the version");
    e
}

fn key(c: &str, n: &str) -> ObjKey {
    ObjKey { catalog: c.into(), schema: "main".into(), name: n.into() }
}

fn setup() -> Policy {
    let mut p = Policy::default();
    for sql in [
        "CREATE VIRTUAL CATALOG sales",
        "ADD TABLE prod.main.orders AS sales.orders COLUMNS 'id, amount, region' RLS 'amount > 0'",
        "CREATE VIRTUAL TABLE sales.customers AS prod.main.customers",
        "CREATE ROLE analyst CLAIMS 'tenant=acme'",
        "CREATE ROLE clerk",
        "GRANT CATALOG sales TO ROLE analyst CAPS '{\"select\": true}' MAIN",
    ] {
        ok(&mut p, sql);
    }
    p
}

fn caps(p: &Policy, role: &str, k: &ObjKey) -> Option<Caps> {
    let who = Principal::role(role);
    View::new(p, &who).unwrap().caps(k)
}

#[test]
fn caps_empty_takes_an_object_grant_back() {
    let mut p = setup();
    let orders = key("sales", "orders");
    assert_eq!(caps(&p, "analyst", &orders), Some(Caps::SELECT));
    ok(&mut p, "GRANT TABLE sales.orders TO ROLE analyst CAPS '{}'");
    assert_eq!(caps(&p, "analyst", &orders), None, "the object is taken back");
    assert_eq!(caps(&p, "analyst", &key("sales", "customers")), Some(Caps::SELECT), "the rest of the catalog stays");
    // with no capability clause the object grant inherits the catalog grant's again
    ok(&mut p, "GRANT TABLE sales.orders TO ROLE analyst");
    assert_eq!(caps(&p, "analyst", &orders), Some(Caps::SELECT));
    // an object grant alone of the empty set shows nothing, not even its catalog
    ok(&mut p, "GRANT OBJECT sales.customers TO ROLE clerk CAPS '{}'");
    let who = Principal::role("clerk");
    let v = View::new(&p, &who).unwrap();
    assert!(v.visible_catalogs().is_empty());
    assert!(v.listing().objects.is_empty());
    ok(&mut p, "ALTER GRANT OBJECT sales.customers TO ROLE clerk SET CAPS '{\"select\": true, \"insert\": true}'");
    assert_eq!(caps(&p, "clerk", &key("sales", "customers")), Some(Caps::SELECT.union(Caps::INSERT)));
    // one role's empty grant takes nothing from another role of the principal (a union)
    ok(&mut p, "GRANT TABLE sales.customers TO ROLE analyst CAPS '{}'");
    assert_eq!(caps(&p, "analyst", &key("sales", "customers")), None);
    let both = Principal { roles: vec!["analyst".into(), "clerk".into()], label: "both".into(), claims: Default::default() };
    assert_eq!(View::new(&p, &both).unwrap().caps(&key("sales", "customers")), Some(Caps::SELECT.union(Caps::INSERT)));
    // a schema grant of the empty set holds nothing and shows nothing either
    ok(&mut p, "CREATE VIRTUAL CATALOG lake");
    ok(&mut p, "CREATE VIRTUAL SCHEMA lake.raw AS lakedb.raw");
    ok(&mut p, "CREATE ROLE loader");
    ok(&mut p, "GRANT SCHEMA lake.raw TO ROLE loader CAPS '{}'");
    let loader = Principal::role("loader");
    let v = View::new(&p, &loader).unwrap();
    assert_eq!((v.schema_caps("lake", "raw"), v.visible_catalogs().len(), v.sees_catalog("lake")), (None, 0, false));
    assert!(v.listing().schemas.is_empty());
    ok(&mut p, "GRANT SCHEMA lake.raw TO ROLE loader CAPS '{\"select\": true}'");
    assert_eq!(View::new(&p, &loader).unwrap().schema_caps("lake", "raw"), Some(Caps::SELECT));
}

#[test]
fn alter_grant_changes_one_field_through_the_grant() {
    let mut p = setup();
    assert_eq!(ok(&mut p, "ALTER GRANT CATALOG sales TO ROLE analyst SET RLS 'region = ''eu'''"), "ALTER GRANT CATALOG sales TO ROLE analyst SET RLS");
    let g = &p.roles["analyst"].catalog_grants["sales"];
    assert_eq!((g.caps, g.main, g.slice.rls.as_deref()), (Caps::SELECT, true, Some("region = 'eu'")));
    ok(&mut p, "ALTER GRANT CATALOG sales TO ROLE analyst SET MAIN false");
    ok(&mut p, "ALTER GRANT CATALOG sales TO ROLE analyst SET CAPS '{\"select\": true, \"explain\": true}'");
    let g = &p.roles["analyst"].catalog_grants["sales"];
    assert_eq!((g.caps, g.main, g.slice.rls.as_deref()), (Caps::SELECT.union(Caps::EXPLAIN), false, Some("region = 'eu'")));
    ok(&mut p, "ALTER GRANT CATALOG sales TO ROLE analyst SET RLS ''");
    assert!(p.roles["analyst"].catalog_grants["sales"].slice.rls.is_none());
    // what does not exist
    assert_eq!(
        fails(&mut p, "ALTER GRANT CATALOG sales TO ROLE clerk SET MAIN true"),
        Invalid::Missing { noun: Noun::Grant, name: "CATALOG sales TO ROLE clerk".into() }.into()
    );
    assert_eq!(fails(&mut p, "ALTER GRANT CATALOG sales TO ROLE ghost SET MAIN true"), Invalid::Missing { noun: Noun::Role, name: "ghost".into() }.into());
    assert!(matches!(fails(&mut p, "ALTER GRANT TABLE sales.orders TO ROLE analyst SET RLS 'id = 1'"), AclError::Invalid(Invalid::Missing { noun: Noun::Grant, .. })));
    // the grant's own checks apply: two masks of one column for two roles are refused
    ok(&mut p, "GRANT TABLE sales.orders TO ROLE clerk COLUMNS 'id, amount = 0'");
    ok(&mut p, "GRANT TABLE sales.orders TO ROLE analyst");
    assert!(matches!(
        fails(&mut p, "ALTER GRANT TABLE sales.orders TO ROLE analyst SET COLUMNS 'id, amount = amount / 2'"),
        AclError::Invalid(Invalid::MaskConflict { .. })
    ));
}

#[test]
fn alter_virtual_table_and_view_restate_the_object() {
    let mut p = setup();
    ok(&mut p, "GRANT TABLE sales.orders TO ROLE clerk");
    ok(&mut p, "COMMENT ON VIRTUAL TABLE sales.orders IS 'orders'");
    assert_eq!(ok(&mut p, "ALTER VIRTUAL TABLE sales.orders SET RLS 'amount > 10'"), "ALTER VIRTUAL TABLE sales.orders SET RLS");
    let r = p.relation(&key("sales", "orders")).unwrap();
    assert_eq!((r.slice.rls.as_deref(), r.comment.as_deref()), (Some("amount > 10"), Some("orders")));
    assert_eq!(r.slice.columns.as_ref().map(Vec::len), Some(3));
    assert!(p.roles["clerk"].object_grants.contains_key(&key("sales", "orders")), "grants stay");
    ok(&mut p, "ALTER VIRTUAL TABLE sales.orders SET COLUMNS 'id NOT NULL, amount'");
    ok(&mut p, "ALTER VIRTUAL TABLE sales.orders SET PRIMARY KEY (id)");
    let r = p.relation(&key("sales", "orders")).unwrap();
    assert_eq!((r.declared.primary_key.clone(), r.declared.not_null.len()), (vec!["id".to_string()], 1));
    // a key the new column list does not hold
    assert_eq!(
        fails(&mut p, "ALTER VIRTUAL TABLE sales.orders SET COLUMNS 'amount'"),
        Invalid::NotAColumn { column: "id".into(), object: "sales.orders".into() }.into()
    );
    ok(&mut p, "ALTER VIRTUAL TABLE sales.orders DROP PRIMARY KEY");
    ok(&mut p, "ALTER VIRTUAL TABLE sales.orders SET PHYS prod.archive.orders");
    let RelationKind::Table(t) = &p.relation(&key("sales", "orders")).unwrap().kind else { panic!() };
    assert_eq!(t.schema, "archive");
    assert_eq!(fails(&mut p, "ALTER VIRTUAL TABLE sales.nope SET RLS 'true'"), Invalid::Missing { noun: Noun::Table, name: "sales.nope".into() }.into());
    // views
    ok(&mut p, "CREATE VIRTUAL VIEW sales.v (a INTEGER NOT NULL) COMMENT 'c' AS SELECT 1 AS a");
    assert_eq!(fails(&mut p, "ALTER VIRTUAL TABLE sales.v SET RLS 'true'"), Invalid::Missing { noun: Noun::Table, name: "sales.v".into() }.into());
    assert_eq!(ok(&mut p, "ALTER VIRTUAL VIEW sales.v SET AS 'SELECT 2 AS a'"), "ALTER VIRTUAL VIEW sales.v SET AS");
    let r = p.relation(&key("sales", "v")).unwrap();
    assert_eq!(r.kind, RelationKind::View("SELECT 2 AS a".into()));
    assert_eq!((r.comment.as_deref(), r.declared.types.as_ref().map(Vec::len)), (Some("c"), Some(1)), "declarations stay");
    assert_eq!(fails(&mut p, "ALTER VIRTUAL VIEW sales.orders SET AS SELECT 1"), Invalid::Missing { noun: Noun::View, name: "sales.orders".into() }.into());
}

#[test]
fn add_table_upserts_and_keeps_grants() {
    let mut p = setup();
    ok(&mut p, "GRANT TABLE sales.customers TO ROLE clerk");
    assert!(ok(&mut p, "ADD TABLE prod.main.customers2 AS sales.customers RLS 'true'").ends_with("(replaced)"));
    assert!(p.roles["clerk"].object_grants.contains_key(&key("sales", "customers")));
    assert_eq!(ok(&mut p, "ADD VIEW 'SELECT 1 AS x' AS sales.x"), "CREATE VIRTUAL VIEW sales.x");
    // a legacy alias of a never-callable function is refused as ALIAS OF is
    for target in ["acl_exec", "query", "system.main.query_table"] {
        for sql in [format!("ADD SCALAR sales.f ALIAS {target}"), format!("ADD TABLE FUNCTION sales.f ALIAS {target}")] {
            assert!(matches!(fails(&mut p, &sql), AclError::Invalid(Invalid::NeverCallable { alias: true, .. })), "{sql}");
        }
    }
}

#[test]
fn comments_land_on_their_records() {
    let mut p = setup();
    ok(&mut p, "CREATE VIRTUAL CATALOG lake");
    ok(&mut p, "CREATE VIRTUAL SCHEMA lake.raw AS lakedb.raw");
    ok(&mut p, "CREATE VIRTUAL SCALAR sales.twice(x INT) AS acl_arg(1) * 2");
    ok(&mut p, "ALTER VIRTUAL CATALOG sales SET COMMENT 'sales data'");
    ok(&mut p, "COMMENT ON VIRTUAL SCHEMA lake.raw IS 'raw zone'");
    ok(&mut p, "COMMENT ON VIRTUAL TABLE sales.customers IS 'people'");
    ok(&mut p, "COMMENT ON VIRTUAL TABLE sales.orders COLUMN amount IS 'in cents'");
    ok(&mut p, "COMMENT ON VIRTUAL TABLE sales.customers COLUMN anything IS 'checked by binding'");
    ok(&mut p, "COMMENT ON VIRTUAL SCALAR sales.twice IS 'doubles'");
    assert_eq!(p.catalogs["sales"].comment.as_deref(), Some("sales data"));
    assert_eq!(p.catalogs["lake"].schemas["raw"].comment.as_deref(), Some("raw zone"));
    assert_eq!(p.relation(&key("sales", "customers")).unwrap().comment.as_deref(), Some("people"));
    assert_eq!(p.relation(&key("sales", "orders")).unwrap().declared.column_comments["amount"], "in cents");
    let f = &p.functions.virtuals[&("sales".to_string(), "main".to_string(), "twice".to_string(), crate::policy::functions::FnKind::Scalar)];
    assert_eq!(f.comment.as_deref(), Some("doubles"));
    ok(&mut p, "COMMENT ON VIRTUAL TABLE sales.orders COLUMN amount IS NULL");
    assert!(p.relation(&key("sales", "orders")).unwrap().declared.column_comments.is_empty());
    // an object that lists its columns refuses others
    assert_eq!(
        fails(&mut p, "COMMENT ON VIRTUAL TABLE sales.orders COLUMN secret IS 'x'"),
        Invalid::NotAColumn { column: "secret".into(), object: "sales.orders".into() }.into()
    );
    for (sql, noun) in [
        ("COMMENT ON VIRTUAL CATALOG nope IS 'x'", Noun::Catalog),
        ("COMMENT ON VIRTUAL SCHEMA sales.nope IS 'x'", Noun::Schema),
        ("COMMENT ON VIRTUAL VIEW sales.nope IS 'x'", Noun::View),
        ("COMMENT ON VIRTUAL TABLE FUNCTION sales.twice IS 'x'", Noun::TableFunction),
    ] {
        assert!(matches!(fails(&mut p, sql), AclError::Invalid(Invalid::Missing { noun: n, .. }) if n == noun), "{sql}");
    }
}

#[test]
fn references_are_stored_and_go_with_their_objects() {
    let mut p = setup();
    let sql = "CREATE VIRTUAL REFERENCE sales.placed_by FROM orders TO customers ON (id = id) CARDINALITY MANY_TO_ONE";
    assert_eq!(ok(&mut p, sql), "CREATE VIRTUAL REFERENCE sales.placed_by");
    let r = &p.catalogs["sales"].references[&("main".to_string(), "placed_by".to_string())];
    assert_eq!((r.to.name.as_str(), r.cardinality), ("customers", Some(Cardinality::ManyToOne)));
    assert!(matches!(fails(&mut p, sql), AclError::Invalid(Invalid::Exists { noun: Noun::Reference, .. })));
    assert!(matches!(
        fails(&mut p, "CREATE VIRTUAL REFERENCE sales.r2 FROM orders TO nope ON (id = id)"),
        AclError::Invalid(Invalid::Missing { noun: Noun::Object, .. })
    ));
    // a side that lists its columns is checked when applied
    assert_eq!(
        fails(&mut p, "CREATE VIRTUAL REFERENCE sales.r3 FROM orders TO customers ON (secret = id)"),
        Invalid::NotAColumn { column: "secret".into(), object: "sales.orders".into() }.into()
    );
    // the reference grants nothing
    assert_eq!(caps(&p, "clerk", &key("sales", "customers")), None);
    // a catalog holding a reference is not empty; dropping an object drops its references
    ok(&mut p, "CREATE VIRTUAL CATALOG hr");
    ok(&mut p, "CREATE VIRTUAL TABLE hr.a AS x.y.a");
    ok(&mut p, "CREATE VIRTUAL TABLE hr.b AS x.y.b");
    ok(&mut p, "CREATE VIRTUAL REFERENCE hr.ab FROM a TO b ON (x = y)");
    ok(&mut p, "DROP VIRTUAL TABLE hr.b");
    assert!(p.catalogs["hr"].references.is_empty());
    ok(&mut p, "CREATE VIRTUAL TABLE hr.b AS x.y.b");
    ok(&mut p, "CREATE VIRTUAL REFERENCE hr.ab FROM a TO b ON (x = y)");
    ok(&mut p, "DROP VIRTUAL TABLE hr.a");
    ok(&mut p, "DROP VIRTUAL TABLE hr.b");
    ok(&mut p, "CREATE VIRTUAL TABLE hr.a AS x.y.a");
    ok(&mut p, "CREATE VIRTUAL REFERENCE hr.aa FROM a TO a ON (x = y)");
    ok(&mut p, "DROP VIRTUAL TABLE hr.a");
    assert!(p.catalogs["hr"].references.is_empty());
    ok(&mut p, "DROP VIRTUAL REFERENCE sales.placed_by");
    assert!(matches!(fails(&mut p, "DROP VIRTUAL REFERENCE sales.placed_by"), AclError::Invalid(Invalid::Missing { noun: Noun::Reference, .. })));
    ok(&mut p, "DROP VIRTUAL REFERENCE IF EXISTS sales.placed_by");
}

#[test]
fn roles_claims_and_drop_role_cascades() {
    let mut p = setup();
    ok(&mut p, "CREATE ISSUER 'https://idp' KEYS 'hmac:a-shared-secret-of-at-least-32-bytes!'");
    ok(&mut p, "MAP GROUP 'analysts' FROM ISSUER 'https://idp' TO ROLE analyst");
    ok(&mut p, "GRANT FUNCTION CATEGORY readers TO ROLE analyst");
    assert_eq!(ok(&mut p, "ALTER ROLE analyst SET CLAIMS 'tenant=globex, tier=2'"), "ALTER ROLE analyst SET CLAIMS");
    let r = &p.roles["analyst"];
    assert_eq!((r.claims["tenant"].as_str(), r.catalog_grants.len()), ("globex", 1), "grants stay");
    assert_eq!(fails(&mut p, "ALTER ROLE ghost SET CLAIMS ''"), Invalid::Missing { noun: Noun::Role, name: "ghost".into() }.into());
    ok(&mut p, "DROP ROLE analyst");
    assert!(p.claim_roles.is_empty(), "its mappings go");
    assert!(!p.functions.role_grants.contains_key("analyst"), "its function grants go");
    ok(&mut p, "CREATE ROLE analyst");
    assert!(p.roles["analyst"].catalog_grants.is_empty() && p.roles["analyst"].claims.is_empty(), "a new role of the name inherits nothing");
}

#[test]
fn alter_issuer_restates_the_issuer_and_keeps_its_mappings() {
    let mut p = setup();
    ok(&mut p, "CREATE ISSUER 'https://idp' KEYS 'hmac:a-shared-secret-of-at-least-32-bytes!' AUDIENCES ('a')");
    ok(&mut p, "MAP CLAIM 'analysts' FROM ISSUER 'https://idp' TO ROLE analyst");
    assert_eq!(ok(&mut p, "ALTER ISSUER 'https://idp' SET UNMAPPED IGNORE"), "ALTER ISSUER 'https://idp'");
    ok(&mut p, "ALTER ISSUER 'https://idp' SET ROLE CLAIM 'groups'");
    let i = &p.issuers["https://idp"];
    assert_eq!((i.unmapped, i.role_claim.as_str(), i.audiences.clone()), (Unmapped::Ignore, "groups", vec!["a".to_string()]));
    assert_eq!(p.claim_roles.len(), 1);
    // the keys are checked again, as CREATE ISSUER checks them
    assert!(matches!(fails(&mut p, "ALTER ISSUER 'https://idp' SET KEYS 'hmac:short'"), AclError::Invalid(Invalid::Issuer { .. })));
    assert!(matches!(fails(&mut p, "ALTER ISSUER 'https://idp' SET ALGS 'RS256'"), AclError::Invalid(Invalid::Issuer { .. })));
    assert!(matches!(fails(&mut p, "ALTER ISSUER 'https://nope' SET UNMAPPED COUNT"), AclError::Invalid(Invalid::Missing { noun: Noun::Issuer, .. })));
    ok(&mut p, "DROP ISSUER 'https://idp'");
    assert!(p.claim_roles.is_empty());
    ok(&mut p, "DROP ISSUER IF EXISTS 'https://idp'");
}

#[test]
fn drop_catalog_names_the_roles_still_granted() {
    let mut p = setup();
    ok(&mut p, "CREATE VIRTUAL CATALOG hr");
    ok(&mut p, "CREATE VIRTUAL CATALOG lake");
    ok(&mut p, "CREATE VIRTUAL SCHEMA lake.raw AS lakedb.raw");
    ok(&mut p, "GRANT SCHEMA lake.raw TO ROLE clerk");
    ok(&mut p, "GRANT CATALOG hr TO ROLE clerk");
    ok(&mut p, "GRANT CATALOG hr TO ROLE analyst");
    assert_eq!(
        fails(&mut p, "DROP VIRTUAL CATALOG hr"),
        Invalid::StillGranted { name: "hr".into(), roles: vec!["analyst".into(), "clerk".into()] }.into()
    );
    assert!(ok(&mut p, "DROP VIRTUAL CATALOG hr CASCADE").starts_with("DROP VIRTUAL CATALOG hr"));
    assert!(p.roles["clerk"].catalog_grants.is_empty());
    assert_eq!(fails(&mut p, "DROP VIRTUAL CATALOG lake"), Invalid::NotEmpty { name: "lake".into() }.into());
}

#[test]
fn validation_statements_for_the_new_forms() {
    let p = setup();
    let checks = |sql: &str| validate::checks(&p, &parse(sql).unwrap()).unwrap();
    // a view's declared columns: its query must give them (compared as DuckDB prints types)
    let v = checks("CREATE VIRTUAL VIEW sales.v (a INTEGER NOT NULL, b VARCHAR) AS SELECT 1 AS a, 'x' AS b");
    assert_eq!(v.len(), 2);
    assert!(v[1].contains("typeof(NULL::STRUCT(\"a\" INTEGER, \"b\" VARCHAR))") && v[1].contains("error"), "{}", v[1]);
    assert!(v[1].contains("does not give its declared columns"));
    // a declared key of an object whose columns are not listed: checked by binding
    let k = checks("CREATE VIRTUAL TABLE sales.t AS prod.main.t PRIMARY KEY (id)");
    assert_eq!(k.len(), 1);
    assert!(k[0].contains("DESCRIBE SELECT * FROM (SELECT * FROM \"prod\".\"main\".\"t\"") && k[0].contains("lower(column_name) = 'id'"), "{}", k[0]);
    assert!(checks("CREATE VIRTUAL TABLE sales.t AS prod.main.t COLUMNS (id) PRIMARY KEY (id)").len() == 1, "COLUMNS bind, the key is listed");
    // a reference's columns, on the sides that do not list them
    let r = checks("CREATE VIRTUAL REFERENCE sales.r FROM orders TO customers ON (id = customer_id)");
    assert_eq!(r.len(), 1);
    assert!(r[0].contains("'customer_id'"));
    // an ALTER is checked as what it amounts to, its other fields as they are
    let a = checks("ALTER VIRTUAL TABLE sales.orders SET RLS 'amount > 5'");
    assert_eq!(a.len(), 1);
    assert!(a[0].contains("amount > 5") && a[0].contains("\"id\""), "{}", a[0]);
    let g = checks("ALTER GRANT CATALOG sales TO ROLE analyst SET RLS 'region = 1'");
    assert_eq!(g.len(), 2, "one per object of the catalog");
    let view = checks("ALTER VIRTUAL VIEW sales.orders SET AS SELECT 1");
    assert!(view.is_empty(), "no such view yet: judged when applied");
    // a column comment on an object that does not list its columns
    assert_eq!(checks("COMMENT ON VIRTUAL TABLE sales.customers COLUMN name IS 'x'").len(), 1);
    assert!(checks("COMMENT ON VIRTUAL TABLE sales.orders COLUMN id IS 'x'").is_empty());
}
