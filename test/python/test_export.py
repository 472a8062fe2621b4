#!/usr/bin/env python3
"""`acl_export()` end to end (spec 023, "acl_export"): the policy of one DuckDB instance,
exported, replayed with `ACL ADMIN` into a new instance holding the same physical data, exports
the same text again, and two principals (a role and a token) get the same answers in both. Shared
secrets are withheld unless asked for, and a replay of a withheld one is refused by name.

Run: python test/python/test_export.py --extension build/release/acl.duckdb_extension
Ends with `N passed, N failed`.
"""
import time

import duckdb
import jwt

import harness
from harness import sql_str, test

SECRET = "a-shared-secret-that-is-32-bytes-or-longer"
ISS = "https://idp.example/it's ü"

# Awkward names and texts throughout: quotes, unicode, keywords, `;` and `--` inside strings.
POLICY = f"""
CREATE VIRTUAL CATALOG "Wäre ""house"" x" COMMENT 'it''s; -- not a comment';
ALTER VIRTUAL CATALOG "wäre ""house"" x" SET SOURCES (phys.main);
CREATE VIRTUAL TABLE "wäre ""house"" x".docs AS phys.main.docs
    COLUMNS (id NOT NULL, tenant, body, "select" = upper(body)) PRIMARY KEY (id) COMMENT 'docs; all';
CREATE VIRTUAL TABLE "wäre ""house"" x"."from".raw AS phys.main.docs;
CREATE VIRTUAL VIEW "wäre ""house"" x".totals (tenant VARCHAR, n BIGINT NOT NULL)
    AS SELECT tenant, count(*) AS n FROM phys.main.docs GROUP BY tenant;
COMMENT ON VIRTUAL TABLE "wäre ""house"" x".docs COLUMN body IS 'the ''body''';
CREATE VIRTUAL REFERENCE "wäre ""house"" x".same FROM docs TO "from".raw ON (id = id) CARDINALITY ONE_TO_ONE;
CREATE VIRTUAL SCALAR "wäre ""house"" x".shout(s VARCHAR) AS upper(acl_arg(1)) || '!';
CREATE ROLE "Ana ""lyst""; x" CLAIMS (tenant = 'acme');
GRANT CATALOG "wäre ""house"" x" TO ROLE "ana ""lyst""; x" WITH (select) MAIN RLS (tenant = acl_claim('tenant'));
GRANT OBJECT "wäre ""house"" x".totals TO ROLE "ana ""lyst""; x" CAPS '{{}}';
CREATE ROLE writer;
GRANT CATALOG "wäre ""house"" x" TO ROLE writer WITH (select, insert, update, delete) MAIN;
GRANT TABLE "wäre ""house"" x"."from".raw TO ROLE writer RLS (tenant = acl_claim('tenant'));
CREATE RESOURCE GROUP "small ""g"" x" (max_result_rows = 100);
GRANT RESOURCE GROUP "small ""g"" x" TO ROLE writer;
CREATE ROLE ops;
GRANT ADMIN manage TO ROLE ops;
CREATE FUNCTION CATEGORY "text ""tools"" x";
ALTER FUNCTION CATEGORY "text ""tools"" x" ADD (md5);
GRANT FUNCTION CATEGORY "text ""tools"" x" TO ROLE writer;
DENY FUNCTION upper TO ROLE writer;
CREATE ISSUER {sql_str(ISS)} KEYS {sql_str('hmac:' + SECRET)} ALGS (HS256) ROLE CLAIM 'groups'
    CLAIM MAP ('org.tenant' => tenant) UNMAPPED IGNORE;
MAP CLAIM 'writers; --' FROM ISSUER {sql_str(ISS)} TO ROLE writer
"""


