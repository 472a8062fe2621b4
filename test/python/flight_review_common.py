"""What the outside review of the Flight SQL door (test_flight_review*.py) shares: a node whose
physical names all carry the marker `zz` (so any leak of a physical table, column, schema or
database into a message, a schema or a listing is visible), raw Flight SQL messages written by
hand (protobuf's wire format: a few fields each), and the `known_bug` marker. No tests here."""
import re
import time

import duckdb
import jwt
import pyarrow as pa
import pyarrow.flight as fl

from harness import known_bug, sql_str  # noqa: F401 - known_bug is re-exported for the review tests

SECRET = "a-shared-secret-that-is-32-bytes-or-longer"
ISS = "https://idp.example"
PHYSICAL = ("zz", "aclcat")  # every physical name holds one of these
SQL = "type.googleapis.com/arrow.flight.protocol.sql."




def mint(roles=("analyst",), sub="alice", exp=None, secret=SECRET, iss=ISS, alg="HS256", **over):
    claims = {"iss": iss, "sub": sub, "exp": int(time.time()) + 300 if exp is None else exp, "roles": list(roles)}
    claims.update(over)
    return jwt.encode({k: v for k, v in claims.items() if v is not None}, secret, algorithm=alg)


def node(ext, big=0):
    """A node with a DuckDB policy store. Physical: `zzphys.main.zz_orders` (with a hidden
    `zz_secret`), `zz_other` (tenant_b's), `zz_notes` (with a hidden `zz_hidden`), optionally
    `zz_big` (`big` rows), and the schema `zzphys.zz_lake`. Roles: analyst (select on sales),
    tenant_b (select on other), writer (select+insert on w, RLS id < 100), masker (writer on w
    with a mask: read-only), root (passthrough), boss (manage on sales)."""
    con = duckdb.connect(":memory:", config={"allow_unsigned_extensions": "true"})
    con.execute(f"LOAD '{ext}'")
    con.execute("ATTACH ':memory:' AS zzphys")
    con.execute("CREATE TABLE zzphys.main.zz_orders (id INTEGER, customer VARCHAR, zz_secret VARCHAR)")
    con.execute("INSERT INTO zzphys.main.zz_orders VALUES (1, 'acme', 's1'), (2, 'globex', 's2'), (3, 'acme', 's3')")
    con.execute("CREATE TABLE zzphys.main.zz_other (id INTEGER, customer VARCHAR)")
    con.execute("INSERT INTO zzphys.main.zz_other VALUES (100, 'initech')")
    con.execute("CREATE TABLE zzphys.main.zz_notes (id INTEGER, body VARCHAR, zz_hidden VARCHAR)")
    con.execute("CREATE SCHEMA zzphys.zz_lake")
    con.execute("CREATE TABLE zzphys.zz_lake.zz_events (id INTEGER)")
    if big:
        con.execute(f"CREATE TABLE zzphys.main.zz_big AS SELECT range AS id, range % 7 AS k, repeat('x', 100) AS pad FROM range({big})")
    con.execute(f"ACL ADMIN CREATE ISSUER {sql_str(ISS)} KEYS {sql_str('hmac:' + SECRET)} ALGS (HS256)")
    con.execute(
        "ACL ADMIN CREATE VIRTUAL CATALOG sales; CREATE VIRTUAL TABLE sales.orders AS zzphys.main.zz_orders COLUMNS (id, customer);"
        " CREATE ROLE analyst; GRANT CATALOG sales TO ROLE analyst WITH (select) MAIN;"
        " CREATE VIRTUAL CATALOG other; CREATE VIRTUAL TABLE other.orders AS zzphys.main.zz_other;"
        " CREATE ROLE tenant_b; GRANT CATALOG other TO ROLE tenant_b WITH (select) MAIN;"
        " CREATE VIRTUAL CATALOG w; CREATE VIRTUAL TABLE w.notes AS zzphys.main.zz_notes;"
        " CREATE ROLE writer; GRANT CATALOG w TO ROLE writer WITH (select, insert) RLS (id < 100) MAIN;"
        " GRANT TABLE w.notes TO ROLE writer COLUMNS (id, body);"
        " CREATE ROLE masker; GRANT CATALOG w TO ROLE masker WITH (writer) MAIN COLUMNS (id, body = upper(body));"
        " CREATE ROLE root; GRANT ADMIN passthrough TO ROLE root;"
        " CREATE ROLE boss; GRANT CATALOG sales TO ROLE boss WITH (select, manage) MAIN")
    if big:
        con.execute("ACL ADMIN CREATE VIRTUAL TABLE sales.big AS zzphys.main.zz_big")
    con.execute("ATTACH ':memory:' AS aclcat")
    con.execute("SELECT acl_use_db('aclcat', 'acl', true)").fetchall()
    return con


