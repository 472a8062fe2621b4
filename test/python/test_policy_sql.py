#!/usr/bin/env python3
"""Policy SQL is input (issue 31, findings 1-3; specs/007-administration.md "Policy SQL is input"):
the generated case set. Every place policy SQL can stand × every spelling of a forbidden call or
source × every author (anonymous ACL ADMIN, passthrough, global manage, catalog manage), against
the real extension: each must be refused with its own reason, nothing of it may reach the policy,
and the same places with ordinary SQL must be accepted (so a refusal is not the place's fault).

Run: python test/python/test_policy_sql.py --extension build/release/acl.duckdb_extension
"""
import duckdb

import harness
from harness import test

# ---- places: X stands for an expression, Q for a query; N is a fresh object name ----------------
EXPR_PLACES = {
    "rls": "CREATE VIRTUAL TABLE c.N AS phys.main.t RLS (X)",
    "rls_quoted": "CREATE VIRTUAL TABLE c.N AS phys.main.t RLS 'X'",
    "mask": "CREATE VIRTUAL TABLE c.N AS phys.main.t COLUMNS (id, m = X)",
    "mask_quoted": "CREATE VIRTUAL TABLE c.N AS phys.main.t COLUMNS 'id, m = X'",
    "add_table": "ADD TABLE phys.main.t AS c.N RLS 'X'",
    "alter_rls": "ALTER VIRTUAL TABLE c.base SET RLS (X)",
    "alter_columns": "ALTER VIRTUAL TABLE c.base SET COLUMNS (id, m = X)",
    "scalar_body": "CREATE VIRTUAL SCALAR c.N(a VARCHAR) AS X",
    "scalar_macro": "ADD SCALAR c.N(a VARCHAR) MACRO 'X'",
}
GRANT_PLACES = {  # global manage and operators only (a catalog manager hands out nothing)
    "grant_catalog_rls": "GRANT CATALOG c TO ROLE someone RLS (X)",
    "grant_object_mask": "GRANT TABLE c.base TO ROLE someone COLUMNS (id, m = X)",
    "grant_object_rls_quoted": "GRANT OBJECT c.base TO ROLE someone RLS 'X'",
    "alter_grant_rls": "ALTER GRANT CATALOG c TO ROLE reader SET RLS 'X'",
    "alter_grant_columns": "ALTER GRANT CATALOG c TO ROLE reader SET COLUMNS 'id, m = X'",
}
QUERY_PLACES = {
    "view": "CREATE VIRTUAL VIEW c.N AS Q",
    "add_view": "ADD VIEW c.N AS Q",
    "add_view_quoted": "ADD VIEW 'Q' AS c.N",
    "alter_view": "ALTER VIRTUAL VIEW c.okview SET AS Q",
    "alter_view_quoted": "ALTER VIRTUAL VIEW c.okview SET AS 'Q'",
    "table_function": "CREATE VIRTUAL TABLE FUNCTION c.N(a INTEGER) AS Q",
    "table_function_macro": "ADD TABLE FUNCTION c.N(a INTEGER) MACRO 'Q'",
    "view_subquery": "CREATE VIRTUAL VIEW c.N AS SELECT * FROM phys.main.t WHERE id IN (Q)",
    "view_cte": "CREATE VIRTUAL VIEW c.N AS WITH w AS (Q) SELECT * FROM w",
}

