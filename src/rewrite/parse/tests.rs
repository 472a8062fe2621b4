use super::*;

#[test]
fn names_are_needed_only_for_items_named_by_their_text() {
    let needs = |sql: &str| names_needed(&parse(sql, Reading::Original).unwrap());
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
        let p = self.0.iter().find(|(q, _)| *q == sql).map(|(_, p)| p).expect("a canned print");
        Ok(Some(Printed { sql: p.to_string(), statements: 1 }))
    }
    fn tokens(&self, sql: &str) -> Result<Vec<Token>> {
        Ok(super::cuts::tests::tokenize(sql))
    }
}

#[test]
fn the_original_is_read_unless_names_or_syntax_need_duckdb() {
    let host = Canned(&[
        ("SELECT count(*) FROM t", r#"SELECT count_star() AS "count_star()" FROM t"#),
        ("FROM t WHERE a > 1", "SELECT * FROM t WHERE (a > 1)"),
    ]);
    let read = |sql| read(sql, &host).unwrap().stmt.to_string();
    assert_eq!(read("SELECT a FROM t"), "SELECT a FROM t"); // not asked: the host would panic
    assert_eq!(read("SELECT count(*) FROM t"), r#"SELECT count_star() AS "count_star()" FROM t"#);
    assert_eq!(read("FROM t WHERE a > 1"), "SELECT * FROM t WHERE (a > 1)");
}

#[test]
fn without_a_host_the_original_is_read_as_before() {
    assert_eq!(read("SELECT count(*) FROM t", &NoHost).unwrap().stmt.to_string(), "SELECT count(*) FROM t");
    assert!(read("SELECT 2 ** 3", &NoHost).is_err());
}
