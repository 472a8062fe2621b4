//! Expanded schemas, applied with the listing the engine would pass (`objects`).
use super::*;
use crate::admin::{parse, Command};
use crate::error::AclError;

/// Parses `sql` and applies it as if the host had listed `objects` for it.
fn run(p: &mut Policy, sql: &str, objects: &[&str]) -> Result<String> {
    let mut cmd = parse(sql).expect(sql);
    if let Command::ExpandSchema { objects: o, .. } = &mut cmd {
        *o = Some(objects.iter().map(|s| s.to_string()).collect());
    }
    crate::admin::apply(p, &cmd)
}

fn ok(p: &mut Policy, sql: &str, objects: &[&str]) -> String {
    run(p, sql, objects).unwrap_or_else(|e| panic!("{sql}: {e}"))
}

fn invalid(p: &mut Policy, sql: &str, objects: &[&str]) -> Invalid {
    let before = p.clone();
    match run(p, sql, objects) {
        Err(AclError::Invalid(i)) => {
            assert_eq!(*p, before, "{sql}: a failed command changed the policy");
            i
        }
        other => panic!("{sql}: expected invalid, got {other:?}"),
    }
}

fn setup() -> Policy {
    let mut p = Policy::default();
    ok(&mut p, "CREATE VIRTUAL CATALOG lake", &[]);
    ok(&mut p, "CREATE ROLE analyst", &[]);
    p
}

fn phys(p: &Policy, schema: &str, name: &str) -> Option<PhysName> {
    match &p.catalogs["lake"].objects.get(&(schema.to_string(), name.to_string()))?.kind {
        RelationKind::Table(t) => Some(t.clone()),
        RelationKind::View(_) => None,
    }
}

fn names(p: &Policy, schema: &str) -> Vec<String> {
    p.catalogs["lake"].objects.keys().filter(|(s, _)| s == schema).map(|(_, n)| n.clone()).collect()
}

#[test]
fn create_lists_one_table_per_source_object() {
    let mut p = setup();
    let status = ok(&mut p, "CREATE VIRTUAL SCHEMA lake.raw FROM Lakedb.Raw COMMENT 'raw zone'", &["Events", "users"]);
    assert_eq!(status, "CREATE VIRTUAL SCHEMA lake.raw");
    assert_eq!(names(&p, "raw"), ["events", "users"]);
    let events = phys(&p, "raw", "events").unwrap();
    assert_eq!((events.db.as_str(), events.schema.as_str(), events.name.as_str()), ("Lakedb", "Raw", "Events"));
    assert_eq!(p.schema_comment("lake", "raw"), Some("raw zone"));
    // an expanded schema is no alias: its names are the listed ones only
    assert!(p.virtual_schema("lake", "raw").is_none());
    assert!(matches!(invalid(&mut p, "CREATE VIRTUAL SCHEMA lake.raw FROM lakedb.raw", &["x"]), Invalid::Exists { .. }));
    assert!(ok(&mut p, "CREATE VIRTUAL SCHEMA IF NOT EXISTS lake.raw FROM lakedb.other", &["x"]).ends_with("(skipped: exists)"));
    assert_eq!(names(&p, "raw"), ["events", "users"]);
}

#[test]
fn create_refuses_nothing_a_catalog_or_a_schema_with_objects() {
    let mut p = setup();
    assert!(matches!(invalid(&mut p, "CREATE VIRTUAL SCHEMA lake.raw FROM lakedb.raw", &[]), Invalid::EmptySource { .. }));
    assert!(matches!(invalid(&mut p, "CREATE VIRTUAL SCHEMA nope.raw FROM lakedb.raw", &["a"]), Invalid::Missing { .. }));
    ok(&mut p, "CREATE VIRTUAL TABLE lake.hand.t AS db.main.t", &[]);
    assert!(matches!(invalid(&mut p, "CREATE VIRTUAL SCHEMA lake.hand FROM lakedb.raw", &["a"]), Invalid::SchemaHoldsObjects { .. }));
    // and an alias may not take an expanded schema's name
    ok(&mut p, "CREATE VIRTUAL SCHEMA lake.raw FROM lakedb.raw", &["a"]);
    assert!(matches!(invalid(&mut p, "CREATE OR REPLACE VIRTUAL SCHEMA lake.raw AS lakedb.raw", &[]), Invalid::SchemaHoldsObjects { .. }));
}

#[test]
fn refresh_adds_keeps_changes_and_prunes_only_when_asked() {
    let mut p = setup();
    ok(&mut p, "CREATE VIRTUAL SCHEMA lake.raw FROM lakedb.raw", &["a", "b"]);
    ok(&mut p, "ALTER VIRTUAL TABLE lake.raw.a SET RLS 'tenant = 1'", &[]);
    ok(&mut p, "GRANT TABLE lake.raw.b TO ROLE analyst WITH (select)", &[]);
    // b is gone from the source, c is new
    assert_eq!(ok(&mut p, "ALTER VIRTUAL SCHEMA lake.raw REFRESH", &["a", "c"]), "ALTER VIRTUAL SCHEMA lake.raw REFRESH (1 added, 0 dropped)");
    assert_eq!(names(&p, "raw"), ["a", "b", "c"]);
    assert_eq!(p.catalogs["lake"].objects[&("raw".to_string(), "a".to_string())].slice.rls.as_deref(), Some("tenant = 1"));
    let b = ObjKey { catalog: "lake".into(), schema: "raw".into(), name: "b".into() };
    assert!(p.roles["analyst"].object_grants.contains_key(&b));
    // a hand-made object pointing elsewhere is not the source's: PRUNE leaves it
    ok(&mut p, "CREATE VIRTUAL TABLE lake.raw.extra AS other.main.t", &[]);
    let status = ok(&mut p, "ALTER VIRTUAL SCHEMA lake.raw REFRESH PRUNE", &["a", "c"]);
    assert_eq!(status, "ALTER VIRTUAL SCHEMA lake.raw REFRESH PRUNE (0 added, 1 dropped)");
    assert_eq!(names(&p, "raw"), ["a", "c", "extra"]);
    // the pruned object's grant went with it
    assert!(!p.roles["analyst"].object_grants.contains_key(&b));
}

