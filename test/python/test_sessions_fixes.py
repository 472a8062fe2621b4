#!/usr/bin/env python3
"""Fixes to the outside review of sessions (specs/017-sessions.md): what SLT cannot show —
kept statements (prepared, relations) after the issuer behind a session changed, a session's
management batch judged by its token, and the session functions called once per row whatever
the shape of their arguments.

Run: python test/python/test_sessions_fixes.py --extension build/release/acl.duckdb_extension
Ends with `N passed, N failed`.
"""
import time

import jwt

import harness
from harness import refused_with, sales, sql_str, test

SECRET = "a-shared-secret-that-is-32-bytes-or-longer"
OTHER = "hmac:another-shared-secret-that-is-32-bytes-long"
ISS = "https://idp.example"
REVOKED = "acl: session refused: the session's token no longer verifies"


def setup(ext):
    con = sales(ext)
    con.execute(f"ACL ADMIN CREATE ISSUER {sql_str(ISS)} KEYS {sql_str('hmac:' + SECRET)} ALGS (HS256)")
    con.execute("ACL ADMIN CREATE ROLE boss; GRANT ADMIN manage TO ROLE boss;"
                " GRANT CATALOG sales TO ROLE boss WITH (select) MAIN; CREATE ROLE rootish;"
                " GRANT ADMIN passthrough TO ROLE rootish")
    return con


def mint(roles=("analyst",), sub="alice"):
    claims = {"iss": ISS, "sub": sub, "exp": int(time.time()) + 300, "roles": list(roles)}
    return jwt.encode(claims, SECRET, algorithm="HS256")


def q(h, sql):
    return f"ACL SESSION {sql_str(h)} {sql}"


def open_session(con, **token):
    return con.execute("SELECT acl_session_open(?)", [mint(**token)]).fetchall()[0][0]


@test
def kept_statements_of_a_session_end_with_its_issuers_trust(con):
    for change in (f"ALTER ISSUER {sql_str(ISS)} SET KEYS {sql_str(OTHER)}", f"DROP ISSUER {sql_str(ISS)}"):
        con.execute(f"ACL ADMIN CREATE OR REPLACE ISSUER {sql_str(ISS)} KEYS {sql_str('hmac:' + SECRET)}").fetchall()
        h = open_session(con)
        cur = con.cursor()
        prepared = q(h, "SELECT count(*) FROM orders WHERE id > ?")
        assert cur.execute(prepared, [0]).fetchone()[0] == 3
        rel = con.sql(q(h, "SELECT count(*) FROM orders"))
        assert rel.fetchall() == [(3,)]
        con.execute(f"ACL ADMIN {change}").fetchall()
        refused_with(lambda: cur.execute(prepared, [0]).fetchall(), REVOKED)
        # (a kept statement is judged on the policy's version first: the change made it stale)
        refused_with(lambda: rel.fetchall(), "acl: the policy changed since this statement was prepared")
        refused_with(lambda: con.sql(q(h, "SELECT 1")).fetchall(), REVOKED)
        assert con.execute("SELECT acl_session_reason(?)", [h]).fetchone()[0] == "revoked"


@test
def a_live_session_survives_changes_its_token_still_verifies_under(con):
    h = open_session(con)
    cur = con.cursor()
    prepared = q(h, "SELECT count(*) FROM orders WHERE id > ?")
    for change in ("CREATE ROLE unrelated", f"ALTER ISSUER {sql_str(ISS)} SET ALGS (HS256, HS384)",
                   f"ALTER ISSUER {sql_str(ISS)} SET UNMAPPED IGNORE"):
        con.execute(f"ACL ADMIN {change}").fetchall()
        assert cur.execute(prepared, [1]).fetchone()[0] == 2, change
    listed = con.execute("SELECT issuer, roles FROM acl_sessions()").fetchall()
    assert listed == [(ISS, "analyst")], listed


@test
def a_sessions_batch_cannot_widen_its_token_in_any_spelling(con):
    token = mint(roles=["boss", "ghost"], sub="bob")
    h = con.execute("SELECT acl_session_open(?)", [token]).fetchone()[0]
    for batch in ["MAP CLAIM 'boss' FROM ISSUER 'https://idp.example' TO ROLE rootish",
                  "MAP GROUP 'boss' FROM ISSUER 'https://idp.example' TO ROLE rootish",
                  "CREATE ROLE ghost; GRANT CATALOG sales TO ROLE ghost WITH (select, delete) MAIN",
                  "CREATE ROLE bob; CREATE OR REPLACE ISSUER 'https://idp.example' KEYS 'hmac:" + SECRET + "' ROLE CLAIM 'sub'"]:
        msg = refused_with(lambda: con.execute(q(h, "ACL " + batch)).fetchall(), "after this batch: no scope grants itself more")
        assert h not in msg
        # the same through the token, and through a management call naming the session by id
        refused_with(lambda: con.execute(f"ACL TOKEN {sql_str(token)} ACL {batch}").fetchall(), "after this batch")
    refused_with(lambda: con.execute(f"ACL TOKEN {sql_str(token)} ACL NATIVE SELECT 1").fetchall(), "lacks passthrough")
    assert con.execute("SELECT count(*) FROM acl_roles() WHERE name IN ('ghost', 'bob')").fetchone()[0] == 0
    assert con.execute(q(h, "SELECT count(*) FROM orders")).fetchone()[0] == 3


@test
def every_session_function_runs_once_per_row_whatever_its_arguments(con):
    t = mint()
    # constant token and door; a parameter; a column
    rows = con.execute("SELECT acl_session_open(?, 'flight') FROM range(3)", [t]).fetchall()
    assert len({r[0] for r in rows}) == 3, rows
    rows = con.execute("SELECT acl_session_open(t, d) FROM (SELECT ? AS t, 'x' || i::VARCHAR AS d FROM range(3) r(i))", [t]).fetchall()
    assert len({r[0] for r in rows}) == 3, rows
    assert con.execute("SELECT count(*) FROM acl_sessions() WHERE door = 'flight'").fetchone()[0] == 3
    h = rows[0][0]
    assert con.execute("SELECT list(acl_session_close(?)) FROM range(4)", [h]).fetchone()[0] == [True, False, False, False]
    ids = [r[0] for r in con.execute("SELECT id FROM acl_sessions() WHERE door = 'flight'").fetchall()]
    assert con.execute("SELECT list(acl_session_kill(?)) FROM range(3)", [ids[0]]).fetchone()[0] == [True, False, False]
    assert con.execute("SELECT list(acl_session_reason(?)) FROM range(2)", [h]).fetchone()[0] == ["closed", "closed"]
    # NULLs answer NULL, row by row
    assert con.execute("SELECT acl_session_open(NULL), acl_session_open(?, NULL), acl_session_close(NULL)", [t]).fetchall() == [(None, None, None)]
    before = con.execute("SELECT acl_session_count()").fetchone()[0]
    assert con.execute("SELECT list(acl_session_count()) FROM range(2)").fetchone()[0] == [before, before]


if __name__ == "__main__":
    harness.main(setup)
