//! The statement gate (spec 005): EXPLAIN, temporary tables, CREATE/DROP in virtual schemas.
use super::{statement, FnGate};
use crate::authz::{Principal, View};
use crate::error::{AclError, LacksCapability, On, FunctionNotPermitted, NotGranted, StatementNotPermitted, TypeNotPermitted, Unsupported};
use crate::policy::{Caps, Catalog, CatalogGrant, PhysName, Policy, Relation, RelationKind, Role, VirtualSchema};

fn grant(caps: Caps, main: bool) -> CatalogGrant {
    CatalogGrant { caps, main, slice: Default::default() }
}

/// `sales` (MAIN) lists `orders`; `sales.lake` is a virtual schema over `lakedb.raw`; `hr` lists
/// `people`.
fn policy() -> Policy {
    let mut p = Policy::default();
    p.functions.host = std::sync::Arc::new(
        crate::policy::functions::HostFunctions::default().with_types(super::types::BUILTIN_TYPES.iter().copied()),
    );
    let mut sales = Catalog::default();
    let orders = PhysName { db: "phys".into(), schema: "main".into(), name: "orders".into() };
    sales.objects.insert(
        ("main".into(), "orders".into()),
        Relation { kind: RelationKind::Table(orders), comment: None, slice: Default::default(), declared: Default::default() },
    );
    sales.schemas.insert("lake".into(), VirtualSchema { db: "lakedb".into(), schema: "raw".into(), comment: None });
    p.catalogs.insert("sales".into(), sales);
    let mut hr = Catalog::default();
    let people = PhysName { db: "hrdb".into(), schema: "main".into(), name: "people".into() };
    hr.objects.insert(
        ("main".into(), "people".into()),
        Relation { kind: RelationKind::Table(people), comment: None, slice: Default::default(), declared: Default::default() },
    );
    p.catalogs.insert("hr".into(), hr);
    let lake = ("sales".to_string(), "lake".to_string());
    // analyst: reads sales; no explain, no temp, no schema grant
    let mut analyst = Role::default();
    analyst.catalog_grants.insert("sales".into(), grant(Caps::SELECT, true));
    p.roles.insert("analyst".into(), analyst);
    // engineer: explain and temp on sales, reads hr without explain; creates in sales.lake
    let mut eng = Role::default();
    eng.catalog_grants.insert("sales".into(), grant(Caps::SELECT.union(Caps::EXPLAIN).union(Caps::TEMP), true));
    eng.catalog_grants.insert("hr".into(), grant(Caps::SELECT, false));
    eng.schema_grants.insert(lake.clone(), Caps::DATA.union(Caps::CREATE).union(Caps::DROP));
    p.roles.insert("engineer".into(), eng);
    // lakereader: reads sales.lake only
    let mut lr = Role::default();
    lr.schema_grants.insert(lake, Caps::SELECT);
    p.roles.insert("lakereader".into(), lr);
    p
}

fn run(role: &str, sql: &str) -> crate::error::Result<String> {
    let p = policy();
    let principal = Principal::role(role);
    let view = View::new(&p, &principal)?;
    let fns = FnGate::new(&p, &principal);
    statement(&view, &fns, sql)
}

/// The mangled temp name of `role` (roles and claims only: no claims here).
fn temp(role: &str, name: &str) -> String {
    let p = policy();
    let principal = Principal::role(role);
    let view = View::new(&p, &principal).unwrap();
    format!("\"temp\".\"main\".\"{}{name}\"", view.temp_prefix())
}

#[track_caller]
fn rewrites_to(role: &str, sql: &str, expected: &str) {
    assert_eq!(run(role, sql).unwrap(), expected);
}

