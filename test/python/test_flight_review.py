#!/usr/bin/env python3
"""Outside review of the Arrow Flight SQL door (specs/018-flight-door.md, issue 33 items 2/3/5):
tokens, sessions, tickets, prepared statements, transactions, cancel and the statement text a
client sends, attacked with raw pyarrow Flight calls (arbitrary headers, tickets, handles).
Every test asserts the secure outcome; one marked `known_bug` fails today (reported as `BUG`;
the file fails once it passes: remove the marker). Ingest, catalog RPCs, limits and serving:
test_flight_review2.py.

Run: python test/python/test_flight_review.py --extension build/release/acl.duckdb_extension
Ends with `N passed, N failed`.
"""
import os
import threading
import time

import jwt
import pyarrow as pa
import pyarrow.flight as fl

import harness
from flight_review_common import (Served, anyof, begin, cancel, clean, close_prepared, end, fails, info, known_bug, mint, opts,
                                  prepare, prepared_query, query, query_cmd, ticket_of, update)
from harness import sql_str, test


def setup(ext):
    return Served(ext)


def teardown(s):
    s.close()


class Headers(fl.ClientMiddlewareFactory):
    """Keeps the response headers a client received (the door's set-cookie)."""

    def __init__(self):
        self.got = []

    def start_call(self, info_):
        factory = self

        class M(fl.ClientMiddleware):
            def received_headers(self, headers):
                factory.got.append(headers)
        return M()

    def cookie(self):
        for h in reversed(self.got):
            for v in h.get("set-cookie", []):
                return v.split(";")[0]
        return None


def session_ids(s, sub):
    return [r[0] for r in s.con.execute("SELECT id FROM acl_sessions() WHERE subject = ? ORDER BY id", [sub]).fetchall()]


def count_orders(c, token):
    return query(c, "SELECT count(*) AS n FROM orders", opts(token)).column(0).to_pylist()[0]


# ---- the bearer: every spelling that is not a verified token opens nothing ----

@test
def bearer_spellings_that_do_not_verify_are_unauthenticated_and_open_nothing(s):
    s.start()
    c = s.flight()
    now = int(time.time())
    none_alg = jwt.encode({"iss": "https://idp.example", "sub": "alice", "exp": now + 300, "roles": ["analyst"]}, None, algorithm="none")
    bad = {
        "no header": [],
        "empty bearer": [(b"authorization", b"Bearer ")],
        "basic": [(b"authorization", b"Basic YWxpY2U6cHc=")],
        "scheme only": [(b"authorization", b"Bearer")],
        "garbled": [(b"authorization", b"Bearer not.a.jwt")],
        "alg none": [(b"authorization", f"Bearer {none_alg}".encode())],
        "alg none, no signature dot": [(b"authorization", f"Bearer {none_alg.rstrip('.')}".encode())],
        "other issuer": [(b"authorization", f"Bearer {mint(iss='https://evil.example', secret='x' * 40)}".encode())],
        "right issuer, other key": [(b"authorization", f"Bearer {mint(secret='y' * 40)}".encode())],
        "HS512 where HS256 is pinned": [(b"authorization", f"Bearer {mint(alg='HS512')}".encode())],
        "expired": [(b"authorization", f"Bearer {mint(exp=now - 3600)}".encode())],
        "not yet valid": [(b"authorization", f"Bearer {mint(nbf=now + 3600)}".encode())],
        "unmapped role": [(b"authorization", f"Bearer {mint(roles=('nobody',))}".encode())],
        "two tokens": [(b"authorization", f"Bearer {mint()} {mint()}".encode())],
        "huge (60 KB)": [(b"authorization", b"Bearer " + b"A" * 60_000)],
    }
    for what, headers in bad.items():
        for call in (lambda: query(c, "SELECT 1", fl.FlightCallOptions(headers=headers, timeout=10)),
                     lambda: list(c.do_action(fl.Action("BeginTransaction", anyof("ActionBeginTransactionRequest")),
                                                 fl.FlightCallOptions(headers=headers, timeout=10)))):
            try:
                call()
            except Exception as e:  # noqa: BLE001 - refused by the door or by HTTP/2's header limit
                clean(str(e))
                if "huge" not in what:
                    assert isinstance(e, fl.FlightUnauthenticatedError), (what, e)
                continue
            raise AssertionError(f"{what}: a call without a verified token succeeded")
    assert s.sessions() == 0
    assert count_orders(c, mint()) == 3  # the door still serves


