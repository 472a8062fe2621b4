#!/usr/bin/env python3
"""Outside review of sessions (specs/017-sessions.md, issue 33 items 1, 3 in part, 4): what SLT
cannot do — threads, time, tokens minted on the spot, two database instances, text DuckDB keeps.
Each test asserts the secure outcome; a test marked `known_bug` asserts it too and is expected to
fail today (it is reported as `BUG`, and the file fails once it passes: remove the marker).

Run: python test/python/test_sessions_review.py --extension build/release/acl.duckdb_extension
Ends with `N passed, N failed`.
"""
import json
import os
import re
import tempfile
import threading
import time

import duckdb
import jwt

import harness
from harness import refused_with, sales, sql_str, test

SECRET = "a-shared-secret-that-is-32-bytes-or-longer"
ISS = "https://idp.example"
ENDED = "acl: the session this statement was prepared under has ended"




def setup(ext):
    con = sales(ext)
    con.execute(f"ACL ADMIN CREATE ISSUER {sql_str(ISS)} KEYS {sql_str('hmac:' + SECRET)} ALGS (HS256)")
    con.execute("ACL ADMIN CREATE ROLE boss; GRANT ADMIN manage TO ROLE boss;"
                " GRANT CATALOG sales TO ROLE boss WITH (select) MAIN")
    return con


def mint(roles=("analyst",), sub="alice", exp=None, **over):
    claims = {"iss": ISS, "sub": sub, "exp": int(time.time()) + 300 if exp is None else exp, "roles": list(roles)}
    claims.update(over)
    return jwt.encode({k: v for k, v in claims.items() if v is not None}, SECRET, algorithm="HS256")


def open_session(con, **token):
    return con.execute("SELECT acl_session_open(?)", [mint(**token)]).fetchone()[0]


def q(h, sql):
    return f"ACL SESSION {sql_str(h)} {sql}"


def count(con, h, where=""):
    return con.execute(q(h, f"SELECT count(*) FROM orders {where}")).fetchone()[0]


def reason(con, h):
    return con.execute("SELECT acl_session_reason(?)", [h]).fetchone()[0]


def id_of(con, sub):
    return con.execute("SELECT max(id) FROM acl_sessions() WHERE subject = ?", [sub]).fetchone()[0]


def no_handle(text, *handles):
    for h in handles:
        assert h not in text, text


# ---- transactions belong to the session that began them ----

@test
def no_other_principal_joins_or_ends_a_sessions_transaction(con):
    a = open_session(con)
    b = open_session(con)  # the same subject, another session
    boss = open_session(con, roles=["boss"], sub="boss")
    con.execute(q(a, "BEGIN"))
    assert count(con, a) == 3
    others = [
        q(b, "SELECT count(*) FROM orders"), q(b, "COMMIT"), q(b, "ROLLBACK"), q(b, "ABORT"), q(b, "END"),
        'ACL ROLE "analyst" COMMIT', 'ACL ROLE "analyst" SELECT count(*) FROM orders',
        f"ACL TOKEN {sql_str(mint())} ROLLBACK", f"ACL TOKEN {sql_str(mint())} SELECT count(*) FROM orders",
    ]
    for sql in others:
        msg = refused_with(lambda: con.execute(sql).fetchall(), "acl: another principal's transaction is open")
        no_handle(msg, a, b)
    # a management statement of another session cannot end it either
    refused_with(lambda: con.execute(q(boss, "ACL CREATE ROLE sneaky")).fetchall(),
                 "acl: management statements run in their own transaction")
    con.execute("ROLLBACK")  # the gateway ends it


@test
def a_closed_sessions_transaction_is_ended_by_no_principal_and_the_gateway_still_can(con):
    a = open_session(con)
    b = open_session(con)
    con.execute(q(a, "BEGIN"))
    con.execute(q(a, "SELECT count(*) FROM orders")).fetchall()
    assert con.execute("SELECT acl_session_close(?)", [a]).fetchone()[0] is True
    refused_with(lambda: con.execute(q(a, "COMMIT")).fetchall(), "acl: session refused: the session was closed")
    refused_with(lambda: con.execute(q(b, "COMMIT")).fetchall(), "acl: another principal's transaction is open")
    con.execute("ROLLBACK")
    assert count(con, b) == 3


