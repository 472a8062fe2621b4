//! The scope decision (`check`, `check_native`, `check_gains`) for each kind of runner, written
//! as the statements an operator types.
use super::*;
use crate::admin::{apply, parse};

fn setup() -> Policy {
    let mut p = Policy::default();
    for sql in [
        "CREATE VIRTUAL CATALOG sales",
        "CREATE VIRTUAL CATALOG hr",
        "CREATE VIRTUAL TABLE sales.orders AS db.main.orders",
        "CREATE VIRTUAL TABLE hr.staff AS db.main.staff",
        "CREATE ROLE cm",
        "CREATE ROLE gm",
        "CREATE ROLE pt",
        "CREATE ROLE plain",
        "CREATE ROLE other",
        "GRANT CATALOG sales TO ROLE cm WITH (manage)",
        "GRANT CATALOG hr TO ROLE cm WITH (select)",
        "GRANT CATALOG sales TO ROLE plain WITH (select)",
        "GRANT ADMIN manage TO ROLE gm",
        "GRANT ADMIN passthrough TO ROLE pt",
        "CREATE ISSUER 'https://idp' KEYS 'hmac:a-shared-secret-of-at-least-32-bytes!'",
    ] {
        apply(&mut p, &parse(sql).unwrap()).unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    p
}

fn judge(p: &Policy, roles: &[&str], sql: &str) -> Result<()> {
    let roles: Vec<String> = roles.iter().map(|r| r.to_string()).collect();
    check(&Held::of(p, &roles), "the runner", &parse(sql).unwrap_or_else(|e| panic!("{sql}: {e}")))
}

#[track_caller]
fn allowed(p: &Policy, roles: &[&str], sql: &str) {
    if let Err(e) = judge(p, roles, sql) {
        panic!("{roles:?} {sql}: {e}");
    }
}

#[track_caller]
fn lacks(p: &Policy, roles: &[&str], sql: &str, scope: Scope) {
    match judge(p, roles, sql) {
        Err(AclError::LacksScope(l)) => assert_eq!(l.needs, scope, "{roles:?} {sql}"),
        other => panic!("{roles:?} {sql}: {other:?}"),
    }
}

/// What a catalog manager of `sales` may run there.
const ON_SALES: &[&str] = &[
    "CREATE VIRTUAL TABLE sales.new AS db.main.anything",
    "CREATE OR REPLACE VIRTUAL TABLE sales.orders AS db.main.orders RLS (id > 0)",
    "ADD TABLE db.main.t AS sales.legacy",
    "DROP VIRTUAL TABLE sales.orders",
    "CREATE VIRTUAL VIEW sales.v AS SELECT 1 AS a",
    "ALTER VIRTUAL TABLE sales.orders SET RLS (id > 1)",
    "ALTER VIRTUAL VIEW sales.v SET AS SELECT 2 AS a",
    "DROP VIRTUAL VIEW IF EXISTS sales.v",
    "CREATE VIRTUAL SCHEMA sales.raw AS db.raw",
    "DROP VIRTUAL SCHEMA sales.raw",
    "CREATE VIRTUAL SCALAR sales.f(x INTEGER) AS acl_arg(1) + 1",
    "DROP VIRTUAL SCALAR sales.f",
    "CREATE VIRTUAL REFERENCE sales.r FROM orders TO orders ON (id = id)",
    "DROP VIRTUAL REFERENCE sales.r",
    "COMMENT ON VIRTUAL TABLE sales.orders IS 'x'",
    "COMMENT ON VIRTUAL TABLE sales.orders COLUMN id IS 'x'",
    "ALTER VIRTUAL CATALOG sales SET COMMENT 'ours'",
    "ALTER VIRTUAL TABLE sales.orders SET TYPES (enums = keep)",
    "ALTER VIRTUAL VIEW sales.v SET TYPES (enums = varchar)",
    "CREATE OR REPLACE VIRTUAL TABLE sales.orders AS db.main.orders TYPES (enums = keep)",
];

/// What needs global manage: handing out access, the catalog itself, everything catalog-less.
const GLOBAL: &[&str] = &[
    "GRANT CATALOG sales TO ROLE other",
    "GRANT CATALOG sales TO ROLE other WITH (select, manage)",
    "GRANT CATALOG sales TO ROLE other CAPS '{\"manage\": true}'",
    "REVOKE CATALOG sales FROM ROLE plain",
    "ALTER GRANT CATALOG sales TO ROLE plain SET MAIN true",
    "GRANT TABLE sales.orders TO ROLE other",
    "REVOKE TABLE sales.orders FROM ROLE other",
    "GRANT SCHEMA sales.raw TO ROLE other",
    "REVOKE SCHEMA sales.raw FROM ROLE other",
    "DROP VIRTUAL CATALOG sales CASCADE",
    "CREATE VIRTUAL CATALOG more",
    "CREATE OR REPLACE VIRTUAL CATALOG sales",
    "CREATE ROLE x",
    "CREATE ROLE x CLAIMS (tenant = 'a')",
    "ALTER ROLE other SET CLAIMS (tenant = 'b')",
    "DROP ROLE other",
    "CREATE ISSUER 'https://x' KEYS 'hmac:a-shared-secret-of-at-least-32-bytes!'",
    "ALTER ISSUER 'https://idp' SET ROLE CLAIM 'groups'",
    "DROP ISSUER 'https://idp'",
    "MAP CLAIM 'g' FROM ISSUER 'https://idp' TO ROLE other",
    "MAP GROUP 'g' FROM ISSUER 'https://idp' TO ROLE other",
    "DROP MAP CLAIM 'g' FROM ISSUER 'https://idp'",
    "CREATE FUNCTION CATEGORY tools",
    "ALTER FUNCTION CATEGORY base DROP (upper)",
    "DROP FUNCTION CATEGORY IF EXISTS tools",
    "GRANT FUNCTION lower TO ROLE other",
    "DENY FUNCTION upper TO ROLE other",
    "REVOKE FUNCTION lower FROM ROLE other",
];

const ADMIN: &[&str] = &["GRANT ADMIN manage TO ROLE other", "GRANT ADMIN passthrough TO ROLE other", "REVOKE ADMIN FROM ROLE gm"];

#[test]
fn catalog_manage_runs_its_own_catalogs_object_statements_only() {
    let p = setup();
    for sql in ON_SALES {
        allowed(&p, &["cm"], sql);
    }
    for sql in GLOBAL {
        lacks(&p, &["cm"], sql, Scope::GlobalManage);
    }
    for sql in ADMIN {
        lacks(&p, &["cm"], sql, Scope::Passthrough);
    }
    // Another catalog: select on hr is no manage on hr; a catalog that does not exist neither.
    for sql in [
        "CREATE VIRTUAL TABLE hr.x AS db.main.x",
        "DROP VIRTUAL TABLE hr.staff",
        "ALTER VIRTUAL TABLE hr.staff SET PHYS db.main.other",
        "ALTER VIRTUAL TABLE hr.staff SET TYPES (enums = keep)",
        "COMMENT ON VIRTUAL CATALOG hr IS 'x'",
        "CREATE VIRTUAL SCALAR hr.f(x INTEGER) AS acl_arg(1)",
    ] {
        lacks(&p, &["cm"], sql, Scope::CatalogManage("hr".into()));
    }
    lacks(&p, &["cm"], "CREATE VIRTUAL TABLE nowhere.x AS db.main.x", Scope::CatalogManage("nowhere".into()));
}

#[test]
fn global_manage_runs_everything_but_admin_grants() {
    let p = setup();
    for sql in ON_SALES.iter().chain(GLOBAL) {
        allowed(&p, &["gm"], sql);
    }
    allowed(&p, &["gm"], "CREATE VIRTUAL TABLE hr.x AS db.main.x");
    for sql in ADMIN {
        lacks(&p, &["gm"], sql, Scope::Passthrough);
    }
    assert!(matches!(check_native(&Held::of(&p, &["gm".into()]), "x"), Err(AclError::LacksScope(_))));
}

#[test]
fn passthrough_runs_everything() {
    let p = setup();
    for sql in ON_SALES.iter().chain(GLOBAL).chain(ADMIN) {
        allowed(&p, &["pt"], sql);
    }
    assert_eq!(check_native(&Held::of(&p, &["pt".into()]), "x"), Ok(()));
}

#[test]
fn no_scope_runs_nothing() {
    let p = setup();
    lacks(&p, &["plain"], "CREATE VIRTUAL TABLE sales.x AS db.main.x", Scope::CatalogManage("sales".into()));
    lacks(&p, &["plain"], "GRANT CATALOG sales TO ROLE other", Scope::GlobalManage);
    lacks(&p, &["ghost"], "CREATE ROLE x", Scope::GlobalManage);
    match check_native(&Held::of(&p, &["plain".into()]), "role \"plain\"") {
        Err(e) => assert_eq!(e.to_string(), "acl: role \"plain\" lacks passthrough (ACL NATIVE)"),
        Ok(()) => panic!("native without passthrough"),
    }
    assert!(matches!(Held::of_existing(&p, &["ghost".into()]), Err(AclError::NotGranted(_))));
}

#[test]
fn a_principal_holds_the_union_of_its_roles_scopes() {
    let p = setup();
    let held = Held::of(&p, &["plain".into(), "cm".into(), "gm".into()]);
    assert_eq!(held.admin, Some(AdminScope::Manage));
    assert_eq!(held.catalogs, BTreeSet::from(["sales".to_string()]));
    allowed(&p, &["plain", "gm"], "CREATE ROLE x");
    allowed(&p, &["plain", "pt"], "GRANT ADMIN manage TO ROLE other");
}

#[test]
fn no_scope_grants_itself_anything() {
    let p = setup();
    let self_grant = |roles: &[&str], sql: &str| match judge(&p, roles, sql) {
        Err(AclError::SelfGrant(_)) => {}
        other => panic!("{roles:?} {sql}: {other:?}"),
    };
    for sql in [
        "GRANT CATALOG hr TO ROLE gm",
        "GRANT TABLE sales.orders TO ROLE gm WITH (select)",
        "GRANT SCHEMA sales.raw TO ROLE gm",
        // A revoke can widen: an object grant narrows its catalog grant.
        "REVOKE TABLE sales.orders FROM ROLE gm",
        "REVOKE CATALOG sales FROM ROLE gm",
        "ALTER GRANT CATALOG sales TO ROLE gm SET CAPS '{\"select\": true}'",
        "ALTER ROLE gm SET CLAIMS (tenant = 'all')",
        "CREATE OR REPLACE ROLE gm CLAIMS (tenant = 'all')",
        "MAP CLAIM 'g' FROM ISSUER 'https://idp' TO ROLE gm",
        "UNMAP CLAIM 'g' FROM ISSUER 'https://idp' FROM ROLE gm",
        "GRANT FUNCTION lower TO ROLE gm",
        "DENY FUNCTION upper TO ROLE gm",
        "REVOKE FUNCTION upper FROM ROLE gm",
        "GRANT FUNCTION lower TO ALL ROLES",
        "REVOKE FUNCTION CATEGORY json FROM ALL ROLES",
    ] {
        self_grant(&["gm"], sql);
        // Another role of the same principal is held too.
        self_grant(&["plain", "gm"], &sql.replace("ROLE gm", "ROLE plain"));
    }
    self_grant(&["pt"], "GRANT ADMIN passthrough TO ROLE pt");
    self_grant(&["pt"], "REVOKE ADMIN FROM ROLE pt");
    self_grant(&["pt"], "GRANT CATALOG sales TO ROLE pt");
    // Giving up what it holds, or work on its own role that grants nothing, is not a grant.
    allowed(&p, &["gm"], "DROP ROLE gm");
    allowed(&p, &["gm"], "CREATE OR REPLACE ROLE gm");
    match judge(&p, &["gm"], "GRANT CATALOG hr TO ROLE gm") {
        Err(e) => assert_eq!(e.to_string(), "acl: the runner may not change what role \"gm\" is granted: it holds that role"),
        Ok(()) => panic!("self-grant allowed"),
    }
}

#[test]
fn a_batch_may_not_leave_its_principal_holding_more_roles() {
    let before = vec!["a".to_string()];
    assert_eq!(check_gains("p", &before, &["a".to_string()]), Ok(()));
    assert_eq!(check_gains("p", &before, &[]), Ok(()));
    assert!(matches!(check_gains("p", &before, &["a".into(), "b".into()]), Err(AclError::SelfGrant(SelfGrant::Gains { role, .. })) if role == "b"));
}

#[test]
fn the_statement_is_named_in_the_refusal() {
    let p = setup();
    let text = |roles: &[&str], sql: &str| judge(&p, roles, sql).unwrap_err().to_string();
    assert_eq!(text(&["cm"], "GRANT CATALOG sales TO ROLE other"), "acl: the runner lacks global manage (GRANT CATALOG)");
    assert_eq!(text(&["cm"], "DROP VIRTUAL CATALOG sales"), "acl: the runner lacks global manage (DROP VIRTUAL CATALOG)");
    assert_eq!(text(&["cm"], "CREATE ROLE r"), "acl: the runner lacks global manage (CREATE ROLE)");
    assert_eq!(text(&["cm"], "CREATE VIRTUAL TABLE hr.t AS db.main.t"), "acl: the runner lacks manage on hr (CREATE VIRTUAL TABLE)");
    assert_eq!(text(&["gm"], "GRANT ADMIN manage TO ROLE other"), "acl: the runner lacks passthrough (GRANT ADMIN)");
}

#[test]
fn grant_and_revoke_admin_parse_and_apply() {
    assert_eq!(parse("GRANT ADMIN manage TO ROLE r").unwrap(), Command::GrantAdmin { role: "r".into(), scope: AdminScope::Manage });
    assert_eq!(parse("grant admin PASSTHROUGH to role \"R\"").unwrap(), Command::GrantAdmin { role: "r".into(), scope: AdminScope::Passthrough });
    assert_eq!(parse("REVOKE ADMIN FROM ROLE r;").unwrap(), Command::RevokeAdmin { role: "r".into() });
    let syntax = |sql: &str| parse(sql).unwrap_err().to_string().replace("acl: could not parse management statement: ", "acl: ");
    assert_eq!(syntax("GRANT ADMIN root TO ROLE r"), "acl: expected manage or passthrough after GRANT ADMIN, found root");
    assert_eq!(syntax("GRANT ADMIN 'manage' TO ROLE r"), "acl: expected manage or passthrough after GRANT ADMIN, found a string");
    assert_eq!(syntax("GRANT ADMIN manage TO r"), "acl: expected ROLE, found r");
    assert_eq!(syntax("REVOKE ADMIN manage FROM ROLE r"), "acl: expected FROM, found manage");
    assert_eq!(syntax("GRANT ADMIN manage TO ROLE r WITH (select)"), "acl: expected end of statement, found WITH");

    let mut p = setup();
    let run = |p: &mut Policy, sql: &str| apply(p, &parse(sql).unwrap());
    assert_eq!(run(&mut p, "GRANT ADMIN manage TO ROLE other").unwrap(), "GRANT ADMIN manage TO ROLE other");
    assert_eq!(run(&mut p, "GRANT ADMIN passthrough TO ROLE other").unwrap(), "GRANT ADMIN passthrough TO ROLE other (replaced)");
    assert_eq!(p.roles["other"].admin, Some(AdminScope::Passthrough));
    // A second GRANT ADMIN states the whole scope: it narrows too.
    run(&mut p, "GRANT ADMIN manage TO ROLE other").unwrap();
    assert_eq!(p.roles["other"].admin, Some(AdminScope::Manage));
    assert_eq!(run(&mut p, "REVOKE ADMIN FROM ROLE other").unwrap(), "REVOKE ADMIN FROM ROLE other");
    assert_eq!(run(&mut p, "REVOKE ADMIN FROM ROLE other").unwrap(), "REVOKE ADMIN FROM ROLE other (nothing to revoke)");
    assert_eq!(p.roles["other"].admin, None);
    assert!(matches!(run(&mut p, "GRANT ADMIN manage TO ROLE ghost"), Err(AclError::Invalid(_))));
    assert!(matches!(run(&mut p, "REVOKE ADMIN FROM ROLE ghost"), Err(AclError::Invalid(_))));
    // The scope goes with its role: a role of the same name later holds none.
    run(&mut p, "DROP ROLE gm").unwrap();
    run(&mut p, "CREATE ROLE gm").unwrap();
    assert_eq!(p.roles["gm"].admin, None);
    run(&mut p, "CREATE OR REPLACE ROLE pt").unwrap();
    assert_eq!(p.roles["pt"].admin, None);
    // `manage` on an object grant is refused, as every explicit-only capability there is.
    assert!(matches!(parse("GRANT TABLE sales.orders TO ROLE other WITH (manage)"), Err(AclError::Invalid(_))));
    assert!(matches!(parse("GRANT TABLE sales.orders TO ROLE other CAPS '{\"manage\": true}'"), Err(AclError::Invalid(_))));
}

/// A resource group that caps one of the runner's roles is that role's capacity: changing it in
/// any way (ALTER, narrowing included; CREATE OR REPLACE; DROP, IF EXISTS or not) is a grant to
/// itself. CREATE IF NOT EXISTS of it changes nothing; another group is the runner's business.
#[test]
fn no_runner_changes_a_resource_group_that_caps_its_own_role() {
    let mut p = setup();
    for sql in ["CREATE RESOURCE GROUP mine (max_sessions = 1)", "GRANT RESOURCE GROUP mine TO ROLE gm", "CREATE RESOURCE GROUP theirs", "GRANT ADMIN manage TO ROLE other"] {
        apply(&mut p, &parse(sql).unwrap()).unwrap();
    }
    for sql in [
        "ALTER RESOURCE GROUP mine SET (max_sessions = 100)",
        "ALTER RESOURCE GROUP MINE SET (max_result_rows = 5)",
        "CREATE OR REPLACE RESOURCE GROUP mine",
        "CREATE OR REPLACE RESOURCE GROUP mine (max_sessions = 1)",
        "DROP RESOURCE GROUP mine",
        "DROP RESOURCE GROUP IF EXISTS mine",
        "REVOKE RESOURCE GROUP mine FROM ROLE gm",
        "GRANT RESOURCE GROUP theirs TO ROLE gm",
    ] {
        match judge(&p, &["gm"], sql) {
            Err(AclError::SelfGrant(SelfGrant::Role { role, .. })) => assert_eq!(role, "gm", "{sql}"),
            other => panic!("{sql}: {other:?}"),
        }
        // the same statement by a global manager the group does not cap
        allowed(&p, &["other"], sql);
    }
    for sql in ["CREATE RESOURCE GROUP IF NOT EXISTS mine", "ALTER RESOURCE GROUP theirs SET (max_sessions = 2)", "DROP RESOURCE GROUP theirs", "CREATE OR REPLACE RESOURCE GROUP theirs"] {
        allowed(&p, &["gm"], sql);
    }
}
