#!/usr/bin/env python3
"""Issue 14, item 3: for each query of the star-schema benchmark (bench/star.py, case (h)), the
physical plan of the principal's rewrite has the same shape as the plan of the same query over
hand-written views with the same slices and mask: the same join order, the same join types, the
same filters pushed into the scans (and the same join filters), no filter left above a scan that
the hand-written plan pushes down. bench/plans.py says what a shape keeps and where the plan is
read from (DuckDB's profiler; the principal's EXPLAIN text is checked to show the same plan).

Small data (the shape is what matters, not the speed). A query whose plan differs today is listed
in EXPECTED_TO_DIFFER with the reason; the test fails when a query not on the list differs and
when a listed query matches (then it must leave the list: the list is kept honest, and the
pushdown work of issue 14 shrinks it). Every difference is printed.

Run: python test/python/test_plan_shapes.py --extension build/release/acl.duckdb_extension
"""
import os
import sys

import duckdb

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
import plans  # noqa: E402
import star  # noqa: E402

import harness  # noqa: E402
from harness import test  # noqa: E402

ROWS = 50_000

# query -> why its plan differs. Empty since the leak-proof pushdown (spec 002): every benchmark
# query's predicates are leak-proof, so the sliced tables' guard folds to their plain columns and
# DuckDB plans the principal's statement as it plans the hand-written views. (With the
# per-column guard, 2026-12-02, all 16 differed: filters kept above the scan, no join filter on
# the fact table's keys, statistics hidden.)
EXPECTED_TO_DIFFER: dict = {}


def setup(ext):
    con = duckdb.connect(":memory:", config={"allow_unsigned_extensions": "true"})
    con.execute(f"LOAD '{ext}'")
    star.setup_star(con, ROWS, explain=True)
    return con


def compare(con, name, sql):
    acl, native = plans.plan_of(con, star.principal(sql)), plans.plan_of(con, sql)
    explain = "\n".join(r[1] for r in con.execute(star.principal("EXPLAIN " + sql)).fetchall())
    assert plans.explain_agrees(explain, acl), f"{name}: the principal's EXPLAIN shows another plan than the profile:\n{explain}"
    assert star.same_rows(con.execute(star.principal(sql)).fetchall(), con.execute(sql).fetchall()), \
        f"{name}: the principal's answer differs from the views'"
    return plans.differences(acl, native)


def plan_test(name, sql):
    def check(con):
        diffs = compare(con, name, sql)
        listed = EXPECTED_TO_DIFFER.get(name)
        if diffs:
            report = f"{name}: the principal's plan differs from the hand-written one:\n  " + "\n  ".join(diffs)
            assert listed, report + "\n(not in EXPECTED_TO_DIFFER)"
            print(report + f"\n  (expected to differ: {listed})")
        else:
            assert not listed, f"{name}: the plans now have the same shape: remove it from EXPECTED_TO_DIFFER"

    check.__name__ = "plan_shape_" + name.split()[0]
    return test(check)


for _name, _sql in star.QUERIES:
    plan_test(_name, _sql)

# Issue 31, finding 7: a sliced object a statement names more than once stands once in a CTE that
# every reference names (spec 019). NOT MATERIALIZED: DuckDB copies its
# plan into each reference before pushing filters down, so each reference's scan gets the filters
# and join filters a view's would. (Not benchmark queries: case (h) names each object once.)
SHARED_QUERIES = [
    ("s1 the fact table joined with itself",
     "SELECT count(*) AS n, sum(s.amount) AS revenue FROM sales s JOIN sales s2 ON s.customer_key = s2.customer_key "
     "AND s.date_key = s2.date_key WHERE s.amount > 990 AND s2.quantity >= 9"),
    ("s2 a union of two filtered references",
     "SELECT count(*) AS n FROM (SELECT customer_key FROM sales WHERE amount > 995 UNION ALL "
     "SELECT customer_key FROM sales WHERE quantity = 1 AND amount < 5)"),
    ("s3 the fact table filtered by a subquery of itself",
     "SELECT count(*) AS n, sum(s.quantity) AS units FROM sales s WHERE s.amount < 10 AND s.customer_key IN "
     "(SELECT customer_key FROM sales WHERE amount > 998)"),
    ("s4 two sliced objects, each twice",
     "SELECT c.segment, count(*) AS n FROM sales s JOIN customers c ON s.customer_key = c.customer_key "
     "JOIN sales s2 ON s2.sale_id = s.sale_id JOIN customers c2 ON c2.customer_key = s2.customer_key "
     "WHERE c.country = 'JP' AND c2.segment = 'corporate' AND s.amount > 900 GROUP BY c.segment ORDER BY c.segment"),
]

for _name, _sql in SHARED_QUERIES:
    plan_test(_name, _sql)


@test
def a_statement_naming_an_object_twice_holds_its_slice_once(con):
    # what the shapes above compare is the shared form: the principal's EXPLAIN reads the fact table
    # twice, and the rewrite holds one subquery for it (the plan of an inlined copy would be the same)
    text = "\n".join(r[1] for r in con.execute(star.principal("EXPLAIN " + SHARED_QUERIES[0][1])).fetchall())
    assert text.count("fact_sales") == 2, text


@test
def the_list_names_only_benchmark_queries(con):
    names = {n for n, _ in star.QUERIES + SHARED_QUERIES}
    assert set(EXPECTED_TO_DIFFER) <= names, sorted(set(EXPECTED_TO_DIFFER) - names)
    assert len(star.QUERIES) >= 12


@test
def the_comparer_sees_a_filter_kept_above_the_scan(con):
    pushed = "SELECT count(*) FROM phys.main.fact_sales WHERE tenant = 'acme' AND amount > 900"
    guarded = ("SELECT count(*) FROM phys.main.fact_sales WHERE tenant = 'acme' AND "
               "CASE WHEN tenant = 'acme' THEN amount END > 900")
    a, b = plans.plan_of(con, guarded), plans.plan_of(con, pushed)
    assert plans.differences(b, plans.plan_of(con, pushed)) == []
    diffs = plans.differences(a, b)
    assert any("filters pushed into the scan" in d and "amount > 900" in d for d in diffs), diffs
    assert any(d.startswith("filters above the scans") and "CASE" in d for d in diffs), diffs


@test
def the_comparer_sees_another_join_order(con):
    # the same join, once ordered by the optimizer (the big table probes) and once as written
    # with the join-order optimizer off (the big table is built)
    q = ("SELECT count(*) FROM {} JOIN {} ON s.store_key = st.store_key")
    a = plans.plan_of(con, q.format("phys.main.fact_sales s", "phys.main.dim_store st"))
    con.execute("SET disabled_optimizers = 'join_order,build_side_probe_side'")
    b = plans.plan_of(con, q.format("phys.main.dim_store st", "phys.main.fact_sales s"))
    con.execute("RESET disabled_optimizers")
    diffs = plans.differences(a, b)
    assert diffs and diffs[0].startswith("join order:"), diffs


@test
def the_comparer_ignores_projections_only(con):
    # the same plan with a projection of the other's columns on top: the same shape
    a = plans.plan_of(con, "SELECT sum(amount) FROM phys.main.fact_sales WHERE quantity > 5")
    b = plans.plan_of(con, "SELECT * FROM (SELECT sum(amount) AS s FROM phys.main.fact_sales WHERE quantity > 5)")
    assert plans.differences(a, b) == [], plans.differences(a, b)


if __name__ == "__main__":
    harness.main(setup)
