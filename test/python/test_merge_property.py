#!/usr/bin/env python3
"""MERGE under a row policy, differentially (spec 002, "MERGE").

From a fixed seed, a few hundred random MERGE statements (random sources, ON conditions, clause
kinds, conditions and actions, sometimes RETURNING) run twice: as the principal on `c.t`, whose
grant shows the acme rows of `phys.main.t` (globex/initech rows hidden), and natively on
`nat.main.t`, a table holding only the visible rows. For every statement:
- the hidden rows are exactly as they were, and no error names a hidden value;
- if the principal's MERGE succeeds, the native one does too, writes nothing outside the slice,
  returns the same count (or RETURNING rows), and leaves the same visible rows;
- if it fails with the slice check, the native one writes a row outside the slice, or a clause the
  rewrite cannot tell apart (WHEN NOT MATCHED sees only the source, BY SOURCE only the target,
  spec 002) would write one for a row it is offered;
- it is refused exactly when the rewrite says it cannot confine it (a subquery in ON, a subquery
  in a WHEN clause next to a BY SOURCE clause, an unreachable clause);
- any other error happens natively too.

Run: python test/python/test_merge_property.py --extension build/release/acl.duckdb_extension
"""

import random
from collections import Counter

import duckdb

import harness
from harness import test

SEED = 20240611
CASES = 400

VISIBLE = [(1, "acme", 1, "vis-1"), (4, "acme", 4, "vis-4"), (6, "acme", 6, "vis-6"), (8, "acme", 9, "vis-8")]
HIDDEN = [(2, "globex", 2, "HID-2"), (3, "initech", 3, "HID-3"), (5, "globex", 7, "HID-5"), (6, "initech", 6, "HID-6")]
SOURCE = [(1, "acme", 10), (2, "acme", 20), (3, "umbrella", 30), (5, "acme", 50), (7, "acme", 70), (9, "umbrella", 90)]
HIDDEN_WORDS = ("HID", "globex", "initech")

# probes that fail only on a hidden row (the visible rows are all acme)
LEAK = "CASE WHEN tt.tenant <> 'acme' THEN error('LEAK ' || tt.s) END"
CAST_LEAK = "CASE WHEN tt.tenant <> 'acme' THEN (tt.s || 'x')::INTEGER END"


def setup(ext):
    con = duckdb.connect(":memory:", config={"allow_unsigned_extensions": "true"})
    con.execute(f"LOAD '{ext}'")
    con.execute("ATTACH ':memory:' AS phys; ATTACH ':memory:' AS nat")
    for db in ("phys", "nat"):
        con.execute(f"CREATE TABLE {db}.main.t (id INTEGER, tenant VARCHAR, v INTEGER, s VARCHAR)")
    con.execute("CREATE TABLE phys.main.src (id INTEGER, tenant VARCHAR, v INTEGER)")
    con.executemany("INSERT INTO phys.main.src VALUES (?, ?, ?)", SOURCE)
    con.execute(
        "ACL ADMIN CREATE VIRTUAL CATALOG c; CREATE VIRTUAL TABLE c.t AS phys.main.t;"
        " CREATE VIRTUAL TABLE c.src AS phys.main.src;"
        " CREATE ROLE r CLAIMS (tenant = 'acme'); GRANT CATALOG c TO ROLE r WITH (writer) MAIN;"
        " GRANT TABLE c.t TO ROLE r RLS (tenant = acl_claim('tenant'))"
    )
    return con


