//! Rule: the write check for a RENAME-form target whose grants slice it (surface §4).
//!
//! - UPDATE/DELETE/MERGE: the slice's predicate is AND-ed into the statement's own WHERE / ON,
//!   qualified by the target's alias so a source column of the same name cannot capture it.
//! - Every row written is checked: UPDATE and MERGE assignments become
//!   `CASE WHEN <predicate on the new row> THEN <value> ELSE error('acl: …') END`, and INSERT
//!   reads its rows through `SELECT * FROM (<source>) AS "__acl_new"(cols) WHERE CASE WHEN
//!   <predicate> THEN true ELSE error('acl: …') END`. One bad row fails the whole statement.
//! - Only the grant's plain columns are writable, and a statement on a column-restricted target
//!   may reference (unqualified or through the target) only those columns.
//!
//! Targets with the object's own COLUMNS/RLS, or a grant column mask, stay read-only.
use super::slices::substitute_claims;
use crate::authz::{Layer, Resolved, View};
use crate::error::{AclError, Result};
use crate::policy::norm;
use sqlparser::ast::{
    Assignment, AssignmentTarget, BinaryOperator, Expr, Ident, ObjectName, ObjectNamePart, Query, SetExpr,
    TableFactor, Visit, VisitMut, Visitor, VisitorMut,
};
use sqlparser::ast::helpers::attached_token::AttachedToken;
use sqlparser::dialect::DuckDbDialect;
use sqlparser::parser::Parser;
use std::collections::{BTreeSet, HashMap};
use std::ops::ControlFlow;

/// What a write to one target must respect.
pub(super) struct WriteSlice {
    /// The grants' predicates (claims already substituted), over the target's columns.
    pred: Option<Expr>,
    /// `None`: every column is writable.
    writable: Option<BTreeSet<String>>,
    /// The virtual name, for messages.
    object: String,
}

