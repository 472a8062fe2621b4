"""The grammar of crash_hunt.py: programs of principal DDL and metadata listings nested in views,
CTEs, CTAS, subqueries, prepared statements, relations and small-stack threads, with the
gateway's own reads of what principals stored, policy changes and restarts.

A program is `{"files": bool, "steps": [step, …]}`; a step is `{"who": p|q|gw|admin, "sql": …,
"mode": exec|params|relation|relfilter|thread, "params": […]}` or `{"restart": true}`. The world
(crash_child.WORLD): role p holds select/insert/create/drop on virtual schema c.ws (over phys.ws)
and temp/explain on catalog c; role q reads c.ws; c.orders is a sliced table.
"""
import json

LISTINGS = [
    "information_schema.tables", "information_schema.columns", "information_schema.schemata",
    "system.information_schema.tables", "duckdb_tables()", "duckdb_columns()", "duckdb_schemas()",
    "duckdb_databases()", "duckdb_views()", "main.duckdb_tables()", "system.main.duckdb_columns()",
    "(SHOW TABLES)", "(SHOW ALL TABLES)", "(SHOW DATABASES)",
]
# Statement-level listings and their relatives (some are refused: the refusal must be clean).
LISTING_STATEMENTS = [
    "SHOW TABLES", "SHOW ALL TABLES", "SHOW DATABASES", "DESCRIBE ws.base", "DESCRIBE orders",
    "PRAGMA show_tables", "PRAGMA table_info('ws.base')", "SUMMARIZE ws.base", "SHOW ws.base",
    "SELECT current_database(), current_schema()",
]
VIEWS = ["ws.v0", "ws.v1", "ws.v2", "ws.v3"]
TABLES = ["ws.t0", "ws.t1"]
TEMPS = ["tv0", "tv1", "tt0"]
DATA = ["orders", "ws.base", "c.ws.base", "c.orders"]


def pick(r, xs):
    return xs[r.randrange(len(xs))]


def source(r, depth):
    """A FROM item."""
    k = r.random()
    if k < 0.45:
        return pick(r, LISTINGS)
    if k < 0.65:
        return pick(r, VIEWS + TABLES)
    if k < 0.75:
        return pick(r, TEMPS)
    if k < 0.85 and depth > 0:
        return f"({query(r, depth - 1)}) AS s{depth}"
    if k < 0.9:
        return pick(r, ["(DESCRIBE ws.base)", f"(DESCRIBE {pick(r, VIEWS)})", "(SUMMARIZE ws.base)"])
    return pick(r, DATA)


def query(r, depth=2):
    k = r.random()
    src = source(r, depth)
    if k < 0.35:
        return f"SELECT {pick(r, ['*', 'count(*) AS n', '1 AS one', '*, 1 AS one'])} FROM {src}"
    if k < 0.5:
        return f"WITH x AS ({query(r, depth - 1) if depth > 0 else 'SELECT * FROM ' + src}) SELECT * FROM x"
    if k < 0.6:
        return f"SELECT (SELECT count(*) FROM {src}) AS n"
    if k < 0.7:
        return f"SELECT * FROM {pick(r, DATA)} WHERE EXISTS (SELECT 1 FROM {src})"
    if k < 0.78:
        return f"SELECT * FROM {src}, {source(r, depth - 1 if depth else 0)}"
    if k < 0.85 and depth > 0:
        return f"{query(r, depth - 1)} UNION ALL {query(r, depth - 1)}"
    if k < 0.92:
        return f"SELECT * FROM {src} LIMIT {r.randrange(3)}"
    return f"FROM {src}"


def principal_ddl(r):
    k = r.random()
    q = query(r)
    if k < 0.3:
        return f"CREATE {pick(r, ['', 'OR REPLACE '])}VIEW {pick(r, VIEWS)} AS {q}"
    if k < 0.45:
        return f"CREATE {pick(r, ['', 'OR REPLACE '])}TEMP VIEW {pick(r, TEMPS[:2])} AS {q}"
    if k < 0.65:
        return f"CREATE {pick(r, ['', 'OR REPLACE '])}TABLE {pick(r, TABLES)} AS {q}"
    if k < 0.72:
        return f"CREATE {pick(r, ['', 'OR REPLACE '])}TEMP TABLE tt0 AS {q}"
    if k < 0.85:
        return f"DROP {pick(r, ['VIEW', 'TABLE'])} IF EXISTS {pick(r, VIEWS + TABLES + TEMPS)}"
    return f"INSERT INTO {pick(r, TABLES)} SELECT * FROM {source(r, 1)}"


def principal_read(r):
    k = r.random()
    if k < 0.5:
        return query(r)
    if k < 0.75:
        return pick(r, LISTING_STATEMENTS)
    if k < 0.85:
        return f"EXPLAIN {query(r, 1)}"
    return f"SELECT * FROM {pick(r, VIEWS + TEMPS)}"


P_JSON = '{"roles":["p"],"label":"role \\"p\\"","claims":{}}'


