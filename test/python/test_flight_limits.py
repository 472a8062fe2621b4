#!/usr/bin/env python3
"""The Flight SQL door's limits, transactions and shutdown (specs/018-flight-door.md): row caps
(the setting and a resource group's), the stream idle cut-off, the node's stream budget (RSS
measured), transactions rolled back and committed, writes inside and outside a slice, TLS with a
self-signed certificate, closing the database ending the door's threads, and 64 clients under
`ulimit -v 8G` in a child process.

Run: python test/python/test_flight_limits.py --extension build/release/acl.duckdb_extension
Ends with `N passed, N failed`.
"""
import os
import subprocess
import sys
import tempfile
import threading
import time

import adbc_driver_flightsql.dbapi as flight_sql
import duckdb
import pyarrow.flight as fl
from adbc_driver_flightsql import DatabaseOptions

import harness
from flight_common import Served, admin, client, fails, mint, node, rows, statement
from harness import sql_str, test


def setup(ext):
    return Served(ext)


def teardown(s):
    s.close()


def door_threads():
    """This process's threads of the door's runtime."""
    n = 0
    for t in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{t}/comm") as f:
                n += f.read().startswith("acl-flight")
        except OSError:
            pass
    return n


def rss_mb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def headers(token):
    return fl.FlightCallOptions(headers=[(b"authorization", f"Bearer {token}".encode())])


@test
def the_door_settings_are_validated_and_global(s):
    for sql, why in [("SET GLOBAL acl_flight_stream_idle = 0", "acl_flight_stream_idle must be"),
                     ("SET GLOBAL acl_node_stream_budget = 1000", "acl_node_stream_budget must be"),
                     ("SET GLOBAL acl_max_result_rows = -1", "")]:
        fails(lambda: s.con.execute(sql).fetchall(), why)
    assert s.con.execute("SELECT current_setting('acl_flight_stream_idle')").fetchone()[0] == 30
    fails(lambda: s.con.execute("SET SESSION acl_max_result_rows = 5").fetchall())
    fails(lambda: s.con.execute('ACL ROLE "analyst" SET GLOBAL acl_max_result_rows = 5').fetchall(), "not permitted")
    s.con.execute("SET GLOBAL acl_max_result_rows = 5")
    assert s.con.execute("SELECT current_setting('acl_max_result_rows')").fetchone()[0] == 5


@test
def a_result_over_acl_max_result_rows_fails(s):
    s.con.execute("SET GLOBAL acl_max_result_rows = 10000")
    s.start()
    a = s.connect(mint())
    assert rows(a, "SELECT count(*) FROM orders") == [(3,)]
    assert len(rows(a, "SELECT id FROM big LIMIT 10000")) == 10000
    fails(lambda: rows(a, "SELECT id FROM big"), "acl: the result has more than 10000 rows (acl_max_result_rows)")
    s.con.execute("SET GLOBAL acl_max_result_rows = 0")
    assert len(rows(a, "SELECT id FROM big")) == 1_000_000


@test
def a_resource_groups_max_result_rows_applies_to_its_sessions(s):
    s.start()
    admin(s.con, "CREATE RESOURCE GROUP small (max_result_rows = 5000); GRANT RESOURCE GROUP small TO ROLE analyst")
    a = s.connect(mint())
    fails(lambda: rows(a, "SELECT id FROM big"), "more than 5000 rows (the resource group's max_result_rows)")
    assert len(rows(a, "SELECT id FROM big LIMIT 5000")) == 5000
    # another role's sessions are not in the group
    admin(s.con, "GRANT CATALOG sales TO ROLE tenant_b WITH (select) MAIN")
    b = s.connect(mint(roles=("tenant_b",), sub="bob"))
    assert rows(b, "SELECT count(*) FROM (SELECT id FROM sales.big)") == [(1_000_000,)]
    assert len(rows(b, "SELECT id FROM sales.big")) == 1_000_000


