#!/usr/bin/env python3
"""Tokens and the reference system's rules (specs/003-tokens.md), with tokens minted by PyJWT:

- "Token to roles": a role-claim value with no MAP CLAIM/MAP GROUP counts when it names an
  existing role; `UNMAPPED IGNORE` makes the issuer's claim go through mappings only;
- keys read `KEYS FROM` a file are read again every `acl_jwks_refresh_interval` seconds; while
  the file cannot be read the last keys stay valid for `acl_jwks_max_stale` seconds, then the
  issuer's tokens are refused.

Run: python test/python/test_token_roles.py --extension build/release/acl.duckdb_extension
"""
import os
import tempfile
import threading
import time

import duckdb
import jwt

import harness
from harness import sales, sql_str, test

ISS = "https://idp.example"
SECRET_A = "the-first-shared-secret-of-32-bytes-or-more"
SECRET_B = "the-second-shared-secret-of-32-bytes-or-more"


def setup(ext):
    con = sales(ext)
    con.execute("ACL ADMIN CREATE ROLE clerk; GRANT TABLE sales.orders TO ROLE clerk WITH (select) RLS (customer = 'acme')")
    return con


def token(secret=SECRET_A, iss=ISS, **over):
    c = {"iss": iss, "sub": "alice", "exp": int(time.time()) + 300, "groups": ["analyst"]}
    c.update(over)
    return jwt.encode({k: v for k, v in c.items() if v is not None}, secret, algorithm="HS256")


def count(con, tok, sql="SELECT count(*) FROM sales.orders"):
    return con.execute(f"ACL TOKEN {sql_str(tok)} {sql}").fetchone()[0]


def refused(con, tok, reason):
    try:
        count(con, tok)
    except duckdb.Error as e:
        assert f"acl: token rejected: {reason}" in str(e), str(e)
        assert tok not in str(e)
    else:
        raise AssertionError(f"token was not refused (expected: {reason})")


