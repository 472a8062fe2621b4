#!/usr/bin/env python3
"""Sessions (specs/017-sessions.md): `acl_session_open(token)`, `ACL SESSION '<handle>' <sql>`, the
session functions and settings, end to end with tokens minted by PyJWT; and many clients on a host
under `ulimit -v` (issue 33 item 4), in a child process.

Run: python test/python/test_sessions.py --extension build/release/acl.duckdb_extension
Ends with `N passed, N failed`.
"""
import random
import re
import threading
import time

import duckdb
import jwt

import harness
from harness import refused_with, sales, sql_str, test

SECRET = "a-shared-secret-that-is-32-bytes-or-longer"
ISS = "https://idp.example"
HANDLE = re.compile(r"^[0-9a-f]{32}$")
ENDED = "acl: the session this statement was prepared under has ended"


def setup(ext):
    con = sales(ext)
    con.execute(f"ACL ADMIN CREATE ISSUER {sql_str(ISS)} KEYS {sql_str('hmac:' + SECRET)} ALGS (HS256)")
    # a second tenant: the same virtual name, another physical table
    con.execute("CREATE TABLE phys.main.other_orders (id INTEGER, customer VARCHAR)")
    con.execute("INSERT INTO phys.main.other_orders VALUES (100, 'initech')")
    con.execute("ACL ADMIN CREATE VIRTUAL CATALOG other; CREATE VIRTUAL TABLE other.orders AS phys.main.other_orders;"
                " CREATE ROLE tenant_b; GRANT CATALOG other TO ROLE tenant_b WITH (select) MAIN")
    return con


def mint(roles=("analyst",), sub="alice", exp=None, **over):
    claims = {"iss": ISS, "sub": sub, "exp": int(time.time()) + 300 if exp is None else exp, "roles": list(roles)}
    claims.update(over)
    return jwt.encode({k: v for k, v in claims.items() if v is not None}, SECRET, algorithm="HS256")


def open_session(con, door=None, **token):
    t = mint(**token)
    h = (con.execute("SELECT acl_session_open(?)", [t]) if door is None
         else con.execute("SELECT acl_session_open(?, ?)", [t, door])).fetchall()[0][0]
    assert HANDLE.match(h), h
    return h


def q(h, sql):
    return f"ACL SESSION {sql_str(h)} {sql}"


def count(con, h, where=""):
    return con.execute(q(h, f"SELECT count(*) FROM orders {where}")).fetchone()[0]


def reason(con, h):
    return con.execute("SELECT acl_session_reason(?)", [h]).fetchone()[0]


def sessions(con):
    return con.execute("SELECT id, subject, roles, door, idle_seconds, epoch(expires_at)::BIGINT, groups,"
                       " opened::VARCHAR, last_used::VARCHAR FROM acl_sessions() ORDER BY id").fetchall()


def refused_session(fn, why):
    return refused_with(fn, f"acl: session refused: {why}")


# ---- opening, and the statements of a session ----

@test
def a_session_runs_its_statements_as_the_tokens_principal(con):
    h = open_session(con)
    assert count(con, h) == 3
    # every kind of statement the gateway's prefix takes, through acl_session_sql's text
    text = con.execute("SELECT acl_session_sql(?, 'SELECT max(id) FROM orders')", [h]).fetchone()[0]
    assert text == f"ACL SESSION '{h}' SELECT max(id) FROM orders"
    assert con.execute(text).fetchall() == [(3,)]
    refused_with(lambda: con.execute(q(h, "SELECT * FROM phys.main.orders")).fetchall(),
                 "acl: a table reference names a catalog that does not exist or is not granted")
    refused_with(lambda: con.execute(q(h, "DELETE FROM orders")).fetchall(), "lacks delete on sales.orders")
    # the quoting: a handle with a quote is quoted (and names no session)
    assert con.execute("SELECT acl_session_sql('a''b', 'SELECT 1')").fetchone()[0] == "ACL SESSION 'a''b' SELECT 1"
    assert con.execute("SELECT acl_session_sql(NULL, 'SELECT 1'), acl_session_open(NULL)").fetchone() == (None, None)


