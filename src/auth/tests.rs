//! Tests of token verification. Tokens are minted here with jsonwebtoken's `encode` (the SQL and
//! Python tests mint theirs with PyJWT, so the two libraries check each other).
use super::test_keys::*;
use super::*;
use crate::error::TokenReason;
use crate::policy::Role;
use jsonwebtoken::jwk::{Jwk, JwkSet};
use jsonwebtoken::{encode, Algorithm, AlgorithmFamily, DecodingKey, EncodingKey, Header};
use serde_json::json;

const ISS: &str = "https://idp.example";
const NOW: i64 = 1_800_000_000;
const SECRET: &str = "a-shared-secret-of-at-least-32-bytes!";

pub(crate) fn issuer(keys: &str) -> Issuer {
    Issuer {
        iss: ISS.into(),
        keys: keys.into(),
        role_claim: DEFAULT_ROLE_CLAIM.into(),
        ..Issuer::default()
    }
}

/// Roles `analyst` (claims tenant=acme, tier=1) and `clerk` (tier=2); claim value `analysts`
/// maps to analyst, `clerks` to clerk; one issuer with `keys`.
fn policy(keys: &str) -> Policy {
    policy_with(issuer(keys))
}

pub(crate) fn policy_with(i: Issuer) -> Policy {
    let mut p = Policy::default();
    let role = |claims: &[(&str, &str)]| Role {
        claims: claims
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        ..Role::default()
    };
    p.roles
        .insert("analyst".into(), role(&[("tenant", "acme"), ("tier", "1")]));
    p.roles.insert("clerk".into(), role(&[("tier", "2")]));
    p.claim_roles
        .insert((i.iss.clone(), "analysts".into()), vec!["analyst".into()]);
    p.claim_roles
        .insert((i.iss.clone(), "clerks".into()), vec!["clerk".into()]);
    p.issuers.insert(i.iss.clone(), i);
    p
}

pub(crate) fn claims() -> Value {
    json!({"iss": ISS, "sub": "alice", "exp": NOW + 300, "roles": ["analysts"]})
}

fn enc_key(alg: Algorithm) -> EncodingKey {
    let pem = |k: &str| k.as_bytes().to_vec();
    match alg.family() {
        AlgorithmFamily::Rsa => EncodingKey::from_rsa_pem(&pem(RSA_PRIVATE)).unwrap(),
        AlgorithmFamily::Ec if alg == Algorithm::ES256 => {
            EncodingKey::from_ec_pem(&pem(P256_PRIVATE)).unwrap()
        }
        AlgorithmFamily::Ec => EncodingKey::from_ec_pem(&pem(P384_PRIVATE)).unwrap(),
        AlgorithmFamily::Ed => EncodingKey::from_ed_pem(&pem(ED_PRIVATE)).unwrap(),
        AlgorithmFamily::Hmac => EncodingKey::from_secret(SECRET.as_bytes()).unwrap(),
    }
}

fn public_for(alg: Algorithm) -> String {
    match alg.family() {
        AlgorithmFamily::Rsa => RSA_PUBLIC.into(),
        AlgorithmFamily::Ec if alg == Algorithm::ES256 => P256_PUBLIC.into(),
        AlgorithmFamily::Ec => P384_PUBLIC.into(),
        AlgorithmFamily::Ed => ED_PUBLIC.into(),
        AlgorithmFamily::Hmac => format!("hmac:{SECRET}"),
    }
}

fn mint(alg: Algorithm, kid: Option<&str>, claims: &Value) -> String {
    let mut h = Header::new(alg);
    h.kid = kid.map(str::to_string);
    encode(&h, claims, &enc_key(alg)).unwrap()
}

pub(crate) fn rs256(claims: &Value) -> String {
    mint(Algorithm::RS256, None, claims)
}

pub(crate) fn verify_at(p: &Policy, token: &str) -> Result<Principal> {
    principal_from_token(p, token, NOW, DEFAULT_CLOCK_SKEW_SECS)
}