# ---- spellings of what policy SQL may not call or name ------------------------------------------
FORBIDDEN_CALLS = [  # (expression, why)
    ("acl_exec('GRANT ADMIN passthrough TO ROLE mgr') IS NOT NULL", "never"),
    ('"ACL_EXEC"(\'x\') IS NOT NULL', "never"),
    ("system.main.acl_exec_as('role', 'root', 'x') IS NOT NULL", "never"),
    ("main.acl_status() IS NOT NULL", "never"),
    ("query_table('aclcat.acl.issuers') IS NOT NULL", "never"),
    ("pg_catalog.query('SELECT 1') IS NOT NULL", "never"),
    ("json_execute_serialized_sql('x') IS NOT NULL", "never"),
    ("current_setting('threads') IS NOT NULL", "category"),
    ("getvariable('x') IS NULL", "category"),
    ("nextval('s') > 0", "category"),
    ("current_database() = 'x'", "category"),
    ("current_user = 'x'", "category"),
    ("x.lower() = 'a'", "qualifier"),
    ("index_key('aclcat.acl.issuers', 'x') IS NULL", "names_object"),
]
FORBIDDEN_QUERIES = [  # (query, why)
    ("SELECT * FROM acl_exec('GRANT ADMIN passthrough TO ROLE mgr')", "never"),
    ("SELECT * FROM ACL_EXEC_AS('role', 'root', 'x')", "never"),
    ("SELECT * FROM query_table('aclcat.acl.issuers')", "never"),
    ("SELECT * FROM query('SELECT * FROM aclcat.acl.issuers')", "never"),
    ("SELECT * FROM duckdb_tables()", "category"),
    ("SELECT * FROM system.main.duckdb_columns()", "category"),
    ("SELECT * FROM pragma_table_info('phys.main.t')", "category"),
    ("SELECT * FROM duckdb_settings()", "category"),
    ("SELECT * FROM duckdb_tables", "unqualified"),
    ("SELECT * FROM information_schema.tables", "unqualified"),
    ("SELECT * FROM pg_catalog.pg_class", "unqualified"),
    ("SELECT * FROM t", "unqualified"),
    ("SELECT * FROM main.t", "unqualified"),
    ("SELECT * FROM '/etc/hostname'", "unqualified"),
    ("SELECT * FROM system.main.duckdb_tables", "reserved"),
    ("SELECT * FROM temp.main.x", "reserved"),
    ("SELECT * FROM phys.main.\"__acl_1_x\"", "reserved"),
    ("SELECT * FROM aclcat.acl.issuers", "store"),
    ("SELECT * FROM duckdb_table_sample('aclcat.acl.issuers')", "names_object"),
    ("SELECT current_setting('threads') AS s", "category"),
    ("WITH duckdb_tables AS (SELECT * FROM duckdb_tables) SELECT * FROM duckdb_tables", "unqualified"),
    ("SELECT (SELECT count(*) FROM duckdb_tables()) AS n", "category"),
]
# What each reason reads as (the message of the refusal variant, or of the parse-time check that
# already refuses it: a source named at parse, a function body's never-callable call).
WHY = {
    "never": ["it is never callable", "may not be used in a virtual function", "a virtual function body may not use"],
    "category": ["policy SQL may not call"],
    "qualifier": ["call a built-in as f(x) or main.f(x)"],
    "names_object": ["it reads an object named in a string"],
    "unqualified": ["name a physical table as database.schema.table", "must name its tables as db.schema.table"],
    "reserved": ["may not be a physical source: the temp and system databases", "never sources", "may not use names starting with"],
    "store": ["table of the policy store", "the policy store"],
    "reader": ["may read files"],
    "not_listed": ["is not under a source listed for catalog c"],
}
AUTHORS = {  # prefix of a management batch by that author
    "anonymous": "ACL ADMIN ",
    "passthrough": 'ACL ROLE "root" ACL ',
    "global": 'ACL ROLE "boss" ACL ',
    "catalog": 'ACL ROLE "mgr" ACL ',
}


def setup(ext):
    con = duckdb.connect(":memory:", config={"allow_unsigned_extensions": "true"})
    con.execute(f"LOAD '{ext}'")
    con.execute("ATTACH ':memory:' AS phys")
    con.execute("ATTACH ':memory:' AS aclcat")
    con.execute("CREATE TABLE phys.main.t (id INTEGER, name VARCHAR)")
    con.execute("INSERT INTO phys.main.t VALUES (1, 'a'), (2, 'b')")
    con.execute(
        "ACL ADMIN CREATE VIRTUAL CATALOG c; ALTER VIRTUAL CATALOG c SET SOURCES (phys.main);"
        " CREATE VIRTUAL TABLE c.base AS phys.main.t; CREATE VIRTUAL VIEW c.okview AS SELECT id FROM phys.main.t;"
        " CREATE ROLE mgr; GRANT CATALOG c TO ROLE mgr WITH (manage);"
        " CREATE ROLE boss; GRANT ADMIN manage TO ROLE boss; CREATE ROLE root; GRANT ADMIN passthrough TO ROLE root;"
        " CREATE ROLE someone; CREATE ROLE reader; GRANT CATALOG c TO ROLE reader WITH (select) MAIN"
    ).fetchall()
    # a store in use: its schema is never a source (anonymous admin stays on for the gateway's cases)
    con.execute("SELECT acl_use_db('aclcat', 'acl', true)")
    con.execute("SET GLOBAL acl_allow_anonymous_admin = true")
    return con


def fill(place, x, n):
    quoted = "'X'" in place or "'Q'" in place or "'id, m = X'" in place
    x = x.replace("'", "''") if quoted else x
    # a mask column of its own per case: two roles' grants may not mask one column differently
    place = place.replace(" m = X", f" m{n} = X")
    return place.replace("X", x).replace("Q", x).replace("c.N", f"c.{n}")


