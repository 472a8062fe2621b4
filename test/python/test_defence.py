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
# ... and what the name of a shared slice's CTE reaches outside the CTE's scope
con.execute('CREATE TABLE memory.main."__acl_s0" (id INTEGER)')
con.execute('INSERT INTO memory.main."__acl_s0" VALUES (666)')
con.execute(
    "ACL ADMIN CREATE VIRTUAL CATALOG sales; CREATE VIRTUAL TABLE sales.orders AS phys.main.orders_tbl;"
    " CREATE ROLE analyst; GRANT CATALOG sales TO ROLE analyst WITH (select) MAIN"
).fetchall()
# clerk sees orders 1 and 2 only; echo returns its argument, pick the order of that id (both read
# the physical table: operator-written bodies)
con.execute(
    "ACL ADMIN CREATE ROLE clerk; GRANT CATALOG sales TO ROLE clerk WITH (select) MAIN RLS (id < 3);"
    " CREATE VIRTUAL TABLE FUNCTION sales.echo(n INTEGER) AS SELECT acl_arg(1) AS v FROM phys.main.orders_tbl WHERE id = 1;"
    " CREATE VIRTUAL TABLE FUNCTION sales.pick(n INTEGER) AS SELECT id FROM phys.main.orders_tbl WHERE id = acl_arg(1);"
    " CREATE VIRTUAL SCALAR sales.shout(s VARCHAR) AS upper(acl_arg(1))"
).fetchall()
if len(sys.argv) > 3:  # policy SQL written first (under a fault: unjudged, as a store edited by hand)
    try:
        con.execute(sys.argv[3]).fetchall()
    except duckdb.Error as e:
        print(json.dumps([{"setup_error": str(e)}] * 2))
        sys.exit(0)
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
# A virtual function's argument whose table the rule left bare (a decoy answers it) ...
ARG_TABLE = 'ACL ROLE "analyst" SELECT v FROM echo((SELECT max(id) FROM orders))'
# ... or left physical: the body names the same table, so a flat allowed set would pass it
ARG_BODY_TABLE = 'ACL ROLE "clerk" SELECT v FROM echo((SELECT max(id) FROM phys.main.orders_tbl))'
# An argument substituted inside the body: `id` binds to the body's table, the filter is id = id
IN_PLACE = 'ACL ROLE "clerk" SELECT id FROM pick(id) ORDER BY id'
# A virtual scalar taken in place: its body's `upper` is allowed, the argument's bare `lower` is not
IN_PLACE_SCALAR = "ACL ROLE \"analyst\" SELECT shout(lower('a'))"
# A slice named twice (clerk's orders are sliced) whose CTE a rule put where the first reference
# stood: the second reference is outside its scope (the decoy answers it)
SHARED = 'ACL ROLE "clerk" SELECT b.id FROM orders a, orders b WHERE a.id = 1 ORDER BY b.id'
CAUGHT = "acl: internal error: the second check found"


