CREATE TABLE orders (id INTEGER, customer_id INTEGER, amount DECIMAL(10,2), qty INTEGER, placed DATE, ts TIMESTAMP, status VARCHAR, note VARCHAR);
INSERT INTO orders VALUES
 (1, 1, 120.50, 3, DATE '2024-01-05', TIMESTAMP '2024-01-05 10:15:00', 'shipped', 'fragile'),
 (2, 2, 80.00, 1, DATE '2024-01-20', TIMESTAMP '2024-01-20 08:00:00', 'pending', NULL),
 (3, 1, 45.25, 2, DATE '2024-02-11', TIMESTAMP '2024-02-11 17:45:30', 'shipped', 'gift wrap'),
 (4, 3, 300.00, 10, DATE '2024-03-01', TIMESTAMP '2024-03-01 12:00:00', 'cancelled', 'bulk'),
 (5, 2, 15.75, 1, DATE '2024-03-15', TIMESTAMP '2024-03-15 23:59:59', 'shipped', NULL),
 (6, 4, 220.00, 4, DATE '2024-04-02', TIMESTAMP '2024-04-02 06:30:00', 'pending', 'call first'),
 (7, 3, 99.99, 2, DATE '2024-04-18', TIMESTAMP '2024-04-18 14:20:00', 'shipped', 'Fragile');
CREATE TABLE customers (id INTEGER, name VARCHAR, city VARCHAR, signup DATE, email VARCHAR);
INSERT INTO customers VALUES
 (1, 'Ann', 'Amsterdam', DATE '2023-11-01', 'ann@example.com'),
 (2, 'Bob', 'Berlin', DATE '2023-12-15', 'bob@example.org'),
 (3, 'Cid', 'Amsterdam', DATE '2024-01-10', NULL),
 (4, 'Dee', 'Copenhagen', DATE '2024-02-28', 'dee@example.com'),
 (5, 'Eve', NULL, DATE '2024-03-03', 'eve@example.net');
CREATE TABLE nested (id INTEGER, tags VARCHAR[], nums INTEGER[], pt STRUCT(x INTEGER, y INTEGER), attrs MAP(VARCHAR, INTEGER), u UNION(i INTEGER, s VARCHAR), arr INTEGER[3]);
INSERT INTO nested VALUES
 (1, ['red', 'blue'], [1, 2, 3], {'x': 1, 'y': 2}, MAP {'a': 1, 'b': 2}, 1::UNION(i INTEGER, s VARCHAR), [1, 2, 3]),
 (2, ['green'], [4, 5], {'x': 3, 'y': 4}, MAP {'c': 3}, 'two'::UNION(i INTEGER, s VARCHAR), [4, 5, 6]),
 (3, [], [], {'x': 5, 'y': NULL}, MAP {}, NULL, [7, 8, 9]),
 (4, NULL, [6, NULL, 7], NULL, NULL, 4::UNION(i INTEGER, s VARCHAR), NULL);
CREATE TABLE docs (id INTEGER, j JSON, s VARCHAR);
INSERT INTO docs VALUES
 (1, '{"name": "ann", "age": 31, "tags": ["a", "b"], "addr": {"city": "Amsterdam"}}', 'hello world'),
 (2, '{"name": "bob", "age": 27, "tags": [], "addr": {"city": "Berlin"}}', 'Hello DuckDB'),
 (3, '{"name": "cid", "tags": ["c"]}', 'foo_bar baz'),
 (4, '[1, 2, 3]', 'x%y');
CREATE TABLE prices (ticker VARCHAR, ts TIMESTAMP, price DOUBLE);
INSERT INTO prices VALUES
 ('A', TIMESTAMP '2024-01-01 09:00', 10.0), ('A', TIMESTAMP '2024-01-01 10:00', 11.0),
 ('A', TIMESTAMP '2024-01-01 11:00', 12.5), ('B', TIMESTAMP '2024-01-01 09:30', 50.0),
 ('B', TIMESTAMP '2024-01-01 10:30', 49.0);
CREATE TABLE trades (ticker VARCHAR, ts TIMESTAMP, qty INTEGER);
INSERT INTO trades VALUES
 ('A', TIMESTAMP '2024-01-01 09:15', 5), ('A', TIMESTAMP '2024-01-01 10:59', 7),
 ('B', TIMESTAMP '2024-01-01 09:00', 3), ('B', TIMESTAMP '2024-01-01 11:00', 4);
CREATE TABLE sales (year INTEGER, quarter VARCHAR, region VARCHAR, amount INTEGER);
INSERT INTO sales VALUES
 (2023, 'Q1', 'north', 10), (2023, 'Q2', 'north', 20), (2023, 'Q1', 'south', 5),
 (2024, 'Q1', 'north', 15), (2024, 'Q2', 'south', 25), (2024, 'Q3', 'south', 30);
CREATE TABLE wide (id INTEGER, q1 INTEGER, q2 INTEGER, q3 INTEGER, label VARCHAR);
INSERT INTO wide VALUES (1, 10, 20, 30, 'a'), (2, 5, NULL, 15, 'b');
CREATE TABLE tree (id INTEGER, parent INTEGER, name VARCHAR);
INSERT INTO tree VALUES (1, NULL, 'root'), (2, 1, 'child a'), (3, 1, 'child b'), (4, 2, 'grandchild'), (5, 4, 'leaf');
CREATE TABLE readings (sensor VARCHAR, t INTEGER, v DOUBLE);
INSERT INTO readings VALUES
 ('s1', 1, 1.5), ('s1', 2, NULL), ('s1', 3, 2.5), ('s1', 4, 4.0), ('s1', 5, NULL),
 ('s2', 1, 10.0), ('s2', 2, 12.0), ('s2', 3, NULL), ('s2', 4, 9.0);
