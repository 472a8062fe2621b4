#!/usr/bin/env python3
"""`ACL TOKEN '<jwt>'` end to end (specs/003-tokens.md): tokens minted by PyJWT with keys made here.

Run: python test/python/test_tokens.py --extension build/release/acl.duckdb_extension
Ends with `N passed, N failed`.
"""
import json
import os
import tempfile
import threading
import time

import duckdb
import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from jwt.algorithms import ECAlgorithm, HMACAlgorithm, RSAAlgorithm

import harness
from harness import refused_with, sales, sql_str, test


def public_pem(key):
    return key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    ).decode()


RSA = rsa.generate_private_key(public_exponent=65537, key_size=2048)
RSA_OTHER = rsa.generate_private_key(public_exponent=65537, key_size=2048)
P256 = ec.generate_private_key(ec.SECP256R1())
P384 = ec.generate_private_key(ec.SECP384R1())
ED = ed25519.Ed25519PrivateKey.generate()
SECRET = "a-shared-secret-that-is-32-bytes-or-longer"

# issuer -> (KEYS text, extra clauses)
ISSUERS = {
    "https://rsa.example": (public_pem(RSA), "AUDIENCES ('warehouse')"),
    "https://p256.example": (public_pem(P256), ""),
    "https://p384.example": (public_pem(P384), ""),
    "https://ed.example": (public_pem(ED), ""),
    "https://hs.example": ("hmac:" + SECRET, "ALGS (HS256)"),
    "https://jwks.example": (
        json.dumps({"keys": [
            dict(RSAAlgorithm.to_jwk(RSA.public_key(), as_dict=True), kid="k1"),
            dict(ECAlgorithm.to_jwk(P256.public_key(), as_dict=True), kid="k2"),
        ]}),
        "",
    ),
}

# algorithm -> (issuer, signing key)
SIGNERS = {
    "RS256": ("https://rsa.example", RSA),
    "RS384": ("https://rsa.example", RSA),
    "RS512": ("https://rsa.example", RSA),
    "PS256": ("https://rsa.example", RSA),
    "ES256": ("https://p256.example", P256),
    "ES384": ("https://p384.example", P384),
    "EdDSA": ("https://ed.example", ED),
    "HS256": ("https://hs.example", SECRET),
}


def setup(ext):
    con = sales(ext)
    for iss, (keys, extra) in ISSUERS.items():
        con.execute(f"ACL ADMIN CREATE ISSUER {sql_str(iss)} KEYS {sql_str(keys)} {extra}")
        con.execute(f"ACL ADMIN MAP CLAIM 'analysts' FROM ISSUER {sql_str(iss)} TO ROLE analyst")
    return con


def claims(iss, **over):
    c = {"iss": iss, "sub": "alice", "exp": int(time.time()) + 300, "roles": ["analysts"]}
    if iss == "https://rsa.example":
        c["aud"] = "warehouse"
    c.update(over)
    return {k: v for k, v in c.items() if v is not None}


def mint(alg, headers=None, **over):
    iss, key = SIGNERS[alg]
    iss = over.pop("iss", iss)
    return jwt.encode(claims(iss, **over), key, algorithm=alg, headers=headers)


def count(con, token):
    return con.execute(f"ACL TOKEN {sql_str(token)} SELECT count(*) FROM orders").fetchone()


def refused(con, token, reason):
    try:
        count(con, token)
    except duckdb.Error as e:
        msg = str(e)
        assert f"acl: token rejected: {reason}" in msg, msg
        assert token not in msg, "the message echoes the token"
        for part in token.split("."):
            assert len(part) < 8 or part not in msg, "the message echoes a part of the token"
    else:
        raise AssertionError(f"token was not refused (expected: {reason})")


def make_alg_test(alg):
    def fn(con):
        assert count(con, mint(alg)) == (3,)
    fn.__name__ = f"valid_{alg.lower()}_token_reads"
    return fn


for _alg in SIGNERS:
    test(make_alg_test(_alg))


