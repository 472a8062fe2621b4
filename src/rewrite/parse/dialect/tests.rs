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

/// (what ends an operand, what follows it): every token `ends_operand` accepts.
const ENDS: &[(&str, &str)] = &[
    (",", "b"), (")", ""), ("", ""), (";", ""), ("=", "1"), ("==", "1"), ("<>", "1"), ("!=", "1"),
    ("<", "1"), (">", "1"), ("<=", "1"), (">=", "1"), ("+", "1"), ("-", "1"), ("*", "2"), ("/", "2"),
    ("||", "'a'"), ("::", "INTEGER"), ("AS", "x"), ("FROM", "t"), ("WHERE", "b"), ("AND", "b"),
    ("OR", "b"), ("IS", "NULL"), ("IS", "NOT NULL"), ("IN", "(1)"), ("NOT", "IN (1)"), ("NOT", "LIKE 'a'"),
    ("NOT", "BETWEEN 1 AND 2"), ("BETWEEN", "1 AND 2"), ("LIKE", "'a'"), ("ILIKE", "'a'"), ("GROUP", "BY b"),
    ("ORDER", "BY b"), ("LIMIT", "1"), ("HAVING", "b"), ("THEN", "1"), ("ELSE", "1"), ("END", ""),
    ("WHEN", "1"), ("ASC", ""), ("DESC", ""),
];

/// Each place with `KW` replaced by each of sqlparser's keywords, read by our dialect in both
/// readings and by DuckDB's (which has no fast way), gives the same tree (spans included) or an
/// error in both; fails listing the texts that do not.
#[track_caller]
fn reads_as_sqlparser(places: &[String]) {
    use sqlparser::dialect::DuckDbDialect;
    use sqlparser::keywords::ALL_KEYWORDS;
    use sqlparser::parser::Parser;
    let differ = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for half in ALL_KEYWORDS.chunks(ALL_KEYWORDS.len() / 2 + 1) {
            let differ = &differ;
            scope.spawn(move || {
                for keyword in half {
                    for place in places {
                        let sql = place.replace("KW", keyword);
                        let theirs = Parser::parse_sql(&DuckDbDialect {}, &sql).map(|mut s| s.remove(0));
                        for reading in [Reading::Original, Reading::Printed] {
                            let ours = parse(&sql, reading);
                            let same = match (&ours, &theirs) {
                                (Ok(a), Ok(b)) => format!("{a:?}") == format!("{b:?}"),
                                (Err(_), Err(_)) => true,
                                _ => false,
                            };
                            if !same {
                                let line = format!("{keyword}: {sql} ({reading:?}): ours {}, sqlparser's {}", ours.is_ok(), theirs.is_ok());
                                differ.lock().unwrap().push(line);
                            }
                        }
                    }
                }
            });
        }
    });
    let differ = differ.into_inner().unwrap();
    assert!(differ.is_empty(), "{} differ:\n{}", differ.len(), differ.join("\n"));
}

/// Every keyword of sqlparser, before every token `ends_operand` accepts, in the places an
/// operand stands (a select item, a condition, a call's argument, a CASE, a lambda's parameters),
/// reads as with DuckDB's dialect: a keyword sqlparser gives a meaning there (`NULL`,
/// `CURRENT_DATE`, `NOT`, `CASE`…) must be one the fast way leaves to sqlparser.
#[test]
fn every_keyword_reads_as_sqlparser_reads_it() {
    let mut places: Vec<String> = Vec::new();
    for (end, rest) in ENDS {
        let operand = format!("KW {end} {rest}");
        places.push(format!("SELECT {operand}"));
        places.push(format!("SELECT a FROM t WHERE {operand}"));
        places.push(format!("SELECT f({operand})"));
        places.push(format!("SELECT a FROM t ORDER BY {operand}"));
    }
    places.extend([
        "SELECT CASE WHEN KW THEN KW ELSE KW END",
        "SELECT CASE KW WHEN KW THEN 2 END",
        "SELECT list_transform(l, KW -> KW + 1) FROM t",
        "SELECT list_filter(l, (KW, i) -> KW > i) FROM t",
        "SELECT a FROM t GROUP BY KW HAVING KW",
        "SELECT position(KW IN b), substring(KW FROM 1 FOR 2), trim(KW FROM b), trim(BOTH KW FROM b)",
        "SELECT a FROM t LIMIT KW OFFSET KW",
        // a type with angle brackets may start a typed string: never the fast way before `<`
        "SELECT KW<INTEGER> '[1]', KW < a, KW <= a",
    ].map(String::from));
    reads_as_sqlparser(&places);
}

/// Every keyword of sqlparser as a call's name (`KW(a)`), with plain arguments, before every
/// token `ends_operand` accepts, and with what makes a call more than plain (a window, a filter,
/// a field, a subscript, `DISTINCT`, a typed string after it), reads as with DuckDB's dialect: a
/// keyword whose call is a form of its own (`CAST(…)`, `EXTRACT(…)`) must be one the fast way
/// leaves to sqlparser.
#[test]
fn every_call_reads_as_sqlparser_reads_it() {
    let mut places: Vec<String> = Vec::new();
    for (end, rest) in ENDS {
        places.push(format!("SELECT KW(a) {end} {rest}"));
        places.push(format!("SELECT a FROM t WHERE KW(a, 1, 'x') {end} {rest}"));
    }
    places.extend([
        "SELECT KW(), KW(id, name, date), KW(NULL, TRUE), KW(1.5, 1e3, 0x1F) FROM t",
        "SELECT KW(ALL), KW(DISTINCT)",
        "SELECT KW(DISTINCT a), KW(a ORDER BY b), KW(a := 1), KW(a => 1), KW(*), KW(t.a), KW(-1)",
        "SELECT KW(a) OVER (), KW(a) FILTER (WHERE a), KW(a) WITHIN GROUP (ORDER BY a), KW(a) IGNORE NULLS",
        "SELECT KW(a).b, KW(a)[1], KW(a)::INTEGER, KW(a) -> 1",
        "SELECT KW(1) '2', KW(10, 2) '1.5', KW(a) AS KW",
        "SELECT f(KW(1), KW('a')), KW(KW(a))",
        "SELECT KW(a, b, c, d, e, f, g, h), KW(a, b, c, d, e, f, g, h, i)",
        "SELECT KW(a,)",
    ].map(String::from));
    reads_as_sqlparser(&places);
}
