//! MERGE into a sliced target: every branch confined to the slice (spec 002, "MERGE").
//!
//! DuckDB joins source and target (INNER; LEFT with a WHEN NOT MATCHED [BY TARGET] clause;
//! RIGHT/FULL with a WHEN NOT MATCHED BY SOURCE clause) under one projection
//! (`bind_merge_into.cpp`): every clause's UPDATE SET / INSERT values, and the column references
//! and subqueries of every clause's condition, are evaluated there for *every* joined row; the
//! rest of a condition is evaluated later, only on the rows of its category that no earlier
//! clause took (`physical_merge_into.cpp`). The slice predicate `P` in ON keeps hidden target rows
//! from matching, so with a BY SOURCE clause they are all in the join as "not matched by source".
//! Hence:
//! - `ON := P AND CASE WHEN P THEN <own> ELSE false END`;
//! - a BY SOURCE condition becomes `CASE WHEN <target row> AND P THEN <own> ELSE false END`
//!   (`P` alone when it had none): hidden rows are never taken, never evaluated;
//! - each joined row's category is made visible to the values: with a BY SOURCE clause the
//!   source is wrapped as `(SELECT true AS "__acl_src", * FROM <source>) AS <its name>` (a source
//!   row is present), and `<target>.rowid IS NOT NULL` tells a target row is present; every value
//!   (with the write check inside) runs only where its clause takes the row — its category, no
//!   earlier clause of the category, its own condition — where hidden rows are in the join, and
//!   wherever it carries a write check. DuckDB binds WHEN NOT MATCHED clauses over the source
//!   alone and BY SOURCE clauses over the target alone, so their category is told only from the
//!   side they see;
//! - subqueries are planned as joins over all joined rows (no CASE guards what is inside them):
//!   they are refused in ON, and in every clause when there is a BY SOURCE clause.
use crate::sqltext::Walk as _;
use super::{and, boolean, guard, is_default, WriteSlice};
use crate::error::{AclError, MergeForm, Result, SlicedWrite, Unsupported};
use sqlparser::ast::{
    CaseWhen, Expr, Ident, Merge, MergeAction, MergeClause, MergeClauseKind, MergeInsertKind, MergeUpdateKind,
    ObjectNamePart, OutputClause, Query, SetExpr, TableAlias, TableFactor, Visit, Visitor,
};
use sqlparser::ast::helpers::attached_token::AttachedToken;
use sqlparser::dialect::DuckDbDialect;
use sqlparser::parser::Parser;
use std::ops::ControlFlow;

/// Marks a source row in the wrapped MERGE source.
const MARKER: &str = "__acl_src";

#[derive(Clone, Copy, PartialEq, Eq)]
enum Category {
    Matched,
    NotMatched,
    BySource,
}

fn category(c: &MergeClause) -> Category {
    match c.clause_kind {
        MergeClauseKind::Matched => Category::Matched,
        MergeClauseKind::NotMatched | MergeClauseKind::NotMatchedByTarget => Category::NotMatched,
        MergeClauseKind::NotMatchedBySource => Category::BySource,
    }
}

fn label(c: Category) -> &'static str {
    match c {
        Category::Matched => "WHEN MATCHED",
        Category::NotMatched => "WHEN NOT MATCHED",
        Category::BySource => "WHEN NOT MATCHED BY SOURCE",
    }
}

