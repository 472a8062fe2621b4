//! `TYPES (enums = sliced | varchar | keep | default)` (spec 021; spec 007): parsed on
//! CREATE VIRTUAL TABLE|VIEW and ALTER … SET TYPES, applied as the whole statement it amounts to,
//! and the refusals of every other spelling.
use super::*;
use crate::error::{AclError, Invalid, Management, Noun};
use crate::policy::{EnumTypes, Policy};

fn cmd(sql: &str) -> Command {
    parse(sql).unwrap_or_else(|e| panic!("{sql}: {e}"))
}

fn err(sql: &str) -> AclError {
    parse(sql).expect_err(sql)
}

fn key(c: &str, n: &str) -> ObjKey {
    ObjKey { catalog: c.into(), schema: "main".into(), name: n.into() }
}

fn declared_enums(cmd: &Command) -> Option<EnumTypes> {
    match cmd {
        Command::CreateTable { declared, .. } | Command::CreateView { declared, .. } => declared.enums,
        other => panic!("{other:?}"),
    }
}

#[test]
fn types_parse_on_create_in_every_spelling() {
    for (sql, want) in [
        ("CREATE VIRTUAL TABLE c.t AS db.main.t TYPES (enums = varchar)", Some(EnumTypes::Varchar)),
        ("CREATE VIRTUAL TABLE c.t AS db.main.t TYPES (ENUMS = KEEP)", Some(EnumTypes::Keep)),
        ("CREATE VIRTUAL TABLE c.t AS db.main.t TYPES (enums = 'Varchar')", Some(EnumTypes::Varchar)),
        ("CREATE VIRTUAL TABLE c.t AS db.main.t TYPES (enums = default)", None),
        ("CREATE VIRTUAL TABLE c.t AS db.main.t TYPES (enums = sliced)", Some(EnumTypes::Sliced)),
        ("CREATE VIRTUAL TABLE c.t AS db.main.t", None),
        // among the other clauses, in any order
        ("CREATE VIRTUAL TABLE c.t AS db.main.t RLS (a > 0) TYPES (enums = keep) COLUMNS (a)", Some(EnumTypes::Keep)),
        ("ADD TABLE db.main.t AS c.t TYPES (enums = keep) COMMENT 'x'", Some(EnumTypes::Keep)),
        ("CREATE VIRTUAL VIEW c.v TYPES (enums = keep) AS SELECT 1 AS a", Some(EnumTypes::Keep)),
        ("CREATE VIRTUAL VIEW c.v (a INTEGER) PRIMARY KEY (a) TYPES (enums = varchar) COMMENT 'x' AS SELECT 1 AS a", Some(EnumTypes::Varchar)),
    ] {
        assert_eq!(declared_enums(&cmd(sql)), want, "{sql}");
    }
}

#[test]
fn alter_set_types_parses_for_tables_and_views() {
    assert_eq!(
        cmd("ALTER VIRTUAL TABLE c.t SET TYPES (enums = varchar)"),
        Command::AlterTypes { key: key("c", "t"), word: ObjectWord::Table, enums: Some(EnumTypes::Varchar) }
    );
    assert_eq!(
        cmd("ALTER VIRTUAL VIEW c.v SET TYPES (enums = keep)"),
        Command::AlterTypes { key: key("c", "v"), word: ObjectWord::View, enums: Some(EnumTypes::Keep) }
    );
    assert_eq!(
        cmd("ALTER VIRTUAL TABLE c.t SET TYPES (enums = DEFAULT)"),
        Command::AlterTypes { key: key("c", "t"), word: ObjectWord::Table, enums: None }
    );
}

