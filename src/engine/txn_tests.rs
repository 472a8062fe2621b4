//! Transactions (spec 001): management statements refused inside one, and the identity a
//! transaction belongs to (`owner`).
use super::{batch, owner, tests::admin, Settings, State};
use crate::prefix::{self, Prefix};

fn state() -> State {
    let s = State::new();
    for stmt in ["CREATE VIRTUAL CATALOG sales", "CREATE VIRTUAL TABLE sales.orders AS phys.main.orders", "CREATE ROLE r",
                 "GRANT CATALOG sales TO ROLE r MAIN"] {
        admin(&s, stmt);
    }
    s
}

fn run(s: &State, q: &str, in_transaction: bool) -> crate::error::Result<super::Output> {
    let toks = prefix::test_tokens(q);
    let b = prefix::split(q, &toks).unwrap().unwrap();
    batch(s, &s.policy(), &Settings { in_transaction, ..Default::default() }, &b, &|_: &str| Err(crate::error::AclError::internal("no tokenizer")))
}

#[test]
fn management_is_refused_inside_a_transaction() {
    let s = state();
    let err = run(&s, "ACL ADMIN CREATE ROLE y", true).unwrap_err();
    assert_eq!(err, crate::error::StatementNotPermitted::ManagementInTransaction.into());
    assert_eq!(err.to_string(), "acl: management statements run in their own transaction; COMMIT or ROLLBACK first");
    assert!(s.policy().roles.get("y").is_none());
    let out = run(&s, "ACL ADMIN CREATE ROLE y", false).unwrap();
    assert_eq!(out.principal, "", "management statements are the gateway's: no owner");
}

#[test]
fn a_principal_batch_names_its_owner_in_a_transaction_too() {
    let s = state();
    let out = run(&s, r#"ACL ROLE "r" SELECT id FROM orders"#, true).unwrap();
    assert_eq!(out.principal, owner(&Prefix::Role("r".into())));
}

fn jwt(claims: serde_json::Value) -> String {
    // `owner` is only called on a token that verified; here the signature does not matter.
    use jsonwebtoken::{encode, Algorithm, EncodingKey, Header};
    encode(&Header::new(Algorithm::HS256), &claims, &EncodingKey::from_secret(b"a-test-secret").unwrap()).unwrap()
}

#[test]
fn the_owner_is_the_role_or_the_tokens_issuer_and_subject() {
    let role = |r: &str| owner(&Prefix::Role(r.into()));
    let tok = |c: serde_json::Value| owner(&Prefix::Token(jwt(c)));
    assert_eq!(role("analyst").len(), 32);
    assert!(role("analyst").bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
    assert_eq!(role("Analyst"), role("analyst"), "role names fold as DuckDB folds them");
    // the first 128 bits of SHA-256("role\0r"), as Python's hashlib gives them
    assert_eq!(role("r"), "e2de68ce1d03ca78ff219319d587ee78");
    assert_ne!(role("analyst"), role("clerk"));
    let alice = tok(serde_json::json!({"iss": "https://idp", "sub": "alice", "exp": 1}));
    assert_eq!(alice, tok(serde_json::json!({"iss": "https://idp", "sub": "alice", "exp": 2, "jti": "x"})), "a refreshed token");
    assert_ne!(alice, tok(serde_json::json!({"iss": "https://idp", "sub": "bob", "exp": 1})));
    assert_ne!(alice, tok(serde_json::json!({"iss": "https://other", "sub": "alice", "exp": 1})));
    assert_ne!(alice, role("alice"));
    // no subject: the token itself is the principal
    let anon = tok(serde_json::json!({"iss": "https://idp", "exp": 1}));
    assert_ne!(anon, tok(serde_json::json!({"iss": "https://idp", "exp": 2})));
    assert_ne!(anon, tok(serde_json::json!({"iss": "https://idp", "sub": "", "exp": 1})));
    assert_eq!(owner(&Prefix::Admin), "");
}

/// The owners kept per prefix are the ones `owner` computes, and a kept one is handed back.
#[test]
fn owners_are_kept_per_prefix_and_equal_to_owner() {
    let owners = super::principal::Owners::default();
    for p in [Prefix::Role("analyst".into()), Prefix::Role("Analyst".into()), Prefix::Admin] {
        assert_eq!(owners.of(&p), owner(&p));
        assert_eq!(owners.of(&p), owner(&p), "again, from the map");
    }
    assert_eq!(owners.of(&Prefix::Role("a".into())).len(), 32);
    assert_ne!(owners.of(&Prefix::Role("a".into())), owners.of(&Prefix::Role("b".into())));
}
