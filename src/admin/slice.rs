//! `RLS (<predicate>)` and `COLUMNS (col, new = col, masked = <expr>, col NOT NULL)` clauses,
//! shared by CREATE VIRTUAL TABLE, ADD TABLE, ALTER VIRTUAL TABLE, GRANT and ALTER GRANT; the
//! legacy quoted forms `RLS '<pred>'` and `COLUMNS 'a,b'` are parsed from the string's text by
//! the same functions. Expressions are parsed with sqlparser (so they are SQL, not text) and
//! stored printed back; `acl_claim('k')` must have one string literal argument.
use crate::sqltext::Walk as _;
use crate::error::{AclError, Duplicate, Invalid, Management, Result};
use crate::policy::{norm, Column, Slice};
use sqlparser::ast::{Expr, Visitor};
use sqlparser::dialect::DuckDbDialect;
use sqlparser::keywords::Keyword;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::Token;
use std::collections::BTreeSet;
use std::ops::ControlFlow;

fn word_is(p: &Parser<'_>, word: &str) -> bool {
    matches!(&p.peek_token_ref().token,
        Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(word))
}

/// The quoted legacy form of a clause (`COLUMNS 'a,b'`, `RLS 'tenant = 1'`): the string's text,
/// which is then parsed exactly as the parenthesised form's inside.
fn quoted(p: &mut Parser<'_>) -> Option<String> {
    let text = match &p.peek_token_ref().token {
        Token::SingleQuotedString(s) | Token::EscapedStringLiteral(s) => s.clone(),
        Token::DollarQuotedString(d) => d.value.clone(),
        _ => return None,
    };
    p.next_token();
    Some(text)
}

/// A parser over the text of a quoted clause; `None` for an empty one (the clause says "none").
fn inner<'d>(dialect: &'d DuckDbDialect, text: &str) -> Result<Option<Parser<'d>>> {
    if text.trim().is_empty() {
        return Ok(None);
    }
    let parser = Parser::new(dialect).try_with_sql(text).map_err(|_| {
        AclError::from(Management::Missing { expected: "SQL inside the quoted clause".into() })
    })?;
    Ok(Some(parser))
}

fn at_end(p: &Parser<'_>, what: &str) -> Result<()> {
    match p.peek_token_ref().token {
        Token::EOF => Ok(()),
        _ => Err(Management::Missing { expected: format!("the end of the quoted {what}") }.into()),
    }
}

/// What a `COLUMNS` clause says: the slice's columns (`None`: every column, the quoted empty
/// list) and the columns its `col NOT NULL` items declare.
#[derive(Debug, Default)]
pub(super) struct ColumnsClause {
    pub columns: Option<Vec<Column>>,
    pub not_null: BTreeSet<String>,
}

/// Parses any `RLS (…) | '…'` / `COLUMNS (…) | '…'` clauses at the parser's position (each at
/// most once). `not_null`: where `col [NOT] NULL` items go (virtual tables); `None` refuses them
/// (grants: a declaration belongs to the object).
pub(super) fn clauses(p: &mut Parser<'_>, slice: &mut Slice, mut not_null: Option<&mut BTreeSet<String>>, seen: &mut Seen) -> Result<bool> {
    let mut any = false;
    loop {
        if word_is(p, "rls") {
            p.next_token();
            if std::mem::replace(&mut seen.rls, true) {
                return Err(Management::Twice { clause: "RLS" }.into());
            }
            slice.rls = rls(p)?;
        } else if word_is(p, "columns") {
            p.next_token();
            if std::mem::replace(&mut seen.columns, true) {
                return Err(Management::Twice { clause: "COLUMNS" }.into());
            }
            let c = columns(p)?;
            match not_null.as_deref_mut() {
                Some(n) => *n = c.not_null,
                None if !c.not_null.is_empty() => {
                    return Err(Invalid::Rule("NOT NULL is declared on a virtual table's COLUMNS, not on a grant").into())
                }
                None => {}
            }
            slice.columns = c.columns;
        } else {
            return Ok(any);
        }
        any = true;
    }
}

/// Which of the slice clauses a statement already gave.
#[derive(Debug, Default)]
pub(super) struct Seen {
    rls: bool,
    columns: bool,
}

/// After `RLS`: `(<predicate>)` or `'<predicate>'` (empty: no row policy).
pub(super) fn rls(p: &mut Parser<'_>) -> Result<Option<String>> {
    let missing = || AclError::from(Management::Missing { expected: "a predicate in RLS (…)".into() });
    if let Some(text) = quoted(p) {
        let dialect = DuckDbDialect {};
        let Some(mut q) = inner(&dialect, &text)? else { return Ok(None) };
        let e = q.parse_expr().map_err(|_| missing())?;
        at_end(&q, "RLS predicate")?;
        check_expr(&e)?;
        return Ok(Some(e.to_string()));
    }
    expect(p, Token::LParen, "'(' after RLS")?;
    let e = p.parse_expr().map_err(|_| missing())?;
    expect(p, Token::RParen, "')' after the RLS predicate")?;
    check_expr(&e)?;
    Ok(Some(e.to_string()))
}

fn expect(p: &mut Parser<'_>, t: Token, what: &str) -> Result<()> {
    if p.consume_token(&t) {
        Ok(())
    } else {
        Err(Management::Missing { expected: what.to_string() }.into())
    }
}