def eventually(f, timeout=3.0):
    """`f()` once it stops failing: a keys file is read by a thread of its own, which the statement
    that finds the read due starts and does not wait for."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return f()
        except (AssertionError, duckdb.Error):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def issuer(con, extra=""):
    con.execute(f"ACL ADMIN CREATE ISSUER '{ISS}' KEYS 'hmac:{SECRET_A}' ROLE CLAIM 'groups' {extra}")


@test
def a_role_name_without_a_mapping_counts(con):
    issuer(con)
    assert count(con, token()) == 3
    # the role's own slice, as with ACL ROLE "clerk"
    assert count(con, token(groups="clerk")) == 2
    assert count(con, token(groups=["Clerk", "not-a-role"])) == 2
    refused(con, token(groups=["not-a-role"]), "no role is mapped for this token")


@test
def a_mapped_value_goes_through_its_mapping_only(con):
    issuer(con)
    # MAP GROUP (the reference's name) maps exactly as MAP CLAIM does
    con.execute(f"ACL ADMIN MAP GROUP 'analyst' FROM ISSUER '{ISS}' TO ROLE clerk")
    assert count(con, token()) == 2, "the value names a role, but its mapping decides"
    con.execute(f"ACL ADMIN DROP MAP GROUP 'analyst' FROM ISSUER '{ISS}'")
    assert count(con, token()) == 3


@test
def unmapped_ignore_goes_through_mappings_only(con):
    issuer(con, "UNMAPPED IGNORE")
    refused(con, token(), "no role is mapped for this token")
    con.execute(f"ACL ADMIN MAP CLAIM 'ops' FROM ISSUER '{ISS}' TO ROLE analyst")
    assert count(con, token(groups=["ops", "clerk"])) == 3, "clerk is not mapped and does not count"
    # ALTER ISSUER switches it, keeping the issuer's keys and mappings
    con.execute(f"ACL ADMIN ALTER ISSUER '{ISS}' SET UNMAPPED COUNT")
    assert count(con, token(groups=["clerk"])) == 2
    assert count(con, token(groups=["ops"])) == 3
    con.execute(f"ACL ADMIN ALTER ISSUER '{ISS}' SET UNMAPPED IGNORE")
    refused(con, token(groups=["clerk"]), "no role is mapped for this token")
    # a cached verification does not outlive the change
    tok = token(groups=["clerk"], sub="bob")
    con.execute(f"ACL ADMIN ALTER ISSUER '{ISS}' SET UNMAPPED COUNT")
    assert count(con, tok) == 2
    con.execute(f"ACL ADMIN ALTER ISSUER '{ISS}' SET UNMAPPED IGNORE")
    refused(con, tok, "no role is mapped for this token")


@test
def a_dropped_role_no_longer_counts(con):
    issuer(con)
    tok = token(groups=["clerk"])
    assert count(con, tok) == 2
    con.execute("ACL ADMIN DROP ROLE clerk")
    refused(con, tok, "no role is mapped for this token")


@test
def drop_issuer_drops_its_mappings(con):
    issuer(con)
    con.execute(f"ACL ADMIN MAP GROUP 'ops' FROM ISSUER '{ISS}' TO ROLE clerk")
    tok = token(groups=["ops"])
    assert count(con, tok) == 2
    con.execute(f"ACL ADMIN DROP ISSUER '{ISS}'")
    con.execute(f"ACL ADMIN DROP ISSUER IF EXISTS '{ISS}'")
    try:
        con.execute(f"ACL ADMIN DROP ISSUER '{ISS}'")
    except duckdb.Error as e:
        assert "does not exist" in str(e), str(e)
    else:
        raise AssertionError("DROP ISSUER of a dropped issuer succeeded")
    refused(con, tok, "unknown issuer")
    # the issuer made again: the old mapping is gone with it
    issuer(con)
    refused(con, tok, "no role is mapped for this token")


@test
def alter_issuer_set_keys_keeps_the_mappings(con):
    issuer(con)
    con.execute(f"ACL ADMIN MAP GROUP 'ops' FROM ISSUER '{ISS}' TO ROLE clerk")
    old = token(groups=["ops"])
    assert count(con, old) == 2
    con.execute(f"ACL ADMIN ALTER ISSUER '{ISS}' SET KEYS 'hmac:{SECRET_B}'")
    refused(con, old, "bad signature")
    assert count(con, token(SECRET_B, groups=["ops"])) == 2, "the mapping stays"
    # an audience now required: a token without one is refused
    con.execute(f"ACL ADMIN ALTER ISSUER '{ISS}' SET AUDIENCES 'gw'")
    refused(con, token(SECRET_B, groups=["ops"], sub="x"), "wrong audience")
    assert count(con, token(SECRET_B, groups=["ops"], aud="gw")) == 2


@test
def the_jwks_settings_are_registered(con):
    got = dict(con.execute(
        "SELECT name, value FROM duckdb_settings() WHERE name IN ('acl_jwks_refresh_interval', 'acl_jwks_max_stale')"
    ).fetchall())
    assert got == {"acl_jwks_refresh_interval": "300", "acl_jwks_max_stale": "3600"}, got


class KeysFile:
    def __init__(self, text):
        fd, self.path = tempfile.mkstemp(prefix="acl-keys-", suffix=".txt")
        os.close(fd)
        self.write(text)

    def write(self, text):
        # replace, so a reader never sees a half-written file
        tmp = self.path + ".new"
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, self.path)

    def remove(self):
        if os.path.exists(self.path):
            os.unlink(self.path)


@test
def a_rotated_keys_file_is_read_on_the_interval(con):
    f = KeysFile(f"hmac:{SECRET_A}")
    try:
        con.execute("SET acl_jwks_refresh_interval = 1")
        con.execute(f"ACL ADMIN CREATE ISSUER '{ISS}' KEYS FROM {sql_str(f.path)} ROLE CLAIM 'groups'")
        old = token(SECRET_A)
        assert count(con, old) == 3
        f.write(f"hmac:{SECRET_B}")
        time.sleep(1.2)
        new = token(SECRET_B, sub="bob")
        assert eventually(lambda: count(con, new)) == 3, "the rotated key verifies once the file was read again"
        # the replaced key no longer verifies, a cached verification included
        refused(con, old, "bad signature")
        # interval 0: the file is not read again
        con.execute("SET acl_jwks_refresh_interval = 0")
        f.write(f"hmac:{SECRET_A}")
        time.sleep(1.2)
        assert count(con, new) == 3
    finally:
        f.remove()


@test
def an_unreadable_keys_file_keeps_the_last_keys_for_max_stale(con):
    f = KeysFile(f"hmac:{SECRET_A}")
    try:
        con.execute("SET acl_jwks_refresh_interval = 1")
        con.execute("SET acl_jwks_max_stale = 2")
        con.execute(f"ACL ADMIN CREATE ISSUER '{ISS}' KEYS FROM {sql_str(f.path)} ROLE CLAIM 'groups'")
        tok = token()
        assert count(con, tok) == 3
        f.remove()
        time.sleep(1.2)
        assert count(con, tok) == 3, "the last keys stay valid"
        time.sleep(2.0)
        refused(con, tok, "the issuer's keys are stale")
        refused(con, token(sub="carol"), "the issuer's keys are stale")
        # a file that holds no keys is no better
        f.write("not keys")
        time.sleep(1.2)
        refused(con, tok, "the issuer's keys are stale")
        # the file back: fresh again once it was read
        f.write(f"hmac:{SECRET_A}")
        time.sleep(1.2)
        assert eventually(lambda: count(con, tok)) == 3
    finally:
        f.remove()


@test
def concurrent_statements_while_the_keys_file_is_read_again(con):
    """Eight connections verify new tokens for 1.2 s with the refresh due every second: every
    statement answers correctly (one of them reads the file; the others go on with the keys they
    have, `src/auth/files_tests.rs` checks that none of them waits)."""
    f = KeysFile(f"hmac:{SECRET_A}")
    errors, slow = [], []
    try:
        con.execute("SET GLOBAL acl_jwks_refresh_interval = 1")
        con.execute(f"ACL ADMIN CREATE ISSUER '{ISS}' KEYS FROM {sql_str(f.path)} ROLE CLAIM 'groups'")

        def work(i):
            c = con.cursor()
            for n in range(40):
                tok = token(sub=f"user{i}-{n}")
                t0 = time.monotonic()
                try:
                    if count(c, tok) != 3:
                        errors.append("wrong count")
                except duckdb.Error as e:  # noqa: PERF203
                    errors.append(str(e))
                slow.append(time.monotonic() - t0)
                time.sleep(0.03)

        threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        f.remove()
    assert not errors, errors[:3]
    assert max(slow) < 2.0, max(slow)


if __name__ == "__main__":
    harness.main(setup)
