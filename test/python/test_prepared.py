#!/usr/bin/env python3
"""Prepared statements and parameters under a prefix (the SQL test format has no parameters).

Run: python test/python/test_prepared.py --extension build/release/acl.duckdb_extension
Ends with `N passed, N failed`.
"""

import threading
import time

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


STALE = "acl: the policy changed since this statement was prepared; prepare it again"


@test
def a_prepared_statement_does_not_outlive_a_revoke(con):
    # executemany prepares once and executes once per row. A revoke from another connection while
    # it runs stops it at the next execution (it used to go on inserting under the old decision).
    rows = [[1000 + i, "x"] for i in range(50_000)]
    outcome = {}

    def insert_many():
        try:
            con.executemany('ACL ROLE "clerk" INSERT INTO orders VALUES (?, ?)', rows)
            outcome["error"] = None
        except duckdb.Error as e:
            outcome["error"] = str(e)

    other = con.cursor()
    count = "SELECT count(*) FROM phys.main.orders WHERE id >= 1000"
    worker = threading.Thread(target=insert_many)
    worker.start()
    deadline = time.monotonic() + 30
    while other.execute(count).fetchone()[0] < 10:
        assert time.monotonic() < deadline, "the inserts never started"
        time.sleep(0.001)
    other.execute("ACL ADMIN REVOKE CATALOG sales FROM ROLE clerk").fetchall()
    at_revoke = other.execute(count).fetchone()[0]
    worker.join(120)
    after = other.execute(count).fetchone()[0]
    assert outcome.get("error") and STALE in outcome["error"], outcome
    assert after - at_revoke <= 1, (at_revoke, after)  # at most the execution already running
    assert after < len(rows), after


@test
def a_prepared_statement_after_an_unrelated_change_is_refused_too(con):
    # Fail closed and simple: any policy change makes a prepared statement stale (PostgreSQL's
    # "cached plan must not change result type" is the same kind of answer); preparing it again
    # decides it anew.
    con = con.cursor()
    rel = con.sql('ACL ROLE "analyst" SELECT count(*) FROM orders')
    assert rel.fetchall() == [(3,)]
    con.execute("ACL ADMIN CREATE ROLE bystander").fetchall()
    try:
        rel.fetchall()
    except duckdb.Error as e:
        assert STALE in str(e), str(e)
    else:
        raise AssertionError("a statement decided under an older policy ran")
    assert con.sql('ACL ROLE "analyst" SELECT count(*) FROM orders').fetchall() == [(3,)]


@test
def a_relation_kept_across_a_revoke_is_refused(con):
    con = con.cursor()
    rel = con.sql('ACL ROLE "analyst" SELECT count(*) FROM orders')
    assert rel.fetchall() == [(3,)]
    con.execute("ACL ADMIN REVOKE CATALOG sales FROM ROLE analyst").fetchall()
    try:
        rel.fetchall()
    except duckdb.Error as e:
        assert STALE in str(e), str(e)
        assert "phys" not in str(e), str(e)
    else:
        raise AssertionError("a relation kept its old decision after a revoke")


@test
def a_statement_object_kept_across_a_revoke_is_refused(con):
    # Attack: "I keep the parsed Statement my client got before the revoke and execute it later":
    # DuckDB prepares it without the parser hook and without a rebind.
    con = con.cursor()
    kept = con.extract_statements('ACL ROLE "analyst" SELECT count(*) FROM orders WHERE id > ?')[0]
    assert con.execute(kept, [0]).fetchall() == [(3,)]
    con.execute("ACL ADMIN REVOKE CATALOG sales FROM ROLE analyst").fetchall()
    try:
        con.execute(kept, [0]).fetchall()
    except duckdb.Error as e:
        assert STALE in str(e) and "phys" not in str(e), str(e)
    else:
        raise AssertionError("a kept Statement object ran under its old decision after a revoke")


