//! One slice per statement (spec 002): a sliced object the statement names more than once is
//! inserted once, as `WITH "__acl_s<j>" AS NOT MATERIALIZED (<slice>)`, and every reference names
//! that CTE; named once, it stays where it is named.
use super::tests::{policy, table};
use super::{statement, statement_allowed, FnGate};
use crate::authz::{Principal, View};
use crate::policy::{Caps, Column, ObjKey, ObjectGrant, Policy, Slice};

/// `people` with its own mask and row policy, `rows` a RENAME table the analyst's grant slices by
/// rows (and may write), `orders` plain.
fn sliced() -> Policy {
    let mut p = policy();
    table(&mut p, "sales", "main", "people", ("phys", "main", "people"));
    table(&mut p, "sales", "main", "rows", ("phys", "main", "rows"));
    p.catalogs.get_mut("sales").unwrap().objects.get_mut(&("main".into(), "people".into())).unwrap().slice = Slice {
        rls: Some("tenant = 'a'".into()),
        columns: Some(vec![Column { name: "id".into(), expr: None }, Column { name: "ssn".into(), expr: Some("NULL".into()) }]),
    };
    let role = p.roles.get_mut("analyst").unwrap();
    role.catalog_grants.get_mut("sales").unwrap().caps = Caps::DATA.union(Caps::EXPLAIN).union(Caps::TEMP);
    role.object_grants.insert(
        ObjKey { catalog: "sales".into(), schema: "main".into(), name: "rows".into() },
        ObjectGrant { caps: Some(Caps::DATA), slice: Slice { rls: Some("t = 1".into()), columns: None } },
    );
    p
}

fn run(sql: &str) -> String {
    let p = sliced();
    let principal = Principal::role("analyst");
    let view = View::new(&p, &principal).unwrap();
    statement(&view, &FnGate::new(&p, &principal), sql).unwrap_or_else(|e| panic!("{sql}: {e}"))
}

// Every slice is guarded; DuckDB's bound plan decides which guard it drops (spec 002).
const PEOPLE: &str = r#"SELECT "id", CASE WHEN "__acl_ok" THEN NULL END AS "ssn" FROM (SELECT CASE WHEN tenant = 'a' THEN COLUMNS(*) END, (tenant = 'a') AS "__acl_ok" FROM "phys"."main"."people" AS "__acl_l0" WHERE tenant = 'a') AS "__acl_p0""#;
const CTE: &str = r#"WITH "__acl_s0" AS NOT MATERIALIZED (SELECT "id", CASE WHEN "__acl_ok" THEN NULL END AS "ssn" FROM (SELECT CASE WHEN tenant = 'a' THEN COLUMNS(*) END, (tenant = 'a') AS "__acl_ok" FROM "phys"."main"."people" AS "__acl_l0" WHERE tenant = 'a') AS "__acl_p0")"#;

