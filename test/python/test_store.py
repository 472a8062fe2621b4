#!/usr/bin/env python3
"""The DuckDB policy store across processes (specs/006-policy-store.md).

- restart: a policy written by one process is enforced, allowed and refused exactly alike, by a
  new process that attaches the same file and calls acl_use_db;
- crash safety: a child streams management batches into a store file and prints each batch once
  acl_exec has acknowledged it; it is killed with SIGKILL at a random moment, several rounds;
  after each, a new process finds every acknowledged batch whole and no batch half there;
- the instance is not kept alive by the extension: after close() the state is freed (the
  process's live instances drop back), another process can open the file for writing (the
  lock is gone), and 100 open/close cycles with a store in use neither leak states nor memory.

Run: python test/python/test_store.py --extension build/release/acl.duckdb_extension
Ends with `N passed, N failed`.
"""
import gc
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

import duckdb

import harness
from harness import test

ROUNDS = int(os.environ.get("ACL_CRASH_ROUNDS", "6"))


def connect(path=":memory:"):
    con = duckdb.connect(path, config={"allow_unsigned_extensions": "true"})
    con.execute(f"LOAD '{harness.EXT}'")
    # the gateway administers anonymously once the store is in use (spec 007)
    con.execute("SET GLOBAL acl_allow_anonymous_admin = true")
    return con


def child(script, *args, **kw):
    return subprocess.run([sys.executable, "-c", script, harness.EXT, *map(str, args)],
                          capture_output=True, text=True, timeout=300, **kw)


def setup(ext):
    return tempfile.mkdtemp(prefix="acl-store-")


# Every child script starts so: argv[1] is the extension, argv[2] the test's directory.
PREAMBLE = r"""
import sys, duckdb
ext, d = sys.argv[1], sys.argv[2]
con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
con.execute(f"LOAD '{ext}'")
con.execute("SET GLOBAL acl_allow_anonymous_admin = true")
"""

# ---- restart in a new process -------------------------------------------------------------------

WRITE = PREAMBLE + r"""
con.execute(f"ATTACH '{d}/phys.db' AS phys")
con.execute("CREATE TABLE phys.main.orders AS SELECT range AS id, CASE WHEN range % 2 = 0 THEN 'eu' ELSE 'us' END AS region, 'x' || range AS note FROM range(10)")
con.execute(f"ATTACH '{d}/policy.db' AS aclcat")
con.execute("SELECT acl_use_db('aclcat', 'acl', true)")
con.execute('''ACL ADMIN CREATE VIRTUAL CATALOG sales;
  CREATE VIRTUAL TABLE sales.orders AS phys.main.orders COLUMNS (id, region, note = left(note, 1));
  CREATE ROLE eu CLAIMS (region = 'eu');
  GRANT CATALOG sales TO ROLE eu WITH (select) MAIN RLS (region = acl_claim('region'));
  CREATE ROLE loader; GRANT CATALOG sales TO ROLE loader WITH (select, insert) MAIN;
  CREATE ROLE nothing''')
"""

# what each role may do: (sql, rows or the error's text)
PROBES = [
    ('ACL ROLE "eu" SELECT count(*), min(note) FROM orders', [(5, "x")]),
    ('ACL ROLE "eu" DELETE FROM orders', "lacks delete"),
    ('ACL ROLE "loader" SELECT count(*) FROM orders', [(10,)]),
    ('ACL ROLE "nothing" SELECT count(*) FROM orders', 'role "nothing" has no MAIN catalog'),
    ('ACL ROLE "ghost" SELECT 1', 'role "ghost" does not exist'),
    ('ACL ROLE "eu" SELECT * FROM phys.main.orders', "not granted"),
]


def probe(con):
    out = []
    for sql, _ in PROBES:
        try:
            out.append(con.execute(sql).fetchall())
        except duckdb.Error as e:
            out.append(str(e))
    return out


def check_probes(got):
    for (sql, want), have in zip(PROBES, got):
        if isinstance(want, str):
            assert isinstance(have, str) and want in have, (sql, have)
        else:
            assert have == want, (sql, have)