# ---- caches after every end, and session vs token of the same subject ----

@test
def no_cached_rewrite_outlives_a_kill_an_idle_end_or_a_close(con):
    con.execute("SET GLOBAL acl_session_idle_timeout = 1")
    try:
        for end in ("kill", "idle", "close"):
            h = open_session(con, sub=f"s-{end}")
            text = q(h, "SELECT count(*) FROM orders WHERE id > 0")
            cur = con.cursor()
            for _ in range(3):  # batch cache and shape learned
                assert con.execute(text).fetchone()[0] == 3
                assert count(con, h, "WHERE id > 1") == 2
                assert cur.execute(q(h, "SELECT count(*) FROM orders WHERE id > ?"), [1]).fetchone()[0] == 2
            rel = con.sql(text)
            if end == "kill":
                assert con.execute("SELECT acl_session_kill(?)", [id_of(con, f"s-{end}")]).fetchone()[0] is True
                why = "the session was killed"
            elif end == "idle":
                time.sleep(2.2)
                why = "the session was idle longer than acl_session_idle_timeout"
            else:
                assert con.execute("SELECT acl_session_close(?)", [h]).fetchone()[0] is True
                why = "the session was closed"
            # the very text cached, the same shape with another number, a parameter, a relation
            for fn in (lambda: con.execute(text).fetchall(), lambda: count(con, h, "WHERE id > 2"),
                       lambda: cur.execute(q(h, "SELECT count(*) FROM orders WHERE id > ?"), [1]).fetchall()):
                no_handle(refused_with(fn, f"acl: session refused: {why}"), h)
            no_handle(refused_with(lambda: rel.fetchall(), ENDED), h)
            no_handle(refused_with(lambda: rel.filter("true").fetchall(), ENDED), h)
    finally:
        con.execute("RESET GLOBAL acl_session_idle_timeout")


@test
def a_session_and_a_token_of_one_subject_share_nothing_that_outlives_either(con):
    token = mint()
    h = open_session(con)
    by_token = f"ACL TOKEN {sql_str(token)} SELECT count(*) FROM orders"
    for _ in range(2):
        assert con.execute(by_token).fetchone()[0] == 3
        assert count(con, h) == 3
    con.execute("SELECT acl_session_close(?)", [h])
    assert con.execute(by_token).fetchone()[0] == 3, "the token is not the session"
    refused_with(lambda: count(con, h), "acl: session refused: the session was closed")
    # a revoke acts on both at once, from their caches
    h2 = open_session(con)
    assert count(con, h2) == 3
    con.execute("ACL ADMIN REVOKE CATALOG sales FROM ROLE analyst")
    refused_with(lambda: count(con, h2), "has no MAIN catalog")
    refused_with(lambda: con.execute(by_token).fetchall(), "has no MAIN catalog")


@test
def two_sessions_of_different_principals_never_share_a_cached_rewrite(con):
    con.execute("ACL ADMIN CREATE ROLE narrow; GRANT CATALOG sales TO ROLE narrow WITH (select) MAIN RLS (customer = 'globex')")
    wide = open_session(con, sub="w")
    narrow = open_session(con, roles=["narrow"], sub="n")
    for _ in range(3):
        for i in (0, 1, 2):
            assert count(con, wide, f"WHERE id > {i}") == 3 - i
            assert count(con, narrow, f"WHERE id > {i}") == (1 if i < 2 else 0)


# ---- every_use, the token's exp and the clock skew ----