#[test]
fn refresh_of_an_alias_or_nothing_is_refused() {
    let mut p = setup();
    ok(&mut p, "CREATE VIRTUAL SCHEMA lake.live AS lakedb.raw", &[]);
    assert!(matches!(invalid(&mut p, "ALTER VIRTUAL SCHEMA lake.live REFRESH", &["a"]), Invalid::NotExpanded { .. }));
    assert!(matches!(invalid(&mut p, "ALTER VIRTUAL SCHEMA lake.nope REFRESH PRUNE", &[]), Invalid::Missing { .. }));
    // never listed: refused, not expanded into nothing
    let cmd = parse("ALTER VIRTUAL SCHEMA lake.live REFRESH").unwrap();
    assert!(matches!(crate::admin::apply(&mut p, &cmd), Err(AclError::Internal { .. })));
}

#[test]
fn set_phys_repoints_an_expansion_and_retargets_an_alias() {
    let mut p = setup();
    ok(&mut p, "CREATE VIRTUAL SCHEMA lake.raw FROM lakedb.raw", &["a"]);
    ok(&mut p, "CREATE VIRTUAL TABLE lake.raw.extra AS other.main.t", &[]);
    assert_eq!(ok(&mut p, "ALTER VIRTUAL SCHEMA lake.raw SET PHYS lakedb.v2", &[]), "ALTER VIRTUAL SCHEMA lake.raw SET PHYS");
    assert_eq!(phys(&p, "raw", "a").unwrap().schema, "v2");
    assert_eq!(phys(&p, "raw", "extra").unwrap().db, "other");
    assert_eq!(p.catalogs["lake"].expansions["raw"].schema, "v2");
    ok(&mut p, "CREATE VIRTUAL SCHEMA lake.live AS lakedb.raw", &[]);
    ok(&mut p, "ALTER VIRTUAL SCHEMA lake.live SET PHYS lakedb.curated", &[]);
    assert_eq!(p.virtual_schema("lake", "live").unwrap().schema, "curated");
    assert!(matches!(invalid(&mut p, "ALTER VIRTUAL SCHEMA lake.nope SET PHYS a.b", &[]), Invalid::Missing { .. }));
}

#[test]
fn or_replace_moves_the_source_and_keeps_what_it_still_holds() {
    let mut p = setup();
    ok(&mut p, "CREATE VIRTUAL SCHEMA lake.raw FROM lakedb.raw", &["a", "b"]);
    ok(&mut p, "GRANT TABLE lake.raw.a TO ROLE analyst WITH (select)", &[]);
    let status = ok(&mut p, "CREATE OR REPLACE VIRTUAL SCHEMA lake.raw FROM lakedb.v2", &["a", "c"]);
    assert_eq!(status, "CREATE VIRTUAL SCHEMA lake.raw (replaced)");
    assert_eq!(names(&p, "raw"), ["a", "c"]);
    assert_eq!(phys(&p, "raw", "a").unwrap().schema, "v2");
    let a = ObjKey { catalog: "lake".into(), schema: "raw".into(), name: "a".into() };
    assert!(p.roles["analyst"].object_grants.contains_key(&a));
    // over an alias: the alias and its schema grants go
    ok(&mut p, "CREATE VIRTUAL SCHEMA lake.live AS lakedb.raw", &[]);
    ok(&mut p, "GRANT SCHEMA lake.live TO ROLE analyst", &[]);
    ok(&mut p, "CREATE OR REPLACE VIRTUAL SCHEMA lake.live FROM lakedb.raw", &["t"]);
    assert!(p.virtual_schema("lake", "live").is_none());
    assert!(p.roles["analyst"].schema_grants.is_empty());
    assert_eq!(names(&p, "live"), ["t"]);
}

#[test]
fn drop_removes_the_record_and_its_objects_only() {
    let mut p = setup();
    ok(&mut p, "CREATE VIRTUAL SCHEMA lake.raw FROM lakedb.raw", &["a", "b"]);
    ok(&mut p, "CREATE VIRTUAL TABLE lake.keep AS lakedb.raw.a", &[]);
    ok(&mut p, "GRANT TABLE lake.raw.a TO ROLE analyst WITH (select)", &[]);
    // Its objects are records of their own: without CASCADE the drop is refused (spec 007).
    assert!(matches!(invalid(&mut p, "DROP VIRTUAL SCHEMA lake.raw", &[]), Invalid::SchemaNotEmpty { .. }));
    assert_eq!(ok(&mut p, "DROP VIRTUAL SCHEMA lake.raw CASCADE", &[]), "DROP VIRTUAL SCHEMA lake.raw");
    assert!(names(&p, "raw").is_empty());
    assert!(p.catalogs["lake"].expansions.is_empty());
    assert!(p.roles["analyst"].object_grants.is_empty());
    assert_eq!(names(&p, crate::policy::DEFAULT_SCHEMA), ["keep"]);
    assert!(matches!(invalid(&mut p, "DROP VIRTUAL SCHEMA lake.raw", &[]), Invalid::Missing { .. }));
}
