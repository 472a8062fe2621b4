#!/usr/bin/env python3
"""Administration scopes under a token, and what outlives a policy change (specs/007), with
tokens minted by PyJWT:

- `ACL TOKEN '…' ACL <management>` runs under the scopes of the roles the token maps to;
- a token principal's batch may not leave it holding a role it did not hold (a mapping of its
  own claim value, a role created under a name its token carries);
- a statement prepared under `ACL NATIVE` does not outlive the policy it was judged under
  (passthrough revoked), nor the token's `exp`.

Run: python test/python/test_admin.py --extension build/release/acl.duckdb_extension
"""
import time

import duckdb
import jwt

import harness
from harness import sales, sql_str, test

ISS = "https://idp.example"
SECRET = "a-shared-secret-for-the-admin-tests-32b"
STALE = "acl: the policy changed since this statement was prepared; prepare it again"


def setup(ext):
    con = sales(ext)
    con.execute("CREATE TABLE phys.main.staff (id INTEGER, salary INTEGER)")
    con.execute(
        f"ACL ADMIN CREATE ISSUER {sql_str(ISS)} KEYS {sql_str('hmac:' + SECRET)} ROLE CLAIM 'groups';"
        " CREATE VIRTUAL CATALOG hr; CREATE VIRTUAL TABLE hr.staff AS phys.main.staff;"
        " CREATE ROLE sales_ops; GRANT CATALOG sales TO ROLE sales_ops WITH (manage);"
        " ALTER VIRTUAL CATALOG sales SET SOURCES (phys.main);"
        " CREATE ROLE platform; GRANT ADMIN manage TO ROLE platform;"
        " CREATE ROLE root; GRANT ADMIN passthrough TO ROLE root;"
        f" MAP CLAIM 'sales-team' FROM ISSUER {sql_str(ISS)} TO ROLE sales_ops;"
        f" MAP CLAIM 'ops' FROM ISSUER {sql_str(ISS)} TO ROLE platform;"
        f" MAP CLAIM 'admins' FROM ISSUER {sql_str(ISS)} TO ROLE root"
    )
    return con


def token(groups, sub="ann", exp_in=300):
    claims = {"iss": ISS, "sub": sub, "exp": int(time.time()) + exp_in, "groups": groups}
    return jwt.encode(claims, SECRET, algorithm="HS256")


def as_token(con, tok, body):
    return con.execute(f"ACL TOKEN {sql_str(tok)} {body}").fetchall()


def refused(con, tok, body, text):
    try:
        as_token(con, tok, body)
    except duckdb.Error as e:
        assert text in str(e), str(e)
        assert tok not in str(e)
        return
    raise AssertionError(f"not refused: {body}")


def roles(con):
    return {r for (r,) in con.execute("SELECT name FROM acl_roles()").fetchall()}


@test
def a_token_administers_with_the_scopes_of_its_roles(con):
    tok = token(["sales-team"])
    as_token(con, tok, "ACL CREATE VIRTUAL TABLE sales.mine AS phys.main.orders RLS (customer = 'acme')")
    assert con.execute('ACL ROLE "analyst" SELECT count(*) FROM mine').fetchone()[0] == 2
    label = 'token of "ann"'
    refused(con, tok, "ACL GRANT CATALOG sales TO ROLE analyst WITH (select, delete)", f"acl: {label} lacks global manage (GRANT CATALOG)")
    refused(con, tok, "ACL CREATE VIRTUAL TABLE hr.copy AS phys.main.orders", f"acl: {label} lacks manage on hr (CREATE VIRTUAL TABLE)")
    refused(con, tok, "ACL NATIVE SELECT 1", f"acl: {label} lacks passthrough (ACL NATIVE)")
    # managing does not imply reading
    refused(con, tok, "SELECT count(*) FROM sales.orders", f"acl: {label} lacks select on sales.orders")
    # two groups: the union of the roles' scopes
    both = token(["sales-team", "ops"])
    as_token(con, both, "ACL CREATE ROLE helper; GRANT CATALOG hr TO ROLE helper WITH (select) MAIN")
    assert con.execute('ACL ROLE "helper" SELECT count(*) FROM staff').fetchone()[0] == 0
    refused(con, both, "ACL GRANT CATALOG hr TO ROLE sales_ops", "may not change what role \"sales_ops\" is granted")
    # a token that does not verify administers nothing
    refused(con, token(["ops"], exp_in=-3600), "ACL CREATE ROLE late", "acl: token rejected: expired")
    assert "late" not in roles(con)


@test
def a_token_may_not_leave_its_batch_holding_more_roles(con):
    tok = token(["ops", "newcomers"])
    label = 'token of "ann"'
    # mapping its own claim value to another role would give it that role
    refused(con, tok, f"ACL MAP CLAIM 'ops' FROM ISSUER {sql_str(ISS)} TO ROLE root",
            f'acl: {label} would hold role "root" after this batch: no scope grants itself more')
    # so would creating the role its token's unmapped value names (it counts once it exists)
    refused(con, tok, "ACL CREATE ROLE newcomers; GRANT CATALOG hr TO ROLE newcomers WITH (select)",
            f'acl: {label} would hold role "newcomers" after this batch')
    assert "newcomers" not in roles(con)
    # re-creating its issuer so that other values count, the same
    refused(con, tok, f"ACL ALTER ISSUER {sql_str(ISS)} SET ROLE CLAIM 'sub'; CREATE ROLE ann",
            f'acl: {label} would hold role "ann" after this batch')
    # for a value its token does not carry, ordinary global manage
    as_token(con, tok, f"ACL CREATE ROLE auditors; MAP CLAIM 'audit' FROM ISSUER {sql_str(ISS)} TO ROLE auditors")
    assert "auditors" in roles(con)
    # nothing the refused batches did is there
    maps = con.execute("SELECT value, role FROM acl_role_mappings() ORDER BY value, role").fetchall()
    assert maps == [("admins", "root"), ("audit", "auditors"), ("ops", "platform"), ("sales-team", "sales_ops")], maps


@test
def a_native_statement_does_not_outlive_its_passthrough(con):
    cur = con.cursor()
    rel = cur.sql('ACL ROLE "root" ACL NATIVE SELECT count(*) FROM phys.main.orders')
    assert rel.fetchall() == [(3,)]
    con.execute('ACL ADMIN REVOKE ADMIN FROM ROLE root').fetchall()
    try:
        rel.fetchall()
    except duckdb.Error as e:
        assert STALE in str(e), str(e)
    else:
        raise AssertionError("a native statement prepared under passthrough ran after it was revoked")
    try:
        cur.sql('ACL ROLE "root" ACL NATIVE SELECT 1').fetchall()
    except duckdb.Error as e:
        assert 'acl: role "root" lacks passthrough (ACL NATIVE)' in str(e), str(e)
    else:
        raise AssertionError("native without passthrough")


@test
def native_sql_runs_as_written_with_parameters(con):
    tok = token(["admins"])
    rows = con.execute(f"ACL TOKEN {sql_str(tok)} ACL NATIVE SELECT id FROM phys.main.orders WHERE customer = ? ORDER BY id",
                       ["acme"]).fetchall()
    assert rows == [(1,), (3,)], rows
    con.executemany('ACL ROLE "root" ACL NATIVE INSERT INTO phys.main.staff VALUES (?, ?)', [[1, 10], [2, 20]])
    assert con.execute("SELECT count(*) FROM phys.main.staff").fetchone()[0] == 2


if __name__ == "__main__":
    harness.main(setup)