@test
def a_handshake_payload_that_is_no_token_opens_nothing_and_a_huge_one_is_refused_quickly(s):
    s.start()

    class Payload(fl.ClientAuthHandler):
        def __init__(self, payload):
            super().__init__()
            self.payload = payload

        def authenticate(self, outgoing, incoming):
            outgoing.write(self.payload)
            incoming.read()

        def get_token(self):
            return b""

    for payload in [b"", b"\xff\xfe", b"x\r\nauthorization: Bearer y", b"not.a.jwt", b"A" * (8 << 20)]:
        c = s.flight()
        started = time.time()
        fails(lambda: c.authenticate(Payload(payload), fl.FlightCallOptions(timeout=20)))
        assert time.time() - started < 10, len(payload)
    assert s.sessions() == 0
    c = s.flight()
    c.authenticate(Payload(mint().encode()), fl.FlightCallOptions(timeout=20))
    assert s.sessions() == 1


@test
def switching_tokens_on_one_connection_never_inherits_a_session(s):
    s.start()
    c = s.flight()
    alice, bob = mint(), mint(roles=("tenant_b",), sub="bob")
    assert count_orders(c, alice) == 3
    first = session_ids(s, "alice")
    # bob on alice's connection: his own slice, never alice's session
    assert query(c, "SELECT id FROM orders", opts(bob)).column(0).to_pylist() == [100]
    assert session_ids(s, "alice") == [] and len(session_ids(s, "bob")) == 1
    # a token that does not verify changes nothing and gets nothing
    fails(lambda: query(c, "SELECT 1", opts(mint(secret="z" * 40))), "acl: token rejected")
    assert query(c, "SELECT id FROM orders", opts(bob)).column(0).to_pylist() == [100]
    # alice again: a new session, not her first one
    assert count_orders(c, alice) == 3
    assert session_ids(s, "alice") and session_ids(s, "alice") != first
    fails(lambda: query(c, "SELECT * FROM sales.orders", opts(bob)), "acl:")


@test
def two_connections_of_one_principal_hold_two_sessions(s):
    s.start()
    c1, c2 = s.flight(), s.flight()
    assert count_orders(c1, mint()) == 3 and count_orders(c2, mint()) == 3
    assert len(session_ids(s, "alice")) == 2


@test
@known_bug("another principal presenting a client's acl_flight_session cookie closes that client's session "
           "(auth::client closes the found session when the principals differ): a cookie is a kill switch")
def another_principals_use_of_a_clients_cookie_neither_borrows_nor_ends_its_session(s):
    s.start()
    seen = Headers()
    a = fl.FlightClient(s.uri, middleware=[seen])
    s.closers.append(a)
    assert count_orders(a, mint()) == 3
    cookie = seen.cookie()
    assert cookie and cookie.startswith("acl_flight_session="), seen.got
    mine = session_ids(s, "alice")
    m = s.flight()
    bob = mint(roles=("tenant_b",), sub="bob")
    got = query(m, "SELECT id FROM orders", opts(bob, [(b"cookie", cookie.encode())])).column(0).to_pylist()
    assert got == [100], got  # bob's own slice, never alice's
    assert session_ids(s, "alice") == mine, (mine, session_ids(s, "alice"))