def admin(con, sql):
    con.execute("SET GLOBAL acl_allow_anonymous_admin = true")
    try:
        con.execute(f"ACL ADMIN {sql}").fetchall()
    finally:
        con.execute("SET GLOBAL acl_allow_anonymous_admin = false")


class Served:
    """A node serving a door on 127.0.0.1 (an ephemeral port) for one test; stopped after it."""

    def __init__(self, ext, big=0):
        self.ext = ext
        self.con = node(ext, big)
        self.uri = None
        self.closers = []

    def start(self):
        self.uri = self.con.execute("SELECT acl_flight_serve('grpc://127.0.0.1:0')").fetchone()[0]
        self.port = int(self.uri.rsplit(":", 1)[1])
        return self

    def flight(self):
        c = fl.FlightClient(self.uri)
        self.closers.append(c)
        return c

    def adbc(self, token, autocommit=True):
        import adbc_driver_flightsql.dbapi as flight_sql
        from adbc_driver_flightsql import DatabaseOptions
        c = flight_sql.connect(self.uri, db_kwargs={DatabaseOptions.AUTHORIZATION_HEADER.value: f"Bearer {token}"}, autocommit=autocommit)
        self.closers.append(c)
        return c

    def phys(self, sql):
        return self.con.execute(sql).fetchall()

    def sessions(self):
        return self.con.execute("SELECT count(*) FROM acl_sessions()").fetchone()[0]

    def close(self):
        for c in self.closers:
            try:
                c.close()
            except Exception:  # noqa: BLE001 - a client the test already broke
                pass
        if self.uri:
            try:
                self.con.execute(f"SELECT acl_flight_stop({sql_str(self.uri)})").fetchall()
            except duckdb.Error:
                pass
        try:
            self.con.close()
        except duckdb.Error:
            pass


def opts(token=None, extra=(), timeout=20):
    h = [(b"authorization", f"Bearer {token}".encode())] if token else []
    return fl.FlightCallOptions(headers=h + list(extra), timeout=timeout)


def clean(msg, typed=""):
    """A message names no physical object, no handle and no prefix the door wrote. Words of the
    client's own text (`typed`: a name it wrote may be echoed) are taken out first."""
    low = msg.lower()
    for word in sorted(re.findall(r"[a-z0-9_]+", typed.lower()), key=len, reverse=True):
        if len(word) > 2:
            low = low.replace(word, "")
    for p in PHYSICAL:
        assert p not in low, (p, msg)
    assert "acl session" not in low, msg
    assert not re.search(r"[0-9a-f]{32}", low), msg


def fails(fn, *expected, typed=""):
    """`fn` fails with a message holding every `expected` text and naming nothing physical
    (beyond what the client typed itself)."""
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - pyarrow's and ADBC's errors alike
        msg = str(e)
        for x in expected:
            assert x in msg, (x, msg)
        clean(msg, typed)
        return msg
    raise AssertionError(f"did not fail (expected: {expected})")


# ---- protobuf by hand ----

def varint(n):
    out = b""
    while n >= 0x80:
        out += bytes([n & 0x7F | 0x80])
        n >>= 7
    return out + bytes([n])


def ld(n, data):
    """A length-delimited field."""
    if isinstance(data, str):
        data = data.encode()
    return varint(n << 3 | 2) + varint(len(data)) + data


def vi(n, value):
    """A varint field."""
    return varint(n << 3) + varint(value)


def anyof(name, body=b""):
    return ld(1, SQL + name) + ld(2, body)


def fields(buf):
    """Top-level fields of a protobuf message: {number: [value, ...]} (bytes or int)."""
    out, i = {}, 0
    while i < len(buf):
        key, i = _varint(buf, i)
        n, wire = key >> 3, key & 7
        if wire == 0:
            v, i = _varint(buf, i)
        elif wire == 2:
            length, i = _varint(buf, i)
            v, i = buf[i:i + length], i + length
        else:
            raise ValueError(f"wire type {wire}")
        out.setdefault(n, []).append(v)
    return out