/// `Ok(None)`: the target is not sliced. Refuses targets that cannot be written at all.
pub(super) fn for_target(view: &View<'_>, r: &Resolved<'_>, layers: &[Layer<'_>]) -> Result<Option<WriteSlice>> {
    if layers.is_empty() {
        return Ok(None);
    }
    let read_only = || {
        AclError::refused(format!("{} is read-only for {}: it has a column mask, a computed column or its own row policy", r.key, view.label))
    };
    if !r.relation.slice.is_empty() {
        return Err(read_only());
    }
    let mut preds = Vec::new();
    let mut writable: Option<BTreeSet<String>> = None;
    for layer in layers {
        // The union of roles that show different columns: which role's slice a written row
        // falls under is not one answer, so such a target is read-only.
        let Layer::Slice(layer) = layer else { return Err(read_only()) };
        if let Some(cols) = &layer.columns {
            if cols.iter().any(|c| c.expr.is_some()) {
                return Err(read_only());
            }
            let names: BTreeSet<String> = cols.iter().map(|c| c.name.clone()).collect();
            writable = Some(match writable {
                None => names,
                Some(w) => w.intersection(&names).cloned().collect(),
            });
        }
        if let Some(p) = &layer.rls {
            preds.push(parse_expr(p)?);
        }
    }
    let mut pred = preds.into_iter().reduce(|a, b| and(nested(a), nested(b)));
    if let Some(p) = &mut pred {
        substitute_claims(view, p)?;
    }
    Ok(Some(WriteSlice { pred, writable, object: r.key.to_string() }))
}

fn parse_expr(sql: &str) -> Result<Expr> {
    Parser::new(&DuckDbDialect {})
        .try_with_sql(sql)
        .and_then(|mut p| p.parse_expr())
        .map_err(|_| AclError::internal("a policy predicate did not parse"))
}

fn nested(e: Expr) -> Expr {
    Expr::Nested(Box::new(e))
}

fn and(a: Expr, b: Expr) -> Expr {
    Expr::BinaryOp { left: Box::new(a), op: BinaryOperator::And, right: Box::new(b) }
}

fn column_of(name: &ObjectName) -> Option<String> {
    match name.0.last() {
        Some(ObjectNamePart::Identifier(i)) => Some(norm(&i.value)),
        _ => None,
    }
}

impl WriteSlice {
    fn outside(&self, verb: &str) -> Expr {
        let msg = format!("acl: a row written by {verb} is outside the principal's slice of {}", self.object);
        parse_expr(&format!("error('{}')", msg.replace('\'', "''"))).expect("a literal call parses")
    }

    pub(super) fn restricts_columns(&self) -> bool {
        self.writable.is_some()
    }

    fn require_writable(&self, col: &str) -> Result<()> {
        match &self.writable {
            Some(w) if !w.contains(col) => {
                Err(AclError::refused(format!("column \"{col}\" of {} is not writable", self.object)))
            }
            _ => Ok(()),
        }
    }

    /// On a column-restricted target, refuse references to columns outside the grant: an
    /// unqualified name or one qualified by the target's alias.
    pub(super) fn check_reads<V: Visit>(&self, node: &V, alias: Option<&str>) -> Result<()> {
        let Some(w) = &self.writable else { return Ok(()) };
        let mut check = ColumnRefs { visible: w, alias: alias.map(norm), object: &self.object };
        match node.visit(&mut check) {
            ControlFlow::Break(e) => Err(e),
            ControlFlow::Continue(()) => Ok(()),
        }
    }

    /// The predicate, qualified by the target's alias.
    fn pred_on(&self, alias: &str) -> Option<Expr> {
        let mut p = self.pred.clone()?;
        let _ = VisitMut::visit(&mut p, &mut Qualify { alias });
        Some(nested(p))
    }

    /// UPDATE/DELETE/MERGE: AND the predicate into the WHERE (or ON) clause. The statement's own
    /// condition is guarded by the predicate (`CASE WHEN <pred> THEN <own> ELSE false END`): DuckDB
    /// may evaluate the conjuncts in any order, and the principal's own condition (an `error()`, a
    /// failing cast) must never run on a row outside the slice.
    pub(super) fn restrict(&self, selection: &mut Option<Expr>, alias: &str) {
        if let Some(p) = self.pred_on(alias) {
            *selection = Some(match selection.take() {
                Some(s) => and(p.clone(), guard(p, s, Expr::value(sqlparser::ast::Value::Boolean(false)))),
                None => p,
            });
        }
    }

    /// UPDATE and MERGE … UPDATE: only writable columns, and the new row must stay in the slice.
    pub(super) fn check_assignments(&self, assignments: &mut [Assignment], alias: &str, verb: &str) -> Result<()> {
        let mut new_values: HashMap<String, Expr> = HashMap::new();
        for a in assignments.iter() {
            let AssignmentTarget::ColumnName(name) = &a.target else {
                return Err(AclError::refused(format!("tuple assignments to {} are not supported", self.object)));
            };
            let col = column_of(name).ok_or_else(|| AclError::refused("this assignment form is not supported"))?;
            self.require_writable(&col)?;
            new_values.insert(col, a.value.clone());
        }
        let Some(mut new_row) = self.pred_on(alias) else { return Ok(()) };
        let mut sub = Substitute { alias, values: &new_values, touched: false };
        let _ = VisitMut::visit(&mut new_row, &mut sub);
        if !sub.touched {
            return Ok(()); // no assigned column is part of the predicate: WHERE already holds it
        }
        for a in assignments.iter_mut() {
            let value = std::mem::replace(&mut a.value, Expr::value(sqlparser::ast::Value::Null));
            a.value = guard(new_row.clone(), value, self.outside(verb));
        }
        Ok(())
    }

    /// MERGE … INSERT (cols) VALUES (…): each value checked against the predicate on its row.
    pub(super) fn check_insert_values(&self, columns: &[ObjectName], rows: &mut [Vec<Expr>]) -> Result<()> {
        let cols = self.insert_columns(columns)?;
        let Some(pred) = &self.pred else { return Ok(()) };
        for row in rows.iter_mut() {
            let values: HashMap<String, Expr> = cols.iter().cloned().zip(row.iter().cloned()).collect();
            let mut check = pred.clone();
            let _ = VisitMut::visit(&mut check, &mut Substitute { alias: "", values: &values, touched: false });
            for v in row.iter_mut() {
                let value = std::mem::replace(v, Expr::value(sqlparser::ast::Value::Null));
                *v = guard(nested(check.clone()), value, self.outside("MERGE"));
            }
        }
        Ok(())
    }

    /// The INSERT column list, which must be given, writable, and cover the predicate.
    fn insert_columns(&self, columns: &[ObjectName]) -> Result<Vec<String>> {
        if columns.is_empty() {
            return Err(AclError::refused(format!(
                "an INSERT into {} must list its columns (the target has a row or column policy)",
                self.object
            )));
        }
        let cols: Vec<String> = columns.iter().filter_map(column_of).collect();
        for c in &cols {
            self.require_writable(c)?;
        }
        if let Some(pred) = &self.pred {
            let mut missing = None;
            let _ = pred.visit(&mut Idents(&mut |name: &str| {
                if missing.is_none() && !cols.iter().any(|c| c == name) {
                    missing = Some(name.to_string());
                }
            }));
            if let Some(m) = missing {
                return Err(AclError::refused(format!(
                    "an INSERT into {} must set column \"{m}\" (it is part of the row policy)",
                    self.object
                )));
            }
        }
        Ok(cols)
    }

    /// INSERT: read the rows through a checking SELECT.
    pub(super) fn wrap_insert_source(&self, columns: &[ObjectName], source: &mut Option<Box<Query>>) -> Result<()> {
        let cols = self.insert_columns(columns)?;
        let Some(pred) = &self.pred else { return Ok(()) };
        let Some(src) = source.take() else {
            return Err(AclError::refused(format!("INSERT … DEFAULT VALUES into {} is not supported", self.object)));
        };
        let col_list = cols.iter().map(|c| super::relations::quoted_sql(c)).collect::<Vec<_>>().join(", ");
        let sql = format!(
            "SELECT * FROM (SELECT 1) AS \"__acl_new\" ({col_list}) WHERE CASE WHEN ({pred}) THEN true ELSE {} END",
            self.outside("INSERT")
        );
        let mut wrapper = Parser::new(&DuckDbDialect {})
            .try_with_sql(&sql)
            .and_then(|mut p| p.parse_query())
            .map_err(|_| AclError::internal("the insert check did not parse"))?;
        let SetExpr::Select(select) = wrapper.body.as_mut() else {
            return Err(AclError::internal("the insert check has an unexpected shape"));
        };
        match select.from.first_mut().map(|t| &mut t.relation) {
            Some(TableFactor::Derived { subquery, .. }) => *subquery = src,
            _ => return Err(AclError::internal("the insert check has an unexpected shape")),
        }
        *source = Some(wrapper);
        Ok(())
    }
}

fn guard(cond: Expr, value: Expr, error: Expr) -> Expr {
    Expr::Case {
        case_token: AttachedToken::empty(),
        end_token: AttachedToken::empty(),
        operand: None,
        conditions: vec![sqlparser::ast::CaseWhen { condition: cond, result: nested(value) }],
        else_result: Some(Box::new(error)),
    }
}

/// Qualifies the predicate's bare column names with the target's alias.
struct Qualify<'a> {
    alias: &'a str,
}