@test
def a_client_that_stops_reading_is_cut_off(s):
    s.con.execute("SET GLOBAL acl_flight_stream_idle = 1")
    s.start()
    c = fl.FlightClient(s.uri)
    opts = headers(mint())
    info = c.get_flight_info(fl.FlightDescriptor.for_command(statement("SELECT id, k FROM big")), opts)
    reader = c.do_get(info.endpoints[0].ticket, opts)
    reader.read_chunk()
    time.sleep(3)
    fails(lambda: reader.read_all(), "acl_flight_stream_idle")
    # the node let go of the statement: the session runs the next one
    assert rows(s.connect(mint()), "SELECT count(*) FROM orders") == [(3,)]


STALLED = r"""
import json, sys
sys.path.insert(0, sys.argv[2])
import pyarrow.flight as fl
from flight_common import mint, statement
readers = []
for i in range(24):
    c = fl.FlightClient(sys.argv[1])
    opts = fl.FlightCallOptions(headers=[(b"authorization", f"Bearer {mint(sub=f'r{i}')}".encode())])
    info = c.get_flight_info(fl.FlightDescriptor.for_command(statement("SELECT id, pad FROM wide")), opts)
    readers.append((c, c.do_get(info.endpoints[0].ticket, opts)))
print("stalled", flush=True)
sys.stdin.readline()
errors = []
for c, r in readers:
    try:
        r.read_all()
    except Exception as e:
        errors.append(str(e)[:400])
print(json.dumps(errors), flush=True)
"""