def run(ext, fault, sql, setup=None, same=True):
    env = dict(os.environ)
    env.pop("ACL_TEST_FAULT", None)
    if fault:
        env["ACL_TEST_FAULT"] = fault
    args = [sys.executable, "-c", SCRIPT, ext, sql] + ([setup] if setup else [])
    out = subprocess.run(args, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    first, again = json.loads(out.stdout.strip().splitlines()[-1])
    # A repeated statement is decided the same way: a failed check keeps no parse to reuse.
    assert again == first or not same, (first, again)
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
def a_table_missed_in_a_virtual_functions_argument_is_caught(_):
    assert_caught(run(faults_ext(), "vfn_args_unresolved", ARG_TABLE), "a table")


@test
def without_the_check_the_missed_argument_table_leaks_the_decoy(_):
    assert run(faults_ext(), "vfn_args_unresolved,no_defence", ARG_TABLE) == {"rows": [[666]]}


@test
def a_missed_argument_table_that_the_body_also_names_is_caught(_):
    # the body's tables are allowed only inside the body (its region), not in the arguments
    assert_caught(run(faults_ext(), "vfn_args_unresolved", ARG_BODY_TABLE), "a table")


@test
def without_the_check_the_missed_argument_table_reads_past_the_slice(_):
    # clerk's slice ends at id 2; the physical table's max is 3
    assert run(faults_ext(), "vfn_args_unresolved,no_defence", ARG_BODY_TABLE) == {"rows": [[3]]}


@test
def an_argument_substituted_inside_the_body_is_caught(_):
    # the body's SQL uses `id` twice; a third, the principal's, is over its count
    assert_caught(run(faults_ext(), "vfn_args_in_place", IN_PLACE), "a column")


@test
def without_the_check_the_argument_in_place_returns_every_row(_):
    assert run(faults_ext(), "vfn_args_in_place,no_defence", IN_PLACE) == {"rows": [[1], [2], [3]]}


@test
def a_call_in_a_virtual_scalars_argument_is_not_taken_for_the_bodys(_):
    # what the body may call is read from the stored body, never from the argument put in its place
    assert_caught(run(faults_ext(), "unqualified_functions", IN_PLACE_SCALAR), "a function")


@test
def without_the_check_the_macro_captures_the_argument(_):
    assert run(faults_ext(), "unqualified_functions,no_defence", IN_PLACE_SCALAR) == {"rows": [["PWNED"]]}


# Policy SQL that management would refuse (issue 31, findings 1-3), put in place under the
# `unchecked_policy_sql` fault as a hand-edited store or a policy written before the rule would be:
# the second check applies the policy-SQL rules inside its region, whatever the region's SQL says.
ESCALATE = "ACL ADMIN CREATE VIRTUAL VIEW sales.esc AS SELECT * FROM acl_exec('GRANT ADMIN passthrough TO ROLE analyst')"
LISTING = "ACL ADMIN CREATE VIRTUAL VIEW sales.lst AS SELECT table_name FROM duckdb_tables()"
SYSTEM_VIEW = "ACL ADMIN CREATE VIRTUAL VIEW sales.sys AS SELECT count(*) AS n FROM system.main.duckdb_tables"


@test
def policy_sql_that_calls_the_never_set_is_caught_when_used(_):
    assert_caught(run(faults_ext(), "unchecked_policy_sql", 'ACL ROLE "analyst" SELECT * FROM esc', ESCALATE), "a function")


@test
def without_the_check_that_view_grants_its_reader_passthrough(_):
    # proves the fault is real: reading the view runs the management statement
    # (the second read grants it again: "(replaced)")
    got = run(faults_ext(), "unchecked_policy_sql,no_defence", 'ACL ROLE "analyst" SELECT * FROM esc', ESCALATE, same=False)
    assert got == {"rows": [["GRANT ADMIN passthrough TO ROLE analyst"]]}, got


@test
def a_listing_in_policy_sql_is_caught_when_used(_):
    assert_caught(run(faults_ext(), "unchecked_policy_sql", 'ACL ROLE "analyst" SELECT * FROM lst', LISTING), "a function")
    got = run(faults_ext(), "unchecked_policy_sql,no_defence", 'ACL ROLE "analyst" SELECT * FROM lst ORDER BY 1', LISTING)
    assert ["orders_tbl"] in got["rows"], got


@test
def a_system_table_in_policy_sql_is_caught_when_used(_):
    # the parse-time source rule stops it even under the fault; the second check would too
    got = run(faults_ext(), "unchecked_policy_sql", 'ACL ROLE "analyst" SELECT * FROM sys', SYSTEM_VIEW)
    assert "may not be a physical source" in got["setup_error"], got


@test
def a_release_build_judges_policy_sql_when_written(_):
    got = run(harness.EXT, "unchecked_policy_sql", 'ACL ROLE "analyst" SELECT * FROM esc', ESCALATE)
    assert "acl: the query of virtual view sales.esc may not call acl_exec: it is never callable" in got["setup_error"], got


@test
def a_shared_slice_whose_cte_is_not_on_the_statements_top_is_caught(_):
    # the walk reports a slice's region only for a CTE of the statement's top query: here the
    # CTE's definition is not followed by its region (its body is walked as the principal's)
    assert_caught(run(faults_ext(), "shared_cte_nested", SHARED), "policy SQL missing")


@test
def without_the_check_the_reference_outside_the_ctes_scope_reads_the_decoy(_):
    assert run(faults_ext(), "shared_cte_nested,no_defence", SHARED) == {"rows": [[666]]}


NOT_FOUND = 'Referenced column "id" was not found'


@test
def the_faults_build_without_a_fault_behaves(_):
    assert run(faults_ext(), None, TABLES) == {"rows": [[1], [2], [3]]}
    assert run(faults_ext(), None, FUNCTIONS) == {"rows": [["a"]]}
    assert run(faults_ext(), None, ARG_TABLE) == {"rows": [[3]]}
    assert "is not granted" in run(faults_ext(), None, ARG_BODY_TABLE)["error"]
    assert NOT_FOUND in run(faults_ext(), None, IN_PLACE)["error"]
    assert run(faults_ext(), None, IN_PLACE_SCALAR) == {"rows": [["A"]]}
    assert run(faults_ext(), None, SHARED) == {"rows": [[1], [2]]}


@test
def a_release_build_has_no_fault_switch(_):
    faults = "skip_relations,unqualified_functions,no_defence,vfn_args_unresolved,vfn_args_in_place,shared_cte_nested"
    assert run(harness.EXT, faults, TABLES) == {"rows": [[1], [2], [3]]}
    assert run(harness.EXT, faults, FUNCTIONS) == {"rows": [["a"]]}
    assert run(harness.EXT, faults, ARG_TABLE) == {"rows": [[3]]}
    assert "is not granted" in run(harness.EXT, faults, ARG_BODY_TABLE)["error"]
    assert NOT_FOUND in run(harness.EXT, faults, IN_PLACE)["error"]
    assert run(harness.EXT, faults, SHARED) == {"rows": [[1], [2]]}


if __name__ == "__main__":
    harness.main(lambda ext: None)