def _varint(buf, i):
    n = shift = 0
    while True:
        b = buf[i]
        i += 1
        n |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return n, i


def unany(body):
    """The value of an Any."""
    return fields(body)[2][0]


def query_cmd(sql, txn=None):
    return anyof("CommandStatementQuery", ld(1, sql) + (ld(2, txn) if txn else b""))


def update_cmd(sql, txn=None):
    return anyof("CommandStatementUpdate", ld(1, sql) + (ld(2, txn) if txn else b""))


def ingest_cmd(table, schema=None, catalog=None, if_not_exist=0, if_exists=0, temporary=False, txn=None):
    opts_ = vi(1, if_not_exist) + vi(2, if_exists)
    body = ld(1, opts_) + ld(2, table)
    if schema is not None:
        body += ld(3, schema)
    if catalog is not None:
        body += ld(4, catalog)
    if temporary:
        body += vi(5, 1)
    if txn:
        body += ld(6, txn)
    return anyof("CommandStatementIngest", body)


def tables_cmd(catalog=None, schema_pattern=None, table_pattern=None, types=(), include_schema=False):
    body = b""
    if catalog is not None:
        body += ld(1, catalog)
    if schema_pattern is not None:
        body += ld(2, schema_pattern)
    if table_pattern is not None:
        body += ld(3, table_pattern)
    for t in types:
        body += ld(4, t)
    if include_schema:
        body += vi(5, 1)
    return anyof("CommandGetTables", body)


def ticket_of(handle):
    return fl.Ticket(anyof("TicketStatementQuery", ld(1, handle)))


# ---- raw calls ----

def info(c, cmd, o):
    return c.get_flight_info(fl.FlightDescriptor.for_command(cmd), o)


def query(c, sql, o, txn=None):
    """GetFlightInfo + DoGet of a statement: the table."""
    i = info(c, query_cmd(sql, txn), o)
    return c.do_get(i.endpoints[0].ticket, o).read_all()


def action(c, name, body, o):
    return [r.body.to_pybytes() for r in c.do_action(fl.Action(name, body), o)]


def put(c, cmd, table, o):
    """DoPut of `table` under `cmd`: DuckDB's count (DoPutUpdateResult.record_count)."""
    writer, reader = c.do_put(fl.FlightDescriptor.for_command(cmd), table.schema, o)
    writer.write_table(table)
    writer.done_writing()
    meta = reader.read()
    writer.close()
    return fields(meta.to_pybytes()).get(1, [0])[0] if meta is not None else None


def update(c, sql, o, txn=None):
    return put(c, update_cmd(sql, txn), pa.table({"x": pa.array([], pa.int32())}), o)


def prepare(c, sql, o, txn=None):
    """CreatePreparedStatement: (handle, dataset schema bytes)."""
    body = anyof("ActionCreatePreparedStatementRequest", ld(1, sql) + (ld(2, txn) if txn else b""))
    f = fields(unany(action(c, "CreatePreparedStatement", body, o)[0]))
    return f[1][0], f.get(2, [b""])[0]


def close_prepared(c, handle, o):
    return action(c, "ClosePreparedStatement", anyof("ActionClosePreparedStatementRequest", ld(1, handle)), o)


def prepared_query(c, handle, o, params=None):
    cmd = anyof("CommandPreparedStatementQuery", ld(1, handle))
    if params is not None:
        writer, reader = c.do_put(fl.FlightDescriptor.for_command(cmd), params.schema, o)
        writer.write_table(params)
        writer.done_writing()
        reader.read()
        writer.close()
    i = info(c, cmd, o)
    return c.do_get(i.endpoints[0].ticket, o).read_all()


def begin(c, o):
    return fields(unany(action(c, "BeginTransaction", anyof("ActionBeginTransactionRequest"), o)[0]))[1][0]


def end(c, txn, o, commit=True):
    return action(c, "EndTransaction", anyof("ActionEndTransactionRequest", ld(1, txn) + vi(2, 1 if commit else 2)), o)


def cancel(c, flight_info, o):
    """CancelFlightInfo: its status (1 cancelled, 3 not cancellable)."""
    answer = action(c, "CancelFlightInfo", ld(1, flight_info.serialize()), o)[0]
    return fields(answer).get(1, [0])[0]
