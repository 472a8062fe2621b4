"""Every read query a principal may run answers as it does natively (issue 13, spec 016).

The corpus (test/python/fidelity/corpus_*.py, written from DuckDB's documentation) runs twice on
one database: natively, over the physical tables in `memory.main`, and as `ACL ROLE "r"` over a
virtual catalog of RENAME objects of the same tables, granted to r with everything they read.
Each query must give the same column names, the same types and the same rows (in the same order
where it orders them; as a multiset otherwise); the principal's query runs twice, the second
time from the batch cache and DuckDB's kept parse. The exceptions below are the only queries that
may differ, each for the reason it gives, and each must still differ exactly that way (an
exception that starts to pass is reported, so the list stays true). The pass rate by construct
is printed (spec 016 quotes it).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import main, test  # noqa: E402
from fidelity import corpus_a, corpus_b, corpus_c  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
TABLES = ["orders", "customers", "nested", "docs", "prices", "trades", "sales", "wide", "tree", "readings"]
CORPUS = {**corpus_a.QUERIES, **corpus_b.QUERIES, **corpus_c.QUERIES}

DYNAMIC_PIVOT = (
    "refused",
    "PIVOT without an IN list",
    "DuckDB turns a PIVOT whose values come from the data into a CREATE TYPE of those values, run "
    "as a statement of its own before the query: a catalog write the principal may not make, in "
    "the connection's temporary schema that every principal on it shares",
)
# Queries that may not answer as natively, and why (spec 016, "Exceptions").
EXCEPTIONS = {
    "PIVOT sales ON quarter USING sum(amount) GROUP BY year ORDER BY year": DYNAMIC_PIVOT,
    "PIVOT sales ON quarter USING sum(amount) ORDER BY ALL": DYNAMIC_PIVOT,
    "PIVOT sales ON region, quarter USING sum(amount) GROUP BY year ORDER BY year": DYNAMIC_PIVOT,
    "PIVOT sales ON quarter USING sum(amount) AS total, count(*) AS n GROUP BY year ORDER BY year": DYNAMIC_PIVOT,
    "PIVOT_WIDER sales ON quarter USING sum(amount) GROUP BY year ORDER BY year": DYNAMIC_PIVOT,
    "SELECT coalesce(*COLUMNS(['note', 'status'])) FROM orders": (
        "physical name",
        "memory.main.",
        "DuckDB names an unpacked *COLUMNS inside a call after expanding it, by each column's full "
        "table name: natively memory.main.orders.status, which under a principal would show the "
        "physical table; the principal's name says orders.status (its own name for the table)",
    ),
}


def setup(ext):
    import duckdb

    con = duckdb.connect(":memory:", config={"allow_unsigned_extensions": "true"})
    con.execute(f"LOAD '{ext}'")
    con.execute("SET threads = 1")  # the same rows in the same order, natively and not
    with open(os.path.join(HERE, "fidelity", "schema.sql")) as f:
        con.execute(f.read())
    con.execute(
        "ACL ADMIN CREATE VIRTUAL CATALOG c; "
        + " ".join(f"CREATE VIRTUAL TABLE c.{t} AS memory.main.{t};" for t in TABLES)
        + " CREATE ROLE r; GRANT CATALOG c TO ROLE r WITH (select) MAIN"
    )
    return con


def run(con, sql, params):
    cur = con.execute(sql, params) if params is not None else con.execute(sql)
    return [(d[0], str(d[1])) for d in cur.description], cur.fetchall()


def same_rows(a, b):
    return a == b or sorted(a, key=repr) == sorted(b, key=repr)


def compare(con, sql, params):
    """None when the principal's answer is the native one, else what differs."""
    native = run(con, sql, params)
    for attempt in ("first", "repeated"):
        try:
            mine = run(con, 'ACL ROLE "r" ' + sql, params)
        except Exception as e:  # noqa: BLE001 - a refusal is a difference like any other
            return ("refused", str(e).splitlines()[0])
        if mine[0] != native[0]:
            return ("names", f"{attempt}: native {native[0]} vs {mine[0]}")
        if not same_rows(native[1], mine[1]):
            return ("rows", f"{attempt}: native {native[1][:4]} vs {mine[1][:4]}")
    return None


def expected(exception, diff, con, sql, params):
    """Does `diff` differ exactly as the exception says?"""
    kind, what, _why = exception
    if kind == "refused":
        return diff is not None and diff[0] == "refused" and what in diff[1]
    if kind == "physical name":
        native = run(con, sql, params)[0]
        mine = run(con, 'ACL ROLE "r" ' + sql, params)[0]
        return [(n.replace(what, ""), t) for n, t in native] == mine and native != mine
    return False


RATES = {}


def make(construct, queries):
    def check(con):
        failed = []
        for entry in queries:
            sql, params = entry if isinstance(entry, tuple) else (entry, None)
            diff = compare(con, sql, params)
            exception = EXCEPTIONS.get(sql)
            if exception is not None:
                if not expected(exception, diff, con, sql, params):
                    failed.append(f"{sql}\n    listed as an exception ({exception[0]}) but: {diff}")
                continue
            if diff is not None:
                failed.append(f"{sql}\n    {diff[0]}: {diff[1]}")
        listed = sum(1 for e in queries if (e[0] if isinstance(e, tuple) else e) in EXCEPTIONS)
        RATES[construct] = (len(queries) - listed - len(failed), len(queries), listed)
        assert not failed, f"{len(failed)} of {len(queries)} differ from native:\n  " + "\n  ".join(failed)

    check.__name__ = "fidelity_" + construct.replace(" ", "_")
    return check


for _construct, _queries in CORPUS.items():
    test(make(_construct, _queries))


@test
def the_corpus_is_large_enough_and_the_rates_are_reported(_con):
    total = sum(len(q) for q in CORPUS.values())
    assert total >= 400, total
    print(f"{'construct':24s} {'equal':>6s} {'of':>4s} {'listed':>7s}")
    for construct, (ok, n, listed) in RATES.items():
        print(f"{construct:24s} {ok:6d} {n:4d} {listed:7d}")
    ok = sum(r[0] for r in RATES.values())
    listed = sum(r[2] for r in RATES.values())
    print(f"{'total':24s} {ok:6d} {total:4d} {listed:7d}")


if __name__ == "__main__":
    main(setup)