pub(super) fn confine(w: &WriteSlice, m: &mut Merge, alias: &str) -> Result<()> {
    for c in &m.clauses {
        supported(w, c)?;
    }
    reachable(&m.clauses)?;
    check_columns(w, m, alias)?;
    let by_source = m.clauses.iter().any(|c| category(c) == Category::BySource);
    let not_matched = m.clauses.iter().any(|c| category(c) == Category::NotMatched);
    let pred = w.pred_on(alias);
    if pred.is_some() {
        if has_subquery(&*m.on) {
            return Err(SlicedWrite::SubqueryInMergeOn { object: w.object.clone() }.into());
        }
        if by_source && m.clauses.iter().any(clause_has_subquery) {
            return Err(SlicedWrite::SubqueryInBySourceClause { object: w.object.clone() }.into());
        }
    }
    let mut on = Some(std::mem::replace(m.on.as_mut(), boolean(true)));
    w.restrict(&mut on, alias);
    *m.on = on.expect("restrict keeps the condition");

    // What tells each joined row's category (None: every row DuckDB puts in it is one).
    let (mut matched, mut unmatched, mut unmatched_source) = (None, None, None);
    if let Some(p) = &pred {
        let target = present(Ident::with_quote('"', alias), Ident::new("rowid"));
        let source = if by_source { Some(present(wrap_source(&mut m.source)?, Ident::with_quote('"', MARKER))) } else { None };
        matched = all([source.clone(), not_matched.then(|| target.clone())]);
        unmatched = source;
        unmatched_source = Some(and(target, p.clone()));
    }
    let mut earlier: Vec<(Category, Option<Expr>)> = Vec::new();
    for clause in &mut m.clauses {
        let cat = category(clause);
        let cat_expr = match cat {
            Category::Matched => matched.clone(),
            Category::NotMatched => unmatched.clone(),
            Category::BySource => unmatched_source.clone(),
        };
        let own = clause.predicate.take();
        let before: Vec<Expr> = earlier.iter().filter(|(c, _)| *c == cat).filter_map(|(_, e)| e.clone()).collect();
        let takes = taking(cat_expr.clone(), &before, own.clone());
        // DuckDB evaluates a condition (all but its subqueries) only on the rows of its category
        // that no earlier clause took; the hidden rows are all "not matched by source".
        clause.predicate = match (cat_expr, own.clone()) {
            (Some(c), Some(o)) if cat == Category::BySource => Some(guard(c, o, Some(boolean(false)))),
            (Some(c), None) if cat == Category::BySource => Some(c),
            (_, o) => o,
        };
        earlier.push((cat, own));
        // Values run on every joined row: guarded where hidden rows are in the join, and where
        // they carry a write check (it must fire only for a row this clause writes).
        let checked = match &mut clause.action {
            MergeAction::Update(u) => match &mut u.kind {
                MergeUpdateKind::Set(assignments) => w.check_assignments(assignments, alias, "MERGE")?,
                MergeUpdateKind::Wildcard => false,
            },
            MergeAction::Insert(ins) => match &mut ins.kind {
                MergeInsertKind::Values(values) => {
                    let mut rows: Vec<Vec<Expr>> = values.rows.iter().map(|r| r.content.clone()).collect();
                    w.check_insert_values(&mut ins.columns, &mut rows)?;
                    for (r, new) in values.rows.iter_mut().zip(rows) {
                        r.content = new;
                    }
                    pred.is_some()
                }
                _ => false,
            },
            MergeAction::Delete { .. } | MergeAction::DoNothing { .. } => false,
        };
        let Some(takes) = takes.filter(|_| pred.is_some() && (by_source || checked)) else { continue };
        let wrap = |v: &mut Expr| {
            if !is_default(v) {
                let value = std::mem::replace(v, boolean(false));
                *v = guard(takes.clone(), value, None);
            }
        };
        match &mut clause.action {
            MergeAction::Update(u) => {
                if let MergeUpdateKind::Set(assignments) = &mut u.kind {
                    assignments.iter_mut().for_each(|a| wrap(&mut a.value));
                }
            }
            MergeAction::Insert(ins) => {
                if let MergeInsertKind::Values(values) = &mut ins.kind {
                    values.rows.iter_mut().for_each(|r| r.content.iter_mut().for_each(wrap));
                }
            }
            MergeAction::Delete { .. } | MergeAction::DoNothing { .. } => {}
        }
    }
    Ok(())
}

/// Forms whose rows the check could not follow, with what to write instead.
fn supported(w: &WriteSlice, c: &MergeClause) -> Result<()> {
    let refuse = |form: MergeForm| -> Result<()> { Err(SlicedWrite::MergeClause { object: w.object.clone(), form }.into()) };
    match &c.action {
        MergeAction::Update(u) if u.update_predicate.is_some() || u.delete_predicate.is_some() => {
            refuse(MergeForm::UpdateWhere)
        }
        MergeAction::Update(u) if matches!(u.kind, MergeUpdateKind::Wildcard) => {
            refuse(MergeForm::UpdateSetStar)
        }
        MergeAction::Insert(i) if i.insert_predicate.is_some() => {
            refuse(MergeForm::InsertWhere)
        }
        MergeAction::Insert(i) if !matches!(i.kind, MergeInsertKind::Values(_)) => {
            refuse(MergeForm::InsertStar)
        }
        _ => Ok(()),
    }
}

/// DuckDB refuses a clause after an unconditional one of the same category; the guards below
/// would give every clause a condition, so the rule is kept here.
fn reachable(clauses: &[MergeClause]) -> Result<()> {
    for (i, c) in clauses.iter().enumerate() {
        let cat = category(c);
        if c.predicate.is_none() && clauses[i + 1..].iter().any(|d| category(d) == cat) {
            return Err(Unsupported::UnreachableMergeClause { category: label(cat) }.into());
        }
    }
    Ok(())
}