def node(ext):
    """A new instance with the extension and the physical data (no policy)."""
    con = duckdb.connect(":memory:", config={"allow_unsigned_extensions": "true"})
    con.execute(f"LOAD '{ext}'")
    con.execute("ATTACH ':memory:' AS phys")
    con.execute("CREATE TABLE phys.main.docs (id INTEGER, tenant VARCHAR, body VARCHAR)")
    con.execute("INSERT INTO phys.main.docs VALUES (1, 'acme', 'a1'), (2, 'globex', 'g1'), (3, 'acme', 'a2')")
    return con


def setup(ext):
    con = node(ext)
    con.execute("ACL ADMIN " + POLICY)
    return con


def export(con, secrets=False):
    rows = con.execute(f"SELECT ordinal, statement FROM acl_export(secrets := {str(secrets).lower()}) ORDER BY ordinal").fetchall()
    assert [r[0] for r in rows] == list(range(1, len(rows) + 1)), rows
    return [r[1] for r in rows]


def script(statements):
    return "ACL ADMIN " + ";\n".join(statements)


def token():
    claims = {"iss": ISS, "sub": "w", "exp": int(time.time()) + 300, "groups": ["writers; --"], "org": {"tenant": "globex"}}
    return jwt.encode(claims, SECRET, algorithm="HS256")


def answers(con):
    """What two principals read and are refused, as comparable values."""
    out = []
    for prefix in ['ACL ROLE "ana ""lyst""; x"', f"ACL TOKEN {sql_str(token())}"]:
        for q in ["SELECT id, \"select\" FROM docs ORDER BY id", "SELECT id FROM \"from\".raw ORDER BY id",
                  "SELECT * FROM totals ORDER BY tenant", "SELECT shout('x')", "SELECT md5('x')", "SELECT upper('x')"]:
            try:
                out.append(con.execute(f"{prefix} {q}").fetchall())
            except duckdb.Error as e:
                out.append(type(e).__name__)
    return out


@test
def a_replay_into_a_new_instance_exports_the_same_and_answers_the_same(con):
    first = export(con, secrets=True)
    assert any("CREATE ISSUER" in s for s in first), first
    other = node(harness.EXT)
    other.execute(script(first))
    assert export(other, secrets=True) == first
    want = answers(con)
    assert want == answers(other)
    # the answers are not all refusals: the comparison means something
    assert want[0] == [(1, "A1"), (3, "A2")] and want[1] == [(1,), (3,)], want
    assert want[6] == [(1, "A1"), (2, "G1"), (3, "A2")] and want[7] == [(2,)], want
    # the whole script, aggregated in SQL, is the same text
    agg = con.execute("SELECT 'ACL ADMIN ' || string_agg(statement, ';\n' ORDER BY ordinal) FROM acl_export(secrets := true)").fetchone()[0]
    assert agg == script(first)


@test
def shared_secrets_are_withheld_by_default_and_their_replay_is_refused(con):
    withheld = export(con)
    text = "\n".join(withheld)
    assert SECRET not in text and "hmac:<withheld by acl_export>" in text, text
    assert "-- acl_export: this issuer's shared secret is withheld" in text
    assert SECRET in "\n".join(export(con, secrets=True))
    other = node(harness.EXT)
    harness.refused_with(lambda: other.execute(script(withheld)),
                         f'acl: issuer "{ISS}": its shared secret was withheld by acl_export()')
    # the batch is all or nothing: nothing of it was applied
    assert other.execute("SELECT count(*) FROM acl_roles()").fetchone()[0] == 0


@test
def a_principal_cannot_call_it(con):
    for prefix in ['ACL ROLE "writer"', 'ACL ROLE "ops"', f"ACL TOKEN {sql_str(token())}"]:
        for q in ["SELECT * FROM acl_export()", "SELECT * FROM acl_export(secrets := true)",
                  "SELECT * FROM system.main.acl_export_of(true)", "SELECT * FROM acl_export_of(true)"]:
            harness.refused_with(lambda: con.execute(f"{prefix} {q}").fetchall(), "acl:")


if __name__ == "__main__":
    harness.main(setup)