class Case:
    """One random MERGE, as text with {T} (target) and {S} (source table) to fill in."""

    def __init__(self, rnd):
        self.rnd = rnd
        self.subquery_in_on = False
        self.subquery_in_clause = False
        self.unreachable = False
        # per clause: (kind, condition or None, action kind, tenant expression written or None)
        self.clauses = []
        self.sql = self.build()

    def pick(self, *options):
        return self.rnd.choice(options)

    def source(self):
        return self.pick(
            "{S} AS ss",
            "(SELECT * FROM {S} WHERE id % 2 = 1) AS ss",
            "(VALUES (1, 'acme', 5), (2, 'acme', 6), (6, 'umbrella', 7)) AS ss(id, tenant, v)",
            "(SELECT 99 AS id, 'acme' AS tenant, 0 AS v) AS ss",
            "(SELECT * FROM {S} WHERE false) AS ss",
        )

    def on(self):
        choice = self.pick(
            "tt.id = ss.id",
            "tt.id = ss.id",
            "tt.id = ss.id AND tt.v > 2",
            "tt.id = ss.id OR tt.v = ss.v",
            "false",
            f"tt.id = ss.id AND coalesce({LEAK}, true)",
            f"tt.id = ss.id AND {CAST_LEAK} IS NULL",
        )
        if self.rnd.random() < 0.05:
            choice = "tt.id = ss.id AND tt.id IN (SELECT id FROM {S})"
        self.subquery_in_on = "SELECT" in choice
        return choice

    def value(self, side):
        options = ["ss.v", "ss.v * 10", "42"] if side == "source" else ["tt.v + 1", "tt.v * 2", "42"]
        if side != "source":
            options += [f"coalesce({LEAK}, tt.v)", f"coalesce({CAST_LEAK}, tt.v)"]
        if side == "both":
            options += ["ss.v + tt.v", "ss.v"]
        if self.rnd.random() < 0.1:
            return "(SELECT max(v) FROM {S})"
        return self.pick(*options)

    def tenant(self, side):
        options = ["'acme'", "'acme'", "'umbrella'"]
        if side != "target":
            options += ["ss.tenant"]
        if side != "source":
            options += ["CASE WHEN tt.v > 5 THEN 'umbrella' ELSE 'acme' END"]
        return self.pick(*options)

    def condition(self, side):
        options = [None, None]
        if side != "target":
            options += ["ss.v > 20", "ss.tenant = 'acme'", "ss.id % 2 = 1"]
        if side != "source":
            options += ["tt.v < 5", "tt.id % 2 = 0", f"{LEAK} IS NULL", f"{CAST_LEAK} IS NULL", "tt.s LIKE 'H%'"]
        if self.rnd.random() < 0.1:
            return "ss.id IN (SELECT id FROM {S})" if side != "target" else "tt.id IN (SELECT id FROM {S})"
        return self.pick(*options)

    def clause(self, kind):
        side = {"MATCHED": "both", "NOT MATCHED": "source", "NOT MATCHED BY SOURCE": "target"}[kind]
        cond = self.condition(side)
        if kind == "NOT MATCHED":
            action = self.pick("insert", "insert", "nothing")
        else:
            action = self.pick("delete", "nothing", "update_v", "update_tenant")
        tenant = None
        if action == "insert":
            tenant = self.tenant(side)
            body = f"INSERT (id, tenant, v) VALUES (ss.id, {tenant}, {self.value(side)})"
        elif action == "update_v":
            body = f"UPDATE SET v = {self.value(side)}"
        elif action == "update_tenant":
            tenant = self.tenant(side)
            body = f"UPDATE SET tenant = {tenant}, v = {self.value(side)}"
        elif action == "delete":
            body = "DELETE"
        else:
            body = "DO NOTHING"
        self.clauses.append((kind, cond, action, tenant))
        return f"WHEN {kind}" + (f" AND {cond}" if cond else "") + f" THEN {body}"

    def build(self):
        while True:
            n = self.rnd.randint(1, 4)
            kinds = [self.pick("MATCHED", "NOT MATCHED", "NOT MATCHED BY SOURCE") for _ in range(n)]
            self.clauses = []
            text = [self.clause(k) for k in kinds]
            self.unreachable = any(
                cond is None and any(k == kind for k, *_ in self.clauses[i + 1:])
                for i, (kind, cond, _, _) in enumerate(self.clauses)
            )
            # DuckDB refuses unreachable clauses itself: keep a few of them
            if not self.unreachable or self.rnd.random() < 0.1:
                break
        by_source = "NOT MATCHED BY SOURCE" in kinds
        self.subquery_in_clause = by_source and any("SELECT" in t for t in text)
        returning = self.pick("", "", " RETURNING merge_action, id, tenant, v, s")
        self.returning = bool(returning)
        return f"MERGE INTO {{T}} AS tt USING {self.source()} ON {self.on()} " + " ".join(text) + returning

    def refused(self):
        return self.subquery_in_on or self.subquery_in_clause or self.unreachable

    def offered_outside(self, con):
        """Would a WHEN NOT MATCHED INSERT / BY SOURCE UPDATE write a tenant outside the slice for
        a row the rewrite offers it (every source row / every visible target row its condition
        and the earlier conditions of its kind let through)? Evaluated natively."""
        source = self.sql.split(" USING ", 1)[1].split(" ON ", 1)[0].replace("{S}", "phys.main.src")
        earlier = {"NOT MATCHED": [], "NOT MATCHED BY SOURCE": []}
        for kind, cond, action, tenant in self.clauses:
            if kind not in earlier:
                continue
            if tenant is not None:
                where = " AND ".join([f"({cond})" if cond else "true"] + [f"NOT coalesce(({c}), false)" for c in earlier[kind]])
                rows = f"FROM {source}" if kind == "NOT MATCHED" else "FROM nat.main.t AS tt"
                sql = f"SELECT count(*) {rows} WHERE {where} AND NOT coalesce(({tenant}) = 'acme', false)"
                if con.execute(sql.replace("{S}", "phys.main.src")).fetchone()[0] > 0:
                    return True
            if cond is not None:
                earlier[kind].append(cond)
        return False