@test
def every_use_ends_a_session_at_exp_plus_skew_on_every_path(con):
    con.execute("SET GLOBAL acl_session_token_binding = 'every_use'")
    con.execute("SET acl_jwt_clock_skew = 0")
    try:
        h = open_session(con, exp=int(time.time()) + 2)
        text = q(h, "SELECT count(*) FROM orders")
        cur = con.cursor()
        assert con.execute(text).fetchone()[0] == 3
        assert cur.execute(q(h, "SELECT count(*) FROM orders WHERE id > ?"), [0]).fetchone()[0] == 3
        rel = con.sql(text)
        time.sleep(3.2)
        expired = "acl: session refused: the session's token expired"
        refused_with(lambda: con.execute(text).fetchall(), expired)
        refused_with(lambda: cur.execute(q(h, "SELECT count(*) FROM orders WHERE id > ?"), [0]).fetchall(), expired)
        refused_with(lambda: rel.fetchall(), ENDED)
        assert reason(con, h) == "expired"
        # within the skew a token past exp still opens and runs; once past exp + skew it ends
        con.execute("SET acl_jwt_clock_skew = 3")
        late = open_session(con, exp=int(time.time()) - 1)
        assert count(con, late) == 3
        time.sleep(3.2)
        refused_with(lambda: count(con, late), expired)
        # a binding switched back to connect does not revive an ended session
        con.execute("SET GLOBAL acl_session_token_binding = 'connect'")
        refused_with(lambda: con.execute(text).fetchall(), expired)
    finally:
        con.execute("RESET GLOBAL acl_session_token_binding")
        con.execute("RESET acl_jwt_clock_skew")


@test
def under_connect_a_token_past_exp_never_opens_a_session(con):
    con.execute("SET acl_jwt_clock_skew = 0")
    try:
        refused_with(lambda: open_session(con, exp=int(time.time()) - 5), "acl: token rejected: expired")
        refused_with(lambda: open_session(con, exp=0), "acl: token rejected: expired")
        assert con.execute("SELECT acl_session_count()").fetchone()[0] == 0, "a refused open counts nothing"
    finally:
        con.execute("RESET acl_jwt_clock_skew")


# ---- two database instances in one process ----

@test
def an_instance_shares_no_session_id_setting_or_cap_with_another(con):
    other = sales(harness.EXT)
    other.execute(f"ACL ADMIN CREATE ISSUER {sql_str(ISS)} KEYS {sql_str('hmac:' + SECRET)} ALGS (HS256)")
    h = open_session(con)
    mine = id_of(con, "alice")
    no_handle(refused_with(lambda: other.execute(q(h, "SELECT 1")).fetchall(), "acl: session refused: unknown session"), h)
    assert other.execute("SELECT acl_session_close(?), acl_session_kill(?), acl_session_reason(?)",
                         [h, mine, h]).fetchone() == (False, False, "unknown")
    refused_with(lambda: other.execute("SELECT * FROM acl_exec_as('session', ?, 'CREATE ROLE x')", [str(mine)]).fetchall(),
                 "acl: session refused: unknown session")
    assert reason(con, h) == "live" and count(con, h) == 3
    con.execute("SET GLOBAL acl_max_sessions = 1")
    try:
        for i in range(3):
            open_session(other, sub=f"o{i}")
        assert other.execute("SELECT acl_session_count()").fetchone()[0] == 3
        refused_with(lambda: open_session(con, sub="second"), "acl: session refused: the node holds 1 sessions")
    finally:
        con.execute("RESET GLOBAL acl_max_sessions")
    other.close()


# ---- management through a session, and the gateway's forged or stale ids ----

@test
def a_management_call_names_a_live_session_by_id_and_nothing_else(con):
    boss = open_session(con, roles=["boss"], sub="boss")
    alice = open_session(con)
    boss_id, alice_id = id_of(con, "boss"), id_of(con, "alice")
    assert con.execute("SELECT * FROM acl_exec_as('session', ?, 'CREATE ROLE made_by_boss')", [str(boss_id)]).fetchall()
    refused_with(lambda: con.execute("SELECT * FROM acl_exec_as('session', ?, 'CREATE ROLE x')", [str(alice_id)]).fetchall(),
                 "lacks global manage (CREATE ROLE)")
    for bad in ["0", "-1", "999999999", "18446744073709551616", "", "abc", "1e1", boss]:
        msg = refused_with(lambda: con.execute("SELECT * FROM acl_exec_as('session', ?, 'CREATE ROLE y')", [bad]).fetchall(),
                           "acl: session refused: unknown session")
        no_handle(msg, boss, alice)
    con.execute("SELECT acl_session_close(?)", [boss])
    refused_with(lambda: con.execute("SELECT * FROM acl_exec_as('session', ?, 'CREATE ROLE z')", [str(boss_id)]).fetchall(),
                 "acl: session refused: the session was closed")
    assert con.execute("SELECT count(*) FROM acl_roles() WHERE name IN ('x', 'y', 'z')").fetchone()[0] == 0
    # a principal names no one: acl_exec_as is never callable under a prefix
    for prefix in [f"ACL SESSION {sql_str(alice)}", 'ACL ROLE "boss"', f"ACL TOKEN {sql_str(mint(roles=['boss'], sub='b2'))}"]:
        refused_with(lambda: con.execute(f"{prefix} SELECT * FROM acl_exec_as('session', '{boss_id}', 'CREATE ROLE w')").fetchall(),
                     "is not permitted")


