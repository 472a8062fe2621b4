"""The statement kinds the statement gate admits (src/rewrite/gate.rs, spec 005) and, for each, the
places inside it where an expression, a table name, a column name or a type can stand: the first
two of the three lists of the clause corpus (the probes are in clauses.py).

A template is (position, sql, flags) with exactly one hole:
    <e:T[:q.]>  an expression over a row of the principal's `people` (its columns `id`, `tenant`,
                `name` in scope, written with the qualifier q. if given); T is its type: b(oolean),
                i(nteger), t(ext)
    <s:T>       a scalar expression where no row is in scope (LIMIT, VALUES, a table function's
                argument): the probes stand there as scalar subqueries
    <c:T>       a constant expression where DuckDB allows no subquery (DEFAULT, CHECK)
    <t>         a table reference (FROM item)
    <n>         a column name
    <y>         a type
    <p>         a column position (`#<p>`, spec 016)
flags: "target" — the hole's row is the write's target (its physical table, where a hidden column
is refused by our rule, not absent); "write" — the statement changes data (a state check follows).
Kinds without a hole (DELETE without a condition, SHOW TABLES) are templates without a marker:
only the legitimate form is written for them.
"""

T = "target"
W = "write"

SELECT = [
    ("select list", "SELECT <e:t> AS v FROM people ORDER BY id", ()),
    ("select list, integer", "SELECT id, <e:i> AS v FROM people ORDER BY id", ()),
    ("WHERE", "SELECT id FROM people WHERE <e:b> ORDER BY id", ()),
    ("GROUP BY", "SELECT count(*) FROM people GROUP BY <e:t> ORDER BY ALL", ()),
    ("GROUP BY ROLLUP", "SELECT count(*) FROM people GROUP BY ROLLUP (<e:t>) ORDER BY ALL", ()),
    ("GROUP BY GROUPING SETS", "SELECT count(*) FROM people GROUP BY GROUPING SETS ((<e:t>), ()) ORDER BY ALL", ()),
    ("HAVING (aggregate)", "SELECT tenant, count(*) FROM people GROUP BY tenant HAVING max(<e:i>) > 0 ORDER BY ALL", ()),
    ("HAVING (scalar)", "SELECT tenant, count(*) FROM people GROUP BY tenant HAVING count(*) < <s:i> ORDER BY ALL", ()),
    ("QUALIFY", "SELECT id FROM people QUALIFY <e:b> AND row_number() OVER () > 0 ORDER BY id", ()),
    ("QUALIFY window ORDER BY", "SELECT id FROM people QUALIFY row_number() OVER (ORDER BY <e:t>, id) > 0 ORDER BY id", ()),
    ("ORDER BY", "SELECT id FROM people ORDER BY <e:t>, id", ()),
    ("LIMIT", "SELECT id FROM people ORDER BY id LIMIT <s:i>", ()),
    ("OFFSET", "SELECT id FROM people ORDER BY id LIMIT 5 OFFSET <s:i> - 3", ()),
    ("window PARTITION BY", "SELECT id, count(*) OVER (PARTITION BY <e:t>) FROM people ORDER BY id", ()),
    ("window ORDER BY", "SELECT id, row_number() OVER (ORDER BY <e:t>, id) FROM people ORDER BY id", ()),
    ("window frame offset", "SELECT id, sum(id) OVER (ORDER BY id ROWS BETWEEN <s:i> PRECEDING AND CURRENT ROW) FROM people ORDER BY id", ()),
    ("window argument", "SELECT id, max(<e:t>) OVER () FROM people ORDER BY id", ()),
    ("named WINDOW clause", "SELECT id, count(*) OVER w FROM people WINDOW w AS (PARTITION BY <e:t>) ORDER BY id", ()),
    ("aggregate argument", "SELECT max(<e:t>) FROM people", ()),
    ("aggregate FILTER", "SELECT count(*) FILTER (WHERE <e:b>) FROM people", ()),
    ("aggregate ORDER BY", "SELECT string_agg(name, ',' ORDER BY <e:t>, id) FROM people", ()),
    ("JOIN ... ON", "SELECT p.id, f.id FROM people p JOIN feed f ON <e:b:p.> AND p.id = f.id ORDER BY ALL", ()),
    ("LEFT JOIN ... ON", "SELECT p.id, f.id FROM people p LEFT JOIN feed f ON <e:b:p.> AND p.id = f.id ORDER BY ALL", ()),
    ("JOIN table", "SELECT count(*) FROM people p JOIN <t> j ON true", ()),
    ("JOIN ... USING", "SELECT count(*) FROM people a JOIN people b USING (<n>)", ()),
    ("FROM table", "SELECT count(*) FROM <t>", ()),
    ("FROM table, aliased with columns", "SELECT count(*) FROM <t> AS a(k)", ()),
    ("FROM subquery (table)", "SELECT count(*) FROM (SELECT * FROM <t>) s", ()),
    ("FROM subquery (expression)", "SELECT v FROM (SELECT <e:t> AS v FROM people) s ORDER BY ALL", ()),
    ("comma join", "SELECT count(*) FROM people, <t>", ()),
    ("LATERAL subquery (expression)", "SELECT p.id, l.v FROM people p, LATERAL (SELECT <e:t:p.> AS v) l ORDER BY ALL", ()),
    ("LATERAL subquery (table)", "SELECT p.id, l.n FROM people p, LATERAL (SELECT count(*) AS n FROM <t>) l ORDER BY ALL", ()),
    ("table function argument (range)", "SELECT count(*) FROM range(<s:i>)", ()),
    ("table function argument (unnest)", "SELECT * FROM unnest([<s:t>])", ()),
    ("CTE body (expression)", "WITH w AS (SELECT <e:t> AS v FROM people) SELECT v FROM w ORDER BY ALL", ()),
    ("CTE body (table)", "WITH w AS (SELECT count(*) AS n FROM <t>) SELECT n FROM w", ()),
    ("MATERIALIZED CTE body", "WITH w AS MATERIALIZED (SELECT <e:t> AS v FROM people) SELECT v FROM w ORDER BY ALL", ()),
    ("RECURSIVE CTE anchor", "WITH RECURSIVE r(n) AS (SELECT <s:i> UNION ALL SELECT n + 1 FROM r WHERE n < 6) SELECT count(*) FROM r", ()),
    ("RECURSIVE CTE recursive term (table)", "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT r.n + 1 FROM r, <t> WHERE r.n < 3) SELECT count(*) FROM r", ()),
    ("RECURSIVE CTE recursive term (expression)", "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT r.n + 1 FROM r JOIN people ON <e:b:people.> WHERE r.n < 3) SELECT count(*) FROM r", ()),
    ("UNION ALL branch (expression)", "SELECT id FROM people UNION ALL SELECT <e:i> FROM people ORDER BY 1", ()),
    ("UNION ALL branch (table)", "SELECT count(*) FROM people UNION ALL SELECT count(*) FROM <t> ORDER BY 1", ()),
    ("INTERSECT branch", "SELECT id FROM people INTERSECT SELECT <e:i> FROM people ORDER BY 1", ()),
    ("EXCEPT branch", "SELECT id FROM people EXCEPT SELECT <e:i> FROM people ORDER BY 1", ()),
    ("UNION BY NAME branch", "SELECT id FROM people UNION BY NAME SELECT <e:i> AS id FROM people ORDER BY 1", ()),
    ("VALUES row in FROM", "SELECT * FROM (VALUES (<s:t>)) v(a)", ()),
    ("VALUES statement", "VALUES (<s:t>)", ()),
    ("scalar subquery (expression)", "SELECT (SELECT max(<e:t>) FROM people)", ()),
    ("scalar subquery (table)", "SELECT (SELECT count(*) FROM <t>)", ()),
    ("correlated scalar subquery", "SELECT id, (SELECT <e:t:o.>) FROM people o ORDER BY id", ()),
    ("IN subquery", "SELECT id FROM people WHERE id IN (SELECT <e:i> FROM people) ORDER BY id", ()),
    ("IN list", "SELECT id FROM people WHERE <e:i> IN (1, 4) ORDER BY id", ()),
    ("EXISTS subquery (expression)", "SELECT id FROM people o WHERE EXISTS (SELECT 1 FROM people i WHERE <e:b:i.> AND i.id = o.id) ORDER BY id", ()),
    ("EXISTS subquery (table)", "SELECT EXISTS (SELECT 1 FROM <t>)", ()),
    ("ANY subquery", "SELECT id FROM people WHERE id = ANY (SELECT <e:i> FROM people) ORDER BY id", ()),
    ("CASE WHEN condition", "SELECT CASE WHEN <e:b> THEN 1 ELSE 0 END FROM people ORDER BY id", ()),
    ("CASE THEN branch", "SELECT CASE WHEN id > 0 THEN <e:t> END FROM people ORDER BY id", ()),
    ("CASE operand", "SELECT CASE <e:t> WHEN 'ann' THEN 1 ELSE 0 END FROM people ORDER BY id", ()),
    ("lambda body", "SELECT list_transform([1, 2], lambda x: x + <e:i>) FROM people ORDER BY id", ()),
    ("lambda filter body", "SELECT list_filter([1, 5], lambda x: x < <e:i>) FROM people ORDER BY id", ()),
    ("list literal element", "SELECT [<e:t>] FROM people ORDER BY id", ()),
    ("struct literal element", "SELECT {'a': <e:t>} FROM people ORDER BY id", ()),
    ("map literal key", "SELECT MAP {<e:t>: 1} FROM people ORDER BY id", ()),
    ("row constructor element", "SELECT (<e:t>, 1) FROM people ORDER BY id", ()),
    ("cast source", "SELECT CAST(<e:i> AS VARCHAR) FROM people ORDER BY id", ()),
    ("cast target type (CAST)", "SELECT CAST(id AS <y>) FROM people ORDER BY id", ()),
    ("cast target type (::)", "SELECT id::<y> FROM people ORDER BY id", ()),
    ("cast target type (TRY_CAST)", "SELECT TRY_CAST(id AS <y>) FROM people ORDER BY id", ()),
    ("cast target type (list of it)", "SELECT CAST([id] AS <y>[]) FROM people ORDER BY id", ()),
    ("COLUMNS('regex')", "SELECT COLUMNS('<n>') FROM people ORDER BY ALL", ()),
    ("COLUMNS(lambda)", "SELECT COLUMNS(lambda c: c = '<n>') FROM people ORDER BY ALL", ()),
    ("COLUMNS in a function", "SELECT struct_pack(COLUMNS('<n>')) FROM people ORDER BY ALL", ()),
    ("* EXCLUDE", "SELECT * EXCLUDE (<n>) FROM people ORDER BY ALL", ()),
    ("* REPLACE", "SELECT * REPLACE ('r' AS <n>) FROM people ORDER BY ALL", ()),
    ("* RENAME", "SELECT * RENAME (<n> AS renamed) FROM people ORDER BY ALL", ()),
    ("qualified column", "SELECT people.<n> FROM people ORDER BY ALL", ()),
    ("*", "SELECT * FROM people ORDER BY ALL", ()),
    ("qualified *", "SELECT p.* FROM people p ORDER BY ALL", ()),
    ("COLUMNS(*)", "SELECT max(COLUMNS(*)) FROM people", ()),
    ("whole-row reference", "SELECT p FROM people p ORDER BY p.id", ()),
    ("virtual scalar argument", "SELECT twice(<e:i>) FROM people ORDER BY id", ()),
    ("virtual table function argument", "SELECT count(*) FROM rows_of(<s:t>)", ()),
    ("virtual table function in a join", "SELECT count(*) FROM rows_of('acme') r JOIN <t> j ON true", ()),
    ("DISTINCT ON", "SELECT DISTINCT ON (<e:t>) id FROM people ORDER BY <e:t>, id", ()),
    ("SELECT without FROM", "SELECT <s:t>", ()),
    ("FROM-first", "FROM people SELECT <e:t> ORDER BY ALL", ()),
    # forms read from DuckDB's print of the statement (spec 016)
    ("FROM-first without SELECT", "FROM people WHERE <e:b> ORDER BY ALL", ()),
    ("positional reference", "SELECT #<p> AS v FROM people ORDER BY id", ()),
    ("positional reference in a subquery", "SELECT (SELECT max(#<p>) FROM people) AS v", ()),
    ("* LIKE", "SELECT * LIKE '<n>' FROM people ORDER BY ALL", ()),
    ("* ILIKE", "SELECT * ILIKE '<n>' FROM people ORDER BY ALL", ()),
    ("* SIMILAR TO", "SELECT * SIMILAR TO '<n>' FROM people ORDER BY ALL", ()),
    ("*COLUMNS in a call", "SELECT greatest(*COLUMNS(['<n>'])) AS v FROM people ORDER BY ALL", ()),
    ("method call", "SELECT (<e:t>).upper() AS v FROM people ORDER BY id", ()),
    ("method call on a column", "SELECT <n>.upper() AS v FROM people ORDER BY ALL", ()),
    ("list comprehension", "SELECT [x || '' FOR x IN [<e:t>]] AS v FROM people ORDER BY id", ()),
    ("list comprehension filter", "SELECT [x FOR x IN [1, 2] IF <e:b>] AS v FROM people ORDER BY id", ()),
    ("LIMIT percent", "SELECT id FROM people ORDER BY id LIMIT (<s:i>) %", ()),
    ("USING SAMPLE", "SELECT id FROM people WHERE <e:b> USING SAMPLE 100% ORDER BY id", ()),
    ("TABLESAMPLE", "SELECT count(*) FROM <t> TABLESAMPLE 100%", ()),
    ("ASOF JOIN ... ON", "SELECT p.id, f.id FROM people p ASOF JOIN feed f ON <e:b:p.> AND p.id >= f.id ORDER BY ALL", ()),
    ("ASOF LEFT JOIN table", "SELECT count(*) FROM people p ASOF LEFT JOIN (SELECT 1 AS k FROM <t>) j ON p.id >= j.k", ()),
    ("LATERAL table function", "SELECT p.id, u.x FROM people p CROSS JOIN LATERAL unnest([<e:t:p.>]) AS u(x) ORDER BY ALL", ()),
    ("POSITIONAL JOIN", "SELECT p.id, f.id, <e:t:p.> AS v FROM people p POSITIONAL JOIN feed f ORDER BY ALL", ()),
    ("POSITIONAL JOIN table", "SELECT count(*) FROM people p POSITIONAL JOIN <t> j", ()),
    ("PIVOT aggregate", "PIVOT people ON tenant IN ('acme') USING max(<e:t>) GROUP BY id ORDER BY id", ()),
    ("PIVOT source", "SELECT * FROM (SELECT 1 AS k FROM <t>) PIVOT (count(*) FOR k IN (1))", ()),
    ("UNPIVOT columns", "UNPIVOT people ON <n> INTO NAME k VALUE v ORDER BY ALL", ()),
    ("DESCRIBE subquery", "SELECT column_name, column_type FROM (DESCRIBE SELECT <e:t> AS v FROM people)", ()),
    ("DESCRIBE subquery (table)", "SELECT count(*) FROM (DESCRIBE <t>)", ()),
    ("SUMMARIZE query", "SELECT column_name, min, max, count FROM (SUMMARIZE SELECT <e:t> AS v FROM people)", ()),
    ("SUMMARIZE table", "SELECT count(*) FROM (SUMMARIZE <t>)", ()),
    ("SHOW TABLES subquery", "SELECT count(*) FROM (SHOW TABLES)", ()),
    ("frame EXCLUDE", "SELECT id, sum(id) OVER (PARTITION BY <e:t> ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW EXCLUDE CURRENT ROW) FROM people ORDER BY id", ()),
    ("FILTER without WHERE", "SELECT count(*) FILTER (<e:b>) FROM people", ()),
    ("IGNORE NULLS in the call", "SELECT id, first_value(<e:t> IGNORE NULLS) OVER (ORDER BY id) FROM people ORDER BY id", ()),
    ("RECURSIVE CTE USING KEY", "WITH RECURSIVE r(n) USING KEY (n) AS (SELECT <s:i> UNION SELECT n + 1 FROM r WHERE n < 6) SELECT count(*) FROM r", ()),
    ("GLOB", "SELECT id FROM people WHERE <e:t> GLOB '*' ORDER BY id", ()),
    ("** operator", "SELECT <e:i> ** 2 AS v FROM people ORDER BY id", ()),
    ("^@ operator", "SELECT <e:t> ^@ 'a' AS v FROM people ORDER BY id", ()),
    ("E-string", "SELECT E'it\\'s ' || <e:t> AS v FROM people ORDER BY id", ()),
    ("unnamed call (DuckDB's column name)", "SELECT lower(<e:t>) FROM people ORDER BY id", ()),
]

