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
def show_and_pragma_forms_have_duckdbs_own_shape(con):
    # issue 34, item 5: each form against the same statement run natively
    con.execute("CREATE SCHEMA phys.eu")
    con.execute("CREATE TABLE phys.eu.orders_eu (id INTEGER)")
    con.execute("ACL ADMIN CREATE VIRTUAL TABLE sales.eu.orders AS phys.eu.orders_eu")
    pairs = [
        ("SHOW SCHEMAS", "SHOW SCHEMAS"),
        ("SHOW TABLES FROM eu", "SHOW TABLES FROM phys.eu"),
        ("SHOW TABLES FROM sales", "SHOW TABLES FROM phys"),
        ("SHOW TABLES FROM sales.eu", "SHOW TABLES FROM phys.eu"),
        ("PRAGMA show_tables", "PRAGMA show_tables"),
        ("PRAGMA show_tables_expanded", "PRAGMA show_tables_expanded"),
        ("PRAGMA show_databases", "PRAGMA show_databases"),
        ("PRAGMA table_info('orders')", "PRAGMA table_info('phys.main.orders')"),
        ("PRAGMA table_info = 'sales.eu.orders'", "PRAGMA table_info('phys.eu.orders_eu')"),
        ("SELECT * FROM duckdb_tables", "SELECT * FROM duckdb_tables"),
        ("SELECT * FROM duckdb_columns", "SELECT * FROM duckdb_columns"),
        ("SELECT * FROM duckdb_views", "SELECT * FROM duckdb_views"),
        ("SELECT * FROM main.duckdb_tables", "SELECT * FROM main.duckdb_tables"),
    ]
    for mine, native in pairs:
        assert shape(con, f'ACL ROLE "analyst" {mine}') == shape(con, native), (mine, native)
    # the answers, against DuckDB's own over the physical objects under the virtual names
    assert con.execute('ACL ROLE "analyst" PRAGMA table_info(\'orders\')').fetchall() == con.execute(
        "PRAGMA table_info('phys.main.orders')"
    ).fetchall()
    assert con.execute('ACL ROLE "analyst" SHOW TABLES FROM eu').fetchall() == [("orders",)]
    assert con.execute('ACL ROLE "analyst" SHOW SCHEMAS').fetchall() == [("sales", "eu", False), ("sales", "main", True)]
    native_sql = con.execute("SELECT sql FROM duckdb_tables() WHERE table_name = 'orders'").fetchall()
    assert con.execute('ACL ROLE "analyst" SELECT sql FROM duckdb_tables WHERE schema_name = \'main\'').fetchall() == native_sql


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
