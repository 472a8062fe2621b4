//! Which statements are leak-proof (spec 002, "Leak-proof pushdown"), and which comparisons
//! they make.
use super::{analyse, LeakProof};
use crate::authz::slices::LitKind::{self, *};
use sqlparser::dialect::DuckDbDialect;
use sqlparser::parser::Parser;

fn of(sql: &str) -> Option<LeakProof> {
    let stmt = Parser::parse_sql(&DuckDbDialect {}, sql).expect("parses").pop().expect("one");
    analyse(&stmt)
}

fn needs(sql: &str) -> Vec<(String, LitKind)> {
    of(sql).unwrap_or_else(|| panic!("not leak-proof: {sql}")).needs
}

fn n(name: &str, k: LitKind) -> (String, LitKind) {
    (name.to_string(), k)
}

#[test]
fn comparisons_with_literals_are_leak_proof_and_recorded_by_kind() {
    assert_eq!(needs("SELECT * FROM t WHERE id = 42"), [n("id", Number)]);
    assert_eq!(needs("SELECT * FROM t WHERE t.Name <> 'x' AND amount < -1.5"), [n("amount", Number), n("name", Text)]);
    assert_eq!(needs("SELECT * FROM t WHERE flag = true OR d >= DATE '2024-01-01'"), [n("d", Temporal), n("flag", Bool)]);
    assert_eq!(needs("SELECT * FROM t WHERE x IN (1, 'a') AND y BETWEEN 1 AND 2"), [n("x", Number), n("x", Text), n("y", Number)]);
    assert_eq!(needs("SELECT * FROM t WHERE s LIKE 'a%' AND NOT s ILIKE 'b%'"), [n("s", Text)]);
    assert_eq!(needs("SELECT * FROM t WHERE x IS NULL OR x = NULL OR x IS DISTINCT FROM 3"), [n("x", Number)]);
    // literal kinds, not values: one shape, one decision
    assert_eq!(of("SELECT * FROM t WHERE id = 1"), of("SELECT * FROM t WHERE id = 999999999999"));
}

#[test]
fn anything_that_can_raise_is_not_leak_proof() {
    for sql in [
        "SELECT * FROM t WHERE CAST(x AS INTEGER) = 1",
        "SELECT * FROM t WHERE x::INTEGER = 1",
        "SELECT * FROM t WHERE 1 // x = 1",
        "SELECT * FROM t WHERE error('x')",
        "SELECT * FROM t WHERE CASE WHEN x = 1 THEN true END",
        "SELECT * FROM t WHERE lower(x) = 'a'",
        "SELECT * FROM t WHERE x LIKE 'a%' ESCAPE '\\'",
        "SELECT * FROM t WHERE x LIKE y",
        "SELECT * FROM t WHERE x = ?",
        "SELECT * FROM t WHERE x = $1",
        "SELECT * FROM t WHERE flag",
        "SELECT * FROM t WHERE x = y",
        "SELECT * FROM t WHERE t.x = t.y",
        "SELECT * FROM t WHERE x = (SELECT 1)",
        "SELECT * FROM t WHERE x IN (SELECT 1 // y FROM u)",
        "SELECT * FROM t WHERE EXISTS (SELECT 1 FROM u WHERE CAST(u.a AS INT) = 1)",
        "SELECT * FROM t JOIN u ON t.a = u.a AND CAST(t.b AS INT) = 1",
        "SELECT k, count(*) FROM t GROUP BY k HAVING CAST(k AS INT) > 0",
        "SELECT * FROM t QUALIFY row_number() OVER () = 1",
        "SELECT x FROM t WHERE x = X'01'",
        "SELECT x FROM t WHERE x = 12345678901234567890",
        "SELECT x FROM t WHERE x = 1.1234567",
        "SELECT x FROM t WHERE x = 1e5",
        // an alias the filter names is the expression it stands for
        "SELECT CAST(x AS INT) AS k FROM t WHERE k = 1",
        "SELECT 1 // x AS k FROM t GROUP BY k HAVING k > 0",
        // what an outer filter may be pushed into
        "SELECT * FROM (SELECT CAST(x AS INT) AS k FROM t) WHERE k = 1",
        "WITH c AS (SELECT 1 // x AS k FROM t) SELECT * FROM c",
        "SELECT * FROM (SELECT x FROM t UNION ALL SELECT 1 // y FROM u)",
        "SELECT * FROM (SELECT DISTINCT ON (lower(x)) x FROM t)",
        "SELECT * FROM (SELECT x FROM t GROUP BY lower(x), x)",
        "SELECT * FROM (SELECT row_number() OVER () AS r FROM t)",
        "SELECT * FROM (SELECT * REPLACE (1 // x AS x) FROM t)",
        // a struct's field is not a column: `a.b` with no relation named `a`, or three parts
        "SELECT * FROM t WHERE rec.f = 42",
        "SELECT * FROM t x WHERE x.rec.f = 42",
        "SELECT * FROM t WHERE main.t.c = 1",
        // renaming by position is not followed
        "SELECT * FROM t AS x(a, b) WHERE x.a = 1",
        "SELECT * FROM (SELECT k FROM t) AS x(a) WHERE x.a = 1",
        "WITH c(a) AS (SELECT k FROM t) SELECT * FROM c WHERE a = 1",
        // a macro named like an aggregate is not one
        "SELECT * FROM (SELECT temp.main.sum(x) AS s FROM t)",
        // not a query, or a FROM item that is not a relation
        "DELETE FROM t WHERE id = 1",
        "SELECT * FROM range(10) r WHERE r.range = 1",
        "SELECT * FROM t, UNNEST([1]) u(x)",
    ] {
        assert_eq!(of(sql), None, "{sql}");
    }
}

