#!/usr/bin/env python3
"""Where a never-seen statement's instructions go (spec 012, "Where a cold statement's time goes").

Runs, under valgrind's callgrind, N and 2N never-seen point queries (distinct shapes: other column
lists, aliases and predicate structure, so neither the batch cache, the statement cache nor the
shapes answer) over a RENAME object under `ACL ROLE`, or the same queries natively, and prints the
difference per statement: in all, and inclusive per function (the setup and the one-off costs
cancel out). Needs stage 2 with a footer (`make bench` builds build/bench/acl.duckdb_extension),
whose symbols valgrind can read.

    bench/cold_callgrind.py build/bench/acl.duckdb_extension [--kind acl|native|names|plain] [-n 200]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

# The child's database, shared with bench/cold_perf.py: stage 2 loaded directly (its symbols
# readable), one thread, a RENAME object `sales.orders` over `phys.main.orders`, role analyst.
SETUP = r"""
import ctypes, os, sys
import duckdb, _duckdb
ctypes.CDLL(_duckdb.__file__, mode=os.RTLD_NOLOAD | ctypes.RTLD_GLOBAL)
con = duckdb.connect(":memory:", config={"allow_unsigned_extensions": "true"})
con.execute(f"LOAD '{sys.argv[1]}'")
con.execute("SET threads = 1")
con.execute("ATTACH ':memory:' AS phys")
con.execute("CREATE TABLE phys.main.orders AS SELECT range AS id, 'c' || (range % 100) AS customer, "
            "range % 1000 AS amount FROM range(10000)")
con.execute("CREATE TABLE t AS SELECT range AS id FROM range(100)")
con.execute("ACL ADMIN CREATE VIRTUAL CATALOG sales; CREATE VIRTUAL TABLE sales.orders AS phys.main.orders;"
            " CREATE ROLE analyst; GRANT CATALOG sales TO ROLE analyst WITH (select) MAIN")
kind, n = sys.argv[2], int(sys.argv[3])
"""

CHILD = SETUP + r"""
con.execute('ACL ROLE "analyst" SELECT customer FROM orders WHERE id = 1').fetchall()
COLS = ["customer", "id", "amount"]
PREDS = ["id = {v}", "id = {v} AND amount > 3", "amount < {v} AND id = {v}", "(id = {v} OR id = 7)",
         "id BETWEEN {v} AND {v}", "id IN ({v}, 3)"]
def text(i):
    cols = ", ".join(f"{COLS[(i + k) % 3]} AS c{i}_{k}" for k in range(1 + i % 3))
    if kind == "names":
        cols = "upper(customer), " + cols
    pred = PREDS[i % len(PREDS)].replace("{v}", str(1000 + i))
    return f"SELECT {cols} FROM orders WHERE {pred}"
for i in range(n):
    if kind == "plain":
        con.execute("SELECT id FROM t WHERE id = 7").fetchall()
        continue
    q = text(i)
    if kind == "native":
        con.execute(q.replace("FROM orders", "FROM phys.main.orders AS orders")).fetchall()
    else:
        con.execute('ACL ROLE "analyst" ' + q).fetchall()
"""


def run(stage2, kind, n):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "cg.out")
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable, "-c",
                        CHILD, os.path.abspath(stage2), kind, str(n)], check=True, capture_output=True)
        text = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", out],
                              check=True, capture_output=True, text=True).stdout
    counts, total = {}, 0
    for line in text.splitlines():
        m = re.match(r"\s*([\d,]+) \([^)]*\)\s+(.*)$", line)
        if not m:
            continue
        v = int(m.group(1).replace(",", ""))
        if "PROGRAM TOTALS" in line:
            total = v
            continue
        name = re.sub(r"^\S+:", "", m.group(2)).strip()
        name = re.sub(r" \[[^\]]*\]$", "", name)
        counts[name] = counts.get(name, 0) + v
    return total, counts


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("stage2")
    ap.add_argument("--kind", default="acl", choices=["acl", "native", "names", "plain"])
    ap.add_argument("-n", type=int, default=200)
    ap.add_argument("--top", type=int, default=60)
    ap.add_argument("--grep", default=None, help="only functions matching this regex")
    args = ap.parse_args()
    t1, c1 = run(args.stage2, args.kind, args.n)
    t2, c2 = run(args.stage2, args.kind, 2 * args.n)
    print(f"{args.kind}: {(t2 - t1) / args.n:,.0f} instructions per statement in all")
    diff = {k: (c2.get(k, 0) - c1.get(k, 0)) / args.n for k in set(c1) | set(c2)}
    rows = sorted(diff.items(), key=lambda kv: -kv[1])
    if args.grep:
        rows = [r for r in rows if re.search(args.grep, r[0])]
    for name, v in rows[: args.top]:
        print(f"{v:12,.0f}  {name[:160]}")


if __name__ == "__main__":
    main()
