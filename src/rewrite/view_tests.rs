//! Views a principal creates (spec 005, `views`): the rewrite puts the body behind the guard, and
//! the guard re-judges it under the policy in force when the view is used.
use super::{statement, view_guard, FnGate, GuardArgs, RewriteCache};
use crate::authz::{Principal, View};
use crate::error::{AclError, FunctionNotPermitted, Stale};
use crate::policy::{Caps, Catalog, CatalogGrant, Column, PhysName, Policy, Relation, RelationKind, Role, Slice, VirtualSchema};

const NOW: i64 = 1_700_000_000;

/// `hr.people` over `hrdb.main.people` with `RLS (org = acl_claim('org'))`; `hr.lake` a virtual
/// schema over `lakedb.raw`. Role `r` (claims org = acme): select and temp on hr (MAIN), create
/// in hr.lake.
fn policy() -> Policy {
    let mut p = Policy::default();
    let mut hr = Catalog::default();
    let people = PhysName { db: "hrdb".into(), schema: "main".into(), name: "people".into() };
    let slice = Slice { rls: Some("org = acl_claim('org')".into()), columns: None };
    hr.objects.insert(("main".into(), "people".into()), Relation { kind: RelationKind::Table(people), comment: None, slice, declared: Default::default() });
    hr.schemas.insert("lake".into(), VirtualSchema { db: "lakedb".into(), schema: "raw".into(), comment: None });
    p.catalogs.insert("hr".into(), hr);
    let mut r = Role::default();
    r.claims.insert("org".into(), "acme".into());
    r.catalog_grants.insert("hr".into(), CatalogGrant { caps: Caps::SELECT.union(Caps::TEMP), main: true, slice: Default::default() });
    r.schema_grants.insert(("hr".into(), "lake".into()), Caps::SELECT.union(Caps::CREATE));
    p.roles.insert("r".into(), r);
    p
}

/// Rewrites `sql` (a CREATE VIEW) under `principal` and returns the text and the guard's arguments.
fn create(p: &Policy, principal: &Principal, exp: Option<i64>, sql: &str) -> (String, GuardArgs) {
    let view = View::new(p, principal).unwrap().with_expiry(exp);
    let fns = FnGate::new(p, principal);
    let out = statement(&view, &fns, sql).unwrap();
    (out.clone(), guard_args(&out))
}

/// The guard's arguments, read from the text (hex literals: no quote inside them can mislead).
fn guard_args(sql: &str) -> GuardArgs {
    let call = r#""system"."main"."acl_view_guard"("#;
    assert_eq!(sql.matches(call).count(), 1, "not exactly one guard in {sql}");
    let start = sql.find(call).unwrap() + call.len();
    let end = start + sql[start..].find(')').unwrap();
    let args: Vec<&str> = sql[start..end].split(", ").collect();
    let text = |a: &str| {
        let t = a.strip_prefix('\'').and_then(|a| a.strip_suffix('\'')).unwrap_or_else(|| panic!("not a literal: {a}"));
        assert!(t.bytes().all(|b| b.is_ascii_hexdigit()), "a guard argument is not hex: {a}");
        t.to_string()
    };
    match args.as_slice() {
        [name, definer, body, persistent, digest] => {
            GuardArgs::decode(&text(name), &text(definer), &text(body), *persistent == "true", &text(digest)).unwrap()
        }
        other => panic!("no guard in {sql}: {other:?}"),
    }
}

fn judge(p: &Policy, args: &GuardArgs) -> Result<(), String> {
    view_guard(p, &RewriteCache::default(), args, NOW, 0).map_err(|e| e.to_string())
}

const CHANGED: &str = "acl: view v was created under rights that have changed; create it again";