# the principal's target `people`: a hidden column there is refused by the write rule
INSERT = [
    ("VALUES row", "INSERT INTO people (id, tenant, name) VALUES (7, 'acme', <s:t>)", (W,)),
    ("SELECT list", "INSERT INTO people (id, tenant, name) SELECT id + 10, tenant, <e:t> FROM people", (W,)),
    ("SELECT WHERE", "INSERT INTO people (id, tenant, name) SELECT id + 10, tenant, name FROM people WHERE <e:b>", (W,)),
    ("SELECT FROM", "INSERT INTO people (id, tenant, name) SELECT 7, 'acme', 'x' FROM <t> LIMIT 1", (W,)),
    ("CTE before INSERT", "WITH w AS (SELECT id + 10 AS i, <e:t> AS v FROM people) INSERT INTO people (id, tenant, name) SELECT i, 'acme', v FROM w", (W,)),
    ("CTE before INSERT (table)", "WITH w AS (SELECT count(*) AS n FROM <t>) INSERT INTO people (id, tenant, name) SELECT 7, 'acme', 'x' FROM w", (W,)),
    ("DEFAULT VALUES RETURNING", "INSERT INTO feed DEFAULT VALUES RETURNING <e:t>", (W, T)),
    ("DEFAULT VALUES", "INSERT INTO feed DEFAULT VALUES", (W,)),
    ("ON CONFLICT DO NOTHING, VALUES", "INSERT INTO people (id, tenant, name) VALUES (1, 'acme', <s:t>) ON CONFLICT DO NOTHING", (W,)),
    ("ON CONFLICT (id) DO NOTHING, VALUES", "INSERT INTO people (id, tenant, name) VALUES (8, 'acme', <s:t>) ON CONFLICT (id) DO NOTHING", (W,)),
    ("ON CONFLICT DO UPDATE SET", "INSERT INTO people (id, tenant, name) VALUES (1, 'acme', 'new') ON CONFLICT (id) DO UPDATE SET name = <e:t>", (W, T)),
    ("ON CONFLICT DO UPDATE SET ... WHERE", "INSERT INTO people (id, tenant, name) VALUES (1, 'acme', 'new') ON CONFLICT (id) DO UPDATE SET name = excluded.name WHERE <e:b>", (W, T)),
    ("ON CONFLICT DO UPDATE SET (excluded)", "INSERT INTO people (id, tenant, name) VALUES (1, 'acme', <s:t>) ON CONFLICT (id) DO UPDATE SET name = excluded.name", (W,)),
    ("INSERT OR REPLACE", "INSERT OR REPLACE INTO people (id, tenant, name) VALUES (1, 'acme', <s:t>)", (W,)),
    ("INSERT OR IGNORE", "INSERT OR IGNORE INTO people (id, tenant, name) VALUES (4, 'acme', <s:t>)", (W,)),
    ("BY NAME", "INSERT INTO people BY NAME SELECT id + 10 AS id, tenant, <e:t> AS name FROM people", (W,)),
    ("BY NAME (table)", "INSERT INTO people BY NAME SELECT 7 AS id, 'acme' AS tenant, 'x' AS name FROM <t> LIMIT 1", (W,)),
    ("RETURNING", "INSERT INTO people (id, tenant, name) VALUES (7, 'acme', 'z') RETURNING <e:t>", (W, T)),
    # positions and star forms in the source and over the target (spec 016)
    ("SELECT positional", "INSERT INTO people (id, tenant, name) SELECT id + 10, tenant, #<p> FROM people", (W,)),
    ("SELECT * RENAME", "INSERT INTO people (id, tenant, name) SELECT id + 20, tenant, nm FROM (SELECT * RENAME (<n> AS nm) FROM people)", (W,)),
    ("SELECT *COLUMNS", "INSERT INTO people (id, tenant, name) SELECT id + 30, tenant, greatest(*COLUMNS(['<n>'])) FROM people", (W,)),
    ("RETURNING positional", "INSERT INTO people (id, tenant, name) VALUES (7, 'acme', 'z') RETURNING #<p>", (W, T)),
]

