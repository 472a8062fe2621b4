#!/usr/bin/env python3
"""ENUM labels of hidden rows (issue 31, finding 5; spec 021): what SQL tests cannot
show — the types a client receives with the rows (the cursor's description and a relation's types
carry an ENUM with every label), a statement prepared or a relation built before
`acl_enum_types` changed, and an object's `TYPES` kept in a policy store across a restart.

Run: python test/python/test_enums.py --extension build/release/acl.duckdb_extension
Ends with `N passed, N failed`.
"""
import os
import tempfile

import duckdb

import harness
from harness import test

HIDDEN = "secret-merger-falcon"
STALE = "acl: the policy changed since this statement was prepared; prepare it again"


def setup(ext):
    con = duckdb.connect(":memory:", config={"allow_unsigned_extensions": "true"})
    con.execute(f"LOAD '{ext}'")
    con.execute("ATTACH ':memory:' AS phys")
    con.execute(f"CREATE TABLE phys.main.docs (id INTEGER, tenant VARCHAR, lvl ENUM('public', 'internal', '{HIDDEN}'))")
    con.execute(f"INSERT INTO phys.main.docs VALUES (1, 'acme', 'public'), (2, 'acme', 'internal'), (3, 'globex', '{HIDDEN}')")
    con.execute(
        "ACL ADMIN CREATE VIRTUAL CATALOG d; CREATE VIRTUAL TABLE d.files AS phys.main.docs RLS (tenant = 'acme');"
        " CREATE VIRTUAL TABLE d.notes AS phys.main.docs;"
        " CREATE ROLE reader; GRANT CATALOG d TO ROLE reader WITH (select) MAIN;"
        " CREATE ROLE writer; GRANT CATALOG d TO ROLE writer WITH (writer) MAIN RLS (tenant = 'acme')"
    )
    return con


def described(con, sql):
    """The type of `lvl` as the cursor's description gives it, and as a relation over `sql` has it."""
    desc = dict((d[0], str(d[1])) for d in con.execute(sql).description)["lvl"]
    rel = con.sql(sql)
    return desc, str(dict(zip(rel.columns, rel.types))["lvl"])


@test
def the_client_receives_no_enum_with_its_rows(con):
    # Attack: "I never call typeof: the result's column type, which my driver hands me with the
    # rows (the cursor's description, a relation's types), is the ENUM with every label"
    read = 'ACL ROLE "reader" SELECT id, lvl FROM files'
    write = 'ACL ROLE "writer" UPDATE notes SET tenant = tenant WHERE id = 1 RETURNING *'
    assert described(con, read) == ("VARCHAR", "VARCHAR"), described(con, read)
    desc = dict((d[0], str(d[1])) for d in con.execute(write).description)
    assert desc["lvl"] == "VARCHAR", desc
    # keep is the operator's choice to show DuckDB's type: every label, the hidden one included
    con.execute("ACL ADMIN ALTER VIRTUAL TABLE d.files SET TYPES (enums = keep)").fetchall()
    assert all(HIDDEN in t for t in described(con, read)), described(con, read)


@test
def parameters_bind_through_the_cast(con):
    # a parameter compared with a column takes the column's type as shown: VARCHAR, so a value that
    # is no label is simply unequal, and a label written through a parameter is cast back
    assert con.execute('ACL ROLE "reader" SELECT id FROM files WHERE lvl = ? ORDER BY id', ["public"]).fetchall() == [(1,)]
    assert con.execute('ACL ROLE "reader" SELECT id FROM files WHERE lvl = ?', ["no-such-level"]).fetchall() == []
    got = con.execute('ACL ROLE "writer" UPDATE notes SET lvl = ? WHERE id = ? AND lvl = ? RETURNING lvl, typeof(lvl)',
                      ["internal", 1, "public"]).fetchall()
    assert got == [("internal", "VARCHAR")], got
    assert con.execute("SELECT lvl FROM phys.main.docs WHERE id = 1").fetchone() == ("internal",)
    msg = harness.refused_with(lambda: con.execute('ACL ROLE "writer" UPDATE notes SET lvl = ? WHERE id = 1', ["no-such-level"]),
                               "Could not convert string 'no-such-level' to ENUM(…)")
    assert HIDDEN not in msg and "'public'" not in msg, msg


