#!/usr/bin/env python3
"""Writes the clause corpus: test/sql/security/clauses/*.test (issue 10, spec 011 "The bypass corpus").

For every statement kind the statement gate admits and every place inside it where an expression, a
table, a column or a type can stand (clause_kinds.py), one record per probe:

    legit      the principal's own table and columns
    hidden     the column the grant leaves out (ssn)
    leak       error(<name>) on a row outside the principal's slice
    physical   a physical table name (physdb.main.secret_tbl)
    ungranted  a function outside the grant (current_setting; read_csv as a table)
    never      a function never callable under a principal (acl_exec; query as a table)
    macro      a macro created unprefixed and named like a built-in (abs; range as a table)
    type       a user type (secret_mood)

Each record's outcome is fixed by the probe, never read from the extension:
  - physical, ungranted, never, type: refused by our rule, naming nothing hidden;
  - legit, leak, macro, and hidden where the column is read: the same as the native statement
    over a database that holds only the principal's view (its slice rows, its columns, no macro,
    no type): the same rows, or an error with the same text (the oracle, run here with the duckdb
    package); hidden where the write's target is the physical table: refused by the write rule;
  - a write is followed by a check of the physical tables: the hidden rows are unchanged and the
    visible ones are what the native write left.
DESCRIBE answers from the principal's read (spec 005): nullable columns without a key. Every error expectation also says that no hidden value and no physical name appears (NOLEAK).

Run: .venv/bin/python test/sql/security/clauses.py   (needs the duckdb package; the .test files
are committed)
"""
import re
import sys
from pathlib import Path

import duckdb

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[2] / "test"))
import clause_kinds as K  # noqa: E402
from runner import render  # noqa: E402

OUT = HERE / "clauses"
HIDDEN_VALUES = ("HIDDEN", "ssn-", "TOPSECRET", "falcon", "physdb", "_tbl", r"\bwork\b")
NOLEAK = r"^(?![\s\S]*(" + "|".join(HIDDEN_VALUES) + r"))[\s\S]*"

PEOPLE = [(1, "acme", "ann", "ssn-111"), (2, "globex", "HIDDEN-gil", "ssn-222"),
          (3, "initech", "HIDDEN-ivy", "ssn-333"), (4, "acme", "bob", "ssn-444")]
FEED = [(1, "acme", "ann2"), (5, "acme", "eve"), (6, "globex", "HIDDEN-fx")]
VISIBLE = lambda rows: [r for r in rows if r[1] == "acme"]  # noqa: E731


def values(rows):
    return ", ".join("(" + ", ".join(repr(v) if isinstance(v, str) else str(v) for v in r) + ")" for r in rows)


