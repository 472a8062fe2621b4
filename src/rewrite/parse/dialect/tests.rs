use super::super::parse;
use super::Reading;

fn round_trip(sql: &str) -> String {
    parse(sql, Reading::Printed).unwrap_or_else(|e| panic!("{sql}: {e}")).to_string()
}

#[test]
fn duckdb_operators_are_read_from_its_print_and_printed_back() {
    for sql in [
        "SELECT (2 ** 10)",
        "SELECT ('hello' ^@ 'he')",
        "SELECT (list_value(1, 2) && list_value(2, 3))",
        "SELECT (status ~~~ 'sh*')",
        "SELECT (status !~~~ 'sh*')",
        "SELECT #1, #2 FROM t",
        "SELECT (* ~~ 'a%') FROM t",
        "SELECT (* ~~~ 'a*') FROM t",
    ] {
        assert_eq!(round_trip(sql), sql);
    }
    assert_eq!(round_trip("SELECT (@(-5))"), "SELECT (@ (-5))");
    assert_eq!(round_trip("SELECT * FROM t LIMIT (50) %"), "SELECT * FROM t LIMIT (50) % ");
}

#[test]
fn the_original_reading_leaves_duckdb_operators_to_duckdb() {
    // E'…' is tokenized as DuckDB does, so that it is not read as a typed literal `E '…'`, but
    // read from DuckDB's print (a plain string)
    for sql in ["SELECT E'a\\tb'", "SELECT 2 ** 10", "SELECT a ~~~ 'x'", "SELECT a !~~~ 'x'", "SELECT #1 FROM t", "SELECT 'a' ^@ 'b'", "SELECT * FROM t LIMIT 5 %",
        // a positional join, not `t` aliased "positional" joined without a condition
        "SELECT * FROM t POSITIONAL JOIN u"] {
        assert!(parse(sql, Reading::Original).is_err(), "{sql}");
    }
    // and reads what sqlparser reads as DuckDB does
    for sql in ["SELECT * RENAME (a AS b) FROM t", "SELECT * ILIKE 'a%' FROM t", "SELECT last_value(v IGNORE NULLS) OVER (ORDER BY t) FROM r", "SELECT * FROM t AS positional", "SELECT positional.a FROM t positional"] {
        let stmt = parse(sql, Reading::Original).unwrap_or_else(|e| panic!("{sql}: {e}"));
        assert_eq!(stmt.to_string(), sql);
    }
}