/// A CREATE VIEW's rewrite: `head`, the guard (view_tests.rs), then the body's rewrite and `tail`.
#[track_caller]
fn view_rewrites_to(role: &str, sql: &str, head: &str, tail: &str) {
    let out = run(role, sql).unwrap();
    let guard = r#"SELECT "__acl_q".* FROM "system"."main"."acl_view_guard"('"#;
    assert!(out.starts_with(&format!("{head}{guard}")) && out.ends_with(tail), "{out}\nis not\n{head}{guard}…{tail}");
}

#[track_caller]
fn refused(role: &str, sql: &str, expected: impl Fn(&AclError) -> bool) {
    let err = run(role, sql).unwrap_err();
    assert!(expected(&err), "{sql}: {err:?}");
    let err = err.to_string();
    assert!(!err.contains("phys") && !err.contains("hrdb") && !err.contains("lakedb") && !err.contains("raw"), "{err}");
}

/// The function gate refused `name`, as the principal wrote it.
fn not_permitted(name: &'static str) -> impl Fn(&AclError) -> bool {
    move |e| matches!(e, AclError::FunctionNotPermitted(FunctionNotPermitted::Named { name: n }) if n == name)
}

/// The one refusal for an unknown, physical or ungranted table, naming `name` as written.
fn not_granted(name: &'static str) -> impl Fn(&AclError) -> bool {
    move |e| matches!(e, AclError::NotGranted(NotGranted::Table { name: n }) if n == name)
}

