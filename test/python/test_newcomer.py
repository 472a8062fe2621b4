#!/usr/bin/env python3
"""What a newcomer trips on (specs/003-tokens.md "Claims", specs/020): `acl_whoami(token)`, the
warning row for a claim nothing sets, and a two-tenant setup with tokens that works first time
once the issuer has a CLAIM MAP.

Run: python test/python/test_newcomer.py --extension build/release/acl.duckdb_extension
Ends with `N passed, N failed`.
"""
import time

import duckdb
import jwt

import harness
from harness import sql_str, test

SECRET = "a-shared-secret-that-is-32-bytes-or-longer"
ISS = "https://idp.example"


def setup(ext):
    con = duckdb.connect(":memory:", config={"allow_unsigned_extensions": "true"})
    con.execute(f"LOAD '{ext}'")
    con.execute("ATTACH ':memory:' AS phys")
    con.execute("CREATE TABLE phys.main.docs (id INTEGER, tenant VARCHAR, body VARCHAR)")
    con.execute("INSERT INTO phys.main.docs VALUES (1, 'acme', 'a1'), (2, 'globex', 'g1'), (3, 'acme', 'a2')")
    return con


def mint(**over):
    c = {"iss": ISS, "sub": "alice", "exp": int(time.time()) + 300, "groups": ["writers"], "org": {"tenant": "acme"}}
    c.update(over)
    return jwt.encode({k: v for k, v in c.items() if v is not None}, SECRET, algorithm="HS256")


def admin(con, sql):
    return [r[0] for r in con.execute("ACL ADMIN " + sql).fetchall()]


def warnings(rows):
    return [r for r in rows if r.startswith("warning:")]


@test
def a_claim_nothing_sets_is_a_warning_row_and_a_check_finding(con):
    rows = admin(con, "CREATE VIRTUAL CATALOG w; CREATE VIRTUAL TABLE w.docs AS phys.main.docs;"
                      " CREATE ROLE writer; GRANT CATALOG w TO ROLE writer WITH (select, insert, update, delete) MAIN;"
                      " GRANT TABLE w.docs TO ROLE writer RLS (tenant = acl_claim('tenant'))")
    warned = warnings(rows)
    assert len(warned) == 1, rows
    assert "acl_claim('tenant')" in warned[0] and "w.docs" in warned[0] and "CLAIM MAP" in warned[0], warned
    found = con.execute("SELECT kind, object, finding FROM acl_check_catalog('w')").fetchall()
    assert [f for f in found if f[0] == "claim" and "acl_claim('tenant')" in f[2]], found
    # a batch that brings no new one warns of nothing
    assert warnings(admin(con, "CREATE ROLE other")) == []
    # an issuer whose CLAIM MAP yields it: the finding is gone, and no warning
    rows = admin(con, f"CREATE ISSUER {sql_str(ISS)} KEYS {sql_str('hmac:' + SECRET)} ROLE CLAIM 'groups'"
                      " CLAIM MAP ('org.tenant' => tenant); MAP CLAIM 'writers' FROM ISSUER "
                      f"{sql_str(ISS)} TO ROLE writer")
    assert warnings(rows) == [], rows
    found = con.execute("SELECT kind FROM acl_check_catalog('w') WHERE kind = 'claim'").fetchall()
    assert found == [], found


@test
def a_role_default_also_sets_the_claim(con):
    rows = admin(con, "CREATE VIRTUAL CATALOG w; CREATE VIRTUAL TABLE w.docs AS phys.main.docs RLS (tenant = acl_claim('tenant'));"
                      " CREATE ROLE r CLAIMS (tenant = 'acme'); GRANT CATALOG w TO ROLE r WITH (select) MAIN")
    assert warnings(rows) == [], rows


