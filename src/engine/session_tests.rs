//! `ACL SESSION '<handle>'` through the engine (spec 017): the gateway's path under the session's
//! principal, the caches, management and NATIVE, and what never carries the handle.
use super::tests::admin;
use super::*;
use crate::error::SessionReason;

const SECRET: &str = "a-shared-secret-that-is-32-bytes-or-longer";

fn state() -> State {
    let s = State::new();
    for stmt in [
        "CREATE VIRTUAL CATALOG hr",
        "CREATE VIRTUAL TABLE hr.pay AS secretdb.main.payroll_2024",
        "CREATE VIRTUAL CATALOG sales",
        "CREATE VIRTUAL TABLE sales.pay AS salesdb.main.pay",
        "CREATE ROLE clerk",
        "GRANT CATALOG hr TO ROLE clerk WITH (select) MAIN",
        "CREATE ROLE seller",
        "GRANT CATALOG sales TO ROLE seller WITH (select) MAIN",
        &format!("CREATE ISSUER 'https://idp' KEYS 'hmac:{SECRET}'"),
    ] {
        admin(&s, stmt);
    }
    s
}

fn jwt(roles: &[&str], sub: &str, exp: i64) -> String {
    use jsonwebtoken::{encode, Algorithm, EncodingKey, Header};
    let claims = serde_json::json!({"iss": "https://idp", "sub": sub, "exp": exp, "roles": roles});
    encode(&Header::new(Algorithm::HS256), &claims, &EncodingKey::from_secret(SECRET.as_bytes()).unwrap()).unwrap()
}

fn later() -> i64 {
    sessions::now_ms() / 1000 + 3600
}

fn open(s: &State, role: &str) -> (sessions::Handle, Arc<sessions::Session>) {
    sessions::open(s, &jwt(&[role], role, later()), "sql", &Settings::default()).unwrap()
}

fn run(s: &State, q: &str) -> Outcome {
    rewrite(s, q, &Settings::default(), &|q: &str| -> Result<Vec<Token>> { Ok(prefix::test_tokens(q)) })
}

fn ok(o: Outcome) -> Rewritten {
    match o {
        Outcome::Rewritten(r) => r,
        other => panic!("not rewritten: {other:?}"),
    }
}

fn err(o: Outcome) -> AclError {
    match o {
        Outcome::Refused(e) => e,
        other => panic!("not refused: {other:?}"),
    }
}

#[test]
fn a_sessions_statements_run_as_its_principal_tagged_with_its_id() {
    let s = state();
    let (h, rec) = open(&s, "clerk");
    let q = format!("ACL SESSION '{}' SELECT * FROM pay", h.expose());
    for round in 0..2 {
        let r = ok(run(&s, &q));
        assert!(r.sql.contains("secretdb"), "{}", r.sql);
        assert_eq!(r.session, rec.id);
        assert_eq!(r.expires, 0, "a session's statements hold while it lives, not to the token's exp");
        assert_eq!(r.principal, rec.owner);
        assert_eq!(r.repeat, round == 1, "the second run is a batch-cache hit");
        for text in [&r.sql, &r.names, &r.principal] {
            assert!(!text.contains(h.expose()), "the handle reached {text}");
        }
    }
    // the same text by the role is another principal's owner
    let by_role = ok(run(&s, "ACL ROLE \"clerk\" SELECT * FROM pay"));
    assert_ne!(by_role.principal, rec.owner);
    assert_eq!(by_role.session, 0);
}

#[test]
fn a_dead_or_unknown_handle_is_refused_with_its_reason_never_the_handle() {
    let s = state();
    let (h, rec) = open(&s, "clerk");
    let q = format!("ACL SESSION '{}' SELECT * FROM pay WHERE 1 = 1", h.expose());
    ok(run(&s, &q));
    ok(run(&s, &q)); // kept in the batch cache
    assert!(s.sessions.close(h.expose()));
    let e = err(run(&s, &q));
    assert_eq!(e, AclError::SessionRefused { reason: SessionReason::Closed });
    assert_eq!(e.to_string(), "acl: session refused: the session was closed");
    let (h2, rec2) = open(&s, "clerk");
    assert!(s.sessions.kill(rec2.id));
    let e = err(run(&s, &format!("ACL SESSION '{}' SELECT 1", h2.expose())));
    assert_eq!(e, AclError::SessionRefused { reason: SessionReason::Killed });
    let unknown = "0123456789abcdef0123456789abcdef";
    let e = err(run(&s, &format!("ACL SESSION '{unknown}' SELECT 1")));
    assert_eq!(e, AclError::SessionRefused { reason: SessionReason::Unknown });
    assert!(!e.to_string().contains(unknown));
    // the operator id is no handle
    let e = err(run(&s, &format!("ACL SESSION '{}' SELECT 1", rec.id)));
    assert_eq!(e, AclError::SessionRefused { reason: SessionReason::Unknown });
}