@test
def a_refused_token_is_an_error_naming_the_reason(con):
    for token, why in [
        (mint(exp=int(time.time()) - 3600), "expired"),
        (mint()[:-4] + "AAAA", "bad signature"),
        ("not.a.jwt", "malformed"),
        (mint(iss="https://nobody.example"), "unknown issuer"),
        (mint(roles=["nobody"]), "no role is mapped for this token"),
    ]:
        msg = refused_with(lambda: con.execute("SELECT acl_session_open(?)", [token]).fetchall(),
                           f"acl: token rejected: {why}")
        for part in token.split("."):
            assert len(part) < 8 or part not in msg, msg
    assert con.execute("SELECT acl_session_count()").fetchone()[0] == 0


@test
def the_session_functions_are_native_only(con):
    h = open_session(con)
    calls = ["acl_session_open('x')", f"acl_session_sql('{h}', 'SELECT 1')", f"acl_session_close('{h}')",
             f"acl_session_reason('{h}')", "acl_session_kill(1)", "acl_session_sweep()", "acl_session_count()"]
    for prefix in ['ACL ROLE "analyst"', f"ACL SESSION '{h}'", f"ACL TOKEN '{mint()}'"]:
        for call in calls:
            refused_with(lambda: con.execute(f"{prefix} SELECT {call}").fetchall(), "is not permitted")
        refused_with(lambda: con.execute(f"{prefix} SELECT * FROM acl_sessions()").fetchall(), "not permitted")
        refused_with(lambda: con.execute(f"{prefix} SET GLOBAL acl_max_sessions = 0").fetchall(), "not permitted")
    assert reason(con, h) == "live", "nothing above closed it"


@test
def the_settings_are_global_and_validated_at_set(con):
    setting = lambda n: con.execute(f"SELECT current_setting('{n}')").fetchone()[0]
    assert (setting("acl_session_idle_timeout"), setting("acl_max_sessions"), setting("acl_session_token_binding")) \
        == (900, 1000, "connect")
    for bad, why in [
        ("acl_session_token_binding = 'always'", "acl: acl_session_token_binding must be 'connect' or 'every_use'"),
        ("acl_session_token_binding = ''", "must be 'connect' or 'every_use'"),
        ("acl_session_idle_timeout = 99999999999", "acl: acl_session_idle_timeout must be"),
        ("acl_session_idle_timeout = -1", "Error"),
        ("acl_max_sessions = 99999999999", "acl: acl_max_sessions must be"),
        ("acl_max_sessions = -2", "Error"),
        ("acl_max_sessions = 'many'", "Error"),
    ]:
        refused_with(lambda: con.execute(f"SET GLOBAL {bad}").fetchall(), why)
    assert (setting("acl_session_idle_timeout"), setting("acl_max_sessions"), setting("acl_session_token_binding")) \
        == (900, 1000, "connect"), "a refused value changes nothing"
    for name in ["acl_session_idle_timeout", "acl_max_sessions", "acl_session_token_binding"]:
        value = "'every_use'" if name.endswith("binding") else "5"
        refused_with(lambda: con.execute(f"SET SESSION {name} = {value}").fetchall(), "")
    con.execute("SET GLOBAL acl_session_token_binding = 'Every_Use'")
    assert setting("acl_session_token_binding") == "every_use"
    other = con.cursor()  # GLOBAL: every connection of the instance sees it
    assert other.execute("SELECT current_setting('acl_session_token_binding')").fetchone()[0] == "every_use"
    con.execute("RESET GLOBAL acl_session_token_binding")
    assert setting("acl_session_token_binding") == "connect"
    con.execute("SET GLOBAL acl_max_sessions = 0; SET GLOBAL acl_session_idle_timeout = 0")
    assert (setting("acl_session_idle_timeout"), setting("acl_max_sessions")) == (0, 0)


# ---- how a session ends ----

@test
def close_is_idempotent_and_the_handle_stays_refused(con):
    h = open_session(con)
    assert reason(con, h) == "live"
    assert con.execute("SELECT acl_session_close(?), acl_session_close(?)", [h, h]).fetchone() == (True, False)
    assert reason(con, h) == "closed"
    refused_session(lambda: count(con, h), "the session was closed")
    assert con.execute("SELECT acl_session_close(?)", [h]).fetchone()[0] is False
    assert con.execute("SELECT acl_session_count()").fetchone()[0] == 0


