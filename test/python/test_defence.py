#!/usr/bin/env python3
"""The second line of defence (specs/011-defence-in-depth.md): deliberate rewriter bugs, switched
on in the `test-faults` build by ACL_TEST_FAULT, must be caught by the check on DuckDB's own parse.

Each case runs in a subprocess (the fault is read when a database loads the extension, and two
builds of it should not share a process).

Run: python test/python/test_defence.py --extension build/release/acl.duckdb_extension \
         --faults-extension build/faults/acl.duckdb_extension
Ends with `N passed, N failed`.
"""
import json
import os
import subprocess
import sys

import harness
from harness import test

# A decoy table and a macro in DuckDB's default schema: what a bare name reaches if a rule
# leaves it in the rewritten text.
SCRIPT = r"""
import duckdb, json, sys
con = duckdb.connect(":memory:", config={"allow_unsigned_extensions": "true"})
con.execute(f"LOAD '{sys.argv[1]}'")
con.execute("ATTACH ':memory:' AS phys")
con.execute("CREATE TABLE phys.main.orders_tbl (id INTEGER)")
con.execute("INSERT INTO phys.main.orders_tbl VALUES (1), (2), (3)")
con.execute("CREATE TABLE memory.main.orders (id INTEGER)")
con.execute("INSERT INTO memory.main.orders VALUES (666)")
con.execute("CREATE MACRO memory.main.lower(x) AS 'pwned'")
con.execute(
    "ACL ADMIN CREATE VIRTUAL CATALOG sales; CREATE VIRTUAL TABLE sales.orders AS phys.main.orders_tbl;"
    " CREATE ROLE analyst; GRANT CATALOG sales TO ROLE analyst WITH (select) MAIN"
).fetchall()
results = []
for _ in range(2):  # the second time from the batch cache (and a kept parse, if one was kept)
    try:
        rows = con.execute(sys.argv[2]).fetchall()
        results.append({"rows": [list(r) for r in rows]})
    except duckdb.Error as e:
        results.append({"error": str(e)})
print(json.dumps(results))
"""

TABLES = 'ACL ROLE "analyst" SELECT id FROM orders ORDER BY id'
FUNCTIONS = "ACL ROLE \"analyst\" SELECT lower('A')"
CAUGHT = "acl: internal error: the second check found"


def run(ext, fault, sql):
    env = dict(os.environ)
    env.pop("ACL_TEST_FAULT", None)
    if fault:
        env["ACL_TEST_FAULT"] = fault
    out = subprocess.run([sys.executable, "-c", SCRIPT, ext, sql], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    first, again = json.loads(out.stdout.strip().splitlines()[-1])
    # A repeated statement is decided the same way: a failed check keeps no parse to reuse.
    assert again == first, (first, again)
    return first


def faults_ext():
    assert harness.FAULTS_EXT and os.path.exists(harness.FAULTS_EXT), "build it with `make faults`"
    return harness.FAULTS_EXT


def assert_caught(result, what):
    assert "error" in result, result
    assert CAUGHT in result["error"] and what in result["error"], result
    # names nothing physical, nor the decoy's content
    for leak in ("orders", "phys", "memory", "666", "lower", "pwned"):
        assert leak not in result["error"], result


@test
def a_table_the_rules_left_in_place_is_caught(_):
    assert_caught(run(faults_ext(), "skip_relations", TABLES), "a table")


@test
def without_the_check_that_fault_leaks_the_decoy(_):
    # proves the fault is real: the statement reads memory.main.orders
    assert run(faults_ext(), "skip_relations,no_defence", TABLES) == {"rows": [[666]]}


@test
def an_unqualified_function_is_caught(_):
    assert_caught(run(faults_ext(), "unqualified_functions", FUNCTIONS), "a function")


@test
def without_the_check_the_macro_captures_the_call(_):
    assert run(faults_ext(), "unqualified_functions,no_defence", FUNCTIONS) == {"rows": [["pwned"]]}


@test
def the_faults_build_without_a_fault_behaves(_):
    assert run(faults_ext(), None, TABLES) == {"rows": [[1], [2], [3]]}
    assert run(faults_ext(), None, FUNCTIONS) == {"rows": [["a"]]}


@test
def a_release_build_has_no_fault_switch(_):
    assert run(harness.EXT, "skip_relations,unqualified_functions,no_defence", TABLES) == {"rows": [[1], [2], [3]]}
    assert run(harness.EXT, "skip_relations,unqualified_functions,no_defence", FUNCTIONS) == {"rows": [["a"]]}


if __name__ == "__main__":
    harness.main(lambda ext: None)
