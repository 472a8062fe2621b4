#!/usr/bin/env python3
"""No replacement scan runs for a principal's statement (spec 005, "Replacement scans").

DuckDB hands a table name it cannot find to its replacement scans, which read a file of that name
(`phys.main.data.csv`, `temp.main.__acl_…_x.csv`) or, in Python, a variable. Under a principal
every name is one the rewrite placed, so a missing one must be a missing table, never a file.

Run: python test/python/test_replacement_scans.py --extension build/release/acl.duckdb_extension
"""
import os
import shutil
import tempfile

import duckdb

import harness
from harness import test


def setup(ext):
    con = duckdb.connect(":memory:", config={"allow_unsigned_extensions": "true"})
    con.execute(f"LOAD '{ext}'")
    con.execute("ATTACH ':memory:' AS phys")
    con.execute("CREATE TABLE phys.main.t (x INTEGER)")
    # c.gone's source exists when it is written, and is dropped after: a drifted object
    con.execute("CREATE TABLE phys.main.gone_data (x INTEGER)")
    con.execute(
        "ACL ADMIN CREATE VIRTUAL CATALOG c; CREATE VIRTUAL SCHEMA c.s AS phys.main;"
        " CREATE VIRTUAL TABLE c.gone AS phys.main.gone_data;"
        " CREATE ROLE r; GRANT SCHEMA c.s TO ROLE r WITH (select); GRANT CATALOG c TO ROLE r WITH (select, temp) MAIN"
    )
    con.execute("DROP TABLE phys.main.gone_data")
    return con


class InDirectory:
    """Runs the body with a fresh temporary directory as the working directory, holding `files`."""

    def __init__(self, files):
        self.files = files

    def __enter__(self):
        self.old, self.dir = os.getcwd(), tempfile.mkdtemp(prefix="acl-rs-")
        os.chdir(self.dir)
        for name in self.files:
            with open(name, "w") as f:
                f.write("a,b\n1,secret\n")
        return self

    def __exit__(self, *exc):
        os.chdir(self.old)
        shutil.rmtree(self.dir, ignore_errors=True)


def refused(con, sql, expected):
    try:
        rows = con.execute(sql).fetchall()
    except duckdb.Error as e:
        assert expected in str(e) and "secret" not in str(e), str(e)
        return
    raise AssertionError(f"ran and returned {rows}: {sql}")


@test
def a_name_in_a_virtual_schema_never_reads_a_file(con):
    # Attack: "name a table in my virtual schema after a file in the node's working directory;
    # DuckDB does not find the table and reads the file instead"
    with InDirectory(["phys.main.data.csv", "phys.main.gone_data.csv"]):
        assert con.execute("SELECT b FROM 'phys.main.data.csv'").fetchall() == [("secret",)]  # natively a file
        refused(con, 'ACL ROLE "r" SELECT * FROM c.s."data.csv"', "Table with name data.csv does not exist")
        refused(con, 'ACL ROLE "r" SELECT * FROM gone', "acl: virtual table c.gone no longer matches its source")  # drift (spec 020)
        # the gateway's own statements keep DuckDB's replacement scans, before and after
        assert con.execute("SELECT b FROM 'phys.main.data.csv'").fetchall() == [("secret",)]


@test
def a_temporary_name_never_reads_a_file(con):
    # Attack: "with temp, a bare name that is no virtual object becomes my temp table's name: if
    # there is no such temp table, DuckDB tries a file of that name"
    with InDirectory(["data.csv"]):
        refused(con, "ACL ROLE \"r\" SELECT * FROM 'data.csv'", "Table with name data.csv does not exist")
        refused(con, 'ACL ROLE "r" SELECT * FROM "data.csv"', "Table with name data.csv does not exist")
        assert con.execute("SELECT b FROM 'data.csv'").fetchall() == [("secret",)]


@test
def a_prepared_principal_statement_keeps_them_off(con):
    with InDirectory(["phys.main.data.csv"]):
        for _ in range(2):  # the second run is a batch-cache hit
            try:
                con.execute('ACL ROLE "r" SELECT * FROM c.s."data.csv" WHERE 1 = ?', [1]).fetchall()
            except duckdb.Error as e:
                assert "Table with name data.csv does not exist" in str(e) and "secret" not in str(e), str(e)
            else:
                raise AssertionError("ran")


if __name__ == "__main__":
    harness.main(setup)
