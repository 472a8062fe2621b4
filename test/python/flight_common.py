"""What the Flight SQL door's tests share (test_flight_door.py, test_flight_limits.py): a node
with two tenants and a DuckDB policy store, serving on 127.0.0.1 (an ephemeral port), ADBC clients
with PyJWT tokens. No tests here."""
import time

import adbc_driver_flightsql.dbapi as flight_sql
import duckdb
import jwt
from adbc_driver_flightsql import DatabaseOptions

import harness
from harness import sales, sql_str

SECRET = "a-shared-secret-that-is-32-bytes-or-longer"
ISS = "https://idp.example"


def mint(roles=("analyst",), sub="alice", exp=None):
    claims = {"iss": ISS, "sub": sub, "exp": int(time.time()) + 300 if exp is None else exp, "roles": list(roles)}
    return jwt.encode(claims, SECRET, algorithm="HS256")


def node(ext, store=True):
    """A node: `sales.orders` (3 rows) for role analyst, `other.orders` (1 row) for tenant_b, a
    million-row `sales.big`, and (with `store`) a DuckDB policy store holding that policy."""
    con = sales(ext)
    con.execute(f"ACL ADMIN CREATE ISSUER {sql_str(ISS)} KEYS {sql_str('hmac:' + SECRET)} ALGS (HS256)")
    con.execute("CREATE TABLE phys.main.other_orders (id INTEGER, customer VARCHAR)")
    con.execute("INSERT INTO phys.main.other_orders VALUES (100, 'initech')")
    con.execute("CREATE TABLE phys.main.big AS SELECT range AS id, range % 7 AS k FROM range(1000000)")
    con.execute("ACL ADMIN CREATE VIRTUAL CATALOG other; CREATE VIRTUAL TABLE other.orders AS phys.main.other_orders;"
                " CREATE ROLE tenant_b; GRANT CATALOG other TO ROLE tenant_b WITH (select) MAIN;"
                " CREATE VIRTUAL TABLE sales.big AS phys.main.big")
    # a writable slice: role writer inserts into w.notes rows with id < 100 only
    con.execute("CREATE TABLE phys.main.notes (id INTEGER, body VARCHAR)")
    con.execute("ACL ADMIN CREATE VIRTUAL CATALOG w; CREATE VIRTUAL TABLE w.notes AS phys.main.notes;"
                " CREATE ROLE writer; GRANT CATALOG w TO ROLE writer WITH (select, insert) RLS (id < 100) MAIN")
    if store:
        con.execute("ATTACH ':memory:' AS aclcat")
        con.execute("SELECT acl_use_db('aclcat', 'acl', true)").fetchall()
    return con


def serve(con):
    return con.execute("SELECT acl_flight_serve('grpc://127.0.0.1:0')").fetchone()[0]


def admin(con, sql):
    con.execute("SET GLOBAL acl_allow_anonymous_admin = true")
    try:
        con.execute(f"ACL ADMIN {sql}").fetchall()
    finally:
        con.execute("SET GLOBAL acl_allow_anonymous_admin = false")


def client(uri, token):
    return flight_sql.connect(uri, db_kwargs={DatabaseOptions.AUTHORIZATION_HEADER.value: f"Bearer {token}"})


def rows(conn, sql, params=None):
    cur = conn.cursor()
    try:
        cur.execute(sql, params)
        return cur.fetchall()
    finally:
        cur.close()


def fails(fn, *expected):
    """`fn` fails with a message holding every `expected` text and naming no physical object."""
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - ADBC's and pyarrow's errors alike
        msg = str(e)
        for x in expected:
            assert x in msg, msg
        assert "phys" not in msg and "aclcat" not in msg, msg
        return msg
    raise AssertionError(f"did not fail (expected: {expected})")


class Served:
    """A node serving a door for one test; stopped (and closed) after it."""

    def __init__(self, ext, store=True):
        self.con = node(ext, store)
        self.uri = None
        self.clients = []

    def start(self):
        self.uri = serve(self.con)
        assert self.uri.startswith("grpc://127.0.0.1:"), self.uri
        return self

    def connect(self, token):
        c = client(self.uri, token)
        self.clients.append(c)
        return c

    def close(self):
        for c in self.clients:
            try:
                c.close()
            except Exception:  # noqa: BLE001 - a client the test already broke
                pass
        if self.uri:
            try:
                self.con.execute(f"SELECT acl_flight_stop({sql_str(self.uri)})").fetchall()
            except duckdb.Error:
                pass
        self.con.close()


def statement(sql):
    """A Flight SQL CommandStatementQuery wrapped in protobuf's Any (written by hand: two fields)."""
    def field(n, data):
        out, length = bytes([n << 3 | 2]), len(data)
        while length >= 0x80:
            out += bytes([length & 0x7F | 0x80])
            length >>= 7
        return out + bytes([length]) + data

    cmd = field(1, sql.encode())
    return field(1, b"type.googleapis.com/arrow.flight.protocol.sql.CommandStatementQuery") + field(2, cmd)