/// After `COLUMNS`: `(items)` or `'items'` (empty: every column).
pub(super) fn columns(p: &mut Parser<'_>) -> Result<ColumnsClause> {
    if let Some(text) = quoted(p) {
        let dialect = DuckDbDialect {};
        let Some(mut q) = inner(&dialect, &text)? else { return Ok(ColumnsClause::default()) };
        let c = column_items(&mut q)?;
        at_end(&q, "column list")?;
        return Ok(c);
    }
    expect(p, Token::LParen, "'(' after COLUMNS")?;
    let c = column_items(p)?;
    expect(p, Token::RParen, "')' after the column list")?;
    Ok(c)
}

/// `col | new = col | name = <expr> | col [NOT] NULL`, comma-separated.
fn column_items(p: &mut Parser<'_>) -> Result<ColumnsClause> {
    let mut out: Vec<Column> = Vec::new();
    let mut not_null = BTreeSet::new();
    loop {
        let name = p
            .parse_identifier()
            .map_err(|_| AclError::from(Management::Missing { expected: "a column name in COLUMNS (…)".into() }))?;
        let name = norm(&name.value);
        let expr = if p.consume_token(&Token::Eq) {
            let e = p
                .parse_expr()
                .map_err(|_| AclError::from(Management::Missing { expected: format!("an expression after {name} =") }))?;
            check_expr(&e)?;
            Some(e.to_string())
        } else {
            // `col NOT NULL` declares (never enforces); `col NULL` says the default.
            if p.parse_keywords(&[Keyword::NOT, Keyword::NULL]) {
                not_null.insert(name.clone());
            } else {
                let _ = p.parse_keyword(Keyword::NULL);
            }
            None
        };
        if out.iter().any(|c| c.name == name) {
            return Err(Duplicate::Column(name).into());
        }
        out.push(Column { name, expr });
        if !p.consume_token(&Token::Comma) {
            break;
        }
    }
    Ok(ColumnsClause { columns: Some(out), not_null })
}

/// A slice read back from a policy store (spec 006): every expression must parse as one and pass
/// the checks it passed when it was written, so a direct edit of the store's tables cannot put a
/// subquery (which could read the store itself) into a predicate or a mask.
pub fn check_stored(slice: &Slice) -> Result<()> {
    let exprs = slice.rls.iter().chain(slice.columns.iter().flatten().filter_map(|c| c.expr.as_ref()));
    for text in exprs {
        let dialect = sqlparser::dialect::DuckDbDialect {};
        let unreadable = || AclError::from(Management::Missing { expected: "one SQL expression".into() });
        let mut p = Parser::new(&dialect).try_with_sql(text).map_err(|_| unreadable())?;
        let e = p.parse_expr().map_err(|_| unreadable())?;
        if p.peek_token_ref().token != Token::EOF {
            return Err(unreadable());
        }
        check_expr(&e)?;
    }
    Ok(())
}

/// Policy expressions may not contain subqueries (they would read outside the decision) and
/// `acl_claim` takes exactly one string literal.
pub(super) fn check_expr(e: &Expr) -> Result<()> {
    struct V;
    impl Visitor for V {
        type Break = AclError;
        fn pre_visit_query(&mut self, _: &sqlparser::ast::Query) -> ControlFlow<AclError> {
            ControlFlow::Break(Invalid::Rule("policy expressions may not contain subqueries").into())
        }
        fn pre_visit_expr(&mut self, e: &Expr) -> ControlFlow<AclError> {
            match e {
                Expr::Function(f) if crate::sqltext::is_acl_claim(f) && crate::sqltext::claim_name(f).is_none() => ControlFlow::Break(
                    Invalid::Rule("acl_claim takes exactly one string literal, e.g. acl_claim('tenant')").into(),
                ),
                _ => ControlFlow::Continue(()),
            }
        }
    }
    match e.walk(&mut V) {
        ControlFlow::Break(err) => Err(err),
        ControlFlow::Continue(()) => Ok(()),
    }
}

/// Two different masks on one column cannot be combined for a principal holding both roles,
/// so a grant that would mask a column differently from another role's grant on the same
/// objects is refused when it is written.
pub(super) fn check_masks(
    policy: &crate::policy::Policy,
    role: &str,
    catalog: &str,
    object: Option<&crate::policy::ObjKey>,
    slice: &Slice,
) -> Result<()> {
    let Some(cols) = &slice.columns else { return Ok(()) };
    for (other, r) in policy.roles.iter().filter(|(name, _)| name.as_str() != role) {
        let cat = r.catalog_grants.get(catalog).map(|g| &g.slice);
        let objs = r
            .object_grants
            .iter()
            .filter(|(k, _)| k.catalog == catalog && object.is_none_or(|o| o == *k))
            .map(|(_, g)| &g.slice);
        for theirs in cat.into_iter().chain(objs).filter_map(|s| s.columns.as_ref()) {
            for c in cols.iter().filter(|c| c.expr.is_some()) {
                if let Some(t) = theirs.iter().find(|t| t.name == c.name && t.expr.is_some() && t.expr != c.expr) {
                    return Err(Invalid::MaskConflict { column: t.name.clone(), role: other.clone() }.into());
                }
            }
        }
    }
    Ok(())
}
