//! Every place policy SQL can stand × the spellings of what it may not call or name, judged as
//! each author's; CTE scoping as DuckDB binds it; a whole policy as a store's.
use super::*;
use crate::admin::{apply, parse};
use crate::policy::categories::{categorise, HostRow};
use crate::policy::policy_sql::Home;
use std::sync::Arc;

fn base() -> Policy {
    let r = HostRow::builtin;
    let mut p = Policy::default();
    p.functions.host = Arc::new(categorise(&[
        r("lower", "scalar"),
        r("sum", "aggregate"),
        r("count", "aggregate"),
        r("range", "table"),
        r("read_csv", "table"),
        r("duckdb_tables", "table"),
        r("current_setting", "scalar"),
        r("current_user", "scalar"),
        r("get_current_timestamp", "scalar"),
        r("query_table", "table"),
        r("acl_exec", "table"),
    ]));
    for sql in [
        "CREATE VIRTUAL CATALOG c",
        "CREATE VIRTUAL TABLE c.t AS phys.main.t",
        "CREATE ROLE mgr",
        "GRANT CATALOG c TO ROLE mgr WITH (manage)",
        "ALTER VIRTUAL CATALOG c SET SOURCES (phys.main)",
        "CREATE ROLE boss",
        "GRANT ADMIN manage TO ROLE boss",
        "CREATE ROLE root",
        "GRANT ADMIN passthrough TO ROLE root",
    ] {
        apply(&mut p, &parse(sql).unwrap()).unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    p
}

/// The batch `sql` parsed, applied to `p` and judged as `who`'s (`None`: anonymous ACL ADMIN).
fn judge(p: &Policy, who: Option<&str>, sql: &str) -> Result<()> {
    let mut after = p.clone();
    apply(&mut after, &parse(sql)?)?;
    let held = who.map(|r| Held::of(p, &[r.to_string()]));
    check_batch(p, &after, held.as_ref())
}

/// The refusal of `sql`: this module's, or (for a function body or a physical name) one that
/// parsing already makes; `None` for the latter.
fn refused(p: &Policy, who: Option<&str>, sql: &str) -> Option<Forbidden> {
    use crate::error::Invalid;
    match judge(p, who, sql) {
        Err(AclError::PolicySql(PolicySql { why, .. })) => Some(why),
        Err(AclError::Invalid(Invalid::NotInVirtualFunction { .. } | Invalid::PhysicalSource { .. } | Invalid::Rule(_))) => None,
        other => panic!("{who:?} {sql}: expected a policy-SQL refusal, got {other:?}"),
    }
}

/// Each place policy SQL stands, with `X` where an expression goes and `Q` where a query does.
const EXPR_PLACES: [&str; 7] = [
    "CREATE OR REPLACE VIRTUAL TABLE c.t2 AS phys.main.t RLS (X)",
    "CREATE OR REPLACE VIRTUAL TABLE c.t2 AS phys.main.t COLUMNS (id, m = X)",
    "ALTER VIRTUAL TABLE c.t SET RLS (X)",
    "ALTER VIRTUAL TABLE c.t SET COLUMNS (id, m = X)",
    "ADD TABLE phys.main.t AS c.t3 RLS 'X'",
    "CREATE OR REPLACE VIRTUAL SCALAR c.f(a VARCHAR) AS X",
    "ADD SCALAR c.f2(a VARCHAR) MACRO 'X'",
];
const QUERY_PLACES: [&str; 5] = [
    "CREATE OR REPLACE VIRTUAL VIEW c.v AS Q",
    "ADD VIEW c.v2 AS Q",
    "ADD VIEW 'Q' AS c.v3",
    "CREATE OR REPLACE VIRTUAL TABLE FUNCTION c.tf(a INTEGER) AS Q",
    "CREATE OR REPLACE VIRTUAL VIEW c.v4 AS SELECT * FROM phys.main.t WHERE id IN (Q)",
];
const GRANT_PLACES: [&str; 4] = [
    "GRANT CATALOG c TO ROLE someone RLS (X)",
    "GRANT TABLE c.t TO ROLE someone COLUMNS (id, m = X)",
    "GRANT OBJECT c.t TO ROLE someone RLS 'X'",
    "ALTER GRANT CATALOG c TO ROLE mgr SET RLS 'X'",
];

fn fill(place: &str, x: &str) -> String {
    // Inside a quoted clause the expression's own quotes are doubled.
    let quoted = place.contains("'X'") || place.contains("'Q'");
    let x = if quoted { x.replace('\'', "''") } else { x.to_string() };
    place.replace('X', &x).replace('Q', &x)
}

#[test]
fn every_place_refuses_every_spelling_of_a_forbidden_call_for_every_author() {
    let mut p = base();
    apply(&mut p, &parse("CREATE ROLE someone").unwrap()).unwrap();
    let calls = [
        "acl_exec('GRANT ADMIN passthrough TO ROLE mgr') IS NOT NULL",
        "\"ACL_EXEC\"('x') IS NOT NULL",
        "system.main.acl_exec('x') IS NOT NULL",
        "main.query_table('aclcat.acl.issuers') IS NOT NULL",
        "current_setting('threads') IS NOT NULL",
        "x.lower() = 'a'",
        "current_user = 'x'",
    ];
    for who in [None, Some("root"), Some("boss"), Some("mgr")] {
        for place in EXPR_PLACES {
            for c in calls {
                let sql = fill(place, c);
                refused(&p, who, &sql);
            }
        }
        for place in GRANT_PLACES.iter().filter(|_| who.is_none()) {
            for c in calls {
                refused(&p, who, &fill(place, c));
            }
        }
        let queries = [
            "SELECT * FROM acl_exec('GRANT ADMIN passthrough TO ROLE mgr')",
            "SELECT * FROM query_table('aclcat.acl.issuers')",
            "SELECT * FROM duckdb_tables()",
            "SELECT * FROM system.main.duckdb_tables()",
            "SELECT * FROM duckdb_tables",
            "SELECT * FROM information_schema.tables",
            "SELECT * FROM system.information_schema.tables",
            "SELECT * FROM temp.main.t",
            "SELECT * FROM phys.main.\"__acl_1_t\"",
            "SELECT * FROM t",
            "SELECT * FROM main.t",
            "SELECT * FROM '/etc/passwd'",
            "SELECT (SELECT count(*) FROM duckdb_tables()) AS n",
            "WITH x AS (SELECT * FROM query_table('t')) SELECT * FROM x",
            "SELECT current_setting('threads') AS s",
        ];
        for place in QUERY_PLACES {
            for q in queries {
                refused(&p, who, &fill(place, q));
            }
        }
    }
}

#[test]
fn ordinary_policy_sql_passes_for_every_author_and_files_only_for_an_operator() {
    let p = base();
    for who in [None, Some("root"), Some("boss"), Some("mgr")] {
        for sql in [
            "CREATE OR REPLACE VIRTUAL TABLE c.t2 AS phys.main.t COLUMNS (id, l = lower(name)) RLS (id > 0 AND acl_claim('tenant') = name)",
            "CREATE OR REPLACE VIRTUAL VIEW c.v AS WITH x AS (SELECT * FROM phys.main.t) SELECT count(*) AS n FROM x, range(3)",
            "CREATE OR REPLACE VIRTUAL VIEW c.v AS SELECT get_current_timestamp() AS now, current_timestamp AS ts",
            "CREATE OR REPLACE VIRTUAL SCALAR c.f(a VARCHAR) AS lower(acl_arg(1))",
        ] {
            judge(&p, who, sql).unwrap_or_else(|e| panic!("{who:?} {sql}: {e}"));
        }
        let reads = judge(&p, who, "CREATE OR REPLACE VIRTUAL VIEW c.files AS SELECT * FROM read_csv('/data/x.csv')");
        match who {
            None | Some("root") => reads.unwrap(),
            _ => assert!(matches!(reads, Err(AclError::PolicySql(PolicySql { why: Forbidden::Reader { .. }, .. }))), "{who:?}"),
        }
    }
}

#[test]
fn a_catalog_manager_maps_only_what_is_listed_and_cannot_list_more() {
    let p = base();
    judge(&p, Some("mgr"), "CREATE VIRTUAL TABLE c.x AS phys.main.x").unwrap();
    judge(&p, Some("mgr"), "CREATE VIRTUAL VIEW c.y AS SELECT * FROM phys.main.x JOIN phys.main.y USING (id)").unwrap();
    for sql in [
        "CREATE VIRTUAL TABLE c.x AS secret.main.x",
        "CREATE VIRTUAL VIEW c.y AS SELECT * FROM phys.main.x, secret.main.pay",
        "CREATE VIRTUAL SCHEMA c.s AS secret.main",
        "ALTER VIRTUAL TABLE c.t SET PHYS secret.main.x",
        "CREATE VIRTUAL TABLE FUNCTION c.tf(a INTEGER) AS SELECT * FROM secret.main.x WHERE id = acl_arg(1)",
    ] {
        assert!(matches!(refused(&p, Some("mgr"), sql), Some(Forbidden::NotListed { .. })), "{sql}");
        // Global manage is not held to the list.
        judge(&p, Some("boss"), sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    // A function of an attached database: only under a listed schema, and never for global
    // manage (its body is nobody's policy SQL); an operator may.
    let alias = "CREATE VIRTUAL SCALAR c.sf(a INTEGER) ALIAS OF secret.main.m";
    assert!(matches!(refused(&p, Some("mgr"), alias), Some(Forbidden::NotBuiltin { .. })));
    assert!(matches!(refused(&p, Some("boss"), alias), Some(Forbidden::NotBuiltin { .. })));
    judge(&p, Some("mgr"), "CREATE VIRTUAL SCALAR c.sf(a INTEGER) ALIAS OF phys.main.m").unwrap();
    judge(&p, Some("root"), alias).unwrap();
    // The list is global manage's to set (the scope check refuses the manager, tested in scope_tests).
    assert_eq!(super::super::scope::needs(&parse("ALTER VIRTUAL CATALOG c SET SOURCES (secret)").unwrap()).0, super::super::scope::Need::Global);
}

#[test]
fn cte_names_are_in_scope_only_where_duckdb_binds_them() {
    let p = base();
    let ok = [
        "WITH duckdb_tables AS (SELECT 1 AS a) SELECT * FROM duckdb_tables",
        "WITH RECURSIVE r AS (SELECT 1 AS n UNION ALL SELECT n + 1 FROM r WHERE n < 3) SELECT * FROM r",
        "WITH a AS (SELECT 1 AS x), b AS (SELECT * FROM a) SELECT * FROM b",
        "WITH a AS (SELECT 1 AS x) SELECT * FROM (SELECT * FROM a) s",
    ];
    for q in ok {
        judge(&p, None, &format!("CREATE OR REPLACE VIRTUAL VIEW c.v AS {q}")).unwrap_or_else(|e| panic!("{q}: {e}"));
    }
    let bad = [
        // A CTE does not see itself unless RECURSIVE: DuckDB binds the catalog's `duckdb_tables`.
        "WITH duckdb_tables AS (SELECT * FROM duckdb_tables) SELECT * FROM duckdb_tables",
        // Nor the CTEs after it.
        "WITH a AS (SELECT * FROM b), b AS (SELECT 1 AS x) SELECT * FROM a",
        // A subquery's CTE is not in scope outside it.
        "SELECT * FROM (WITH duckdb_tables AS (SELECT 1 AS x) SELECT * FROM duckdb_tables) s, duckdb_tables",
        // A RECURSIVE CTE sees itself only in the last branch of a top-level UNION (DuckDB's
        // recursive node): its anchor, or a body of any other shape, names the catalog's table.
        "WITH RECURSIVE duckdb_tables AS (SELECT * FROM duckdb_tables) SELECT * FROM duckdb_tables",
        "WITH RECURSIVE duckdb_tables AS (SELECT * FROM duckdb_tables UNION SELECT * FROM duckdb_tables) SELECT * FROM duckdb_tables",
        "WITH RECURSIVE duckdb_tables AS (SELECT 1 AS a INTERSECT SELECT * FROM duckdb_tables) SELECT * FROM duckdb_tables",
        // … and not inside a subquery of that branch (stricter than DuckDB).
        "WITH RECURSIVE r AS (SELECT 1 AS n UNION ALL SELECT n FROM (SELECT * FROM r) s) SELECT * FROM r",
    ];
    for q in bad {
        assert!(matches!(refused(&p, None, &format!("CREATE OR REPLACE VIRTUAL VIEW c.v AS {q}")), Some(Forbidden::Unqualified { .. })), "{q}");
    }
}

#[test]
fn table_name_is_refused_wherever_it_stands() {
    // sqlparser keeps `TABLE name` outside every FROM item; DuckDB reads SELECT * FROM name.
    let p = base();
    for q in [
        "TABLE duckdb_tables",
        "SELECT * FROM (TABLE duckdb_tables) s",
        "SELECT 1 AS a UNION ALL TABLE temp.t",
        "WITH x AS (TABLE duckdb_tables) SELECT 1 AS a",
        "SELECT * FROM phys.main.t WHERE EXISTS (TABLE duckdb_tables)",
    ] {
        for who in [None, Some("root"), Some("boss"), Some("mgr")] {
            let got = refused(&p, who, &format!("CREATE OR REPLACE VIRTUAL VIEW c.v AS {q}"));
            assert!(matches!(got, Some(Forbidden::Construct { .. })), "{who:?} {q}: {got:?}");
        }
    }
}

#[test]
fn a_three_part_call_is_judged_as_the_built_in_a_method_call_reaches_too() {
    // `phys.main.current_setting()` is current_setting(phys.main) when phys.main holds none.
    let p = base();
    for who in [None, Some("root"), Some("mgr")] {
        let sql = "CREATE OR REPLACE VIRTUAL VIEW c.v AS SELECT phys.main.current_setting() FROM (SELECT 'x' AS main) AS phys";
        assert!(matches!(refused(&p, who, sql), Some(Forbidden::Category { .. })), "{who:?}");
        let sql = "CREATE OR REPLACE VIRTUAL VIEW c.v AS SELECT phys.main.query_table() FROM (SELECT 'x' AS main) AS phys";
        assert!(matches!(refused(&p, who, sql), Some(Forbidden::Never { .. })), "{who:?}");
    }
    // A catalog manager's reader through a three-part name: only an operator's.
    let sql = "CREATE OR REPLACE VIRTUAL VIEW c.v AS SELECT * FROM phys.main.read_csv('f')";
    assert!(matches!(refused(&p, Some("mgr"), sql), Some(Forbidden::Reader { .. })));
    judge(&p, Some("root"), sql).unwrap();
    // A function that is no built-in stays the listed schema's to call.
    judge(&p, Some("mgr"), "CREATE OR REPLACE VIRTUAL VIEW c.v AS SELECT phys.main.my_macro(1) AS m").unwrap();
}

#[test]
fn a_whole_policy_is_judged_as_an_operators_and_every_finding_is_listed() {
    let mut p = base();
    assert!(findings(&p).is_empty());
    check_policy(&p).unwrap();
    // What a direct edit of a store could hold: put in place without management's checks.
    let bad_view = crate::policy::Relation {
        kind: RelationKind::View("SELECT * FROM acl_exec('GRANT ADMIN passthrough TO ROLE mgr')".into()),
        comment: None,
        slice: Slice::default(),
        declared: Default::default(),
    };
    let cat = p.catalogs.get_mut("c").unwrap();
    cat.objects.insert(("main".into(), "esc".into()), bad_view);
    cat.objects.get_mut(&("main".into(), "t".into())).unwrap().slice.rls = Some("query_table('x') IS NULL".into());
    let found = findings(&p);
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(found.iter().any(|f| f.contains("virtual view c.esc") && f.contains("acl_exec")), "{found:?}");
    assert!(found.iter().any(|f| f.contains("RLS of virtual table c.t") && f.contains("query_table")), "{found:?}");
    assert!(check_policy(&p).is_err());
    // acl_check_catalog lists them under their catalog.
    assert!(pieces_refused(&p).iter().all(|(c, _)| c == "c"));
    // The store's schema is never a source, whoever wrote the object.
    let mut q = base();
    q.home = Some(Home { db: "aclcat".into(), schema: "acl".into() });
    apply(&mut q, &parse("CREATE VIRTUAL TABLE c.keys AS aclcat.acl.issuers").unwrap()).unwrap();
    assert!(findings(&q).iter().any(|f| f.contains("policy store")), "{:?}", findings(&q));
}
