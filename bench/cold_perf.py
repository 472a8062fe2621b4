#!/usr/bin/env python3
"""Where a never-seen statement's wall time goes (spec 012, "where a never-seen statement's wall
time goes"): `perf record -e cpu-clock:u` (timer sampling, user mode, which a container with
`perf_event_paranoid` 2 allows) over N never-seen point queries on a RENAME object under
`ACL ROLE`, then over the same queries natively, each in its own process with `threads = 1`.
Prints each run's time per statement and, per DSO, the time per statement it took in both runs.
Needs `perf` (Debian's `linux-perf`) and stage 2 with a footer (`make bench` builds
build/bench/acl.duckdb_extension), whose symbols perf can read.

    bench/cold_perf.py build/bench/acl.duckdb_extension [-n 20000] [--symbols]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

from cold_callgrind import SETUP

CHILD = SETUP + r"""
import time
sql = ('ACL ROLE "analyst" SELECT customer AS c{i} FROM orders WHERE id = 42' if kind == "acl"
       else 'SELECT customer AS c{i} FROM phys.main.orders AS orders WHERE id = 42')
for i in range(200):
    con.execute(sql.replace("{i}", f"w{i}")).fetchall()
t = time.perf_counter_ns()
for i in range(n):
    con.execute(sql.replace("{i}", str(i))).fetchall()
print((time.perf_counter_ns() - t) / n / 1000)
"""


def run(stage2, kind, n, d, symbols):
    data = os.path.join(d, f"{kind}.data")
    out = subprocess.run(["perf", "record", "-q", "-e", "cpu-clock:u", "-F", "10000", "-o", data, sys.executable,
                          "-c", CHILD, os.path.abspath(stage2), kind, str(n)], check=True, capture_output=True, text=True)
    us = float(out.stdout.strip().splitlines()[-1])
    sort = "dso,sym" if symbols else "dso"
    report = subprocess.run(["perf", "report", "-i", data, "--no-children", "--sort", sort, "-g", "none", "--stdio"],
                            check=True, capture_output=True, text=True).stdout
    shares = {}
    for line in report.splitlines():
        m = re.match(r"\s*([\d.]+)%\s+(.*\S)\s*$", line)
        if m:
            key = re.sub(r"\s+\[\.\]\s+", "  ", m.group(2))
            shares[key] = shares.get(key, 0.0) + float(m.group(1))
    total = sum(shares.values()) or 1.0
    # The samples are spread over the whole process (start-up included); scale the shares so that
    # they add up to the loop's measured time per statement.
    return us, {k: v / total * us for k, v in shares.items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("stage2")
    ap.add_argument("-n", type=int, default=20000)
    ap.add_argument("--symbols", action="store_true", help="per DSO and function, not per DSO")
    ap.add_argument("--top", type=int, default=25)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        acl_us, acl = run(args.stage2, "acl", args.n, d, args.symbols)
        nat_us, nat = run(args.stage2, "native", args.n, d, args.symbols)
    print(f"never-seen under ACL ROLE {acl_us:7.1f} us per statement, native {nat_us:7.1f} us, "
          f"overhead {acl_us - nat_us:+7.1f} us (separate processes: noisier than `make bench`)")
    rows = sorted(set(acl) | set(nat), key=lambda k: -(acl.get(k, 0.0) - nat.get(k, 0.0)))
    print(f"{'acl us':>8} {'native us':>10} {'diff':>8}  where")
    for k in rows[: args.top]:
        print(f"{acl.get(k, 0.0):8.1f} {nat.get(k, 0.0):10.1f} {acl.get(k, 0.0) - nat.get(k, 0.0):+8.1f}  {k[:140]}")


if __name__ == "__main__":
    main()
