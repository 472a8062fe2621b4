//! Administration scopes through the engine (spec 007): anonymous `ACL ADMIN` and the setting,
//! a principal's management batch judged when parsed and again when `acl_exec_as` runs, `ACL
//! NATIVE`, and a token principal that may not leave its batch holding more roles.
use super::*;
use crate::error::{LacksScope, Scope, SelfGrant};
use crate::store::fake::Fake;
use crate::store::{Location, Store};

const SECRET: &str = "a-shared-secret-of-at-least-32-bytes!";

fn state() -> State {
    let s = State::new();
    admin::execute_all(
        &s,
        &[
            "CREATE VIRTUAL CATALOG sales",
            "CREATE VIRTUAL CATALOG hr",
            "CREATE VIRTUAL TABLE sales.orders AS phys.main.orders",
            "CREATE ROLE cm",
            "CREATE ROLE gm",
            "CREATE ROLE pt",
            "CREATE ROLE reader",
            "GRANT CATALOG sales TO ROLE cm WITH (manage)",
            "ALTER VIRTUAL CATALOG sales SET SOURCES (phys.main)",
            "GRANT CATALOG sales TO ROLE reader WITH (select)",
            "GRANT ADMIN manage TO ROLE gm",
            "GRANT ADMIN passthrough TO ROLE pt",
        ],
        &admin::anonymous(false),
        None,
    )
    .unwrap();
    s
}

fn run(s: &State, q: &str, settings: &Settings) -> Result<Output> {
    let toks = prefix::test_tokens(q);
    let b = prefix::split(q, &toks).unwrap().unwrap();
    batch(s, &s.policy(), settings, &b, &|q: &str| Ok(prefix::test_tokens(q)))
}

fn off() -> Settings {
    Settings::default()
}

fn lacks(e: AclError) -> Scope {
    match e.unlocated() {
        AclError::LacksScope(LacksScope { needs, .. }) => needs.clone(),
        other => panic!("not a scope refusal: {other:?}"),
    }
}

fn in_store(s: &State) -> Arc<Fake> {
    let fake = Arc::new(Fake::default());
    source::use_store(s, Store::new(fake.clone(), Location::new(Some("fake"), "acl")), true, false).unwrap();
    fake
}

