#!/usr/bin/env python3
"""The Arrow Flight SQL door (specs/018-flight-door.md), end to end: the node serves on 127.0.0.1
(an ephemeral port) from a DuckDB policy store, clients connect with the real ADBC Flight SQL
driver (and pyarrow's Flight client, for what ADBC does not expose) and PyJWT-minted tokens.

Run: python test/python/test_flight_door.py --extension build/release/acl.duckdb_extension
Ends with `N passed, N failed`.
"""
import socket
import threading
import time

import pyarrow.compute as pc
import pyarrow.flight as fl

import harness
from flight_common import Served, admin, client, fails, mint, node, rows, serve, statement
from harness import sql_str, test


def setup(ext):
    return Served(ext)


def teardown(s):
    s.close()


# ---- serving and its refusals ----

@test
def serving_is_refused_without_a_store_with_anonymous_admin_without_strict_and_off_loopback(s):
    bare = node(harness.EXT, store=False)
    try:
        fails(lambda: serve(bare), "acl: the Flight SQL door serves only with a policy store in use")
    finally:
        bare.close()
    s.con.execute("SET GLOBAL acl_allow_anonymous_admin = true")
    fails(lambda: serve(s.con), "acl_allow_anonymous_admin is on")
    s.con.execute("SET GLOBAL acl_allow_anonymous_admin = false")
    s.con.execute("SET allow_parser_override_extension = 'fallback'")
    fails(lambda: serve(s.con), "allow_parser_override_extension is 'strict'")
    s.con.execute("SET allow_parser_override_extension = 'strict'")
    for uri in ["grpc://0.0.0.0:0", "grpc://10.1.2.3:0", "[::]:0"]:
        fails(lambda: s.con.execute(f"SELECT acl_flight_serve({sql_str(uri)})").fetchall(), "cleartext Flight SQL binds loopback addresses only")
    fails(lambda: s.con.execute("SELECT acl_flight_serve('http://127.0.0.1:0')").fetchall(), "is no Flight SQL URI")
    # a busy port fails with the operating system's reason
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen(1)
    try:
        port = busy.getsockname()[1]
        fails(lambda: s.con.execute(f"SELECT acl_flight_serve('grpc://127.0.0.1:{port}')").fetchall(), "could not serve Flight SQL", "in use")
    finally:
        busy.close()
    # under a principal, serving is never callable
    fails(lambda: s.con.execute("ACL ROLE \"analyst\" SELECT acl_flight_serve('grpc://127.0.0.1:0')").fetchall(), "not permitted")
    s.start()
    fails(lambda: s.con.execute("SELECT acl_flight_stop('grpc://127.0.0.1:1')").fetchall(), "no Flight SQL door serves")


@test
def two_tenants_on_one_node_see_only_their_slices(s):
    s.start()
    a = s.connect(mint())
    b = s.connect(mint(roles=("tenant_b",), sub="bob"))
    assert sorted(rows(a, "SELECT id, customer FROM orders")) == [(1, "acme"), (2, "globex"), (3, "acme")]
    assert rows(b, "SELECT id, customer FROM orders") == [(100, "initech")]
    # the other tenant's catalog is not there for either
    fails(lambda: rows(a, "SELECT * FROM other.orders"), "acl:")
    fails(lambda: rows(b, "SELECT * FROM sales.orders"), "acl:")
    # one session per client connection, each under its door's label
    listed = s.con.execute("SELECT subject, door FROM acl_sessions() ORDER BY subject").fetchall()
    assert [x[0] for x in listed] == ["alice", "bob"], listed
    assert all(d.startswith("flight:127.0.0.1:") for _, d in listed), listed


@test
def a_physical_name_is_refused_and_writes_outside_the_grant_too(s):
    s.start()
    a = s.connect(mint())
    for sql in ["SELECT * FROM phys.main.orders", "SELECT * FROM aclcat.acl.objects", "SELECT * FROM memory.main.orders"]:
        fails(lambda: rows(a, sql), "acl:")
    fails(lambda: rows(a, "DELETE FROM orders"), "lacks delete on sales.orders")
    fails(lambda: rows(a, "SELECT acl_session_count()"), "not permitted")
    assert s.con.execute("SELECT count(*) FROM phys.main.orders").fetchone()[0] == 3


