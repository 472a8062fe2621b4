//! Claims from a verified token over the roles' defaults, as a view sees them (here rather than
//! in auth/tests.rs, whose helpers they use: `auth` imports nothing of `authz`).
use crate::auth::test_keys::*;
use crate::auth::tests::{claims, issuer, policy_with, rs256, verify_at};
use serde_json::json;
use std::collections::BTreeMap;

#[test]
fn claims_from_roles_and_claim_map() {
    let mut i = issuer(RSA_PUBLIC);
    i.claim_map = vec![
        ("org.id".into(), "tenant".into()),
        ("level".into(), "level".into()),
        ("admin".into(), "admin".into()),
        ("groups".into(), "tier".into()),
        ("missing".into(), "region".into()),
    ];
    let p = policy_with(i);
    let mut c = claims();
    c["roles"] = json!(["analysts", "clerks"]);
    let got = verify_at(&p, &rs256(&c)).unwrap();
    // The token maps none of its claims: the principal carries none, and the roles' defaults
    // apply underneath (tier: analyst's, alphabetically first, beats clerk's).
    assert!(got.claims.is_empty(), "{:?}", got.claims);
    let view = crate::authz::View::new(&p, &got).unwrap();
    assert_eq!((view.claim("tenant"), view.claim("tier"), view.claim("region")), (Some("acme"), Some("1"), None));
    c["org"] = json!({"id": "globex"});
    c["level"] = json!(7);
    c["admin"] = json!(false);
    c["groups"] = json!(["a", "b"]);
    let got = verify_at(&p, &rs256(&c)).unwrap();
    let expect = |pairs: &[(&str, Option<&str>)]| -> BTreeMap<String, Option<String>> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.map(String::from))).collect()
    };
    // An array cannot be a claim: it is NULL, and it replaces the role's default tier.
    assert_eq!(
        got.claims,
        expect(&[("admin", Some("false")), ("level", Some("7")), ("tenant", Some("globex")), ("tier", None)])
    );
    let view = crate::authz::View::new(&p, &got).unwrap();
    assert_eq!((view.claim("tenant"), view.claim("tier")), (Some("globex"), None));
}

#[test]
fn a_claim_the_token_supplies_in_any_form_replaces_the_default() {
    let mut i = issuer(RSA_PUBLIC);
    i.claim_map = vec![("org.tenant".into(), "tenant".into())];
    let p = policy_with(i);
    // (the token's `org`, what `tenant` reads as); the roles' default is "acme"
    for (org, expected) in [
        (json!({"tenant": "globex"}), Some("globex")),
        (json!({"tenant": 42}), Some("42")),
        (json!({"tenant": 4.5}), Some("4.5")),
        (json!({"tenant": true}), Some("true")),
        (json!({"tenant": null}), None),
        (json!({"tenant": ["globex"]}), None),
        (json!({"tenant": {"id": "globex"}}), None),
        (json!({"tenant": ""}), Some("")),
        // the path is blocked by a value that is not an object: supplied, unusable
        (json!(null), None),
        (json!("globex"), None),
        (json!(["globex"]), None),
        // the path is not reached at all: the default applies
        (json!({}), Some("acme")),
        (json!({"other": 1}), Some("acme")),
    ] {
        let mut c = claims();
        c["org"] = org.clone();
        let got = verify_at(&p, &rs256(&c)).unwrap();
        let view = crate::authz::View::new(&p, &got).unwrap();
        assert_eq!(view.claim("tenant"), expected, "org = {org}");
    }
    let got = verify_at(&p, &rs256(&claims())).unwrap();
    assert_eq!(crate::authz::View::new(&p, &got).unwrap().claim("tenant"), Some("acme"), "no org at all");
}
