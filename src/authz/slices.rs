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
//! "Leak-proof pushdown"), what guards a layer depends on the types of the columns the statement
//! compares with literals. Those the hook cannot read (no transaction yet), so the SQL asks
//! DuckDB: `CASE WHEN "system".main.acl_leakproof('<column>', '<kind>', col) … OR (<rls>) THEN
//! COLUMNS(*) END`, which DuckDB folds at bind time to the plain columns (filters and join
//! filters reach the scan, statistics are kept) or to the full guard. The function also reports
//! the type (`types::ColumnTypes`), so the next rewrite knows it: known safe, the layer has no
//! guard, only `AND "system".main.acl_leakproof_strict('<kind>', col)` in its filter (folded to
//! TRUE, or the statement is refused if the type changed since, and every type is forgotten); known unsafe, the full guard. With nothing
//! to compare there is no guard at all.
//! `acl_claim('k')` becomes the claim's value as a SQL literal (NULL when missing).
use crate::sqltext::WalkMut as _;
use super::{Layer, View};
use crate::error::{AclError, Result};
use super::types::{ColumnTypes, Known};
use crate::policy::{norm, Column, PhysName, RelationKind, Slice};
use crate::sqltext::ident;
use sqlparser::ast::{Expr, Query, Value, VisitorMut};
use sqlparser::dialect::DuckDbDialect;
use sqlparser::parser::Parser;
use std::collections::BTreeSet;
use std::fmt::Write;
use std::ops::ControlFlow;

/// The functions the typed guard's SQL and the ENUM cast call inside a slice
/// (`"system".main.<name>`): ours, the only `acl_*` calls the second check lets stand in policy
/// SQL (spec 011).
pub const PROBE_FNS: [&str; 3] = ["acl_leakproof", "acl_leakproof_strict", super::enums::ENUM_FN[2]];

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
    /// Whether a column of DuckDB type `ty` (`LogicalType::ToString`) compares with a literal of
    /// this kind without a cast that can fail on a row (probed on DuckDB 2.0: spec 002).
    pub fn admits(self, ty: &str) -> bool {
        const INTS: [&str; 5] = ["TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT"];
        match self {
            LitKind::Number => {
                let int = ty.strip_prefix('U').unwrap_or(ty);
                INTS.contains(&int) || matches!(ty, "FLOAT" | "DOUBLE") || decimal_scale(ty).is_some_and(|s| s <= 18)
            }
            LitKind::Text => ty == "VARCHAR",
            LitKind::Bool => ty == "BOOLEAN",
            LitKind::Temporal => matches!(ty, "DATE" | "TIMESTAMP" | "TIMESTAMP WITH TIME ZONE"),
        }
    }

    /// The letter the guard's SQL carries (`acl_leakproof(key, kind, col)`).
    pub fn code(self) -> &'static str {
        match self {
            LitKind::Number => "N",
            LitKind::Text => "T",
            LitKind::Bool => "B",
            LitKind::Temporal => "D",
        }
    }

    pub fn from_code(code: &str) -> Option<LitKind> {
        Some(match code {
            "N" => LitKind::Number,
            "T" => LitKind::Text,
            "B" => LitKind::Bool,
            "D" => LitKind::Temporal,
            _ => return None,
        })
    }
}

/// The scale of `DECIMAL(w,s)`.
fn decimal_scale(ty: &str) -> Option<u32> {
    let (w, s) = ty.strip_prefix("DECIMAL(")?.strip_suffix(')')?.split_once(',')?;
    let digits = |x: &str| !x.is_empty() && x.len() <= 2 && x.bytes().all(|b| b.is_ascii_digit());
    (digits(w) && digits(s)).then(|| s.parse().ok()).flatten()
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
    subquery_as(view, source, layers, guard, false)
}

