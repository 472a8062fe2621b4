//! SQL as text: quoting identifiers and literals, folding identifiers, the placeholders policy
//! SQL may use (`acl_claim`, `acl_arg`) and their substitution, the names reserved for the
//! rewrite's own markers, and a virtual function body's normalisation. A leaf module: it knows
//! sqlparser and `error`, nothing of policies or principals (what it needs of them is passed in).
mod body;
mod ctes;
mod placeholders;
mod walk;

pub use body::{check_reserved, check_reserved_except, normalise_body};
pub use ctes::{rename_ctes, CTE_PREFIX};
pub use walk::{Walk, WalkMut};
pub use placeholders::{acl_arg_index, claim_name, claim_value, is_acl_claim, substitute_claims};

use sqlparser::ast::{Ident, ObjectName};

/// Identifiers in DuckDB are case-insensitive, quoted or not: policy keys are lower-case.
pub fn norm(ident: &str) -> String {
    ident.to_ascii_lowercase()
}

/// Appends `name` as a double-quoted identifier (`a"b` → `"a""b"`), for SQL built as text.
pub fn push_ident(out: &mut String, name: &str) {
    out.reserve(name.len() + 2);
    out.push('"');
    for (i, part) in name.split('"').enumerate() {
        if i > 0 {
            out.push_str("\"\"");
        }
        out.push_str(part);
    }
    out.push('"');
}

/// `name` as a double-quoted identifier (`a"b` → `"a""b"`), for SQL built as text.
pub fn ident(name: &str) -> String {
    let mut s = String::with_capacity(name.len() + 2);
    push_ident(&mut s, name);
    s
}

/// `s` as a single-quoted string literal (`it's` → `'it''s'`).
pub fn literal(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('\'');
    for (i, part) in s.split('\'').enumerate() {
        if i > 0 {
            out.push_str("''");
        }
        out.push_str(part);
    }
    out.push('\'');
    out
}

/// An identifier node that prints double-quoted (sqlparser doubles an embedded quote).
pub fn quoted(name: &str) -> Ident {
    Ident::with_quote('"', name)
}

/// `"a"."b"."c"`: a name of quoted parts (how every admitted function call and physical table
/// is emitted, so no search path or macro can capture it).
pub fn quoted_name(parts: &[&str]) -> ObjectName {
    ObjectName::from(parts.iter().map(|p| quoted(p)).collect::<Vec<_>>())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_doubles_the_quote_and_nothing_else() {
        for s in ["", "a", "a\"b", "\"", "\"\"", "it's", "''", "x\\y", "ü\"'"] {
            assert_eq!(ident(s), format!("\"{}\"", s.replace('"', "\"\"")), "{s}");
            assert_eq!(literal(s), format!("'{}'", s.replace('\'', "''")), "{s}");
        }
        assert_eq!(quoted_name(&["d", "s\"", "n"]).to_string(), "\"d\".\"s\"\"\".\"n\"");
    }
}

/// The columns one SQL expression reads (lower-case; a qualified name's last part), in order;
/// `None` when the text is not one expression. Function names are not columns.
pub fn columns_read(expr: &str) -> Option<Vec<String>> {
    use sqlparser::ast::{Expr, Visit, Visitor};
    let dialect = sqlparser::dialect::DuckDbDialect {};
    let mut p = sqlparser::parser::Parser::new(&dialect).try_with_sql(expr).ok()?;
    let e = p.parse_expr().ok()?;
    if p.peek_token_ref().token != sqlparser::tokenizer::Token::EOF {
        return None;
    }
    struct Cols(Vec<String>);
    impl Visitor for Cols {
        type Break = ();
        fn pre_visit_expr(&mut self, e: &Expr) -> std::ops::ControlFlow<()> {
            match e {
                Expr::Identifier(i) => self.0.push(norm(&i.value)),
                Expr::CompoundIdentifier(parts) => self.0.extend(parts.last().map(|i| norm(&i.value))),
                _ => {}
            }
            std::ops::ControlFlow::Continue(())
        }
    }
    let mut v = Cols(Vec::new());
    let _ = e.visit(&mut v);
    Some(v.0)
}
