"""Writes TPC-H or TPC-DS data as parquet, and the benchmark's queries as JSON, with DuckDB's own
`tpch`/`tpcds` extensions. DuckDB 2.0.0 cannot install them offline, so `make bench` runs this
with a private venv holding an older DuckDB and the PyPI packages of the extensions
(`duckdb==1.5.5 duckdb-extension-tpch==1.5.5 duckdb-extension-tpcds==1.5.5`, under build/tpcvenv).

Usage: python bench/tpc_gen.py tpch|tpcds SCALE OUT_DIR
"""
import json
import os
import sys

import duckdb

kind, scale, out = sys.argv[1], float(sys.argv[2]), sys.argv[3]
os.makedirs(out, exist_ok=True)
import importlib

# the package ships the extension file; LOAD it by path (no download)
pkg = importlib.import_module(f"duckdb_extension_{kind}")
ext_dir = os.path.join(os.path.dirname(pkg.__file__), "extensions", f"v{duckdb.__version__}")
con = duckdb.connect()
con.execute(f"LOAD '{ext_dir}/{kind}.duckdb_extension'")
con.execute(f"CALL {'dbgen' if kind == 'tpch' else 'dsdgen'}(sf={scale})")
for (t,) in con.execute("SELECT table_name FROM duckdb_tables() WHERE database_name = current_database()").fetchall():
    con.execute(f"COPY {t} TO '{out}/{t}.parquet' (FORMAT parquet)")
qs = con.execute(f"SELECT query_nr, query FROM {kind}_queries() ORDER BY query_nr").fetchall()
with open(f"{out}/queries.json", "w") as f:
    json.dump([[n, q] for n, q in qs], f)
print(f"wrote {out}: {len(qs)} queries")