UPDATE = [
    ("SET", "UPDATE people SET name = <e:t>", (W, T)),
    ("SET (scalar subquery)", "UPDATE people SET name = (SELECT max(<e:t>) FROM people)", (W,)),
    ("WHERE", "UPDATE people SET name = 'u' WHERE <e:b>", (W, T)),
    ("WHERE subquery", "UPDATE people SET name = 'u' WHERE id IN (SELECT <e:i> FROM people)", (W,)),
    ("FROM (table)", "UPDATE people SET name = 'u' FROM (SELECT count(*) AS n FROM <t>) f WHERE people.id = f.n + 2", (W,)),
    ("FROM (expression)", "UPDATE people SET name = f.v FROM (SELECT <e:t> AS v, id FROM people) f WHERE people.id = f.id", (W,)),
    ("FROM table directly", "UPDATE people SET name = 'u' FROM <t> f WHERE people.id = 4", (W,)),
    ("FROM POSITIONAL JOIN", "UPDATE people SET name = f.v FROM (SELECT <e:t> AS v, id FROM people) f POSITIONAL JOIN feed g WHERE people.id = f.id", (W,)),
    ("RETURNING", "UPDATE people SET name = 'u' RETURNING <e:t>", (W, T)),
    ("CTE before UPDATE", "WITH w AS (SELECT <e:i> AS v FROM people) UPDATE people SET name = 'u' WHERE id IN (SELECT w.v FROM w)", (W,)),
    ("SET positional", "UPDATE people SET name = #<p>", (W, T)),
    ("WHERE positional", "UPDATE people SET name = 'u' WHERE #<p> IS NOT NULL", (W, T)),
    ("SET star pattern", "UPDATE people SET name = to_json(* LIKE '<n>')::VARCHAR", (W, T)),
    ("FROM * RENAME", "UPDATE people SET name = f.nm FROM (SELECT * RENAME (<n> AS nm), id AS k FROM people) f WHERE people.id = f.k", (W,)),
]

