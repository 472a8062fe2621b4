//! The reference's remaining statement forms (issue 34, item 4; spec 007): each spelling parses
//! into its twin's `Command`, and what the new clauses mean when applied.
use super::*;
use crate::admin::functions::FnCommand;
use crate::error::{AclError, Invalid};
use crate::policy::functions::FnBody;
use crate::policy::Policy;
use sqlparser::ast::{DataType, Expr};

fn p(sql: &str) -> Command {
    parse(sql).unwrap_or_else(|e| panic!("{sql}: {e}"))
}

#[track_caller]
fn same(a: &str, b: &str) -> Command {
    let (x, y) = (p(a), p(b));
    assert_eq!(x, y, "{a}  vs  {b}");
    x
}

fn msg(sql: &str) -> String {
    parse(sql).expect_err(sql).to_string()
}

fn virtual_fn(sql: &str) -> crate::policy::functions::VirtualFunction {
    match p(sql) {
        Command::Function(FnCommand::CreateVirtual { function, .. }) => function,
        other => panic!("{sql}: {other:?}"),
    }
}

#[test]
fn legacy_spellings_are_their_twins() {
    same("ADD SCHEMA lake.raw AS c.s COMMENT 'x'", "CREATE OR REPLACE VIRTUAL SCHEMA c.s AS lake.raw COMMENT 'x'");
    same("DROP RELATION c.t", "DROP VIRTUAL TABLE c.t");
    same("drop relation if exists c.s.v", "DROP VIRTUAL TABLE IF EXISTS c.s.v");
    same("DROP REFERENCE c.r", "DROP VIRTUAL REFERENCE c.r");
    same("DROP MAP GROUP 'g' FROM ISSUER 'i' TO ROLE R", "UNMAP CLAIM 'g' FROM ISSUER 'i' FROM ROLE r");
    same("DROP MAP CLAIM 'g' FROM ISSUER 'i'", "UNMAP CLAIM 'g' FROM ISSUER 'i'");
    let keys = "CREATE ISSUER 'i' KEYS 'k'";
    same(&format!("{keys} CLAIM MAP '{{\"org.id\": \"Tenant\"}}'"), &format!("{keys} CLAIM MAP ('org.id' => tenant)"));
    same(&format!("{keys} CLAIM MAP (org.id => tenant, sub => who)"), &format!("{keys} CLAIM MAP ('org.id' => tenant, 'sub' => who)"));
    same("ADD SCALAR c.f(x INT) ALIAS 'upper'", "CREATE OR REPLACE VIRTUAL SCALAR c.f(x INT) ALIAS OF upper");
    same("ADD TABLE FUNCTION c.f ALIAS OF 'db.s.fn'", "CREATE OR REPLACE VIRTUAL TABLE FUNCTION c.f ALIAS OF db.s.fn");
    same("ADD SCALAR c.f(x INT) MACRO acl_arg(1) + 1", "ADD SCALAR c.f(x INT) MACRO 'acl_arg(1) + 1'");
    same("ADD SCALAR c.f(x INT) MACRO acl_arg(1) + 1", "CREATE OR REPLACE VIRTUAL SCALAR c.f(x INT) AS acl_arg(1) + 1");
    same("ADD TABLE FUNCTION c.f(x INT) MACRO SELECT acl_arg(1) AS v", "CREATE OR REPLACE VIRTUAL TABLE FUNCTION c.f(x INT) AS SELECT acl_arg(1) AS v");
    same("CREATE VIRTUAL SCALAR c.f(x INT) COMMENT 'y' AS acl_arg(1)", "CREATE VIRTUAL SCALAR c.f(x INT) AS acl_arg(1) COMMENT 'y'");
    assert_eq!(
        p("DROP VIRTUAL SCHEMA IF EXISTS c.s CASCADE"),
        Command::DropSchema { catalog: "c".into(), schema: "s".into(), if_exists: true, cascade: true }
    );
    assert!(is_management("ADD SCHEMA a.b AS c.s") && is_management("DROP RELATION c.t") && is_management("drop reference c.r"));
    // Quoted forms are parsed alone and must end where the string ends.
    assert!(msg("ADD SCALAR c.f ALIAS 'upper; DROP ROLE r'").contains("end of the quoted function name"));
    assert!(msg(&format!("{keys} CLAIM MAP '{{\"a\": 1}}'")).contains("JSON object of claim paths"));
    assert!(msg(&format!("{keys} CLAIM MAP '{{\"a\": \"x\", \"a\": \"y\"}}'")).contains("JSON object"));
    assert!(parse(&format!("{keys} CLAIM MAP '{{\"a\": \"x\", \"b\": \"x\"}}'")).is_err());
}