@test
def the_handle_is_in_no_text_duckdb_keeps_for_a_management_batch(con):
    boss = open_session(con, roles=["boss"], sub="boss")
    con.execute("CALL enable_logging('QueryLog')")
    con.execute(q(boss, "ACL CREATE ROLE from_session")).fetchall()
    con.execute(q(boss, "ACL CREATE ROLE from_session_2")).fetchall()
    logs = con.execute("SELECT string_agg(message, '\n') FROM duckdb_logs WHERE type = 'QueryLog'").fetchall()[0][0]
    no_handle(logs, boss)
    assert f"acl_exec_as('session', '{id_of(con, 'boss')}'" in logs, logs
    kept = con.execute("SELECT coalesce(string_agg(statement, '\n'), '') FROM duckdb_prepared_statements()").fetchall()[0][0]
    no_handle(kept, boss)
    rel = con.sql(q(boss, "SELECT count(*) FROM orders"))
    no_handle(rel.sql_query(), boss)
    no_handle(str(rel.explain()), boss)
    for s in con.extract_statements(q(boss, "SELECT count(*) FROM orders; SELECT 1")):
        no_handle(s.query, boss)


@test
def the_handle_is_in_no_profile_and_no_parameter_error(con):
    h = open_session(con)
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "p.json")
        c = con.cursor()
        c.execute("PRAGMA enable_profiling = 'json'")
        c.execute(f"SET profiling_output = '{out}'")
        # (a batch: the profile of its last statement is written)
        c.execute(q(h, "SELECT 1; SELECT count(*) FROM orders")).fetchall()
        c.close()
        with open(out) as f:
            profile = f.read()
        no_handle(profile, h)
        assert "session=" in json.loads(profile)["query"]["sql"], profile[:300]
    for fn in (lambda: con.execute(q(h, "SELECT count(*) FROM orders WHERE id > ?"), [1, 2]).fetchall(),
               lambda: con.execute(q(h, "SELECT count(*) FROM orders WHERE id > ?")).fetchall(),
               lambda: con.execute(q(h, "SELECT count(*) FROM orders WHERE id > $x"), {"y": 1}).fetchall()):
        try:
            fn()
            raise AssertionError("not refused")
        except duckdb.Error as e:
            no_handle(str(e), h)


# ---- settings: refused values change nothing; the statement path sees what SET kept ----

@test
def a_fractional_cap_is_refused_and_the_cap_holds(con):
    con.execute("SET GLOBAL acl_max_sessions = 2")
    try:
        try:
            con.execute("SET GLOBAL acl_max_sessions = 0.4")
        except duckdb.Error:
            pass
        open_session(con, sub="a")
        open_session(con, sub="b")
        refused_with(lambda: open_session(con, sub="c"), "acl: session refused: the node holds 2 sessions")
    finally:
        con.execute("RESET GLOBAL acl_max_sessions")


@test
def reset_reaches_the_statement_path(con):
    con.execute("SET GLOBAL acl_session_idle_timeout = 1")
    con.execute("RESET acl_session_idle_timeout")
    h = open_session(con)
    time.sleep(1.6)
    assert count(con, h) == 3, "RESET put the default (900 s) back"
    con.execute("SET GLOBAL acl_max_sessions = 1")
    con.execute("RESET GLOBAL acl_max_sessions")
    open_session(con, sub="second")
    con.execute("SET GLOBAL acl_session_token_binding = 'every_use'")
    con.execute("RESET acl_session_token_binding")
    late = open_session(con, exp=int(time.time()) + 1)
    time.sleep(2.2)
    assert count(con, late) == 3, "RESET put connect back"


# ---- races ----