@test
def jwks_selects_the_key_by_kid(con):
    iss = "https://jwks.example"
    assert count(con, jwt.encode(claims(iss), RSA, algorithm="RS256", headers={"kid": "k1"})) == (3,)
    assert count(con, jwt.encode(claims(iss), P256, algorithm="ES256", headers={"kid": "k2"})) == (3,)


@test
def expired(con):
    refused(con, mint("RS256", exp=int(time.time()) - 3600), "expired")


@test
def clock_skew_is_a_setting(con):
    # 30 s past exp: inside the default 60 s skew, outside a skew of 0
    token = mint("RS256", exp=int(time.time()) - 30)
    assert count(con, token) == (3,)
    con.execute("SET acl_jwt_clock_skew = 0")
    refused(con, token, "expired")  # the cached verification is judged with the current skew
    refused(con, mint("ES256", exp=int(time.time()) - 30), "expired")
    con.execute("RESET acl_jwt_clock_skew")
    assert count(con, mint("ES256", exp=int(time.time()) - 30, sub="bob")) == (3,)


@test
def several_roles_read_the_union_of_their_slices(con):
    con.execute(
        "ACL ADMIN CREATE ROLE r_acme; GRANT CATALOG sales TO ROLE r_acme WITH (select) MAIN RLS (customer = 'acme');"
        " CREATE ROLE r_globex; GRANT CATALOG sales TO ROLE r_globex WITH (select) MAIN RLS (customer = 'globex');"
        " CREATE ROLE r_writer; GRANT CATALOG sales TO ROLE r_writer WITH (insert) MAIN RLS (customer = 'initech')"
    )
    for value, role in (("acme", "r_acme"), ("globex", "r_globex"), ("writer", "r_writer")):
        con.execute(f"ACL ADMIN MAP CLAIM '{value}' FROM ISSUER 'https://p256.example' TO ROLE {role}")
    assert count(con, mint("ES256", roles=["acme"])) == (2,)
    assert count(con, mint("ES256", roles=["acme", "globex"])) == (3,)
    # a role that may only insert does not widen what the principal reads
    assert count(con, mint("ES256", roles=["acme", "writer"])) == (2,)


def rows(con, token, sql):
    return con.execute(f"ACL TOKEN {sql_str(token)} {sql}").fetchall()


