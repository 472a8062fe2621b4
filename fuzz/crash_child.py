#!/usr/bin/env python3
"""The child of crash_hunt.py: runs programs (JSON, one a line on stdin) against the extension
(argv[1]) and reports on stdout, one JSON array a line: ["step", i] before step i runs,
["finding", kind, detail, i] when the node is dead or its listings broke, ["done"] at the end of
a program. A crash of the host ends the process, which is what the parent watches for.
`--verbose` prints every statement's outcome to stderr (the stand-alone repro scripts)."""
import json
import os
import shutil
import sys
import tempfile
import threading

import duckdb

EXT = os.path.abspath(sys.argv[1])
VERBOSE = "--verbose" in sys.argv
# Threads of the `thread` mode get a small stack (DuckDB binds nested views on the caller's stack)
SMALL_STACK = 512 << 10

# DuckDB's words for a dead node: an internal assertion, a fatal error, an invalidated database.
DEAD = ("INTERNAL Error", "FATAL Error", "database has been invalidated", "Invalidated")


def say(*msg):
    print(json.dumps(list(msg)), flush=True)


class Node:
    """One node: a connection with the extension, the physical database and the policy."""

    def __init__(self, files):
        self.dir = tempfile.mkdtemp(prefix="acl_crash_") if files else None
        self.con = None
        self.open(first=True)

    def open(self, first=False):
        self.con = duckdb.connect(":memory:", config={"allow_unsigned_extensions": "true"})
        self.con.execute(f"LOAD '{EXT}'")
        if self.dir:
            self.con.execute(f"ATTACH '{self.dir}/phys.db' AS phys")
            self.con.execute(f"ATTACH '{self.dir}/policy.db' AS aclcat")
            self.con.execute("SET GLOBAL acl_allow_anonymous_admin = true")
            self.con.execute(f"SELECT acl_use_db('aclcat', 'acl', {'true' if first else 'false'})")
        else:
            self.con.execute("ATTACH ':memory:' AS phys")
        if first:
            for sql in WORLD:
                self.con.execute(sql)

    def restart(self):
        self.con.close()
        self.open()

    def close(self):
        try:
            self.con.close()
        except duckdb.Error:
            pass
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)


# The attacker's world: role p holds create/drop on the virtual schema c.ws and temp on c; role q
# reads c.ws; a sliced virtual table c.orders.
WORLD = [
    "CREATE SCHEMA phys.ws",
    "CREATE TABLE phys.ws.base (id INTEGER, name VARCHAR)",
    "INSERT INTO phys.ws.base VALUES (1, 'a'), (2, 'b')",
    "CREATE TABLE phys.main.orders (id INTEGER, amount INTEGER, tenant VARCHAR)",
    "INSERT INTO phys.main.orders VALUES (1, 10, 'a'), (2, 20, 'b')",
    """ACL ADMIN CREATE VIRTUAL CATALOG c; CREATE VIRTUAL SCHEMA c.ws AS phys.ws;
       CREATE VIRTUAL TABLE c.orders AS phys.main.orders RLS (tenant = acl_claim('tenant'));
       CREATE ROLE p CLAIMS (tenant = 'a'); GRANT CATALOG c TO ROLE p WITH (select, temp, explain) MAIN;
       GRANT SCHEMA c.ws TO ROLE p WITH (select, insert, create, drop);
       CREATE ROLE q; GRANT CATALOG c TO ROLE q WITH (select) MAIN; GRANT SCHEMA c.ws TO ROLE q WITH (select)""",
]

PREFIX = {"p": 'ACL ROLE "p" ', "q": 'ACL ROLE "q" ', "gw": "", "admin": "ACL ADMIN "}


def execute(node, step):
    sql = PREFIX[step["who"]] + step["sql"]
    mode = step.get("mode", "exec")
    con = node.con
    if mode == "exec":
        return con.execute(sql).fetchall()
    if mode == "params":
        return con.execute(sql, step.get("params", [])).fetchall()
    if mode == "relation":
        return con.sql(sql).fetchall()
    if mode == "relfilter":
        return con.sql(sql).filter("true").limit(5).fetchall()
    if mode == "thread":
        box = {}

        def go():
            try:
                box["rows"] = con.execute(sql).fetchall()
            except BaseException as e:  # noqa: BLE001 - carried to the caller's thread
                box["error"] = e

        threading.stack_size(SMALL_STACK)
        try:
            t = threading.Thread(target=go)
            t.start()
            t.join()
        finally:
            threading.stack_size(0)
        if "error" in box:
            raise box["error"]
        return box.get("rows")
    raise ValueError(f"unknown mode {mode}")


def run(program):
    node = Node(program.get("files"))
    try:
        for i, step in enumerate(program["steps"]):
            say("step", i)
            if step.get("restart"):
                if node.dir:
                    node.restart()
                continue
            try:
                rows = execute(node, step)
                out = f"ok {len(rows) if rows is not None else 0} rows"
            except duckdb.Error as e:
                out = f"{type(e).__name__}: {e}"
                if any(w in str(e) for w in DEAD):
                    say("finding", "internal", out[:2000], i)
                    return
            if VERBOSE:
                print(f"[{i}] {PREFIX[step['who']]}{step['sql'][:300]} ({step.get('mode', 'exec')}) -> {out[:300]}",
                      file=sys.stderr, flush=True)
        # The node still answers: the gateway, and every principal's plain listing.
        say("step", len(program["steps"]))
        for who, sql in [("gw", "SELECT 42"), ("p", "SELECT count(*) FROM information_schema.tables"),
                         ("q", "SELECT count(*) FROM duckdb_columns()"), ("p", "SHOW ALL TABLES")]:
            try:
                node.con.execute(PREFIX[who] + sql).fetchall()
            except duckdb.Error as e:
                say("finding", "listing", f"{PREFIX[who]}{sql}: {e}"[:2000], len(program["steps"]))
                return
        say("done")
    finally:
        node.close()


def main():
    for line in sys.stdin:
        if line.strip():
            run(json.loads(line))


if __name__ == "__main__":
    main()