@test
def concurrent_opens_never_pass_the_node_cap_or_a_groups_cap(con):
    con.execute("ACL ADMIN CREATE RESOURCE GROUP three (max_sessions = 3); GRANT RESOURCE GROUP three TO ROLE analyst")
    con.execute("SET GLOBAL acl_max_sessions = 5")
    try:
        tokens = [mint(sub=f"u{i}") for i in range(12)] + [mint(roles=["boss"], sub=f"b{i}") for i in range(12)]
        got, errs, lock = [], [], threading.Lock()

        def one(t):
            try:
                h = con.cursor().execute("SELECT acl_session_open(?)", [t]).fetchone()[0]
                with lock:
                    got.append(h)
            except duckdb.Error as e:
                with lock:
                    errs.append(str(e))

        ths = [threading.Thread(target=one, args=(t,)) for t in tokens]
        for t in ths:
            t.start()
        for t in ths:
            t.join()
        assert len(got) == 5 and len(set(got)) == 5, (len(got), errs[:3])
        assert all("acl: session refused" in e for e in errs), errs[:3]
        roles = con.execute("SELECT roles, count(*) FROM acl_sessions() GROUP BY roles ORDER BY roles").fetchall()
        assert dict(roles).get("analyst", 0) <= 3, roles
        assert con.execute("SELECT acl_session_count()").fetchone()[0] == 5
    finally:
        con.execute("RESET GLOBAL acl_max_sessions")


@test
def a_kill_during_a_statement_lets_it_finish_and_refuses_the_next(con):
    h = open_session(con)
    sid = id_of(con, "alice")
    done = {}

    def long():
        c = con.cursor()
        try:
            done["rows"] = c.execute(q(h, "SELECT count(*) FROM orders a, range(3000000) r WHERE r.range % 7 = a.id")).fetchone()[0]
        except duckdb.Error as e:
            done["err"] = str(e)

    t = threading.Thread(target=long)
    t.start()
    time.sleep(0.05)
    assert con.execute("SELECT acl_session_kill(?)", [sid]).fetchone()[0] is True
    t.join()
    assert "err" not in done or "killed" in done["err"], done
    refused_with(lambda: count(con, h), "acl: session refused: the session was killed")
    assert con.execute("SELECT acl_session_kill(?)", [sid]).fetchone()[0] is False


@test
def kill_and_statements_race_cleanly_across_threads(con):
    hs = [open_session(con, sub=f"r{i}") for i in range(8)]
    ids = [id_of(con, f"r{i}") for i in range(8)]
    bad, lock = [], threading.Lock()

    def use(h):
        c = con.cursor()
        for _ in range(40):
            try:
                n = c.execute(q(h, "SELECT count(*) FROM orders")).fetchone()[0]
                if n != 3:
                    with lock:
                        bad.append(n)
            except duckdb.Error as e:
                # judged live when parsed and killed before it ran: refused at execution
                if not re.search(r"acl: (session refused: the session was killed|the session this statement was prepared under has ended \(killed\))", str(e)):
                    with lock:
                        bad.append(str(e))
                return

    ths = [threading.Thread(target=use, args=(h,)) for h in hs]
    for t in ths:
        t.start()
    killed = sum(con.cursor().execute("SELECT acl_session_kill(?)", [i]).fetchone()[0] for i in ids)
    for t in ths:
        t.join()
    assert not bad, bad[:3]
    assert killed == 8
    assert con.execute("SELECT acl_session_count()").fetchone()[0] == 0


# ---- memory: what the node remembers of ended sessions is bounded ----

@test
def the_node_remembers_at_most_ten_thousand_ended_sessions(con):
    con.execute("SET GLOBAL acl_max_sessions = 4096")
    try:
        first = open_session(con, sub="first")
        con.execute("SELECT acl_session_close(?)", [first])
        con.execute("CREATE TEMP TABLE toks AS SELECT ? || left(i::VARCHAR, 0) AS t FROM range(12000) r(i)", [mint(sub="many")])
        closed = con.execute("SELECT count(*) FILTER (WHERE c) FROM (SELECT acl_session_close(acl_session_open(t)) AS c FROM toks)").fetchone()[0]
        assert closed == 12000
        # 12 001 ended sessions: the oldest is past the bound and reads as never seen
        assert reason(con, first) == "unknown", reason(con, first)
    finally:
        con.execute("RESET GLOBAL acl_max_sessions")


# ---- the issuer behind a session: dropped or its keys rotated ----