@test
def several_roles_with_different_columns_read_the_union(con):
    con.execute("CREATE TABLE phys.main.people (id INTEGER, org VARCHAR, name VARCHAR, ssn VARCHAR)")
    con.execute(
        "INSERT INTO phys.main.people VALUES (1, 'acme', 'ann', '111'), (2, 'globex', 'bob', '222'),"
        " (3, 'initech', 'cy', '333')"
    )
    con.execute(
        "ACL ADMIN CREATE VIRTUAL CATALOG hr; CREATE VIRTUAL TABLE hr.people AS phys.main.people;"
        # acme rows, every column but ssn masked
        " CREATE ROLE hr_acme; GRANT CATALOG hr TO ROLE hr_acme WITH (select) RLS (org = 'acme')"
        "   COLUMNS (id, org, name, ssn = 'xxx');"
        # globex rows, only id and ssn, ssn plain
        " CREATE ROLE hr_globex; GRANT CATALOG hr TO ROLE hr_globex WITH (select) RLS (org = 'globex')"
        "   COLUMNS (id, ssn);"
        # a catalog slice refined by an object grant: initech rows, name upper-cased
        " CREATE ROLE hr_initech; GRANT CATALOG hr TO ROLE hr_initech WITH (select) RLS (org <> 'acme')"
        "   COLUMNS (id, org, who = name);"
        " GRANT TABLE hr.people TO ROLE hr_initech RLS (org = 'initech') COLUMNS (id, who2 = upper(who));"
        # every column, acme and globex rows
        " CREATE ROLE hr_all; GRANT CATALOG hr TO ROLE hr_all WITH (select) RLS (org IN ('acme', 'globex'))"
    )
    for role in ("hr_acme", "hr_globex", "hr_initech", "hr_all"):
        con.execute(f"ACL ADMIN MAP CLAIM '{role}' FROM ISSUER 'https://p256.example' TO ROLE {role}")
    t = lambda *roles: mint("ES256", roles=list(roles))  # noqa: E731
    q = "SELECT * FROM hr.people ORDER BY id"
    # one role: its own slice
    assert rows(con, t("hr_acme"), q) == [(1, "acme", "ann", "xxx")]
    # two listed roles: the union of columns, each row as the role admitting it shows it
    got = con.execute(f"ACL TOKEN {sql_str(t('hr_acme', 'hr_globex'))} {q}")
    assert [d[0] for d in got.description] == ["id", "org", "name", "ssn"]
    assert got.fetchall() == [(1, "acme", "ann", "xxx"), (2, None, None, "222")]
    # unmasked wins over masked where both roles admit the row
    con.execute("ACL ADMIN GRANT CATALOG hr TO ROLE hr_globex WITH (select) RLS (org IN ('acme', 'globex')) COLUMNS (id, ssn)")
    assert rows(con, t("hr_acme", "hr_globex"), q) == [(1, "acme", "ann", "111"), (2, None, None, "222")]
    # a role's two layers are composed before the union (who2 = upper(name) on initech rows only)
    got = con.execute(f"ACL TOKEN {sql_str(t('hr_acme', 'hr_initech'))} {q}")
    assert [d[0] for d in got.description] == ["id", "org", "name", "ssn", "who2"]
    assert got.fetchall() == [(1, "acme", "ann", "xxx", None), (3, None, None, None, "CY")]
    # a role with every column: the object's shape, other roles' columns where only they admit
    got = con.execute(f"ACL TOKEN {sql_str(t('hr_all', 'hr_acme'))} {q}")
    assert [d[0] for d in got.description] == ["id", "org", "name", "ssn"]
    assert got.fetchall() == [(1, "acme", "ann", "111"), (2, "globex", "bob", "222")]
    con.execute("ACL ADMIN GRANT CATALOG hr TO ROLE hr_all WITH (select) RLS (org = 'globex')")
    assert rows(con, t("hr_all", "hr_acme"), q) == [(1, "acme", "ann", "xxx"), (2, "globex", "bob", "222")]
    # leak probes: the principal's own predicate never sees a hidden row or a hidden value
    for probe in (
        "SELECT count(*) FROM hr.people WHERE CASE WHEN ssn = '333' THEN error('leak') END IS NULL",
        "SELECT count(*) FROM hr.people WHERE CASE WHEN name = 'cy' THEN error('leak') END IS NULL",
        "SELECT count(*) FROM hr.people WHERE CASE WHEN org = 'initech' THEN error('leak') END IS NULL",
    ):
        assert rows(con, t("hr_acme", "hr_globex"), probe)[0][0] in (1, 2), probe
    assert rows(con, t("hr_acme", "hr_globex"), "SELECT count(*) FROM hr.people WHERE ssn = '111'") == [(1,)]
    # such a union is read-only
    con.execute("ACL ADMIN GRANT CATALOG hr TO ROLE hr_globex WITH (select, insert) RLS (org = 'globex') COLUMNS (id, ssn)")
    con.execute("ACL ADMIN GRANT CATALOG hr TO ROLE hr_acme WITH (select, insert) RLS (org = 'acme') COLUMNS (id, org)")
    try:
        rows(con, t("hr_acme", "hr_globex"), "INSERT INTO hr.people (id) VALUES (9)")
    except duckdb.Error as e:
        assert "read-only" in str(e) and "people" in str(e) and "phys" not in str(e), str(e)
    else:
        raise AssertionError("a write through a union of column lists was accepted")


@test
def not_yet_valid(con):
    refused(con, mint("ES256", nbf=int(time.time()) + 3600), "not yet valid")


