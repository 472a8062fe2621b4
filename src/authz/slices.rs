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
//! Where every predicate of the principal's statement is leak-proof (`Guard::Typed`, spec 002
//! "Leak-proof pushdown"), the guard becomes `CASE WHEN <types> OR (<rls>) THEN COLUMNS(*) END`, where
//! `<types>` says, by `typeof` of the columns the statement compares with literals, that each
//! comparison is one that cannot raise. DuckDB folds `typeof` at bind time, so the guard is
//! either the plain columns (filters and join filters reach the scan, statistics are kept) or
//! the full guard; with nothing to compare it is no guard at all.
//! `acl_claim('k')` becomes the claim's value as a SQL literal (NULL when missing).
use super::{Layer, View};
use crate::error::{AclError, Result};
use crate::policy::{norm, Column, RelationKind, Slice};
use crate::sqltext::ident;
use sqlparser::ast::{Expr, Query, Value, VisitMut, VisitorMut};
use sqlparser::dialect::DuckDbDialect;
use sqlparser::parser::Parser;
use std::collections::BTreeSet;
use std::fmt::Write;
use std::ops::ControlFlow;

/// What a literal compared with a column is, as written (the value never matters, so a
/// statement's shape keeps its guard whatever its numbers are).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LitKind {
    /// Up to 19 digits, or a decimal of up to 18 digits with at most 6 after the point (no
    /// exponent; `rewrite::leakproof` decides): safe against numeric columns.
    Number,
    /// A quoted string: safe against VARCHAR only (against anything else DuckDB casts it per row).
    Text,
    /// TRUE/FALSE: safe against BOOLEAN.
    Bool,
    /// `DATE '…'` or `TIMESTAMP '…'` (a bad value fails at bind, whatever the rows).
    Temporal,
}

impl LitKind {
    /// The condition, folded by DuckDB at bind time, that column `col` (SQL) compares with a
    /// literal of this kind without a cast that can fail on a row (probed on DuckDB 2.0: spec 002).
    fn safe(self, col: &str) -> String {
        let ty = format!("\"system\".main.typeof({col})");
        match self {
            LitKind::Number => format!(
                "\"system\".main.regexp_full_match({ty}, 'U?(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT)|FLOAT|DOUBLE|DECIMAL\\([0-9]+,([0-9]|1[0-8])\\)')"
            ),
            LitKind::Text => format!("{ty} = 'VARCHAR'"),
            LitKind::Bool => format!("{ty} = 'BOOLEAN'"),
            LitKind::Temporal => format!("{ty} IN ('DATE', 'TIMESTAMP', 'TIMESTAMP WITH TIME ZONE')"),
        }
    }
}

/// How the guard of each layer is built.
#[derive(Debug, Clone, Copy)]
pub enum Guard<'a> {
    /// Every column guarded by the layer's predicate.
    Full,
    /// The statement's predicates are all leak-proof; `needs` are the (column name, literal
    /// kind) pairs it compares, by the names the principal wrote (any qualifier). `single`: the
    /// statement reads one relation, so an unqualified name is this object's or an error.
    Typed { needs: &'a [(String, LitKind)], single: bool },
}

