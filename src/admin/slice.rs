//! `RLS (<predicate>)` and `COLUMNS (col, new = col, masked = <expr>)` clauses, shared by
//! CREATE VIRTUAL TABLE and GRANT. Expressions are parsed with sqlparser (so they are SQL, not
//! text) and stored printed back; `acl_claim('k')` must have one string literal argument.
use crate::error::{AclError, Duplicate, Invalid, Management, Result};
use crate::policy::{norm, Column, Slice};
use sqlparser::ast::{Expr, Visit, Visitor};
use sqlparser::parser::Parser;
use sqlparser::tokenizer::Token;
use std::ops::ControlFlow;

fn word_is(p: &Parser<'_>, word: &str) -> bool {
    matches!(&p.peek_token_ref().token,
        Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(word))
}

/// Parses any `RLS (…)` / `COLUMNS (…)` clauses at the parser's position (each at most once).
pub(super) fn clauses(p: &mut Parser<'_>, slice: &mut Slice) -> Result<bool> {
    let mut any = false;
    loop {
        if word_is(p, "rls") {
            p.next_token();
            if slice.rls.is_some() {
                return Err(Management::Twice { clause: "RLS" }.into());
            }
            expect(p, Token::LParen, "'(' after RLS")?;
            let e = p.parse_expr().map_err(|_| AclError::from(Management::Missing { expected: "a predicate in RLS (…)".into() }))?;
            expect(p, Token::RParen, "')' after the RLS predicate")?;
            check_expr(&e)?;
            slice.rls = Some(e.to_string());
        } else if word_is(p, "columns") {
            p.next_token();
            if slice.columns.is_some() {
                return Err(Management::Twice { clause: "COLUMNS" }.into());
            }
            slice.columns = Some(columns(p)?);
        } else {
            return Ok(any);
        }
        any = true;
    }
}

fn expect(p: &mut Parser<'_>, t: Token, what: &str) -> Result<()> {
    if p.consume_token(&t) {
        Ok(())
    } else {
        Err(Management::Missing { expected: what.to_string() }.into())
    }
}

fn columns(p: &mut Parser<'_>) -> Result<Vec<Column>> {
    expect(p, Token::LParen, "'(' after COLUMNS")?;
    let mut out: Vec<Column> = Vec::new();
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
    expect(p, Token::RParen, "')' after the column list")?;
    Ok(out)
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
fn check_expr(e: &Expr) -> Result<()> {
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
    match e.visit(&mut V) {
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
