//! Resource groups: the statements' spellings, what they do to the policy, and the limits a
//! principal's groups resolve to (the most generous winning).
use super::*;
use crate::error::AclError;

fn run(p: &mut Policy, sql: &str) -> Result<String> {
    super::super::apply(p, &super::super::parse(sql)?)
}

fn ok(p: &mut Policy, sql: &str) -> String {
    run(p, sql).unwrap_or_else(|e| panic!("{sql}: {e}"))
}

fn setup() -> Policy {
    let mut p = Policy::default();
    for sql in ["CREATE ROLE analyst", "CREATE ROLE clerk"] {
        ok(&mut p, sql);
    }
    p
}

#[test]
fn the_statements_parse_in_every_spelling() {
    let parse = |s: &str| super::super::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"));
    assert_eq!(
        parse("create resource group G (MAX_SESSIONS = 5, max_result_rows = 0, max_stream_bytes = NULL)"),
        Command::ResourceGroup(GroupCommand::Create {
            name: "g".into(),
            limits: vec![("max_sessions".into(), Some(5)), ("max_result_rows".into(), None), ("max_stream_bytes".into(), None)],
            mode: CreateMode::Create,
        })
    );
    assert!(matches!(parse("CREATE OR REPLACE RESOURCE GROUP g"), Command::ResourceGroup(GroupCommand::Create { mode: CreateMode::OrReplace, .. })));
    assert!(matches!(parse("CREATE RESOURCE GROUP IF NOT EXISTS g"), Command::ResourceGroup(GroupCommand::Create { mode: CreateMode::IfNotExists, .. })));
    assert_eq!(
        parse("ALTER RESOURCE GROUP g SET (max_sessions = 7)"),
        Command::ResourceGroup(GroupCommand::Alter { name: "g".into(), limits: vec![("max_sessions".into(), Some(7))] })
    );
    assert_eq!(parse("DROP RESOURCE GROUP IF EXISTS g"), Command::ResourceGroup(GroupCommand::Drop { name: "g".into(), if_exists: true }));
    assert_eq!(parse("GRANT RESOURCE GROUP g TO ROLE r"), Command::ResourceGroup(GroupCommand::Grant { group: "g".into(), role: "r".into() }));
    assert_eq!(parse("REVOKE RESOURCE GROUP g FROM ROLE r"), Command::ResourceGroup(GroupCommand::Revoke { group: "g".into(), role: "r".into() }));
    for bad in [
        "CREATE RESOURCE GROUP g (max_sessions = -1)",
        "CREATE RESOURCE GROUP g (max_sessions = 1.5)",
        "CREATE RESOURCE GROUP g (max_sessions = 'x')",
        "CREATE RESOURCE GROUP g (max_rows = 1)",
        "CREATE RESOURCE GROUP g (max_sessions = 1, max_sessions = 2)",
        "CREATE RESOURCE GROUP g (max_sessions 1)",
        "CREATE RESOURCE GROUP g (max_sessions = 1",
        "CREATE RESOURCE g",
        "CREATE RESOURCE GROUP a.b",
        "ALTER RESOURCE GROUP g (max_sessions = 1)",
        "GRANT RESOURCE GROUP g TO r",
        "CREATE OR REPLACE RESOURCE GROUP IF NOT EXISTS g",
        "CREATE RESOURCE GROUP g (max_sessions = 99999999999999999999999)",
    ] {
        assert!(super::super::parse(bad).is_err(), "{bad}");
    }
}