DELETE = [
    ("WHERE", "DELETE FROM people WHERE <e:b>", (W, T)),
    ("WHERE subquery", "DELETE FROM people WHERE id IN (SELECT <e:i> FROM people)", (W,)),
    ("USING (table)", "DELETE FROM people USING (SELECT count(*) AS n FROM <t>) u WHERE people.id = u.n + 2", (W,)),
    ("USING table directly", "DELETE FROM people USING <t> u WHERE people.id = 4", (W,)),
    ("USING (expression)", "DELETE FROM people USING (SELECT <e:i> AS v FROM people) u WHERE people.id = u.v", (W,)),
    ("RETURNING", "DELETE FROM people WHERE id = 4 RETURNING <e:t>", (W, T)),
    ("without a condition", "DELETE FROM people", (W,)),
    ("WHERE positional", "DELETE FROM people WHERE #<p> = 'x'", (W, T)),
    ("WHERE star pattern", "DELETE FROM people WHERE to_json(* LIKE '<n>') IS NULL", (W, T)),
]

MERGE_HEAD = "MERGE INTO people t USING feed s ON t.id = s.id "
MERGE = [
    ("USING (table)", "MERGE INTO people t USING (SELECT count(*) AS n FROM <t>) s ON t.id = s.n + 2 WHEN MATCHED THEN UPDATE SET name = 'm'", (W,)),
    ("USING table directly", "MERGE INTO people t USING <t> s ON false WHEN NOT MATCHED THEN DO NOTHING", (W,)),
    ("USING (expression)", "MERGE INTO people t USING (SELECT <e:i> AS id FROM people) s ON t.id = s.id WHEN MATCHED THEN UPDATE SET name = 'm'", (W,)),
    ("ON", "MERGE INTO people t USING feed s ON <e:b:t.> AND t.id = s.id WHEN MATCHED THEN UPDATE SET name = 'm'", (W, T)),
    ("ON (subquery)", "MERGE INTO people t USING feed s ON t.id = s.id AND (SELECT count(*) FROM <t>) >= 0 WHEN MATCHED THEN UPDATE SET name = 'm'", (W,)),
    ("WHEN MATCHED AND … THEN UPDATE", MERGE_HEAD + "WHEN MATCHED AND <e:b:t.> THEN UPDATE SET name = 'm'", (W, T)),
    ("WHEN MATCHED THEN UPDATE SET value", MERGE_HEAD + "WHEN MATCHED THEN UPDATE SET name = <e:t:t.>", (W, T)),
    ("WHEN MATCHED THEN UPDATE SET value (source)", MERGE_HEAD + "WHEN MATCHED THEN UPDATE SET name = <e:t:s.>", (W,)),
    ("WHEN MATCHED AND … THEN DELETE", MERGE_HEAD + "WHEN MATCHED AND <e:b:t.> THEN DELETE", (W, T)),
    ("WHEN MATCHED THEN DELETE", MERGE_HEAD + "WHEN MATCHED THEN DELETE", (W,)),
    ("WHEN MATCHED AND … THEN DO NOTHING", MERGE_HEAD + "WHEN MATCHED AND <e:b:t.> THEN DO NOTHING WHEN MATCHED THEN UPDATE SET name = 'm'", (W, T)),
    ("WHEN MATCHED THEN DO NOTHING", MERGE_HEAD + "WHEN MATCHED THEN DO NOTHING", (W,)),
    ("WHEN NOT MATCHED AND … THEN INSERT", MERGE_HEAD + "WHEN NOT MATCHED AND <e:b:s.> THEN INSERT (id, tenant, name) VALUES (s.id, 'acme', 'n')", (W,)),
    ("WHEN NOT MATCHED THEN INSERT VALUES", MERGE_HEAD + "WHEN NOT MATCHED THEN INSERT (id, tenant, name) VALUES (s.id, 'acme', <e:t:s.>)", (W,)),
    ("WHEN NOT MATCHED THEN INSERT VALUES (scalar)", MERGE_HEAD + "WHEN NOT MATCHED THEN INSERT (id, tenant, name) VALUES (s.id, 'acme', <s:t>)", (W,)),
    ("WHEN NOT MATCHED BY TARGET AND … THEN DO NOTHING", MERGE_HEAD + "WHEN NOT MATCHED BY TARGET AND <e:b:s.> THEN DO NOTHING", (W,)),
    ("WHEN NOT MATCHED THEN DO NOTHING", MERGE_HEAD + "WHEN NOT MATCHED THEN DO NOTHING", (W,)),
    ("WHEN NOT MATCHED BY SOURCE AND … THEN DELETE", MERGE_HEAD + "WHEN NOT MATCHED BY SOURCE AND <e:b:t.> THEN DELETE", (W, T)),
    ("WHEN NOT MATCHED BY SOURCE THEN UPDATE SET value", MERGE_HEAD + "WHEN NOT MATCHED BY SOURCE THEN UPDATE SET name = <e:t:t.>", (W, T)),
    ("WHEN NOT MATCHED BY SOURCE AND … THEN UPDATE", MERGE_HEAD + "WHEN NOT MATCHED BY SOURCE AND <e:b:t.> THEN UPDATE SET name = 'm'", (W, T)),
    ("WHEN NOT MATCHED BY SOURCE THEN DELETE", MERGE_HEAD + "WHEN NOT MATCHED BY SOURCE THEN DELETE", (W,)),
    ("WHEN NOT MATCHED BY SOURCE AND … THEN DO NOTHING", MERGE_HEAD + "WHEN NOT MATCHED BY SOURCE AND <e:b:t.> THEN DO NOTHING", (W, T)),
    ("RETURNING", MERGE_HEAD + "WHEN MATCHED THEN UPDATE SET name = 'm' RETURNING <e:t:t.>", (W, T)),
    ("CTE before MERGE", "WITH w AS (SELECT <e:i> AS id FROM people) MERGE INTO people t USING w s ON t.id = s.id WHEN MATCHED THEN UPDATE SET name = 'm'", (W,)),
    ("WHEN MATCHED THEN UPDATE SET positional", MERGE_HEAD + "WHEN MATCHED THEN UPDATE SET name = #<p>", (W, T)),
]