#[test]
fn a_function_without_a_parameter_list() {
    // `AS db.s.fn`: an alias of that function, arguments as given.
    let f = same("CREATE VIRTUAL TABLE FUNCTION c.f AS db.s.fn", "CREATE VIRTUAL TABLE FUNCTION c.f ALIAS OF db.s.fn");
    let Command::Function(FnCommand::CreateVirtual { function, .. }) = f else { panic!() };
    assert!(function.params.is_none() && matches!(&*function.body, FnBody::Alias(_)));
    same("CREATE VIRTUAL SCALAR c.u AS upper COMMENT 'x'", "CREATE VIRTUAL SCALAR c.u ALIAS OF upper COMMENT 'x'");
    // A body: its arity is its highest acl_arg(n), the arguments untyped.
    let f = virtual_fn("CREATE VIRTUAL SCALAR c.add AS acl_arg(1) + acl_arg(2)");
    assert_eq!(f.params, Some(vec![("arg1".into(), DataType::Unspecified), ("arg2".into(), DataType::Unspecified)]));
    assert_eq!(f.sql, "c.add AS acl_arg(1) + acl_arg(2)");
    let f = virtual_fn("CREATE VIRTUAL TABLE FUNCTION c.t AS SELECT 42 AS v");
    assert_eq!(f.params, Some(vec![]));
    // A declared list still bounds the body.
    assert!(msg("CREATE VIRTUAL SCALAR c.f(x INT) AS acl_arg(2)").contains("acl_arg(2) refers past"));
}

#[test]
fn returns_declares_and_casts_the_result() {
    let f = virtual_fn("CREATE VIRTUAL SCALAR c.f(x INT) RETURNS VARCHAR AS acl_arg(1) + 1");
    assert!(matches!(&*f.body, FnBody::Expr(Expr::Cast { data_type: DataType::Varchar(_), .. })), "{:?}", f.body);
    assert_eq!(f.sql, "c.f(x INT) RETURNS VARCHAR AS acl_arg(1) + 1");
    let f = virtual_fn("CREATE VIRTUAL TABLE FUNCTION c.t(x INT) RETURNS TABLE (v BIGINT, w VARCHAR) AS SELECT acl_arg(1) AS a, 'x' AS b");
    let FnBody::Query(q) = &*f.body else { panic!() };
    assert_eq!(
        q.to_string(),
        "SELECT CAST(\"v\" AS BIGINT) AS \"v\", CAST(\"w\" AS VARCHAR) AS \"w\" FROM (SELECT acl_arg(1) AS a, 'x' AS b) AS \"returns\" (\"v\", \"w\")"
    );
    same(
        "CREATE VIRTUAL TABLE FUNCTION c.t(x INT) RETURNS (v BIGINT) AS SELECT 1",
        "CREATE VIRTUAL TABLE FUNCTION c.t(x INT) RETURNS TABLE (v BIGINT) AS SELECT 1",
    );
    same("ADD TABLE FUNCTION c.t(x INT) RETURNS TABLE (v BIGINT) MACRO 'SELECT 1'", "CREATE OR REPLACE VIRTUAL TABLE FUNCTION c.t(x INT) RETURNS TABLE (v BIGINT) AS SELECT 1");
    assert!(msg("CREATE VIRTUAL SCALAR c.f(x INT) RETURNS INT ALIAS OF upper").contains("RETURNS declares the result of an AS body"));
    assert!(msg("CREATE VIRTUAL TABLE FUNCTION c.f RETURNS TABLE (v INT) AS db.s.fn").contains("RETURNS declares"));
    assert!(msg("CREATE VIRTUAL TABLE FUNCTION c.f RETURNS TABLE () AS SELECT 1").contains("a column after RETURNS TABLE"));
}

#[test]
fn schema_grant_clauses() {
    let g = |sql: &str| match p(sql) {
        Command::GrantSchema { caps, into, comment, .. } => (caps, into, comment),
        other => panic!("{other:?}"),
    };
    assert_eq!(g("GRANT SCHEMA c.s TO ROLE r COMMENT 'why'"), (Caps::DATA, None, Some("why".into())));
    assert_eq!(
        g("GRANT SCHEMA c.s TO ROLE r INTO lake.raw WITH (select, create) COMMENT 'x'"),
        (Caps::SELECT.union(Caps::CREATE), Some(("lake".into(), "raw".into())), Some("x".into()))
    );
    assert_eq!(g("GRANT SCHEMA c.s TO ROLE r VIRTUAL ONLY").0, Caps::DATA);
    assert_eq!(g("GRANT SCHEMA c.s TO ROLE r CAPS '{\"select\": true}' VIRTUAL ONLY").0, Caps::SELECT);
    assert!(msg("GRANT SCHEMA c.s TO ROLE r WITH (select, create) VIRTUAL ONLY").contains("VIRTUAL ONLY grants no create"));
    assert!(msg("GRANT SCHEMA c.s TO ROLE r VIRTUAL ONLY INTO a.b").contains("exclude each other"));
    assert!(msg("GRANT SCHEMA c.s TO ROLE r COMMENT 'a' COMMENT 'b'").contains("COMMENT"));
    assert!(msg("GRANT SCHEMA c.s TO ROLE r INTO system.main").contains("system"));
}

