//! `acl_export()`'s round trip (spec 023): the statements `admin::export` writes, replayed into a
//! fresh policy, give the same store rows (`rows(p) == rows(replay(export(p)))`) and the same
//! export again. The policy sets every field at least once (the store's `EVERYTHING`) and names
//! everything awkwardly (quotes, unicode, keywords, `;` and `--` in names and texts).
use super::tests::{apply, everything, fresh, EVERYTHING};
use super::*;
use crate::admin::export::{export, holds_secret, script, WITHHELD_NOTE, WITHHELD_SECRET};
use crate::admin::Command;
use crate::error::Invalid;
use crate::policy::RelationKind;

/// Awkward names and texts on top of `EVERYTHING`.
fn awkward() -> Vec<String> {
    let rsa = crate::auth::test_keys::RSA_PUBLIC;
    vec![
        "CREATE VIRTUAL CATALOG \"Sel\"\"ect ü\" COMMENT 'it''s; -- not a comment\nsecond line */ \\ $$'".into(),
        "ALTER VIRTUAL CATALOG \"sel\"\"ect ü\" SET SOURCES (\"Phys DB\", lake.\"raw\", \"Phys DB\".\"My \"\"Schema\"\"\".\"T\")".into(),
        "CREATE VIRTUAL TABLE \"sel\"\"ect ü\".\"from\".\"tä'ble; x\" AS \"Phys DB\".\"My \"\"Schema\"\"\".\"T\" COLUMNS (\"Wé\" = upper(\"na me\"), \"select\" NOT NULL, id, \"na me\") RLS (\"na me\" = acl_claim('ten''ant') OR id IN (1, 2) AND note <> 'a;b') PRIMARY KEY (\"select\", id) TYPES (enums = varchar) COMMENT '$$dollar$$'".into(),
        "COMMENT ON VIRTUAL TABLE \"sel\"\"ect ü\".\"from\".\"tä'ble; x\" COLUMN \"Wé\" IS 'masked ''é'''".into(),
        "COMMENT ON VIRTUAL VIEW sales.declared COLUMN a IS 'the \"a\"'".into(),
        "CREATE VIRTUAL SCHEMA \"sel\"\"ect ü\".exp FROM lake.raw COMMENT 'expanded'".into(),
        "CREATE OR REPLACE VIRTUAL TABLE \"sel\"\"ect ü\".exp.a AS lake.raw.\"A\" RLS (x > 1)".into(),
        "DROP VIRTUAL TABLE \"sel\"\"ect ü\".exp.b".into(),
        "CREATE VIRTUAL TABLE \"sel\"\"ect ü\".exp.elsewhere AS phys.main.orders".into(),
        "CREATE VIRTUAL VIEW \"sel\"\"ect ü\".\"main\".\"group\" AS SELECT 'x;y' AS \"a b\"".into(),
        "CREATE VIRTUAL REFERENCE \"sel\"\"ect ü\".\"main\".\"ref\" FROM \"sel\"\"ect ü\".\"from\".\"tä'ble; x\" TO \"group\" ON (\"Wé\" = \"a b\")".into(),
        "CREATE ROLE \"Röle \"\"q\"\"; drop\" CLAIMS (\"from\" = 'it''s', tier = 3)".into(),
        "GRANT CATALOG \"sel\"\"ect ü\" TO ROLE \"röle \"\"q\"\"; drop\" WITH (select, lineage) RLS (id > 0)".into(),
        "GRANT OBJECT \"sel\"\"ect ü\".\"from\".\"tä'ble; x\" TO ROLE \"röle \"\"q\"\"; drop\" CAPS '{}'".into(),
        "GRANT OBJECT \"sel\"\"ect ü\".\"group\" TO ROLE \"röle \"\"q\"\"; drop\"".into(),
        "GRANT OBJECT sales.orders TO ROLE operator RLS (id = 1)".into(),
        "CREATE RESOURCE GROUP \"gröup \"\"1\"\"\" (max_result_rows = 5)".into(),
        "GRANT RESOURCE GROUP \"gröup \"\"1\"\"\" TO ROLE \"röle \"\"q\"\"; drop\"".into(),
        format!("CREATE ISSUER 'https://idp.example/it''s ü' KEYS '{rsa}' ALGS (RS256) ROLE CLAIM 'a.b' CLAIM MAP ('x.y' => \"to\")"),
        "MAP CLAIM 'v''; x' FROM ISSUER 'https://idp.example/it''s ü' TO ROLE \"röle \"\"q\"\"; drop\"".into(),
        "CREATE FUNCTION CATEGORY \"cat \"\"x\"\"\"".into(),
        "ALTER FUNCTION CATEGORY \"cat \"\"x\"\"\" ADD (upper)".into(),
        "GRANT FUNCTION CATEGORY \"cat \"\"x\"\"\" TO ROLE \"röle \"\"q\"\"; drop\"".into(),
        "CREATE VIRTUAL SCALAR \"sel\"\"ect ü\".\"weird fn\"(\"p q\" INTEGER) AS acl_arg(1) + 1 COMMENT 'x'".into(),
        "CREATE VIRTUAL TABLE FUNCTION \"sel\"\"ect ü\".\"from\".nums ALIAS OF range".into(),
    ]
}