#[test]
fn anonymous_admin_needs_the_setting_once_a_store_is_in_use() {
    let s = state();
    // Memory mode: always, the setting off (its default) included.
    assert!(run(&s, "ACL ADMIN CREATE ROLE a", &off()).is_ok());
    admin::execute_all(&s, &["CREATE ROLE a"], &off(), None).unwrap();
    let fake = in_store(&s);
    let e = run(&s, "ACL ADMIN CREATE ROLE b", &off()).unwrap_err();
    assert_eq!(e.to_string(), "acl: anonymous ACL ADMIN lacks acl_allow_anonymous_admin (a policy store is in use)");
    assert_eq!(lacks(e), Scope::AnonymousAdmin);
    // Judged again when acl_exec runs: a batch parsed while it was on, or the gateway's own call.
    let e = admin::execute_all(&s, &["CREATE ROLE b"], &off(), None).unwrap_err();
    assert_eq!(lacks(e), Scope::AnonymousAdmin);
    assert!(s.policy().roles.get("b").is_none() && fake.rows("roles").len() == 5);
    let on = Settings { anonymous_admin: true, ..off() };
    assert!(run(&s, "ACL ADMIN CREATE ROLE b", &on).is_ok());
    admin::execute_all(&s, &["CREATE ROLE b"], &on, None).unwrap();
    assert!(fake.rows("roles").iter().any(|r| r[0].as_deref() == Some("b")));
    // A principal's scope does not depend on the setting.
    let out = run(&s, r#"ACL ROLE "gm" ACL CREATE ROLE c"#, &off()).unwrap();
    assert!(out.sql.ends_with("acl_exec_as('role', 'gm', 'CREATE ROLE c')"), "{}", out.sql);
    admin::execute_all(&s, &["CREATE ROLE c"], &off(), Some(&Prefix::Role("gm".into()))).unwrap();
    assert!(fake.rows("roles").iter().any(|r| r[0].as_deref() == Some("c")));
}

#[test]
fn a_principals_batch_is_judged_when_parsed_and_when_it_runs() {
    let s = state();
    let out = run(&s, r#"ACL ROLE "cm" ACL CREATE VIRTUAL TABLE sales.t AS phys.main.t; DROP VIRTUAL TABLE sales.orders"#, &off()).unwrap();
    assert_eq!(out.checks, vec![None], "one call, nothing for the second check");
    assert_eq!(
        out.sql,
        "SELECT * FROM acl_exec_as('role', 'cm', \"system\".main.list_value('CREATE VIRTUAL TABLE sales.t AS phys.main.t', 'DROP VIRTUAL TABLE sales.orders'))"
    );
    assert_eq!(lacks(run(&s, r#"ACL ROLE "cm" ACL GRANT CATALOG sales TO ROLE reader"#, &off()).unwrap_err()), Scope::GlobalManage);
    assert_eq!(lacks(run(&s, r#"ACL ROLE "cm" ACL CREATE VIRTUAL TABLE hr.t AS phys.main.t"#, &off()).unwrap_err()), Scope::CatalogManage("hr".into()));
    // A later statement of the batch that is out of scope refuses the whole batch when parsed.
    let e = run(&s, r#"ACL ROLE "cm" ACL CREATE VIRTUAL TABLE sales.t AS phys.main.t; CREATE ROLE x"#, &off()).unwrap_err();
    assert_eq!(lacks(e), Scope::GlobalManage);
    // The scope goes between parse and run: refused when it runs, nothing applied.
    let cm = Prefix::Role("cm".into());
    admin::execute_all(&s, &["REVOKE CATALOG sales FROM ROLE cm"], &off(), None).unwrap();
    let e = admin::execute_all(&s, &["CREATE VIRTUAL TABLE sales.t AS phys.main.t"], &off(), Some(&cm)).unwrap_err();
    assert_eq!(lacks(e), Scope::CatalogManage("sales".into()));
    assert!(s.policy().relation(&crate::policy::ObjKey { catalog: "sales".into(), schema: "main".into(), name: "t".into() }).is_none());
    // A batch whose first statement removes its runner's scope: the rest is refused, nothing applies.
    let gm = Prefix::Role("gm".into());
    let before = s.policy().version;
    admin::execute_all(&s, &["CREATE ROLE gm2", "GRANT ADMIN passthrough TO ROLE gm2"], &off(), None).unwrap();
    let e = admin::execute_all(&s, &["DROP ROLE gm", "CREATE ROLE y"], &off(), Some(&gm)).unwrap_err();
    assert_eq!(lacks(e), Scope::GlobalManage);
    assert!(s.policy().roles.contains_key("gm") && !s.policy().roles.contains_key("y") && s.policy().version > before);
    // A role that does not exist is refused as a principal's query is.
    assert!(matches!(run(&s, r#"ACL ROLE "ghost" ACL CREATE ROLE z"#, &off()), Err(AclError::NotGranted(_))));
    assert!(matches!(admin::execute_all(&s, &["CREATE ROLE z"], &off(), Some(&Prefix::Role("ghost".into()))), Err(AclError::NotGranted(_))));
    // Management under a principal runs in its own transaction too.
    let txn = Settings { in_transaction: true, ..off() };
    assert!(matches!(run(&s, r#"ACL ROLE "gm" ACL CREATE ROLE z"#, &txn), Err(AclError::StatementNotPermitted(_))));
}

#[test]
fn self_grants_are_refused_when_parsed_and_when_run() {
    let s = state();
    let e = run(&s, r#"ACL ROLE "gm" ACL GRANT CATALOG hr TO ROLE gm"#, &off()).unwrap_err();
    assert!(matches!(e, AclError::SelfGrant(SelfGrant::Role { .. })), "{e:?}");
    let e = admin::execute_all(&s, &["GRANT CATALOG hr TO ROLE gm"], &off(), Some(&Prefix::Role("gm".into()))).unwrap_err();
    assert!(matches!(e, AclError::SelfGrant(SelfGrant::Role { .. })), "{e:?}");
    assert!(s.policy().roles["gm"].catalog_grants.is_empty());
    // To another role it does not hold: allowed.
    run(&s, r#"ACL ROLE "gm" ACL GRANT CATALOG hr TO ROLE reader"#, &off()).unwrap();
}

#[test]
fn native_needs_passthrough_and_is_not_rewritten() {
    let s = state();
    let out = run(&s, r#"ACL ROLE "pt" ACL NATIVE SELECT * FROM phys.main.orders; SELECT 2"#, &off()).unwrap();
    assert_eq!(out.sql, "SELECT * FROM phys.main.orders;\nSELECT 2");
    assert_eq!((out.statements, out.native, out.checks.clone(), out.reuse.is_none()), (2, true, vec![None, None], true));
    assert_eq!(out.principal, owner(&Prefix::Role("pt".into())), "its transactions are its own");
    for role in ["gm", "cm", "reader"] {
        let e = run(&s, &format!("ACL ROLE \"{role}\" ACL NATIVE SELECT 1"), &off()).unwrap_err();
        assert_eq!(e.to_string(), format!("acl: role \"{role}\" lacks passthrough (ACL NATIVE)"));
    }
}

#[test]
fn managing_does_not_imply_reading() {
    let s = state();
    let e = run(&s, r#"ACL ROLE "cm" SELECT * FROM sales.orders"#, &off()).unwrap_err();
    assert!(matches!(e, AclError::LacksCapability(_)), "{e:?}");
    for role in ["gm", "pt"] {
        let e = run(&s, &format!("ACL ROLE \"{role}\" SELECT * FROM sales.orders"), &off()).unwrap_err();
        assert!(matches!(e, AclError::NotGranted(_)), "{role}: {e:?}");
    }
}

fn token(groups: &[&str]) -> String {
    use jsonwebtoken::{encode, Algorithm, EncodingKey, Header};
    let claims = serde_json::json!({"iss": "https://idp", "sub": "ann", "groups": groups, "exp": 4_000_000_000i64});
    encode(&Header::new(Algorithm::HS256), &claims, &EncodingKey::from_secret(SECRET.as_bytes()).unwrap()).unwrap()
}

#[test]
fn a_token_may_not_leave_its_batch_holding_more_roles() {
    let s = state();
    let issuer = format!("CREATE ISSUER 'https://idp' KEYS 'hmac:{SECRET}' ROLE CLAIM 'groups'");
    admin::execute_all(&s, &[issuer.as_str(), "MAP CLAIM 'ops' FROM ISSUER 'https://idp' TO ROLE gm"], &off(), None).unwrap();
    let jwt = token(&["ops", "newcomers"]);
    let who = Prefix::Token(jwt.clone());
    let q = |body: &str| format!("ACL TOKEN '{jwt}' ACL {body}");
    // Its token maps to gm: global manage, and gm is its own.
    let out = run(&s, &q("CREATE ROLE x"), &off()).unwrap();
    assert!(out.sql.starts_with("SELECT * FROM acl_exec_as('token', '"), "{}", out.sql);
    assert!(matches!(run(&s, &q("GRANT CATALOG hr TO ROLE gm"), &off()), Err(AclError::SelfGrant(_))));
    // Mapping its own claim value to another role, or creating the role a value names (an
    // unmapped value that names a role counts): it would hold that role afterwards.
    for batch in [
        &["MAP CLAIM 'ops' FROM ISSUER 'https://idp' TO ROLE pt"][..],
        &["CREATE ROLE newcomers"][..],
        &["CREATE ROLE newcomers", "GRANT CATALOG hr TO ROLE newcomers"][..],
    ] {
        let e = admin::execute_all(&s, batch, &off(), Some(&who)).unwrap_err();
        assert!(matches!(e, AclError::SelfGrant(SelfGrant::Gains { .. })), "{batch:?}: {e:?}");
        assert!(!s.policy().roles.contains_key("newcomers"));
    }
    // The same for another principal's claim value is ordinary global manage.
    admin::execute_all(&s, &["MAP CLAIM 'auditors' FROM ISSUER 'https://idp' TO ROLE reader"], &off(), Some(&who)).unwrap();
    // A token that no longer verifies runs nothing.
    admin::execute_all(&s, &["DROP ISSUER 'https://idp'"], &off(), None).unwrap();
    assert!(matches!(admin::execute_all(&s, &["CREATE ROLE y"], &off(), Some(&who)), Err(AclError::TokenRejected { .. })));
}