fn run(p: &mut Policy, sql: &str, objects: &[&str]) -> std::result::Result<String, AclError> {
    let mut cmd = parse(sql).expect(sql);
    if let Command::ExpandSchema { objects: o, .. } = &mut cmd {
        *o = Some(objects.iter().map(|s| s.to_string()).collect());
    }
    apply(p, &cmd)
}

fn ok(p: &mut Policy, sql: &str) -> String {
    run(p, sql, &["a", "b"]).unwrap_or_else(|e| panic!("{sql}: {e}"))
}

fn refused(p: &mut Policy, sql: &str) -> Invalid {
    let before = p.clone();
    match run(p, sql, &["a", "b"]) {
        Err(AclError::Invalid(i)) => {
            assert_eq!(*p, before, "{sql} changed the policy");
            i
        }
        other => panic!("{sql}: {other:?}"),
    }
}

#[test]
fn schema_grants_on_aliases_and_expansions() {
    let mut pol = Policy::default();
    for s in ["CREATE VIRTUAL CATALOG c", "CREATE ROLE r", "ADD SCHEMA lake.raw AS c.live", "CREATE VIRTUAL SCHEMA c.x FROM lake.stage"] {
        ok(&mut pol, s);
    }
    let key = ("c".to_string(), "x".to_string());
    // An expanded schema takes a schema grant of data capabilities, with its comment.
    ok(&mut pol, "GRANT SCHEMA c.x TO ROLE r WITH (select) COMMENT 'stage tables'");
    assert_eq!(pol.roles["r"].schema_grants[&key], Caps::SELECT);
    assert_eq!(pol.roles["r"].schema_grant_comments[&key], "stage tables");
    // … it gives the role its objects by the schema level.
    let obj = ObjKey { catalog: "c".into(), schema: "x".into(), name: "a".into() };
    assert_eq!(crate::authz::level(&pol.roles["r"], &obj).map(|(c, _)| c), Some(Caps::SELECT));
    // … but no create, drop or INTO: nothing a principal creates lands in an expansion.
    assert!(matches!(refused(&mut pol, "GRANT SCHEMA c.x TO ROLE r WITH (select, create)"), Invalid::Rule(m) if m.contains("expanded schema")));
    assert!(matches!(refused(&mut pol, "GRANT SCHEMA c.x TO ROLE r INTO lake.stage"), Invalid::Rule(_)));
    // A grant restated without a comment drops it; REVOKE takes both.
    ok(&mut pol, "GRANT SCHEMA c.x TO ROLE r WITH (select)");
    assert!(!pol.roles["r"].schema_grant_comments.contains_key(&key));
    ok(&mut pol, "GRANT SCHEMA c.x TO ROLE r COMMENT 'again'");
    ok(&mut pol, "REVOKE SCHEMA c.x FROM ROLE r");
    assert!(pol.roles["r"].schema_grants.is_empty() && pol.roles["r"].schema_grant_comments.is_empty());
    // INTO on an alias names its own target (any case), nothing else.
    ok(&mut pol, "GRANT SCHEMA c.live TO ROLE r WITH (select, create) INTO LAKE.RAW");
    assert!(matches!(refused(&mut pol, "GRANT SCHEMA c.live TO ROLE r WITH (create) INTO lake.other"), Invalid::Rule(m) if m.contains("INTO must name")));
    // DROP of an expansion that holds objects needs CASCADE; then its objects and grants go.
    ok(&mut pol, "GRANT SCHEMA c.x TO ROLE r COMMENT 'x'");
    assert!(matches!(refused(&mut pol, "DROP VIRTUAL SCHEMA c.x"), Invalid::SchemaNotEmpty { objects: 2, .. }));
    ok(&mut pol, "DROP VIRTUAL SCHEMA c.x CASCADE");
    assert!(pol.catalogs["c"].objects.is_empty() && !pol.roles["r"].schema_grants.contains_key(&key));
    assert!(pol.roles["r"].schema_grant_comments.is_empty());
    // An alias holds no records: CASCADE or not, it goes with its grants.
    ok(&mut pol, "DROP VIRTUAL SCHEMA c.live");
    assert!(pol.roles["r"].schema_grants.is_empty());
    // An expansion emptied by hand drops without CASCADE.
    ok(&mut pol, "CREATE VIRTUAL SCHEMA c.y FROM lake.stage");
    ok(&mut pol, "DROP VIRTUAL TABLE c.y.a");
    ok(&mut pol, "DROP RELATION c.y.b");
    ok(&mut pol, "DROP VIRTUAL SCHEMA c.y");
}