@test
def wrong_audience(con):
    refused(con, mint("RS256", aud="elsewhere"), "wrong audience")
    refused(con, mint("RS256", aud=None), "wrong audience")


@test
def wrong_issuer(con):
    refused(con, mint("RS256", iss="https://evil.example"), "unknown issuer")


@test
def bad_signature(con):
    token = jwt.encode(claims("https://rsa.example"), RSA_OTHER, algorithm="RS256")
    refused(con, token, "bad signature")


@test
def alg_none(con):
    token = jwt.encode(claims("https://rsa.example"), None, algorithm="none")
    refused(con, token, "algorithm not allowed")


@test
def unknown_kid(con):
    token = jwt.encode(claims("https://jwks.example"), RSA, algorithm="RS256", headers={"kid": "k9"})
    refused(con, token, "unknown key id")


@test
def hs256_key_confusion_with_the_rsa_public_key(con):
    # PyJWT refuses a PEM as an HMAC secret; a JWS object with a permissive HS256 forges it.
    class Unchecked(HMACAlgorithm):
        def prepare_key(self, key):
            return key

    jws = jwt.PyJWS()
    jws.unregister_algorithm("HS256")
    jws.register_algorithm("HS256", Unchecked(Unchecked.SHA256))
    for iss, key in [("https://rsa.example", public_pem(RSA)), ("https://jwks.example", public_pem(RSA))]:
        payload = json.dumps(claims(iss)).encode()
        token = jws.encode(payload, key.encode(), algorithm="HS256", headers={"kid": "k1"})
        refused(con, token, "algorithm not allowed")


@test
def role_claim_maps_to_no_role(con):
    refused(con, mint("RS256", roles=["nobody"]), "no role is mapped for this token")
    refused(con, mint("RS256", roles=None), "no role is mapped for this token")


@test
def malformed(con):
    refused(con, "not-a-jwt", "malformed")


@test
def same_token_twice_and_policy_changes_act_at_once(con):
    token = mint("EdDSA")
    assert count(con, token) == (3,)
    assert count(con, token) == (3,)  # from the cache
    con.execute("ACL ADMIN UNMAP CLAIM 'analysts' FROM ISSUER 'https://ed.example'")
    refused(con, token, "no role is mapped for this token")
    con.execute("ACL ADMIN MAP CLAIM 'analysts' FROM ISSUER 'https://ed.example' TO ROLE analyst")
    assert count(con, token) == (3,)
    con.execute("ACL ADMIN DROP ISSUER 'https://ed.example'")
    refused(con, token, "unknown issuer")


@test
def refusal_under_a_token_names_the_subject(con):
    try:
        con.execute(f"ACL TOKEN {sql_str(mint('PS256'))} DELETE FROM orders")
    except duckdb.Error as e:
        assert 'acl: token of "alice" lacks delete on sales.orders' in str(e), str(e)
    else:
        raise AssertionError("DELETE under a reader token was not refused")


@test
def issuer_management_errors(con):
    cases = [
        ("CREATE ISSUER 'https://rsa.example' KEYS " + sql_str(public_pem(RSA)), 'acl: issuer "https://rsa.example" already exists'),
        ("CREATE ISSUER 'x' KEYS FROM 'https://idp.example/jwks.json'", "acl: KEYS FROM a URL is not supported offline; pass the JWKS inline"),
        ("CREATE ISSUER 'x' KEYS " + sql_str(public_pem(RSA)) + " ALGS (none)", "acl: algorithm none is never accepted"),
        ("CREATE ISSUER 'x' KEYS " + sql_str(public_pem(RSA)) + " ALGS (HS256)", "acl: issuer \"x\": ALGS HS256: none of the issuer's keys can verify it"),
        ("CREATE ISSUER 'x' KEYS 'garbage'", "acl: issuer \"x\": issuer KEYS must be a PEM public key, a JWKS document or 'hmac:<secret>'"),
        ("MAP CLAIM 'a' FROM ISSUER 'https://nope' TO ROLE analyst", 'acl: issuer "https://nope" does not exist'),
        ("MAP CLAIM 'a' FROM ISSUER 'https://rsa.example' TO ROLE ghost", 'acl: role "ghost" does not exist'),
    ]
    for stmt, expected in cases:
        try:
            con.execute("ACL ADMIN " + stmt)
        except duckdb.Error as e:
            assert expected in str(e), (stmt, str(e))
        else:
            raise AssertionError(f"not refused: {stmt[:60]}")