PHYSICAL = f"""statement ok
ATTACH ':memory:' AS physdb;
CREATE SCHEMA physdb.work;
CREATE TABLE physdb.main.people_tbl (id INTEGER PRIMARY KEY, tenant VARCHAR, name VARCHAR, ssn VARCHAR);
INSERT INTO physdb.main.people_tbl VALUES {values(PEOPLE)};
CREATE TABLE physdb.main.feed_tbl (id INTEGER DEFAULT 9, tenant VARCHAR DEFAULT 'acme', name VARCHAR DEFAULT 'dflt');
INSERT INTO physdb.main.feed_tbl VALUES {values(FEED)};
CREATE TABLE physdb.main.secret_tbl (x VARCHAR);
INSERT INTO physdb.main.secret_tbl VALUES ('TOPSECRET')
"""
# created unprefixed, as the gateway, an operator or an earlier session could: named like built-ins
DECOYS = """statement ok
CREATE MACRO memory.main.abs(v) AS (SELECT max(x) FROM physdb.main.secret_tbl);
CREATE MACRO memory.main.range(n) AS TABLE SELECT x FROM physdb.main.secret_tbl;
CREATE TYPE memory.main.secret_mood AS ENUM ('falcon')
"""
POLICY = """statement ok
ACL ADMIN CREATE VIRTUAL CATALOG c;
CREATE VIRTUAL TABLE c.people AS physdb.main.people_tbl;
CREATE VIRTUAL TABLE c.feed AS physdb.main.feed_tbl;
CREATE VIRTUAL SCHEMA c.ws AS physdb.work;
CREATE VIRTUAL SCALAR c.twice(v INTEGER) AS acl_arg(1) * 2;
CREATE VIRTUAL TABLE FUNCTION c.rows_of(t VARCHAR) AS SELECT id, name FROM physdb.main.people_tbl WHERE tenant = acl_arg(1) AND tenant = 'acme';
CREATE ROLE p;
GRANT CATALOG c TO ROLE p WITH (writer, temp, explain) MAIN;
GRANT TABLE c.people TO ROLE p RLS (tenant = 'acme') COLUMNS (id, tenant, name);
GRANT TABLE c.feed TO ROLE p RLS (tenant = 'acme');
GRANT SCHEMA c.ws TO ROLE p WITH (writer, create, drop)
"""
# the oracle's database: only what the principal sees
VIEW_SETUP = f"""
CREATE TABLE people (id INTEGER PRIMARY KEY, tenant VARCHAR, name VARCHAR);
INSERT INTO people VALUES {values(r[:3] for r in VISIBLE(PEOPLE))};
CREATE TABLE feed (id INTEGER DEFAULT 9, tenant VARCHAR DEFAULT 'acme', name VARCHAR DEFAULT 'dflt');
INSERT INTO feed VALUES {values(VISIBLE(FEED))};
CREATE SCHEMA ws;
CREATE MACRO twice(v) AS v * 2;
CREATE MACRO rows_of(t) AS TABLE SELECT id, name FROM people WHERE tenant = t;
"""
STATE_SQL = ("SELECT 'people', id, tenant, name, ssn FROM physdb.main.people_tbl UNION ALL "
             "SELECT 'feed', id, tenant, name, NULL FROM physdb.main.feed_tbl ORDER BY ALL")
RESET = (f"DELETE FROM physdb.main.people_tbl; INSERT INTO physdb.main.people_tbl VALUES {values(PEOPLE)};\n"
         f"DELETE FROM physdb.main.feed_tbl; INSERT INTO physdb.main.feed_tbl VALUES {values(FEED)}")


def row_forms(q):
    """Each probe as an expression over a row of people (columns written q.col)."""
    def fn(b, i, t):
        return {"b": b, "i": i, "t": t}
    return {
        "legit": fn(f"{q}id > 1", f"{q}id", f"{q}name"),
        "hidden": fn(f"{q}ssn IS NOT NULL", f"length({q}ssn)", f"{q}ssn"),
        "leak": fn(f"CASE WHEN {q}tenant = 'acme' THEN {q}id > 1 ELSE error({q}name) END",
                   f"CASE WHEN {q}tenant = 'acme' THEN {q}id ELSE error({q}name) END",
                   f"CASE WHEN {q}tenant = 'acme' THEN {q}name ELSE error({q}name) END"),
        # the column is qualified: unqualified, inside a write it is taken for the target's (and refused as such)
        "physical": fn("EXISTS (SELECT z.x FROM physdb.main.secret_tbl z)", "(SELECT length(max(z.x)) FROM physdb.main.secret_tbl z)",
                       "(SELECT max(z.x) FROM physdb.main.secret_tbl z)"),
        "ungranted": fn("current_setting('threads') IS NOT NULL", "length(current_setting('threads')::VARCHAR)",
                        "current_setting('threads')::VARCHAR"),
        "never": fn("acl_exec('SELECT 1') IS NULL", "length(acl_exec('SELECT 1')::VARCHAR)", "acl_exec('SELECT 1')::VARCHAR"),
        "macro": fn(f"abs({q}id) > 1", f"abs({q}id)", f"abs({q}id)::VARCHAR"),
        "type": fn(f"TRY_CAST({q}name AS secret_mood) IS NULL", f"length(TRY_CAST({q}name AS secret_mood)::VARCHAR)",
                   f"TRY_CAST({q}name AS secret_mood)::VARCHAR"),
    }


ROW_BASED = ("legit", "hidden", "leak", "macro", "type")
AGG = {"b": "bool_or", "i": "max", "t": "max"}


