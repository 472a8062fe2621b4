//! ENUM exposure in the rewrite (spec 021): where the cast goes on reads (above
//! every filter of a slice; a table read whole only under `varchar`), around the statement's own
//! expressions of a write, on a virtual function's result, and what the second check is told.
use super::{statement, statement_allowed, FnGate};
use crate::authz::{Principal, View};
use crate::error::{AclError, SlicedWrite};
use crate::policy::{EnumTypes, ObjKey, Policy};
use std::sync::Arc;

const F: &str = "\"system\".main.acl_enum_varchar";

/// `d.files` (its own row policy), `d.notes` (the writer's grant slices it; the reader reads it
/// whole), `d.v` (a virtual view), `o.levels` (its owner reads and writes it whole), `d.big` (a
/// virtual table function).
fn policy(global: EnumTypes) -> Policy {
    let mut p = Policy::default();
    let host = crate::policy::categories::HostRow::builtin;
    p.functions.host = Arc::new(
        crate::policy::categories::categorise(&[host("typeof", "scalar"), host("error", "scalar"), host("max", "aggregate"), host("list_transform", "scalar")])
            .with_types(super::types::BUILTIN_TYPES.iter().copied()),
    );
    for s in [
        "CREATE VIRTUAL CATALOG d",
        "CREATE VIRTUAL TABLE d.files AS phys.main.docs RLS (tenant = 'acme')",
        "CREATE VIRTUAL TABLE d.notes AS phys.main.docs",
        "CREATE VIRTUAL VIEW d.v AS SELECT lvl FROM phys.main.docs",
        "CREATE VIRTUAL TABLE FUNCTION d.big(n INT) AS SELECT lvl FROM phys.main.docs WHERE id > acl_arg(1)",
        "CREATE ROLE reader",
        "GRANT CATALOG d TO ROLE reader WITH (select) MAIN",
        "CREATE ROLE writer",
        "GRANT CATALOG d TO ROLE writer WITH (writer) MAIN RLS (tenant = 'acme')",
        "CREATE ROLE narrow",
        "GRANT CATALOG d TO ROLE narrow WITH (writer) MAIN RLS (tenant = 'acme') COLUMNS (id, tenant, lvl, note)",
        "CREATE VIRTUAL CATALOG o",
        "CREATE VIRTUAL TABLE o.levels AS phys.main.docs",
        "CREATE ROLE owner",
        "GRANT CATALOG o TO ROLE owner WITH (writer) MAIN",
    ] {
        let cmd = crate::admin::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"));
        crate::admin::apply(&mut p, &cmd).unwrap_or_else(|e| panic!("{s}: {e}"));
    }
    p.enum_types = global;
    p
}

fn run(p: &Policy, role: &str, sql: &str) -> crate::error::Result<String> {
    let principal = Principal::role(role);
    let view = View::new(p, &principal)?;
    statement(&view, &FnGate::new(p, &principal), sql)
}

#[track_caller]
fn rewrites(p: &Policy, role: &str, sql: &str, expected: &str) {
    assert_eq!(run(p, role, sql).unwrap(), expected.replace("$F", F), "{sql}");
}

fn object(p: &mut Policy, catalog: &str, name: &str, enums: Option<EnumTypes>) {
    let key = ObjKey { catalog: catalog.into(), schema: "main".into(), name: name.into() };
    p.catalogs.get_mut(catalog).unwrap().objects.get_mut(&(key.schema, key.name)).unwrap().declared.enums = enums;
}