@test
def idle_sessions_end_and_use_keeps_a_session_alive(con):
    con.execute("SET GLOBAL acl_session_idle_timeout = 2")
    idle, busy = open_session(con), open_session(con, sub="bob")
    for _ in range(6):
        time.sleep(0.5)
        assert count(con, busy) == 3
    assert reason(con, idle) == "idle", "acl_session_reason reads it as ended (and ends nothing itself)"
    assert reason(con, busy) == "live"
    refused_session(lambda: count(con, idle), "the session was idle longer than acl_session_idle_timeout")
    # reading the reason is no use: a session asked about only still idles out
    watched = open_session(con, sub="carol")
    for _ in range(6):
        time.sleep(0.5)
        reason(con, watched)
    assert reason(con, watched) == "idle"
    # 0: never idle
    con.execute("SET GLOBAL acl_session_idle_timeout = 0")
    never = open_session(con, sub="dave")
    time.sleep(2.5)
    assert count(con, never) == 3


@test
def kill_ends_a_session_by_its_operator_id(con):
    h1, h2 = open_session(con), open_session(con, sub="bob", door="flight")
    rows = sessions(con)
    assert [r[1] for r in rows] == ["alice", "bob"] and [r[3] for r in rows] == ["sql", "flight"]
    id1 = rows[0][0]
    assert con.execute("SELECT acl_session_kill(?), acl_session_kill(?)", [id1, id1]).fetchone() == (True, False)
    assert con.execute("SELECT acl_session_kill(987654321), acl_session_kill(-1)").fetchone() == (False, False)
    assert reason(con, h1) == "killed"
    refused_session(lambda: count(con, h1), "the session was killed")
    assert count(con, h2) == 3
    assert [r[0] for r in sessions(con)] == [rows[1][0]]


@test
def sweep_and_count(con):
    con.execute("SET GLOBAL acl_session_idle_timeout = 1")
    hs = [open_session(con, sub=f"u{i}") for i in range(3)]
    assert con.execute("SELECT acl_session_count()").fetchone()[0] == 3
    time.sleep(0.6)
    count(con, hs[0])
    time.sleep(0.6)
    assert con.execute("SELECT acl_session_sweep()").fetchone()[0] == 2
    assert con.execute("SELECT acl_session_sweep()").fetchone()[0] == 0
    assert con.execute("SELECT acl_session_count()").fetchone()[0] == 1
    assert [reason(con, h) for h in hs] == ["live", "idle", "idle"]


@test
def the_listing_shows_each_live_session_and_never_its_handle(con):
    exp = int(time.time()) + 600
    h = open_session(con, exp=exp, roles=["analyst", "tenant_b"], door="flight:127.0.0.1")
    assert con.execute(q(h, "SELECT count(*) FROM sales.orders")).fetchall() == [(3,)]
    (row,) = sessions(con)
    id_, subject, roles, door, idle, expires_at, groups, opened, last_used = row
    assert (subject, roles, door, idle, expires_at, groups) == ("alice", "analyst,tenant_b", "flight:127.0.0.1", 0, exp, "")
    assert opened <= last_used
    assert str(id_) != h
    cols = [c[0] for c in con.execute("SELECT * FROM acl_sessions() LIMIT 0").description]
    assert cols == ["id", "subject", "roles", "door", "opened", "last_used", "idle_seconds", "expires_at", "groups", "issuer"]
    every = con.execute("SELECT * EXCLUDE (opened, last_used, expires_at) FROM acl_sessions()").fetchall()
    assert h not in repr(every)
    refused_with(lambda: con.execute("SELECT acl_session_open(?, 'a door')", [mint()]).fetchall(),
                 "acl: a session's door label is 1 to 64 characters")


@test
def the_cap_refuses_a_new_session_and_never_evicts_one(con):
    con.execute("SET GLOBAL acl_max_sessions = 2")
    a, b = open_session(con), open_session(con, sub="bob")
    refused_with(lambda: open_session(con, sub="carol"),
                 "acl: session refused: the node holds 2 sessions (acl_max_sessions); close or kill one first")
    assert count(con, a) == 3 and count(con, b) == 3
    con.execute("SELECT acl_session_close(?)", [a]).fetchall()
    c = open_session(con, sub="carol")
    assert count(con, c) == 3
    con.execute("SET GLOBAL acl_max_sessions = 0")
    more = [open_session(con, sub=f"m{i}") for i in range(5)]
    assert con.execute("SELECT acl_session_count()").fetchone()[0] == 7
    assert all(count(con, m) == 3 for m in more)


# ---- resource groups (issue 33 item 3, in part) ----

GROUP_FULL = "acl: session refused: every resource group of the principal"


