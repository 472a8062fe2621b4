"""`make bench` case (i), issue 31 finding 7: one statement naming a sliced 41-column object N times
(1, 10, 100, 480), as a principal, beside the same statement over a hand-written view of the same
slice, each (side, N) in a fresh child process with the extension loaded: its peak memory (the
child's max RSS, setup included, and what the statements added to it) and the statement's time
(the median of a few statements, each a new text and shape: nothing is taken from a cache; then,
for N <= 100, of statements of one known shape, whose numbers change). Goal (spec 012, "One slice
per statement"): at every N, at most 2x the views' memory and 1.5x their time.

The statement is `SELECT count(*), count(DISTINCT v) FROM (SELECT c<i> AS v FROM obj UNION ALL …)`:
one reference per branch, every other column masked. Both sides must answer the same.
"""
import json
import subprocess
import sys
import time

REFS_CHILD = r"""
import json, resource, sys, time
import duckdb
ext, side, n, reps = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
con = duckdb.connect(":memory:", config={"allow_unsigned_extensions": "true"})
# both sides load the extension (it holds ≈ 70 MiB of its own once loaded): what is compared is
# the statement's cost; the views' statements are unprefixed, which the extension leaves alone
con.execute(f"LOAD '{ext}'")
con.execute("SET max_temp_directory_size = '256MB'")
con.execute("ATTACH ':memory:' AS phys")
cols = ", ".join(f"c{i} VARCHAR" for i in range(40))
con.execute(f"CREATE TABLE phys.main.wide (tenant VARCHAR, {cols})")
con.execute("INSERT INTO phys.main.wide SELECT CASE WHEN range % 2 = 0 THEN 'a' ELSE 'b' END, "
            + ", ".join(f"'v{i}-' || range" for i in range(40)) + " FROM range(20)")
name = "a_rather_long_object_name_x"
masked = lambda i: i % 2 == 1
if side == "acl":
    listed = ", ".join(["tenant"] + [f"c{i} = left(c{i}, 2) || '*'" if masked(i) else f"c{i}" for i in range(40)])
    con.execute(f"ACL ADMIN CREATE VIRTUAL CATALOG s; CREATE VIRTUAL TABLE s.{name} AS phys.main.wide "
                f"COLUMNS ({listed}) RLS (tenant = acl_claim('t')); CREATE ROLE r CLAIMS (t = 'a'); "
                "GRANT CATALOG s TO ROLE r WITH (select) MAIN")
    prefix = 'ACL ROLE "r" '
else:
    items = ", ".join(["tenant"] + [f"left(c{i}, 2) || '*' AS c{i}" if masked(i) else f"c{i}" for i in range(40)])
    con.execute(f"CREATE VIEW {name} AS SELECT {items} FROM phys.main.wide WHERE tenant = 'a'")
    prefix = ""
branches = " UNION ALL ".join(f"SELECT c{i % 40} AS v FROM {name}" for i in range(n))
def statement(r):  # a new text and a new shape (the alias) every time
    return f"{prefix}SELECT count(*) AS k{r}, count(DISTINCT v) AS d FROM ({branches})"
def known(r):  # a new text of one shape (only a number changes; spec 012, "statement shapes")
    return f"{prefix}SELECT {r} AS r, count(*) AS k, count(DISTINCT v) AS d FROM ({branches})"
peak = lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
def timed(sql):
    t = time.perf_counter()
    rows = con.execute(sql).fetchall()
    return time.perf_counter() - t, rows
median = lambda xs: sorted(xs)[len(xs) // 2] if xs else None
before, times = peak(), []
for r in range(reps):
    sql = statement(r)
    t, rows = timed(sql)
    times.append(t)
shaped = [timed(known(r))[0] for r in range(reps + 2 if n <= 100 else 0)][2:]  # two teach the shape
print(json.dumps({"before": before, "peak": peak(), "seconds": median(times), "shaped": median(shaped),
                  "rows": [list(x) for x in rows], "length": len(sql)}))
"""

SIZES = (1, 10, 100, 480)


def measure(ext, side, n, reps):
    out = subprocess.run([sys.executable, "-c", REFS_CHILD, ext, side, str(n), str(reps)],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def refs_case(ext, sizes=SIZES):
    """Prints one line per N: the principal's and the views' peak memory and time, and the ratios."""
    t0 = time.perf_counter()
    for n in sizes:
        reps = 7 if n <= 10 else 3 if n <= 100 else 1
        acl, views = measure(ext, "acl", n, reps), measure(ext, "views", n, reps)
        assert acl["rows"] == views["rows"], (n, acl["rows"], views["rows"])
        mem, secs = acl["peak"] / views["peak"], acl["seconds"] / views["seconds"]
        shaped = (f"   known shape {acl['shaped'] * 1000:.1f} vs {views['shaped'] * 1000:.1f} ms "
                  f"({acl['shaped'] / views['shaped']:4.2f}x)" if acl["shaped"] else "")
        print(f"(i) {n:3} references, {acl['length'] // 1024:2} KiB: acl peak {acl['peak']:5.0f} MB "
              f"(+{acl['peak'] - acl['before']:4.0f}) {acl['seconds'] * 1000:8.1f} ms   views peak {views['peak']:5.0f} MB "
              f"(+{views['peak'] - views['before']:4.0f}) {views['seconds'] * 1000:8.1f} ms   "
              f"memory {mem:4.2f}x  time {secs:4.2f}x   goal: <= 2x memory, <= 1.5x time{shaped}", flush=True)
    print(f"    (case (i) took {time.perf_counter() - t0:.0f} s; MB are MiB; (+N): what the statements added to the "
          "child's peak after its setup; time: a never-seen statement, then one of a known shape)")


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser()
    ap.add_argument("--extension", required=True)
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)))
    args = ap.parse_args()
    refs_case(args.extension, tuple(int(s) for s in args.sizes.split(",")))