impl VisitorMut for Qualify<'_> {
    type Break = ();
    fn pre_visit_expr(&mut self, e: &mut Expr) -> ControlFlow<()> {
        if let Expr::Identifier(id) = e {
            *e = Expr::CompoundIdentifier(vec![Ident::with_quote('"', self.alias), id.clone()]);
        }
        ControlFlow::Continue(())
    }
}

/// Replaces the target's columns (bare or `alias.col`) with the values a write assigns them.
struct Substitute<'a> {
    alias: &'a str,
    values: &'a HashMap<String, Expr>,
    touched: bool,
}

impl VisitorMut for Substitute<'_> {
    type Break = ();
    fn post_visit_expr(&mut self, e: &mut Expr) -> ControlFlow<()> {
        let col = match e {
            Expr::Identifier(id) => Some(norm(&id.value)),
            Expr::CompoundIdentifier(parts) if parts.len() == 2 && parts[0].value == self.alias => {
                Some(norm(&parts[1].value))
            }
            _ => None,
        };
        if let Some(v) = col.and_then(|c| self.values.get(&c)) {
            *e = nested(v.clone());
            self.touched = true;
        }
        ControlFlow::Continue(())
    }
}

/// Calls `f` with every bare column name of an expression.
struct Idents<'f>(&'f mut dyn FnMut(&str));

impl Visitor for Idents<'_> {
    type Break = ();
    fn pre_visit_expr(&mut self, e: &Expr) -> ControlFlow<()> {
        if let Expr::Identifier(id) = e {
            (self.0)(&norm(&id.value));
        }
        ControlFlow::Continue(())
    }
}

struct ColumnRefs<'a> {
    visible: &'a BTreeSet<String>,
    alias: Option<String>,
    object: &'a str,
}

impl Visitor for ColumnRefs<'_> {
    type Break = AclError;
    fn pre_visit_expr(&mut self, e: &Expr) -> ControlFlow<AclError> {
        let col = match e {
            Expr::Identifier(id) => Some(norm(&id.value)),
            Expr::CompoundIdentifier(parts) if parts.len() == 2 && Some(norm(&parts[0].value)) == self.alias => {
                Some(norm(&parts[1].value))
            }
            _ => None,
        };
        match col {
            Some(c) if !self.visible.contains(&c) => ControlFlow::Break(AclError::refused(format!(
                "column \"{c}\" of {} is not granted (qualify columns of other tables)",
                self.object
            ))),
            _ => ControlFlow::Continue(()),
        }
    }
}
