"""Issue 31, finding 8 — "a principal crashes the node, for good" — in the attacker's words.

Role p holds `create` on the virtual schema c.ws (over phys.ws). Its attack: store a view whose
body reads a metadata listing (`CREATE VIEW ws.v AS SELECT table_name FROM duckdb_tables()`).
Every later listing — any principal's `information_schema.tables`, `SHOW TABLES`, the first
query a client sends, and the gateway's own `SELECT * FROM phys.ws.v` — described v, whose listing
described the schema again: unbounded recursion, SIGSEGV, and the view is stored, so the node
died again at its first listing after a restart.

Every scenario runs in a child process: a crash fails that test (and shows its signal) instead of
ending the run. Each variant is refused for its own reason, named by the start of its message
(the variants of src/error); after each, the node still answers listings correctly.
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from harness import main, test  # noqa: E402

# Unsupported::ListingInView
LISTING_IN_VIEW = "acl: a view cannot read a metadata listing"
# Nesting::Stack
TOO_DEEP = "acl: views are nested too deeply for this thread's stack"

CHILD = r"""
import duckdb, json, sys, threading
EXT, DIR = sys.argv[1], sys.argv[2]

def say(tag, value=None):
    print(json.dumps([tag, value], default=str), flush=True)

def connect(files=False, first=True):
    con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
    con.execute(f"LOAD '{EXT}'")
    if files:
        con.execute(f"ATTACH '{DIR}/phys.db' AS phys")
        con.execute(f"ATTACH '{DIR}/policy.db' AS aclcat")
        con.execute("SET GLOBAL acl_allow_anonymous_admin = true")
        con.execute(f"SELECT acl_use_db('aclcat', 'acl', {str(first).lower()})")
    else:
        con.execute("ATTACH ':memory:' AS phys")
    if first:
        con.execute("CREATE SCHEMA phys.ws")
        con.execute("CREATE TABLE phys.ws.base (id INTEGER, name VARCHAR)")
        con.execute("INSERT INTO phys.ws.base VALUES (1, 'a'), (2, 'b')")
        con.execute('''ACL ADMIN CREATE VIRTUAL CATALOG c; CREATE VIRTUAL SCHEMA c.ws AS phys.ws;
            CREATE ROLE p; GRANT CATALOG c TO ROLE p WITH (select, temp, explain) MAIN;
            GRANT SCHEMA c.ws TO ROLE p WITH (select, insert, create, drop);
            CREATE ROLE q; GRANT CATALOG c TO ROLE q WITH (select) MAIN; GRANT SCHEMA c.ws TO ROLE q WITH (select)''')
    return con

def attempt(con, sql, params=None, stack=0):
    '''["ok", rows] or ["err", message]; on a thread with a stack of `stack` bytes when given.'''
    box = {}
    def go():
        try:
            cur = con.execute(sql, params) if params is not None else con.execute(sql)
            box["r"] = ["ok", [list(r) for r in cur.fetchall()]]
        except duckdb.Error as e:
            box["r"] = ["err", str(e)]
    if stack:
        threading.stack_size(stack)
        t = threading.Thread(target=go)
        t.start()
        t.join()
        threading.stack_size(0)
    else:
        go()
    return box["r"]

def listings(con):
    '''What every principal's connect-time listing answers (and the gateway's own).'''
    out = {}
    for who, sql in [
        ("p", "SELECT table_schema, table_name FROM information_schema.tables ORDER BY ALL"),
        ("p", "SELECT schema_name, table_name, column_name FROM duckdb_columns() ORDER BY ALL"),
        ("p", "SELECT view_name, column_count FROM duckdb_views() ORDER BY ALL"),
        ("q", "SHOW ALL TABLES"),
        ("q", "SELECT database_name FROM duckdb_databases()"),
        ("q", "SELECT schema_name FROM duckdb_schemas() ORDER BY ALL"),
        ("gw", "SELECT count(*) > 0 FROM duckdb_columns()"),
        ("gw", "SELECT count(*) > 0 FROM information_schema.tables"),
    ]:
        prefix = {"p": 'ACL ROLE "p" ', "q": 'ACL ROLE "q" ', "gw": ""}[who]
        out[f"{who}: {sql}"] = attempt(con, prefix + sql)
    return out