@test
def requests_without_a_verified_token_are_unauthenticated(s):
    s.start()
    for token in ["not.a.jwt", mint()[:-4] + "AAAA", mint(exp=int(time.time()) - 3600), mint(roles=("nobody",))]:
        fails(lambda: rows(s.connect(token), "SELECT 1"), "acl: token rejected")
    # no authorization header at all
    c = fl.FlightClient(s.uri)
    fails(lambda: c.get_flight_info(fl.FlightDescriptor.for_command(statement("SELECT 1"))), "authorization header")
    assert s.con.execute("SELECT acl_session_count()").fetchone()[0] == 0


@test
def a_revoked_grant_fails_the_clients_next_query(s):
    s.start()
    a = s.connect(mint())
    assert rows(a, "SELECT count(*) FROM orders") == [(3,)]
    admin(s.con, "REVOKE CATALOG sales FROM ROLE analyst")
    fails(lambda: rows(a, "SELECT count(*) FROM orders"), "acl:")
    # ADBC runs with autocommit off: the refusal aborted the client's transaction, as any error does
    a.rollback()
    admin(s.con, "GRANT CATALOG sales TO ROLE analyst WITH (select) MAIN")
    assert rows(a, "SELECT count(*) FROM orders") == [(3,)]


@test
def a_token_past_exp_under_every_use_ends_the_session(s):
    s.con.execute("SET GLOBAL acl_session_token_binding = 'every_use'")
    s.con.execute("SET GLOBAL acl_jwt_clock_skew = 0")
    s.start()
    a = s.connect(mint(exp=int(time.time()) + 3))
    assert rows(a, "SELECT count(*) FROM orders") == [(3,)]
    time.sleep(4.2)
    fails(lambda: rows(a, "SELECT count(*) FROM orders"), "expired")


@test
def under_connect_a_token_past_exp_keeps_its_session(s):
    s.con.execute("SET GLOBAL acl_jwt_clock_skew = 0")
    s.start()
    a = s.connect(mint(exp=int(time.time()) + 3))
    assert rows(a, "SELECT count(*) FROM orders") == [(3,)]
    time.sleep(4.2)
    assert rows(a, "SELECT count(*) FROM orders") == [(3,)]
    # but a new client connection with that token opens nothing
    fails(lambda: rows(s.connect(mint(exp=int(time.time()) - 2)), "SELECT 1"), "acl: token rejected: expired")


@test
def the_session_cap_refuses_a_new_client_and_evicts_none(s):
    s.con.execute("SET GLOBAL acl_max_sessions = 2")
    s.start()
    a, b = s.connect(mint()), s.connect(mint(sub="bob"))
    assert rows(a, "SELECT 1") == [(1,)] and rows(b, "SELECT 1") == [(1,)]
    fails(lambda: rows(s.connect(mint(sub="carol")), "SELECT 1"), "acl_max_sessions")
    assert rows(a, "SELECT count(*) FROM orders") == [(3,)]
    assert rows(b, "SELECT count(*) FROM orders") == [(3,)]


@test
def a_killed_session_fails_its_clients_next_call(s):
    s.start()
    a = s.connect(mint())
    assert rows(a, "SELECT 1") == [(1,)]
    (sid,) = s.con.execute("SELECT id FROM acl_sessions()").fetchone()
    assert s.con.execute(f"SELECT acl_session_kill({sid})").fetchone()[0] is True
    fails(lambda: rows(a, "SELECT 1"), "acl: session refused: the session was killed")


@test
def an_idle_session_ends(s):
    s.con.execute("SET GLOBAL acl_session_idle_timeout = 1")
    s.start()
    a = s.connect(mint())
    assert rows(a, "SELECT 1") == [(1,)]
    time.sleep(2.5)
    fails(lambda: rows(a, "SELECT 1"), "idle longer than acl_session_idle_timeout")


