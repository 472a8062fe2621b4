//! Building the read-only subquery that stands for a sliced object (SUBQUERY form).
//!
//! Each slice layer (the object's own COLUMNS/RLS, then the grants') wraps the previous one:
//!
//! ```sql
//! SELECT "a", "b" AS "x", CASE WHEN "__acl_ok" THEN (<mask>) END AS "m"
//! FROM (SELECT <guard>, (<rls>) AS "__acl_ok" FROM <inner> AS "__acl_l0" WHERE (<rls>)) AS "__acl_g0"
//! ```
//!
//! The predicate is both the filter and a guard: if DuckDB's optimizer evaluates a principal's
//! own predicate (a cast that fails, `error()`) before the slice's filter, the hidden rows it
//! sees have only NULLs, so it can observe nothing of them. The guard is one
//! `CASE WHEN (<rls>) THEN COLUMNS(*) END` over the layer's input (spec 002, "Guard"): one
//! expression for DuckDB's parser to read, whatever the number of columns; a layer without
//! COLUMNS is that guard alone (`COLUMNS(*)` keeps the names). A mask is guarded by the layer's
//! predicate on the input's own values (`"__acl_ok"`), never on the guarded ones.
//!
//! Which guards DuckDB may drop is decided on the bound plan (cpp/pushdown.cpp; spec 002, "Guard
//! and leak-proof pushdown"); the SQL built here always carries them.
//! `acl_claim('k')` becomes the claim's value as a SQL literal (NULL when missing).
use crate::sqltext::WalkMut as _;
use super::{Layer, View};
use crate::error::{AclError, Result};
use crate::policy::{norm, Column, RelationKind, Slice};
use crate::sqltext::ident;
use sqlparser::ast::{Expr, Query, Value, VisitorMut};
use sqlparser::dialect::DuckDbDialect;
use sqlparser::parser::Parser;
use std::fmt::Write;
use std::ops::ControlFlow;

/// The functions the ENUM cast calls inside a slice (`"system".main.<name>`): ours, the only
/// `acl_*` calls the second check lets stand in policy SQL (spec 011).
pub const PROBE_FNS: [&str; 1] = [super::enums::ENUM_FN[2]];

pub fn subquery(view: &View<'_>, source: &RelationKind, layers: &[Layer<'_>]) -> Result<Box<Query>> {
    subquery_as(view, source, layers, false)
}

/// `subquery`, with ENUM columns shown as VARCHAR when `varchar` (spec 021): the
/// whole of it is read through `SELECT "system".main.acl_enum_varchar(COLUMNS(*)) FROM (…)`,
/// above every layer's filter (the policy's predicates and masks read the physical values and
/// types).
pub fn subquery_as(view: &View<'_>, source: &RelationKind, layers: &[Layer<'_>], varchar: bool) -> Result<Box<Query>> {
    let mut sql = match source {
        RelationKind::Table(t) => format!("{}.{}.{}", ident(&t.db), ident(&t.schema), ident(&t.name)),
        RelationKind::View(q) => format!("({q})"),
    };
    if layers.is_empty() {
        let items = if varchar { super::enums::ENUM_COLUMNS } else { "*" };
        sql = format!("SELECT {items} FROM {sql} AS \"__acl_v\"");
    }
    for (i, layer) in layers.iter().enumerate() {
        let inner = if i == 0 { sql } else { format!("({sql})") };
        sql = match layer {
            Layer::Slice(slice) => layer_sql(&inner, i, slice),
            Layer::Open { rls, open, replace } => open_sql(&inner, i, rls, open, replace),
        };
    }
    let parse = |sql: &str| {
        Parser::new(&DuckDbDialect {})
            .try_with_sql(sql)
            .and_then(|mut p| p.parse_query())
            .map_err(|_| AclError::internal("a policy expression did not parse"))
    };
    let mut query = parse(&sql)?;
    // The cast in the outermost layer's own projection, above its filter, where that is one call;
    // a column list (or the union's `* EXCLUDE … REPLACE …`) is read through a layer of its own.
    if varchar && !layers.is_empty() && !super::enums::fold(&mut query) {
        query = parse(&format!("SELECT {} FROM ({sql}) AS \"__acl_e\"", super::enums::ENUM_COLUMNS))?;
    }
    crate::sqltext::substitute_claims(&mut *query, |k| view.claim(k))?;
    let _ = query.walk_mut(&mut Unparen);
    // A virtual view's CTEs bind as DuckDB binds them, or not at all (spec 011, "regions").
    if matches!(source, RelationKind::View(_)) {
        crate::sqltext::rename_ctes(&mut *query);
    }
    Ok(query)
}