@test
def a_cookie_with_an_expired_token_of_another_opening_is_refused(s):
    s.con.execute("SET GLOBAL acl_jwt_clock_skew = 0")
    s.start()
    seen = Headers()
    a = fl.FlightClient(s.uri, middleware=[seen])
    s.closers.append(a)
    assert count_orders(a, mint()) == 3
    cookie = seen.cookie()
    # the same principal's *other*, expired token with the live session's cookie: refused
    m = s.flight()
    fails(lambda: query(m, "SELECT 1", opts(mint(exp=int(time.time()) - 5), [(b"cookie", cookie.encode())])), "expired")
    fails(lambda: query(m, "SELECT 1", opts(mint(secret="q" * 40), [(b"cookie", cookie.encode())])), "acl: token rejected")


@test
@known_bug("a session outlives its client connection (nothing closes it on disconnect): one token holder "
           "connecting and leaving acl_max_sessions times locks every other client out for acl_session_idle_timeout")
def sessions_of_closed_client_connections_do_not_hold_the_session_cap(s):
    s.con.execute("SET GLOBAL acl_max_sessions = 3")
    s.start()
    for i in range(3):
        c = fl.FlightClient(s.uri)
        assert count_orders(c, mint(sub="mallory")) == 3
        c.close()
    time.sleep(1.5)
    assert count_orders(s.flight(), mint(sub="victim")) == 3


# ---- tickets ----

@test
def forged_foreign_replayed_and_orphaned_tickets_give_nothing(s):
    s.start()
    a, b = s.flight(), s.flight()
    alice, bob = mint(), mint(roles=("tenant_b",), sub="bob")
    for t in [ticket_of(os.urandom(16)), ticket_of(b""), ticket_of(os.urandom(64)), fl.Ticket(b"\x00garbage"),
              fl.Ticket(query_cmd("SELECT * FROM orders"))]:
        fails(lambda: b.do_get(t, opts(bob)).read_all())
    # the same principal on another connection (another session) cannot fetch alice's ticket
    i = info(a, query_cmd("SELECT id FROM orders"), opts(alice))
    a2 = s.flight()
    fails(lambda: a2.do_get(i.endpoints[0].ticket, opts(alice)).read_all(), "another session")
    # a ticket of a killed session is dead for its connection's next session too
    (sid,) = session_ids(s, "alice")[:1]
    s.con.execute(f"SELECT acl_session_kill({sid})").fetchall()
    fails(lambda: a.do_get(i.endpoints[0].ticket, opts(alice)).read_all(), "killed")
    fails(lambda: a.do_get(i.endpoints[0].ticket, opts(alice)).read_all())
    # two racing fetches of one ticket: one gets the rows
    i = info(b, query_cmd("SELECT id FROM orders"), opts(bob))
    got, errs = [], []

    def fetch():
        try:
            got.append(b.do_get(i.endpoints[0].ticket, opts(bob)).read_all().num_rows)
        except Exception as e:  # noqa: BLE001 - NOT_FOUND is pyarrow's ArrowKeyError
            errs.append(str(e))
    ts = [threading.Thread(target=fetch) for _ in range(4)]
    [t.start() for t in ts]
    [t.join(30) for t in ts]
    assert got == [1] and len(errs) == 3 and all("no such ticket" in e for e in errs), (got, errs)


@test
def an_unfetched_ticket_is_dropped_after_the_stream_idle(s):
    s.con.execute("SET GLOBAL acl_flight_stream_idle = 1")
    s.start()
    a = s.flight()
    i = info(a, query_cmd("SELECT id FROM orders"), opts(mint()))
    time.sleep(2.5)
    fails(lambda: a.do_get(i.endpoints[0].ticket, opts(mint())).read_all(), "no such ticket")


@test
@known_bug("acl_session_kill (and a revoke) leaves a stream the session already started running to its end: "
           "only the session's next call is refused (produce() never looks at the session again)")