# The first record of each CREATE batch replaces what an earlier record made; the batch ends
# with a read of it, so the record shows what was created.
DDL = [
    ("CREATE TEMP TABLE column type", "CREATE OR REPLACE TEMP TABLE tt (a <y>); SELECT count(*) FROM tt", ()),
    ("CREATE TEMP TABLE DEFAULT", "CREATE OR REPLACE TEMP TABLE tt (k INTEGER, a INTEGER DEFAULT <c:i>); INSERT INTO tt (k) VALUES (1); SELECT a FROM tt", ()),
    ("CREATE TEMP TABLE CHECK (constant)", "CREATE OR REPLACE TEMP TABLE tt (a INTEGER, CHECK (a < <c:i>)); INSERT INTO tt VALUES (1); SELECT a FROM tt", ()),
    ("CREATE TEMP TABLE column CHECK", "CREATE OR REPLACE TEMP TABLE tt (a INTEGER CHECK (a < <c:i>)); INSERT INTO tt VALUES (1); SELECT a FROM tt", ()),
    ("CREATE TEMP TABLE AS SELECT (expression)", "CREATE OR REPLACE TEMP TABLE tt AS SELECT <e:t> AS v FROM people; SELECT v FROM tt ORDER BY ALL", ()),
    ("CREATE TEMP TABLE AS SELECT (table)", "CREATE OR REPLACE TEMP TABLE tt AS SELECT count(*) AS n FROM <t>; SELECT n FROM tt", ()),
    ("CREATE TABLE (schema) column type", "CREATE OR REPLACE TABLE ws.tt (a <y>); SELECT count(*) FROM ws.tt", ()),
    ("CREATE TABLE (schema) DEFAULT", "CREATE OR REPLACE TABLE ws.tt (k INTEGER, a INTEGER DEFAULT <c:i>); INSERT INTO ws.tt (k) VALUES (1); SELECT a FROM ws.tt", ()),
    ("CREATE TABLE (schema) CHECK", "CREATE OR REPLACE TABLE ws.tt (a INTEGER, CHECK (a < <c:i>)); INSERT INTO ws.tt VALUES (1); SELECT a FROM ws.tt", ()),
    ("CREATE TABLE (schema) AS SELECT (expression)", "CREATE OR REPLACE TABLE ws.tt AS SELECT <e:t> AS v FROM people; SELECT v FROM ws.tt ORDER BY ALL", ()),
    ("CREATE TABLE (schema) AS SELECT (table)", "CREATE OR REPLACE TABLE ws.tt AS SELECT count(*) AS n FROM <t>; SELECT n FROM ws.tt", ()),
    ("CREATE TEMP VIEW (expression)", "CREATE OR REPLACE TEMP VIEW tv AS SELECT <e:t> AS v FROM people; SELECT v FROM tv ORDER BY ALL", ()),
    ("CREATE TEMP VIEW (table)", "CREATE OR REPLACE TEMP VIEW tv AS SELECT count(*) AS n FROM <t>; SELECT n FROM tv", ()),
    ("CREATE TEMP VIEW (WHERE)", "CREATE OR REPLACE TEMP VIEW tv AS SELECT id FROM people WHERE <e:b>; SELECT id FROM tv ORDER BY ALL", ()),
    ("CREATE VIEW (schema, expression)", "CREATE OR REPLACE VIEW ws.tv AS SELECT <e:t> AS v FROM people; SELECT v FROM ws.tv ORDER BY ALL", ()),
    ("CREATE VIEW (schema, table)", "CREATE OR REPLACE VIEW ws.tv AS SELECT count(*) AS n FROM <t>; SELECT n FROM ws.tv", ()),
    ("CREATE TEMP VIEW with a cast", "CREATE OR REPLACE TEMP VIEW tv AS SELECT CAST(id AS <y>) AS v FROM people; SELECT v FROM tv ORDER BY ALL", ()),
]