def scalar_forms():
    """Where no row is in scope: the row-based probes over people as a scalar subquery."""
    forms = row_forms("")
    for probe in ROW_BASED:
        forms[probe] = {t: f"(SELECT {AGG[t]}({e}) FROM people)" for t, e in forms[probe].items()}
    forms["macro"] = {"b": "abs(-4) > 1", "i": "abs(-4)", "t": "abs(-4)::VARCHAR"}
    return forms


def const_forms():
    """Where DuckDB takes no subquery and no column (DEFAULT, CHECK): no row, so no hidden or leak probe."""
    forms = scalar_forms()
    del forms["hidden"], forms["leak"]
    forms["legit"] = {"b": "true", "i": "5", "t": "'k'"}
    forms["type"] = {"b": "TRY_CAST('x' AS secret_mood) IS NULL", "i": "length(TRY_CAST('x' AS secret_mood)::VARCHAR)",
                     "t": "TRY_CAST('x' AS secret_mood)::VARCHAR"}
    return forms


TABLE_FORMS = {
    "legit": "people",
    "hidden": "(SELECT ssn FROM people)",
    "leak": "(SELECT id FROM people WHERE CASE WHEN tenant = 'acme' THEN true ELSE error(name) END)",
    "physical": "physdb.main.secret_tbl",
    "ungranted": "read_csv('/etc/hostname')",
    "never": "query('SELECT x FROM physdb.main.secret_tbl')",
    "macro": "range(2)",
}
NAME_FORMS = {"legit": "name", "hidden": "ssn"}
# people_tbl's columns are id, tenant, name, ssn: the principal's third is name, the fourth hidden
POSITION_FORMS = {"legit": "3", "hidden": "4"}
TYPE_FORMS = {"legit": "INTEGER", "type": "secret_mood"}

REFUSAL = {
    "physical": "acl: a table reference names a catalog",
    "type": 'acl: type "secret_mood" is not permitted',
}
FN_REFUSAL = {"ungranted": ("current_setting", "read_csv"), "never": ("acl_exec", "query")}
HIDDEN_WRITE = 'acl: column "ssn" of c.people is not granted'

ATTACK = {
    "legit": "the principal's own table and columns: the same result as natively over its slice",
    "hidden": "\"the hidden column ssn here reads what the grant leaves out\"",
    "leak": "\"error() on a row outside my slice shows its name\"",
    "physical": "\"a physical table here reads around the catalog\"",
    "ungranted": "\"a function outside my grant here\"",
    "never": "\"a never-callable function here runs SQL of my own\"",
    "macro": "\"a macro named like the built-in, in DuckDB's default schema, captures my call\"",
    "type": "\"a user type here shows its labels\"",
}

HOLE = re.compile(r"<([estcnyp])(?::([bit]))?(?::([a-z]+\.))?>")


def holes(sql):
    found = {(m.group(1), m.group(2), m.group(3) or "") for m in HOLE.finditer(sql)}
    assert len(found) <= 1, sql  # one hole (it may stand twice, e.g. DISTINCT ON and ORDER BY)
    return found.pop() if found else None


def probes_for(sql, kind, flags):
    """[(probe, filled sql)] for a template."""
    hole = holes(sql)
    if hole is None:
        return [("legit", sql)]
    h, typ, q = hole
    forms = {"e": lambda: {p: f[typ] for p, f in row_forms(q).items()},
             "s": lambda: {p: f[typ] for p, f in scalar_forms().items()},
             "c": lambda: {p: f[typ] for p, f in const_forms().items()},
             "t": lambda: TABLE_FORMS, "n": lambda: NAME_FORMS, "y": lambda: TYPE_FORMS,
             "p": lambda: POSITION_FORMS}[h]()
    out = []
    for probe, text in forms.items():
        if kind in ("MERGE", "EXPLAIN MERGE", "EXPLAIN ANALYZE MERGE") and probe in ("hidden", "leak"):
            continue  # merge_slice.test and write_columns.test hold these, clause by clause
        if kind in ("UPDATE", "DELETE") and K.T in flags and probe == "hidden":
            continue  # write_columns.test holds the hidden column in each clause of UPDATE and DELETE
        if kind.startswith("DESCRIBE") or (kind == "SHOW" and h == "t"):
            if h == "t" and probe not in ("legit", "physical"):
                continue  # a name only
        out.append((probe, HOLE.sub(lambda m, t=text: t, sql)))
    return out