#[test]
fn a_sliced_read_takes_the_cast_above_its_filter() {
    let p = policy(EnumTypes::Sliced);
    // the object's own row policy: the cast in the layer's projection around the guard, its
    // filter reading the physical values
    rewrites(&p, "reader", "SELECT lvl FROM files",
        r#"SELECT lvl FROM (SELECT $F(CASE WHEN tenant = 'acme' THEN COLUMNS(*) END) FROM "phys"."main"."docs" AS "__acl_p0" WHERE tenant = 'acme') AS "files""#);
    // with the full guard (a principal's predicate that is not leak-proof)
    rewrites(&p, "reader", "SELECT lvl FROM files WHERE error(lvl) IS NULL",
        r#"SELECT lvl FROM (SELECT $F(CASE WHEN tenant = 'acme' THEN COLUMNS(*) END) FROM "phys"."main"."docs" AS "__acl_p0" WHERE tenant = 'acme') AS "files" WHERE "error"(lvl) IS NULL"#);
    // the grant's slice, a virtual view, a virtual function: each narrows what is read
    rewrites(&p, "writer", "SELECT lvl FROM notes",
        r#"SELECT lvl FROM (SELECT $F(CASE WHEN tenant = 'acme' THEN COLUMNS(*) END) FROM "phys"."main"."docs" AS "__acl_p0" WHERE tenant = 'acme') AS "notes""#);
    rewrites(&p, "reader", "SELECT lvl FROM v",
        r#"SELECT lvl FROM (SELECT $F(COLUMNS(*)) FROM (SELECT lvl FROM phys.main.docs) AS "__acl_p0") AS "v""#);
    rewrites(&p, "reader", "SELECT lvl FROM big(1)",
        r#"SELECT lvl FROM (SELECT $F(COLUMNS("__acl_p0".*)) FROM (VALUES (CAST(1 AS INT))) AS "__acl_args" ("a1"), LATERAL (SELECT lvl FROM "phys"."main"."docs" WHERE id > "__acl_args"."a1") AS "__acl_p0") AS "big""#);
}

#[test]
fn a_table_read_whole_keeps_its_type_unless_the_operator_says_varchar() {
    let mut p = policy(EnumTypes::Sliced);
    rewrites(&p, "reader", "SELECT lvl FROM notes", r#"SELECT lvl FROM "phys"."main"."docs" AS "notes""#);
    object(&mut p, "d", "notes", Some(EnumTypes::Varchar));
    rewrites(&p, "reader", "SELECT lvl FROM notes",
        r#"SELECT lvl FROM (SELECT $F(COLUMNS(*)) FROM "phys"."main"."docs" AS "__acl_p0") AS "notes""#);
    let p = policy(EnumTypes::Varchar);
    rewrites(&p, "owner", "SELECT lvl FROM levels",
        r#"SELECT lvl FROM (SELECT $F(COLUMNS(*)) FROM "phys"."main"."docs" AS "__acl_p0") AS "levels""#);
}

#[test]
fn keep_shows_duckdbs_type_and_an_objects_own_choice_wins() {
    let mut p = policy(EnumTypes::Keep);
    rewrites(&p, "reader", "SELECT lvl FROM files",
        r#"SELECT lvl FROM (SELECT CASE WHEN tenant = 'acme' THEN COLUMNS(*) END FROM "phys"."main"."docs" AS "__acl_p0" WHERE tenant = 'acme') AS "files""#);
    rewrites(&p, "reader", "SELECT lvl FROM big(1)",
        r#"SELECT lvl FROM (SELECT "__acl_p0".* FROM (VALUES (CAST(1 AS INT))) AS "__acl_args" ("a1"), LATERAL (SELECT lvl FROM "phys"."main"."docs" WHERE id > "__acl_args"."a1") AS "__acl_p0") AS "big""#);
    object(&mut p, "d", "files", Some(EnumTypes::Sliced));
    rewrites(&p, "reader", "SELECT lvl FROM files",
        r#"SELECT lvl FROM (SELECT $F(CASE WHEN tenant = 'acme' THEN COLUMNS(*) END) FROM "phys"."main"."docs" AS "__acl_p0" WHERE tenant = 'acme') AS "files""#);
    let mut p = policy(EnumTypes::Varchar);
    object(&mut p, "d", "files", Some(EnumTypes::Keep));
    rewrites(&p, "reader", "SELECT lvl FROM files",
        r#"SELECT lvl FROM (SELECT CASE WHEN tenant = 'acme' THEN COLUMNS(*) END FROM "phys"."main"."docs" AS "__acl_p0" WHERE tenant = 'acme') AS "files""#);
}

#[test]
fn a_sliced_writes_own_expressions_read_the_target_through_the_cast() {
    let p = policy(EnumTypes::Sliced);
    // SET values, WHERE (guarded by the slice after the cast went in), RETURNING: a bare column
    // keeps its name, `*` becomes COLUMNS(*)
    rewrites(&p, "writer", "UPDATE notes SET note = typeof(lvl) WHERE id = 1 RETURNING lvl, *",
        r#"UPDATE "phys"."main"."docs" AS "notes" SET note = "typeof"($F(lvl)) WHERE ("notes".tenant = 'acme') AND CASE WHEN ("notes".tenant = 'acme') THEN ($F(id) = 1) ELSE false END RETURNING $F(lvl) AS lvl, $F(COLUMNS(*))"#);
    // a correlated subquery: its select list (a bare column, the target's row) and its
    // expressions; a bare GROUP BY or ORDER BY key stays as written
    rewrites(&p, "writer", "DELETE FROM notes WHERE note IN (SELECT notes.note GROUP BY note ORDER BY note) RETURNING typeof(notes)",
        r#"DELETE FROM "phys"."main"."docs" AS "notes" WHERE ("notes".tenant = 'acme') AND CASE WHEN ("notes".tenant = 'acme') THEN ($F(note) IN (SELECT $F(notes.note) AS note GROUP BY note ORDER BY note)) ELSE false END RETURNING "typeof"($F(notes))"#);
    rewrites(&p, "writer", "UPDATE notes SET note = (SELECT typeof(x) FROM (SELECT notes.*) AS x) WHERE id = 1",
        r#"UPDATE "phys"."main"."docs" AS "notes" SET note = (SELECT "typeof"($F(x)) AS "typeof(x)" FROM (SELECT $F(COLUMNS(notes.*))) AS x) WHERE ("notes".tenant = 'acme') AND CASE WHEN ("notes".tenant = 'acme') THEN ($F(id) = 1) ELSE false END"#);
    // INSERT: RETURNING only (the rows come from the source); DEFAULT stays the keyword
    let out = run(&p, "writer", "INSERT INTO notes (id, tenant, lvl) VALUES (7, 'acme', DEFAULT) RETURNING lvl").unwrap();
    assert!(out.contains("VALUES (7, 'acme', DEFAULT)") && out.ends_with(&format!("RETURNING {F}(lvl) AS lvl")), "{out}");
}

#[test]
fn a_merge_is_read_through_the_cast_and_keeps_its_join_keys() {
    let p = policy(EnumTypes::Sliced);
    let out = run(&p, "writer", "MERGE INTO notes USING notes AS s ON notes.id = s.id WHEN MATCHED AND s.lvl <> notes.lvl THEN UPDATE SET note = typeof(notes.lvl) RETURNING lvl").unwrap();
    for part in [
        // the join key, still seen as one through the cast
        &format!(r#"CASE WHEN ("notes".tenant = 'acme') THEN ({F}(notes.id)) END = {F}(s.id)"#) as &str,
        &format!("WHEN MATCHED AND {F}(s.lvl) <> {F}(notes.lvl) THEN UPDATE SET note = \"typeof\"({F}(notes.lvl))"),
        &format!("RETURNING {F}(lvl) AS lvl"),
    ] {
        assert!(out.contains(part), "{out}\ndoes not contain {part}");
    }
}

#[test]
fn a_table_written_whole_keeps_its_type_under_sliced() {
    let p = policy(EnumTypes::Sliced);
    rewrites(&p, "owner", "UPDATE levels SET note = typeof(lvl) RETURNING *",
        r#"UPDATE "phys"."main"."docs" AS "levels" SET note = "typeof"(lvl) RETURNING *"#);
    let p = policy(EnumTypes::Varchar);
    rewrites(&p, "owner", "UPDATE levels SET note = typeof(lvl) RETURNING *",
        r#"UPDATE "phys"."main"."docs" AS "levels" SET note = "typeof"($F(lvl)) RETURNING $F(COLUMNS(*))"#);
    rewrites(&p, "owner", "INSERT INTO levels (id) VALUES (1) ON CONFLICT (id) DO UPDATE SET note = excluded.lvl WHERE lvl IS NULL RETURNING id",
        r#"INSERT INTO "phys"."main"."docs" (id) VALUES (1) ON CONFLICT(id) DO UPDATE SET note = $F(excluded.lvl) WHERE $F(lvl) IS NULL RETURNING $F(id) AS id"#);
}

/// A struct's field after `.` is a name, not a column; a lambda's parameter is its list's element,
/// which went through the cast with the list.
#[test]
fn field_names_and_lambda_parameters_stay_as_written() {
    let p = policy(EnumTypes::Varchar);
    let out = run(&p, "owner", "UPDATE levels SET note = tags.l RETURNING (tags).l AS f, list_transform(hist, lambda x: x) AS h").unwrap();
    assert!(out.contains(&format!("SET note = {F}(tags.l)")), "{out}");
    assert!(out.contains(&format!("RETURNING ({F}(tags)).l AS f, \"list_transform\"({F}(hist), lambda x : x) AS h")), "{out}");
}

#[test]
fn stars_the_cast_cannot_take_are_refused() {
    let p = policy(EnumTypes::Varchar);
    let refused = |sql: &str| match run(&p, "owner", sql) {
        Err(AclError::SlicedWrite(SlicedWrite::EnumStar { object })) => assert_eq!(object, "o.levels", "{sql}"),
        other => panic!("{sql}: {other:?}"),
    };
    refused("UPDATE levels SET note = 'x' RETURNING * EXCLUDE (note)");
    refused("UPDATE levels SET note = 'x' RETURNING levels.* REPLACE (1 AS id)");
    refused("DELETE FROM levels WHERE id IN (SELECT levels.* EXCLUDE (note) FROM (SELECT 1) AS one)");
    // a subquery's own star expands its own FROM: left as written
    rewrites(&p, "owner", "DELETE FROM levels WHERE id IN (SELECT * FROM (SELECT 1) AS one)",
        r#"DELETE FROM "phys"."main"."docs" AS "levels" WHERE $F(id) IN (SELECT * FROM (SELECT 1) AS one)"#);
}

/// On a column-restricted target the column rule refuses every star over it, for its own reason:
/// the cast leaves stars to it.
#[test]
fn a_column_restricted_target_keeps_the_column_rules_refusals() {
    let p = policy(EnumTypes::Sliced);
    assert!(matches!(run(&p, "narrow", "UPDATE notes SET note = 'x' RETURNING *"), Err(AclError::SlicedWrite(SlicedWrite::ReturningStar { .. }))));
    assert!(matches!(run(&p, "narrow", "UPDATE notes SET note = (SELECT notes.* EXCLUDE (id))"), Err(AclError::SlicedWrite(SlicedWrite::Star { .. }))));
    assert!(matches!(run(&p, "narrow", "DELETE FROM notes RETURNING COLUMNS(*)"), Err(AclError::SlicedWrite(SlicedWrite::Star { .. }))));
    let out = run(&p, "narrow", "UPDATE notes SET note = typeof(lvl) RETURNING lvl").unwrap();
    assert!(out.contains(&format!("SET note = \"typeof\"({F}(lvl))")) && out.ends_with(&format!("RETURNING {F}(lvl) AS lvl")), "{out}");
}

#[test]
fn a_virtual_function_without_arguments_takes_the_cast_in_its_region() {
    let mut p = policy(EnumTypes::Sliced);
    let cmd = crate::admin::parse("CREATE VIRTUAL TABLE FUNCTION d.all_levels() AS SELECT lvl FROM phys.main.docs").unwrap();
    crate::admin::apply(&mut p, &cmd).unwrap();
    rewrites(&p, "reader", "SELECT lvl FROM all_levels()",
        r#"SELECT lvl FROM (SELECT $F(COLUMNS(*)) FROM (SELECT lvl FROM "phys"."main"."docs") AS "__acl_p0") AS "all_levels""#);
    let principal = Principal::role("reader");
    let view = View::new(&p, &principal).unwrap();
    let allowed = statement_allowed(&view, &FnGate::new(&p, &principal), "SELECT lvl FROM all_levels()").unwrap().1;
    assert!(allowed.regions[0].names.functions.contains(&crate::authz::enums::ENUM_FN.map(String::from).to_vec()));
}

#[test]
fn the_second_check_expects_the_cast_where_the_rules_put_it() {
    let p = policy(EnumTypes::Sliced);
    let fn_path: Vec<String> = crate::authz::enums::ENUM_FN.map(String::from).to_vec();
    let allowed = |role: &str, sql: &str| {
        let principal = Principal::role(role);
        let view = View::new(&p, &principal).unwrap();
        statement_allowed(&view, &FnGate::new(&p, &principal), sql).unwrap().1
    };
    // a write's own expressions: outside every region
    assert!(allowed("writer", "UPDATE notes SET note = lvl").outside.functions.contains(&fn_path));
    assert!(!allowed("owner", "UPDATE levels SET note = lvl").outside.functions.contains(&fn_path));
    // a sliced read: inside the slice's region, as its SQL names it
    let read = allowed("reader", "SELECT lvl FROM files");
    assert!(!read.outside.functions.contains(&fn_path));
    assert!(read.regions[0].names.functions.contains(&fn_path), "{:?}", read.regions[0].names.functions);
}

#[test]
fn listings_describe_the_object_as_it_is_read() {
    let mut p = policy(EnumTypes::Sliced);
    object(&mut p, "d", "notes", Some(EnumTypes::Varchar));
    let principal = Principal::role("reader");
    let view = View::new(&p, &principal).unwrap();
    let listing = view.listing();
    let sql = |name: &str| {
        let o = listing.objects.iter().find(|o| o.key.name == name).unwrap();
        super::metadata::exposed_sql(&view, o).unwrap().unwrap()
    };
    // the slice (with the full guard: a listing is bound, not filtered), a table read whole that
    // says varchar, a view
    assert!(sql("files").starts_with(&format!("SELECT {F}(CASE WHEN tenant = 'acme' THEN COLUMNS(*) END) FROM")), "{}", sql("files"));
    assert_eq!(sql("notes"), format!(r#"SELECT {F}(COLUMNS(*)) FROM "phys"."main"."docs" AS "__acl_v""#));
    assert!(sql("v").starts_with(&format!("SELECT {F}(COLUMNS(*)) FROM (SELECT lvl FROM")), "{}", sql("v"));
    // the instance's keep: the physical table as it is
    let mut p = policy(EnumTypes::Keep);
    object(&mut p, "d", "files", None);
    let view = View::new(&p, &principal).unwrap();
    let listing = view.listing();
    let o = listing.objects.iter().find(|o| o.key.name == "notes").unwrap();
    assert_eq!(super::metadata::exposed_sql(&view, o).unwrap().unwrap(), r#"SELECT * FROM "phys"."main"."docs""#);
}
