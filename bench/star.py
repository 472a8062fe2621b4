"""Case (h), issue 14: an analytic workload on a star schema, as a principal vs over hand-written views.

The data lives in an in-memory `phys` database: a fact table (`fact_sales`, `rows` rows) and four
dimensions, generated with range() and hash(). The virtual catalog `star` shows them under the
names `sales`, `customers`, `products`, `stores` and `dates`; `sales` and `customers` are sliced by
the principal's `tenant` claim and `customers.email` is masked. The same names in the connection's
default database (`memory.main`) are hand-written views with the same slice predicate (the claim's
value written as a constant) and the same mask expression, so one query text runs both ways: with
the `ACL ROLE "tenant_a"` prefix the extension rewrites it, without it DuckDB inlines the views.

`test/python/test_plan_shapes.py` imports `setup_star` and `QUERIES` from here: the plans it
compares are those of these queries.
"""
import math
import statistics
import time

import plans

TENANT = "acme"  # the principal's claim; one tenant in four
ROLE = "tenant_a"
EMAIL_MASK = "left(email, 2) || '***'"


def setup_star(con, rows, explain=False):
    """The physical star schema, its virtual catalog and role, and the hand-written views, in the
    connection's database (the extension loaded). `explain`: the role also holds `explain`."""
    con.execute("ATTACH ':memory:' AS phys")
    customers = max(1_000, rows // 20)
    products = 2_000
    con.execute(
        "CREATE TABLE phys.main.dim_date AS SELECT range::INTEGER AS date_key, "
        "(DATE '2023-01-01' + range::INTEGER) AS day, year(DATE '2023-01-01' + range::INTEGER) AS year, "
        "month(DATE '2023-01-01' + range::INTEGER) AS month, quarter(DATE '2023-01-01' + range::INTEGER) AS quarter, "
        "dayofweek(DATE '2023-01-01' + range::INTEGER) AS dow FROM range(1096)")
    con.execute(
        "CREATE TABLE phys.main.dim_store AS SELECT range::INTEGER AS store_key, 'city' || (range % 40) AS city, "
        "['north', 'south', 'east', 'west'][1 + range % 4] AS region FROM range(200)")
    con.execute(
        f"CREATE TABLE phys.main.dim_product AS SELECT range::INTEGER AS product_key, 'product ' || range AS name, "
        f"'cat' || (hash(range) % 20) AS category, 'brand' || (hash(range + 7) % 60) AS brand, "
        f"(1 + hash(range + 13) % 500)::DECIMAL(10, 2) AS price FROM range({products})")
    con.execute(
        f"CREATE TABLE phys.main.dim_customer AS SELECT range::INTEGER AS customer_key, 'customer ' || range AS name, "
        f"'user' || range || '@example.com' AS email, ['consumer', 'corporate', 'small business'][1 + (hash(range) % 3)::INTEGER] "
        f"AS segment, ['DE', 'FR', 'US', 'JP', 'BR', 'IN', 'GB', 'ES'][1 + (hash(range + 1) % 8)::INTEGER] AS country, "
        f"['acme', 'globex', 'initech', 'umbrella'][1 + range % 4] AS tenant FROM range({customers})")
    # a sale's tenant is its customer's (customer_key % 4), as in a real multi-tenant fact table
    con.execute(
        f"CREATE TABLE phys.main.fact_sales AS SELECT range AS sale_id, (hash(range) % 1096)::INTEGER AS date_key, "
        f"(hash(range + 1) % {products})::INTEGER AS product_key, c::INTEGER AS customer_key, "
        f"(hash(range + 3) % 200)::INTEGER AS store_key, ['acme', 'globex', 'initech', 'umbrella'][1 + c % 4] AS tenant, "
        f"(1 + hash(range + 4) % 10)::INTEGER AS quantity, ((hash(range + 5) % 100000) / 100)::DECIMAL(12, 2) AS amount, "
        f"((hash(range + 6) % 30) / 100)::DECIMAL(4, 2) AS discount "
        f"FROM (SELECT range, (hash(range + 2) % {customers})::INTEGER AS c FROM range({rows}))")
    caps = "select, explain" if explain else "select"
    con.execute(
        "ACL ADMIN CREATE VIRTUAL CATALOG star; "
        "CREATE VIRTUAL TABLE star.sales AS phys.main.fact_sales "
        "COLUMNS (sale_id, date_key, product_key, customer_key, store_key, quantity, amount, discount) "
        "RLS (tenant = acl_claim('tenant')); "
        "CREATE VIRTUAL TABLE star.customers AS phys.main.dim_customer "
        f"COLUMNS (customer_key, name, email = {EMAIL_MASK}, segment, country) RLS (tenant = acl_claim('tenant')); "
        "CREATE VIRTUAL TABLE star.products AS phys.main.dim_product; "
        "CREATE VIRTUAL TABLE star.stores AS phys.main.dim_store; "
        "CREATE VIRTUAL TABLE star.dates AS phys.main.dim_date; "
        f"CREATE ROLE {ROLE} CLAIMS (tenant = '{TENANT}'); GRANT CATALOG star TO ROLE {ROLE} WITH ({caps}) MAIN")
    # the hand-written equivalents: what a careful engineer would write for this tenant
    con.execute(
        "CREATE VIEW sales AS SELECT sale_id, date_key, product_key, customer_key, store_key, quantity, amount, "
        f"discount FROM phys.main.fact_sales WHERE tenant = '{TENANT}'")
    con.execute(
        f"CREATE VIEW customers AS SELECT customer_key, name, {EMAIL_MASK} AS email, segment, country "
        f"FROM phys.main.dim_customer WHERE tenant = '{TENANT}'")
    con.execute("CREATE VIEW products AS SELECT * FROM phys.main.dim_product")
    con.execute("CREATE VIEW stores AS SELECT * FROM phys.main.dim_store")
    con.execute("CREATE VIEW dates AS SELECT * FROM phys.main.dim_date")


# (name, query): joins, grouped aggregates, selective filters, top-N; every ORDER BY ... LIMIT has
# a total order, so the two sides' answers can be compared row for row.
QUERIES = [
    ("q01 revenue by year",
     "SELECT d.year, sum(s.amount) AS revenue, count(*) AS n FROM sales s JOIN dates d ON s.date_key = d.date_key "
     "GROUP BY d.year"),
    ("q02 top 10 products, 2025 Q1",
     "SELECT p.name, sum(s.amount * s.quantity) AS revenue FROM sales s JOIN dates d ON s.date_key = d.date_key "
     "JOIN products p ON s.product_key = p.product_key WHERE d.year = 2025 AND d.quarter = 1 "
     "GROUP BY p.name ORDER BY revenue DESC, p.name LIMIT 10"),
    ("q03 revenue by segment and country",
     "SELECT c.segment, c.country, sum(s.amount) AS revenue, avg(s.quantity) AS q FROM sales s "
     "JOIN customers c ON s.customer_key = c.customer_key GROUP BY c.segment, c.country"),
    ("q04 distinct masked emails per segment",
     "SELECT c.segment, count(DISTINCT c.email) AS emails FROM sales s "
     "JOIN customers c ON s.customer_key = c.customer_key WHERE s.amount > 900 GROUP BY c.segment"),
    ("q05 one customer's purchases",
     "SELECT s.sale_id, s.amount, d.day FROM sales s JOIN dates d ON s.date_key = d.date_key "
     "WHERE s.customer_key = 1236 ORDER BY s.sale_id"),
    ("q06 top 5 stores by quantity, one category",
     "SELECT st.city, st.region, sum(s.quantity) AS units FROM sales s JOIN products p ON s.product_key = p.product_key "
     "JOIN stores st ON s.store_key = st.store_key WHERE p.category = 'cat3' "
     "GROUP BY st.city, st.region ORDER BY units DESC, st.city, st.region LIMIT 5"),
    ("q07 monthly revenue, one region, 2024",
     "SELECT d.month, sum(s.amount) AS revenue FROM sales s JOIN stores st ON s.store_key = st.store_key "
     "JOIN dates d ON s.date_key = d.date_key WHERE st.region = 'north' AND d.year = 2024 GROUP BY d.month"),
    ("q08 average discount by brand, HAVING",
     "SELECT p.brand, avg(s.discount) AS avg_discount, count(*) AS n FROM sales s "
     "JOIN products p ON s.product_key = p.product_key GROUP BY p.brand HAVING count(*) > 100"),
    ("q09 top 20 customers by spend (masked email)",
     "SELECT c.customer_key, c.email, sum(s.amount) AS spend FROM sales s "
     "JOIN customers c ON s.customer_key = c.customer_key GROUP BY c.customer_key, c.email "
     "ORDER BY spend DESC, c.customer_key LIMIT 20"),
    ("q10 narrow amount range by category",
     "SELECT p.category, count(*) AS n, sum(s.quantity) AS units FROM sales s "
     "JOIN products p ON s.product_key = p.product_key WHERE s.amount BETWEEN 990 AND 995 GROUP BY p.category"),
    ("q11 weekday pattern",
     "SELECT d.dow, sum(s.amount) AS revenue, count(*) AS n FROM sales s JOIN dates d ON s.date_key = d.date_key "
     "GROUP BY d.dow"),
    ("q12 customers without a 2025 purchase",
     "SELECT c.country, count(*) AS n FROM customers c WHERE NOT EXISTS (SELECT 1 FROM sales s "
     "JOIN dates d ON s.date_key = d.date_key WHERE s.customer_key = c.customer_key AND d.year = 2025) "
     "GROUP BY c.country"),
    ("q13 sales of expensive products (IN subquery)",
     "SELECT count(*) AS n, sum(s.amount) AS revenue FROM sales s "
     "WHERE s.product_key IN (SELECT product_key FROM products WHERE price > 480)"),
    ("q14 one country's customers, big tickets",
     "SELECT c.segment, count(*) AS n, max(s.amount) AS top FROM sales s "
     "JOIN customers c ON s.customer_key = c.customer_key WHERE c.country = 'JP' AND s.quantity >= 9 "
     "GROUP BY c.segment"),
    ("q15 fact only: quantity histogram",
     "SELECT s.quantity, count(*) AS n, sum(s.amount) AS revenue FROM sales s WHERE s.discount < 0.05 "
     "GROUP BY s.quantity"),
    ("q16 top 10 days by revenue, one segment",
     "SELECT d.day, sum(s.amount) AS revenue FROM sales s JOIN customers c ON s.customer_key = c.customer_key "
     "JOIN dates d ON s.date_key = d.date_key WHERE c.segment = 'corporate' "
     "GROUP BY d.day ORDER BY revenue DESC, d.day LIMIT 10"),
]


def same_rows(got, want):
    """Sorted rows equal, floats to 1e-9 relative (a parallel avg() sums in any order)."""
    if len(got) != len(want):
        return False
    for g, w in zip(sorted(got), sorted(want)):
        if len(g) != len(w):
            return False
        for x, y in zip(g, w):
            if x != y and not (isinstance(x, float) and isinstance(y, float) and math.isclose(x, y, rel_tol=1e-9)):
                return False
    return True


def principal(sql):
    return f'ACL ROLE "{ROLE}" {sql}'


def star_case(connect, ext, rows=2_000_000, seconds=6.0, rounds=None, only=None, show_plans=False):
    """Each query as the principal and over the views, interleaved (which side goes first
    alternates), `seconds` of each pair (at least 5 rounds) unless `rounds` is given; prints each
    ratio of medians, whether the two plans have the same shape (bench/plans.py; `show_plans`:
    how they differ), the geometric mean and the worst against issue 14's goals."""
    con = connect(ext)
    t0 = time.perf_counter()
    setup_star(con, rows)
    print(f"(h) star schema: {rows:,} fact rows, 4 dimensions, 2 sliced tables + 1 mask "
          f"(set up in {time.perf_counter() - t0:.1f} s); medians of interleaved runs")
    ratios, same_shapes = [], 0
    for name, sql in QUERIES:
        if only and not any(name.startswith(o) for o in only):
            continue
        acl = principal(sql)
        got, want = con.execute(acl).fetchall(), con.execute(sql).fetchall()
        assert same_rows(got, want), f"{name}: the principal's answer differs from the views' ({len(got)} vs {len(want)} rows)"
        assert want, f"{name}: an empty answer measures nothing"
        a, n = [], []
        t_end = time.perf_counter() + seconds
        i = 0
        while (i < rounds) if rounds else (i < 5 or time.perf_counter() < t_end):
            for text, out in ((acl, a), (sql, n)) if i % 2 else ((sql, n), (acl, a)):
                t = time.perf_counter_ns()
                con.execute(text).fetchall()
                out.append(time.perf_counter_ns() - t)
            i += 1
        ma, mn = statistics.median(a) / 1e6, statistics.median(n) / 1e6
        ratios.append((ma / mn, name))
        diffs = plans.differences(plans.plan_of(con, acl), plans.plan_of(con, sql))
        same_shapes += not diffs
        print(f"(h) {name:<48} acl {ma:8.2f} ms   views {mn:8.2f} ms   ratio {ma / mn:5.2f}x   "
              f"plan {'differs' if diffs else 'same shape'}   ({i} rounds)")
        for line in diffs if show_plans else ():
            print("      " + line.replace("\n", "\n      "))
    if not ratios:
        return
    geo = statistics.geometric_mean([r for r, _ in ratios])
    worst, wname = max(ratios)
    met = geo <= 1.05 and worst <= 1.2
    print(f"(h) {len(ratios)} queries: geometric mean {geo:.3f}x, worst {worst:.2f}x ({wname}), "
          f"{sum(r > 1.2 for r, _ in ratios)} above 1.2x, {same_shapes} with the views' plan shape   goal: geomean <= 1.05x and none > 1.2x: "
          f"{'met' if met else 'not met'}")
    con.close()