def gateway(r):
    """The gateway's own SQL, unprefixed: reading what principals stored, native listings, and
    an operator's views (one over the listing function itself, as a careless operator might)."""
    return pick(r, [
        f"SELECT * FROM phys.{pick(r, VIEWS + TABLES)}",
        "SELECT * FROM duckdb_columns()",
        "SELECT count(*) FROM information_schema.columns",
        "SHOW ALL TABLES",
        f"DESCRIBE phys.{pick(r, VIEWS)}",
        f"CREATE OR REPLACE VIEW phys.ws.g0 AS SELECT * FROM phys.{pick(r, VIEWS)}",
        f"CREATE OR REPLACE VIEW phys.ws.raw AS SELECT * FROM system.main.acl_meta('tables', '{P_JSON}')",
        "DROP VIEW IF EXISTS phys.ws.raw",
    ])


def admin(r):
    return pick(r, [
        "REVOKE SCHEMA c.ws FROM ROLE q",
        "GRANT SCHEMA c.ws TO ROLE q WITH (select)",
        "GRANT SCHEMA c.ws TO ROLE p WITH (select, create)",
        "GRANT SCHEMA c.ws TO ROLE p WITH (select, insert, create, drop)",
        "CREATE OR REPLACE VIRTUAL VIEW c.vv AS SELECT * FROM phys.ws.base",
    ])


def chain(r):
    """Views over views: ws.cK reads ws.c(K-1), over a table or a listing at the bottom."""
    n = r.choice([3, 10, 40, 120])
    bottom = pick(r, ["SELECT * FROM ws.base", f"SELECT * FROM {pick(r, LISTINGS)}"])
    steps = [{"who": "p", "sql": f"CREATE OR REPLACE VIEW ws.c0 AS {bottom}"}]
    steps += [{"who": "p", "sql": f"CREATE OR REPLACE VIEW ws.c{k} AS SELECT * FROM ws.c{k - 1}"} for k in range(1, n)]
    who = pick(r, ["p", "q", "gw"])
    name = f"phys.ws.c{n - 1}" if who == "gw" else f"ws.c{n - 1}"
    steps.append({"who": who, "sql": f"SELECT count(*) FROM {name}", "mode": pick(r, ["exec", "thread"])})
    return steps


def moded(r, step):
    """Runs a read as a prepared statement, a relation or on a small-stack thread now and then."""
    k = r.random()
    sql = step["sql"]
    reads = sql.startswith(("SELECT", "WITH", "FROM"))
    if k < 0.15 and reads:
        step.update(sql=f"SELECT * FROM ({sql}) AS w WHERE ? = 1", mode="params", params=[1])
    elif k < 0.3 and reads:
        step["mode"] = pick(r, ["relation", "relfilter"])
    elif k < 0.4:
        step["mode"] = "thread"
    return step


def program(r):
    files = r.random() < 0.2
    steps = []
    for _ in range(r.randrange(4, 14)):
        k = r.random()
        if k < 0.4:
            steps.append(moded(r, {"who": "p", "sql": principal_ddl(r)}))
        elif k < 0.7:
            steps.append(moded(r, {"who": pick(r, ["p", "p", "q"]), "sql": principal_read(r)}))
        elif k < 0.82:
            steps.append(moded(r, {"who": "gw", "sql": gateway(r)}))
        elif k < 0.87:
            steps.append({"who": "admin", "sql": admin(r)})
        elif k < 0.9:
            steps.extend(chain(r))
        elif files:
            steps.append({"restart": True})
    return {"files": files, "steps": steps}


def regressions():
    """Known crashes, run first by every hunt."""
    listing_view = "CREATE VIEW ws.v0 AS SELECT table_name FROM duckdb_tables()"
    return [
        # issue 31, finding 8: a view over a listing, then anyone's listing
        {"files": False, "steps": [
            {"who": "p", "sql": listing_view},
            {"who": "q", "sql": "SELECT * FROM information_schema.tables"},
            {"who": "gw", "sql": "SELECT * FROM phys.ws.v0"},
        ]},
        # the same through an operator's view over the listing function, and a restart
        {"files": True, "steps": [
            {"who": "gw", "sql": f"CREATE VIEW phys.ws.raw AS SELECT * FROM system.main.acl_meta('tables', '{P_JSON}')"},
            {"restart": True},
            {"who": "p", "sql": "SHOW ALL TABLES"},
            {"who": "gw", "sql": "SELECT * FROM phys.ws.raw"},
            {"who": "gw", "sql": "SELECT * FROM duckdb_columns()"},
        ]},
        # a chain of views read on a small stack
        {"files": False, "steps": chain_of(150) + [
            {"who": "p", "sql": "SELECT count(*) FROM ws.c149", "mode": "thread"},
        ]},
    ]


def chain_of(n):
    steps = [{"who": "p", "sql": "CREATE VIEW ws.c0 AS SELECT * FROM ws.base"}]
    return steps + [{"who": "p", "sql": f"CREATE VIEW ws.c{k} AS SELECT * FROM ws.c{k - 1}"} for k in range(1, n)]


def describe(step):
    if step.get("restart"):
        return "-- restart the node (close, open the same files, LOAD, acl_use_db)"
    prefix = {"p": 'ACL ROLE "p" ', "q": 'ACL ROLE "q" ', "gw": "", "admin": "ACL ADMIN "}[step["who"]]
    mode = step.get("mode", "exec")
    extra = f"  -- {mode}{' ' + json.dumps(step['params']) if 'params' in step else ''}" if mode != "exec" else ""
    return f"{prefix}{step['sql']}{extra}"

