#!/usr/bin/env python3
"""`make demo`: a short scripted scenario on an in-memory DuckDB.

A gateway sets up a virtual catalog over a physical table, grants a role read access and
another write access, then runs statements as each role; the extension rewrites them before
DuckDB binds them, and refuses what the role may not do.
"""
import argparse
import os

import duckdb


def show(con, sql):
    print(f"\n>>> {sql}")
    try:
        rows = con.execute(sql).fetchall()
        for r in rows:
            print("   ", r)
    except duckdb.Error as e:
        print("    refused:", e)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--extension", help="the extension file to LOAD")
    ap.add_argument("--wheel", action="store_true",
                    help="load it from the installed duckdb-extension-acl package instead")
    args = ap.parse_args()
    if args.wheel:
        import duckdb_extension_acl

        con = duckdb_extension_acl.connect()
    elif args.extension:
        con = duckdb.connect(":memory:", config={"allow_unsigned_extensions": "true"})
        con.execute(f"LOAD '{os.path.abspath(args.extension)}'")
    else:
        ap.error("--extension or --wheel")
    print("-- the operator's physical data (unprefixed SQL is DuckDB's own)")
    con.execute("ATTACH ':memory:' AS phys")
    con.execute("CREATE TABLE phys.main.orders (id INTEGER, customer VARCHAR, amount DECIMAL(10,2))")
    con.execute("INSERT INTO phys.main.orders VALUES (1, 'acme', 10.50), (2, 'globex', 99.00)")
    print("-- the gateway's policy, under ACL ADMIN")
    for stmt in [
        "ACL ADMIN CREATE VIRTUAL CATALOG sales",
        "ACL ADMIN CREATE VIRTUAL TABLE sales.orders AS phys.main.orders",
        "ACL ADMIN CREATE ROLE analyst",
        "ACL ADMIN CREATE ROLE clerk",
        "ACL ADMIN GRANT CATALOG sales TO ROLE analyst WITH (select) MAIN",
        "ACL ADMIN GRANT CATALOG sales TO ROLE clerk WITH (writer) MAIN",
    ]:
        show(con, stmt)
    print("\n-- statements as the roles")
    show(con, 'ACL ROLE "analyst" SELECT * FROM orders ORDER BY id')
    show(con, 'ACL ROLE "analyst" SELECT customer, sum(amount) FROM sales.orders GROUP BY ALL ORDER BY 1')
    show(con, 'ACL ROLE "analyst" DELETE FROM orders')
    show(con, 'ACL ROLE "analyst" SELECT * FROM phys.main.orders')
    show(con, "ACL ROLE \"analyst\" SELECT * FROM read_csv('/etc/passwd')")
    show(con, "ACL ROLE \"clerk\" INSERT INTO orders VALUES (3, 'initech', 7.25)")
    show(con, "ACL ROLE \"clerk\" UPDATE orders SET amount = amount * 2 WHERE id = 1")
    show(con, 'ACL ROLE "analyst" SELECT * FROM orders ORDER BY id')
    show(con, "ACL ROLE \"clerk\" ATTACH 'other.db' AS other")


if __name__ == "__main__":
    main()