#[test]
fn explain_needs_explain_on_every_catalog_touched() {
    rewrites_to("engineer", "EXPLAIN SELECT * FROM orders", r#"EXPLAIN SELECT * FROM "phys"."main"."orders" AS "orders""#);
    rewrites_to(
        "engineer",
        "EXPLAIN ANALYZE SELECT * FROM sales.lake.events",
        r#"EXPLAIN ANALYZE SELECT * FROM "lakedb"."raw"."events" AS "events""#,
    );
    rewrites_to("engineer", "EXPLAIN SELECT 1", "EXPLAIN SELECT 1");
    refused("analyst", "EXPLAIN SELECT * FROM orders", |e| matches!(e, AclError::LacksCapability(LacksCapability { capabilities, on: On::Catalog(on), .. }) if capabilities == &["explain"] && on == "sales"));
    refused("analyst", "EXPLAIN SELECT 1", |e| matches!(e, AclError::LacksCapability(LacksCapability { capabilities, on: On::Anything, .. }) if capabilities == &["explain"]));
    refused("engineer", "EXPLAIN SELECT * FROM orders, hr.people", |e| matches!(e, AclError::LacksCapability(LacksCapability { capabilities, on: On::Catalog(on), .. }) if capabilities == &["explain"] && on == "hr"));
    refused("engineer", "EXPLAIN SELECT * FROM (SELECT * FROM hr.people) x", |e| matches!(e, AclError::LacksCapability(LacksCapability { capabilities, on: On::Catalog(on), .. }) if capabilities == &["explain"] && on == "hr"));
    // the inner statement is checked as without EXPLAIN
    refused("engineer", "EXPLAIN DELETE FROM orders", |e| matches!(e, AclError::LacksCapability(LacksCapability { capabilities, on: On::Object(on), .. }) if capabilities == &["delete"] && on == "sales.orders"));
    refused("engineer", "EXPLAIN SELECT * FROM phys.main.orders", |e| matches!(e, AclError::NotGranted(NotGranted::Catalog { .. })));
    // only plain forms, and only of statements that are rewritten
    refused("engineer", "EXPLAIN (FORMAT json) SELECT 1", |e| matches!(e, AclError::Unsupported(Unsupported::Explain)));
    refused("engineer", "EXPLAIN CREATE TABLE sales.lake.t (a INT)", |e| matches!(e, AclError::StatementNotPermitted(StatementNotPermitted::Kind { .. })));
}

#[test]
fn temp_tables_are_mangled_per_principal() {
    let t = temp("engineer", "scratch");
    rewrites_to("engineer", "CREATE TEMP TABLE scratch (a INT, b VARCHAR)", &format!("CREATE TEMPORARY TABLE {t} (a INT, b VARCHAR)"));
    rewrites_to(
        "engineer",
        "CREATE TEMP TABLE scratch AS SELECT id FROM orders",
        &format!(r#"CREATE TEMPORARY TABLE {t} AS SELECT id FROM "phys"."main"."orders" AS "orders""#),
    );
    rewrites_to("engineer", "CREATE TABLE temp.scratch (a INT)", &format!("CREATE TEMPORARY TABLE {t} (a INT)"));
    rewrites_to("engineer", "SELECT * FROM scratch", &format!(r#"SELECT * FROM {t} AS "scratch""#));
    rewrites_to("engineer", "SELECT * FROM temp.scratch s", &format!("SELECT * FROM {t} s"));
    rewrites_to("engineer", "INSERT INTO scratch SELECT id FROM orders", &format!(r#"INSERT INTO {t} SELECT id FROM "phys"."main"."orders" AS "orders""#));
    rewrites_to("engineer", "DELETE FROM temp.main.scratch", &format!(r#"DELETE FROM {t} AS "scratch""#));
    rewrites_to("engineer", "DROP TABLE scratch", &format!("DROP TABLE {t}"));
    // a virtual object wins over a temporary table of the same bare name
    rewrites_to("engineer", "SELECT * FROM orders", r#"SELECT * FROM "phys"."main"."orders" AS "orders""#);
    // another principal's temp name is never reachable, however it is spelled: the mangled
    // names start with the reserved prefix
    let other = temp("engineer", "x");
    let bare = other.rsplit('.').next().unwrap().trim_matches('"').to_string();
    assert!(bare.starts_with("__acl"), "{bare}");
    refused("engineer", &format!("SELECT * FROM temp.{bare}"), |e| matches!(e, AclError::Unsupported(Unsupported::ReservedName)));
}

#[test]
fn temp_prefix_differs_by_roles_and_claims() {
    let p = policy();
    let a = Principal::role("engineer");
    let mut b = Principal::role("engineer");
    b.claims.insert("tenant".into(), Some("acme".into()));
    let mut c = Principal::role("engineer");
    c.claims.insert("tenant".into(), Some("globex".into()));
    let d = Principal { roles: vec!["engineer".into(), "analyst".into()], label: "token".into(), claims: Default::default() };
    let e = Principal { roles: vec!["analyst".into(), "engineer".into()], label: "token".into(), claims: Default::default() };
    let prefix = |x: &Principal| View::new(&p, x).unwrap().temp_prefix().to_string();
    let all = [prefix(&a), prefix(&b), prefix(&c), prefix(&d)];
    for i in 0..all.len() {
        for j in i + 1..all.len() {
            assert_ne!(all[i], all[j]);
        }
    }
    assert_eq!(prefix(&d), prefix(&e), "role order does not matter");
}

#[test]
fn temp_needs_temp() {
    refused("analyst", "CREATE TEMP TABLE scratch (a INT)", |e| matches!(e, AclError::LacksCapability(LacksCapability { capabilities, on: On::TempTables, .. }) if capabilities == &["temp"]));
    refused("analyst", "CREATE TABLE temp.scratch (a INT)", |e| matches!(e, AclError::LacksCapability(LacksCapability { capabilities, on: On::TempTables, .. }) if capabilities == &["temp"]));
    refused("analyst", "CREATE TEMP VIEW v AS SELECT 1", |e| matches!(e, AclError::LacksCapability(LacksCapability { capabilities, on: On::TempTables, .. }) if capabilities == &["temp"]));
    // without temp, temp.t is a name like any other: not granted
    refused("analyst", "SELECT * FROM temp.scratch", |e| matches!(e, AclError::NotGranted(NotGranted::Catalog { .. })));
    refused("analyst", "DROP TABLE temp.scratch", |e| matches!(e, AclError::NotGranted(NotGranted::Catalog { .. })));
    // without temp a bare unknown name is just unknown
    refused("analyst", "SELECT * FROM scratch", not_granted("scratch"));
    // the AS SELECT part is checked like any read
    refused("engineer", "CREATE TEMP TABLE s AS SELECT * FROM phys.main.orders", |e| matches!(e, AclError::NotGranted(NotGranted::Catalog { .. })));
    refused("engineer", "CREATE TEMP TABLE s AS SELECT * FROM read_csv('/etc/passwd')", not_permitted("read_csv"));
}

#[test]
fn create_and_drop_in_a_virtual_schema() {
    rewrites_to("engineer", "CREATE TABLE sales.lake.t (a INT NOT NULL, b VARCHAR DEFAULT 'x', PRIMARY KEY (a))",
        r#"CREATE TABLE "lakedb"."raw"."t" (a INT NOT NULL, b VARCHAR DEFAULT 'x', PRIMARY KEY (a))"#);
    rewrites_to("engineer", "CREATE TABLE lake.t AS SELECT id FROM orders",
        r#"CREATE TABLE "lakedb"."raw"."t" AS SELECT id FROM "phys"."main"."orders" AS "orders""#);
    // a view's body stands behind the view guard (`views`, view_tests.rs)
    view_rewrites_to("engineer", "CREATE OR REPLACE VIEW sales.lake.v AS SELECT * FROM orders WHERE id > 1",
        r#"CREATE OR REPLACE VIEW "lakedb"."raw"."v" AS "#,
        r#", (SELECT * FROM "phys"."main"."orders" AS "orders" WHERE id > 1) AS "__acl_q""#);
    rewrites_to("engineer", "DROP TABLE IF EXISTS sales.lake.t", r#"DROP TABLE IF EXISTS "lakedb"."raw"."t""#);
    rewrites_to("engineer", "DROP VIEW lake.v", r#"DROP VIEW "lakedb"."raw"."v""#);
    // names in the virtual schema resolve live, RENAME form, with the schema grant's caps
    rewrites_to("engineer", "INSERT INTO lake.t VALUES (1)", r#"INSERT INTO "lakedb"."raw"."t" VALUES (1)"#);
    rewrites_to("lakereader", "SELECT * FROM sales.lake.anything", r#"SELECT * FROM "lakedb"."raw"."anything" AS "anything""#);
    refused("lakereader", "DELETE FROM sales.lake.anything", |e| matches!(e, AclError::LacksCapability(LacksCapability { capabilities, on: On::Object(on), .. }) if capabilities == &["delete"] && on == "sales.lake.anything"));
}

#[test]
fn create_and_drop_are_refused_without_their_capability() {
    refused("lakereader", "CREATE TABLE sales.lake.t (a INT)", |e| matches!(e, AclError::LacksCapability(LacksCapability { capabilities, on: On::Schema(on), .. }) if capabilities == &["create"] && on == "sales.lake"));
    refused("lakereader", "DROP TABLE sales.lake.t", |e| matches!(e, AclError::LacksCapability(LacksCapability { capabilities, on: On::Schema(on), .. }) if capabilities == &["drop"] && on == "sales.lake"));
    refused("lakereader", "CREATE OR REPLACE TABLE sales.lake.t (a INT)", |e| matches!(e, AclError::LacksCapability(LacksCapability { capabilities, on: On::Schema(on), .. }) if capabilities == &["create", "drop"] && on == "sales.lake"));
    // not in a virtual schema: a listed object, the catalog's main schema, another catalog
    refused("engineer", "CREATE TABLE sales.t (a INT)", |e| matches!(e, AclError::NotGranted(NotGranted::Schema { .. })));
    refused("engineer", "DROP TABLE orders", |e| matches!(e, AclError::NotGranted(NotGranted::Schema { .. })));
    refused("engineer", "CREATE TABLE hr.people2 (a INT)", |e| matches!(e, AclError::NotGranted(NotGranted::Schema { .. })));
    // a physical name is never a place
    refused("engineer", "CREATE TABLE lakedb.raw.t (a INT)", |e| matches!(e, AclError::NotGranted(NotGranted::Catalog { .. })));
    refused("engineer", "CREATE TABLE phys.main.t AS SELECT 1", |e| matches!(e, AclError::NotGranted(NotGranted::Catalog { .. })));
    // the AS SELECT part reads only what the principal may read
    refused("engineer", "CREATE TABLE sales.lake.t AS SELECT * FROM lakedb.raw.x", |e| matches!(e, AclError::NotGranted(NotGranted::Catalog { .. })));
    refused("lakereader", "CREATE VIEW sales.lake.v AS SELECT * FROM sales.orders", |e| matches!(e, AclError::LacksCapability(LacksCapability { capabilities, on: On::Schema(on), .. }) if capabilities == &["create"] && on == "sales.lake"));
    // a view other principals may read must not read this principal's temporary tables
    refused("engineer", "CREATE VIEW sales.lake.v AS SELECT * FROM temp.scratch", |e| matches!(e, AclError::Unsupported(Unsupported::PersistentViewOfTemp)));
    refused("engineer", "CREATE VIEW sales.lake.v AS SELECT * FROM orders, scratch", |e| matches!(e, AclError::Unsupported(Unsupported::PersistentViewOfTemp)));
    let t = temp("engineer", "scratch");
    let v = temp("engineer", "v");
    view_rewrites_to("engineer", "CREATE TEMP VIEW v AS SELECT * FROM scratch",
        &format!("CREATE TEMPORARY VIEW {v} AS "), &format!(r#", (SELECT * FROM {t} AS "scratch") AS "__acl_q""#));
}

#[test]
fn only_plain_ddl_forms() {
    refused("engineer", "CREATE TABLE sales.lake.t (a INT REFERENCES orders (id))", |e| matches!(e, AclError::Unsupported(Unsupported::ColumnOption)));
    refused("engineer", "CREATE TABLE sales.lake.t (a INT, FOREIGN KEY (a) REFERENCES orders (id))", |e| matches!(e, AclError::Unsupported(Unsupported::TableConstraint)));
    refused("engineer", "CREATE TABLE sales.lake.t (a physdb.main.mytype)", |e| matches!(e, AclError::TypeNotPermitted(TypeNotPermitted::Named { .. })));
    refused("engineer", "DROP TABLE sales.lake.t CASCADE", |e| matches!(e, AclError::Unsupported(Unsupported::Drop)));
    refused("engineer", "DROP SCHEMA sales.lake", |e| matches!(e, AclError::StatementNotPermitted(StatementNotPermitted::Kind { .. })));
    refused("engineer", "CREATE SCHEMA lakedb.other", |e| matches!(e, AclError::StatementNotPermitted(StatementNotPermitted::Kind { .. })));
    refused("engineer", "CREATE INDEX i ON sales.lake.t (a)", |e| matches!(e, AclError::StatementNotPermitted(StatementNotPermitted::Kind { .. })));
    refused("engineer", "CREATE SEQUENCE s", |e| matches!(e, AclError::StatementNotPermitted(StatementNotPermitted::Kind { .. })));
    refused("engineer", "CREATE SECRET s (TYPE s3)", |e| matches!(e, AclError::StatementNotPermitted(StatementNotPermitted::Kind { .. })));
    refused("engineer", "CREATE MACRO m() AS 1", |e| matches!(e, AclError::StatementNotPermitted(StatementNotPermitted::Kind { .. })));
    refused("engineer", "ALTER TABLE sales.lake.t ADD COLUMN b INT", |e| matches!(e, AclError::StatementNotPermitted(StatementNotPermitted::Kind { .. })));
}
