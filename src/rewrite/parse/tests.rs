use super::*;

#[test]
fn names_are_needed_only_for_items_named_by_their_text() {
    let needs = |sql: &str| names_needed(&mut parse(sql, Reading::Original).unwrap());
    for sql in ["SELECT a, t.b, 1, 'x', * FROM t", "SELECT count(*) AS n FROM t", "SELECT * EXCLUDE (a) FROM t", "DELETE FROM t"] {
        assert!(!needs(sql), "{sql}");
    }
    for sql in [
        "SELECT count(*) FROM t",
        "SELECT a + 1 FROM t",
        "SELECT * FROM (SELECT lower(a) FROM t)",
        "WITH c AS (SELECT sum(a) FROM t) SELECT * FROM c",
        "SELECT a FROM t UNION SELECT b + 1 FROM u",
        "DELETE FROM t RETURNING a + 1",
    ] {
        assert!(needs(sql), "{sql}");
    }
}

/// A host that prints what it is told to (DuckDB's print of the texts a test needs).
struct Canned(&'static [(&'static str, &'static str)]);

impl Host for Canned {
    fn print(&self, sql: &str) -> Result<Option<Printed>> {
        match self.0.iter().find(|(q, _)| *q == sql) {
            Some((_, p)) => Ok(Some(Printed { sql: p.to_string(), statements: 1 })),
            None => Err(crate::error::Syntax::Host { message: format!("not canned: {sql}") }.into()),
        }
    }
    fn tokens(&self, sql: &str) -> Result<Vec<Token>> {
        Ok(super::cuts::tests::tokenize(sql))
    }
}

#[test]
fn the_original_is_read_unless_names_or_syntax_need_duckdb() {
    let host = Canned(&[
        ("SELECT count(*)", r#"SELECT count_star() AS "count_star()""#),
        ("FROM t WHERE a > 1", "SELECT * FROM t WHERE (a > 1)"),
    ]);
    let read = |sql| read(sql, None, &host).unwrap().stmt.to_string();
    assert_eq!(read("SELECT a FROM t"), "SELECT a FROM t"); // not asked: the host would refuse
    // only the item is printed by DuckDB; the statement is read as written
    assert_eq!(read("SELECT count(*) FROM t WHERE a > 1"), r#"SELECT count(*) AS "count_star()" FROM t WHERE a > 1"#);
    assert_eq!(read("FROM t WHERE a > 1"), "SELECT * FROM t WHERE (a > 1)");
}

/// Items named by DuckDB alone: every query's and RETURNING's, in one order; an item with a
/// subquery, or a print that does not give one aliased item per item, sends the whole statement
/// to DuckDB's print.
#[test]
fn items_are_named_by_duckdb_alone_or_the_whole_statement_is_printed() {
    let host = Canned(&[
        (
            "SELECT upper(a), lower(b), b * 2, a + 1",
            r#"SELECT upper(a) AS "upper(a)", lower(b) AS "lower(b)", (b * 2) AS "(b * 2)", (a + 1) AS "(a + 1)""#,
        ),
        ("SELECT a + 1", r#"SELECT (a + 1) AS "(a + 1)""#),
        ("SELECT f(a), COLUMNS(*)", r#"SELECT f(a) AS "f(a)", COLUMNS(*)"#),
        ("SELECT f(a), COLUMNS(*) FROM t", r#"SELECT f(a) AS "f(a)", COLUMNS(*) FROM t"#),
        ("SELECT (SELECT max(a) FROM u) FROM t", r#"SELECT (SELECT max(a) AS "max(a)" FROM u) AS "(SELECT max(a) FROM u)" FROM t"#),
    ]);
    let read = |sql| read(sql, None, &host).unwrap().stmt.to_string();
    assert_eq!(
        read("SELECT upper(a), x FROM (SELECT a + 1 FROM t) UNION ALL SELECT lower(b), b * 2 FROM u"),
        r#"SELECT upper(a) AS "upper(a)", x FROM (SELECT a + 1 AS "(a + 1)" FROM t) UNION ALL SELECT lower(b) AS "lower(b)", b * 2 AS "(b * 2)" FROM u"#
    );
    assert_eq!(read("DELETE FROM t RETURNING a + 1"), r#"DELETE FROM t RETURNING a + 1 AS "(a + 1)""#);
    // COLUMNS(*) is not aliased by DuckDB: the whole statement's print
    assert_eq!(read("SELECT f(a), COLUMNS(*) FROM t"), r#"SELECT f(a) AS "f(a)", COLUMNS(*) FROM t"#);
    assert_eq!(read("SELECT (SELECT max(a) FROM u) FROM t"), r#"SELECT (SELECT max(a) AS "max(a)" FROM u) AS "(SELECT max(a) FROM u)" FROM t"#);
}

#[test]
fn without_a_host_the_original_is_read_as_before() {
    assert_eq!(read("SELECT count(*) FROM t", None, &NoHost).unwrap().stmt.to_string(), "SELECT count(*) FROM t");
    assert!(read("SELECT 2 ** 3", None, &NoHost).is_err());
}

/// A name DuckDB gave once is taken from the cache, for the same principal only; DuckDB is asked
/// for the missing items alone.
#[test]
fn item_names_are_cached_per_principal() {
    struct Counting(std::cell::Cell<usize>, Canned);
    impl Host for Counting {
        fn print(&self, sql: &str) -> Result<Option<Printed>> {
            self.0.set(self.0.get() + 1);
            self.1.print(sql)
        }
        fn tokens(&self, sql: &str) -> Result<Vec<Token>> {
            self.1.tokens(sql)
        }
    }
    let host = Counting(
        Default::default(),
        Canned(&[
            ("SELECT count(*)", r#"SELECT count_star() AS "count_star()""#),
            ("SELECT upper(a)", r#"SELECT upper(a) AS "upper(a)""#),
        ]),
    );
    let cache = NamesCache::default();
    let (a, b) = (CachedNames { host: &host, cache: &cache, who: "a" }, CachedNames { host: &host, cache: &cache, who: "b" });
    let read = |sql, h: &CachedNames<'_>| read(sql, None, h).unwrap().stmt.to_string();
    assert_eq!(read("SELECT count(*) FROM t", &a), r#"SELECT count(*) AS "count_star()" FROM t"#);
    assert_eq!(host.0.get(), 1);
    assert_eq!(read("SELECT count(*), x FROM u", &a), r#"SELECT count(*) AS "count_star()", x FROM u"#);
    assert_eq!(host.0.get(), 1, "the name is kept");
    assert_eq!(read("SELECT count(*), upper(a) FROM u", &a), r#"SELECT count(*) AS "count_star()", upper(a) AS "upper(a)" FROM u"#);
    assert_eq!(host.0.get(), 2, "only the new item is printed");
    read("SELECT count(*) FROM t", &b);
    assert_eq!(host.0.get(), 3, "another principal's names are its own");
}

/// `x ISNULL` is DuckDB's postfix operator: sqlparser must not read it as `x` aliased "ISNULL".
#[test]
fn isnull_is_not_an_alias() {
    assert!(parse("SELECT note ISNULL FROM t", Reading::Original).is_err());
    assert!(parse("SELECT note AS isnull FROM t", Reading::Original).is_ok());
    assert!(parse("SELECT note \"isnull\" FROM t", Reading::Original).is_ok());
}