@test
def keys_from_a_file(con):
    with tempfile.NamedTemporaryFile("w", suffix=".pem", delete=False) as f:
        f.write(public_pem(RSA_OTHER))
    try:
        con.execute(f"ACL ADMIN CREATE ISSUER 'https://file.example' KEYS FROM {sql_str(f.name)}")
        con.execute("ACL ADMIN MAP CLAIM 'analysts' FROM ISSUER 'https://file.example' TO ROLE analyst")
    finally:
        os.unlink(f.name)
    token = jwt.encode(claims("https://file.example"), RSA_OTHER, algorithm="RS256")
    assert count(con, token) == (3,)


EXPIRED = "acl: the token this statement was prepared under has expired; prepare it again"


def wait_past(exp):
    while time.time() < exp + 1.2:
        time.sleep(0.1)


@test
def kept_statements_and_views_do_not_outlive_the_token(con):
    # Attack: "my token expired, but the relation my client kept (and the temporary view I made)
    # still read for me". What was decided under a token carries its exp (specs/003).
    con.execute("ACL ADMIN CREATE VIRTUAL CATALOG scratch; GRANT CATALOG scratch TO ROLE analyst WITH (temp)").fetchall()
    exp = int(time.time()) + 2
    token = mint("ES256", exp=exp)
    q = f"ACL TOKEN {sql_str(token)} SELECT count(*) FROM orders"
    kept = con.sql(q)  # a relation, from the full rewrite
    assert kept.fetchall() == [(3,)]
    con.execute(q).fetchall()
    hit = con.sql(q)  # a relation from a batch-cache hit (the batch and DuckDB's parse of it kept)
    assert hit.fetchall() == [(3,)]
    parsed = con.extract_statements(q)[0]  # a parse the client keeps and executes (prepared anew)
    assert con.execute(parsed).fetchall() == [(3,)]
    con.execute(f"ACL TOKEN {sql_str(token)} CREATE TEMP VIEW v AS SELECT id FROM orders").fetchall()
    assert rows(con, token, "SELECT count(*) FROM v") == [(3,)]
    wait_past(exp)
    # inside acl_jwt_clock_skew (default 60 s) they still run, as the token itself still would; a
    # new token of the same principal names the same temporary view (the guard reads the skew too)
    assert kept.fetchall() == [(3,)] and hit.fetchall() == [(3,)] and con.execute(parsed).fetchall() == [(3,)]
    fresh = mint("ES256")
    assert rows(con, fresh, "SELECT count(*) FROM v") == [(3,)]
    con.execute("SET acl_jwt_clock_skew = 0").fetchall()
    refused_with(kept.fetchall, EXPIRED)
    refused_with(hit.fetchall, EXPIRED)
    refused_with(lambda: con.execute(parsed).fetchall(), EXPIRED)
    refused_with(lambda: count(con, token), "acl: token rejected: expired")
    refused_with(lambda: rows(con, fresh, "SELECT * FROM v"),
                 "acl: view v was created under a token that has expired; create it again")
    rows(con, fresh, "CREATE OR REPLACE TEMP VIEW v AS SELECT id FROM orders")
    assert rows(con, fresh, "SELECT count(*) FROM v") == [(3,)]