# DESCRIBE / SHOW take only a table name or a query
META = [
    ("DESCRIBE table", "DESCRIBE <t>", ()),
    ("DESCRIBE query", "DESCRIBE SELECT <e:t> AS v FROM people", ()),
    ("DESCRIBE query (table)", "DESCRIBE SELECT * FROM <t>", ()),
    ("SHOW table", "SHOW <t>", ()),
    ("SHOW TABLES", "SHOW TABLES", ()),
]

# a probe inside an explicit transaction: BEGIN, the probe, COMMIT (or ROLLBACK after a failure)
TRANSACTION = [
    ("SELECT WHERE", "SELECT id FROM people WHERE <e:b> ORDER BY id", ()),
    ("SELECT FROM", "SELECT count(*) FROM <t>", ()),
    ("UPDATE SET", "UPDATE people SET name = <e:t>", (W, T)),
    ("INSERT VALUES", "INSERT INTO people (id, tenant, name) VALUES (7, 'acme', <s:t>)", (W,)),
    ("CREATE TEMP TABLE AS SELECT", "CREATE OR REPLACE TEMP TABLE tt AS SELECT count(*) AS n FROM <t>", ()),
]

# the same statements as one batch: BEGIN; <probe>; COMMIT
BATCH = [
    ("BEGIN; UPDATE SET; COMMIT", "BEGIN; UPDATE people SET name = <e:t>; COMMIT", (W, T)),
    ("BEGIN; DELETE USING; ROLLBACK", "BEGIN; DELETE FROM people USING <t> u WHERE people.id = 4; ROLLBACK", (W,)),
    ("BEGIN; SELECT; COMMIT", "BEGIN; SELECT count(*) FROM <t>; COMMIT", ()),
]

