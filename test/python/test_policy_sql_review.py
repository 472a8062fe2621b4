#!/usr/bin/env python3
"""An outside review of "policy SQL is untrusted too" (issue 31, findings 1-3; spec 007 "Policy SQL
is input", spec 011): the second check at use, for policy SQL that got past the first two (the
`unchecked_policy_sql` fault of the `test-faults` build stands for a hand-edited store or a policy
written before the rule). Each case runs in a subprocess, as test_defence.py does.

Tests marked HOLE assert the safe behaviour and fail today: the second check keeps one flat list of
the CTE names a region defines, so a one-part name that DuckDB binds to the catalog passes when a
CTE of that name is defined anywhere in the same piece of policy SQL (out of scope, or its own
recursive anchor, or under `TABLE name`).

Run: python test/python/test_policy_sql_review.py --extension build/release/acl.duckdb_extension \
         --faults-extension build/faults/acl.duckdb_extension
Ends with `N passed, N failed`.
"""
import json
import os
import subprocess
import sys

import harness
from harness import test

# The gateway's own table in its default database (never a source of catalog c) is the decoy.
SCRIPT = r"""
import duckdb, json, sys
con = duckdb.connect(":memory:", config={"allow_unsigned_extensions": "true"})
con.execute(f"LOAD '{sys.argv[1]}'")
con.execute("ATTACH ':memory:' AS phys")
con.execute("CREATE TABLE phys.main.orders (id INTEGER)")
con.execute("INSERT INTO phys.main.orders VALUES (1), (2)")
con.execute("CREATE TABLE memory.main.gateway_secret (k VARCHAR)")
con.execute("INSERT INTO memory.main.gateway_secret VALUES ('topsecret')")
con.execute(
    "ACL ADMIN CREATE VIRTUAL CATALOG c; ALTER VIRTUAL CATALOG c SET SOURCES (phys.main);"
    " CREATE VIRTUAL TABLE c.orders AS phys.main.orders;"
    " CREATE ROLE reader; GRANT CATALOG c TO ROLE reader WITH (select) MAIN"
).fetchall()
try:
    con.execute(sys.argv[3]).fetchall()
except duckdb.Error as e:
    print(json.dumps({"setup_error": str(e)}))
    sys.exit(0)
try:
    rows = con.execute(sys.argv[2]).fetchall()
    print(json.dumps({"rows": [[str(v) for v in r] for r in rows]}))
except duckdb.Error as e:
    print(json.dumps({"error": str(e)}))
"""

CAUGHT = "acl: internal error: the second check found"
READ = 'ACL ROLE "reader" SELECT * FROM v'


def run(ext, fault, sql, setup):
    env = dict(os.environ)
    env.pop("ACL_TEST_FAULT", None)
    if fault:
        env["ACL_TEST_FAULT"] = fault
    out = subprocess.run([sys.executable, "-c", SCRIPT, ext, sql, setup], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def faults_ext():
    assert harness.FAULTS_EXT and os.path.exists(harness.FAULTS_EXT), "build it with `make faults`"
    return harness.FAULTS_EXT


def view(query):
    return f"ACL ADMIN CREATE VIRTUAL VIEW c.v AS {query}"


def assert_caught(result, what):
    assert "error" in result, result
    assert CAUGHT in result["error"] and what in result["error"], result
    for leak in ("topsecret", "gateway", "memory", "phys"):
        assert leak not in result["error"], result


# A CTE defined in a subquery is not in scope outside it; DuckDB binds the outer name to the
# gateway's own table.
OUT_OF_SCOPE = view(
    "SELECT b.k FROM (WITH gateway_secret AS (SELECT 'x' AS k) SELECT k FROM gateway_secret) AS a, gateway_secret AS b"
)
# `TABLE name` next to a CTE of that name elsewhere in the view.
TABLE_FORM = view(
    "SELECT t.k FROM (TABLE gateway_secret) AS t, (WITH gateway_secret AS (SELECT 'x' AS k) SELECT k FROM gateway_secret) AS u"
)
# A recursive CTE's anchor (and a body that is no UNION) names the catalog's table.
ANCHOR = view("WITH RECURSIVE gateway_secret AS (SELECT k FROM gateway_secret) SELECT k FROM gateway_secret")
# `x.main.f()` with x.main a column: DuckDB calls f(x.main), f through the search path.
METHOD = view("SELECT x.main.in_search_path('main') AS p FROM (SELECT 'memory' AS main) AS x")


@test
def without_the_second_check_each_reads_the_gateways_table(_):
    # proves the cases are real: with both checks off the reader gets the decoy's row
    for setup in (OUT_OF_SCOPE, TABLE_FORM, ANCHOR):
        got = run(faults_ext(), "unchecked_policy_sql,no_defence", READ, setup)
        assert got == {"rows": [["topsecret"]]}, (setup, got)
    got = run(faults_ext(), "unchecked_policy_sql,no_defence", READ, METHOD)
    assert got == {"rows": [["True"]]}, got


@test
def a_release_build_refuses_each_when_written(_):
    expected = {
        OUT_OF_SCOPE: "acl: the query of virtual view c.v may not name gateway_secret: name a physical table as database.schema.table",
        TABLE_FORM: "acl: the query of virtual view c.v may not use TABLE <name> (write SELECT * FROM database.schema.table)",
        ANCHOR: "acl: the query of virtual view c.v may not name gateway_secret: name a physical table as database.schema.table",
        METHOD: "acl: the query of virtual view c.v may not call x.main.in_search_path: policy SQL may not call meta (listing) functions",
    }
    for setup, message in expected.items():
        got = run(harness.EXT, "unchecked_policy_sql", READ, setup)
        assert message in got.get("setup_error", ""), (setup, got)


@test
def a_method_call_in_policy_sql_is_caught_when_used(_):
    # FIXED by the review: the second check took `x.main.in_search_path` for a macro of an
    # attached database (any three-part call outside `system` passed)
    assert_caught(run(faults_ext(), "unchecked_policy_sql", READ, METHOD), "a function")


@test
def hole_a_cte_out_of_its_scope_is_caught_when_used(_):
    # HOLE: the region's CTE names are one flat list; DuckDB's `gateway_secret` outside the
    # subquery is the gateway's table, not the CTE
    assert_caught(run(faults_ext(), "unchecked_policy_sql", READ, OUT_OF_SCOPE), "a table")


@test
def hole_table_name_beside_a_cte_of_that_name_is_caught_when_used(_):
    # HOLE: as above, through `TABLE name`, which sqlparser's reading of the region never lists
    assert_caught(run(faults_ext(), "unchecked_policy_sql", READ, TABLE_FORM), "a table")


@test
def hole_a_recursive_ctes_anchor_is_caught_when_used(_):
    # HOLE: the anchor's `gateway_secret` is the catalog's table (DuckDB makes a recursive CTE
    # only of a UNION, and sees itself only in its last branch)
    assert_caught(run(faults_ext(), "unchecked_policy_sql", READ, ANCHOR), "a table")


if __name__ == "__main__":
    harness.main(lambda ext: None)
