#!/usr/bin/env python3
"""Text we produced coming back: a client's relation over a principal's statement (spec 011,
"Text that comes back").

DuckDB's Python client keeps a statement's query text (our rewrite, tagged) and parses it again:
as it is for the relation itself, and built into a larger text for `filter`, `project`, `order`,
`limit` and `aggregate`. That text must bind DuckDB's built-ins as the first parse did (the calls
DuckDB's parser makes of syntax, `+` or EXTRACT's `date_part`, are qualified in the tree we hand
DuckDB, never in the text), and it must be refused once the policy it was decided under changed.

Run: python test/python/test_relations.py --extension build/release/acl.duckdb_extension
Ends with `N passed, N failed`.
"""

import harness
from harness import refused_with, sales, test

STALE = "acl: the policy changed since this statement was prepared; prepare it again"
UNQUALIFIED = "acl: text built on a principal's statement may call only DuckDB's built-ins unqualified"
QUERY = "ACL ROLE \"analyst\" SELECT id + 1 AS x, extract(year FROM DATE '2020-01-01') AS y FROM orders"


def setup(ext):
    con = sales(ext)
    # The gateway's own macros in the default database, named like what DuckDB's parser makes of
    # `+` and EXTRACT: an unqualified call there would bind them.
    con.execute("""CREATE MACRO "+"(a, b) AS 'captured'""").fetchall()
    con.execute("CREATE MACRO date_part(a, b) AS 'captured'").fetchall()
    con.execute("CREATE MACRO twice(a) AS a * 2").fetchall()
    return con


def captured(rows):
    return any("captured" in map(str, row) for row in rows)


@test
def a_relation_binds_the_built_ins_its_statement_was_decided_with(con):
    rel = con.sql(QUERY)
    rows = rel.fetchall()
    assert sorted(rows) == [(2, 2020), (3, 2020), (4, 2020)], rows
    assert not captured(rows), rows


@test
def a_relation_built_on_it_binds_them_too(con):
    rel = con.sql(QUERY)
    for name, fn, expected in [
        ("filter", lambda: rel.filter("x > 2").fetchall(), [(3, 2020), (4, 2020)]),
        ("project", lambda: rel.project("x, y").fetchall(), [(2, 2020), (3, 2020), (4, 2020)]),
        ("order", lambda: rel.order("x DESC").fetchall(), [(4, 2020), (3, 2020), (2, 2020)]),
        ("limit", lambda: rel.order("x").limit(1).fetchall(), [(2, 2020)]),
        ("aggregate", lambda: rel.aggregate("sum(x) AS s").fetchall(), [(9,)]),
    ]:
        rows = fn()
        assert rows == expected if name in ("order", "limit", "aggregate") else sorted(rows) == expected, (name, rows)
        assert not captured(rows), (name, rows)


@test
def its_text_parsed_again_keeps_its_tags_and_its_built_ins(con):
    text = con.sql(QUERY).sql_query()
    assert text.startswith("/* acl:policy-version="), text
    again = con.sql(text)
    assert sorted(again.fetchall()) == [(2, 2020), (3, 2020), (4, 2020)]
    # the relation made from the text keeps the tags, so the next parse is judged too
    assert again.sql_query().startswith("/* acl:policy-version="), again.sql_query()
    assert sorted(con.execute(text).fetchall()) == [(2, 2020), (3, 2020), (4, 2020)]


@test
def a_relation_built_on_it_is_refused_after_a_revoke(con):
    rel = con.sql(QUERY)
    assert len(rel.filter("x > 2").fetchall()) == 2
    con.execute("ACL ADMIN REVOKE CATALOG sales FROM ROLE analyst").fetchall()
    for fn in (lambda: rel.fetchall(), lambda: rel.filter("x > 2").fetchall(), lambda: rel.project("x").fetchall(),
               lambda: rel.order("x").fetchall(), lambda: rel.limit(1).fetchall(),
               lambda: rel.aggregate("count(*)").fetchall()):
        refused_with(fn, STALE)


@test
def a_text_built_on_it_calls_other_functions_qualified(con):
    rel = con.sql(QUERY)
    # An unqualified call in the gateway's part could only be a built-in once qualified
    # (`system.main.twice()` would be read as the method call `twice(system.main)`): refused.
    refused_with(lambda: rel.project("twice(x)").fetchall(), UNQUALIFIED)
    assert sorted(rel.project("memory.main.twice(x)").fetchall()) == [(4,), (6,), (8,)]
    # the gateway's own untagged text binds as DuckDB binds it
    assert con.execute("SELECT 1 + 1, twice(2)").fetchall() == [("captured", 4)]


@test
def our_words_inside_a_string_are_not_a_tag(con):
    # A gateway may log a statement's text as a value: only a comment is a tag, so the INSERT is
    # neither judged stale nor parsed as ours (its macro call binds as DuckDB binds it).
    text = con.sql(QUERY).sql_query()
    con.execute("ACL ADMIN CREATE ROLE bystander").fetchall()  # the text's version is stale now
    con.execute("CREATE TABLE log (q VARCHAR, n INTEGER)").fetchall()
    quoted = text.replace("'", "''")
    con.execute(f"INSERT INTO log VALUES ('{quoted}', twice(2))").fetchall()
    assert con.execute("SELECT q = $1, n FROM log", [text]).fetchall() == [(True, 4)]
    # the same text as a comment is a tag: stale
    refused_with(lambda: con.execute(f"SELECT 1 AS x FROM (SELECT 1) t WHERE true {text.split(' SELECT ', 1)[0]}").fetchall(), STALE)


if __name__ == "__main__":
    harness.main(setup)