def reset(con):
    con.execute("DELETE FROM phys.main.t; DELETE FROM nat.main.t")
    con.executemany("INSERT INTO phys.main.t VALUES (?, ?, ?, ?)", VISIBLE + HIDDEN)
    con.executemany("INSERT INTO nat.main.t VALUES (?, ?, ?, ?)", VISIBLE)


def rows(con, sql):
    return Counter(tuple(r) for r in con.execute(sql).fetchall())


def attempt(con, sql):
    try:
        return con.execute(sql).fetchall(), None
    except duckdb.Error as e:
        return None, str(e)


@test
def merges_change_only_the_slice_and_as_natively(con):
    rnd = random.Random(SEED)
    seen = Counter()
    for n in range(CASES):
        case = Case(rnd)
        reset(con)
        mine_sql = 'ACL ROLE "r" ' + case.sql.replace("{T}", "t").replace("{S}", "src")
        native_sql = case.sql.replace("{T}", "nat.main.t").replace("{S}", "phys.main.src")
        offered_outside = case.offered_outside(con)
        mine, mine_err = attempt(con, mine_sql)
        native, native_err = attempt(con, native_sql)
        where = f"case {n}: {mine_sql}"

        hidden_after = rows(con, "SELECT * FROM phys.main.t WHERE tenant IS DISTINCT FROM 'acme'")
        assert hidden_after == Counter(HIDDEN), f"{where}\nhidden rows changed: {sorted(hidden_after)}"
        if mine_err is not None:
            assert not any(w in mine_err for w in HIDDEN_WORDS), f"{where}\nan error names a hidden value: {mine_err}"
        if case.refused():
            refusal = mine_err is not None and "acl: " in mine_err and ("not supported" in mine_err or "unreachable" in mine_err)
            assert refusal, f"{where}\nexpected a refusal, got {mine_err or mine}"
            seen["refused"] += 1
            continue
        assert mine_err is None or "acl: a row written by MERGE" in mine_err or "acl:" not in mine_err, f"{where}\nunexpected refusal: {mine_err}"

        native_rows = rows(con, "SELECT * FROM nat.main.t")
        native_outside = native_err is None and any(r[1] != "acme" for r in native_rows)
        if mine_err is None:
            assert native_err is None, f"{where}\nsucceeded, but natively: {native_err}"
            assert not native_outside, f"{where}\nnatively this writes outside the slice, yet it succeeded"
            if case.returning:
                assert Counter(map(tuple, mine)) == Counter(map(tuple, native)), f"{where}\nRETURNING {mine} vs {native}"
            else:
                assert mine == native, f"{where}\ncount {mine} vs {native}"
            visible = rows(con, "SELECT * FROM phys.main.t WHERE tenant = 'acme'")
            assert visible == native_rows, f"{where}\nvisible rows {sorted(visible)}\nnatively {sorted(native_rows)}"
            seen["same"] += 1
        elif native_err is not None:
            seen["error both ways"] += 1
        else:
            assert "acl: a row written by MERGE" in mine_err, f"{where}\nfailed ({mine_err}), natively it succeeds"
            assert native_outside or offered_outside, f"{where}\nthe slice check fired, but natively nothing leaves the slice"
            seen["checked" if native_outside else "checked (clause sees one side)"] += 1
    # the generator must exercise every outcome, or the property says little
    assert seen["same"] > CASES // 3 and seen["refused"] > 5 and seen["checked"] > 5, seen
    print(f"     {dict(seen)}")


if __name__ == "__main__":
    harness.main(setup)