# EXPLAIN [ANALYZE] of each statement kind: these templates of the kinds above
EXPLAINED = {
    "SELECT": ["WHERE", "FROM table", "select list", "LATERAL subquery (expression)", "scalar subquery (table)",
               "CTE body (table)", "window PARTITION BY", "cast target type (CAST)", "lambda body", "* EXCLUDE"],
    "INSERT": ["VALUES row", "SELECT FROM", "RETURNING", "ON CONFLICT DO UPDATE SET"],
    "UPDATE": ["SET", "FROM (table)", "WHERE", "RETURNING"],
    "DELETE": ["WHERE", "USING (table)", "RETURNING"],
    "MERGE": ["USING (table)", "ON", "WHEN MATCHED THEN UPDATE SET value", "WHEN NOT MATCHED BY SOURCE AND … THEN DELETE"],
}

SLICED_UPSERT = "acl: INSERT … ON CONFLICT DO UPDATE and INSERT OR REPLACE are not supported on a sliced target"
MUST_LIST = "acl: an INSERT into c.{} must list its columns (the target has a row or column policy)"
PARSE = "acl: could not parse the statement"
POSITIONAL = "acl: a positional reference (#n) over c.people is not permitted (it is column-restricted)"
STAR = "acl: *, COLUMNS(…) and whole-row references over c.people are not permitted"
MERGE_ON = "acl: a subquery in MERGE … ON is not supported on c.people (it has a row policy)"
MERGE_BY_SOURCE = ("acl: a subquery in a WHEN clause of a MERGE with WHEN NOT MATCHED BY SOURCE is not supported on c.people"
                   " (it has a row policy)")