@test
def a_prepared_statement_stops_at_the_tokens_exp(con):
    # executemany prepares once and executes once per row: the token expires while it runs.
    con.execute("SET acl_jwt_clock_skew = 0").fetchall()
    con.execute("ACL ADMIN CREATE ROLE clerk; GRANT CATALOG sales TO ROLE clerk MAIN;"
                " MAP CLAIM 'clerks' FROM ISSUER 'https://p256.example' TO ROLE clerk").fetchall()
    exp = int(time.time()) + 2
    token = mint("ES256", exp=exp, roles=["clerks"])
    many = [[1000 + i, "x"] for i in range(100_000)]
    outcome = {}

    def insert_many():
        try:
            con.executemany(f"ACL TOKEN {sql_str(token)} INSERT INTO orders VALUES (?, ?)", many)
            outcome["error"] = None
        except duckdb.Error as e:
            outcome["error"] = str(e)

    worker = threading.Thread(target=insert_many)
    worker.start()
    worker.join(60)
    other = con.cursor()
    inserted = other.execute("SELECT count(*) FROM phys.main.orders WHERE id >= 1000").fetchone()[0]
    assert outcome.get("error") and EXPIRED in outcome["error"], outcome
    assert 0 < inserted < len(many), inserted
    assert time.time() >= exp


@test
def a_claim_the_token_supplies_in_any_form_replaces_the_roles_default(con):
    # Attack: "my IdP sends tenant: null (or ["globex"], or an object) and the extension reads it
    # as my role's default tenant". A claim the token supplies in any form replaces the default;
    # one that is no text is NULL, which matches no row.
    iss = "https://claims.example"
    con.execute(f"ACL ADMIN CREATE ISSUER {sql_str(iss)} KEYS {sql_str(public_pem(P256))}"
                " CLAIM MAP ('tenant' => tenant, 'org.tenant' => org_tenant)")
    con.execute("INSERT INTO phys.main.orders VALUES (10, '42'), (11, 'true'), (12, ''), (13, 'x\\'' OR true --'),"
                " (14, 'it''s')")
    con.execute(
        "ACL ADMIN CREATE VIRTUAL TABLE sales.by_tenant AS phys.main.orders RLS (customer = acl_claim('tenant'));"
        " CREATE VIRTUAL TABLE sales.by_org AS phys.main.orders RLS (customer = acl_claim('org_tenant'));"
        " CREATE ROLE tenanted CLAIMS (tenant = 'acme', org_tenant = 'acme');"
        " GRANT CATALOG sales TO ROLE tenanted WITH (select) MAIN;"
        f" MAP CLAIM 'tenants' FROM ISSUER {sql_str(iss)} TO ROLE tenanted"
    )

    def ids(table, **claims):
        token = jwt.encode(claims_for(iss, **claims), P256, algorithm="ES256")
        return [r[0] for r in rows(con, token, f"SELECT id FROM {table} ORDER BY id")]

    def claims_for(iss, **over):
        c = {"iss": iss, "sub": "t", "exp": int(time.time()) + 300, "roles": ["tenants"]}
        c.update(over)
        return c

    acme = [1, 3]
    # (the token's tenant claim, the rows it reads)
    for value, expected in [
        ("globex", [2]),
        (42, [10]),
        (True, [11]),
        ("", [12]),
        (None, []),
        (["globex"], []),
        (["acme"], []),
        ({"id": "acme"}, []),
        # a claim holding a quote after a backslash stays one literal (quoting.test, spec 002)
        ("x\\' OR true --", [13]),
        ("it's", [14]),
        ("\\' OR true --", []),
    ]:
        assert ids("by_tenant", tenant=value) == expected, (value, expected)
    assert ids("by_tenant") == acme, "a token without the claim reads the role's default"
    # a nested path: present (any form), blocked by a value that is no object, absent
    for org, expected in [
        ({"tenant": "globex"}, [2]),
        ({"tenant": None}, []),
        ({"tenant": ["acme"]}, []),
        ({"tenant": {"x": 1}}, []),
        (None, []),
        ("acme", []),
        ({}, acme),
        ({"other": "globex"}, acme),
    ]:
        assert ids("by_org", org=org) == expected, (org, expected)
    assert ids("by_org") == acme


if __name__ == "__main__":
    harness.main(setup)
