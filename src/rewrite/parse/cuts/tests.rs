use super::*;

/// A stand-in for DuckDB's tokenizer: sqlparser's tokens, with their byte offsets.
pub(crate) fn tokenize(sql: &str) -> Vec<Token> {
    use sqlparser::tokenizer::{Token as T, Tokenizer};
    let dialect = sqlparser::dialect::DuckDbDialect {};
    let toks = Tokenizer::new(&dialect, sql).tokenize_with_location().expect("tokens");
    let lines: Vec<usize> = std::iter::once(0).chain(sql.match_indices('\n').map(|(i, _)| i + 1)).collect();
    let offset = |l: &sqlparser::tokenizer::Location| {
        let line = lines[(l.line as usize).saturating_sub(1)];
        line + sql[line..].chars().take((l.column as usize).saturating_sub(1)).map(char::len_utf8).sum::<usize>()
    };
    let mut out: Vec<Token> = Vec::new();
    let mut glue = false;
    for t in toks {
        let kind = match &t.token {
            T::Whitespace(_) => continue,
            T::Word(w) if w.quote_style.is_some() => TokenKind::Identifier,
            T::Word(w) if w.keyword != sqlparser::keywords::Keyword::NoKeyword => TokenKind::Keyword,
            T::Word(_) => TokenKind::Identifier,
            T::Number(..) => TokenKind::Numeric,
            T::SingleQuotedString(_) => TokenKind::String,
            _ => TokenKind::Operator,
        };
        let start = offset(&t.span.start);
        // DuckDB reads `~~~` and `**` as one operator
        let joined = glue && matches!(t.token, T::Tilde | T::Mul) && out.last().is_some_and(|p| p.kind == TokenKind::Operator);
        glue = matches!(t.token, T::DoubleTilde | T::ExclamationMarkDoubleTilde | T::Mul);
        if !joined {
            out.push(Token { start, kind });
        }
    }
    out
}

fn round_trip(printed: &str) -> (String, String) {
    let (cut_text, cuts) = cut(printed, &tokenize(printed)).unwrap().unwrap_or_else(|| panic!("nothing cut: {printed}"));
    let stmt = super::super::parse(&cut_text, super::super::Reading::Printed).unwrap_or_else(|e| panic!("{cut_text}: {e}"));
    let out = stmt.to_string();
    let back = restore(&out, &tokenize(&out), &cuts).unwrap_or_else(|e| panic!("{out}: {e}"));
    (cut_text, back)
}

#[test]
fn clauses_that_name_nothing_are_cut_and_put_back() {
    for (printed, expect) in [
        ("SELECT count_star() FROM orders USING SAMPLE 3 (Reservoir, 42)", "SELECT count_star() FROM orders USING SAMPLE 3 (Reservoir, 42)"),
        ("SELECT id FROM orders QUALIFY (row_number() OVER () < 3) USING SAMPLE 50.0% (System)", "SELECT id FROM orders QUALIFY (row_number() OVER () < 3) USING SAMPLE 50.0% (System)"),
        ("SELECT count_star() FROM orders AS o TABLESAMPLE Reservoir(50.0 PERCENT)REPEATABLE (7)", "SELECT count_star() FROM orders AS o TABLESAMPLE Reservoir(50.0 PERCENT)REPEATABLE (7)"),
        ("SELECT sum(qty) OVER (ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW EXCLUDE CURRENT ROW) FROM orders", "SELECT sum(qty) OVER (ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW EXCLUDE CURRENT ROW) FROM orders"),
        ("SELECT sum(qty) OVER (PARTITION BY a ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING EXCLUDE TIES) FROM orders", "SELECT sum(qty) OVER (PARTITION BY a ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING EXCLUDE TIES) FROM orders"),
        ("SELECT t.ticker FROM (trades AS t ASOF LEFT JOIN prices AS p ON (((t.ticker = p.ticker) AND (t.ts >= p.ts))))", "SELECT t.ticker FROM (trades AS t ASOF LEFT JOIN prices AS p ON (((t.ticker = p.ticker) AND (t.ts >= p.ts))))"),
        ("SELECT * FROM (trades AS t ASOF INNER JOIN prices AS p USING (ticker, ts))", "SELECT * FROM (trades AS t ASOF INNER JOIN prices AS p USING(ticker, ts))"),
        ("WITH RECURSIVE r (n) USING KEY (n)  AS ((SELECT 1) UNION (SELECT (n + 1) FROM r WHERE (n < 4))) SELECT * FROM r", "WITH RECURSIVE r (n) USING KEY (n) AS ((SELECT 1) UNION (SELECT (n + 1) FROM r WHERE (n < 4))) SELECT * FROM r"),
        ("SELECT * FROM sales PIVOT (sum(amount) FOR (\"quarter\") IN ('Q1', 'Q2') GROUP BY \"year\")", "SELECT * FROM sales PIVOT(sum(amount) FOR \"quarter\" IN ('Q1', 'Q2') GROUP BY \"year\")"),
        ("SELECT * FROM (DESCRIBE (SELECT * FROM orders))", "SELECT * FROM (DESCRIBE (SELECT * FROM orders))"),
        ("SELECT o.id FROM (orders AS o POSITIONAL JOIN customers AS c)", "SELECT o.id FROM (orders AS o POSITIONAL JOIN customers AS c)"),
        ("SELECT * FROM ((a POSITIONAL JOIN (SELECT 1) AS b) POSITIONAL JOIN range(3) AS r(x)) WHERE (x > 1)", "SELECT * FROM ((a POSITIONAL JOIN (SELECT 1) AS b) POSITIONAL JOIN range(3) AS r (x)) WHERE (x > 1)"),
        ("SELECT column_name FROM (SUMMARIZE (SELECT * FROM orders))", "SELECT column_name FROM (SUMMARIZE (SELECT * FROM orders))"),
    ] {
        assert_eq!(round_trip(printed).1, expect, "{printed}");
    }
}

#[test]
fn show_as_a_from_item_becomes_the_listing() {
    let printed = r#"SELECT count_star() FROM (DESCRIBE "tables")"#;
    let (text, cuts) = cut(printed, &tokenize(printed)).unwrap().unwrap();
    assert_eq!(text, "SELECT count_star() FROM (SELECT * FROM __acl_show_tables)");
    assert!(cuts.owns("__acl_show_tables") && !cuts.owns("__acl_cut0"));
}

#[test]
fn a_lost_or_repeated_marker_is_refused_and_reserved_names_are_never_cut() {
    let printed = "SELECT count_star() FROM orders USING SAMPLE 3 (Reservoir, 42)";
    let (_, cuts) = cut(printed, &tokenize(printed)).unwrap().unwrap();
    for out in ["SELECT count_star() FROM orders", r#"SELECT 1 QUALIFY "__acl_cut0" UNION SELECT 2 QUALIFY "__acl_cut0""#, r#"SELECT "__acl_cut0""#] {
        assert!(restore(out, &tokenize(out), &cuts).is_err(), "{out}");
    }
    let forged = r#"SELECT "__acl_cut0" FROM orders USING SAMPLE 3 (Reservoir, 42)"#;
    assert!(cut(forged, &tokenize(forged)).unwrap().is_none());
}