@test
def a_new_process_enforces_the_same_policy(d):
    r = child(WRITE, d)
    assert r.returncode == 0, r.stderr
    con = connect()
    con.execute(f"ATTACH '{d}/phys.db' AS phys")
    # before the store is in use: nothing is granted
    assert "does not exist" in str(probe(con)[0])
    con.execute(f"ATTACH '{d}/policy.db' AS aclcat")
    status = con.execute("SELECT acl_use_db('aclcat')").fetchone()[0]
    assert status.startswith("loaded the policy store aclcat.acl"), status
    mine = probe(con)
    check_probes(mine)
    # and a second, independent process sees the same (once this one has closed the files:
    # DuckDB lets one process at a time open a database file for writing)
    con.close()
    r = child(READ_PROBES, d)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == repr(mine), (r.stdout, mine)


READ_PROBES = PREAMBLE + r"""
con.execute(f"ATTACH '{d}/phys.db' AS phys (READ_ONLY)")
con.execute(f"ATTACH '{d}/policy.db' AS aclcat")
con.execute("SELECT acl_use_db('aclcat')")
out = []
for sql in sys.argv[3:] or %r:
    try:
        out.append(con.execute(sql).fetchall())
    except duckdb.Error as e:
        out.append(str(e))
print(repr(out))
""" % [sql for sql, _ in PROBES]


# ---- kill -9 in a stream of management batches -------------------------------------------------

STREAM = PREAMBLE + r"""
start = int(sys.argv[3])
con.execute(f"ATTACH '{d}/policy.db' AS aclcat")
con.execute("SELECT acl_use_db('aclcat', 'acl', true)")
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

# one batch's records, by kind: what must all be there or all be missing
PARTS = 6

VERIFY = PREAMBLE + r"""
con.execute(f"ATTACH '{d}/policy.db' AS aclcat")
con.execute("SELECT acl_use_db('aclcat')")
seen = {}
def add(kind, rows):
    for (name,) in rows:
        seen.setdefault(int(name), set()).add(kind)