#[test]
fn types_refuses_what_it_does_not_take() {
    for sql in [
        "CREATE VIRTUAL TABLE c.t AS db.main.t TYPES (enums = text)",
        "CREATE VIRTUAL TABLE c.t AS db.main.t TYPES (enums = 'keep ')",
        "ALTER VIRTUAL TABLE c.t SET TYPES (enums = hidden)",
    ] {
        if sql.contains("'keep '") {
            // the string's own spaces are not part of the word's spelling: accepted
            assert_eq!(declared_enums(&cmd(sql)), Some(EnumTypes::Keep));
            continue;
        }
        assert!(matches!(err(sql), AclError::Invalid(Invalid::Rule(_))), "{sql}");
    }
    for sql in [
        "CREATE VIRTUAL TABLE c.t AS db.main.t TYPES (dates = varchar)",
        "CREATE VIRTUAL TABLE c.t AS db.main.t TYPES enums = varchar",
        "CREATE VIRTUAL TABLE c.t AS db.main.t TYPES (enums varchar)",
        "CREATE VIRTUAL TABLE c.t AS db.main.t TYPES (enums = varchar, dates = keep)",
        "CREATE VIRTUAL TABLE c.t AS db.main.t TYPES (enums = 1)",
    ] {
        assert!(matches!(err(sql), AclError::Syntax(_)), "{sql}: {:?}", err(sql));
    }
    assert_eq!(
        err("CREATE VIRTUAL TABLE c.t AS db.main.t TYPES (enums = keep) TYPES (enums = keep)"),
        Management::Twice { clause: "TYPES" }.into()
    );
}

fn setup() -> Policy {
    let mut pol = Policy::default();
    for sql in [
        "CREATE VIRTUAL CATALOG c",
        "CREATE VIRTUAL TABLE c.t AS db.main.t RLS (a > 0) COLUMNS (a, b) PRIMARY KEY (a) COMMENT 'kept'",
        "CREATE VIRTUAL VIEW c.v (a INTEGER) AS SELECT 1 AS a",
    ] {
        apply(&mut pol, &cmd(sql)).unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    pol
}

/// An ALTER changes the one field and keeps every other (it is applied as the CREATE OR REPLACE
/// it amounts to); `default` goes back to the instance's setting.
#[test]
fn alter_set_types_changes_that_field_alone() {
    let mut pol = setup();
    let before = pol.relation(&key("c", "t")).unwrap().clone();
    let status = apply(&mut pol, &cmd("ALTER VIRTUAL TABLE c.t SET TYPES (enums = keep)")).unwrap();
    assert_eq!(status, "ALTER VIRTUAL TABLE c.t SET TYPES");
    let after = pol.relation(&key("c", "t")).unwrap().clone();
    assert_eq!(after.declared.enums, Some(EnumTypes::Keep));
    assert_eq!((after.kind, after.slice, after.comment), (before.kind.clone(), before.slice.clone(), before.comment.clone()));
    assert_eq!(after.declared.primary_key, before.declared.primary_key);
    assert_eq!(pol.enums_of(pol.relation(&key("c", "t")).unwrap()), EnumTypes::Keep);
    apply(&mut pol, &cmd("ALTER VIRTUAL TABLE c.t SET TYPES (enums = default)")).unwrap();
    assert_eq!(pol.relation(&key("c", "t")).unwrap().declared.enums, None);
    assert_eq!(pol.enums_of(pol.relation(&key("c", "t")).unwrap()), pol.enum_types, "the instance's setting again");

    apply(&mut pol, &cmd("ALTER VIRTUAL VIEW c.v SET TYPES (enums = keep)")).unwrap();
    let v = pol.relation(&key("c", "v")).unwrap();
    assert_eq!(v.declared.enums, Some(EnumTypes::Keep));
    assert!(v.declared.types.is_some(), "the declared columns stay");
}

#[test]
fn alter_set_types_of_something_else_is_missing() {
    let mut pol = setup();
    let missing = |noun, name: &str| AclError::from(Invalid::Missing { noun, name: name.into() });
    // a view is no table, a table no view, and an object that is not there neither
    let mut fails = |sql: &str| apply(&mut pol, &cmd(sql)).unwrap_err();
    assert_eq!(fails("ALTER VIRTUAL TABLE c.v SET TYPES (enums = keep)"), missing(Noun::Table, "c.v"));
    assert_eq!(fails("ALTER VIRTUAL VIEW c.t SET TYPES (enums = keep)"), missing(Noun::View, "c.t"));
    assert_eq!(fails("ALTER VIRTUAL TABLE c.nope SET TYPES (enums = keep)"), missing(Noun::Table, "c.nope"));
}