#[test]
fn the_outer_select_list_and_aggregates_are_free() {
    assert_eq!(needs("SELECT CAST(x AS INT), 1 // y, error('no') FROM t WHERE id = 1 ORDER BY lower(x) LIMIT 3"), [n("id", Number)]);
    assert_eq!(needs("SELECT k, sum(1 // v) AS s FROM t GROUP BY k HAVING count(*) > 100 AND sum(v) > 1"), []);
    assert_eq!(needs("SELECT * FROM (SELECT k, sum(CAST(v AS INT)) AS s FROM t GROUP BY k) WHERE k = 'a'"), [n("k", Text)]);
    assert_eq!(needs("SELECT lower(x) AS k FROM t WHERE x = 'a'"), [n("x", Text)]);
}

#[test]
fn a_filter_on_an_alias_is_a_filter_on_the_column_it_renames() {
    assert_eq!(
        needs("WITH x AS (SELECT k AS kk, ident FROM named) SELECT count(*) FROM x JOIN lit b ON x.ident = b.id WHERE x.kk = 42"),
        [n("k", Number), n("kk", Number)]
    );
    assert_eq!(needs("SELECT k AS kk FROM t WHERE kk = 'a'"), [n("k", Text), n("kk", Text)]);
    assert_eq!(
        needs("SELECT * FROM (SELECT b AS c FROM (SELECT a AS b FROM t)) WHERE c = 1"),
        [n("a", Number), n("b", Number), n("c", Number)]
    );
    assert!(of("DESCRIBE SELECT * FROM t").is_none());
    // an alias is no column of the one relation's
    assert!(!of("SELECT id AS k FROM t WHERE k = 4").unwrap().single);
}

#[test]
fn joins_subqueries_and_relations() {
    let l = of("SELECT d.year, sum(s.amount) FROM sales s JOIN dates d ON s.date_key = d.date_key WHERE d.year = 2025 GROUP BY d.year").unwrap();
    assert_eq!(l.needs, [n("year", Number)]);
    assert!(!l.single);
    let l = of("SELECT count(*) FROM sales s WHERE s.product_key IN (SELECT product_key FROM products WHERE price > 480)").unwrap();
    assert_eq!(l.needs, [n("price", Number)]);
    assert!(!l.single);
    assert!(of("SELECT * FROM t WHERE id = 1").unwrap().single);
    assert_eq!(
        needs("SELECT c.country FROM customers c WHERE NOT EXISTS (SELECT 1 FROM sales s WHERE s.customer_key = c.customer_key AND s.q >= 9)"),
        [n("q", Number)]
    );
    assert!(of("EXPLAIN SELECT * FROM t WHERE id = 1").is_some());
    assert!(of("SELECT * FROM s.t WHERE t.id = 1").is_some());
    assert!(of("WITH c AS (SELECT 1 AS x) SELECT * FROM c WHERE c.x = 1").is_some());
    assert!(of("SELECT * FROM (SELECT 1 AS x) AS d WHERE d.x = 1").is_some());
    assert!(of("SELECT * FROM t LEFT JOIN u USING (id) WHERE u.v = 1").is_some());
}
