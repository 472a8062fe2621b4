#!/usr/bin/env python3
"""Prepared statements and parameters under a prefix (the SQL test format has no parameters).

Run: python test/python/test_prepared.py --extension build/release/acl.duckdb_extension
Ends with `N passed, N failed`.
"""

import duckdb

import harness
from harness import sales, test


def setup(ext):
    con = sales(ext)
    con.execute("ACL ADMIN CREATE ROLE clerk; GRANT CATALOG sales TO ROLE clerk MAIN")
    return con


@test
def question_mark_parameters(con):
    rows = con.execute('ACL ROLE "analyst" SELECT id FROM orders WHERE customer = ? ORDER BY id', ["acme"]).fetchall()
    assert rows == [(1,), (3,)], rows


@test
def dollar_parameters(con):
    rows = con.execute('ACL ROLE "analyst" SELECT id FROM orders WHERE id > $1 AND customer = $2', [1, "acme"]).fetchall()
    assert rows == [(3,)], rows


@test
def executemany_insert(con):
    con.executemany('ACL ROLE "clerk" INSERT INTO orders VALUES (?, ?)', [[10, "x"], [11, "y"]])
    assert con.execute("SELECT count(*) FROM phys.main.orders WHERE id >= 10").fetchone() == (2,)


@test
def update_with_parameters(con):
    con.execute('ACL ROLE "clerk" UPDATE orders SET customer = ? WHERE id = ?', ["initech", 2])
    assert con.execute("SELECT customer FROM phys.main.orders WHERE id = 2").fetchone() == ("initech",)


@test
def prepared_refusal_is_still_a_refusal(con):
    try:
        con.execute('ACL ROLE "analyst" DELETE FROM orders WHERE id = ?', [1])
    except duckdb.Error as e:
        assert 'acl: role "analyst" lacks delete on sales.orders' in str(e), str(e)
    else:
        raise AssertionError("DELETE with a parameter was not refused")
    assert con.execute("SELECT count(*) FROM phys.main.orders WHERE id = 1").fetchone() == (1,)


@test
def parameters_inside_a_transaction(con):
    con.execute("BEGIN")
    con.execute('ACL ROLE "clerk" DELETE FROM orders WHERE customer = ?', ["acme"])
    assert con.execute('ACL ROLE "clerk" SELECT count(*) FROM orders WHERE customer = ?', ["acme"]).fetchone() == (0,)
    con.execute("ROLLBACK")
    assert con.execute("SELECT count(*) FROM phys.main.orders WHERE customer = 'acme'").fetchone() == (2,)


@test
def a_second_connection_shares_the_policy(con):
    other = con.cursor()
    assert other.execute('ACL ROLE "analyst" SELECT count(*) FROM orders').fetchone() == (3,)


@test
def another_database_has_its_own_policy(con):
    other = duckdb.connect(":memory:", config={"allow_unsigned_extensions": "true"})
    other.execute(f"LOAD '{harness.EXT}'")
    try:
        other.execute('ACL ROLE "analyst" SELECT 1')
    except duckdb.Error as e:
        assert 'acl: role "analyst" does not exist' in str(e), str(e)
    else:
        raise AssertionError("a fresh database saw another database's roles")


if __name__ == "__main__":
    harness.main(setup)