"""


def node(body, files_dir=None):
    """Runs `body` (Python, after CHILD's helpers) in a child process against the extension;
    returns what it said, as a dict of tag -> value. A signal fails the test with its number."""
    import harness

    d = files_dir or tempfile.mkdtemp(prefix="acl_crash_test_")
    p = subprocess.run(
        [sys.executable, "-c", CHILD + body, harness.EXT, d], capture_output=True, text=True, timeout=600
    )
    said = {}
    for line in p.stdout.splitlines():
        try:
            tag, value = json.loads(line)
        except ValueError:
            continue
        said[tag] = value
    if p.returncode < 0:
        raise AssertionError(f"the node crashed (signal {-p.returncode}) after {list(said)[-1:]}\n{p.stderr[-1500:]}")
    assert p.returncode == 0, p.stderr[-3000:]
    return said


def refused(outcome, start):
    assert outcome[0] == "err", f"not refused: {outcome}"
    msg = outcome[1].split("Error: ", 1)[-1]
    assert msg.startswith(start), f"refused for another reason: {outcome[1]}"
    assert "phys" not in msg, msg


def answered(outcome):
    assert outcome[0] == "ok", f"refused: {outcome}"
    return outcome[1]


def all_answered(said):
    for what, outcome in said.items():
        answered(outcome)
        assert "phys" not in json.dumps(outcome[1]) or what.startswith("gw"), (what, outcome)


# The bodies p tries to store, each a place a listing can stand in a query.
BODIES = [
    "SELECT table_name FROM duckdb_tables()",
    "SELECT * FROM duckdb_schemas()",
    "SELECT * FROM duckdb_databases()",
    "SELECT * FROM information_schema.tables",
    "SELECT * FROM system.main.duckdb_columns()",
    "WITH l AS (SELECT * FROM duckdb_views()) SELECT * FROM l",
    "SELECT (SELECT count(*) FROM information_schema.columns) AS n",
    "SELECT * FROM ws.base WHERE EXISTS (SELECT 1 FROM duckdb_tables())",
    "SELECT name FROM ws.base UNION ALL SELECT table_name FROM information_schema.tables",
    "SELECT * FROM (SHOW TABLES)",
    "FROM (SHOW ALL TABLES)",
    "SELECT * FROM ws.base, (SELECT count(*) AS n FROM (SHOW DATABASES))",
]


@test
def a_view_over_a_listing_is_refused_and_every_listing_still_answers(_):
    """'I store a view over a listing, in any place a listing fits, as a view, a temporary
    view, or by replacing the inner view of a chain someone already reads; then everyone's
    first listing kills the node.'"""
    said = node(r"""
con = connect()
bodies = %r
for i, body in enumerate(bodies):
    say(f"view {i}", attempt(con, f'ACL ROLE "p" CREATE VIEW ws.v{i} AS {body}'))
    say(f"temp view {i}", attempt(con, f'ACL ROLE "p" CREATE TEMP VIEW tv{i} AS {body}'))
# a chain the attacker made harmless first, then the inner view replaced by a listing
say("inner", attempt(con, 'ACL ROLE "p" CREATE VIEW ws.inner AS SELECT id FROM ws.base'))
say("outer", attempt(con, 'ACL ROLE "p" CREATE VIEW ws.outer AS SELECT * FROM ws.inner'))
say("replace inner", attempt(con, 'ACL ROLE "p" CREATE OR REPLACE VIEW ws.inner AS SELECT table_oid AS id FROM duckdb_tables()'))
say("stored", attempt(con, "SELECT view_name FROM duckdb_views() WHERE database_name = 'phys' ORDER BY 1"))
say("gw outer", attempt(con, "SELECT * FROM phys.ws.outer ORDER BY 1"))
say("q outer", attempt(con, 'ACL ROLE "q" SELECT * FROM ws.outer ORDER BY 1'))
say("listings", listings(con))
""" % (BODIES,))
    for i, body in enumerate(BODIES):
        refused(said[f"view {i}"], LISTING_IN_VIEW)
        refused(said[f"temp view {i}"], LISTING_IN_VIEW)
    answered(said["inner"]), answered(said["outer"])
    refused(said["replace inner"], LISTING_IN_VIEW)
    # nothing of the attack was stored; the chain still reads the table
    assert answered(said["stored"]) == [["inner"], ["outer"]], said["stored"]
    assert answered(said["gw outer"]) == [[1], [2]]
    assert answered(said["q outer"]) == [[1], [2]]
    listed = said["listings"]
    all_answered(listed)
    assert answered(listed['p: SELECT table_schema, table_name FROM information_schema.tables ORDER BY ALL']) == [
        ["ws", "base"], ["ws", "inner"], ["ws", "outer"]]
    assert answered(listed["p: SELECT view_name, column_count FROM duckdb_views() ORDER BY ALL"]) == [
        ["inner", 1], ["outer", 1]]


@test
def a_listing_copied_with_ctas_is_data_and_statements_may_read_listings(_):
    """'I keep a copy instead: CREATE TABLE ws.t AS SELECT … FROM duckdb_tables(), a temporary
    copy, and listings inside CTEs, scalar subqueries, prepared statements and relations.'
    A copy is rows, taken once: nothing stored lists later, so it is allowed, like any CTAS of
    what p can read."""
    said = node(r"""
con = connect()
say("ctas", attempt(con, 'ACL ROLE "p" CREATE TABLE ws.t AS SELECT table_name FROM duckdb_tables()'))
say("temp ctas", attempt(con, 'ACL ROLE "p" CREATE TEMP TABLE tt AS SELECT * FROM information_schema.columns'))
say("ctas of a cte", attempt(con, 'ACL ROLE "p" CREATE TABLE ws.t2 AS WITH l AS (SELECT * FROM duckdb_schemas()) SELECT schema_name FROM l'))
say("insert", attempt(con, 'ACL ROLE "p" INSERT INTO ws.t SELECT table_name FROM information_schema.tables'))
say("q reads t", attempt(con, 'ACL ROLE "q" SELECT * FROM ws.t ORDER BY 1'))
say("gw reads t", attempt(con, 'SELECT count(*) FROM phys.ws.t'))
say("temp", attempt(con, 'ACL ROLE "p" SELECT count(*) > 0 FROM tt'))
say("cte", attempt(con, 'ACL ROLE "p" WITH l AS (SELECT * FROM duckdb_tables()) SELECT count(*) FROM l'))
say("scalar", attempt(con, 'ACL ROLE "p" SELECT (SELECT count(*) FROM information_schema.tables) AS n'))
say("prepared", attempt(con, 'ACL ROLE "p" SELECT table_name FROM information_schema.tables WHERE table_name = ?', ["t"]))
say("prepared show", attempt(con, 'ACL ROLE "q" SELECT * FROM (SHOW ALL TABLES) WHERE name = $1', ["t2"]))
rel = con.sql('ACL ROLE "p" SELECT table_name FROM duckdb_tables()')
say("relation", ["ok", sorted(r[0] for r in rel.fetchall())])
say("relation filter", ["ok", rel.filter("table_name = 't'").fetchall()])
say("explain", attempt(con, 'ACL ROLE "p" EXPLAIN SELECT * FROM duckdb_columns()'))
say("listings", listings(con))
""")
    for what in ["ctas", "temp ctas", "ctas of a cte", "insert"]:
        answered(said[what])
    assert answered(said["q reads t"]) == [["base"], ["base"], ["t"], ["t2"]], said["q reads t"]
    assert answered(said["gw reads t"]) == [[4]]
    assert answered(said["temp"]) == [[True]]
    assert answered(said["cte"]) == [[3]]
    assert answered(said["scalar"]) == [[3]]
    assert answered(said["prepared"]) == [["t"]]
    assert [r[2] for r in answered(said["prepared show"])] == ["t2"], said["prepared show"]
    assert answered(said["relation"]) == ["base", "t", "t2"]
    assert answered(said["relation filter"]) == [["t"]]
    answered(said["explain"])
    listed = said["listings"]
    all_answered(listed)
    assert answered(listed['p: SELECT table_schema, table_name FROM information_schema.tables ORDER BY ALL']) == [
        ["ws", "base"], ["ws", "t"], ["ws", "t2"]]


# What an earlier build stored for p's `CREATE VIEW ws.v AS SELECT table_name FROM duckdb_tables()`
# (DuckDB's own text of it, `duckdb_views().sql`), planted by the gateway into the physical schema.
OLD_VIEW = (
    "CREATE VIEW phys.ws.v AS SELECT __acl_q.* FROM \"system\".main.acl_view_guard('77732e76', "
    "'7b22726f6c6573223a5b2270225d2c226c6162656c223a22726f6c65205c22705c22222c22636c61696d73223a7b7d2c22657870223a6e756c6c7d', "
    "'53454c454354207461626c655f6e616d652046524f4d206475636b64625f7461626c65732829', true, "
    "'8c0eaa88e5350f593b5b6e94c98c0253787e4227c055e670bbd3ab73815dae25') AS __acl_g , (SELECT table_name FROM "
    "(SELECT * FROM (SELECT database_name, CAST(NULL AS BIGINT) AS database_oid, schema_name, CAST(NULL AS BIGINT) "
    "AS schema_oid, table_name, CAST(NULL AS BIGINT) AS table_oid, \"comment\", CAST(NULL AS MAP(VARCHAR, VARCHAR)) "
    "AS tags, false AS internal, false AS \"temporary\", CAST(has_primary_key AS BOOLEAN) AS has_primary_key, "
    "CAST(NULL AS BIGINT) AS estimated_size, CAST(column_count AS BIGINT) AS column_count, CAST(0 AS BIGINT) AS "
    "index_count, CAST(0 AS BIGINT) AS check_constraint_count, CAST(NULL AS VARCHAR) AS \"sql\" FROM "
    "\"system\".main.acl_meta('tables', '{\"roles\":[\"p\"],\"label\":\"role \\\"p\\\"\",\"claims\":{}}') "
    "WHERE (table_type = 'BASE TABLE')) AS __acl_p0) AS duckdb_tables) AS __acl_q"
)

# A careless operator's own view over the listing function (the gateway's SQL: no guard).
RAW_VIEW = (
    "CREATE VIEW phys.ws.raw AS SELECT * FROM system.main.acl_meta('tables', "
    "'{\"roles\":[\"p\"],\"label\":\"role \\\"p\\\"\",\"claims\":{}}')"
)


@test
def a_view_stored_by_an_earlier_build_does_not_kill_the_node_after_a_restart(_):
    """'My view is already stored (the node ran an earlier build when I made it): restart the
    node, and it dies again at its first listing.' The restarted node starts, lists — v listed
    without columns, its bind refused — and refuses the view itself for its own reason, to p, to
    q and to the gateway."""
    d = tempfile.mkdtemp(prefix="acl_crash_restart_")
    node(r"""
con = connect(files=True)
# planted unbound (DuckDB binds a view at creation; this build's guard would refuse it there)
con.execute(%r.replace(" AS SELECT", " WITH (defer_binding = true) AS SELECT", 1))
con.execute('ACL ROLE "p" CREATE VIEW ws.fine AS SELECT id FROM ws.base')
con.close()
""" % (OLD_VIEW,), files_dir=d)
    said = node(r"""
con = connect(files=True, first=False)
say("listings", listings(con))
say("p reads v", attempt(con, 'ACL ROLE "p" SELECT * FROM ws.v'))
say("q reads v", attempt(con, 'ACL ROLE "q" SELECT * FROM ws.v'))
say("gw reads v", attempt(con, 'SELECT * FROM phys.ws.v'))
say("gw describes v", attempt(con, 'DESCRIBE phys.ws.v'))
say("fine", attempt(con, 'ACL ROLE "q" SELECT * FROM ws.fine ORDER BY 1'))
say("listings again", listings(con))
""", files_dir=d)
    for key in ["listings", "listings again"]:
        listed = said[key]
        all_answered(listed)
        assert answered(listed["p: SELECT view_name, column_count FROM duckdb_views() ORDER BY ALL"]) == [
            ["fine", 1], ["v", None]], listed
    for who in ["p", "q", "gw"]:
        refused(said[f"{who} reads v"], LISTING_IN_VIEW)
    refused(said["gw describes v"], LISTING_IN_VIEW)
    assert answered(said["fine"]) == [[1], [2]]


@test
def an_operators_view_over_the_listing_function_is_listed_without_columns(_):
    """The same loop without a guard: an operator's own view over `acl_meta`, read by p's
    listing, by a view p stacks on it, and by the gateway, before and after a restart. The
    listing inside the listing is refused (`Nesting::ListingInListing`), so the outer listing
    shows the view without columns; nothing recurses."""
    d = tempfile.mkdtemp(prefix="acl_crash_raw_")
    body = r"""
con = connect(files=True, first=FIRST)
if FIRST:
    con.execute(%r)
    say("p stacks", attempt(con, 'ACL ROLE "p" CREATE VIEW ws.over AS SELECT * FROM ws.raw'))
say("listings", listings(con))
say("gw reads raw", attempt(con, "SELECT table_name, column_count FROM phys.ws.raw ORDER BY 1"))
say("p reads over", attempt(con, 'ACL ROLE "p" SELECT table_name, column_count FROM ws.over ORDER BY 1'))
say("gw counts", attempt(con, "SELECT count(*) FROM duckdb_columns() WHERE table_name IN ('raw', 'over')"))
""" % (RAW_VIEW,)
    for first in [True, False]:
        said = node(body.replace("FIRST", str(first)), files_dir=d)
        if first:
            answered(said["p stacks"])
        all_answered(said["listings"])
        assert answered(said["listings"]["p: SELECT view_name, column_count FROM duckdb_views() ORDER BY ALL"]) == [
            ["over", None], ["raw", None]], said["listings"]
        # p's listing as the operator's view returns it (acl_meta's text columns): itself and
        # the view over it without columns
        rows = [["base", "2"], ["over", None], ["raw", None]]
        assert answered(said["gw reads raw"]) == rows, said["gw reads raw"]
        assert answered(said["p reads over"]) == rows, said["p reads over"]
        answered(said["gw counts"])


@test
def a_chain_of_views_is_refused_before_the_stack_runs_out(_):
    """'I nest views a hundred deep; a gateway thread with a small stack (a JDBC thread has
    1 MiB) reads the last one, or any principal's listing binds it.' Each level's guard binds
    deeper; the one that would leave too little stack refuses (`Nesting::Stack`). The main
    thread reads it; listings, which bind on a stack of their own, list the whole chain."""
    said = node(r"""
con = connect()
con.execute('ACL ROLE "p" CREATE VIEW ws.c0 AS SELECT * FROM ws.base')
for k in range(1, 100):
    con.execute(f'ACL ROLE "p" CREATE VIEW ws.c{k} AS SELECT * FROM ws.c{k - 1}')
for stack in [256 << 10, 512 << 10, 1 << 20]:
    say(f"p {stack}", attempt(con, 'ACL ROLE "p" SELECT count(*) FROM ws.c99', stack=stack))
    say(f"gw {stack}", attempt(con, 'SELECT count(*) FROM phys.ws.c99', stack=stack))
    say(f"join {stack}", attempt(con, 'ACL ROLE "q" SELECT count(*) FROM ws.c99 a JOIN ws.c99 b USING (id) WHERE a.id IN (SELECT id FROM ws.c99)', stack=stack))
    say(f"shallow {stack}", attempt(con, 'ACL ROLE "q" SELECT count(*) FROM ws.c2', stack=stack))
    say(f"listing {stack}", attempt(con, 'ACL ROLE "q" SELECT count(*), count(column_count) FROM duckdb_views()', stack=stack))
say("main", attempt(con, 'ACL ROLE "p" SELECT count(*) FROM ws.c99'))
say("listings", listings(con))
""")
    for stack in [256 << 10, 512 << 10, 1 << 20]:
        for who in ["p", "gw", "join"]:
            refused(said[f"{who} {stack}"], TOO_DEEP)
        assert answered(said[f"shallow {stack}"]) == [[2]], (stack, said[f"shallow {stack}"])
        assert answered(said[f"listing {stack}"]) == [[100, 100]], (stack, said[f"listing {stack}"])
    assert answered(said["main"]) == [[2]]
    all_answered(said["listings"])


if __name__ == "__main__":
    main(lambda ext: None)
