#!/usr/bin/env python3
"""Many database instances in one process, opened and closed in turn, never crash the host.

The regression test of a SIGSEGV (spec 023, "Many instances in one process"): the extension's
allocator (mimalloc v3) crashed on the first allocation of a fresh DuckDB worker thread of a
newly opened database, once worker threads of earlier instances that had allocated through it
had exited; the docs test met it at `LOAD acl` of the restore in docs/policy-store.md, and at
other statements depending on which thread ran first. The sequence below is that page's: file
databases opened, closed and reopened with a policy store, another instance exporting the store,
then further instances loading the extension. Each round runs in a child process (a crash must
be reported, not take the test down with it); every round must exit cleanly.

Run: python test/python/test_instances.py --extension build/release/acl.duckdb_extension
"""
import os
import shutil
import subprocess
import sys
import tempfile

import harness
from harness import test

ROUNDS = 6

CHILD = r'''
import duckdb, os, sys
ext = sys.argv[1]
cfg = {"allow_unsigned_extensions": "true"}
inst = duckdb.connect(":memory:", config=cfg)
inst.execute("FORCE INSTALL '" + ext.replace("'", "''") + "'")
inst.close()

con = duckdb.connect("node.db", config=cfg)
con.execute("LOAD acl")
con.execute("ATTACH 'policy.db' AS aclcat")
con.execute("SELECT acl_use_db('aclcat', 'acl', true)")
con.execute("SET GLOBAL acl_allow_anonymous_admin = true")
con.execute("ACL ADMIN CREATE VIRTUAL CATALOG sales; CREATE ROLE analyst")
con.close()

con = duckdb.connect("node.db", config=cfg)
con.execute("LOAD acl")
con.execute("ATTACH 'policy.db' AS aclcat")
con.execute("SELECT acl_use_db('aclcat')")
assert con.execute("SELECT name FROM acl_roles()").fetchall() == [("analyst",)]

con = duckdb.connect(config=cfg)   # the node.db instance above is closed here
con.execute("LOAD acl")
con.execute("ATTACH 'policy.db' AS aclcat")
con.execute("SELECT acl_use_db('aclcat', 'acl', true)")
con.execute("SET GLOBAL acl_allow_anonymous_admin = true")
con.execute("ACL ADMIN CREATE VIRTUAL CATALOG hr; CREATE ROLE clerk")
con.execute("USE aclcat")
con.execute("EXPORT DATABASE 'policy-backup' (FORMAT parquet)")
con.execute("USE memory")

for i in range(4):
    other = duckdb.connect(config=cfg)
    other.execute("LOAD acl")
    other.execute("ATTACH 'restored%d.db' AS aclcat" % i)
    other.execute("USE aclcat")
    other.execute("IMPORT DATABASE 'policy-backup'")
    other.execute("USE memory")
    other.execute("SELECT acl_use_db('aclcat')")
    assert ("clerk",) in other.execute("SELECT name FROM acl_roles()").fetchall()
    other.close()
print("clean")
'''


def run_round(ext):
    work = tempfile.mkdtemp(prefix="acl-instances-")
    try:
        home = os.path.join(work, "home")
        os.makedirs(home)
        env = dict(os.environ, HOME=home)
        p = subprocess.run([sys.executable, "-c", CHILD, ext], cwd=work, env=env, capture_output=True,
                           text=True, timeout=300)
        return p.returncode, p.stdout, p.stderr
    finally:
        shutil.rmtree(work, ignore_errors=True)


@test
def instances_opened_and_closed_in_turn_never_crash(ext):
    for n in range(ROUNDS):
        rc, out, err = run_round(ext)
        assert rc == 0 and "clean" in out, f"round {n + 1}: exit {rc} (negative: killed by signal {-rc})\n{err[-2000:]}"


if __name__ == "__main__":
    harness.main(lambda ext: ext)