@test
def a_dropped_or_rotated_issuer_ends_the_sessions_it_vouched_for(con):
    con.execute("SET GLOBAL acl_session_token_binding = 'every_use'")
    try:
        token = mint()
        h = open_session(con)
        assert count(con, h) == 3
        con.execute(f"ACL ADMIN ALTER ISSUER {sql_str(ISS)} SET KEYS 'hmac:another-shared-secret-that-is-32-bytes-long'")
        refused_with(lambda: con.execute(f"ACL TOKEN {sql_str(token)} SELECT 1").fetchall(), "acl: token rejected: bad signature")
        refused_with(lambda: count(con, h), "acl: session refused")
        con.execute(f"ACL ADMIN DROP ISSUER {sql_str(ISS)}")
        refused_with(lambda: con.execute(f"ACL TOKEN {sql_str(token)} SELECT 1").fetchall(), "acl: token rejected: unknown issuer")
        refused_with(lambda: count(con, h), "acl: session refused")
    finally:
        con.execute("RESET GLOBAL acl_session_token_binding")


# ---- door labels, NULLs, and the gateway's odd arguments ----

@test
def door_labels_and_odd_arguments_are_refused_or_harmless(con):
    t = mint()
    for door in ["", "a b", "x" * 65, "x'y", "\u00e9", "a\x00b", "/*", "a;b", "sql\n"]:
        refused_with(lambda: con.execute("SELECT acl_session_open(?, ?)", [t, door]).fetchall(),
                     "acl: a session's door label is 1 to 64 characters")
    assert con.execute("SELECT acl_session_count()").fetchone()[0] == 0, "a refused open counts nothing"
    assert con.execute("SELECT acl_session_open(?, NULL), acl_session_kill(NULL), acl_session_reason(NULL),"
                       " acl_session_close(NULL), acl_session_kill(-1), acl_session_kill(0)", [t]).fetchall() == [
        (None, None, None, None, False, False)]
    h = open_session(con)
    for other in [h.upper(), h[:31], h + "0", " " + h, h + "\x00", h[:31] + "g", "0" * 32]:
        assert con.execute("SELECT acl_session_reason(?), acl_session_close(?)", [other, other]).fetchone() == ("unknown", False)
    assert reason(con, h) == "live"


# ---- management and NATIVE through a session: quoting, CHECK, kept statements ----

@test
def a_sessions_management_text_is_quoted_whole_and_judged_again_when_kept(con):
    con.execute("ACL ADMIN GRANT ADMIN passthrough TO ROLE boss")
    boss = open_session(con, roles=["boss"], sub="boss")
    con.execute(q(boss, "ACL COMMENT ON VIRTUAL CATALOG sales IS 'a''); SELECT 1; --'")).fetchall()
    assert con.execute("SELECT comment FROM acl_catalogs() WHERE name = 'sales'").fetchall() == [("a'); SELECT 1; --",)]
    assert con.execute(q(boss, "ACL CHECK VIRTUAL CATALOG sales")).fetchall() == []
    assert con.execute(q(boss, "ACL NATIVE SELECT count(*) FROM phys.main.orders")).fetchall() == [(3,)]
    cur = con.cursor()
    native = q(boss, "ACL NATIVE SELECT count(*) FROM phys.main.orders WHERE id > ?")
    assert cur.execute(native, [1]).fetchall() == [(2,)]
    rel = con.sql(q(boss, "ACL NATIVE SELECT count(*) FROM phys.main.orders"))
    con.execute("SELECT acl_session_close(?)", [boss])
    refused_with(lambda: cur.execute(native, [1]).fetchall(), "acl: session refused: the session was closed")
    refused_with(lambda: rel.fetchall(), ENDED)
    refused_with(lambda: con.execute(q(boss, "ACL CHECK VIRTUAL CATALOG sales")).fetchall(), "acl: session refused: the session was closed")


# ---- many clients on a hardened host: long statements do not starve short ones ----