def a_killed_session_stops_its_running_stream(s):
    s.con.execute("CREATE TABLE zzphys.main.zz_big AS SELECT range AS id FROM range(3000000)")
    from flight_review_common import admin
    admin(s.con, "CREATE VIRTUAL TABLE sales.big AS zzphys.main.zz_big")
    s.start()
    a = s.flight()
    i = info(a, query_cmd("SELECT id FROM big"), opts(mint()))
    r = a.do_get(i.endpoints[0].ticket, opts(mint(), timeout=60))
    n = r.read_chunk().data.num_rows
    s.con.execute(f"SELECT acl_session_kill({session_ids(s, 'alice')[0]})").fetchall()
    try:
        while True:
            n += r.read_chunk().data.num_rows
    except StopIteration:
        raise AssertionError(f"the killed session's stream ran to its end: {n} rows")
    except fl.FlightError as e:
        clean(str(e))
    assert n < 3_000_000, n


@test
def another_principal_on_a_connection_ends_the_previous_principals_transaction_unwritten(s):
    s.start()
    w = s.flight()
    wanda = mint(roles=("writer",), sub="wanda")
    txn = begin(w, opts(wanda))
    update(w, "INSERT INTO notes (id, body) VALUES (9, 'pending')", opts(wanda), txn)
    assert query(w, "SELECT count(*) FROM orders", opts(mint(roles=("tenant_b",), sub="bob"))).column(0).to_pylist() == [1]
    fails(lambda: end(w, txn, opts(wanda)), "no such transaction")
    fails(lambda: query(w, "SELECT count(*) FROM notes", opts(mint(roles=("tenant_b",), sub="bob")), txn), "no such transaction")
    assert s.phys("SELECT count(*) FROM zzphys.main.zz_notes") == [(0,)]


# ---- prepared statements ----

@test
def prepared_handles_are_bound_to_their_session_and_die_with_close(s):
    s.start()
    a, b, a2 = s.flight(), s.flight(), s.flight()
    alice, bob = mint(), mint(roles=("tenant_b",), sub="bob")
    h, schema = prepare(a, "SELECT id, customer FROM orders WHERE customer = ?", opts(alice))
    assert b"zz" not in schema
    params = pa.table({"p": ["acme"]})
    for other, tok in [(b, bob), (a2, alice)]:
        fails(lambda: prepared_query(other, h, opts(tok)), "another session")
        fails(lambda: prepared_query(other, h, opts(tok), params), "another session")
        fails(lambda: close_prepared(other, h, opts(tok)), "another session")
    # a parameter is a value: text shaped like SQL matches nothing
    for p in ["acme' OR '1'='1", "x'; SELECT * FROM zzphys.main.zz_orders; --", "acme\x00"]:
        assert prepared_query(a, h, opts(alice), pa.table({"p": [p]})).num_rows == 0
    assert prepared_query(a, h, opts(alice), params).num_rows == 2
    # too many or wrongly typed parameters: an error, never a crash
    fails(lambda: prepared_query(a, h, opts(alice), pa.table({"p": ["a"], "q": ["b"]})))
    fails(lambda: prepared_query(a, h, opts(alice), pa.table({"p": ["a", "b"]})), "one row")
    close_prepared(a, h, opts(alice))
    fails(lambda: prepared_query(a, h, opts(alice), params), "no such prepared statement")
    # preparing a physical name or a hidden column is refused, by the gateway's message
    for sql in ["SELECT * FROM zzphys.main.zz_orders", "SELECT zz_secret FROM orders"]:
        fails(lambda: prepare(a, sql, opts(alice)), typed=sql)


@test
def a_prepared_statement_is_judged_again_at_each_run(s):
    s.start()
    a = s.flight()
    h, _ = prepare(a, "SELECT count(*) FROM orders", opts(mint()))
    assert prepared_query(a, h, opts(mint())).column(0).to_pylist() == [3]
    from flight_review_common import admin
    admin(s.con, "REVOKE CATALOG sales FROM ROLE analyst")
    fails(lambda: prepared_query(a, h, opts(mint())), "acl:")


