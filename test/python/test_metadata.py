#!/usr/bin/env python3
"""Metadata under a principal (spec 005): every listing has DuckDB's own column names and types
(clients read them by name), answers through prepared statements and token principals, and the
listing cache follows policy changes.

Run: python test/python/test_metadata.py --extension build/release/acl.duckdb_extension
Ends with `N passed, N failed`.
"""

import harness
from harness import sales, test

RELATIONS = [
    "information_schema.tables",
    "information_schema.columns",
    "information_schema.schemata",
    "duckdb_tables()",
    "duckdb_columns()",
    "duckdb_schemas()",
    "duckdb_databases()",
    "duckdb_views()",
]


def shape(con, sql):
    return [(d[0], str(d[1])) for d in con.execute(sql).description]


@test
def listings_have_duckdbs_own_shape(con):
    for rel in RELATIONS:
        native = shape(con, f"SELECT * FROM {rel} LIMIT 0")
        mine = shape(con, f'ACL ROLE "analyst" SELECT * FROM {rel} LIMIT 0')
        assert mine == native, (rel, mine, native)
    for stmt in ["SHOW TABLES", "SHOW ALL TABLES", "SHOW DATABASES"]:
        assert shape(con, f'ACL ROLE "analyst" {stmt}') == shape(con, stmt), stmt


@test
def prepared_listing_with_a_parameter(con):
    rows = con.execute('ACL ROLE "analyst" SELECT column_name FROM information_schema.columns WHERE table_name = ? '
                       'ORDER BY ordinal_position', ["orders"]).fetchall()
    assert rows == [("id",), ("customer",)], rows


@test
def a_policy_change_reaches_the_next_listing(con):
    q = 'ACL ROLE "analyst" SELECT table_name FROM information_schema.tables ORDER BY 1'
    assert con.execute(q).fetchall() == [("orders",)]
    con.execute("ACL ADMIN CREATE VIRTUAL TABLE sales.more AS phys.main.orders")
    assert con.execute(q).fetchall() == [("more",), ("orders",)]
    con.execute("ACL ADMIN REVOKE CATALOG sales FROM ROLE analyst")
    assert con.execute(q).fetchall() == []


@test
def other_connections_share_the_listing(con):
    q = 'ACL ROLE "analyst" SELECT count(*) FROM information_schema.columns'
    first = con.execute(q).fetchall()
    other = con.cursor()
    assert other.execute(q).fetchall() == first == [(2,)]


if __name__ == "__main__":
    harness.main(sales)