# Forms a rule (or our parser) refuses whatever stands in the hole: every probe there expects this
# refusal. (kind, position) -> (message, which probes: None for all, else a predicate on the SQL)
REFUSED_FORMS = {
    ("INSERT", "ON CONFLICT DO UPDATE SET"): (SLICED_UPSERT, None),
    ("INSERT", "ON CONFLICT DO UPDATE SET ... WHERE"): (SLICED_UPSERT, None),
    ("INSERT", "ON CONFLICT DO UPDATE SET (excluded)"): (SLICED_UPSERT, None),
    ("INSERT", "INSERT OR REPLACE"): (SLICED_UPSERT, None),
    ("INSERT", "DEFAULT VALUES"): (MUST_LIST.format("feed"), None),
    ("INSERT", "DEFAULT VALUES RETURNING"): (MUST_LIST.format("feed"), None),
    ("INSERT", "BY NAME"): (MUST_LIST.format("people"), None),
    ("INSERT", "BY NAME (table)"): (MUST_LIST.format("people"), None),
    ("MERGE", "ON (subquery)"): (MERGE_ON, None),
    ("MERGE", "ON"): (MERGE_ON, lambda sql: "(SELECT" in sql),
    # over a column-restricted target a position counts the physical columns, a pattern matches them
    ("INSERT", "RETURNING positional"): (POSITIONAL, None),
    ("UPDATE", "SET positional"): (POSITIONAL, None),
    ("UPDATE", "WHERE positional"): (POSITIONAL, None),
    ("DELETE", "WHERE positional"): (POSITIONAL, None),
    ("MERGE", "WHEN MATCHED THEN UPDATE SET positional"): (POSITIONAL, None),
    ("UPDATE", "SET star pattern"): (STAR, None),
    ("DELETE", "WHERE star pattern"): (STAR, None),
}
for _position, _sql, _flags in MERGE:
    if "BY SOURCE" in _sql:
        REFUSED_FORMS[("MERGE", _position)] = (MERGE_BY_SOURCE, lambda sql: "(SELECT" in sql)