/// Parses and applies `statements`; an expansion lists `listing` (what the host would hold).
fn run(p: &mut Policy, statements: &[String], listing: &dyn Fn(&Policy, &str, &str) -> Vec<String>) -> crate::error::Result<()> {
    for s in statements {
        let mut cmd = crate::admin::parse(s).map_err(|e| panic!("{s}: {e}")).unwrap();
        if let Command::ExpandSchema { catalog, schema, objects, .. } = &mut cmd {
            *objects = Some(listing(p, catalog, schema));
        }
        crate::admin::apply(p, &cmd)?;
    }
    Ok(())
}

/// A keys file for the `KEYS FROM` issuer (a public JWKS; removed when dropped).
struct KeysFile(std::path::PathBuf);

impl KeysFile {
    fn new(test: &str) -> KeysFile {
        let k = jsonwebtoken::DecodingKey::from_rsa_pem(crate::auth::test_keys::RSA_PUBLIC.as_bytes()).unwrap();
        let jwk = jsonwebtoken::jwk::Jwk::from_decoding_key(&k, None).unwrap();
        let doc = serde_json::json!({ "keys": [jwk] }).to_string();
        let path = std::env::temp_dir().join(format!("acl-export-{test}-{}.jwks", std::process::id()));
        std::fs::write(&path, doc).unwrap();
        KeysFile(path)
    }
}

impl Drop for KeysFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Every field of the store set, awkward names, and a `KEYS FROM` issuer.
fn rich(file: &KeysFile) -> Policy {
    let mut p = everything();
    let first = |_: &Policy, _: &str, _: &str| vec!["A".to_string(), "b".to_string()];
    run(&mut p, &awkward(), &first).unwrap();
    let other = p.issuers.get_mut("https://other.example").expect("created");
    other.keys_file = Some(file.0.to_string_lossy().into_owned());
    p
}

/// What the host holds for an expansion at replay: the exported policy's objects of the schema
/// that come from its source (so the replay starts from the same listing).
fn listing_of(exported: &Policy) -> impl Fn(&Policy, &str, &str) -> Vec<String> + '_ {
    move |_, c, s| {
        let cat = &exported.catalogs[c];
        let source = &cat.expansions[s];
        cat.objects
            .iter()
            .filter(|((schema, _), _)| schema == s)
            .filter_map(|(_, rel)| match &rel.kind {
                RelationKind::Table(t) if t.db.eq_ignore_ascii_case(&source.db) && t.schema.eq_ignore_ascii_case(&source.schema) => Some(t.name.clone()),
                _ => None,
            })
            .collect()
    }
}

fn replay(exported: &Policy, statements: &[String]) -> crate::error::Result<Policy> {
    let mut back = fresh();
    run(&mut back, statements, &listing_of(exported))?;
    Ok(back)
}

#[test]
fn a_replayed_export_has_the_same_rows() {
    let file = KeysFile::new("rows");
    let p = rich(&file);
    let statements = export(&p, true);
    let back = replay(&p, &statements).unwrap_or_else(|e| panic!("{e}\n{}", script(&statements)));
    let (want, got) = (rows(&p), rows(&back));
    for (i, t) in layout::TABLES.iter().enumerate() {
        assert_eq!(want.0[i], got.0[i], "table {}\n{}", t.name, script(&statements));
    }
    assert_eq!(export(&back, true), statements);
    if std::env::var_os("ACL_EXPORT_SHOW").is_some() {
        println!("{}", script(&statements));
    }
}

#[test]
fn the_export_of_a_fresh_policy_is_empty() {
    assert!(export(&fresh(), true).is_empty());
    let mut p = fresh();
    apply(&mut p, &["REVOKE FUNCTION CATEGORY json FROM ALL ROLES"]);
    assert_eq!(export(&p, true), vec!["REVOKE FUNCTION CATEGORY \"json\" FROM ALL ROLES".to_string()]);
}

#[test]
fn secrets_are_withheld_unless_asked_for() {
    let file = KeysFile::new("secrets");
    let p = rich(&file);
    let secret = "a-shared-secret-of-at-least-32-bytes!";
    assert!(EVERYTHING.iter().any(|s| s.contains(secret)));
    let withheld = export(&p, false).join(";\n");
    assert!(!withheld.contains(secret), "{withheld}");
    assert!(withheld.contains(WITHHELD_SECRET) && withheld.contains(WITHHELD_NOTE));
    // Public keys and key files are written as they are.
    assert!(withheld.contains("BEGIN PUBLIC KEY") && withheld.contains(&*file.0.to_string_lossy()));
    assert!(export(&p, true).join(";\n").contains(secret));
    // The replay stops at the placeholder, naming the issuer.
    let err = replay(&p, &export(&p, false)).unwrap_err();
    let crate::error::AclError::Invalid(Invalid::Issuer { iss, problem }) = &err else { panic!("{err:?}") };
    assert_eq!((iss.as_str(), &**problem), ("https://idp.example", &Invalid::SecretWithheld));
    assert!(err.to_string().starts_with("acl: issuer \"https://idp.example\": its shared secret was withheld by acl_export()"));
}

#[test]
fn shared_secrets_are_recognised() {
    assert!(holds_secret("hmac:anything"));
    assert!(holds_secret(r#"{"keys": [{"kty": "RSA", "n": "x", "e": "AQAB"}, {"kty": "oct", "k": "c2VjcmV0"}]}"#));
    assert!(holds_secret(r#"{"kty": "oct", "k": "c2VjcmV0"}"#));
    assert!(holds_secret("{not json"));
    assert!(!holds_secret(r#"{"keys": [{"kty": "RSA", "n": "x", "e": "AQAB"}, {"kty": "EC"}]}"#));
    assert!(!holds_secret(crate::auth::test_keys::RSA_PUBLIC));
}