@test
def transaction_control_is_not_versioned(con):
    # BEGIN/COMMIT name nothing and depend on no policy: a change in between never strands a
    # transaction.
    con.execute('ACL ROLE "clerk" BEGIN').fetchall()
    con.cursor().execute("ACL ADMIN CREATE ROLE bystander").fetchall()
    con.execute('ACL ROLE "clerk" INSERT INTO orders VALUES (7, \'z\')').fetchall()
    con.execute('ACL ROLE "clerk" COMMIT').fetchall()
    assert con.execute("SELECT count(*) FROM phys.main.orders WHERE id = 7").fetchone() == (7 // 7,)


# ---- transactions belong to their principal (spec 001, "Transactions"): statements that reach
# DuckDB without being parsed again at the moment they run are checked when they run.

OTHERS = "acl: another principal's transaction is open on this connection"
ABORTED = "acl: the transaction is aborted and nothing of it will be committed; ROLLBACK to end it"
MANAGEMENT = "acl: management statements run in their own transaction; COMMIT or ROLLBACK first"


def refused_with(fn, expected):
    try:
        fn()
    except duckdb.Error as e:
        assert expected in str(e), str(e)
        return str(e)
    raise AssertionError(f"not refused (expected: {expected})")


def count_rows(con, where):
    return con.execute(f"SELECT count(*) FROM phys.main.orders WHERE {where}").fetchone()[0]


@test
def management_prepared_outside_a_transaction_is_refused_inside_one(con):
    # The gateway builds a GRANT as a relation (prepared, not run), opens a transaction, then
    # runs it: the grant would apply and survive the ROLLBACK. acl_exec refuses it when it runs.
    grant = con.sql("ACL ADMIN GRANT CATALOG sales TO ROLE clerk WITH (select) MAIN")
    con.execute("BEGIN")
    msg = refused_with(grant.fetchall, MANAGEMENT)
    assert "Permission Error" not in msg, msg  # refused when it ran, not when it was parsed
    con.execute("ROLLBACK")
    # clerk still holds every data capability (the grant replacing them never applied)
    con.execute('ACL ROLE "clerk" DELETE FROM orders WHERE id = 2')
    assert count_rows(con, "id = 2") == 0


@test
def a_prepared_management_statement_is_judged_against_the_policy_of_each_run(con):
    # The gateway prepares a GRANT once and runs it again and again. Its text is parsed once
    # (issue 11): an attacker's hope is that the first run's judgement (the role did not exist,
    # or did) sticks. Each run is applied to the policy of that moment.
    con.execute("SELECT 1").fetchall()
    grant = con.sql("ACL ADMIN GRANT CATALOG sales TO ROLE later WITH (select) MAIN")
    refused_with(grant.fetchall, 'acl: role "later" does not exist')
    con.execute("ACL ADMIN CREATE ROLE later").fetchall()
    assert grant.fetchall() == [("GRANT CATALOG sales TO ROLE later",)]
    assert con.execute('ACL ROLE "later" SELECT count(*) FROM orders').fetchall() == [(3,)]
    con.execute("ACL ADMIN DROP ROLE later").fetchall()
    refused_with(grant.fetchall, 'acl: role "later" does not exist')
    # the dropped role's grant went with it, and the refused run gave nothing back
    refused_with(lambda: con.execute('ACL ROLE "later" SELECT count(*) FROM orders').fetchall(),
                 'acl: role "later" does not exist')
    con.execute("ACL ADMIN CREATE ROLE later").fetchall()
    refused_with(lambda: con.execute('ACL ROLE "later" SELECT count(*) FROM orders').fetchall(), "has no MAIN catalog")
    assert grant.fetchall() == [("GRANT CATALOG sales TO ROLE later",)]
    assert con.execute('ACL ROLE "later" SELECT count(*) FROM orders').fetchall() == [(3,)]


@test
def a_relation_of_another_principal_is_refused_in_a_transaction(con):
    # analyst's statement, built before clerk's transaction, run inside it: it would read
    # clerk's uncommitted row
    peek = con.sql('ACL ROLE "analyst" SELECT count(*) FROM orders WHERE id = 70')
    con.execute('ACL ROLE "clerk" BEGIN')
    con.execute("ACL ROLE \"clerk\" INSERT INTO orders VALUES (70, 'uncommitted')")
    msg = refused_with(peek.fetchall, OTHERS)
    assert "uncommitted" not in msg, msg
    con.execute('ACL ROLE "clerk" ROLLBACK')
    assert peek.fetchall() == [(0,)]


@test
def an_extracted_statement_of_another_principal_is_refused_when_it_runs(con):
    # Statements extracted under analyst run later, inside clerk's transaction: checked then.
    peek = con.extract_statements('ACL ROLE "analyst" SELECT count(*) FROM orders')[0]
    end = con.extract_statements('ACL ROLE "analyst" ROLLBACK')[0]
    con.execute('ACL ROLE "clerk" BEGIN')
    con.execute("ACL ROLE \"clerk\" INSERT INTO orders VALUES (71, 'x')")
    refused_with(lambda: con.execute(peek).fetchall(), OTHERS)
    refused_with(lambda: con.execute(end).fetchall(), OTHERS)
    # the refusals aborted clerk's transaction: its COMMIT says so rather than rolling back silently
    refused_with(lambda: con.execute('ACL ROLE "clerk" COMMIT'), ABORTED)
    con.execute('ACL ROLE "clerk" ROLLBACK')
    assert count_rows(con, "id = 71") == 0
    assert con.execute(peek).fetchall() == [(3,)]


@test
def an_extracted_begin_makes_its_principal_the_owner(con):
    begin = con.extract_statements('ACL ROLE "clerk" BEGIN')[0]
    con.execute(begin)
    refused_with(lambda: con.execute('ACL ROLE "analyst" SELECT count(*) FROM orders'), OTHERS)
    con.execute('ACL ROLE "clerk" ROLLBACK')
    assert con.execute('ACL ROLE "analyst" SELECT count(*) FROM orders').fetchone() == (3,)


@test
def executemany_of_another_principal_inside_a_transaction_is_refused(con):
    con.execute("ACL ADMIN CREATE ROLE temp_clerk; GRANT CATALOG sales TO ROLE temp_clerk MAIN")
    con.execute("SET default_transaction_invalidation_policy = 'syntactic_errors_do_not_invalidate'")
    con.execute('ACL ROLE "clerk" BEGIN')
    refused_with(lambda: con.executemany('ACL ROLE "temp_clerk" INSERT INTO orders VALUES (?, ?)', [[72, "a"], [73, "b"]]), OTHERS)
    con.execute("ACL ROLE \"clerk\" INSERT INTO orders VALUES (74, 'c')")
    con.execute('ACL ROLE "clerk" COMMIT')
    assert count_rows(con, "id IN (72, 73)") == 0 and count_rows(con, "id = 74") == 1


SECRET = "a-shared-secret-that-is-32-bytes-or-longer"


def token(sub, **extra):
    import jwt

    claims = {"iss": "https://hs.example", "exp": int(time.time()) + 300, "roles": ["clerks"], **extra}
    if sub is not None:
        claims["sub"] = sub
    return jwt.encode(claims, SECRET, algorithm="HS256")


@test
def a_token_transaction_belongs_to_its_issuer_and_subject(con):
    con.execute(f"ACL ADMIN CREATE ISSUER 'https://hs.example' KEYS 'hmac:{SECRET}' ALGS (HS256)")
    con.execute("ACL ADMIN MAP CLAIM 'clerks' FROM ISSUER 'https://hs.example' TO ROLE clerk")
    alice, alice_again, bob = token("alice"), token("alice", jti="refreshed"), token("bob")
    assert alice != alice_again
    con.execute(f"ACL TOKEN '{alice}' BEGIN")
    con.execute(f"ACL TOKEN '{alice}' INSERT INTO orders VALUES (75, 'x')")
    # bob holds the same role, but is another principal; so is the role itself
    refused_with(lambda: con.execute(f"ACL TOKEN '{bob}' SELECT count(*) FROM orders"), OTHERS)
    con.execute("ROLLBACK")
    con.execute(f"ACL TOKEN '{alice}' BEGIN")
    refused_with(lambda: con.execute('ACL ROLE "clerk" COMMIT'), OTHERS)
    con.execute("ROLLBACK")
    # a refreshed token of the same subject goes on with alice's transaction
    con.execute(f"ACL TOKEN '{alice}' BEGIN")
    con.execute(f"ACL TOKEN '{alice}' INSERT INTO orders VALUES (76, 'x')")
    con.execute(f"ACL TOKEN '{alice_again}' INSERT INTO orders VALUES (77, 'x')")
    con.execute(f"ACL TOKEN '{alice_again}' COMMIT")
    assert count_rows(con, "id IN (75, 76, 77)") == 2
    # without a subject, a token is a principal of its own: another token is refused
    anon, anon_other = token(None), token(None, jti="other")
    con.execute(f"ACL TOKEN '{anon}' BEGIN")
    refused_with(lambda: con.execute(f"ACL TOKEN '{anon_other}' COMMIT"), OTHERS)
    con.execute("ROLLBACK")


EXPIRED = "acl: the token this statement was prepared under has expired; prepare it again"


@test
def a_tag_is_judged_whole_when_its_text_comes_back(con):
    # A kept statement's text carries what its decision depended on (the policy version and, under
    # ACL TOKEN, the token's exp; test_tokens.py mints real ones). A client re-parses that text
    # (a relation): a tag whose expiry passed, or that cannot be read, refuses the statement.
    con = con.cursor()
    text = con.sql('ACL ROLE "analyst" SELECT count(*) FROM orders').sql_query()
    assert text.startswith("/* acl:policy-version=") and "expires=" not in text, text  # a role has no exp
    head, body = text.split(" */ ", 1)

    def refused(sql, expected):
        try:
            con.execute(sql).fetchall()
        except duckdb.Error as e:
            assert expected in str(e), str(e)
        else:
            raise AssertionError(f"ran: {sql[:80]}")

    refused(f"{head} expires={int(time.time()) - 3600} */ {body}", EXPIRED)
    assert con.execute(f"{head} expires={int(time.time()) + 3600} */ {body}").fetchall() == [(3,)]
    for junk in ("expires=soon", "expires=", "expires=1 2", "expires=99999999999999999999"):
        refused(f"{head} {junk} */ {body}", STALE)


if __name__ == "__main__":
    harness.main(setup)