/// `subquery`, with ENUM columns shown as VARCHAR when `varchar` (spec 021): the
/// whole of it is read through `SELECT "system".main.acl_enum_varchar(COLUMNS(*)) FROM (…)`,
/// above every layer's filter (the policy's predicates and masks read the physical values and
/// types).
pub fn subquery_as(view: &View<'_>, source: &RelationKind, layers: &[Layer<'_>], guard: Guard<'_>, varchar: bool) -> Result<Box<Query>> {
    let mut sql = match source {
        RelationKind::Table(t) => format!("{}.{}.{}", ident(&t.db), ident(&t.schema), ident(&t.name)),
        RelationKind::View(q) => format!("({q})"),
    };
    // A virtual view's body is the operator's SQL: a principal's predicate pushed into it would
    // run the body's expressions on hidden rows. Only tables take the typed guard.
    let (guard, table) = match source {
        RelationKind::Table(t) => (guard, Some(t)),
        RelationKind::View(_) => (Guard::Full, None),
    };
    if layers.is_empty() {
        let items = if varchar { super::enums::ENUM_COLUMNS } else { "*" };
        sql = format!("SELECT {items} FROM {sql} AS \"__acl_v\"");
    }
    for (i, layer) in layers.iter().enumerate() {
        let inner = if i == 0 { sql } else { format!("({sql})") };
        sql = match layer {
            Layer::Slice(slice) => {
                let typing = match table {
                    Some(t) => typing(layers, i, guard, t, view.types),
                    None => Typing::Full,
                };
                layer_sql(&inner, i, slice, &typing)
            }
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
        (kind, _) => subquery(view, kind, layers, Guard::Full)?.to_string(),
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

/// What guards layer `i` (over that layer's input) under `Guard::Typed`.
#[derive(Debug, PartialEq, Eq)]
enum Typing {
    /// Every column guarded by the layer's predicate.
    Full,
    /// No guard. `checks` (may be empty) are `acl_leakproof_strict(kind, col)` calls AND-ed to the layer's
    /// filter: each compared column is known (`ColumnTypes`) to be safe, and DuckDB folds each
    /// call to TRUE at bind time, or refuses the statement if the type changed since.
    Plain { checks: String },
    /// `CASE WHEN <probe> OR (<rls>) THEN COLUMNS(*) END`: `acl_leakproof` calls that DuckDB
    /// folds, by the types it binds, to the plain columns or the full guard (and that report
    /// the types for the next rewrite).
    Probe(String),
}

/// Each pair's name is followed from the principal's columns (the last layer's) down to layer
/// `i`'s input: a name no layer lists is not this object's and needs nothing; a name masked above
/// layer `i` keeps the full guard (the mask's output is what is compared, and its type is not
/// known here); a name masked at layer `i` is guarded by the mask's own guard. Without any column
/// list the object's names are not known: an unqualified name may be another relation's, so only
/// a single-relation statement is typed. Below layer `i` the name is followed on to the table's
/// column, whose type `types` may know.
fn typing(layers: &[Layer<'_>], i: usize, guard: Guard<'_>, source: &PhysName, types: Option<&ColumnTypes>) -> Typing {
    let Guard::Typed { needs, single } = guard else { return Typing::Full };
    let Some(slices) = layers
        .iter()
        .map(|l| match l {
            Layer::Slice(s) => Some(&**s),
            Layer::Open { .. } => None,
        })
        .collect::<Option<Vec<&Slice>>>()
    else {
        return Typing::Full;
    };
    if !slices.iter().any(|s| s.columns.is_some()) && !single && !needs.is_empty() {
        return Typing::Full;
    }
    // The principal's columns are the topmost list's; a name it does not hold is not this object's.
    let shown = slices.iter().rev().find_map(|s| s.columns.as_ref());
    let mut found = BTreeSet::new();
    'need: for (name, kind) in needs {
        let mut name = norm(name);
        if shown.is_some_and(|cols| !cols.iter().any(|c| c.name == name)) {
            continue;
        }
        for (j, s) in slices.iter().enumerate().skip(i).rev() {
            let Some(cols) = &s.columns else { continue };
            // A layer names what the one below it does not have: not typed.
            let Some(c) = cols.iter().find(|c| c.name == name) else { return Typing::Full };
            match plain(c) {
                Some(under) => name = under,
                None if j == i => continue 'need,
                None => return Typing::Full,
            }
        }
        let mut phys = Some(name.clone());
        for s in slices[..i].iter().rev() {
            if let Some(cols) = &s.columns {
                phys = phys.and_then(|n| cols.iter().find(|c| c.name == n).and_then(plain));
            }
        }
        found.insert((name, phys.map(|p| ColumnTypes::key(source, &p)).unwrap_or_default(), *kind));
    }
    let known = |key: &str, kind| match types {
        Some(t) if !key.is_empty() => t.known(key, kind),
        _ => Known::Unknown,
    };
    let mut all_safe = true;
    for (_, key, kind) in &found {
        match known(key, *kind) {
            Known::Unsafe => return Typing::Full,
            Known::Unknown => all_safe = false,
            Known::Safe => {}
        }
    }
    // The strict check records nothing (no key: shorter for DuckDB's parser to read); the
    // probe's key is where the type it binds is recorded.
    let mut s = String::new();
    for (n, (name, key, kind)) in found.iter().enumerate() {
        let sep = if n > 0 { " AND " } else { "" };
        let (code, col) = (kind.code(), ident(name));
        let _ = match all_safe {
            true => write!(s, "{sep}\"system\".main.acl_leakproof_strict('{code}', {col})"),
            false => write!(s, "{sep}\"system\".main.acl_leakproof('{}', '{code}', {col})", key.replace('\'', "''")),
        };
    }
    if all_safe {
        Typing::Plain { checks: s }
    } else {
        Typing::Probe(s)
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
fn layer_sql(inner: &str, i: usize, layer: &Slice, typing: &Typing) -> String {
    let from = format!("FROM {inner} AS \"__acl_l{i}\"");
    let Some(p) = &layer.rls else {
        return match &layer.columns {
            None => format!("SELECT * {from}"),
            Some(cols) => format!("SELECT {} {from}", column_list(cols, |e| format!("({e})"))),
        };
    };
    let (guard, filter) = match typing {
        Typing::Plain { checks } if checks.is_empty() => (None, format!("{from} WHERE ({p})")),
        Typing::Plain { checks } => (None, format!("{from} WHERE ({p}) AND {checks}")),
        Typing::Probe(c) => (Some(format!("CASE WHEN {c} OR ({p}) THEN COLUMNS(*) END")), format!("{from} WHERE ({p})")),
        Typing::Full => (Some(format!("CASE WHEN ({p}) THEN COLUMNS(*) END")), format!("{from} WHERE ({p})")),
    };
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