@test
def stalled_readers_hold_no_more_than_the_nodes_stream_budget(s):
    import json
    s.con.execute("SET GLOBAL acl_node_stream_budget = 1048576")
    s.con.execute("SET GLOBAL acl_flight_stream_idle = 3")
    s.con.execute("CREATE TABLE phys.main.wide AS SELECT range AS id, repeat('x', 200) AS pad FROM range(2000000)")
    admin(s.con, "CREATE VIRTUAL TABLE sales.wide AS phys.main.wide")
    s.start()
    before = rss_mb()
    # the clients in a child process: this process's RSS is the node's alone
    here = os.path.dirname(os.path.abspath(__file__))
    child = subprocess.Popen([sys.executable, "-c", STALLED, s.uri, here], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "stalled"
        time.sleep(1.5)
        grown = rss_mb() - before
        time.sleep(4)  # past acl_flight_stream_idle: every stalled stream has been cut off
        child.stdin.write("go\n")
        child.stdin.flush()
        errors = json.loads(child.stdout.readline())
    finally:
        child.kill()
        child.wait()
    # 24 results of ~450 MB each would be ~10 GB if buffered: the node holds the budget, two
    # batches per stream and what DuckDB's streaming results keep
    assert grown < 400, f"RSS grew {grown:.0f} MB"
    assert len(errors) == 24, len(errors)
    assert any("acl_node_stream_budget" in e for e in errors), errors[:3]
    assert all("acl_node_stream_budget" in e or "acl_flight_stream_idle" in e for e in errors), errors[:3]
    print(f"  the node's RSS grew {grown:.0f} MB with 24 stalled 2M-row streams (budget 1 MiB)")


@test
def a_transaction_rolled_back_writes_nothing_and_a_commit_keeps_its_rows(s):
    s.start()
    w = flight_sql.connect(s.uri, db_kwargs={DatabaseOptions.AUTHORIZATION_HEADER.value: f"Bearer {mint(roles=('writer',), sub='wanda')}"},
                           autocommit=False)
    s.clients.append(w)
    cur = w.cursor()
    cur.execute("INSERT INTO notes (id, body) VALUES (1, 'rolled back')")
    w.rollback()
    assert s.con.execute("SELECT count(*) FROM phys.main.notes").fetchone()[0] == 0
    cur.execute("INSERT INTO notes (id, body) VALUES (2, 'kept')")
    w.commit()
    assert s.con.execute("SELECT id, body FROM phys.main.notes").fetchall() == [(2, "kept")]
    cur.close()


@test
def a_write_inside_the_slice_is_committed_and_outside_refused_with_nothing_written(s):
    s.start()
    w = flight_sql.connect(s.uri, db_kwargs={DatabaseOptions.AUTHORIZATION_HEADER.value: f"Bearer {mint(roles=('writer',), sub='wanda')}"},
                           autocommit=True)
    s.clients.append(w)
    rows(w, "INSERT INTO notes (id, body) VALUES (5, 'inside')")
    fails(lambda: rows(w, "INSERT INTO notes (id, body) VALUES (500, 'outside')"), "acl:")
    fails(lambda: rows(w, "INSERT INTO notes (id, body) SELECT 7, 'a' UNION ALL SELECT 700, 'b'"), "acl:")
    assert s.con.execute("SELECT id FROM phys.main.notes ORDER BY id").fetchall() == [(5,)]
    # a reader may not write at all
    fails(lambda: rows(s.connect(mint()), "INSERT INTO orders (id, customer) VALUES (9, 'x')"), "lacks insert")


@test
def ingest_inside_the_slice_is_committed_and_outside_refused_with_nothing_written(s):
    import pyarrow as pa
    s.start()
    w = flight_sql.connect(s.uri, db_kwargs={DatabaseOptions.AUTHORIZATION_HEADER.value: f"Bearer {mint(roles=('writer',), sub='wanda')}"},
                           autocommit=True)
    s.clients.append(w)
    cur = w.cursor()
    inside = pa.table({"id": pa.array(range(1, 51), pa.int32()), "body": [f"n{i}" for i in range(1, 51)]})
    assert cur.adbc_ingest("notes", inside, mode="append") == 50
    assert s.con.execute("SELECT count(*), sum(id) FROM phys.main.notes").fetchone() == (50, sum(range(1, 51)))
    # one row outside the slice (id < 100) refuses the whole ingest: nothing of it is written
    outside = pa.table({"id": pa.array([60, 61, 500], pa.int32()), "body": ["a", "b", "c"]})
    fails(lambda: cur.adbc_ingest("notes", outside, mode="append"), "acl:")
    assert s.con.execute("SELECT count(*) FROM phys.main.notes").fetchone()[0] == 50
    # creating or replacing a table needs the capabilities a CREATE TABLE needs
    fails(lambda: cur.adbc_ingest("fresh", inside, mode="create"), "acl:")
    fails(lambda: cur.adbc_ingest("notes", inside, mode="replace"), "acl:")
    assert s.con.execute("SELECT count(*) FROM phys.main.notes").fetchone()[0] == 50
    # a reader may not ingest at all
    r = flight_sql.connect(s.uri, db_kwargs={DatabaseOptions.AUTHORIZATION_HEADER.value: f"Bearer {mint()}"}, autocommit=True)
    s.clients.append(r)
    fails(lambda: r.cursor().adbc_ingest("orders", pa.table({"id": pa.array([9], pa.int32()), "customer": ["x"]}), mode="append"),
          "lacks insert")
    cur.close()


CANCELLED, NOT_CANCELLABLE = 1, 3


def cancel(c, info, opts):
    """The CancelFlightInfo action (pyarrow's client has no method for it): its status."""
    body = info.serialize()
    length, n = b"", len(body)
    while n >= 0x80:
        length += bytes([n & 0x7F | 0x80])
        n >>= 7
    request = b"\x0a" + length + bytes([n]) + body
    results = list(c.do_action(fl.Action("CancelFlightInfo", request), opts))
    answer = results[0].body.to_pybytes()
    assert answer[:1] == b"\x08", answer
    return answer[1]


@test
def cancel_flight_info_interrupts_the_query(s):
    s.start()
    c = fl.FlightClient(s.uri)
    opts = headers(mint())
    info = c.get_flight_info(fl.FlightDescriptor.for_command(statement("SELECT id, k FROM big")), opts)
    assert cancel(c, info, opts) == CANCELLED
    fails(lambda: c.do_get(info.endpoints[0].ticket, opts).read_all(), "no such ticket")
    # another session cannot cancel it
    info = c.get_flight_info(fl.FlightDescriptor.for_command(statement("SELECT id, k FROM big")), opts)
    other = fl.FlightClient(s.uri)
    assert cancel(other, info, headers(mint(sub="mallory"))) == NOT_CANCELLABLE
    assert c.do_get(info.endpoints[0].ticket, opts).read_all().num_rows == 1_000_000


@test
def tls_with_a_self_signed_certificate(s):
    with tempfile.TemporaryDirectory() as d:
        cert, key = os.path.join(d, "cert.pem"), os.path.join(d, "key.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert, "-days", "1",
                        "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
                       check=True, capture_output=True)
        # a certificate without its key is refused; paths and PEM text both serve
        fails(lambda: s.con.execute(f"SELECT acl_flight_serve('grpc+tls://127.0.0.1:0', {sql_str(cert)}, '')").fetchall())
        fails(lambda: s.con.execute("SELECT acl_flight_serve('grpc+tls://127.0.0.1:0')").fetchall(), "certificate")
        pem = open(cert).read()
        s.uri = s.con.execute(f"SELECT acl_flight_serve('grpc+tls://127.0.0.1:0', {sql_str(pem)}, {sql_str(key)})").fetchone()[0]
        assert s.uri.startswith("grpc+tls://127.0.0.1:"), s.uri
        c = flight_sql.connect(s.uri, db_kwargs={DatabaseOptions.AUTHORIZATION_HEADER.value: f"Bearer {mint()}",
                                                 DatabaseOptions.TLS_ROOT_CERTS.value: pem})
        s.clients.append(c)
        assert rows(c, "SELECT count(*) FROM orders") == [(3,)]
        # a client that does not trust the certificate gets nothing
        fails(lambda: rows(s.connect(mint()), "SELECT 1"))
        plain = s.uri.replace("grpc+tls://", "grpc://")
        fails(lambda: rows(client(plain, mint()), "SELECT 1"))


@test
def closing_the_database_stops_the_door_and_its_threads(s):
    s.start()
    # autocommit: a client's open transaction holds a connection, which keeps the database open
    # until it ends (specs/018, "Shutdown")
    a = flight_sql.connect(s.uri, db_kwargs={DatabaseOptions.AUTHORIZATION_HEADER.value: f"Bearer {mint()}"}, autocommit=True)
    s.clients.append(a)
    assert rows(a, "SELECT count(*) FROM orders") == [(3,)]
    assert door_threads() > 0
    s.con.close()
    deadline = time.time() + 10
    while door_threads() and time.time() < deadline:
        time.sleep(0.1)
    assert door_threads() == 0, door_threads()
    fails(lambda: rows(a, "SELECT 1"))
    s.uri = None
    s.con = duckdb.connect()


# The node alone runs under the limit (a door serves clients on other machines); the 64 ADBC
# clients (a Go runtime of their own) run in this process.
CHILD = r"""
import sys
sys.path.insert(0, sys.argv[2])
import harness
harness.EXT = sys.argv[1]
from flight_common import Served
s = Served(sys.argv[1]).start()
s.con.execute("SET GLOBAL acl_max_sessions = 0")
print(s.uri, flush=True)
sys.stdin.readline()  # until the clients are done
s.close()
print("closed", flush=True)
"""


@test
def sixty_four_clients_under_an_8_gib_address_space_limit(s):
    here = os.path.dirname(os.path.abspath(__file__))
    # the limit is set in the child only (bash's ulimit before it starts): never the machine's
    proc = subprocess.Popen(["bash", "-c", f"ulimit -v 8388608; exec {sys.executable} -c \"$0\" \"$1\" \"$2\"", CHILD, harness.EXT, here],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        uri = proc.stdout.readline().strip()
        assert uri.startswith("grpc://"), (uri, proc.stderr.read()[-2000:] if proc.poll() is not None else "")
        ok, errors = [], []

        def one(i):
            try:
                c = client(uri, mint(sub=f"u{i}"))
                for _ in range(5):
                    assert rows(c, "SELECT count(*) FROM orders") == [(3,)]
                assert rows(c, "SELECT count(*), sum(id) FROM big") == [(1000000, 499999500000)]
                c.close()
                ok.append(i)
            except Exception as e:
                errors.append(repr(e)[:300])
        threads = [threading.Thread(target=one, args=(i,)) for i in range(64)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(300)
        assert (len(ok), errors[:2]) == (64, []), (len(ok), errors[:2])
        out, err = proc.communicate("done\n", timeout=120)
        assert proc.returncode == 0 and "closed" in out, (out[-2000:], err[-2000:])
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


if __name__ == "__main__":
    harness.main(setup, teardown)
