"""`make bench` case (l), issue 33: the Arrow Flight SQL door (specs/018-flight-door.md).

- read throughput for 1M- and 10M-row results through the door, as a principal over a RENAME
  object, against (a) the same door running the same physical query for a passthrough principal
  (`ACL NATIVE`, goal >= 0.95x) and (b) in-process `fetch_arrow_table` of the same query (the
  physical limit; the ratio is reported);
- a point query's round trip through the door vs the same door native (goal <= +70 us);
- connect-and-first-row time vs native (goal <= 2x);
- sessions opened per second (a new client connection's first call).

The door serves on 127.0.0.1 (an ephemeral port) in this process; the clients are the real ADBC
Flight SQL driver with PyJWT tokens."""
import statistics
import time

import adbc_driver_flightsql.dbapi as flight_sql
import duckdb
import jwt
from adbc_driver_flightsql import DatabaseOptions

SECRET = "a-shared-secret-that-is-32-bytes-or-longer"
ISS = "https://idp.example"


def mint(role, sub="bench"):
    return jwt.encode({"iss": ISS, "sub": sub, "exp": int(time.time()) + 3600, "roles": [role]}, SECRET, algorithm="HS256")


def client(uri, role, sub="bench"):
    return flight_sql.connect(uri, db_kwargs={DatabaseOptions.AUTHORIZATION_HEADER.value: f"Bearer {mint(role, sub)}"})


def fetch(conn, sql):
    cur = conn.cursor()
    cur.execute(sql)
    t = cur.fetch_arrow_table()
    cur.close()
    return t


def best_of(fn, n):
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def door_case(ext, big_rows=(1_000_000, 10_000_000), rounds=3, points=300, connects=30):
    con = duckdb.connect(":memory:", config={"allow_unsigned_extensions": "true"})
    con.execute(f"LOAD '{ext}'")
    con.execute("ATTACH ':memory:' AS phys")
    for n in big_rows:
        con.execute(f"CREATE TABLE phys.main.t{n} AS SELECT range AS id, range % 97 AS k, range * 0.5 AS v FROM range({n})")
    con.execute(f"ACL ADMIN CREATE ISSUER '{ISS}' KEYS 'hmac:{SECRET}' ALGS (HS256)")
    tables = "; ".join(f"CREATE VIRTUAL TABLE sales.t{n} AS phys.main.t{n}" for n in big_rows)
    con.execute("ACL ADMIN CREATE VIRTUAL CATALOG sales; " + tables + "; CREATE ROLE analyst; "
                "GRANT CATALOG sales TO ROLE analyst WITH (select) MAIN; CREATE ROLE ops; GRANT ADMIN passthrough TO ROLE ops")
    con.execute("ATTACH ':memory:' AS aclcat")
    con.execute("SELECT acl_use_db('aclcat', 'acl', true)").fetchall()
    con.execute("SET GLOBAL acl_max_sessions = 0")
    uri = con.execute("SELECT acl_flight_serve('grpc://127.0.0.1:0')").fetchone()[0]
    analyst, ops = client(uri, "analyst"), client(uri, "ops")
    print("(l) the Flight SQL door (ADBC client, same process, 127.0.0.1)")
    try:
        for n in big_rows:
            sql_v = f"SELECT id, k, v FROM t{n}"
            sql_p = f"ACL NATIVE SELECT id, k, v FROM phys.main.t{n}"
            fetch(analyst, sql_v), fetch(ops, sql_p)  # warm
            door = best_of(lambda: fetch(analyst, sql_v), rounds)
            native = best_of(lambda: fetch(ops, sql_p), rounds)
            local = best_of(lambda: con.sql(f"SELECT id, k, v FROM phys.main.t{n}").to_arrow_table(), rounds)
            print(f"    {n:>10,} rows: door {n / door / 1e6:6.2f} M rows/s; door ACL NATIVE {n / native / 1e6:6.2f} M rows/s "
                  f"(principal/native {native / door:4.2f}x, goal >= 0.95x); in-process to_arrow_table (fetch_arrow_table) "
                  f"{n / local / 1e6:6.2f} M rows/s (door/in-process {local / door:4.2f}x)")
        # point round trip
        pt_v, pt_p = "SELECT k FROM t1000000 WHERE id = 4242", "ACL NATIVE SELECT k FROM phys.main.t1000000 WHERE id = 4242"
        fetch(analyst, pt_v), fetch(ops, pt_p)
        a, b = [], []
        for _ in range(points):
            t0 = time.perf_counter()
            fetch(analyst, pt_v)
            a.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            fetch(ops, pt_p)
            b.append(time.perf_counter() - t0)
        pa, pb = statistics.median(a) * 1e6, statistics.median(b) * 1e6
        print(f"    point query round trip: door {pa:7.1f} us, door ACL NATIVE {pb:7.1f} us (+{pa - pb:5.1f} us, goal <= +70 us)")
        # connect and first row; sessions per second
        def first_row(role, sql, i):
            c = client(uri, role, sub=f"c{i}")
            fetch(c, sql)
            c.close()

        ca = statistics.median([best_of(lambda i=i: first_row("analyst", pt_v, i), 1) for i in range(connects)])
        cb = statistics.median([best_of(lambda i=i: first_row("ops", pt_p, i), 1) for i in range(connects)])
        print(f"    connect and first row: door {ca * 1e3:6.2f} ms, door ACL NATIVE {cb * 1e3:6.2f} ms ({ca / cb:4.2f}x, goal <= 2x)")
        t0 = time.perf_counter()
        for i in range(connects):
            c = client(uri, "analyst", sub=f"s{i}")
            fetch(c, "SELECT 1")
            c.close()
        opened = connects / (time.perf_counter() - t0)
        print(f"    sessions opened per second (a new client's first call): {opened:6.1f}")
    finally:
        analyst.close()
        ops.close()
        con.execute(f"SELECT acl_flight_stop('{uri}')").fetchall()
        con.close()