/// The query whose output columns are the object's as the principal reads it, with every layer
/// fully guarded: what a listing describes and what the drift check binds again (never run).
pub fn exposed(view: &View<'_>, source: &RelationKind, layers: &[Layer<'_>]) -> Result<String> {
    Ok(match (source, layers.is_empty()) {
        (RelationKind::Table(p), true) => format!("SELECT * FROM {}.{}.{}", ident(&p.db), ident(&p.schema), ident(&p.name)),
        (kind, _) => subquery(view, kind, layers)?.to_string(),
    })
}

/// The name a column expression passes through unchanged (`None`: a mask or a computed column).
/// Only a bare or double-quoted identifier is one; the keywords that stand for values are not.
pub(super) fn plain(c: &Column) -> Option<String> {
    const VALUES: [&str; 15] = [
        "null", "true", "false", "default", "user", "current_user", "session_user", "current_role", "current_date",
        "current_time", "current_timestamp", "localtime", "localtimestamp", "current_catalog", "current_schema",
    ];
    let Some(e) = &c.expr else { return Some(c.name.clone()) };
    let e = e.trim();
    let bare = e.chars().next().is_some_and(|ch| ch.is_ascii_alphabetic() || ch == '_')
        && e.chars().all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
        && !VALUES.contains(&norm(e).as_str());
    let quoted = e.len() >= 2 && e.starts_with('"') && e.ends_with('"') && !e[1..e.len() - 1].contains('"');
    match (bare, quoted) {
        (true, _) => Some(norm(e)),
        (_, true) => Some(norm(&e[1..e.len() - 1])),
        _ => None,
    }
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

/// The operands of a filter's AND chain (`(<rls>) AND <checks>`) need no parentheses unless one
/// is an OR (AND binds tighter than OR and looser than everything else).
fn unparen_and(e: &mut Expr) {
    use sqlparser::ast::BinaryOperator::{And, Or};
    if let Expr::BinaryOp { left, op: And, right } = e {
        for side in [left, right] {
            if let Expr::Nested(inner) = side.as_ref() {
                if !matches!(inner.as_ref(), Expr::BinaryOp { op: Or, .. }) {
                    unparen(side);
                }
            }
            unparen_and(side);
        }
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
                unparen_and(w);
            }
        }
        ControlFlow::Continue(())
    }
}

/// One layer (see the module's comment).
fn layer_sql(inner: &str, i: usize, layer: &Slice) -> String {
    let from = format!("FROM {inner} AS \"__acl_l{i}\"");
    let Some(p) = &layer.rls else {
        return match &layer.columns {
            None => format!("SELECT * {from}"),
            Some(cols) => format!("SELECT {} {from}", column_list(cols, |e| format!("({e})"))),
        };
    };
    let guard = format!("CASE WHEN ({p}) THEN COLUMNS(*) END");
    let filter = format!("{from} WHERE ({p})");
    match &layer.columns {
        None => format!("SELECT {guard} {filter}"),
        Some(cols) => {
            let masked = cols.iter().any(|c| plain(c).is_none());
            let ok = if masked { format!(", ({p}) AS \"__acl_ok\"") } else { String::new() };
            let outer = column_list(cols, |e| format!("CASE WHEN \"__acl_ok\" THEN ({e}) END"));
            format!("SELECT {outer} FROM (SELECT {guard}{ok} {filter}) AS \"__acl_g{i}\"")
        }
    }
}

/// A layer's column list: a plain column by its name (renamed where it is another's), anything
/// else through `mask`.
fn column_list(cols: &[Column], mask: impl Fn(&str) -> String) -> String {
    let mut s = String::new();
    for (n, c) in cols.iter().enumerate() {
        if n > 0 {
            s.push_str(", ");
        }
        match (plain(c), &c.expr) {
            (Some(under), _) if under == c.name => s.push_str(&ident(&c.name)),
            (Some(under), _) => {
                let _ = write!(s, "{} AS {}", ident(&under), ident(&c.name));
            }
            (None, e) => {
                let _ = write!(s, "{} AS {}", mask(e.as_deref().unwrap_or("NULL")), ident(&c.name));
            }
        }
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