# ---- transactions ----

@test
def another_sessions_transaction_id_neither_ends_nor_joins_it(s):
    s.start()
    w, m = s.flight(), s.flight()
    wanda, mallory = mint(roles=("writer",), sub="wanda"), mint(roles=("writer",), sub="mallory")
    txn = begin(w, opts(wanda))
    assert update(w, "INSERT INTO notes (id, body) VALUES (5, 'uncommitted')", opts(wanda), txn) == 1
    for call in [lambda: end(m, txn, opts(mallory), commit=True), lambda: end(m, txn, opts(mallory), commit=False),
                 lambda: query(m, "SELECT count(*) FROM notes", opts(mallory), txn),
                 lambda: update(m, "INSERT INTO notes (id, body) VALUES (6, 'joined')", opts(mallory), txn)]:
        fails(call, "no such transaction")
    assert s.phys("SELECT count(*) FROM zzphys.main.zz_notes") == [(0,)]
    end(w, txn, opts(wanda), commit=False)
    assert s.phys("SELECT count(*) FROM zzphys.main.zz_notes") == [(0,)]
    txn = begin(w, opts(wanda))
    update(w, "INSERT INTO notes (id, body) VALUES (7, 'kept')", opts(wanda), txn)
    end(w, txn, opts(wanda), commit=True)
    assert s.phys("SELECT id FROM zzphys.main.zz_notes") == [(7,)]


@test
@known_bug("EndTransaction with a transaction id that is not the session's still drops the session's open "
           "transaction (service.rs clears c.txn whatever the id): its work is lost and its own commit fails")
def ending_a_wrong_transaction_id_leaves_the_open_one_alone(s):
    s.start()
    w = s.flight()
    wanda = mint(roles=("writer",), sub="wanda")
    txn = begin(w, opts(wanda))
    update(w, "INSERT INTO notes (id, body) VALUES (8, 'mine')", opts(wanda), txn)
    fails(lambda: end(w, os.urandom(16), opts(wanda), commit=True), "no such transaction")
    end(w, txn, opts(wanda), commit=True)
    assert s.phys("SELECT id FROM zzphys.main.zz_notes") == [(8,)]


@test
def statements_racing_on_one_transactions_connection_are_refused_never_crash(s):
    s.con.execute("CREATE TABLE zzphys.main.zz_big AS SELECT range AS id FROM range(1000000)")
    from flight_review_common import admin
    admin(s.con, "CREATE VIRTUAL TABLE w.big AS zzphys.main.zz_big")
    s.start()
    w = s.flight()
    wanda = mint(roles=("writer",), sub="wanda")
    txn = begin(w, opts(wanda))
    parked = info(w, query_cmd("SELECT id FROM big", txn), opts(wanda))
    out = []

    def run(fn):
        try:
            out.append(fn())
        except Exception as e:  # noqa: BLE001 - refusals are the expected outcome
            clean(str(e))
            out.append("refused")
    jobs = [lambda: w.do_get(parked.endpoints[0].ticket, opts(wanda, timeout=60)).read_all().num_rows]
    jobs += [lambda k=k: update(w, f"INSERT INTO notes (id, body) VALUES ({k}, 'r')", opts(wanda), txn) for k in range(6)]
    jobs += [lambda: query(w, "SELECT count(*) FROM big", opts(wanda), txn).num_rows for _ in range(3)]
    ts = [threading.Thread(target=run, args=(j,)) for j in jobs]
    [t.start() for t in ts]
    [t.join(60) for t in ts]
    assert len(out) == len(jobs), out
    try:
        end(w, txn, opts(wanda), commit=True)
    except Exception as e:  # noqa: BLE001 - a transaction a refusal aborted
        clean(str(e))
    assert s.phys("SELECT count(*) FROM zzphys.main.zz_big") == [(1_000_000,)]
    assert query(s.flight(), "SELECT count(*) FROM orders", opts(mint())).column(0).to_pylist() == [3]


