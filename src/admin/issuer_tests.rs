//! Tests of the issuer statements (src/admin/issuer.rs), driven through `admin::parse` and
//! `admin::apply` as an operator types them, then checked against real tokens.
use crate::auth::test_keys::*;
use crate::auth::*;
use crate::admin::{apply, is_management, parse, Command, CreateMode, IssuerSpec, KeySource};
use crate::error::{AclError, Duplicate, Invalid, Result, TokenReason};
use crate::policy::Policy;
use jsonwebtoken::{encode, Algorithm, EncodingKey, Header};
use serde_json::json;

const ISS: &str = "https://idp.example";
const NOW: i64 = 1_800_000_000;

fn run(p: &mut Policy, sql: &str) -> Result<String> {
    apply(p, &parse(sql)?)
}

fn ok(p: &mut Policy, sql: &str) -> String {
    run(p, sql).unwrap_or_else(|e| panic!("{sql}: {e}"))
}

/// The full message of an `Invalid` error; the policy must be unchanged.
fn invalid(p: &mut Policy, sql: &str) -> String {
    let before = (p.version, p.issuers.clone(), p.claim_roles.clone());
    match run(p, sql) {
        Err(e @ AclError::Invalid(_)) => {
            assert_eq!(
                before,
                (p.version, p.issuers.clone(), p.claim_roles.clone()),
                "{sql} changed the policy"
            );
            e.to_string()
        }
        other => panic!("{sql}: expected an invalid error, got {other:?}"),
    }
}

fn syntax(sql: &str) -> String {
    match parse(sql) {
        Err(e @ AclError::Syntax(_)) => e.to_string(),
        other => panic!("{sql}: expected a syntax error, got {other:?}"),
    }
}

fn create(keys: &str, tail: &str) -> String {
    format!(
        "CREATE ISSUER '{ISS}' KEYS '{}' {tail}",
        keys.replace('\'', "''")
    )
}

fn token(claims: serde_json::Value) -> String {
    encode(
        &Header::new(Algorithm::RS256),
        &claims,
        &EncodingKey::from_rsa_pem(RSA_PRIVATE.as_bytes()).unwrap(),
    )
    .unwrap()
}

fn setup() -> Policy {
    let mut p = Policy::default();
    ok(
        &mut p,
        "CREATE ROLE analyst CLAIMS (tenant = 'acme', tier = 1)",
    );
    ok(&mut p, "CREATE ROLE clerk");
    ok(&mut p, &create(RSA_PUBLIC, ""));
    p
}

#[test]
fn management_routing() {
    for s in [
        "CREATE ISSUER 'x' KEYS 'y'",
        "create or replace issuer 'x' keys from '/k.pem'",
        "DROP ISSUER 'x'",
        "drop issuer if exists 'x'",
        "MAP CLAIM 'a' FROM ISSUER 'x' TO ROLE r",
        "unmap claim 'a' from issuer 'x'",
        "CREATE ROLE r CLAIMS (a = 'b')",
    ] {
        assert!(is_management(s), "{s}");
    }
    for s in [
        "SELECT map(['a'], [1])",
        "MAP 1",
        "\"MAP\" CLAIM 'a'",
        "CREATE TABLE issuer (a INT)",
        "DROP TABLE issuer",
    ] {
        assert!(!is_management(s), "{s}");
    }
}