@test
def a_resource_groups_max_sessions_caps_a_roles_sessions_the_most_generous_group_winning(con):
    con.execute("ACL ADMIN CREATE RESOURCE GROUP one (max_sessions = 1, max_result_rows = 50);"
                " CREATE RESOURCE GROUP three (max_sessions = 3, max_stream_bytes = 4096);"
                " GRANT RESOURCE GROUP one TO ROLE analyst")
    a = open_session(con)
    refused_with(lambda: open_session(con, sub="alice2"), f'{GROUP_FULL} ("one") holds its max_sessions sessions')
    # another principal of the same role: the group counts sessions, not subjects
    refused_with(lambda: open_session(con, sub="bob"), GROUP_FULL)
    # a principal in no group: only acl_max_sessions
    b = open_session(con, roles=("tenant_b",), sub="b")
    assert con.execute(q(b, "SELECT count(*) FROM orders")).fetchall() == [(1,)]
    # a second role in a more generous group: admitted, counted in both (and the group granted
    # after b opened changes nothing for b)
    con.execute("ACL ADMIN GRANT RESOURCE GROUP three TO ROLE tenant_b")
    t = open_session(con, roles=("analyst", "tenant_b"), sub="carol")
    rows = {r[1]: r[6] for r in sessions(con)}
    assert rows == {"alice": "one", "b": "", "carol": "one,three"}, rows
    # the revoke acts at the next open; the live session runs on
    con.execute("ACL ADMIN REVOKE RESOURCE GROUP one FROM ROLE analyst")
    assert count(con, a) == 3
    more = [open_session(con, sub=f"x{i}") for i in range(3)]
    assert all(count(con, h) == 3 for h in more)
    # ending a session gives its place back (x0..x2 opened under no group and count in none)
    con.execute("ACL ADMIN GRANT RESOURCE GROUP one TO ROLE analyst")
    refused_with(lambda: open_session(con, sub="late"), GROUP_FULL)  # alice's and carol's count in one
    con.execute("SELECT acl_session_close(?)", [a]).fetchall()
    refused_with(lambda: open_session(con, sub="late"), GROUP_FULL)  # carol's still does
    con.execute("SELECT acl_session_kill(?)", [[r[0] for r in sessions(con) if r[1] == "carol"][0]]).fetchall()
    assert count(con, open_session(con, sub="late")) == 3