# ---- cancel ----

@test
@known_bug("CancelFlightInfo interrupts another session's *streaming* query: Tickets::cancel checks the session "
           "for a parked ticket only, not for one that streams")
def another_session_cannot_cancel_a_streaming_query(s):
    s.con.execute("CREATE TABLE zzphys.main.zz_big AS SELECT range AS id FROM range(3000000)")
    from flight_review_common import admin
    admin(s.con, "CREATE VIRTUAL TABLE sales.big AS zzphys.main.zz_big")
    s.start()
    a, m = s.flight(), s.flight()
    i = info(a, query_cmd("SELECT id FROM big"), opts(mint()))
    reader = a.do_get(i.endpoints[0].ticket, opts(mint(), timeout=60))
    reader.read_chunk()
    status = cancel(m, i, opts(mint(sub="mallory")))
    n = 0
    try:
        while True:
            n += reader.read_chunk().data.num_rows
    except StopIteration:
        pass
    except Exception as e:  # noqa: BLE001 - the stream cut by another session's cancel
        raise AssertionError(f"cancel status {status}; alice's stream failed after {n} rows: {str(e)[:80]}")
    assert status == 3 and n > 2_000_000, (status, n)  # NOT_CANCELLABLE, every row


# ---- the statement text a client sends: only the gateway's path ----

@test
def no_prefix_marker_or_node_statement_in_a_clients_text_escapes_the_session(s):
    s.start()
    a = s.flight()
    alice = mint()
    other = s.con.execute("SELECT acl_session_open(?)", [mint(roles=("root",), sub="root")]).fetchone()[0]
    texts = [
        "ACL NATIVE SELECT * FROM zzphys.main.zz_orders",
        'ACL ROLE "root" SELECT * FROM zzphys.main.zz_orders',
        f"ACL TOKEN {sql_str(mint(roles=('root',), sub='root'))} SELECT 1",
        f"ACL SESSION {sql_str(other)} ACL NATIVE SELECT * FROM zzphys.main.zz_orders",
        "ACL ADMIN CREATE ROLE sneaky",
        "ACL ADMIN ACL NATIVE SELECT 1",
        "ACL GRANT CATALOG other TO ROLE analyst",
        "/* c */ ACL NATIVE SELECT 1",
        "SELECT 1; ACL NATIVE SELECT * FROM zzphys.main.zz_orders",
        "SELECT 1; SELECT * FROM zzphys.main.zz_orders",
        "SELECT * FROM zzphys.main.zz_orders",
        "SELECT zz_secret FROM orders",
        "SELECT * FROM aclcat.acl.grants",
        "SET GLOBAL acl_max_result_rows = 0",
        "SET allow_parser_override_extension = 'fallback'",
        "RESET allow_parser_override_extension",
        "SET GLOBAL acl_allow_anonymous_admin = true",
        "ATTACH ':memory:' AS zzx",
        "DETACH aclcat",
        "USE zzphys",
        "COPY (SELECT 1) TO '/tmp/zz_door_review.csv'",
        "PRAGMA database_list",
        "CALL pragma_database_list()",
        "LOAD json",
        "INSTALL json",
        "CHECKPOINT",
        "SELECT * FROM acl_sessions()",
        "SELECT acl_session_count()",
        f"SELECT acl_flight_stop({sql_str(s.uri)})",
        "SELECT current_setting('acl_max_result_rows')",
        "SELECT * FROM query('SELECT * FROM zzphys.main.zz_orders')",
        "SELECT * FROM read_csv('/etc/passwd')",
    ]
    for sql in texts:
        fails(lambda: query(a, sql, opts(alice)), typed=sql)
        fails(lambda: update(a, sql, opts(alice)), typed=sql)
    for sql in ["", "   ", "-- only a comment", ";", "\x00SELECT 1"]:
        try:
            query(a, sql, opts(alice))
        except Exception as e:  # noqa: BLE001 - pyarrow raises ArrowInvalid for INVALID_ARGUMENT
            clean(str(e), typed=sql)
    assert "sneaky" not in repr(s.phys("SELECT * FROM acl_roles()"))
    assert count_orders(a, alice) == 3
    # the node's listings answer with the virtual catalog
    for sql in ["SELECT * FROM duckdb_databases()", "SELECT * FROM duckdb_tables()", "SELECT * FROM duckdb_columns()",
                "SELECT * FROM information_schema.columns", "SHOW ALL TABLES", "DESCRIBE orders"]:
        clean(str(query(a, sql, opts(alice)).to_pylist()))
    assert s.con.execute("SELECT current_setting('allow_parser_override_extension')").fetchone()[0].lower() == "strict"
    assert not os.path.exists("/tmp/zz_door_review.csv")