/// Two sessions of different principals run the same statement: each gets its own principal's
/// rewrite, and closing one refuses its kept batch and shape without touching the other's.
#[test]
fn caches_never_cross_sessions() {
    let s = state();
    let (clerk, _) = open(&s, "clerk");
    let (seller, _) = open(&s, "seller");
    let text = |h: &sessions::Handle, n: u32| format!("ACL SESSION '{}' SELECT * FROM pay WHERE 2 > {n}", h.expose());
    for n in 0..3 {
        let a = ok(run(&s, &text(&clerk, n)));
        let b = ok(run(&s, &text(&seller, n)));
        assert!(a.sql.contains("secretdb") && !a.sql.contains("salesdb"), "{}", a.sql);
        assert!(b.sql.contains("salesdb") && !b.sql.contains("secretdb"), "{}", b.sql);
    }
    assert!(s.sessions.close(clerk.expose()));
    for n in [1, 7] {
        // a batch met before (batch cache) and a new number (a learned shape): both judged again
        assert_eq!(err(run(&s, &text(&clerk, n))), AclError::SessionRefused { reason: SessionReason::Closed });
        assert!(ok(run(&s, &text(&seller, n))).sql.contains("salesdb"));
    }
}

#[test]
fn rights_are_the_policys_at_each_statement() {
    let s = state();
    let (h, _) = open(&s, "clerk");
    let q = format!("ACL SESSION '{}' SELECT * FROM pay", h.expose());
    ok(run(&s, &q));
    admin(&s, "REVOKE CATALOG hr FROM ROLE clerk");
    let e = err(run(&s, &q)).to_string();
    assert!(e.contains("no MAIN catalog"), "{e}");
    admin(&s, "GRANT CATALOG hr TO ROLE clerk WITH (select) MAIN");
    ok(run(&s, &q));
    admin(&s, "DROP ROLE clerk");
    assert!(err(run(&s, &q)).to_string().contains("clerk"), "a dropped role refuses the session's next statement");
}

#[test]
fn management_and_native_under_a_session_name_it_by_id() {
    let s = state();
    admin(&s, "GRANT ADMIN manage TO ROLE clerk");
    let (h, rec) = open(&s, "clerk");
    let r = ok(run(&s, &format!("ACL SESSION '{}' ACL CREATE ROLE made_by_session", h.expose())));
    assert!(r.sql.contains(&format!("acl_exec_as('session', '{}',", rec.id)), "{}", r.sql);
    assert!(!r.sql.contains(h.expose()));
    // what acl_exec_as does with it: the session found by id and judged again
    let prefix = admin::runner_prefix(&s, Some("session"), rec.id.to_string()).unwrap();
    admin::execute_all(&s, &["CREATE ROLE made_by_session"], &Settings::default(), Some(&prefix)).unwrap();
    assert!(s.policy().roles.contains_key("made_by_session"));
    // native needs passthrough
    let native = format!("ACL SESSION '{}' ACL NATIVE SELECT 42", h.expose());
    assert!(err(run(&s, &native)).to_string().contains("passthrough"));
    admin(&s, "GRANT ADMIN passthrough TO ROLE clerk");
    let r = ok(run(&s, &native));
    assert!(r.native && r.session == rec.id && r.sql == "SELECT 42");
    // once the session ends, a management call naming it is refused
    assert!(s.sessions.close(h.expose()));
    let e = admin::execute_all(&s, &["CREATE ROLE too_late"], &Settings::default(), Some(&prefix)).unwrap_err();
    assert_eq!(e, AclError::SessionRefused { reason: SessionReason::Closed });
    for bad in ["x", "-1", ""] {
        assert!(admin::runner_prefix(&s, Some("session"), bad.into()).is_err());
    }
}

#[test]
fn an_acl_session_inside_a_principals_text_is_refused() {
    let s = state();
    let (h, _) = open(&s, "clerk");
    for q in [
        format!("ACL ROLE \"clerk\" SELECT 1; ACL SESSION '{}' SELECT 2", h.expose()),
        format!("ACL SESSION '{}' SELECT 1; ACL SESSION '{}' SELECT 2", h.expose(), h.expose()),
        format!("ACL ROLE \"clerk\" ACL SESSION '{}' SELECT 1", h.expose()),
        format!("ACL SESSION '{}' ACL SESSION '{}' SELECT 1", h.expose(), h.expose()),
    ] {
        let e = err(run(&s, &q));
        assert!(!e.to_string().contains(h.expose()), "{e}");
    }
}

