//! The last step before a rewritten statement is printed (issue 10, a parser differential found
//! while fixing finding 3): sqlparser's printer writes a quote that follows a backslash, and two
//! quotes in a row, as they are (`escape_quoted_string` assumes they are already escaped), but
//! DuckDB's tokenizer reads `\` as an ordinary character and `''` as one quote. So a literal whose
//! value holds `\'` — the principal's `'\'' OR true --'`, or a token's claim — came out as text in
//! which DuckDB ends the string early and reads the rest as SQL. Every literal must print as the
//! token DuckDB reads back: a single-quoted string holding a quote is printed dollar-quoted
//! (`$acl$…$acl$`, exact for any content), and a quoted identifier or another quoted literal kind
//! that cannot print faithfully is refused.
use crate::sqltext::WalkMut as _;
use crate::error::{AclError, Result, Unsupported};
use sqlparser::ast::{DollarQuotedString, Ident, Statement, Value, ValueWithSpan, VisitorMut};
use std::ops::ControlFlow;

pub(super) fn make_printable(stmt: &mut Statement) -> Result<()> {
    match stmt.walk_mut(&mut Printable) {
        ControlFlow::Break(e) => Err(e),
        ControlFlow::Continue(()) => Ok(()),
    }
}

struct Printable;

/// Does sqlparser print `value` between `quote`s so that DuckDB reads back exactly `value`?
/// It doubles a lone quote; it leaves a quote after a backslash, and a pair of quotes, as they are.
fn prints_faithfully(value: &str, quote: char) -> bool {
    let mut previous = None;
    for c in value.chars() {
        if c == quote && (previous == Some('\\') || previous == Some(quote)) {
            return false;
        }
        previous = Some(c);
    }
    true
}

/// A dollar-quote tag that the value cannot end early: `$tag` occurs nowhere in it.
fn tag_for(value: &str) -> String {
    let mut tag = String::from("acl");
    let mut n = 0u32;
    while value.contains(&format!("${tag}")) {
        n += 1;
        tag = format!("acl{n}");
    }
    tag
}

fn unprintable(what: &'static str) -> AclError {
    Unsupported::Unprintable { what }.into()
}

impl VisitorMut for Printable {
    type Break = AclError;

    fn post_visit_value(&mut self, v: &mut ValueWithSpan) -> ControlFlow<AclError> {
        let fix = match &v.value {
            Value::SingleQuotedString(s) if s.contains('\'') => {
                Some(Value::DollarQuotedString(DollarQuotedString { value: s.clone(), tag: Some(tag_for(s)) }))
            }
            Value::SingleQuotedString(_)
            | Value::DollarQuotedString(_)
            | Value::EscapedStringLiteral(_) // printed with backslash escapes: faithful
            | Value::Number(..)
            | Value::Boolean(_)
            | Value::Null
            | Value::Placeholder(_) => None,
            // DuckDB's parser refuses a hex string that is not an even number of hex digits: the
            // principal's syntax error, said as one (not our print failing to parse).
            Value::HexStringLiteral(s) if s.len() % 2 != 0 || !s.bytes().all(|b| b.is_ascii_hexdigit()) => {
                return ControlFlow::Break(crate::error::Syntax::Statement { at: None }.into());
            }
            Value::NationalStringLiteral(s) | Value::HexStringLiteral(s) | Value::SingleQuotedByteStringLiteral(s)
                if prints_faithfully(s, '\'') && !s.contains('\\') =>
            {
                None
            }
            _ => return ControlFlow::Break(unprintable("this kind of literal")),
        };
        if let Some(value) = fix {
            v.value = value;
        }
        ControlFlow::Continue(())
    }

    fn post_visit_ident(&mut self, ident: &mut Ident) -> ControlFlow<AclError> {
        match ident.quote_style {
            Some('[') => ControlFlow::Break(Unsupported::BracketIdentifier.into()),
            Some(q) if !prints_faithfully(&ident.value, q) => ControlFlow::Break(unprintable("a quoted name")),
            _ => ControlFlow::Continue(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlparser::dialect::DuckDbDialect;
    use sqlparser::parser::Parser;

    fn printed(sql: &str) -> Result<String> {
        let mut stmt = Parser::parse_sql(&DuckDbDialect {}, sql).unwrap().pop().unwrap();
        make_printable(&mut stmt)?;
        Ok(stmt.to_string())
    }

    #[test]
    fn a_quote_after_a_backslash_stays_inside_the_string() {
        // sqlparser alone prints `'\' OR true --'`, which DuckDB reads as `'\'` and a tautology
        assert_eq!(
            printed(r"SELECT id FROM t WHERE c = '\'' OR true --'").unwrap(),
            r"SELECT id FROM t WHERE c = $acl$\' OR true --$acl$"
        );
        assert_eq!(printed("SELECT 'it''s'").unwrap(), "SELECT $acl$it's$acl$");
        assert_eq!(printed("SELECT 'a''''b'").unwrap(), "SELECT $acl$a''b$acl$");
        assert_eq!(printed("SELECT 'plain', '\\'").unwrap(), "SELECT 'plain', '\\'");
    }

    #[test]
    fn the_tag_never_occurs_in_the_value() {
        assert_eq!(tag_for("x"), "acl");
        assert_eq!(tag_for("a $acl$ b"), "acl1");
        assert_eq!(tag_for("$acl $acl1"), "acl2");
        assert_eq!(printed("SELECT 'it''s $acl$'").unwrap(), "SELECT $acl1$it's $acl$$acl1$");
    }

    #[test]
    fn names_that_cannot_print_faithfully_are_refused() {
        // `"a\""` does not tokenize in sqlparser at all; `"a""""b"` holds two quotes in a row
        assert!(printed(r#"SELECT 1 AS "a""""b""#).is_err());
        assert_eq!(printed(r#"SELECT 1 AS "we""ird""#).unwrap(), r#"SELECT 1 AS "we""ird""#);
        let mut stmt = Parser::parse_sql(&DuckDbDialect {}, "SELECT 1 AS x").unwrap().pop().unwrap();
        if let Statement::Query(q) = &mut stmt {
            if let sqlparser::ast::SetExpr::Select(s) = q.body.as_mut() {
                if let sqlparser::ast::SelectItem::ExprWithAlias { alias, .. } = &mut s.projection[0] {
                    *alias = Ident::with_quote('"', "a\\\"");
                }
            }
        }
        assert!(make_printable(&mut stmt).is_err(), "{stmt}");
    }
}