def expected_refusal(probe, flags, hole_kind, kind=None, position=None, sql=""):
    """The refusal a probe must meet, in the order the rules apply: the function and type gates
    first, then a form refused whatever stands in it, then the names (resolver, write columns)."""
    if probe in FN_REFUSAL:
        name = FN_REFUSAL[probe][1 if hole_kind == "t" else 0]
        return f'acl: function "{name}" is not permitted'
    if probe == "type":
        return REFUSAL[probe]
    form = K.REFUSED_FORMS.get((kind, position))
    if form is not None and (form[1] is None or form[1](sql)):
        return form[0]
    if probe in REFUSAL:
        return REFUSAL[probe]
    # inside an UPDATE or DELETE an unqualified name may be the target's, correlated: the write
    # rule refuses a column the grant leaves out wherever it stands but in FROM / USING
    if probe == "hidden" and (K.T in flags or (kind in ("UPDATE", "DELETE") and not position.startswith(("FROM", "USING", "CTE")))):
        return HIDDEN_WRITE
    return None


class Oracle:
    """Runs a statement natively over the principal's view, in a transaction it rolls back."""

    def __init__(self):
        self.con = duckdb.connect()
        self.con.execute(VIEW_SETUP)
        self.phys = duckdb.connect()

    def run(self, sql, write):
        m = re.fullmatch(r"BEGIN; (.*); (COMMIT|ROLLBACK)", sql)
        if m:  # a batch with its own transaction: the statement in ours; a batch ends with no result
            out, state = self.run(m.group(1), write)
            return (out if out[0] == "error" else ("ok", None, None)), (
                self.state(None) if write and m.group(2) == "ROLLBACK" else state)
        con = self.con
        con.execute("BEGIN")
        try:
            res = con.execute(sql)
            if res.description is None:
                out = ("ok", None, None)
            else:
                out = ("rows", [str(d[1]) for d in res.description], res.fetchall())
            state = self.state(con) if write else None
        except duckdb.Error as e:
            out, state = ("error", str(e), None), (self.state(None) if write else None)
        finally:
            try:
                con.execute("ROLLBACK")
            except duckdb.Error:
                pass
        return out, state

    def state(self, con):
        """The physical tables as they must be: hidden rows as they were, visible ones as the view's."""
        if con is None:
            people, feed = [r[:3] for r in VISIBLE(PEOPLE)], VISIBLE(FEED)
        else:
            people = con.execute("SELECT id, tenant, name FROM people").fetchall()
            feed = con.execute("SELECT id, tenant, name FROM feed").fetchall()
        ssn = {r[0]: r[3] for r in VISIBLE(PEOPLE)}
        p = self.phys
        p.execute("DROP TABLE IF EXISTS people_tbl; DROP TABLE IF EXISTS feed_tbl;"
                  "CREATE TABLE people_tbl (id INTEGER, tenant VARCHAR, name VARCHAR, ssn VARCHAR);"
                  "CREATE TABLE feed_tbl (id INTEGER, tenant VARCHAR, name VARCHAR)")
        rows = [r for r in PEOPLE if r[1] != "acme"] + [(i, t, n, ssn.get(i)) for i, t, n in people]
        p.executemany("INSERT INTO people_tbl VALUES (?, ?, ?, ?)", rows)
        p.executemany("INSERT INTO feed_tbl VALUES (?, ?, ?)", [r for r in FEED if r[1] != "acme"] + list(feed))
        res = p.execute(STATE_SQL.replace("physdb.main.", ""))
        return [str(d[1]) for d in res.description], res.fetchall()


ORIGINAL = None


def esc(text):
    return re.escape(text).replace("\\ ", " ")


def letters(types):
    return "".join("I" if t in ("INTEGER", "BIGINT", "HUGEINT", "SMALLINT", "TINYINT") else "T" for t in types)


def rendered(types, rows):
    return ["\t".join(render(v, t) for v, t in zip(r, types)) for r in rows]


