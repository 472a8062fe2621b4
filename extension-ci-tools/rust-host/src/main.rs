//! `acl-rust-host <path/to/acl.duckdb_extension>`: opens an in-memory DuckDB (statically linked
//! through the `duckdb` crate) with unsigned extensions allowed, LOADs the extension, and runs a
//! small ACL ADMIN + ACL ROLE scenario. Exit 0 when every step behaved as expected, 2 when the
//! LOAD itself failed (the error is printed), 1 when a step misbehaved.
use duckdb::{Config, Connection};

#[cfg(not(feature = "bundled"))]
extern "C" {
    // The generated static-extension loader (core_functions, json, parquet). The `bundled` build
    // links a constructor that calls it before `main`; in linked mode the program calls it.
    fn duckdb_register_static_extensions() -> i32;
}

fn show(v: duckdb::types::Value) -> String {
    use duckdb::types::Value as V;
    match v {
        V::Null => "NULL".into(),
        V::Boolean(b) => b.to_string(),
        V::TinyInt(i) => i.to_string(),
        V::SmallInt(i) => i.to_string(),
        V::Int(i) => i.to_string(),
        V::BigInt(i) => i.to_string(),
        V::HugeInt(i) => i.to_string(),
        V::UBigInt(i) => i.to_string(),
        V::Double(f) => f.to_string(),
        V::Text(s) => s,
        other => format!("{other:?}"),
    }
}

fn rows(con: &Connection, sql: &str) -> duckdb::Result<Vec<Vec<String>>> {
    let mut stmt = con.prepare(sql)?;
    let mut out = Vec::new();
    let mut rs = stmt.query([])?;
    while let Some(row) = rs.next()? {
        let n = row.as_ref().column_count();
        let mut cells = Vec::with_capacity(n);
        for i in 0..n {
            let v: duckdb::types::Value = row.get(i)?;
            cells.push(show(v));
        }
        out.push(cells);
    }
    Ok(out)
}

fn main() {
    let path = std::env::args().nth(1).expect("usage: acl-rust-host <acl.duckdb_extension>");
    #[cfg(not(feature = "bundled"))]
    unsafe {
        duckdb_register_static_extensions();
    }
    let config = Config::default().allow_unsigned_extensions().expect("config");
    let con = Connection::open_in_memory_with_flags(config).expect("open");
    let version = rows(&con, "SELECT version(), source_id FROM pragma_version()").expect("version");
    println!("host: duckdb crate {} (DuckDB {} {})", env!("DUCKDB_CRATE"), version[0][0], version[0][1]);

    if let Err(e) = con.execute_batch(&format!("LOAD '{}'", path.replace('\'', "''"))) {
        println!("LOAD failed: {e}");
        // A clean failure leaves the database usable.
        let after = rows(&con, "SELECT 42").map(|r| r[0][0].clone());
        println!("after the failed LOAD: SELECT 42 -> {after:?}");
        std::process::exit(2);
    }
    println!("LOAD ok: {path}");

    let mut ok = true;
    let mut step = |sql: &str, expect_ok: bool| {
        println!(">>> {sql}");
        match rows(&con, sql) {
            Ok(r) => {
                for row in r {
                    println!("    {}", row.join(" | "));
                }
                if !expect_ok {
                    println!("    !! expected a refusal");
                    ok = false;
                }
            }
            Err(e) => {
                println!("    refused: {e}");
                if expect_ok {
                    ok = false;
                }
            }
        }
    };
    step("ATTACH ':memory:' AS phys", true);
    step("CREATE TABLE phys.main.orders (id INTEGER, customer VARCHAR, amount INTEGER)", true);
    step("INSERT INTO phys.main.orders VALUES (1, 'acme', 10), (2, 'globex', 99)", true);
    step("ACL ADMIN CREATE VIRTUAL CATALOG sales", true);
    step("ACL ADMIN CREATE VIRTUAL TABLE sales.orders AS phys.main.orders", true);
    step("ACL ADMIN CREATE ROLE analyst", true);
    step("ACL ADMIN GRANT CATALOG sales TO ROLE analyst WITH (select) MAIN", true);
    step(r#"ACL ROLE "analyst" SELECT id, customer, amount FROM orders ORDER BY id"#, true);
    step(r#"ACL ROLE "analyst" SELECT customer, sum(amount) FROM sales.orders GROUP BY ALL ORDER BY 1"#, true);
    step(r#"ACL ROLE "analyst" DELETE FROM orders"#, false);
    step(r#"ACL ROLE "analyst" SELECT * FROM phys.main.orders"#, false);
    step("SELECT count(*) FROM phys.main.orders", true);
    if !ok {
        println!("FAILED: a step did not behave as expected");
        std::process::exit(1);
    }
    println!("all steps behaved as expected");
}