@test
def whoami_shows_roles_claims_and_expiry_or_why_it_is_rejected(con):
    admin(con, "CREATE VIRTUAL CATALOG w; CREATE VIRTUAL TABLE w.docs AS phys.main.docs;"
               " CREATE ROLE writer CLAIMS (region = 'eu'); GRANT CATALOG w TO ROLE writer WITH (select) MAIN;"
               f" CREATE ISSUER {sql_str(ISS)} KEYS {sql_str('hmac:' + SECRET)} ROLE CLAIM 'groups'"
               " CLAIM MAP ('org.tenant' => tenant);"
               f" MAP CLAIM 'writers' FROM ISSUER {sql_str(ISS)} TO ROLE writer")
    exp = int(time.time()) + 300
    token = mint(exp=exp)
    rows = [r[0] for r in con.execute(f"SELECT * FROM acl_whoami({sql_str(token)})").fetchall()]
    assert "roles: writer" in rows, rows
    assert "claim tenant: 'acme'" in rows, rows
    assert "claim region: 'eu'" in rows, rows
    assert f"expires: {exp} (seconds since 1970)" in rows, rows
    assert any(r.startswith("principal: ") and "alice" in r for r in rows), rows
    # rejected tokens say why, without echoing the token
    for bad, why in [(mint(exp=int(time.time()) - 3600), "expired"), (jwt.encode({"iss": ISS, "sub": "x", "exp": int(time.time()) + 60, "groups": ["writers"]}, SECRET + "-other", algorithm="HS256"), "signature"), ("x.y.z", "malformed")]:
        rows = [r[0] for r in con.execute(f"SELECT * FROM acl_whoami({sql_str(bad)})").fetchall()]
        assert len(rows) == 1 and rows[0].startswith("rejected: acl: token rejected") and why in rows[0], (why, rows)
        assert bad not in rows[0]
    # a token whose groups map to no role
    rows = [r[0] for r in con.execute(f"SELECT * FROM acl_whoami({sql_str(mint(groups=['nobody']))})").fetchall()]
    assert len(rows) == 1 and rows[0].startswith("rejected:"), rows
    # a principal cannot call it
    try:
        con.execute(f"ACL ROLE \"writer\" SELECT * FROM acl_whoami({sql_str(token)})").fetchall()
    except duckdb.Error as e:
        assert "Permission Error" in str(e) and "acl:" in str(e), str(e)
    else:
        raise AssertionError("a principal called acl_whoami")


@test
def two_tenants_with_tokens_and_writes_work_first_time(con):
    """The README's first five minutes: an issuer WITH a CLAIM MAP, a writable tenant-isolated table."""
    rows = admin(con, "CREATE VIRTUAL CATALOG w; CREATE VIRTUAL TABLE w.docs AS phys.main.docs;"
                      " CREATE ROLE writer; GRANT CATALOG w TO ROLE writer WITH (select, insert, update, delete) MAIN;"
                      " GRANT TABLE w.docs TO ROLE writer RLS (tenant = acl_claim('tenant'));"
                      f" CREATE ISSUER {sql_str(ISS)} KEYS {sql_str('hmac:' + SECRET)} ROLE CLAIM 'groups'"
                      " CLAIM MAP ('org.tenant' => tenant);"
                      f" MAP CLAIM 'writers' FROM ISSUER {sql_str(ISS)} TO ROLE writer")
    assert warnings(rows) == [], rows
    acme, globex = mint(), mint(org={"tenant": "globex"}, sub="bob")

    def q(token, sql):
        return con.execute(f"ACL TOKEN {sql_str(token)} {sql}").fetchall()

    assert q(acme, "SELECT id FROM docs ORDER BY id") == [(1,), (3,)]
    assert q(globex, "SELECT id FROM docs ORDER BY id") == [(2,)]
    q(acme, "INSERT INTO docs (id, tenant, body) VALUES (4, 'acme', 'a3')")
    q(globex, "UPDATE docs SET body = 'changed'")
    try:
        q(acme, "INSERT INTO docs (id, tenant, body) VALUES (5, 'globex', 'sneaky')")
    except duckdb.Error as e:
        assert str(e).startswith("Permission Error: acl: a row written by INSERT is outside"), str(e)
    else:
        raise AssertionError("a row outside the tenant was written")
    assert con.execute("SELECT id, tenant, body FROM phys.main.docs ORDER BY id").fetchall() == [
        (1, "acme", "a1"), (2, "globex", "changed"), (3, "acme", "a2"), (4, "acme", "a3")]


if __name__ == "__main__":
    harness.main(setup)