def native_error(msg):
    """What a record expects of an error the native statement also raises: its first sentence. DuckDB
    names a sliced object's binding a "Values list" where natively it is a "Table" (the slice is a
    subquery), and quotes an expression as bound (the rewrite qualifies calls): a long quoted part
    matches any text."""
    first = re.split(r"[!\n]", msg)[0].strip()
    assert len(first) > 25, msg
    parts = re.split(r'("(?:COLUMNS|\*)\(.*\)"|"[^"]{30,}")', first)
    key = "".join(r'"[\s\S]*"' if i % 2 else esc(x) for i, x in enumerate(parts))
    key = key.replace('Table "', '(?:Table|Values list) "')
    # DuckDB's parser refusal, which the rewrite passes on as its own (spec 016)
    key = key.replace(esc("Parser Error: "), esc("Parser Error: ") + "(?:" + esc(K.PARSE + ": ") + ")?", 1)
    return "<REGEX>:" + NOLEAK + key


class File:
    def __init__(self, name, description):
        self.name, self.parts, self.count = name, [
            f"# name: test/sql/security/clauses/{name}\n",
            f"# description: clause corpus — {description}\n",
            "#   GENERATED by test/sql/security/clauses.py (positions in clause_kinds.py): edit those, not this file.\n",
            "# group: [security]\n\nrequire acl\n\n", PHYSICAL, "\n", DECOYS, "\n", POLICY,
        ], 0

    def add(self, text):
        assert "\n\n" not in text.strip("\n"), text
        self.parts.append(text)
        self.count += 1

    def write(self):
        OUT.mkdir(exist_ok=True)
        (OUT / self.name).write_text("".join(self.parts), encoding="utf-8")
        return self.count


def prefixed(sql):
    return f'ACL ROLE "p" {sql}'


def record(f, oracle, kind, position, probe, sql, flags, hole_kind, explain=""):
    """One probe: the record, and after a write the check of the physical tables."""
    write = K.W in flags and explain != "EXPLAIN "
    stmt = explain + sql
    f.add(f"\n# {explain}{kind} · {position} · {probe}: {ATTACK[probe]}\n")
    refusal = expected_refusal(probe, flags, hole_kind, kind, position, sql)
    # DESCRIBE t (and SHOW t, the same statement) is answered as DESCRIBE SELECT * FROM t: what
    # the principal reads (spec 005; a read has no key and no NOT NULL to show: the principal's
    # columns are nullable, keyless)
    (out, state) = oracle.run(re.sub(r"^(?:DESCRIBE|SHOW) (?!TABLES$)(\w+)$", r"DESCRIBE SELECT * FROM \1", stmt), write)
    if re.match(r"^(DESCRIBE|SHOW) ", stmt) and stmt != "SHOW TABLES" and out[0] == "rows":
        out = (out[0], out[1], [(r[0], r[1], "YES", None) + tuple(r[4:]) for r in out[2]])
    if probe == "legit" and out[0] == "error" and refusal is None:
        raise SystemExit(f"the legitimate form fails natively: {stmt}\n  {out[1]}")
    if refusal is not None and out[0] == "error" and out[1].startswith("Parser Error"):
        # DuckDB cannot parse it either: its own parser's refusal may come first (spec 016)
        f.add(f"statement error\n{prefixed(stmt)}\n----\n<REGEX>:{NOLEAK}(?:{esc(refusal)}|{esc(K.PARSE)})\n")
        state = oracle.state(None) if write else None
    elif refusal is not None:
        f.add(f"statement error\n{prefixed(stmt)}\n----\n<REGEX>:{NOLEAK}{esc(refusal)}\n")
        state = oracle.state(None) if write else None
    elif out[0] == "error":
        f.add(f"statement error\n{prefixed(stmt)}\n----\n{native_error(out[1])}\n")
    elif out[0] == "ok" or explain:
        f.add(f"statement ok\n{prefixed(stmt)}\n")
    else:
        types, rows = out[1], out[2]
        body = "\n".join(rendered(types, rows))
        f.add(f"query {letters(types)} rowsort\n{prefixed(stmt)}\n----\n{body}\n".replace("\n\n", "\n"))
    if kind == "BATCH" and (refusal is None and out[0] == "error"):
        # DuckDB ran BEGIN and failed inside: the transaction is open and aborted (as natively)
        f.add(f"\nstatement ok\n{prefixed('ROLLBACK')}\n")
    if write:
        types, rows = state
        f.add(f"\n# the hidden rows are unchanged; the visible ones are what the native statement left\n"
              f"query {letters(types)} rowsort\n{STATE_SQL}\n----\n" + "\n".join(rendered(types, rows)) + "\n")
        if rows != ORIGINAL[1]:
            f.add(f"\nstatement ok\n{RESET}\n")


