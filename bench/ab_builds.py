#!/usr/bin/env python3
"""Two builds of the extension side by side in one process (spec 012, "Two builds in one process").

Wall-time runs of one build and then another differ by as much as the machine drifts between
them (20 µs and more on a shared VM), more than most single changes to the statement path. Here
each build is loaded into a database of its own in the same process (stage 2 with a footer:
`extension-ci-tools/append_metadata.py target/release/libacl.so DIR/acl.duckdb_extension`; each
is dlopen()ed apart, so they share no state), and every round runs a never-seen statement and
its native twin on each database in turn. Prints, per build, the medians and the overhead over
native, for a point query on a RENAME object (plain) and for one with an item DuckDB names by its
text (names). With two builds loaded, each evicts the other's code between statements, so the
overheads are higher than `make bench`'s; the difference between the builds is what to read.

    bench/ab_builds.py A/acl.duckdb_extension,B/acl.duckdb_extension [rounds]
"""
import ctypes
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402
import _duckdb  # noqa: E402

# stage 2 borrows DuckDB's symbols from the host module, as the stage-1 loader arranges
ctypes.CDLL(_duckdb.__file__, mode=os.RTLD_NOLOAD | ctypes.RTLD_GLOBAL)

FORMS = [
    ("plain", 'ACL ROLE "analyst" SELECT customer AS c{i} FROM orders WHERE id = 42',
     "SELECT customer AS c{i} FROM phys.main.orders AS orders WHERE id = 42"),
    ("names", 'ACL ROLE "analyst" SELECT upper(customer), customer AS c{i} FROM orders WHERE id = 42',
     "SELECT upper(customer), customer AS c{i} FROM phys.main.orders AS orders WHERE id = 42"),
]


def main():
    exts = [os.path.abspath(e) for e in sys.argv[1].split(",")]
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
    cons = []
    for e in exts:
        con = bench.connect(e)
        bench.setup(con)
        cons.append(con)
    clock = time.perf_counter_ns
    for name, acl, native in FORMS:
        times = [([], []) for _ in exts]
        for i in range(rounds):
            for k, con in enumerate(cons):
                for text, out in ((acl, times[k][0]), (native, times[k][1])):
                    sql = text.replace("{i}", f"{name}{k}_{i}")
                    t = clock()
                    con.execute(sql).fetchall()
                    out.append(clock() - t)
        cells = []
        for e, (a, n) in zip(exts, times):
            ma, mn = statistics.median(a) / 1000, statistics.median(n) / 1000
            cells.append(f"{os.path.basename(os.path.dirname(e))}: {ma:7.1f} - {mn:7.1f} = {ma - mn:+6.1f} us")
        print(f"{name:6s}", "   ".join(cells))


if __name__ == "__main__":
    main()