add("catalog", con.execute("SELECT substr(name, 2) FROM acl_catalogs()").fetchall())
add("table", con.execute("SELECT substr(catalog, 2) FROM acl_relations() WHERE comment = 'batch ' || substr(catalog, 2)").fetchall())
add("role", con.execute("SELECT substr(name, 2) FROM acl_roles() WHERE name LIKE 'r%'").fetchall())
add("claim", con.execute("SELECT substr(role, 2) FROM acl_role_claims() WHERE value = substr(role, 2)").fetchall())
add("grant", con.execute("SELECT substr(role, 2) FROM acl_grants() WHERE catalog = 'c' || substr(role, 2) AND main").fetchall())
add("object_grant", con.execute("SELECT substr(role, 2) FROM acl_object_grants() WHERE role LIKE 'w%'").fetchall())
version = con.execute("SELECT store_policy_version FROM acl_status()").fetchone()[0]
print(repr(({k: sorted(v) for k, v in seen.items()}, version)))
"""


@test
def kill_9_never_leaves_half_a_batch_and_loses_no_acknowledged_one(d):
    acknowledged = set()
    start = 0
    rng = random.Random(os.environ.get("ACL_CRASH_SEED", "12"))
    for round_ in range(ROUNDS):
        p = subprocess.Popen([sys.executable, "-c", STREAM, harness.EXT, d, str(start)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            assert p.stdout.readline().strip() == "ready", p.stderr.read()
            lines = []
            reader = threading.Thread(target=lambda: lines.extend(iter(p.stdout.readline, "")))
            reader.start()
            # a random moment, somewhere in the stream (batches take a few ms each)
            time.sleep(rng.uniform(0.05, 1.5))
            p.send_signal(signal.SIGKILL)
            p.wait(timeout=30)
            reader.join(timeout=30)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
        # only whole lines were acknowledged (a line cut by the kill was not printed whole)
        done = [int(x) for x in lines if x.endswith("\n") and x.strip()]
        acknowledged.update(done)
        r = child(VERIFY, d)
        assert r.returncode == 0, r.stderr
        seen, version = eval(r.stdout.strip())
        for i, kinds in seen.items():
            assert len(kinds) == PARTS, f"round {round_}: batch {i} is half there: {kinds}"
        missing = acknowledged - set(seen)
        assert not missing, f"round {round_}: acknowledged batches lost: {sorted(missing)[:10]}"
        # the store's version counts the committed batches (one for the creation)
        assert version == 1 + len(seen), (version, len(seen))
        start = max(set(seen) | acknowledged | {start - 1}) + 1
    assert len(acknowledged) >= ROUNDS, f"too few batches were acknowledged to mean anything: {len(acknowledged)}"
    print(f"     kill -9 x{ROUNDS}: {len(acknowledged)} batches acknowledged, {len(seen)} in the store, "
          f"{len(seen) - len(acknowledged)} committed but killed before their acknowledgement was read")


# ---- closing the database frees the state --------------------------------------------------------

def instances(con):
    return con.execute("SELECT process_instances FROM acl_status()").fetchone()[0]


OPEN_FOR_WRITING = r"""
import sys, duckdb
con = duckdb.connect(sys.argv[2])
con.execute("CREATE TABLE IF NOT EXISTS touched (x INTEGER)")
con.close()
print("ok")
"""


@test
def closing_the_database_frees_the_instance_and_its_state(d):
    node = os.path.join(d, "node.db")
    probe_con = connect()  # an instance that stays, to read the process-wide count
    base = instances(probe_con)
    con = connect(node)
    assert instances(probe_con) == base + 1
    # the store in the database's own main catalog
    con.execute("SELECT acl_use_db('node', 'acl', true)")
    con.execute("ACL ADMIN CREATE ROLE kept; CREATE VIRTUAL CATALOG v; GRANT CATALOG v TO ROLE kept")
    con.close()
    del con
    gc.collect()
    assert instances(probe_con) == base, "the closed database's state is still alive"
    # another process can open the file for writing: nothing holds it
    r = child(OPEN_FOR_WRITING, node)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr
    # the same process opens it again: a fresh instance, in memory mode until the store is named
    con = connect(node)
    assert con.execute("SELECT mode FROM acl_status()").fetchone()[0] == "memory"
    assert con.execute("SELECT acl_use_db('node')").fetchone()[0].startswith("loaded")
    assert con.execute("SELECT name FROM acl_roles()").fetchall() == [("kept",)]
    con.close()
    probe_con.close()


def rss_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / (1024 * 1024)


@test
def a_hundred_open_close_cycles_leak_neither_states_nor_memory(d):
    node = os.path.join(d, "cycles.db")
    probe_con = connect()
    base = instances(probe_con)

    def cycle(i):
        con = connect(node)
        con.execute(f"SELECT acl_use_db('cycles', 'acl', {str(i == 0).lower()})")
        con.execute(f"ACL ADMIN CREATE OR REPLACE ROLE r; CREATE VIRTUAL CATALOG IF NOT EXISTS c; "
                    f"GRANT CATALOG c TO ROLE r WITH (select) MAIN")
        con.execute('ACL ROLE "r" SELECT 1').fetchall()
        con.close()

    for i in range(10):
        cycle(i)
    gc.collect()
    warm = rss_mb()
    for i in range(10, 110):
        cycle(i)
    gc.collect()
    grown = rss_mb() - warm
    assert instances(probe_con) == base, f"{instances(probe_con) - base} states outlived their databases"
    # a leaked instance (its catalog, buffers, our state with the host's function list) is
    # megabytes; 100 of them would be hundreds
    assert grown < 64, f"RSS grew by {grown:.0f} MiB over 100 cycles"
    probe_con.close()


if __name__ == "__main__":
    # each test's directory (databases of megabytes) goes when the test ends
    harness.main(setup, lambda d: shutil.rmtree(d, ignore_errors=True))
