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

/// The dialect's fast way for a plain column name, a number and a string gives the tree
/// sqlparser's own prefix parse gives (DuckDB's dialect, which has no such way), in both
/// readings, for every token that ends the name there, and leaves to sqlparser the forms a name
/// starts (calls, compound names, typed strings, lambdas, a name followed by a type and `->`).
#[test]
fn a_plain_column_name_reads_as_sqlparser_reads_it() {
    use sqlparser::dialect::DuckDbDialect;
    use sqlparser::parser::Parser;
    for sql in [
        "SELECT a, b AS c, \"Quoted\" AS d FROM t WHERE a = 1 AND b <> 2 OR c IS NULL",
        "SELECT a + b - c * d / e || f, a::INTEGER, a == b, a < b, a > b, a <= b, a >= b FROM t",
        "SELECT a FROM t WHERE a IN (1, 2) AND b NOT IN (3) AND c BETWEEN 1 AND 2 AND d LIKE 'x' AND e ILIKE 'y'",
        "SELECT CASE WHEN a THEN b ELSE c END FROM t GROUP BY a HAVING b ORDER BY c ASC, d DESC LIMIT 3",
        "SELECT upper(a), t.a, a.b.c, DATE '2020-01-01', x -> x + 1, a, lower(b) FROM t",
        "SELECT list_transform(l, x -> x + 1), list_filter(l, (x, i) -> x > i) FROM t",
        "SELECT a FROM t;",
        "SELECT 1, 2.5, 1e3, 0x1F, 1_000, 'x', 'it''s', -1, 1 + 'a' FROM t WHERE a = 'b' AND b IN (1, 'c') LIMIT 10",
        "SELECT 'a'::VARCHAR, 1::INTEGER, CASE WHEN 1 = 1 THEN 'y' END FROM t",
    ] {
        let theirs = Parser::parse_sql(&DuckDbDialect {}, sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
        for reading in [Reading::Original, Reading::Printed] {
            let ours = parse(sql, reading).unwrap_or_else(|e| panic!("{sql}: {e}"));
            assert_eq!(ours, theirs[0], "{sql}");
            assert_eq!(format!("{ours:?}"), format!("{:?}", theirs[0]), "{sql}: spans");
        }
    }
}
