//! The function API's wrappers: each call builds its statement twin's text, every argument is
//! quoted so that nothing it holds becomes a second command or another clause, and the macros of
//! cpp/api.cpp follow `API`.
use super::*;
use crate::admin::{parse, Command};

fn call(f: &str, args: &[Option<&str>]) -> Result<Vec<String>> {
    let v: Vec<Option<String>> = args.iter().map(|a| a.map(str::to_string)).collect();
    statements(f, &v)
}

fn one(f: &str, args: &[Option<&str>]) -> String {
    let mut v = call(f, args).unwrap_or_else(|e| panic!("{f}: {e}"));
    assert_eq!(v.len(), 1, "{f}: {v:?}");
    v.remove(0)
}

fn err(f: &str, args: &[Option<&str>]) -> String {
    match call(f, args) {
        Ok(v) => panic!("{f} built {v:?}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn each_function_builds_its_statement_twin() {
    let s = Some;
    let cases: &[(&str, &[Option<&str>], &str)] = &[
        ("acl_create_catalog", &[s("c"), s("x"), s("replace")], "CREATE OR REPLACE VIRTUAL CATALOG \"c\" COMMENT 'x'"),
        ("acl_create_catalog", &[s("c"), None, s("skip")], "CREATE VIRTUAL CATALOG IF NOT EXISTS \"c\""),
        ("acl_alter_catalog", &[s("c"), s("it's")], "ALTER VIRTUAL CATALOG \"c\" SET COMMENT 'it''s'"),
        ("acl_drop_catalog", &[s("c"), s("true"), s("skip")], "DROP VIRTUAL CATALOG IF EXISTS \"c\" CASCADE"),
        (
            "acl_add_relation",
            &[s("c"), s("t"), s("db.main.t"), s("a, b = upper(b)"), s("a > 1")],
            "CREATE OR REPLACE VIRTUAL TABLE \"c\".\"t\" AS \"db\".\"main\".\"t\" COLUMNS 'a, b = upper(b)' RLS 'a > 1'",
        ),
        ("acl_add_relation", &[s("c"), s("s.t"), s("db.main.t"), s(""), s(""), None, s("create")], "CREATE VIRTUAL TABLE \"c\".\"s\".\"t\" AS \"db\".\"main\".\"t\""),
        ("acl_add_view", &[s("c"), s("v"), s("SELECT 1 AS a"), s("a INTEGER")], "CREATE OR REPLACE VIRTUAL VIEW \"c\".\"v\" (a INTEGER) AS 'SELECT 1 AS a'"),
        ("acl_alter_relation", &[s("c"), s("t"), s("phys"), s("db.main.u")], "ALTER VIRTUAL TABLE \"c\".\"t\" SET PHYS \"db\".\"main\".\"u\""),
        ("acl_alter_relation", &[s("c"), s("v"), s("view"), s("SELECT 2")], "ALTER VIRTUAL VIEW \"c\".\"v\" SET AS 'SELECT 2'"),
        ("acl_drop_relation", &[s("c"), s("t"), s("skip")], "DROP RELATION IF EXISTS \"c\".\"t\""),
        ("acl_add_schema_alias", &[s("c"), s("p"), s("db.raw")], "CREATE OR REPLACE VIRTUAL SCHEMA \"c\".\"p\" AS \"db\".\"raw\""),
        ("acl_expand_schema", &[s("c"), s("p"), s("db.raw"), None, s("create")], "CREATE VIRTUAL SCHEMA \"c\".\"p\" FROM \"db\".\"raw\""),
        ("acl_alter_schema_alias", &[s("c"), s("p"), s("db.s2")], "ALTER VIRTUAL SCHEMA \"c\".\"p\" SET PHYS \"db\".\"s2\""),
        ("acl_refresh_schema_objects", &[s("c"), s("p"), s("true")], "ALTER VIRTUAL SCHEMA \"c\".\"p\" REFRESH PRUNE"),
        ("acl_drop_schema_alias", &[s("c"), s("p"), s("skip"), s("true")], "DROP VIRTUAL SCHEMA IF EXISTS \"c\".\"p\" CASCADE"),
        (
            "acl_add_table_function",
            &[s("c"), s("f"), s("SELECT acl_arg(1) AS v"), s("x INTEGER"), s("v BIGINT")],
            "CREATE OR REPLACE VIRTUAL TABLE FUNCTION \"c\".\"f\"(x INTEGER) RETURNS TABLE (v BIGINT) MACRO 'SELECT acl_arg(1) AS v'",
        ),
        ("acl_add_scalar", &[s("c"), s("g"), s("acl_arg(1) + 1"), s(""), s("bigint")], "CREATE OR REPLACE VIRTUAL SCALAR \"c\".\"g\" RETURNS BIGINT MACRO 'acl_arg(1) + 1'"),
        ("acl_add_scalar_alias", &[s("c"), s("u"), s("upper")], "CREATE OR REPLACE VIRTUAL SCALAR \"c\".\"u\" ALIAS OF 'upper'"),
        ("acl_drop_function", &[s("c"), s("f"), s("table")], "DROP VIRTUAL TABLE FUNCTION \"c\".\"f\""),
        (
            "acl_add_reference",
            &[s("c"), s("r"), s("a"), s("b"), None, None, s("x = y"), None, s("many_to_one"), s("true")],
            "CREATE OR REPLACE VIRTUAL REFERENCE \"c\".\"r\" FROM \"a\" TO \"b\" ON (x = y) CARDINALITY 'many_to_one' OPTIONAL",
        ),
        ("acl_drop_reference", &[s("c"), s("r")], "DROP VIRTUAL REFERENCE \"c\".\"r\""),
        ("acl_comment", &[s("c"), s("t"), s("relation"), s("a"), s("x")], "COMMENT ON VIRTUAL TABLE \"c\".\"t\" COLUMN \"a\" IS 'x'"),
        ("acl_comment", &[s("c"), s("p"), s("schema"), s(""), s("x")], "COMMENT ON VIRTUAL SCHEMA \"c\".\"p\" IS 'x'"),
        ("acl_grant_catalog", &[s("r"), s("c"), s("{}"), s("true")], "GRANT CATALOG \"c\" TO ROLE \"r\" CAPS '{}' MAIN"),
        ("acl_grant_catalog", &[s("r"), s("c"), None, None, s("a > 1"), s("a")], "GRANT CATALOG \"c\" TO ROLE \"r\" RLS 'a > 1' COLUMNS 'a'"),
        ("acl_alter_grant", &[s("r"), s("c"), s("main"), s("false")], "ALTER GRANT CATALOG \"c\" TO ROLE \"r\" SET MAIN 'false'"),
        ("acl_revoke_catalog", &[s("r"), s("c")], "REVOKE CATALOG \"c\" FROM ROLE \"r\""),
        (
            "acl_grant_schema",
            &[s("r"), s("c"), s("p"), s("{\"select\": true}"), s("why"), None, s("true")],
            "GRANT SCHEMA \"c\".\"p\" TO ROLE \"r\" CAPS '{\"select\": true}' VIRTUAL ONLY COMMENT 'why'",
        ),
        ("acl_revoke_schema", &[s("r"), s("c"), s("p")], "REVOKE SCHEMA \"c\".\"p\" FROM ROLE \"r\""),
        ("acl_grant_object", &[s("r"), s("c"), s("t"), s("{\"select\": true}")], "GRANT OBJECT \"c\".\"t\" TO ROLE \"r\" CAPS '{\"select\": true}'"),
        ("acl_grant_admin", &[s("r"), s("Manage")], "GRANT ADMIN manage TO ROLE \"r\""),
        ("acl_revoke_admin", &[s("r")], "REVOKE ADMIN FROM ROLE \"r\""),
        ("acl_define_role", &[s("r"), s("a=1"), s("create")], "CREATE ROLE \"r\" CLAIMS 'a=1'"),
        ("acl_alter_role", &[s("r"), s("a=1")], "ALTER ROLE \"r\" SET CLAIMS 'a=1'"),
        ("acl_drop_role", &[s("r"), s("skip")], "DROP ROLE IF EXISTS \"r\""),
        (
            "acl_define_issuer",
            &[s("https://i"), s("k"), s("a,b"), s("HS256"), s("groups"), s("{\"x.y\": \"t\"}")],
            "CREATE OR REPLACE ISSUER 'https://i' KEYS 'k' AUDIENCES 'a,b' ALGS 'HS256' ROLE CLAIM 'groups' CLAIM MAP '{\"x.y\": \"t\"}'",
        ),
        ("acl_alter_issuer", &[s("i"), s("jwks_uri"), s("/k.json")], "ALTER ISSUER 'i' SET KEYS FROM '/k.json'"),
        ("acl_drop_issuer", &[s("i")], "DROP ISSUER 'i'"),
        ("acl_map_role", &[s("i"), s("group"), s("g"), s("r")], "MAP GROUP 'g' FROM ISSUER 'i' TO ROLE \"r\""),
        ("acl_drop_role_mapping", &[s("i"), s("claim-value"), s("g"), s("r")], "DROP MAP CLAIM 'g' FROM ISSUER 'i' TO ROLE \"r\""),
        ("acl_deny_function", &[s("read_csv")], "DENY FUNCTION \"read_csv\" TO ALL ROLES"),
        ("acl_allow_function", &[s("db.s.f")], "GRANT FUNCTION \"db\".\"s\".\"f\" TO ALL ROLES"),
    ];
    for (f, args, want) in cases {
        let got = one(f, args);
        assert_eq!(&got, want, "{f}");
        // The statement twin parses (the same parser the statement form uses).
        parse(&got).unwrap_or_else(|e| panic!("{f}: {got}: {e}"));
    }
    let covered: std::collections::BTreeSet<&str> = cases.iter().map(|(f, ..)| *f).collect();
    for s in API {
        if !matches!(s.name, "acl_add_table_function_alias") {
            assert!(covered.contains(s.name), "{} has no case", s.name);
        }
    }
}

#[test]
fn upserts_keep_what_the_record_holds() {
    let s = Some;
    assert_eq!(
        call("acl_create_catalog", &[s("c"), s("x")]).unwrap(),
        vec!["CREATE VIRTUAL CATALOG IF NOT EXISTS \"c\"".to_string(), "COMMENT ON VIRTUAL CATALOG \"c\" IS 'x'".into()]
    );
    assert_eq!(
        call("acl_define_role", &[s("r"), s("")]).unwrap(),
        vec!["CREATE ROLE IF NOT EXISTS \"r\"".to_string(), "ALTER ROLE \"r\" SET CLAIMS ''".into()]
    );
}

#[test]
fn arguments_cannot_inject_a_second_command_or_a_clause() {
    let s = Some;
    // A role's name is the argument's text: quotes, `;` and comments stay in the one name.
    for text in ["r\"; GRANT ADMIN passthrough TO ROLE \"m", "r; GRANT ADMIN passthrough TO ROLE m", "r -- x", "a.b"] {
        let got = one("acl_grant_admin", &[s(text), s("manage")]);
        let Command::GrantAdmin { role, .. } = parse(&got).unwrap() else { panic!("{got}") };
        assert_eq!(role, text.to_lowercase(), "{got}");
        let got = one("acl_grant_catalog", &[s("r"), s(text), s("{}")]);
        let Command::GrantCatalog { catalog, .. } = parse(&got).unwrap() else { panic!("{got}") };
        assert_eq!(catalog, text.to_lowercase(), "{got}");
    }
    assert!(err("acl_grant_admin", &[s(""), s("manage")]).contains("argument role"));
    // A dotted name is parsed as one: a second statement or part where none belongs is refused.
    for bad in ["s.t; DROP ROLE r", "s.t -- x\n, y", "a b", "a.b.c.d", ""] {
        assert!(err("acl_drop_relation", &[s("c"), s(bad)]).contains("argument vname"), "{bad}");
    }
    // A quote in a string argument stays in the string.
    let got = one("acl_grant_catalog", &[s("r"), s("c"), s("{}' MAIN RLS 'true")]);
    assert!(parse(&got).is_err(), "{got}");
    let got = one("acl_add_relation", &[s("c"), s("t"), s("db.main.t"), s("a') RLS ('true"), s("")]);
    assert!(parse(&got).is_err(), "{got}");
    let got = one("acl_comment", &[s("c"), s("t"), s("relation"), s(""), s("x'; DROP ROLE r; --")]);
    let Command::Comment { text, .. } = parse(&got).unwrap() else { panic!("{got}") };
    assert_eq!(text.as_deref(), Some("x'; DROP ROLE r; --"));
    // A fragment may not leave its parentheses, end the statement or comment the rest out.
    for bad in ["x INTEGER) AS SELECT 1; --", "x INTEGER --", "x INTEGER /* */", "(x", "x INTEGER; DROP ROLE r"] {
        let e = err("acl_add_table_function", &[s("c"), s("f"), s("SELECT 1"), s(bad)]);
        assert!(e.contains("argument params"), "{bad}: {e}");
    }
    assert!(err("acl_add_reference", &[s("c"), s("r"), s("a"), s("b"), None, None, s("x = y) OPTIONAL --")]).contains("argument pairs"));
    assert!(err("acl_add_scalar", &[s("c"), s("g"), s("1"), None, s("INTEGER MACRO 'x'")]).contains("argument returns"));
    // A physical name is parsed as one, quotes allowed, and re-quoted.
    assert_eq!(
        one("acl_add_relation", &[s("c"), s("t"), s("\"my db\".main.\"t\"\"x\""), s(""), s("")]),
        "CREATE OR REPLACE VIRTUAL TABLE \"c\".\"t\" AS \"my db\".\"main\".\"t\"\"x\""
    );
    assert!(err("acl_add_relation", &[s("c"), s("t"), s("db.main.t; DROP ROLE r"), s(""), s("")]).contains("argument phys"));
}

#[test]
fn null_and_bad_arguments_are_named() {
    let s = Some;
    assert_eq!(err("acl_grant_admin", &[None, s("manage")]), "acl: acl_grant_admin: argument role must not be NULL");
    assert!(err("acl_add_relation", &[s("c"), s("t"), s("db.main.t"), None, s("")]).contains("argument columns must not be NULL"));
    assert!(err("acl_create_catalog", &[s("c"), None, s("merge")]).contains("argument mode"));
    assert!(err("acl_grant_admin", &[s("r"), s("root")]).contains("argument scope"));
    assert!(err("acl_drop_catalog", &[s("c"), s("yes")]).contains("argument cascade"));
    assert!(err("acl_define_issuer", &[s("i"), s(""), s(""), None, None, None, s("")]).contains("exactly one"));
    assert!(err("acl_add_reference", &[s("c"), s("r"), s("a"), s("b"), s("function")]).contains("argument to_kind"));
    // NULL capabilities, and an issuer's NULL fields, are unspecified, as in the reference.
    assert_eq!(
        one("acl_define_issuer", &[s("i"), s("k"), None, None, None, None]),
        "CREATE OR REPLACE ISSUER 'i' KEYS 'k'"
    );
    assert_eq!(one("acl_grant_object", &[s("r"), s("c"), s("t"), None]), "GRANT OBJECT \"c\".\"t\" TO ROLE \"r\"");
}

/// cpp/api.cpp declares one macro per `API` entry, with the same parameters, the first
/// `required` without a default.
#[test]
fn the_macros_follow_the_api_list() {
    let cpp = include_str!("../../cpp/api.cpp");
    for s in API {
        let head = format!("{{DEFAULT_SCHEMA, \"{}\",\n     \"(", s.name);
        let at = cpp.find(&head).unwrap_or_else(|| panic!("no macro for {}", s.name)) + head.len();
        let sig = &cpp[at..at + cpp[at..].find(") AS ").expect("a signature")];
        let want: Vec<String> =
            s.params.iter().enumerate().map(|(i, p)| if i < s.required { p.to_string() } else { format!("{p} := NULL") }).collect();
        assert_eq!(sig, want.join(", "), "{}", s.name);
        assert!(cpp[at..].contains(&format!("acl_api('{}', [", s.name)), "{}", s.name);
    }
    assert_eq!(cpp.matches("{DEFAULT_SCHEMA, ").count(), API.len());
}