pub fn subquery(view: &View<'_>, source: &RelationKind, layers: &[Layer<'_>], guard: Guard<'_>) -> Result<Box<Query>> {
    let mut sql = match source {
        RelationKind::Table(t) => format!("{}.{}.{}", ident(&t.db), ident(&t.schema), ident(&t.name)),
        RelationKind::View(q) => format!("({q})"),
    };
    // A virtual view's body is the operator's SQL: a principal's predicate pushed into it would
    // run the body's expressions on hidden rows. Only tables take the typed guard.
    let guard = match source {
        RelationKind::Table(_) => guard,
        RelationKind::View(_) => Guard::Full,
    };
    if layers.is_empty() {
        sql = format!("SELECT * FROM {sql} AS \"__acl_v\"");
    }
    for (i, layer) in layers.iter().enumerate() {
        let inner = if i == 0 { sql } else { format!("({sql})") };
        sql = match layer {
            Layer::Slice(slice) => layer_sql(&inner, i, slice, typed_condition(layers, i, guard).as_deref()),
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

/// The name a column expression passes through unchanged (`None`: a mask or a computed column).
/// Only a bare or double-quoted identifier is one; the keywords that stand for values are not.
fn plain(c: &Column) -> Option<String> {
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

/// The typed guard's condition for layer `i` (over that layer's input), `Some("")` when there is
/// nothing to check, `None` for the full guard. Each pair's name is followed from the
/// principal's columns (the last layer's) down to layer `i`'s input: a name no layer lists is not
/// this object's and needs nothing; a name masked above layer `i` keeps the full guard (the mask's
/// output is what is compared, and its type is not known here); a name masked at layer `i` is
/// guarded by the mask's own guard. Without any column list the object's names are not known: an
/// unqualified name may be another relation's, so only a single-relation statement is typed.
fn typed_condition(layers: &[Layer<'_>], i: usize, guard: Guard<'_>) -> Option<String> {
    let Guard::Typed { needs, single } = guard else { return None };
    let slices: Vec<&Slice> = layers
        .iter()
        .map(|l| match l {
            Layer::Slice(s) => Some(&**s),
            Layer::Open { .. } => None,
        })
        .collect::<Option<_>>()?;
    if !slices.iter().any(|s| s.columns.is_some()) && !single && !needs.is_empty() {
        return None;
    }
    // The principal's columns are the topmost list's; a name it does not hold is not this object's.
    let shown = slices.iter().rev().find_map(|s| s.columns.as_ref());
    let mut conds = BTreeSet::new();
    'need: for (name, kind) in needs {
        let mut name = norm(name);
        if shown.is_some_and(|cols| !cols.iter().any(|c| c.name == name)) {
            continue;
        }
        for (j, s) in slices.iter().enumerate().skip(i).rev() {
            let Some(cols) = &s.columns else { continue };
            // A layer names what the one below it does not have: not typed.
            let c = cols.iter().find(|c| c.name == name)?;
            match plain(c) {
                Some(under) => name = under,
                None if j == i => continue 'need,
                None => return None,
            }
        }
        conds.insert(kind.safe(&ident(&name)));
    }
    Some(conds.into_iter().collect::<Vec<_>>().join(" AND "))
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

/// One layer (see the module's comment). `typed`: `None` for the full guard, `Some("")` for
/// none, `Some(c)` for the guard that DuckDB folds to the plain columns where `c` holds.
fn layer_sql(inner: &str, i: usize, layer: &Slice, typed: Option<&str>) -> String {
    let from = format!("FROM {inner} AS \"__acl_l{i}\"");
    let Some(p) = &layer.rls else {
        return match &layer.columns {
            None => format!("SELECT * {from}"),
            Some(cols) => format!("SELECT {} {from}", column_list(cols, |e| format!("({e})"))),
        };
    };
    let guard = match typed {
        Some("") => None,
        Some(c) => Some(format!("CASE WHEN {c} OR ({p}) THEN COLUMNS(*) END")),
        None => Some(format!("CASE WHEN ({p}) THEN COLUMNS(*) END")),
    };
    let filter = format!("{from} WHERE ({p})");
    match (&layer.columns, guard) {
        (None, None) => format!("SELECT * {filter}"),
        (None, Some(g)) => format!("SELECT {g} {filter}"),
        // No guard: the masks are guarded by the predicate on the input itself.
        (Some(cols), None) => format!("SELECT {} {filter}", column_list(cols, |e| format!("CASE WHEN ({p}) THEN ({e}) END"))),
        (Some(cols), Some(g)) => {
            let masked = cols.iter().any(|c| plain(c).is_none());
            let ok = if masked { format!(", ({p}) AS \"__acl_ok\"") } else { String::new() };
            let outer = column_list(cols, |e| format!("CASE WHEN \"__acl_ok\" THEN ({e}) END"));
            format!("SELECT {outer} FROM (SELECT {g}{ok} {filter}) AS \"__acl_g{i}\"")
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