def generate_kind(f, oracle, kind, templates, explain=""):
    for position, sql, flags in templates:
        hole = holes(sql)
        for probe, filled in probes_for(sql, explain + kind, flags):
            record(f, oracle, kind, position, probe, filled, flags, hole[0] if hole else None, explain)


def main():
    global ORIGINAL
    oracle = Oracle()
    ORIGINAL = oracle.state(None)
    counts = {}
    groups = [
        ("select.test", "SELECT: every clause", [("SELECT", K.SELECT)]),
        ("insert.test", "INSERT: VALUES, SELECT, DEFAULT VALUES, ON CONFLICT, OR REPLACE/IGNORE, BY NAME, RETURNING",
         [("INSERT", K.INSERT)]),
        ("update_delete.test", "UPDATE (SET, FROM, WHERE, RETURNING) and DELETE (USING, WHERE, RETURNING)",
         [("UPDATE", K.UPDATE), ("DELETE", K.DELETE)]),
        ("merge.test", "MERGE: USING, ON, each WHEN clause kind with and without a condition, each action, RETURNING",
         [("MERGE", K.MERGE)]),
        ("ddl.test", "CREATE [TEMP] TABLE (column types, DEFAULT, CHECK, AS SELECT), CREATE [TEMP] VIEW, DESCRIBE, SHOW",
         [("CREATE", K.DDL), ("DESCRIBE", [t for t in K.META if t[0].startswith("DESCRIBE")]),
          ("SHOW", [t for t in K.META if t[0].startswith("SHOW")])]),
    ]
    for name, description, kinds in groups:
        f = File(name, description)
        for kind, templates in kinds:
            generate_kind(f, oracle, kind, templates)
        counts[name] = f.write()
    f = File("explain.test", "EXPLAIN and EXPLAIN ANALYZE of each statement kind")
    for kind, positions in K.EXPLAINED.items():
        templates = [t for t in getattr(K, kind) if t[0] in positions]
        assert len(templates) == len(positions), kind
        for explain in ("EXPLAIN ", "EXPLAIN ANALYZE "):
            generate_kind(f, oracle, kind, templates, explain)
    counts[f.name] = f.write()
    f = File("transactions.test", "BEGIN / COMMIT / ROLLBACK around a probe, as separate statements and as one batch")
    transactions(f, oracle)
    counts[f.name] = f.write()
    for name, n in counts.items():
        print(f"{name}: {n} records")


def transactions(f, oracle):
    for position, sql, flags in K.TRANSACTION:
        hole = holes(sql)
        for probe, filled in probes_for(sql, "TRANSACTION", flags):
            f.add(f"\n# transaction · BEGIN, then {position} · {probe}: {ATTACK[probe]}\nstatement ok\n{prefixed('BEGIN')}\n")
            fails = expected_refusal(probe, flags, hole[0], "TRANSACTION", position, filled) is not None or oracle.run(filled, False)[0][0] == "error"
            record(f, oracle, "TRANSACTION", position, probe, filled, tuple(x for x in flags if x != K.W), hole[0])
            f.add(f"\nstatement ok\n{prefixed('ROLLBACK' if fails else 'COMMIT')}\n")
            if K.W in flags:
                state = oracle.run(filled, True)[1] if not fails else ORIGINAL
                types, rows = state
                f.add(f"\n# after {'ROLLBACK' if fails else 'COMMIT'}: the hidden rows are unchanged\n"
                      f"query {letters(types)} rowsort\n{STATE_SQL}\n----\n" + "\n".join(rendered(types, rows)) + "\n")
                if rows != ORIGINAL[1]:
                    f.add(f"\nstatement ok\n{RESET}\n")
    generate_kind(f, oracle, "BATCH", K.BATCH)


if __name__ == "__main__":
    main()
