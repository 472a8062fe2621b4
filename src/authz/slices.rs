//! Building the read-only subquery that stands for a sliced object (SUBQUERY form).
//!
//! Each slice layer (the object's own COLUMNS/RLS, then the grants') wraps the previous one:
//!
//! ```sql
//! SELECT CASE WHEN (<rls>) THEN (<expr>) END AS "col", … FROM <inner> AS "__acl_l0" WHERE (<rls>)
//! ```
//!
//! The predicate is both the filter and a guard on every column: if DuckDB's optimizer evaluates
//! a principal's own predicate (a cast that fails, `error()`) before the slice's filter, the
//! hidden rows it sees have only NULLs, so it can observe nothing of them. A layer without
//! COLUMNS keeps every column (`COLUMNS(*)` keeps their names).
//! `acl_claim('k')` becomes the claim's value as a SQL literal (NULL when missing).
use super::{Layer, View};
use crate::error::{AclError, Result};
use crate::policy::{RelationKind, Slice};
use crate::sqltext::ident;
use sqlparser::ast::{Expr, Query, Value, VisitMut, VisitorMut};
use sqlparser::dialect::DuckDbDialect;
use sqlparser::parser::Parser;
use std::fmt::Write;
use std::ops::ControlFlow;

pub fn subquery(view: &View<'_>, source: &RelationKind, layers: &[Layer<'_>]) -> Result<Box<Query>> {
    let mut sql = match source {
        RelationKind::Table(t) => format!("{}.{}.{}", ident(&t.db), ident(&t.schema), ident(&t.name)),
        RelationKind::View(q) => format!("({q})"),
    };
    if layers.is_empty() {
        sql = format!("SELECT * FROM {sql} AS \"__acl_v\"");
    }
    for (i, layer) in layers.iter().enumerate() {
        let inner = if i == 0 { sql } else { format!("({sql})") };
        sql = match layer {
            Layer::Slice(slice) => layer_sql(&inner, i, slice),
            Layer::Open { rls, open, replace } => open_sql(&inner, i, rls, open, replace),
        };
    }
    let mut query = Parser::new(&DuckDbDialect {})
        .try_with_sql(&sql)
        .and_then(|mut p| p.parse_query())
        .map_err(|_| AclError::internal("a policy expression did not parse"))?;
    crate::sqltext::substitute_claims(&mut *query, |k| view.claim(k))?;
    let _ = query.visit(&mut Unparen);
    Ok(query)
}

/// The parentheses around each policy expression keep the text's structure while it is put
/// together; once parsed, the ones directly inside `CASE WHEN … THEN … ELSE … END` and `WHERE …`
/// (contexts closed by keywords) are dropped: DuckDB's parser backtracks over every one of them,
/// and the guard repeats the predicate once per column.
struct Unparen;

fn unparen(e: &mut Expr) {
    while let Expr::Nested(inner) = e {
        *e = std::mem::replace(inner.as_mut(), Expr::value(Value::Null));
    }
}

impl VisitorMut for Unparen {
    type Break = ();

    fn post_visit_expr(&mut self, e: &mut Expr) -> ControlFlow<()> {
        if let Expr::Case { conditions, else_result, .. } = e {
            for c in conditions.iter_mut() {
                unparen(&mut c.condition);
                unparen(&mut c.result);
            }
            if let Some(r) = else_result {
                unparen(r);
            }
        }
        ControlFlow::Continue(())
    }

    fn post_visit_query(&mut self, q: &mut Query) -> ControlFlow<()> {
        if let sqlparser::ast::SetExpr::Select(s) = q.body.as_mut() {
            if let Some(w) = &mut s.selection {
                unparen(w);
            }
        }
        ControlFlow::Continue(())
    }
}

fn layer_sql(inner: &str, i: usize, layer: &Slice) -> String {
    let guard = |e: &str| match &layer.rls {
        Some(p) => format!("CASE WHEN ({p}) THEN ({e}) END"),
        None => format!("({e})"),
    };
    let mut s = String::from("SELECT ");
    match &layer.columns {
        None if layer.rls.is_some() => s.push_str(&guard("COLUMNS(*)")),
        None => s.push('*'),
        Some(cols) => {
            for (n, c) in cols.iter().enumerate() {
                if n > 0 {
                    s.push_str(", ");
                }
                let e = c.expr.clone().unwrap_or_else(|| ident(&c.name));
                let _ = write!(s, "{} AS {}", guard(&e), ident(&c.name));
            }
        }
    }
    let _ = write!(s, " FROM {inner} AS \"__acl_l{i}\"");
    if let Some(p) = &layer.rls {
        let _ = write!(s, " WHERE ({p})");
    }
    s
}

/// The union of several roles where one shows every column (`authz::Layer::Open`): first every
/// column guarded by the open roles' predicate, beside the other roles' expressions for the
/// columns they list; then those columns take the other roles' values where no open role
/// admits the row, and the helper columns are dropped.
fn open_sql(inner: &str, i: usize, rls: &str, open: &str, replace: &[(String, String)]) -> String {
    let mut s = format!("SELECT CASE WHEN ({open}) THEN COLUMNS(*) END, ({open}) AS \"__acl_open\"");
    for (n, (_, e)) in replace.iter().enumerate() {
        let _ = write!(s, ", ({e}) AS \"__acl_r{n}\"");
    }
    let _ = write!(s, " FROM {inner} AS \"__acl_l{i}\" WHERE ({rls})");
    let mut out = String::from("SELECT * EXCLUDE (\"__acl_open\"");
    for n in 0..replace.len() {
        let _ = write!(out, ", \"__acl_r{n}\"");
    }
    out.push(')');
    if !replace.is_empty() {
        out.push_str(" REPLACE (");
        for (n, (c, _)) in replace.iter().enumerate() {
            if n > 0 {
                out.push_str(", ");
            }
            let c = ident(c);
            let _ = write!(out, "CASE WHEN \"__acl_open\" THEN {c} ELSE \"__acl_r{n}\" END AS {c}");
        }
        out.push(')');
    }
    let _ = write!(out, " FROM ({s}) AS \"__acl_u{i}\"");
    out
}

/// Replaces `acl_claim('k')` in one policy expression.
pub fn substitute_claims(view: &View<'_>, e: &mut Expr) -> Result<()> {
    crate::sqltext::substitute_claims(e, |k| view.claim(k))
}