@test
def a_statement_prepared_under_keep_is_refused_once_the_setting_changes(con):
    # Attack: "prepare while the operator still runs keep, and execute after the switch": the
    # switch is a new policy version, so the decision the statement carries is stale.
    con.execute("SET GLOBAL acl_enum_types = 'keep'")
    cur = con.cursor()
    rel = cur.sql('ACL ROLE "reader" SELECT typeof(lvl) AS t FROM files WHERE id = 1')
    assert rel.fetchall() == [(f"ENUM('public', 'internal', '{HIDDEN}')",)]
    kept = cur.extract_statements('ACL ROLE "reader" SELECT typeof(lvl) AS t FROM files WHERE id > ?')[0]
    assert cur.execute(kept, [0]).fetchall()[0][0].startswith("ENUM(")
    con.execute("SET GLOBAL acl_enum_types = 'sliced'")
    for run in (rel.fetchall, lambda: cur.execute(kept, [0]).fetchall()):
        try:
            run()
        except duckdb.Error as e:
            assert STALE in str(e), str(e)
            assert HIDDEN not in str(e), str(e)
        else:
            raise AssertionError("a statement decided under keep ran after the switch")
    # made again, it is decided under the new setting
    assert cur.sql('ACL ROLE "reader" SELECT typeof(lvl) AS t FROM files WHERE id = 1').fetchall() == [("VARCHAR",)]


@test
def the_setting_is_the_instances_and_a_second_connection_sees_it(con):
    other = con.cursor()
    con.execute("SET GLOBAL acl_enum_types = 'keep'")
    assert other.execute("SELECT current_setting('acl_enum_types')").fetchone() == ("keep",)
    assert other.execute('ACL ROLE "reader" SELECT typeof(lvl) FROM files LIMIT 1').fetchone()[0].startswith("ENUM(")
    # a session may not choose for itself
    harness.refused_with(lambda: other.execute("SET SESSION acl_enum_types = 'sliced'"), "can only be set globally")
    con.execute("RESET GLOBAL acl_enum_types")
    assert other.execute('ACL ROLE "reader" SELECT typeof(lvl) FROM files LIMIT 1').fetchone() == ("VARCHAR",)


@test
def another_database_keeps_its_own_setting(con):
    other = duckdb.connect(":memory:", config={"allow_unsigned_extensions": "true"})
    other.execute(f"LOAD '{harness.EXT}'")
    con.execute("SET GLOBAL acl_enum_types = 'keep'")
    assert other.execute("SELECT current_setting('acl_enum_types')").fetchone() == ("sliced",)


@test
def an_objects_types_survive_a_restart_with_a_store(con):
    with tempfile.TemporaryDirectory() as d:
        node, store = os.path.join(d, "node.db"), os.path.join(d, "policy.db")

        def start():
            c = duckdb.connect(node, config={"allow_unsigned_extensions": "true"})
            c.execute(f"LOAD '{harness.EXT}'")
            c.execute(f"ATTACH '{store}' AS aclcat")
            return c

        first = start()
        first.execute(f"CREATE TABLE main.docs (id INTEGER, lvl ENUM('public', '{HIDDEN}'))")
        first.execute("INSERT INTO main.docs VALUES (1, 'public')")
        first.execute(
            "ACL ADMIN CREATE VIRTUAL CATALOG d; CREATE VIRTUAL TABLE d.plain AS node.main.docs TYPES (enums = varchar);"
            " CREATE ROLE reader; GRANT CATALOG d TO ROLE reader WITH (select) MAIN"
        ).fetchall()
        # init: the policy in memory is written into the new store
        first.execute("SELECT acl_use_db('aclcat', 'acl', true)").fetchall()
        stored = first.execute("SELECT declared FROM aclcat.acl.objects WHERE name = 'plain'").fetchone()
        assert stored == ('{"enums":"varchar"}',), stored
        first.close()
        second = start()
        second.execute("SELECT acl_use_db('aclcat')").fetchall()
        # RENAME form (no slice) is shown as VARCHAR only because the object says so
        assert second.execute('ACL ROLE "reader" SELECT typeof(lvl) FROM plain').fetchone() == ("VARCHAR",)
        second.close()


if __name__ == "__main__":
    harness.main(setup)