def policy_rows(con):
    return [con.execute(f"SELECT count(*) FROM acl_{t}()").fetchone()[0] for t in ("relations", "functions", "grants", "object_grants")]


def expect_refused(con, sql, why, tally):
    before = policy_rows(con)
    try:
        con.execute(sql).fetchall()
    except duckdb.Error as e:
        msg = str(e)
        assert "acl:" in msg, (sql, msg)
        assert any(w in msg for w in WHY[why]), f"{sql}\n  expected {why}: {WHY[why]}\n  got: {msg}"
        assert policy_rows(con) == before, sql
        tally[why] = tally.get(why, 0) + 1
        return
    raise AssertionError(f"accepted: {sql}")


@test
def every_place_refuses_every_spelling_for_every_author(con):
    tally, n = {}, 0
    for author, prefix in AUTHORS.items():
        places = dict(EXPR_PLACES)
        if author != "catalog":
            places.update(GRANT_PLACES)
        for pname, place in places.items():
            for x, why in FORBIDDEN_CALLS:
                n += 1
                expect_refused(con, prefix + fill(place, x, f"o{n}"), why, tally)
        for pname, place in QUERY_PLACES.items():
            for q, why in FORBIDDEN_QUERIES:
                n += 1
                expect_refused(con, prefix + fill(place, q, f"o{n}"), why, tally)
    print(f"     {n} cases refused: {dict(sorted(tally.items()))}")
    assert n >= 1000, n


@test
def the_same_places_take_ordinary_policy_sql_from_every_author(con):
    n = 0
    for author, prefix in AUTHORS.items():
        places = dict(EXPR_PLACES)
        if author != "catalog":
            places.update(GRANT_PLACES)
        for pname, place in places.items():
            for x in ["lower(CAST(id AS VARCHAR)) = 'a'", "id > 0 AND acl_claim('tenant') IS NULL", "json_extract('{}', '$.a') IS NULL"]:
                n += 1
                x = x if "scalar" not in pname else x.replace("id", "acl_arg(1)")
                con.execute(prefix + fill(place, x, f"ok{n}")).fetchall()
        for pname, place in QUERY_PLACES.items():
            for q in ["SELECT id FROM phys.main.t", "WITH x AS (SELECT * FROM phys.main.t) SELECT count(*) AS id FROM x, range(2)"]:
                n += 1
                con.execute(prefix + fill(place, q, f"ok{n}")).fetchall()
    assert n > 100, n


@test
def files_and_attached_functions_only_in_an_operators_sql(con):
    con.execute("CREATE MACRO phys.main.twice(x) AS x * 2")
    con.execute("CREATE MACRO memory.main.m() AS 1")
    tally = {}
    for author, prefix in AUTHORS.items():
        # (a name per author: re-creating an object as it is brings no new SQL, and is not judged)
        reads = prefix + f"CREATE OR REPLACE VIRTUAL VIEW c.files_{author} AS SELECT count(*) AS n FROM read_text('/etc/hostname')"
        other = prefix + f"CREATE OR REPLACE VIRTUAL TABLE c.m_{author} AS phys.main.t RLS (memory.main.m() = 1)"
        if author in ("anonymous", "passthrough"):
            con.execute(reads).fetchall()
            con.execute(other).fetchall()
        else:
            expect_refused(con, reads, "reader", tally)
            try:
                con.execute(other).fetchall()
            except duckdb.Error as e:
                assert "it is not a built-in function" in str(e), str(e)
            else:
                raise AssertionError(f"accepted: {other}")
    # not even a macro of a listed schema for a catalog manager (a missing one is a method call
    # through the search path); an operator's may
    try:
        con.execute('ACL ROLE "mgr" ACL CREATE OR REPLACE VIRTUAL TABLE c.tw AS phys.main.t RLS (phys.main.twice(id) > 2)').fetchall()
    except duckdb.Error as e:
        assert "it is not a built-in function" in str(e), str(e)
    else:
        raise AssertionError("a catalog manager called a macro")
    con.execute('ACL ADMIN CREATE OR REPLACE VIRTUAL TABLE c.tw AS phys.main.t RLS (phys.main.twice(id) > 2)').fetchall()
    assert con.execute('ACL ROLE "reader" SELECT id FROM tw').fetchall() == [(2,)]


if __name__ == "__main__":
    harness.main(setup)