#[test]
fn create_issuer_parses_every_clause_in_any_order() {
    let cmd = parse(
        "CREATE OR REPLACE ISSUER 'https://idp.example' KEYS 'k' CLAIM MAP ('org.id' => Tenant, 'lvl' => \"Level\") \
         ALGS (rs256, 'ES256', EdDSA) ROLE CLAIM 'realm.roles' AUDIENCES ('a', 'b');",
    )
    .unwrap();
    let spec = IssuerSpec {
        iss: ISS.into(),
        keys: KeySource::Inline("k".into()),
        audiences: vec!["a".into(), "b".into()],
        algs: vec!["rs256".into(), "ES256".into(), "EdDSA".into()],
        role_claim: Some("realm.roles".into()),
        claim_map: vec![
            ("org.id".into(), "tenant".into()),
            ("lvl".into(), "level".into()),
        ],
        unmapped: crate::policy::Unmapped::Count,
    };
    assert_eq!(
        cmd,
        Command::CreateIssuer {
            spec,
            mode: CreateMode::OrReplace
        }
    );
    match parse("CREATE ISSUER IF NOT EXISTS 'i' KEYS FROM '/etc/jwks.json'").unwrap() {
        Command::CreateIssuer { spec, mode } => {
            assert_eq!(spec.keys, KeySource::File("/etc/jwks.json".into()));
            assert_eq!((spec.role_claim, mode), (None, CreateMode::IfNotExists));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn create_issuer_syntax_errors() {
    assert!(syntax("CREATE ISSUER idp KEYS 'k'").contains("expected the issuer as a string"));
    assert!(syntax("CREATE ISSUER 'i'").contains("expected KEYS, found end of statement"));
    assert!(
        syntax("CREATE ISSUER 'i' KEYS 'k' ALGS (RS256) ALGS (ES256)").contains("ALGS given twice")
    );
    assert!(
        syntax("CREATE ISSUER 'i' KEYS 'k' AUDIENCES a").contains("expected '(' after AUDIENCES")
    );
    assert!(syntax("CREATE ISSUER 'i' KEYS 'k' CLAIM MAP ('a' = b)").contains("expected '=>'"));
    assert!(syntax("CREATE ISSUER 'i' KEYS 'k' ROLE 'x'").contains("expected CLAIM after ROLE"));
    assert!(syntax("CREATE ISSUER 'i' KEYS 'k' COMMENT 'x'")
        .contains("expected end of statement, found COMMENT"));
    let url = parse("CREATE ISSUER 'i' KEYS FROM 'HTTPS://idp.example/jwks'")
        .unwrap_err()
        .to_string();
    assert_eq!(
        url,
        "acl: KEYS FROM a URL is not supported offline; pass the JWKS inline"
    );
    let dup = parse("CREATE ISSUER 'i' KEYS 'k' CLAIM MAP ('a' => t, 'b' => T)").unwrap_err();
    assert_eq!(dup, Duplicate::ClaimMapped("t".into()).into());
    assert!(matches!(
        parse("CREATE ISSUER 'i' KEYS 'k' ROLE CLAIM 'a..b'").unwrap_err(),
        AclError::Invalid(Invalid::ClaimPath { .. })
    ));
}

#[test]
fn create_issuer_checks_keys_and_algs() {
    let mut p = Policy::default();
    let e = invalid(&mut p, &create("not a key", ""));
    assert_eq!(e, "acl: issuer \"https://idp.example\": issuer KEYS must be a PEM public key, a JWKS document or 'hmac:<secret>'");
    assert!(invalid(&mut p, &create(RSA_PRIVATE, "")).contains("the PEM must be a public key"));
    assert!(
        invalid(&mut p, &create(&RSA_PUBLIC.replace("MII", "MIX"), ""))
            .contains("not an RSA, EC (P-256, P-384) or Ed25519 public key")
    );
    assert!(invalid(&mut p, &create(RSA_SMALL_PUBLIC, "")).contains("at least 2048 bits"));
    assert!(invalid(&mut p, &create(P521_PUBLIC, "")).contains("not an RSA, EC"));
    assert!(
        invalid(&mut p, &create(&format!("{RSA_PUBLIC}{RSA2_PUBLIC}"), ""))
            .contains("give one PEM key")
    );
    assert!(invalid(&mut p, &create("hmac:short", "")).contains("at least 32 bytes"));
    assert!(invalid(&mut p, &create("{\"keys\": []}", "")).contains("the JWKS has no signing key"));
    assert!(invalid(&mut p, &create("{\"keys\": 1}", "")).contains("not a JWKS"));
    assert!(invalid(&mut p, &create("{oops", "")).contains("does not parse"));
    let none = invalid(&mut p, &create(RSA_PUBLIC, "ALGS (RS256, none)"));
    assert_eq!(none, "acl: algorithm none is never accepted");
    assert!(invalid(&mut p, &create(RSA_PUBLIC, "ALGS (RS999)"))
        .starts_with("acl: unknown algorithm RS999 (known: RS256"));
    let hs = invalid(&mut p, &create(RSA_PUBLIC, "ALGS (RS256, HS256)"));
    assert_eq!(
        hs,
        "acl: issuer \"https://idp.example\": ALGS HS256: none of the issuer's keys can verify it"
    );
    assert!(invalid(&mut p, &create(P256_PUBLIC, "ALGS (ES384)")).contains("ALGS ES384"));
    assert!(p.issuers.is_empty());
    // Every accepted form.
    for keys in [
        RSA_PUBLIC,
        P256_PUBLIC,
        P384_PUBLIC,
        ED_PUBLIC,
        "hmac:0123456789abcdef0123456789abcdef",
    ] {
        let mut p = Policy::default();
        ok(&mut p, &create(keys, ""));
    }
    ok(&mut p, &create(RSA_PUBLIC, "ALGS (ps256, RS512)"));
    assert_eq!(
        p.issuers[ISS].algs,
        vec!["PS256".to_string(), "RS512".to_string()]
    );
    assert_eq!(p.issuers[ISS].role_claim, "roles");
}

#[test]
fn jwks_documents() {
    let mut p = Policy::default();
    let rsa_jwk = |kid: &str| {
        let k = jsonwebtoken::DecodingKey::from_rsa_pem(RSA_PUBLIC.as_bytes()).unwrap();
        let mut j = jsonwebtoken::jwk::Jwk::from_decoding_key(&k, None).unwrap();
        j.common.key_id = Some(kid.into());
        serde_json::to_value(j).unwrap()
    };
    let doc = |keys: Vec<serde_json::Value>| json!({ "keys": keys }).to_string();
    let mut enc = rsa_jwk("enc");
    enc["use"] = json!("enc");
    ok(&mut p, &create(&doc(vec![rsa_jwk("a"), enc.clone()]), ""));
    // A single JWK is accepted too.
    ok(
        &mut p,
        &format!("CREATE OR REPLACE ISSUER '{ISS}' KEYS '{}'", rsa_jwk("a")),
    );
    assert!(invalid(
        &mut p,
        &format!("CREATE OR REPLACE ISSUER '{ISS}' KEYS '{}'", doc(vec![enc]))
    )
    .contains("no signing key"));
    assert!(invalid(
        &mut p,
        &format!(
            "CREATE OR REPLACE ISSUER '{ISS}' KEYS '{}'",
            doc(vec![rsa_jwk("a"), rsa_jwk("a")])
        )
    )
    .contains("JWKS key \"a\" appears twice"));
    let mut wrong_alg = rsa_jwk("b");
    wrong_alg["alg"] = json!("ES256");
    assert!(invalid(
        &mut p,
        &format!(
            "CREATE OR REPLACE ISSUER '{ISS}' KEYS '{}'",
            doc(vec![wrong_alg])
        )
    )
    .contains("JWKS key \"b\": its alg does not fit its key type"));
    let bad_ec = json!({"kty": "EC", "crv": "P-256", "x": "AAAA", "y": "AAAA", "kid": "e"});
    assert!(invalid(
        &mut p,
        &format!(
            "CREATE OR REPLACE ISSUER '{ISS}' KEYS '{}'",
            doc(vec![bad_ec])
        )
    )
    .contains("is not a valid key"));
    // key_ops as PyJWT writes them: verify is a signing key, encrypt only is skipped.
    let mut ops = rsa_jwk("o");
    ops["key_ops"] = json!(["verify"]);
    ok(
        &mut p,
        &format!(
            "CREATE OR REPLACE ISSUER '{ISS}' KEYS '{}'",
            doc(vec![ops.clone()])
        ),
    );
    ops["key_ops"] = json!(["encrypt"]);
    assert!(invalid(
        &mut p,
        &format!("CREATE OR REPLACE ISSUER '{ISS}' KEYS '{}'", doc(vec![ops]))
    )
    .contains("no signing key"));
    let mut no_kid = rsa_jwk("x");
    no_kid.as_object_mut().unwrap().remove("kid");
    assert!(invalid(
        &mut p,
        &format!(
            "CREATE OR REPLACE ISSUER '{ISS}' KEYS '{}'",
            doc(vec![rsa_jwk("a"), no_kid])
        )
    )
    .contains("needs a kid"));
}

#[test]
fn keys_from_a_file() {
    let dir = std::env::temp_dir().join(format!("acl-keys-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("rsa.pem");
    std::fs::write(&path, RSA_PUBLIC).unwrap();
    let mut p = Policy::default();
    ok(
        &mut p,
        &format!("CREATE ISSUER '{ISS}' KEYS FROM '{}'", path.display()),
    );
    // read and checked now, and not kept: the node reads the file whenever it publishes
    assert_eq!(p.issuers[ISS].keys, "");
    assert_eq!(p.issuers[ISS].keys_file.as_deref(), Some(path.to_str().unwrap()));
    let e = invalid(
        &mut p,
        &format!(
            "CREATE ISSUER 'b' KEYS FROM '{}'",
            dir.join("missing.pem").display()
        ),
    );
    assert!(
        e.starts_with("acl: cannot read keys file") && e.ends_with("not found"),
        "{e}"
    );
    assert!(invalid(
        &mut p,
        &format!("CREATE ISSUER 'b' KEYS FROM '{}'", dir.display())
    )
    .contains("not a regular file"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn create_replace_and_drop_issuer() {
    let mut p = setup();
    assert_eq!(
        invalid(&mut p, &create(RSA_PUBLIC, "")),
        "acl: issuer \"https://idp.example\" already exists"
    );
    assert_eq!(
        ok(
            &mut p,
            &format!("CREATE ISSUER IF NOT EXISTS '{ISS}' KEYS 'junk'")
        ),
        "CREATE ISSUER 'https://idp.example' (skipped: exists)"
    );
    ok(
        &mut p,
        &format!("MAP CLAIM 'analysts' FROM ISSUER '{ISS}' TO ROLE analyst"),
    );
    let t = token(json!({"iss": ISS, "exp": NOW + 60, "roles": ["analysts"]}));
    assert!(principal_from_token(&p, &t, NOW, 60).is_ok());
    // Key rotation: OR REPLACE keeps the mappings; the old key no longer verifies.
    let status = ok(
        &mut p,
        &format!("CREATE OR REPLACE ISSUER '{ISS}' KEYS '{RSA2_PUBLIC}'"),
    );
    assert_eq!(status, "CREATE ISSUER 'https://idp.example' (replaced)");
    assert_eq!(p.claim_roles.len(), 1);
    assert_eq!(
        principal_from_token(&p, &t, NOW, 60).unwrap_err(),
        AclError::token(TokenReason::BadSignature)
    );
    // DROP removes the issuer and its mappings.
    assert_eq!(
        ok(&mut p, &format!("DROP ISSUER '{ISS}'")),
        "DROP ISSUER 'https://idp.example'"
    );
    assert!(p.issuers.is_empty() && p.claim_roles.is_empty());
    assert_eq!(
        invalid(&mut p, &format!("DROP ISSUER '{ISS}'")),
        "acl: issuer \"https://idp.example\" does not exist"
    );
    assert!(ok(&mut p, &format!("DROP ISSUER IF EXISTS '{ISS}'"))
        .ends_with("(skipped: does not exist)"));
}

#[test]
fn map_and_unmap_claims() {
    let mut p = setup();
    let map = |v: &str, r: &str| format!("MAP CLAIM '{v}' FROM ISSUER '{ISS}' TO ROLE {r}");
    assert_eq!(
        ok(&mut p, &map("staff", "Clerk")),
        "MAP CLAIM 'staff' FROM ISSUER 'https://idp.example' TO ROLE clerk"
    );
    ok(&mut p, &map("staff", "analyst"));
    assert!(ok(&mut p, &map("staff", "analyst")).ends_with("(already mapped)"));
    assert_eq!(
        p.claim_roles[&(ISS.to_string(), "staff".to_string())],
        vec!["analyst".to_string(), "clerk".to_string()]
    );
    assert_eq!(
        invalid(&mut p, &map("staff", "nobody")),
        "acl: role \"nobody\" does not exist"
    );
    let e = invalid(
        &mut p,
        "MAP CLAIM 'x' FROM ISSUER 'https://nope' TO ROLE clerk",
    );
    assert_eq!(e, "acl: issuer \"https://nope\" does not exist");
    assert!(syntax("MAP CLAIM x FROM ISSUER 'i' TO ROLE r")
        .contains("expected the claim value as a string"));
    assert!(syntax("MAP CLAIM 'x' FROM 'i' TO ROLE r").contains("expected ISSUER"));

    let t = token(json!({"iss": ISS, "exp": NOW + 60, "roles": "staff"}));
    assert_eq!(
        principal_from_token(&p, &t, NOW, 60).unwrap().roles,
        vec!["analyst".to_string(), "clerk".to_string()]
    );

    let unmap = format!("UNMAP CLAIM 'staff' FROM ISSUER '{ISS}' FROM ROLE analyst");
    assert_eq!(
        ok(&mut p, &unmap),
        format!("UNMAP CLAIM 'staff' FROM ISSUER '{ISS}' FROM ROLE analyst")
    );
    assert!(ok(&mut p, &unmap).ends_with("(nothing to unmap)"));
    assert_eq!(
        principal_from_token(&p, &t, NOW, 60).unwrap().roles,
        vec!["clerk".to_string()]
    );
    ok(&mut p, &format!("UNMAP CLAIM 'staff' FROM ISSUER '{ISS}'"));
    assert!(p.claim_roles.is_empty());
    assert_eq!(
        principal_from_token(&p, &t, NOW, 60).unwrap_err(),
        AclError::token(TokenReason::NoRole)
    );
    assert!(invalid(
        &mut p,
        &format!("UNMAP CLAIM 'staff' FROM ISSUER '{ISS}' FROM ROLE ghost")
    )
    .contains("role \"ghost\""));

    // DROP ROLE forgets its mappings: a new role of the same name does not inherit them.
    ok(&mut p, &map("staff", "clerk"));
    ok(&mut p, "DROP ROLE clerk");
    assert!(p.claim_roles.is_empty());
    ok(&mut p, "CREATE ROLE clerk");
    assert!(principal_from_token(&p, &t, NOW, 60).is_err());
}

#[test]
fn role_claims() {
    let mut p = setup();
    assert_eq!(
        parse("CREATE OR REPLACE ROLE R CLAIMS (Tenant = 'acme', \"Level\" = -3, ratio = 0.5)")
            .unwrap(),
        Command::CreateRoleWithClaims {
            name: "r".into(),
            mode: CreateMode::OrReplace,
            claims: [("tenant", "acme"), ("level", "-3"), ("ratio", "0.5")]
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    );
    assert_eq!(
        p.roles["analyst"].claims.get("tier").map(String::as_str),
        Some("1")
    );
    assert!(syntax("CREATE ROLE r CLAIMS ()").contains("expected a claim name"));
    assert!(syntax("CREATE ROLE r CLAIMS (a 'b')").contains("expected '='"));
    assert!(syntax("CREATE ROLE r CLAIMS (a = b)").contains("expected a string or a number"));
    assert!(syntax("CREATE ROLE r CLAIMS (a = -'x')").contains("expected a string or a number"));
    assert_eq!(
        parse("CREATE ROLE r CLAIMS (a = '1', A = '2')").unwrap_err(),
        Duplicate::Claim("a".into()).into()
    );
    // IF NOT EXISTS leaves an existing role's claims alone; OR REPLACE states them anew.
    ok(
        &mut p,
        "CREATE ROLE IF NOT EXISTS analyst CLAIMS (tenant = 'other')",
    );
    assert_eq!(p.roles["analyst"].claims["tenant"], "acme");
    ok(
        &mut p,
        "CREATE OR REPLACE ROLE analyst CLAIMS (region = 'eu')",
    );
    assert_eq!(
        p.roles["analyst"].claims.keys().collect::<Vec<_>>(),
        vec!["region"]
    );
    assert_eq!(
        invalid(&mut p, "CREATE ROLE analyst CLAIMS (a = 'b')"),
        "acl: role \"analyst\" already exists"
    );
}

#[test]
fn claim_map_end_to_end() {
    let mut p = setup();
    ok(&mut p, &format!("CREATE OR REPLACE ISSUER '{ISS}' KEYS '{RSA_PUBLIC}' ROLE CLAIM 'app.roles' CLAIM MAP ('org.id' => TENANT)"));
    ok(
        &mut p,
        &format!("MAP CLAIM 'reader' FROM ISSUER '{ISS}' TO ROLE analyst"),
    );
    let t = token(
        json!({"iss": ISS, "sub": "bob", "exp": NOW + 60, "app": {"roles": ["reader"]}, "org": {"id": 42}}),
    );
    let got = principal_from_token(&p, &t, NOW, 60).unwrap();
    assert_eq!(got.label, "token of \"bob\"");
    assert_eq!(got.claims.get("tenant").cloned().flatten().as_deref(), Some("42"));
    let view = crate::authz::View::new(&p, &got).unwrap();
    assert_eq!((view.claim("tenant"), view.claim("tier")), (Some("42"), Some("1")));
}

/// The reference system's rule (specs/003, "Roles"): a role-claim value with no mapping counts
/// when it names an existing role; `UNMAPPED IGNORE` makes the issuer's claim go through mappings
/// only. A value that has a mapping goes through the mapping alone.
#[test]
fn unmapped_values_naming_a_role_count_unless_the_issuer_ignores_them() {
    let mut p = setup();
    let roles = |p: &Policy, v: serde_json::Value| principal_from_token(p, &token(json!({"iss": ISS, "exp": NOW + 60, "roles": v})), NOW, 60);
    assert_eq!(roles(&p, json!("analyst")).unwrap().roles, ["analyst"]);
    assert_eq!(roles(&p, json!(["Clerk", "nobody"])).unwrap().roles, ["clerk"], "folded as role names are");
    assert_eq!(roles(&p, json!("nobody")).unwrap_err(), AclError::token(TokenReason::NoRole));
    // a mapped value goes through its mapping only, even when it also names a role
    ok(&mut p, &format!("MAP GROUP 'analyst' FROM ISSUER '{ISS}' TO ROLE clerk"));
    assert_eq!(roles(&p, json!("analyst")).unwrap().roles, ["clerk"]);
    ok(&mut p, &format!("DROP MAP GROUP 'analyst' FROM ISSUER '{ISS}'"));
    assert_eq!(roles(&p, json!("analyst")).unwrap().roles, ["analyst"]);
    // UNMAPPED IGNORE: mappings only
    ok(&mut p, &format!("ALTER ISSUER '{ISS}' SET UNMAPPED IGNORE"));
    assert_eq!(roles(&p, json!("analyst")).unwrap_err(), AclError::token(TokenReason::NoRole));
    ok(&mut p, &format!("MAP CLAIM 'staff' FROM ISSUER '{ISS}' TO ROLE analyst"));
    assert_eq!(roles(&p, json!(["staff", "clerk"])).unwrap().roles, ["analyst"]);
    ok(&mut p, &create(RSA_PUBLIC, "UNMAPPED COUNT").replace("CREATE ISSUER", "CREATE OR REPLACE ISSUER"));
    assert_eq!(roles(&p, json!(["staff", "clerk"])).unwrap().roles, ["analyst", "clerk"]);
    // a dropped role no longer counts
    ok(&mut p, "DROP ROLE clerk");
    assert_eq!(roles(&p, json!("clerk")).unwrap_err(), AclError::token(TokenReason::NoRole));
}