@test
def anonymous_admin_turned_on_after_serving_gives_a_door_client_nothing(s):
    s.start()
    s.con.execute("SET GLOBAL acl_allow_anonymous_admin = true")
    a = s.flight()
    for sql in ["ACL ADMIN GRANT CATALOG other TO ROLE analyst WITH (select)", "ACL ADMIN ACL NATIVE SELECT * FROM zzphys.main.zz_orders",
                "ACL GRANT CATALOG other TO ROLE analyst WITH (select)", "ACL NATIVE SELECT * FROM zzphys.main.zz_orders"]:
        fails(lambda: query(a, sql, opts(mint())))
        fails(lambda: update(a, sql, opts(mint())))
    s.con.execute("SET GLOBAL acl_allow_anonymous_admin = false")
    fails(lambda: query(a, "SELECT * FROM other.orders", opts(mint())), "acl:")


@test
def errors_name_no_physical_object_handle_or_prefix(s):
    s.start()
    a = s.flight()
    alice = mint()
    for sql in ["SELEC 1", "SELECT 'unterminated", "SELECT * FROM orders WHERE id = 'x'::INTEGER", "SELECT 1/0::INTEGER",
                "SELECT nosuch FROM orders", "SELECT orders.nosuch FROM orders", "SELECT * FROM orderz", "SELECT * FROM nosuch.main.t",
                "SELECT customer::INTEGER FROM orders", "SELECT id FROM orders WHERE customer = 1",
                "SELECT error('boom') FROM orders", "INSERT INTO orders VALUES (1, 'x')", "SELECT * FROM orders JOIN orders USING (nosuch)",
                "SELECT zz_secret, * FROM orders", "SELECT count(*) FROM orders GROUP BY nosuch", "SELECT id FROM orders ORDER BY 9"]:
        for run in (lambda: query(a, sql, opts(alice)), lambda: prepare(a, sql, opts(alice)), lambda: update(a, sql, opts(alice))):
            try:
                run()
            except Exception as e:  # noqa: BLE001 - pyarrow raises ArrowInvalid for INVALID_ARGUMENT
                clean(str(e), typed=sql)
    # a hidden column and a column that does not exist are refused alike (no existence oracle)
    hidden = fails(lambda: query(a, "SELECT zz_secret FROM orders", opts(alice)), typed="zz_secret")
    absent = fails(lambda: query(a, "SELECT zz_absent FROM orders", opts(alice)), typed="zz_absent")
    assert hidden.replace("zz_secret", "X") == absent.replace("zz_absent", "X"), (hidden, absent)


@test
def result_column_names_name_nothing_physical(s):
    s.start()
    a = s.flight()
    t = query(a, "SELECT id + 1, upper(customer), orders.id, count(*) OVER (), * FROM orders", opts(mint()))
    for name in t.schema.names:
        clean(name)
    _, schema = prepare(a, "SELECT id + 1, upper(customer), orders.customer, * FROM orders", opts(mint()))
    assert b"zz" not in schema, schema


if __name__ == "__main__":
    harness.main(setup, teardown)