/// The column rule (a no-op when every column is granted). WHEN NOT MATCHED clauses are bound
/// over the source alone: DuckDB cannot reach the target from them.
fn check_columns(w: &WriteSlice, m: &Merge, alias: &str) -> Result<()> {
    const EXTRA: &[&str] = &["merge_action"];
    let cols = w.columns(m, Some(alias), EXTRA);
    cols.expr(&*m.on)?;
    for c in m.clauses.iter().filter(|c| category(c) != Category::NotMatched) {
        cols.expr(&c.predicate)?;
        if let MergeAction::Update(u) = &c.action {
            if let MergeUpdateKind::Set(assignments) = &u.kind {
                assignments.iter().try_for_each(|a| cols.expr(&a.value))?;
            }
        }
    }
    match &m.output {
        Some(OutputClause::Returning { select_items, .. }) => cols.returning(select_items),
        _ => Ok(()),
    }
}

/// `CASE WHEN <category> THEN (first clause of the category whose condition holds is this
/// one) ELSE false END`; `None` when every row qualifies.
fn taking(cat: Option<Expr>, before: &[Expr], own: Option<Expr>) -> Option<Expr> {
    let first = if before.is_empty() {
        own
    } else {
        let mut conditions: Vec<CaseWhen> =
            before.iter().map(|c| CaseWhen { condition: c.clone(), result: boolean(false) }).collect();
        let otherwise = match own {
            Some(o) => {
                conditions.push(CaseWhen { condition: o, result: boolean(true) });
                false
            }
            None => true,
        };
        Some(Expr::Case {
            case_token: AttachedToken::empty(),
            end_token: AttachedToken::empty(),
            operand: None,
            conditions,
            else_result: Some(Box::new(boolean(otherwise))),
        })
    };
    match (cat, first) {
        (Some(c), Some(f)) => Some(guard(c, f, Some(boolean(false)))),
        (c, f) => c.or(f),
    }
}

fn all<const N: usize>(parts: [Option<Expr>; N]) -> Option<Expr> {
    parts.into_iter().flatten().reduce(and)
}

/// `<q>.<col> IS NOT NULL`
fn present(q: Ident, col: Ident) -> Expr {
    Expr::IsNotNull(Box::new(Expr::CompoundIdentifier(vec![q, col])))
}

/// Wraps the source so each of its rows carries the marker (first, so a source column of the
/// same name cannot stand for it); returns the name its columns are qualified by.
fn wrap_source(source: &mut TableFactor) -> Result<Ident> {
    let last = |name: &sqlparser::ast::ObjectName| match name.0.last() {
        Some(ObjectNamePart::Identifier(i)) => Some(i.clone()),
        _ => None,
    };
    let name = match source {
        TableFactor::Table { alias: Some(a), .. }
        | TableFactor::Derived { alias: Some(a), .. }
        | TableFactor::UNNEST { alias: Some(a), .. } => Some(a.name.clone()),
        TableFactor::Table { name, alias: None, .. } => last(name),
        TableFactor::Derived { alias: None, .. } => Some(Ident::with_quote('"', "__acl_source")),
        _ => None,
    };
    let Some(name) = name else {
        return Err(Unsupported::MergeSource.into());
    };
    let sql = format!("SELECT true AS \"{MARKER}\", * FROM (SELECT 1) AS \"__acl_x\"");
    let mut query: Box<Query> = Parser::new(&DuckDbDialect {})
        .try_with_sql(&sql)
        .and_then(|mut p| p.parse_query())
        .map_err(|_| AclError::internal("the MERGE source wrapper did not parse"))?;
    let SetExpr::Select(select) = query.body.as_mut() else {
        return Err(AclError::internal("the MERGE source wrapper has an unexpected shape"));
    };
    let Some(from) = select.from.first_mut() else {
        return Err(AclError::internal("the MERGE source wrapper has an unexpected shape"));
    };
    // the principal's source moves into the wrapper's FROM; the wrapper takes its place
    std::mem::swap(&mut from.relation, source);
    *source = TableFactor::Derived {
        lateral: false,
        subquery: query,
        alias: Some(TableAlias { explicit: true, name: name.clone(), columns: vec![], at: None }),
        sample: None,
    };
    Ok(name)
}

fn has_subquery<V: Visit>(node: &V) -> bool {
    struct Found;
    impl Visitor for Found {
        type Break = ();
        fn pre_visit_query(&mut self, _: &Query) -> ControlFlow<()> {
            ControlFlow::Break(())
        }
    }
    node.walk(&mut Found).is_break()
}

fn clause_has_subquery(c: &MergeClause) -> bool {
    has_subquery(&c.predicate) || has_subquery(&c.action)
}