/// `text` with the body of its first CTE cut out (a write's slices keep the full guard).
fn cut(text: &str) -> String {
    let open = text.find("NOT MATERIALIZED (").expect("a CTE") + "NOT MATERIALIZED (".len();
    let close = text.find(r#"AS "__acl_p0") "#).map(|i| i + r#"AS "__acl_p0")"#.len()).or_else(|| text.find(r#"WHERE tenant = 'a') "#).map(|i| i + r#"WHERE tenant = 'a')"#.len())).expect("its end");
    format!("{}…{}", &text[..open], &text[close - 1..])
}

#[test]
fn named_once_the_slice_stays_where_it_is_named() {
    assert_eq!(run("SELECT id FROM people"), format!(r#"SELECT id FROM ({PEOPLE}) AS "people""#));
    // two objects, once each
    let two = run("SELECT 1 FROM people, rows");
    assert!(!two.contains("WITH"), "{two}");
    assert_eq!(two.matches("__acl_p").count(), 2, "{two}");
}

#[test]
fn named_twice_the_slice_stands_once_in_a_cte() {
    assert_eq!(
        run("SELECT a.id FROM people a JOIN people b ON a.id = b.id"),
        format!(r#"{CTE} SELECT a.id FROM "__acl_s0" a JOIN "__acl_s0" b ON a.id = b.id"#)
    );
    // subqueries, set operations, the principal's own CTEs (which come after, and may read it)
    assert_eq!(
        run("WITH x AS (SELECT id FROM people) SELECT id FROM x UNION ALL SELECT id FROM people WHERE id IN (SELECT id FROM sales.people p)"),
        format!(
            r#"{CTE}, "__acl_cte1_x" AS (SELECT id FROM "__acl_s0" AS "people") SELECT id FROM "__acl_cte1_x" AS "x" UNION ALL SELECT id FROM "__acl_s0" AS "people" WHERE id IN (SELECT id FROM "__acl_s0" p)"#
        )
    );
    // two objects: one CTE each, in the order first named
    let text = run("SELECT (SELECT id FROM rows LIMIT 1) FROM rows, people, people AS p2");
    assert!(text.starts_with(r#"WITH "__acl_s0" AS NOT MATERIALIZED (SELECT CASE WHEN t = 1 THEN COLUMNS(*) END FROM "phys"."main"."rows" AS "__acl_p0" WHERE t = 1), "__acl_s1" AS NOT MATERIALIZED (SELECT "id""#), "{text}");
    assert!(text.ends_with(r#"FROM "__acl_s0" AS "rows", "__acl_s1" AS "people", "__acl_s1" AS p2"#), "{text}");
    assert!(text.contains(r#"(SELECT id FROM "__acl_s0" AS "rows" LIMIT 1)"#), "{text}");
    // nested WITH, recursive WITH, LATERAL, scalar subqueries
    let text = run(
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT id FROM r, people WHERE id > n) \
         SELECT (SELECT id FROM (WITH q AS (SELECT * FROM people) SELECT * FROM q) AS z LIMIT 1), n FROM r, LATERAL (SELECT id FROM people WHERE id = n) AS l",
    );
    assert!(text.starts_with(r#"WITH RECURSIVE "__acl_s0" AS NOT MATERIALIZED (SELECT "id""#), "{text}");
    assert!(text.contains(r#"AS "__acl_p0"), "__acl_cte1_r" (n) AS (SELECT 1 UNION ALL SELECT id FROM "__acl_cte1_r" AS "r", "__acl_s0" AS "people""#), "{text}");
    assert_eq!(text.matches(r#""phys"."main"."people""#).count(), 1, "{text}");
}

#[test]
fn a_write_stands_under_the_cte() {
    // the target is checked, not sliced: only what is read is shared (with the full guard)
    let head = r#"WITH "__acl_s0" AS NOT MATERIALIZED (…)"#;
    for (sql, tail) in [
        ("INSERT INTO orders SELECT a.id FROM people a, people b", r#"INSERT INTO "phys"."main"."orders" SELECT a.id FROM "__acl_s0" a, "__acl_s0" b"#),
        (
            "UPDATE orders SET id = p.id FROM people p WHERE orders.id IN (SELECT id FROM people)",
            r#"UPDATE "phys"."main"."orders" AS "orders" SET id = p.id FROM "__acl_s0" p WHERE orders.id IN (SELECT id FROM "__acl_s0" AS "people")"#,
        ),
        (
            "DELETE FROM orders USING people p WHERE orders.id = p.id AND EXISTS (SELECT 1 FROM people q WHERE q.id = 1)",
            r#"DELETE FROM "phys"."main"."orders" AS "orders" USING "__acl_s0" p WHERE orders.id = p.id AND EXISTS (SELECT 1 FROM "__acl_s0" q WHERE q.id = 1)"#,
        ),
        (
            "MERGE INTO orders USING (SELECT id FROM people UNION SELECT id FROM people) AS s ON orders.id = s.id WHEN MATCHED THEN DELETE",
            r#"MERGE INTO "phys"."main"."orders" AS "orders" USING (SELECT id FROM "__acl_s0" AS "people" UNION SELECT id FROM "__acl_s0" AS "people") AS s ON orders.id = s.id WHEN MATCHED THEN DELETE"#,
        ),
    ] {
        assert_eq!(cut(&run(sql)), format!("{head} {tail}"), "{sql}");
    }
    assert_eq!(run("EXPLAIN SELECT 1 FROM people, people AS b"), format!(r#"EXPLAIN {CTE} SELECT 1 FROM "__acl_s0" AS "people", "__acl_s0" AS b"#));
    // DESCRIBE keeps its copies: DuckDB reads it as a SELECT over the query, whose WITH would not
    // be on the statement's top (spec 011)
    let text = run("DESCRIBE SELECT 1 FROM people, people AS b");
    assert!(!text.contains("WITH") && text.matches(r#""phys"."main"."people""#).count() == 2, "{text}");
    // a write to a target its grant slices by rows: its check stays on the target; the rows it
    // reads of itself are shared
    let text = run("INSERT INTO rows (id, t) SELECT a.id, a.t FROM rows a JOIN rows b USING (id)");
    assert!(text.starts_with(r#"WITH "__acl_s0" AS NOT MATERIALIZED (SELECT CASE WHEN t = 1 THEN COLUMNS(*) END FROM "phys"."main"."rows" AS "__acl_p0" WHERE t = 1) INSERT INTO "phys"."main"."rows""#), "{text}");
    assert!(text.contains(r#"FROM "__acl_s0" a JOIN "__acl_s0" b USING(id)"#), "{text}");
    let text = run("CREATE TEMP TABLE copy AS SELECT a.id FROM people a, people b");
    assert!(text.ends_with(r#" SELECT a.id FROM "__acl_s0" a, "__acl_s0" b"#), "{text}");
    assert_eq!(text.matches(r#"AS WITH "__acl_s0" AS NOT MATERIALIZED ("#).count(), 1, "{text}");
}

#[test]
fn what_the_second_check_allows_holds_the_slice_once() {
    let p = sliced();
    let principal = Principal::role("analyst");
    let view = View::new(&p, &principal).unwrap();
    let fns = FnGate::new(&p, &principal);
    let refs = (0..480).map(|i| format!("SELECT ssn FROM people AS p{i}")).collect::<Vec<_>>().join(" UNION ALL ");
    // 480 set operations deep: on the rewrite's own stack, as a principal's statement runs
    let (text, allowed) = crate::stack::run(|| statement_allowed(&view, &fns, &refs)).unwrap().unwrap();
    assert_eq!(allowed.regions.len(), 1);
    assert_eq!(allowed.outside.ctes, ["__acl_s0"]);
    assert!(allowed.outside.tables.is_empty(), "the physical table only in its region");
    assert_eq!(text.matches(r#""phys"."main"."people""#).count(), 1);
    assert!(text.len() < refs.len() + CTE.len() + 480 * 12, "{} bytes", text.len());
    // once: no CTE to allow
    let (_, allowed) = statement_allowed(&view, &fns, "SELECT ssn FROM people").unwrap();
    assert!(allowed.outside.ctes.is_empty());
}