@test
def a_groups_cap_holds_when_many_clients_open_at_once(con):
    con.execute("ACL ADMIN CREATE RESOURCE GROUP pool (max_sessions = 3); GRANT RESOURCE GROUP pool TO ROLE analyst")
    token = mint()
    got = {"ok": 0, "full": 0, "other": []}
    lock = threading.Lock()
    start = threading.Barrier(12)

    def one():
        cur = con.cursor()
        start.wait()
        try:
            cur.execute("SELECT acl_session_open(?)", [token]).fetchall()
            kind = "ok"
        except duckdb.Error as e:
            kind = "full" if GROUP_FULL in str(e) else "other"
            if kind == "other":
                got["other"].append(str(e))
        with lock:
            if kind != "other":
                got[kind] += 1

    threads = [threading.Thread(target=one) for _ in range(12)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert (got["ok"], got["full"], got["other"]) == (3, 9, []), got
    assert con.execute("SELECT acl_session_count()").fetchall() == [(3,)]


@test
def every_use_judges_the_tokens_exp_at_each_statement_and_connect_only_at_open(con):
    con.execute("SET acl_jwt_clock_skew = 0").fetchall()
    exp = int(time.time()) + 2
    h = open_session(con, exp=exp)
    while time.time() <= exp + 1:
        time.sleep(0.2)
    assert count(con, h) == 3, "connect: the token's exp was judged at open only"
    con.execute("SET GLOBAL acl_session_token_binding = 'every_use'")
    refused_session(lambda: count(con, h), "the session's token expired (acl_session_token_binding is 'every_use')")
    assert reason(con, h) == "expired"
    con.execute("SET GLOBAL acl_session_token_binding = 'connect'")
    refused_session(lambda: count(con, h), "the session's token expired")
    # within the skew a statement still runs, as the token itself would verify
    con.execute("SET GLOBAL acl_session_token_binding = 'every_use'")
    con.execute("SET acl_jwt_clock_skew = 60")
    h2 = open_session(con, exp=int(time.time()) - 5)
    assert count(con, h2) == 3


# ---- rights per statement ----

@test
def a_revoked_grant_a_dropped_role_and_a_narrowed_slice_act_on_the_next_statement(con):
    h = open_session(con)
    assert count(con, h) == 3
    con.execute("ACL ADMIN GRANT TABLE sales.orders TO ROLE analyst WITH (select) RLS (customer = 'acme')")
    assert count(con, h) == 2, "a narrowed slice"
    con.execute("ACL ADMIN REVOKE CATALOG sales FROM ROLE analyst")
    refused_with(lambda: count(con, h), "acl: unqualified table")
    con.execute("ACL ADMIN GRANT CATALOG sales TO ROLE analyst WITH (select) MAIN")
    assert count(con, h) == 3
    con.execute("ACL ADMIN DROP ROLE analyst")
    refused_with(lambda: count(con, h), "analyst")
    assert reason(con, h) == "live", "the session lives on; its rights are the policy's"


@test
def caches_never_cross_sessions(con):
    # Two principals run the very same statements (only the handle differs), repeatedly (the batch
    # cache and its kept parse) and with new numbers (a learned shape): each reads its own tenant.
    a, b = open_session(con), open_session(con, roles=["tenant_b"], sub="bob")
    for n in range(6):
        for h, want in [(a, [(1,), (2,), (3,)]), (b, [(100,)])]:
            assert con.execute(q(h, f"SELECT id FROM orders WHERE id > {n % 2} - 1 ORDER BY id")).fetchall() == want
            assert con.execute(q(h, "SELECT id FROM orders WHERE id > ? - 1 ORDER BY id"), [n % 2]).fetchall() == want
    con.execute("SELECT acl_session_close(?)", [a]).fetchall()
    for n in [0, 1, 7]:  # met before, and a new number of a learned shape
        refused_session(lambda: con.execute(q(a, f"SELECT id FROM orders WHERE id > {n} - 1 ORDER BY id")).fetchall(),
                        "the session was closed")
        assert con.execute(q(b, f"SELECT id FROM orders WHERE id > {n} - 1 ORDER BY id")).fetchall() == \
            ([(100,)] if n < 100 else [])


@test
def a_transaction_belongs_to_its_session(con):
    a, a2 = open_session(con), open_session(con)  # the same subject, two sessions
    con.execute(q(a, "BEGIN"))
    assert count(con, a) == 3
    refused_with(lambda: count(con, a2), "acl: another principal's transaction is open on this connection")
    refused_with(lambda: con.execute(q(a2, "COMMIT")).fetchall(), "acl: another principal's transaction is open")
    con.execute(q(a, "ROLLBACK"))
    assert count(con, a2) == 3


# ---- what outlives a statement ----

@test
def prepared_statements_and_relations_are_refused_once_the_session_ends(con):
    for end in ["close", "kill", "idle"]:
        h = open_session(con, sub=end)
        text = q(h, "SELECT count(*) FROM orders WHERE id > ?")
        rel = con.sql(q(h, "SELECT id FROM orders"))
        built = rel.filter("id > 1")
        kept = con.extract_statements(q(h, "SELECT count(*) FROM orders"))[0]
        other = con.cursor()
        assert rel.fetchall() and built.fetchall() == [(2,), (3,)] and con.execute(kept).fetchall() == [(3,)]
        assert con.execute(text, [0]).fetchall() == [(3,)]
        if end == "close":
            con.execute("SELECT acl_session_close(?)", [h]).fetchall()
        elif end == "kill":
            (sid,) = [r[0] for r in sessions(con) if r[1] == "kill"]
            con.execute("SELECT acl_session_kill(?)", [sid]).fetchall()
        else:
            con.execute("SET GLOBAL acl_session_idle_timeout = 1").fetchall()
            time.sleep(2.2)
        word = {"close": "closed", "kill": "killed", "idle": "idle"}[end]
        refused_with(rel.fetchall, f"{ENDED} ({word}); prepare it again")
        refused_with(built.fetchall, ENDED)
        refused_with(lambda: con.execute(kept).fetchall(), ENDED)
        refused_with(lambda: other.execute(text, [0]).fetchall(), "acl: session refused")
        con.execute("SET GLOBAL acl_session_idle_timeout = 900").fetchall()


@test
def a_prepared_statement_stops_when_its_session_is_closed_while_it_runs(con):
    con.execute("ACL ADMIN CREATE ROLE clerk; GRANT CATALOG sales TO ROLE clerk MAIN")
    h = open_session(con, roles=["clerk"])
    many = [[1000 + i, "x"] for i in range(200_000)]
    outcome = {}

    def insert_many():
        try:
            con.executemany(q(h, "INSERT INTO orders VALUES (?, ?)"), many)
            outcome["error"] = None
        except duckdb.Error as e:
            outcome["error"] = str(e)

    worker = threading.Thread(target=insert_many)
    worker.start()
    time.sleep(0.5)
    con.cursor().execute("SELECT acl_session_close(?)", [h]).fetchall()
    worker.join(120)
    inserted = con.cursor().execute("SELECT count(*) FROM phys.main.orders WHERE id >= 1000").fetchone()[0]
    assert outcome.get("error") and ENDED in outcome["error"], outcome
    assert 0 < inserted < len(many), inserted


@test
def the_handle_never_reaches_a_listing_an_error_explain_or_stored_text(con):
    con.execute("ACL ADMIN GRANT CATALOG sales TO ROLE analyst WITH (select, explain) MAIN")
    con.execute("CALL enable_logging('QueryLog')")
    h = open_session(con)
    seen = []
    seen.append(repr(con.execute(q(h, "EXPLAIN SELECT * FROM orders WHERE id = 2")).fetchall()))
    rel = con.sql(q(h, "SELECT id FROM orders"))
    seen.append(rel.sql_query())
    seen.append(repr(rel.explain()))
    seen.append(repr(con.execute(q(h, "SELECT count(*) FROM orders WHERE id > ?"), [1]).fetchall()))
    for bad in ["SELECT * FROM nothing_here", "SELECT nope FROM orders", "SELECT 1/0::INTEGER FROM orders",
                "SELECT CAST('x' AS INTEGER) FROM orders", "SELEC 1", "DELETE FROM orders"]:
        try:
            con.execute(q(h, bad)).fetchall()
        except duckdb.Error as e:
            seen.append(str(e))
    con.execute(q(h, "SELECT 42")).fetchall()
    con.execute("SELECT acl_session_close(?)", [h]).fetchall()
    for again in ["SELECT 1", "ACL NATIVE SELECT 1", "ACL CREATE ROLE x"]:
        seen.append(refused_with(lambda: con.execute(q(h, again)).fetchall(), "acl: session refused"))
    seen.append(refused_with(rel.fetchall, ENDED))
    seen.append(repr(con.execute("SELECT * EXCLUDE (opened, last_used, expires_at) FROM acl_sessions()").fetchall()))
    seen.append(repr(con.execute("SELECT statement FROM duckdb_prepared_statements()").fetchall()))
    con.execute("CALL disable_logging()")
    logged = con.execute("SELECT message FROM duckdb_logs").fetchall()
    assert any("acl:policy-version" in m for (m,) in logged), "the query log holds our statements"
    seen.append(repr(logged))
    for text in seen:
        assert h not in text, text
    assert any("session=" in m for (m,) in logged), "the tag names the session by its id"


# ---- management and NATIVE through a session ----

@test
def management_and_native_run_through_a_session(con):
    h = open_session(con)
    refused_with(lambda: con.execute(q(h, "ACL CREATE ROLE made")).fetchall(), "lacks")
    refused_with(lambda: con.execute(q(h, "ACL NATIVE SELECT 1")).fetchall(), "passthrough")
    con.execute("ACL ADMIN GRANT ADMIN manage TO ROLE analyst")
    con.execute(q(h, "ACL CREATE ROLE made; CREATE VIRTUAL CATALOG lab")).fetchall()
    assert ("made",) in con.execute("SELECT name FROM acl_roles()").fetchall()
    prepared = con.extract_statements(q(h, "ACL CREATE ROLE later"))[0]
    con.execute("ACL ADMIN GRANT ADMIN passthrough TO ROLE analyst")
    assert con.execute(q(h, "ACL NATIVE SELECT count(*) FROM phys.main.orders")).fetchall() == [(3,)]
    native = con.sql(q(h, "ACL NATIVE SELECT count(*) FROM phys.main.orders"))
    con.execute("SELECT acl_session_close(?)", [h]).fetchall()
    # a management statement kept from the session is judged again when it runs
    refused_session(lambda: con.execute(prepared).fetchall(), "the session was closed")
    assert ("later",) not in con.execute("SELECT name FROM acl_roles()").fetchall()
    refused_with(native.fetchall, ENDED)
    # a principal's management naming a session's id natively is the gateway's own call: under a
    # principal acl_exec_as is never callable
    refused_with(lambda: con.execute('ACL ROLE "analyst" SELECT * FROM acl_exec_as(\'session\', \'1\', \'CREATE ROLE x\')')
                 .fetchall(), "not permitted")


@test
def acl_session_inside_a_principals_text_is_refused(con):
    h = open_session(con)
    token = mint()
    for text in [
        f'ACL ROLE "analyst" SELECT 1; ACL SESSION {sql_str(h)} SELECT 2',
        f"ACL SESSION {sql_str(h)} SELECT 1; ACL SESSION {sql_str(h)} DELETE FROM orders",
        f'ACL ROLE "analyst" ACL SESSION {sql_str(h)} SELECT 1',
        f"ACL TOKEN {sql_str(token)} ACL SESSION {sql_str(h)} SELECT 1",
        f"ACL SESSION {sql_str(h)} ACL SESSION {sql_str(h)} SELECT 1",
        f"ACL SESSION {sql_str(h)} SELECT * FROM query('ACL SESSION {h} SELECT 1')",
        f"ACL ADMIN ACL SESSION {sql_str(h)} SELECT 1",
    ]:
        msg = refused_with(lambda: con.execute(text).fetchall(), "acl:")
        assert h not in msg, msg
    assert count(con, h) == 3


# ---- the attacker's handles ----

@test
def forged_guessed_and_replayed_handles_are_refused(con):
    h = open_session(con)
    sid = sessions(con)[0][0]
    flipped = h[:-1] + ("0" if h[-1] != "0" else "1")
    for guess in [flipped, h.upper(), h + "0", h[:-1], " " + h, "%032x" % random.getrandbits(128), str(sid),
                  "0" * 32, "' OR 1=1 --", h.replace("a", "A", 1) if "a" in h else h.upper()]:
        msg = refused_session(lambda: con.execute(q(guess, "SELECT count(*) FROM orders")).fetchall(), "unknown session")
        assert guess not in msg or len(guess) < 8, msg
        assert reason(con, guess) == "unknown"
        assert con.execute("SELECT acl_session_close(?)", [guess]).fetchone()[0] is False
    assert count(con, h) == 3, "no guess ended or reached the session"
    # a handle is never reused: closed, it stays closed after new sessions are opened
    con.execute("SELECT acl_session_close(?)", [h]).fetchall()
    for _ in range(20):
        open_session(con)
    refused_session(lambda: count(con, h), "the session was closed")


@test
def a_handle_is_worthless_in_another_database_instance(con):
    h = open_session(con)
    sid = sessions(con)[0][0]
    other = setup(harness.EXT)
    refused_session(lambda: count(other, h), "unknown session")
    assert other.execute("SELECT acl_session_kill(?), acl_session_count()", [sid]).fetchone() == (False, 0)
    # nor does the other instance's own session of the same id (ids are unique in the process)
    h2 = open_session(other)
    assert sessions(other)[0][0] != sid
    refused_session(lambda: count(con, h2), "unknown session")
    assert count(con, h) == 3 and count(other, h2) == 3


@test
def closing_races_statements_cleanly(con):
    h = open_session(con)
    results = {"ok": 0, "refused": 0, "other": []}
    lock = threading.Lock()
    start = threading.Barrier(9)

    def run():
        cur = con.cursor()
        start.wait()
        for _ in range(200):
            try:
                cur.execute(q(h, "SELECT count(*) FROM orders")).fetchall()
                kind = "ok"
            except duckdb.Error as e:
                kind = "refused" if ("session refused" in str(e) or ENDED in str(e)) else None
                if kind is None:
                    with lock:
                        results["other"].append(str(e))
                    continue
            with lock:
                results[kind] += 1

    threads = [threading.Thread(target=run) for _ in range(8)]
    for t in threads:
        t.start()
    start.wait()
    time.sleep(0.05)
    assert con.cursor().execute("SELECT acl_session_close(?)", [h]).fetchone()[0] is True
    for t in threads:
        t.join()
    assert not results["other"], results["other"][:3]
    assert results["refused"] > 0
    refused_session(lambda: count(con, h), "the session was closed")


if __name__ == "__main__":
    harness.main(setup)
