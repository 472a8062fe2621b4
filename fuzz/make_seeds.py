#!/usr/bin/env python3
"""Seeds the fuzz corpora from the SQL logic tests: every record's SQL (prefixed batches for
`prefix`; each statement with its prefix stripped for `rewrite`, one file per principal byte),
the fidelity corpus (test/python/fidelity, spec 016) and DuckDB's prints of the constructs read
from them (`PRINTED`: the `rewrite` target also reads every input as such a print).
Writes <out>/<target>/<sha1> (default fuzz/seeds; give another directory to reduce the candidates
with libFuzzer's -merge=1 into fuzz/seeds, as README.md says); run from anywhere:
python3 fuzz/make_seeds.py [out]"""
import hashlib
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else ROOT / "fuzz" / "seeds"
MAX = 4096
PREFIX = re.compile(r"""^\s*(?:(?:--[^\n]*\n|/\*.*?\*/)\s*)*ACL\s+(?:ROLE\s+(?:"(?:[^"]|"")*"|\S+)|TOKEN\s+'[^']*'|SESSION\s+'[^']*'|ADMIN)\s*""", re.S | re.I)


def records(text):
    lines, i = text.split("\n"), 0
    while i < len(lines):
        words = lines[i].strip().split()
        i += 1
        if words and words[0] in ("statement", "query"):
            block = []
            while i < len(lines) and lines[i].strip():
                if lines[i].strip() == "----":
                    while i < len(lines) and lines[i].strip():
                        i += 1
                    break
                block.append(lines[i])
                i += 1
            yield "\n".join(block)


def write(target, data):
    if len(data) > MAX:
        return 0
    d = OUT / target
    d.mkdir(parents=True, exist_ok=True)
    p = d / hashlib.sha1(data).hexdigest()
    if p.exists():
        return 0
    p.write_bytes(data)
    return 1


# DuckDB's prints (`ToString()`) of the constructs the rewrite reads from them (spec 016): operators
# sqlparser has no rule for, positions, star patterns, and every clause cut out and put back.
PRINTED = [
    "SELECT (2 ** 10), ('hello' ^@ 'he'), (list_value(1, 2) && list_value(2, 3)), (@(-5)), factorial(5)",
    "SELECT id FROM orders WHERE (status ~~~ 'sh*') AND (note !~~~ 'x*')",
    "SELECT #1, #2 FROM orders ORDER BY #1",
    "SELECT (* ~~ 'a%'), (* !~~ 'b%'), regexp_full_match(*, 'q.*') FROM orders",
    "SELECT * FROM orders LIMIT (50) %",
    "SELECT count_star() AS \"count_star()\" FROM orders USING SAMPLE 3 (Reservoir, 42)",
    "SELECT id FROM orders QUALIFY (row_number() OVER () < 3) USING SAMPLE 50.0% (System)",
    "SELECT count_star() FROM orders AS o TABLESAMPLE Reservoir(50.0 PERCENT)REPEATABLE (7)",
    "SELECT sum(qty) OVER (PARTITION BY a ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW EXCLUDE CURRENT ROW) FROM orders",
    "SELECT t.ticker, p.price FROM (trades AS t ASOF LEFT JOIN prices AS p ON (((t.ticker = p.ticker) AND (t.ts >= p.ts))))",
    "SELECT * FROM (trades AS t ASOF INNER JOIN prices AS p USING (ticker, ts))",
    "SELECT o.id, c.name FROM ((orders AS o POSITIONAL JOIN customers AS c) POSITIONAL JOIN range(3) AS r(x))",
    "SELECT * FROM orders POSITIONAL JOIN customers WHERE (id > 1)",
    "WITH RECURSIVE r (n) USING KEY (n)  AS ((SELECT 1) UNION (SELECT (n + 1) FROM r WHERE (n < 4))) SELECT * FROM r",
    "SELECT * FROM sales PIVOT (sum(amount) FOR (\"quarter\") IN ('Q1', 'Q2') GROUP BY \"year\")",
    "SELECT * FROM wide UNPIVOT (amount FOR \"quarter\" IN (q1, q2, q3))",
    "SELECT * FROM (DESCRIBE (SELECT * FROM orders))",
    "SELECT column_name FROM (SUMMARIZE (SELECT * FROM orders))",
    "SELECT count_star() FROM (DESCRIBE \"tables\")",
    "SELECT count_star() FROM (DESCRIBE )",
    "SUMMARIZE (SELECT * FROM orders)",
    "EXPLAIN (ANALYZE) SELECT * FROM orders",
    "SELECT list_apply(list_filter(list_apply(list_value(1, 2), (lambda x: struct_pack(\"filter\" := (x > 1), result := x))), (lambda elem: struct_extract(elem, 'filter'))), (lambda elem: struct_extract(elem, 'result'))) AS l",
    "SELECT status.upper(), upper('abc'), length(note.lower()) FROM orders",
    "SELECT id, u.x FROM (nested CROSS JOIN unnest(nums) AS u(x))",
    "SELECT last_value(v IGNORE NULLS) OVER (PARTITION BY sensor ORDER BY t) FROM readings",
    "SELECT count_star() FILTER (WHERE (status = 'shipped')) AS shipped FROM orders",
    "UPDATE people SET name = #4",
    "DELETE FROM people WHERE to_json((* ~~ 'ss%')) IS NULL",
]


def fidelity():
    """The fidelity corpus' queries (test/python/fidelity/corpus_*.py)."""
    import importlib.util
    out = []
    for f in sorted((ROOT / "test" / "python" / "fidelity").glob("corpus_*.py")):
        spec = importlib.util.spec_from_file_location(f.stem, f)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        for queries in mod.QUERIES.values():
            out.extend(q[0] if isinstance(q, tuple) else q for q in queries)
    return out


def main():
    counts = {"prefix": 0, "rewrite": 0}
    statements = set()
    for f in sorted((ROOT / "test" / "sql").rglob("*.test")):
        for sql in records(f.read_text(encoding="utf-8")):
            if not sql.strip():
                continue
            counts["prefix"] += write("prefix", b"\x00" + sql.encode())
            m = PREFIX.match(sql)
            if not m or sql[: m.end()].upper().rstrip().endswith("ADMIN"):
                continue
            for stmt in sql[m.end():].split(";"):
                if stmt.strip():
                    statements.add(stmt.strip())
    statements.update(fidelity())
    statements.update(PRINTED)
    for i, stmt in enumerate(sorted(statements)):
        # spread the statements over the fixture's principals (first byte)
        counts["rewrite"] += write("rewrite", bytes([i % 5]) + stmt.encode())
    print(counts)


if __name__ == "__main__":
    main()