@test
def prepared_statements_take_parameters(s):
    s.start()
    a = s.connect(mint())
    assert rows(a, "SELECT count(*) FROM orders WHERE customer = ?", ("acme",)) == [(2,)]
    assert rows(a, "SELECT customer FROM orders WHERE id = ?", (2,)) == [("globex",)]
    assert rows(a, "SELECT count(*) FROM orders WHERE id > ? AND customer <> ?", (1, "acme")) == [(1,)]
    # a parameter is a value, never text of the statement
    assert rows(a, "SELECT count(*) FROM orders WHERE customer = ?", ("x' OR 1=1 --",)) == [(0,)]
    fails(lambda: rows(a, "SELECT * FROM phys.main.orders WHERE id = ?", (1,)), "acl:")


@test
def the_catalog_rpcs_show_only_virtual_names(s):
    s.start()
    a = s.connect(mint())
    objects = a.adbc_get_objects(depth="all").read_all().to_pylist()
    catalogs = {o["catalog_name"] for o in objects}
    assert catalogs == {"sales"}, catalogs
    tables = {(o["catalog_name"], sch["db_schema_name"], t["table_name"]) for o in objects for sch in o["catalog_db_schemas"] or []
              for t in sch["db_schema_tables"] or []}
    assert tables == {("sales", "main", "orders"), ("sales", "main", "big")}, tables
    text = repr(objects)
    for hidden in ["phys", "aclcat", "other_orders", "memory", "system", "temp"]:
        assert hidden not in text, (hidden, text)
    b = s.connect(mint(roles=("tenant_b",), sub="bob"))
    assert {o["catalog_name"] for o in b.adbc_get_objects(depth="catalogs").read_all().to_pylist()} == {"other"}
    schema = a.adbc_get_table_schema("orders", catalog_filter="sales", db_schema_filter="main")
    assert schema.names == ["id", "customer"], schema
    assert "BASE TABLE" in a.adbc_get_table_types()


@test
def a_ticket_is_single_use_and_bound_to_its_session(s):
    s.start()
    alice = [(b"authorization", f"Bearer {mint()}".encode())]
    bob = [(b"authorization", f"Bearer {mint(roles=('tenant_b',), sub='bob')}".encode())]
    c1, c2 = fl.FlightClient(s.uri), fl.FlightClient(s.uri)
    info = c1.get_flight_info(fl.FlightDescriptor.for_command(statement("SELECT id FROM orders ORDER BY id")), fl.FlightCallOptions(headers=alice))
    ticket = info.endpoints[0].ticket
    # another client connection (another session) cannot fetch it
    fails(lambda: c2.do_get(ticket, fl.FlightCallOptions(headers=bob)).read_all(), "acl: the ticket belongs to another session")
    assert c1.do_get(ticket, fl.FlightCallOptions(headers=alice)).read_all().column(0).to_pylist() == [1, 2, 3]
    fails(lambda: c1.do_get(ticket, fl.FlightCallOptions(headers=alice)).read_all(), "acl: no such ticket")


@test
def sixteen_clients_stream_a_million_rows_each(s):
    s.start()
    want = (1_000_000, sum(range(1_000_000)))
    got, errors = [], []

    def one(i):
        try:
            c = client(s.uri, mint(sub=f"user{i}"))
            try:
                cur = c.cursor()
                cur.execute("SELECT id, k FROM big")
                t = cur.fetch_arrow_table()
                got.append((t.num_rows, pc.sum(t.column("id")).as_py()))
                cur.close()
            finally:
                c.close()
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(repr(e))

    started = time.time()
    threads = [threading.Thread(target=one, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    assert not errors, errors[:3]
    assert len(got) == 16 and all((n, int(total)) == want for n, total in got), got
    print(f"  16 x 1M rows through the door in {time.time() - started:.1f} s")


@test
def stop_closes_the_doors_sessions_and_its_clients_fail(s):
    s.start()
    a, b = s.connect(mint()), s.connect(mint(sub="bob"))
    assert rows(a, "SELECT 1") == [(1,)] and rows(b, "SELECT 1") == [(1,)]
    closed = s.con.execute(f"SELECT acl_flight_stop({sql_str(s.uri)})").fetchone()[0]
    assert closed == 2, closed
    assert s.con.execute("SELECT acl_session_count()").fetchone()[0] == 0
    fails(lambda: rows(a, "SELECT 1"))
    s.uri = None


if __name__ == "__main__":
    harness.main(setup, teardown)