#[test]
fn every_use_ends_the_session_at_the_tokens_exp_connect_does_not() {
    let s = state();
    let soon = sessions::now_ms() / 1000 - 30; // past, within the default 60 s skew
    let (h, _) = sessions::open(&s, &jwt(&["clerk"], "c", soon), "sql", &Settings::default()).unwrap();
    let q = format!("ACL SESSION '{}' SELECT * FROM pay", h.expose());
    let strict = Settings { clock_skew: 0, ..Default::default() };
    let go = |settings: &Settings| rewrite(&s, &q, settings, &|q: &str| -> Result<Vec<Token>> { Ok(prefix::test_tokens(q)) });
    ok(go(&strict)); // connect: exp judged at open only
    s.sessions.set("acl_session_token_binding", "every_use").unwrap();
    ok(go(&Settings::default())); // within the skew
    assert_eq!(err(go(&strict)), AclError::SessionRefused { reason: SessionReason::Expired });
}

/// A management batch through a session is judged by what its token would map to after it
/// (spec 017, spec 007 "Administration scopes"), not by the roles the session froze at open.
#[test]
fn a_sessions_batch_may_not_make_its_token_map_to_more() {
    let s = state();
    admin(&s, "GRANT ADMIN manage TO ROLE clerk");
    admin(&s, "CREATE ROLE rootish");
    admin(&s, "GRANT ADMIN passthrough TO ROLE rootish");
    let (_, rec) = sessions::open(&s, &jwt(&["clerk", "ghost"], "bob", later()), "sql", &Settings::default()).unwrap();
    let prefix = admin::runner_prefix(&s, Some("session"), rec.id.to_string()).unwrap();
    let batch = |stmts: &[&str]| admin::execute_all(&s, stmts, &Settings::default(), Some(&prefix));
    let gains = |e: AclError, role: &str| assert!(matches!(&e, AclError::SelfGrant(crate::error::SelfGrant::Gains { role: r, .. }) if r == role), "{e}");
    // a claim value mapped to a stronger role; a role its token names created (and granted)
    gains(batch(&["MAP CLAIM 'clerk' FROM ISSUER 'https://idp' TO ROLE rootish"]).unwrap_err(), "rootish");
    gains(batch(&["CREATE ROLE ghost", "GRANT CATALOG sales TO ROLE ghost WITH (select) MAIN"]).unwrap_err(), "ghost");
    // an issuer replaced to read another claim (its `sub`) as roles, and a role of that name
    gains(batch(&["CREATE ROLE bob", &format!("CREATE OR REPLACE ISSUER 'https://idp' KEYS 'hmac:{SECRET}' ROLE CLAIM 'sub'")]).unwrap_err(), "bob");
    assert!(!s.policy().roles.contains_key("ghost"));
    assert!(s.policy().claim_roles.is_empty(), "nothing applied");
    // what does not widen the token still runs, and the session keeps its roles
    batch(&["CREATE ROLE harmless"]).unwrap();
    assert_eq!(rec.principal.roles, vec!["clerk".to_string()]);
}

/// A session outlives no issuer: a rotation its token does not verify under, or a dropped issuer,
/// ends it (`revoked`) under either binding; a change it still verifies under does not.
#[test]
fn a_session_ends_when_its_issuer_no_longer_vouches_for_its_token() {
    for every_use in [false, true] {
        let s = state();
        if every_use {
            s.sessions.set("acl_session_token_binding", "every_use").unwrap();
        }
        let (h, rec) = open(&s, "clerk");
        let q = format!("ACL SESSION '{}' SELECT * FROM pay", h.expose());
        ok(run(&s, &q));
        admin(&s, "CREATE ROLE unrelated");
        admin(&s, "ALTER ISSUER 'https://idp' SET ALGS (HS256)");
        ok(run(&s, &q));
        ok(run(&s, &q)); // from the batch cache
        admin(&s, "ALTER ISSUER 'https://idp' SET KEYS 'hmac:another-shared-secret-that-is-32-bytes-long'");
        assert_eq!(err(run(&s, &q)), AclError::SessionRefused { reason: SessionReason::Revoked });
        assert_eq!(s.sessions.reason(h.expose(), 60), Some(SessionReason::Revoked));
        // a kept statement of it too, and the old keys back revive nothing
        assert!(matches!(session_vouch::enter_kept(&s, rec.id, 60), Err(AclError::SessionEnded { reason: SessionReason::Revoked })));
        admin(&s, &format!("ALTER ISSUER 'https://idp' SET KEYS 'hmac:{SECRET}'"));
        assert_eq!(err(run(&s, &q)), AclError::SessionRefused { reason: SessionReason::Revoked });
        // dropped
        let (h2, rec2) = open(&s, "clerk");
        let q2 = format!("ACL SESSION '{}' SELECT * FROM pay", h2.expose());
        ok(run(&s, &q2));
        assert!(session_vouch::enter_kept(&s, rec2.id, 60).is_ok());
        admin(&s, "DROP ISSUER 'https://idp'");
        assert!(matches!(session_vouch::enter_kept(&s, rec2.id, 60), Err(AclError::SessionEnded { reason: SessionReason::Revoked })));
        assert_eq!(err(run(&s, &q2)), AclError::SessionRefused { reason: SessionReason::Revoked });
    }
}