/// Why the token was rejected; the message must never contain the token.
fn rejected(p: &Policy, token: &str) -> TokenReason {
    match verify_at(p, token) {
        Err(e @ AclError::TokenRejected { .. }) => {
            let m = e.to_string();
            assert!(
                !m.contains(token) && !token.is_empty(),
                "the message echoes the token"
            );
            for part in token.split('.').filter(|s| s.len() > 8) {
                assert!(!m.contains(part), "the message echoes a part of the token");
            }
            let AclError::TokenRejected { reason } = e else { unreachable!() };
            reason
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
}

/// A JWKS of the RSA test key (kid `k1`) and the P-256 key (kid `k2`), built by jsonwebtoken.
fn jwks() -> String {
    let jwk = |pem: &str, rsa: bool, kid: &str| {
        let k = if rsa {
            DecodingKey::from_rsa_pem(pem.as_bytes()).unwrap()
        } else {
            DecodingKey::from_ec_pem(pem.as_bytes()).unwrap()
        };
        let mut j = Jwk::from_decoding_key(&k, None).unwrap();
        j.common.key_id = Some(kid.into());
        j
    };
    let set = JwkSet {
        keys: vec![jwk(RSA_PUBLIC, true, "k1"), jwk(P256_PUBLIC, false, "k2")],
    };
    serde_json::to_string(&set).unwrap()
}

#[test]
fn every_algorithm_verifies_with_its_key() {
    for alg in [
        Algorithm::RS256,
        Algorithm::RS384,
        Algorithm::RS512,
        Algorithm::PS256,
        Algorithm::PS384,
        Algorithm::PS512,
        Algorithm::ES256,
        Algorithm::ES384,
        Algorithm::EdDSA,
        Algorithm::HS256,
        Algorithm::HS384,
        Algorithm::HS512,
    ] {
        let p = policy(&public_for(alg));
        let got =
            verify_at(&p, &mint(alg, None, &claims())).unwrap_or_else(|e| panic!("{alg:?}: {e}"));
        assert_eq!(got.roles, vec!["analyst".to_string()], "{alg:?}");
        assert_eq!(got.label, "token of \"alice\"");
    }
}

#[test]
fn alg_none_and_unknown_algs_are_refused() {
    let p = policy(RSA_PUBLIC);
    // {"alg":"none","typ":"JWT"} . {"iss":"https://idp.example","exp":9999999999,"roles":["analysts"]} .
    let none = "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.\
        eyJpc3MiOiJodHRwczovL2lkcC5leGFtcGxlIiwiZXhwIjo5OTk5OTk5OTk5LCJyb2xlcyI6WyJhbmFseXN0cyJdfQ.";
    assert_eq!(
        rejected(&p, none),
        TokenReason::AlgorithmNotAllowed
    );
    // The same with alg "None" and a junk signature.
    let none2 = "eyJhbGciOiJOb25lIn0.eyJpc3MiOiJodHRwczovL2lkcC5leGFtcGxlIn0.c2lnbmF0dXJl";
    assert_eq!(
        rejected(&p, none2),
        TokenReason::AlgorithmNotAllowed
    );
}

#[test]
fn hs256_signed_with_the_rsa_public_key_is_refused() {
    let p = policy(RSA_PUBLIC);
    let forged = encode(
        &Header::new(Algorithm::HS256),
        &claims(),
        &EncodingKey::from_secret(RSA_PUBLIC.as_bytes()).unwrap(),
    )
    .unwrap();
    assert_eq!(
        rejected(&p, &forged),
        TokenReason::AlgorithmNotAllowed
    );
    // Also through a JWKS, and with an ES key family mismatch.
    let p = policy(&jwks());
    let mut h = Header::new(Algorithm::HS256);
    h.kid = Some("k1".into());
    let forged = encode(
        &h,
        &claims(),
        &EncodingKey::from_secret(RSA_PUBLIC.as_bytes()).unwrap(),
    )
    .unwrap();
    assert_eq!(
        rejected(&p, &forged),
        TokenReason::AlgorithmNotAllowed
    );
    let es_on_rsa_kid = mint(Algorithm::ES256, Some("k1"), &claims());
    assert_eq!(
        rejected(&p, &es_on_rsa_kid),
        TokenReason::AlgorithmNotAllowed
    );
}

#[test]
fn algs_restrict_what_the_keys_allow() {
    let mut i = issuer(RSA_PUBLIC);
    i.algs = vec!["PS256".into()];
    let p = policy_with(i);
    assert!(verify_at(&p, &mint(Algorithm::PS256, None, &claims())).is_ok());
    assert_eq!(
        rejected(&p, &rs256(&claims())),
        TokenReason::AlgorithmNotAllowed
    );
}

#[test]
fn bad_signature_wrong_key_and_tampering() {
    let p = policy(RSA_PUBLIC);
    let other = encode(
        &Header::new(Algorithm::RS256),
        &claims(),
        &EncodingKey::from_rsa_pem(RSA2_PRIVATE.as_bytes()).unwrap(),
    )
    .unwrap();
    assert_eq!(rejected(&p, &other), TokenReason::BadSignature);
    // Payload swapped for one naming more roles, signature kept.
    let good = rs256(&claims());
    let evil = rs256(&json!({"iss": ISS, "exp": NOW + 300, "roles": ["analysts", "clerks"]}));
    let parts: Vec<&str> = good.split('.').collect();
    let evil_payload = evil.split('.').nth(1).unwrap();
    let tampered = format!("{}.{}.{}", parts[0], evil_payload, parts[2]);
    assert_eq!(
        rejected(&p, &tampered),
        TokenReason::BadSignature
    );
}

#[test]
fn time_claims_with_skew() {
    let p = policy(RSA_PUBLIC);
    let with = |k: &str, v: i64| {
        let mut c = claims();
        c[k] = json!(v);
        rs256(&c)
    };
    assert_eq!(
        rejected(&p, &with("exp", NOW - 61)),
        TokenReason::Expired
    );
    assert!(
        verify_at(&p, &with("exp", NOW - 59)).is_ok(),
        "within the skew"
    );
    assert_eq!(
        principal_from_token(&p, &with("exp", NOW - 1), NOW, 0)
            .unwrap_err(),
        AclError::TokenRejected { reason: TokenReason::Expired }
    );
    assert_eq!(
        rejected(&p, &with("nbf", NOW + 61)),
        TokenReason::NotYetValid
    );
    assert!(verify_at(&p, &with("nbf", NOW + 59)).is_ok());
    let mut c = claims();
    c.as_object_mut().unwrap().remove("exp");
    assert_eq!(
        rejected(&p, &rs256(&c)),
        TokenReason::NoExpiry
    );
    c["exp"] = json!("tomorrow");
    assert_eq!(rejected(&p, &rs256(&c)), TokenReason::Malformed);
    c["exp"] = json!((NOW + 10) as f64 + 0.5);
    assert!(verify_at(&p, &rs256(&c)).is_ok(), "fractional NumericDate");
}

#[test]
fn issuer_and_audience() {
    let p = policy(RSA_PUBLIC);
    let mut c = claims();
    c["iss"] = json!("https://other.example");
    assert_eq!(
        rejected(&p, &rs256(&c)),
        TokenReason::UnknownIssuer
    );
    c.as_object_mut().unwrap().remove("iss");
    assert_eq!(
        rejected(&p, &rs256(&c)),
        TokenReason::UnknownIssuer
    );

    let mut i = issuer(RSA_PUBLIC);
    i.audiences = vec!["warehouse".into(), "lake".into()];
    let p = policy_with(i);
    let mut c = claims();
    c["aud"] = json!("lake");
    assert!(verify_at(&p, &rs256(&c)).is_ok());
    c["aud"] = json!(["x", "warehouse"]);
    assert!(verify_at(&p, &rs256(&c)).is_ok());
    c["aud"] = json!("elsewhere");
    assert_eq!(
        rejected(&p, &rs256(&c)),
        TokenReason::WrongAudience
    );
    c.as_object_mut().unwrap().remove("aud");
    assert_eq!(
        rejected(&p, &rs256(&c)),
        TokenReason::WrongAudience
    );
}

#[test]
fn jwks_picks_the_key_by_kid() {
    let p = policy(&jwks());
    assert!(verify_at(&p, &mint(Algorithm::RS256, Some("k1"), &claims())).is_ok());
    assert!(verify_at(&p, &mint(Algorithm::ES256, Some("k2"), &claims())).is_ok());
    assert_eq!(
        rejected(&p, &mint(Algorithm::RS256, Some("k9"), &claims())),
        TokenReason::UnknownKey
    );
    assert_eq!(
        rejected(&p, &mint(Algorithm::RS256, None, &claims())),
        TokenReason::UnknownKey
    );
    // A single PEM key ignores kid.
    let p = policy(RSA_PUBLIC);
    assert!(verify_at(&p, &mint(Algorithm::RS256, Some("whatever"), &claims())).is_ok());
}

#[test]
fn malformed_tokens() {
    let p = policy(RSA_PUBLIC);
    for t in ["x", "a.b", "a.b.c", "....", "eyJhbGciOiJSUzI1NiJ9.!!!.sig"] {
        assert_eq!(
            verify_at(&p, t).unwrap_err(),
            AclError::TokenRejected { reason: TokenReason::Malformed },
            "{t}"
        );
    }
    assert_eq!(
        verify_at(&p, "").unwrap_err(),
        AclError::TokenRejected { reason: TokenReason::Malformed }
    );
    let long = "a".repeat(20_000) + ".b.c";
    assert_eq!(
        verify_at(&p, &long).unwrap_err(),
        AclError::TokenRejected { reason: TokenReason::Malformed }
    );
    let mut h = Header::new(Algorithm::RS256);
    h.crit = Some(vec!["exp-ext".into()]);
    let t = encode(&h, &claims(), &enc_key(Algorithm::RS256)).unwrap();
    assert_eq!(
        rejected(&p, &t),
        TokenReason::CriticalHeader
    );
}

#[test]
fn roles_come_only_through_mappings() {
    let mut p = policy(RSA_PUBLIC);
    let with_roles = |r: Value| {
        let mut c = claims();
        c["roles"] = r;
        rs256(&c)
    };
    let got = verify_at(
        &p,
        &with_roles(json!(["clerks", "analysts", "clerks", "nobody"])),
    )
    .unwrap();
    assert_eq!(got.roles, vec!["analyst".to_string(), "clerk".to_string()]);
    assert_eq!(
        verify_at(&p, &with_roles(json!("clerks"))).unwrap().roles,
        vec!["clerk".to_string()]
    );
    for r in [
        json!(["nobody"]),
        json!([]),
        json!(42),
        json!({"a": "analysts"}),
        json!("ANALYSTS"),
    ] {
        assert_eq!(
            rejected(&p, &with_roles(r)),
            TokenReason::NoRole
        );
    }
    // A mapping to a role that was dropped is skipped.
    p.roles.remove("clerk");
    assert_eq!(
        rejected(&p, &with_roles(json!(["clerks"]))),
        TokenReason::NoRole
    );
    // A mapping of another issuer does not count.
    p.claim_roles.insert(
        ("https://other.example".into(), "x".into()),
        vec!["analyst".into()],
    );
    assert_eq!(
        rejected(&p, &with_roles(json!(["x"]))),
        TokenReason::NoRole
    );
}

#[test]
fn role_claim_at_a_dotted_path() {
    let mut i = issuer(RSA_PUBLIC);
    i.role_claim = "realm_access.roles".into();
    let p = policy_with(i);
    let c = json!({"iss": ISS, "exp": NOW + 60, "realm_access": {"roles": ["analysts"]}});
    assert_eq!(
        verify_at(&p, &rs256(&c)).unwrap().roles,
        vec!["analyst".to_string()]
    );
    assert_eq!(
        rejected(&p, &rs256(&claims())),
        TokenReason::NoRole
    );
    // Namespaced claim names with dots need no escaping.
    let mut i = issuer(RSA_PUBLIC);
    i.role_claim = "https://acme.example/roles".into();
    let p = policy_with(i);
    let c = json!({"iss": ISS, "exp": NOW + 60, "https://acme.example/roles": "clerks"});
    assert_eq!(
        verify_at(&p, &rs256(&c)).unwrap().roles,
        vec!["clerk".to_string()]
    );
}

#[test]
fn label_without_sub() {
    let p = policy(RSA_PUBLIC);
    let mut c = claims();
    c.as_object_mut().unwrap().remove("sub");
    assert_eq!(verify_at(&p, &rs256(&c)).unwrap().label, "token");
}

#[test]
fn cache_answers_until_exp_or_a_policy_change() {
    let mut p = policy(RSA_PUBLIC);
    let cache = TokenCache::new();
    let t = rs256(&claims());
    let first = cache.principal(&p, &t, NOW, 60, KeyTimes::default()).unwrap();
    assert_eq!(cache.len(), 1);
    assert_eq!(cache.principal(&p, &t, NOW + 10, 60, KeyTimes::default()).unwrap(), first);
    // Past exp + skew the cached entry is not used, and verification refuses.
    assert_eq!(
        cache
            .principal(&p, &t, NOW + 300 + 61, 60, KeyTimes::default())
            .unwrap_err(),
        AclError::TokenRejected { reason: TokenReason::Expired }
    );
    // A policy change empties the cache: the unmapped claim acts at once.
    cache.principal(&p, &t, NOW, 60, KeyTimes::default()).unwrap();
    p.claim_roles.clear();
    p.version += 1;
    assert!(cache.principal(&p, &t, NOW, 60, KeyTimes::default()).is_err());
    assert!(cache.is_empty());
    // Refusals are not cached; a forged token never hits a cached entry of the real one.
    p.claim_roles
        .insert((ISS.into(), "analysts".into()), vec!["analyst".into()]);
    p.version += 1;
    let mut forged = t.clone();
    forged.push('A');
    assert!(cache.principal(&p, &forged, NOW, 60, KeyTimes::default()).is_err());
    assert!(cache.principal(&p, &t, NOW, 60, KeyTimes::default()).is_ok());
    assert_eq!(cache.len(), 1);
}

#[test]
fn cache_is_bounded() {
    let p = policy(&format!("hmac:{SECRET}"));
    let cache = TokenCache::new();
    for i in 0..10_001 {
        let mut c = claims();
        c["jti"] = json!(i);
        cache
            .principal(&p, &mint(Algorithm::HS256, None, &c), NOW, 60, KeyTimes::default())
            .unwrap();
    }
    assert!(cache.len() <= 10_000, "{}", cache.len());
}