#[test]
fn create_alter_drop_grant_and_revoke() {
    let mut p = setup();
    ok(&mut p, "CREATE RESOURCE GROUP g (max_sessions = 2)");
    assert_eq!(p.resource_groups["g"], ResourceGroup { max_sessions: Some(2), ..Default::default() });
    assert!(matches!(run(&mut p, "CREATE RESOURCE GROUP g"), Err(AclError::Invalid(Invalid::Exists { noun: Noun::ResourceGroup, .. }))));
    assert!(ok(&mut p, "CREATE RESOURCE GROUP IF NOT EXISTS g (max_sessions = 9)").ends_with("(exists)"));
    assert_eq!(p.resource_groups["g"].max_sessions, Some(2));
    ok(&mut p, "ALTER RESOURCE GROUP g SET (max_result_rows = 10)");
    assert_eq!(p.resource_groups["g"], ResourceGroup { max_sessions: Some(2), max_result_rows: Some(10), max_stream_bytes: None });
    ok(&mut p, "ALTER RESOURCE GROUP g SET (max_sessions = 0)");
    assert_eq!(p.resource_groups["g"].max_sessions, None, "0 is no limit");
    ok(&mut p, "GRANT RESOURCE GROUP g TO ROLE analyst");
    assert!(p.roles["analyst"].resource_groups.contains("g"));
    assert!(ok(&mut p, "GRANT RESOURCE GROUP g TO ROLE analyst").ends_with("(already granted)"));
    assert!(matches!(run(&mut p, "GRANT RESOURCE GROUP nope TO ROLE analyst"), Err(AclError::Invalid(Invalid::Missing { noun: Noun::ResourceGroup, .. }))));
    assert!(matches!(run(&mut p, "GRANT RESOURCE GROUP g TO ROLE nobody"), Err(AclError::Invalid(Invalid::Missing { noun: Noun::Role, .. }))));
    assert!(matches!(run(&mut p, "ALTER RESOURCE GROUP nope SET (max_sessions = 1)"), Err(AclError::Invalid(Invalid::Missing { .. }))));
    ok(&mut p, "REVOKE RESOURCE GROUP g FROM ROLE analyst");
    assert!(p.roles["analyst"].resource_groups.is_empty());
    ok(&mut p, "GRANT RESOURCE GROUP g TO ROLE clerk");
    // A dropped group takes its grants with it; a replaced one keeps them.
    ok(&mut p, "CREATE OR REPLACE RESOURCE GROUP g (max_stream_bytes = 5)");
    assert!(p.roles["clerk"].resource_groups.contains("g"));
    assert_eq!(p.resource_groups["g"], ResourceGroup { max_stream_bytes: Some(5), ..Default::default() });
    ok(&mut p, "DROP RESOURCE GROUP g");
    assert!(p.resource_groups.is_empty() && p.roles["clerk"].resource_groups.is_empty());
    assert!(run(&mut p, "DROP RESOURCE GROUP g").is_err());
    assert!(ok(&mut p, "DROP RESOURCE GROUP IF EXISTS g").ends_with("(did not exist)"));
}

#[test]
fn a_principals_groups_resolve_to_the_most_generous_limits() {
    let mut p = setup();
    for sql in [
        "CREATE RESOURCE GROUP small (max_sessions = 1, max_result_rows = 10)",
        "CREATE RESOURCE GROUP big (max_sessions = 5, max_stream_bytes = 100)",
        "CREATE RESOURCE GROUP unused (max_sessions = 50)",
        "GRANT RESOURCE GROUP small TO ROLE analyst",
        "GRANT RESOURCE GROUP big TO ROLE clerk",
    ] {
        ok(&mut p, sql);
    }
    let one = resolve(&p, ["analyst"]);
    assert_eq!(one.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(), ["small"]);
    assert_eq!(most_generous(&one, |g| g.max_sessions), Some(1));
    assert_eq!(most_generous(&one, |g| g.max_stream_bytes), None, "small sets no stream limit");
    let both = resolve(&p, ["analyst", "clerk", "nobody"]);
    assert_eq!(both.len(), 2);
    assert_eq!(most_generous(&both, |g| g.max_sessions), Some(5));
    assert_eq!(most_generous(&both, |g| g.max_result_rows), None, "big sets no row limit: no limit wins");
    assert_eq!(most_generous(&[], |g| g.max_sessions), None);
}