#[test]
fn the_body_stands_behind_the_guard() {
    let p = policy();
    let r = Principal::role("r");
    let (out, args) = create(&p, &r, None, "CREATE TEMP VIEW v AS SELECT name FROM people WHERE id > 1");
    let prefix = View::new(&p, &r).unwrap().temp_prefix().to_string();
    let hex = |s: &str| s.bytes().map(|b| format!("{b:02x}")).collect::<String>();
    let definer = r#"{"roles":["r"],"label":"role \"r\"","claims":{},"exp":null}"#;
    let body = "SELECT name FROM people WHERE id > 1";
    let expected = format!(
        r#"CREATE TEMPORARY VIEW "temp"."main"."{prefix}v" AS SELECT "__acl_q".* FROM "system"."main"."acl_view_guard"('{}', '{}', '{}', false, '{}') AS "__acl_g", (SELECT name FROM (SELECT CASE WHEN org = 'acme' THEN COLUMNS(*) END FROM "hrdb"."main"."people" AS "__acl_p0" WHERE org = 'acme') AS "people" WHERE id > 1) AS "__acl_q""#,
        hex("v"),
        hex(definer),
        hex(body),
        args.digest
    );
    assert_eq!(out, expected);
    assert_eq!((args.name.as_str(), args.definer.as_str(), args.body.as_str()), ("v", definer, body));
    assert_eq!(args.digest.len(), 64);
    // a view that outlives the connection says so (its body may not read a temporary table)
    let (_, args) = create(&p, &r, None, "CREATE VIEW hr.lake.w AS SELECT 1 AS one");
    assert!(args.persistent && args.name == "hr.lake.w", "{args:?}");
    // quotes and backslashes in the body, the name or a claim never reach a literal as such
    let (_, args) = create(&p, &r, None, r#"CREATE TEMP VIEW "q'\" AS SELECT 'it''s' AS x, '\' AS y"#);
    assert_eq!(args.body, r#"SELECT 'it''s' AS x, '\' AS y"#);
    judge(&p, &args).unwrap();
    let mut t = Principal { roles: vec!["r".into()], label: "token of \"a'\\\"".into(), claims: Default::default() };
    t.claims.insert("org".into(), Some("x\\'); DROP TABLE t; --".into()));
    let (_, args) = create(&p, &t, Some(NOW + 10), "CREATE TEMP VIEW v AS SELECT * FROM people");
    judge(&p, &args).unwrap();
    assert_eq!(super::views::definer_from_arg(&args.definer).unwrap(), (t.clone(), Some(NOW + 10)));
}

#[test]
fn the_guard_passes_under_the_same_rights_and_after_an_unrelated_change() {
    let mut p = policy();
    let r = Principal::role("r");
    let (_, args) = create(&p, &r, None, "CREATE TEMP VIEW v AS SELECT * FROM people");
    judge(&p, &args).unwrap();
    p.version += 1;
    p.roles.insert("bystander".into(), Role::default());
    p.roles.get_mut("r").unwrap().claims.insert("unused".into(), "x".into());
    judge(&p, &args).unwrap();
}

#[test]
fn narrowing_revoking_dropping_and_new_claims_refuse_the_view() {
    let base = policy();
    let (_, args) = create(&base, &Principal::role("r"), None, "CREATE TEMP VIEW v AS SELECT * FROM people");
    let changed = |edit: &dyn Fn(&mut Policy)| {
        let mut p = base.clone();
        edit(&mut p);
        p.version += 1;
        judge(&p, &args)
    };
    for (what, edit) in [
        ("RLS added", Box::new(|p: &mut Policy| {
            p.roles.get_mut("r").unwrap().catalog_grants.get_mut("hr").unwrap().slice.rls = Some("id < 3".into());
        }) as Box<dyn Fn(&mut Policy)>),
        ("columns removed", Box::new(|p: &mut Policy| {
            p.roles.get_mut("r").unwrap().catalog_grants.get_mut("hr").unwrap().slice.columns =
                Some(vec![Column { name: "id".into(), expr: None }, Column { name: "org".into(), expr: None }]);
        })),
        ("revoked", Box::new(|p: &mut Policy| {
            p.roles.get_mut("r").unwrap().catalog_grants.remove("hr");
        })),
        ("select narrowed away", Box::new(|p: &mut Policy| {
            p.roles.get_mut("r").unwrap().catalog_grants.get_mut("hr").unwrap().caps = Caps::TEMP.union(Caps::INSERT);
        })),
        ("role dropped", Box::new(|p: &mut Policy| {
            p.roles.remove("r");
        })),
        ("claims changed", Box::new(|p: &mut Policy| {
            p.roles.get_mut("r").unwrap().claims.insert("org".into(), "globex".into());
        })),
        ("the object's own slice changed", Box::new(|p: &mut Policy| {
            let hr = p.catalogs.get_mut("hr").unwrap();
            hr.objects.get_mut(&("main".into(), "people".into())).unwrap().slice.rls = None;
        })),
    ] {
        assert_eq!(changed(&*edit), Err(CHANGED.to_string()), "{what}");
    }
    // the same rights again (a role dropped and made again with the same claims and grants)
    assert_eq!(changed(&|p: &mut Policy| {
        let r = p.roles.remove("r").unwrap();
        p.roles.insert("r".into(), r);
    }), Ok(()));
}

#[test]
fn a_token_definer_is_judged_by_its_claims_and_refused_after_exp() {
    let p = policy();
    let mut t = Principal { roles: vec!["r".into()], label: "token of \"alice\"".into(), claims: Default::default() };
    t.claims.insert("org".into(), Some("globex".into()));
    let (out, args) = create(&p, &t, Some(NOW + 10), "CREATE TEMP VIEW v AS SELECT * FROM people");
    assert!(out.contains("org = 'globex'") && !out.contains("acme"), "{out}");
    assert!(args.definer.contains(r#""exp":1700000010"#), "{}", args.definer);
    judge(&p, &args).unwrap();
    // past exp (no skew): refused; within the skew: not yet
    let expired = view_guard(&p, &RewriteCache::default(), &args, NOW + 11, 0).unwrap_err();
    assert_eq!(expired, AclError::StaleView { view: "v".into(), why: Stale::TokenExpired });
    view_guard(&p, &RewriteCache::default(), &args, NOW + 11, 60).unwrap();
    // a claim the token made NULL stays NULL (never the role's default)
    t.claims.insert("org".into(), None);
    let (out, args) = create(&p, &t, Some(NOW + 10), "CREATE TEMP VIEW v AS SELECT * FROM people");
    assert!(out.contains("org = NULL") && !out.contains("acme"), "{out}");
    judge(&p, &args).unwrap();
    // the role's default claim changing does not touch a claim the token supplied
    let mut q = p.clone();
    q.version += 1;
    q.roles.get_mut("r").unwrap().claims.insert("org".into(), "initech".into());
    judge(&q, &args).unwrap();
}

#[test]
fn a_tampered_guard_is_refused() {
    let p = policy();
    let (_, args) = create(&p, &Principal::role("r"), None, "CREATE TEMP VIEW v AS SELECT * FROM people");
    let with = |f: &dyn Fn(&mut GuardArgs)| {
        let mut a = args.clone();
        f(&mut a);
        judge(&p, &a)
    };
    assert_eq!(with(&|a| a.body = "SELECT 1".into()), Err(CHANGED.into()));
    assert_eq!(with(&|a| a.persistent = true), Ok(()), "the same body outside temp: the same text");
    assert_eq!(with(&|a| a.digest = "0".repeat(64)), Err(CHANGED.into()));
    assert!(with(&|a| a.definer = "{".into()).unwrap_err().starts_with("acl: internal error"));
}

#[test]
fn the_principal_cannot_call_the_guard() {
    let p = policy();
    let r = Principal::role("r");
    let view = View::new(&p, &r).unwrap();
    let fns = FnGate::new(&p, &r);
    for sql in [
        "SELECT * FROM acl_view_guard('v', '{}', 'SELECT 1', false, 'x')",
        r#"SELECT * FROM "system"."main"."acl_view_guard"('v', '{}', 'SELECT 1', false, 'x')"#,
        "CREATE TEMP VIEW v AS SELECT * FROM acl_view_guard('v', '{}', 'SELECT 1', false, 'x')",
    ] {
        let e = statement(&view, &fns, sql).unwrap_err();
        assert!(matches!(&e, AclError::FunctionNotPermitted(FunctionNotPermitted::Named { name }) if name == "acl_view_guard"), "{sql}: {e:?}");
    }
}

/// Issue 31, finding 8: a listing in a view is the definer's catalog, which holds the view, so
/// every listing of it described the view again. Refused wherever it stands in the body; the
/// same listing in a statement (CTE, subquery, CTAS: nothing stored lists later) still runs.
#[test]
fn a_view_cannot_read_a_listing_but_a_statement_can() {
    let p = policy();
    let r = Principal::role("r");
    let view = View::new(&p, &r).unwrap();
    let fns = FnGate::new(&p, &r);
    let listing_in_view = |e: &AclError| matches!(e, AclError::Unsupported(crate::error::Unsupported::ListingInView));
    for body in [
        "SELECT table_name FROM duckdb_tables()",
        "SELECT * FROM duckdb_schemas()",
        "SELECT * FROM main.duckdb_databases()",
        "SELECT * FROM system.main.duckdb_columns()",
        "SELECT * FROM information_schema.tables",
        "SELECT * FROM system.information_schema.schemata",
        "WITH l AS (SELECT * FROM duckdb_views()) SELECT * FROM l",
        "SELECT (SELECT table_name FROM information_schema.columns LIMIT 1) AS n",
        "SELECT id FROM people WHERE EXISTS (SELECT 1 FROM duckdb_tables())",
        "SELECT id FROM people UNION ALL SELECT column_index FROM duckdb_columns()",
    ] {
        for create in ["CREATE VIEW hr.lake.v AS ", "CREATE TEMP VIEW v AS ", "CREATE OR REPLACE VIEW hr.lake.v AS "] {
            let sql = format!("{create}{body}");
            match statement(&view, &fns, &sql) {
                Err(e) if listing_in_view(&e) => {}
                // OR REPLACE needs `drop`, which `r` does not hold: told so before the body is judged
                Err(AclError::LacksCapability(_)) if create.contains("REPLACE") => {}
                other => panic!("{sql}: {other:?}"),
            }
        }
        statement(&view, &fns, body).unwrap_or_else(|e| panic!("{body}: {e}"));
        let ctas = format!("CREATE TABLE hr.lake.t AS {body}");
        statement(&view, &fns, &ctas).unwrap_or_else(|e| panic!("{ctas}: {e}"));
    }
    // a view stored before the refusal (its guard's body holds a listing) is refused by the
    // guard for that reason, at every use
    let (_, mut args) = create(&p, &r, None, "CREATE TEMP VIEW v AS SELECT 1 AS one");
    args.body = "SELECT table_name FROM duckdb_tables()".into();
    assert!(listing_in_view(&view_guard(&p, &RewriteCache::default(), &args, NOW, 0).unwrap_err()));
}
