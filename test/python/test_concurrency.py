#!/usr/bin/env python3
"""Grants revoked and re-granted under load (issue 5, item 5).

32 cursors of one database, each in its own thread, run prefixed SELECTs and INSERTs (each
statement's text is unique, so a cache keyed by text is exercised too) while an admin thread
revokes and re-grants the role's catalog grant. Every outcome is logged with the grant-state
version read before the statement started and after it ended.

"Before" and "after" are defined by a lock: the admin thread holds `STATE.lock` while its
management statement runs and until it has bumped the version, and a worker reads the version
under the same lock right before it calls `execute` and right after the call returns. So a
statement whose start version is a "revoked" version began after that revoke had completed,
and if its end version is the same, it also ended before the next re-grant began: it must
have been refused. Symmetrically, one that started and ended inside a single "granted"
version must have succeeded (no stale refusal). Process RSS (/proc/self/statm) must not grow by
more than a bound between the end of a warm-up and the end of the run.

Run: python test/python/test_concurrency.py --extension build/release/acl.duckdb_extension
Ends with `N passed, N failed`.
"""

import os
import random
import threading
import time

import duckdb

import harness
from harness import test

THREADS = 32
RUN_SECONDS = float(os.environ.get("ACL_CONCURRENCY_SECONDS", "14"))
WARMUP_SECONDS = 3.0
# Rows are inserted inside rolled-back transactions, so the data does not grow; what may grow
# is allocator slack and DuckDB's buffers. A leak of ~1 KiB per statement would show as
# hundreds of MiB over the run.
RSS_BOUND_MB = float(os.environ.get("ACL_CONCURRENCY_RSS_MB", "96"))


def rss_mb():
    with open("/proc/self/statm") as f:
        resident_pages = int(f.read().split()[1])
    return resident_pages * os.sysconf("SC_PAGE_SIZE") / (1024 * 1024)


def setup(ext):
    con = duckdb.connect(":memory:", config={"allow_unsigned_extensions": "true"})
    con.execute(f"LOAD '{ext}'")
    con.execute("ATTACH ':memory:' AS phys")
    con.execute("CREATE TABLE phys.main.orders (id BIGINT, amount INTEGER, note VARCHAR)")
    con.execute("INSERT INTO phys.main.orders SELECT range, range % 100, 'n' || range FROM range(1000)")
    con.execute(
        "ACL ADMIN CREATE VIRTUAL CATALOG sales; CREATE VIRTUAL TABLE sales.orders AS phys.main.orders;"
        " CREATE ROLE worker; GRANT CATALOG sales TO ROLE worker WITH (writer) MAIN"
    )
    return con


class State:
    """The grant state as the admin thread last left it: an even version is granted, odd revoked."""

    def __init__(self):
        self.lock = threading.Lock()
        self.version = 0

    def read(self):
        with self.lock:
            return self.version


def worker(cur, state, stop, log, seq, errors):
    rnd = random.Random(seq)
    n = 0
    while not stop.is_set():
        n += 1
        key = seq * 10_000_000 + n  # unique text per statement
        if rnd.random() < 0.5:
            sql = f'ACL ROLE "worker" SELECT count(*), {key} FROM orders WHERE amount < {n % 100}'
            kind = "select"
        else:
            sql = (
                f'ACL ROLE "worker" BEGIN; INSERT INTO orders VALUES ({key}, {n % 100}, \'w{seq}\'); '
                "SELECT count(*) FROM orders WHERE id = " + str(key) + "; ROLLBACK"
            )
            kind = "insert"
        v_start = state.read()
        t_start = time.monotonic()
        outcome, detail = "ok", None
        try:
            rows = cur.execute(sql).fetchall()
            if kind == "select" and rows[0][1] != key:
                outcome, detail = "other", f"wrong row {rows!r}"
        except duckdb.Error as e:
            msg = str(e)
            if "acl:" in msg:
                outcome = "refused"
            else:
                outcome, detail = "other", msg[:200]
            try:
                cur.execute("ROLLBACK")
            except duckdb.Error:
                pass
        t_end = time.monotonic()
        v_end = state.read()
        log.append((t_start, t_end, v_start, v_end, kind, outcome))
        if outcome == "other":
            errors.append(detail)


def admin(con, state, stop, cycles):
    rnd = random.Random(7)
    cur = con.cursor()
    while not stop.is_set():
        for stmt in (
            "ACL ADMIN REVOKE CATALOG sales FROM ROLE worker",
            "ACL ADMIN GRANT CATALOG sales TO ROLE worker WITH (writer) MAIN",
        ):
            with state.lock:
                cur.execute(stmt).fetchall()
                state.version += 1
            cycles.append(time.monotonic())
            time.sleep(rnd.uniform(0.002, 0.04))
    # leave the grant in place
    with state.lock:
        if state.version % 2 == 1:
            cur.execute("ACL ADMIN GRANT CATALOG sales TO ROLE worker WITH (writer) MAIN").fetchall()
            state.version += 1


@test
def revocation_holds_under_load_and_memory_stays_flat(con):
    state, stop = State(), threading.Event()
    logs = [[] for _ in range(THREADS)]
    errors, cycles = [], []
    cursors = [con.cursor() for _ in range(THREADS)]
    threads = [
        threading.Thread(target=worker, args=(cursors[i], state, stop, logs[i], i, errors), daemon=True)
        for i in range(THREADS)
    ]
    admin_thread = threading.Thread(target=admin, args=(con, state, stop, cycles), daemon=True)
    t0 = time.monotonic()
    for t in threads:
        t.start()
    admin_thread.start()
    time.sleep(WARMUP_SECONDS)
    rss_warm = rss_mb()
    time.sleep(max(0.0, RUN_SECONDS - WARMUP_SECONDS))
    stop.set()
    for t in threads + [admin_thread]:
        t.join(timeout=30)
    assert not any(t.is_alive() for t in threads + [admin_thread]), "a thread did not finish"
    rss_end = rss_mb()
    elapsed = time.monotonic() - t0

    log = [r for lg in logs for r in lg]
    decided = [r for r in log if r[2] == r[3]]  # no admin statement completed while it ran
    revoked = [r for r in decided if r[2] % 2 == 1]
    granted = [r for r in decided if r[2] % 2 == 0]
    leaks = [r for r in revoked if r[5] == "ok"]
    stale = [r for r in granted if r[5] == "refused"]
    counts = {}
    for r in log:
        counts[(r[4], r[5])] = counts.get((r[4], r[5]), 0) + 1
    print(
        f"     {len(log)} statements in {elapsed:.1f}s by {THREADS} threads, {len(cycles)} admin statements;"
        f" decided inside one state: {len(revoked)} revoked, {len(granted)} granted; outcomes {sorted(counts.items())};"
        f" RSS {rss_warm:.1f} MiB after warm-up, {rss_end:.1f} MiB at the end"
    )
    assert not errors, f"{len(errors)} statements failed for another reason, e.g. {errors[:3]}"
    assert not leaks, f"{len(leaks)} statements started after a revoke and ended before the re-grant, yet succeeded: {leaks[:3]}"
    assert not stale, f"{len(stale)} statements ran entirely inside a granted state, yet were refused: {stale[:3]}"
    assert len(cycles) >= 20, f"only {len(cycles)} admin statements ran"
    assert len(revoked) >= 100 and len(granted) >= 100, "the run did not exercise both states"
    assert rss_end - rss_warm <= RSS_BOUND_MB, f"RSS grew by {rss_end - rss_warm:.1f} MiB (bound {RSS_BOUND_MB} MiB)"


if __name__ == "__main__":
    harness.main(setup)