STARVE = r'''
import sys, threading, time, duckdb
ext, seconds = sys.argv[1], float(sys.argv[2])
con = duckdb.connect(":memory:", config={"allow_unsigned_extensions": "true"})
con.execute(f"LOAD '{ext}'")
con.execute("ATTACH ':memory:' AS phys")
con.execute("CREATE TABLE phys.main.orders AS SELECT range::INTEGER id FROM range(3)")
con.execute("ACL ADMIN CREATE VIRTUAL CATALOG sales; CREATE VIRTUAL TABLE sales.orders AS phys.main.orders;"
            " CREATE ROLE analyst; GRANT CATALOG sales TO ROLE analyst WITH (select) MAIN")
big = 'ACL ROLE "analyst" SELECT count(*) FROM orders WHERE id IN (' + ",".join(str(i) for i in range(60000)) + ")"
stop = time.time() + seconds
got = {"big": 0, "small": 0, "meta": 0}
errors, lock = [], threading.Lock()
def loop(work):
    c = con.cursor()
    while time.time() < stop:
        for k, sql in work:
            try:
                c.execute(sql).fetchall()
                with lock: got[k] += 1
            except Exception as e:
                with lock: errors.append(f"{k}: {str(e)[:100]}")
small = [("small", 'ACL ROLE "analyst" SELECT count(*) FROM orders'),
         ("meta", 'ACL ROLE "analyst" SELECT count(*) FROM information_schema.tables')]
ths = [threading.Thread(target=loop, args=([("big", big)],)) for _ in range(6)]
ths += [threading.Thread(target=loop, args=(small,)) for _ in range(8)]
for t in ths: t.start()
for t in ths: t.join()
print("served", got["big"] > 0 and got["small"] > 100 and got["meta"] > 100, "errors", len(errors), sorted(set(errors))[:3])
'''


@test
def long_statements_under_an_address_space_limit_starve_no_short_one(con):
    # Six clients loop on 60 000-literal statements (each rewritten on a 1 GiB region) while
    # eight loop on short ones and metadata listings, in a child under `ulimit -v 8G`.
    import subprocess
    import sys
    cmd = f"ulimit -v {8 * 1024 * 1024} && exec {sys.executable} -c \"$CHILD\" {harness.EXT} 8"
    out = subprocess.run(["bash", "-c", cmd], env=dict(os.environ, CHILD=STARVE), capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "served True errors 0 []" in out.stdout, out.stdout + out.stderr[-2000:]


# ---- caps: a refusal takes no place anywhere ----

@test
def a_refused_open_takes_no_place_in_the_node_or_a_group(con):
    con.execute("ACL ADMIN CREATE RESOURCE GROUP one (max_sessions = 1); GRANT RESOURCE GROUP one TO ROLE analyst")
    con.execute("SET GLOBAL acl_max_sessions = 2")
    try:
        open_session(con, sub="a1")
        for _ in range(5):  # refused by the group: the node's count must not move
            refused_with(lambda: open_session(con, sub="a2"), 'every resource group of the principal ("one")')
        open_session(con, roles=["boss"], sub="b1")
        for _ in range(5):  # refused by the node: the group's count must not move
            refused_with(lambda: open_session(con, roles=["boss"], sub="b2"), "the node holds 2 sessions")
        assert con.execute("SELECT acl_session_count()").fetchone()[0] == 2
        con.execute("SELECT acl_session_kill(?)", [id_of(con, "b1")])
        con.execute("SELECT acl_session_kill(?)", [id_of(con, "a1")])
        open_session(con, sub="a3")  # the group's one place is free again
        refused_with(lambda: open_session(con, sub="a4"), 'every resource group of the principal ("one")')
    finally:
        con.execute("RESET GLOBAL acl_max_sessions")


@test
def explain_under_a_session_shows_no_handle(con):
    con.execute("ACL ADMIN CREATE ROLE ex; GRANT CATALOG sales TO ROLE ex WITH (select, explain) MAIN")
    h = open_session(con, roles=["ex"], sub="ex")
    for sql in ["EXPLAIN SELECT count(*) FROM orders", "EXPLAIN ANALYZE SELECT count(*) FROM orders",
                "SELECT 1; EXPLAIN ANALYZE SELECT * FROM orders WHERE id > 1"]:
        no_handle(str(con.execute(q(h, sql)).fetchall()), h)
    try:
        con.execute(q(h, "EXPLAIN ANALYZE SELECT nope FROM orders")).fetchall()
        raise AssertionError("not refused")
    except duckdb.Error as e:
        no_handle(str(e), h)


if __name__ == "__main__":
    harness.main(setup)
