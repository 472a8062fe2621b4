//! Rule: the write check for a RENAME-form target whose grants slice it (surface §4, spec 002).
//!
//! - UPDATE/DELETE: the slice's predicate is AND-ed into the statement's WHERE, qualified by the
//!   target's alias so a source column of the same name cannot capture it; the statement's own
//!   condition is guarded by it.
//! - Every row written is checked: UPDATE assignments become
//!   `CASE WHEN <predicate on the new row> THEN <value> ELSE error('acl: …') END`, and INSERT
//!   reads its rows through `SELECT * FROM (<source>) AS "__acl_new"(cols) WHERE CASE WHEN
//!   <predicate> THEN true ELSE error('acl: …') END`. One bad row fails the whole statement.
//! - MERGE: every branch is confined to the slice (`merge`).
//! - Only the grant's plain columns are writable, and on a column-restricted target every
//!   expression the write evaluates names only granted columns (`columns`).
//!
//! Targets with the object's own COLUMNS/RLS, or a grant column mask, stay read-only.
mod columns;
pub(super) mod enums;
mod merge;
#[cfg(test)]
mod tests;

use crate::sqltext::{Walk as _, WalkMut};
use crate::authz::slices::substitute_claims;
use crate::authz::{Layer, Resolved, View};
use crate::error::{AclError, ReadOnly, Result, SlicedWrite, Unsupported};
use crate::policy::{norm, PhysName};
use sqlparser::ast::helpers::attached_token::AttachedToken;
use sqlparser::ast::{
    Assignment, AssignmentTarget, BinaryOperator, ConflictTarget, Delete, Expr, Ident, Insert, ObjectName,
    ObjectNamePart, OnConflictAction, OnInsert, Query, SetExpr, TableFactor, Update, Value, Visit, Visitor,
    VisitorMut,
};
use sqlparser::dialect::DuckDbDialect;
use sqlparser::parser::Parser;
use std::collections::{BTreeSet, HashMap};
use std::ops::ControlFlow;

/// What a write to one target must respect.
pub(super) struct WriteSlice {
    /// The grants' predicates (claims already substituted), over the target's columns.
    pred: Option<Expr>,
    /// `None`: every column is writable (and readable).
    writable: Option<BTreeSet<String>>,
    /// The virtual name, for messages.
    object: String,
    /// The names under which DuckDB may bind the target row (`columns`).
    names: columns::TargetNames,
}

/// `Ok(None)`: the target is not sliced. Refuses targets that cannot be written at all.
pub(super) fn for_target(
    view: &View<'_>,
    r: &Resolved<'_>,
    phys: &PhysName,
    layers: &[Layer<'_>],
) -> Result<Option<WriteSlice>> {
    if layers.is_empty() {
        return Ok(None);
    }
    let read_only = || {
        AclError::from(ReadOnly::Sliced { object: r.key.to_string(), principal: view.label.to_string() })
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
    let names = columns::TargetNames::new(&r.key, phys);
    Ok(Some(WriteSlice { pred, writable, object: r.key.to_string(), names }))
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

fn boolean(b: bool) -> Expr {
    Expr::value(Value::Boolean(b))
}

fn column_of(name: &ObjectName) -> Option<String> {
    match name.0.last() {
        Some(ObjectNamePart::Identifier(i)) => Some(norm(&i.value)),
        _ => None,
    }
}

/// `CASE WHEN <cond> THEN <value> ELSE <otherwise> END` (no ELSE: NULL).
fn guard(cond: Expr, value: Expr, otherwise: Option<Expr>) -> Expr {
    Expr::Case {
        case_token: AttachedToken::empty(),
        end_token: AttachedToken::empty(),
        operand: None,
        conditions: vec![sqlparser::ast::CaseWhen { condition: cond, result: nested(value) }],
        else_result: otherwise.map(Box::new),
    }
}

/// `DEFAULT` as a value: the column's default, not an expression of the principal's.
fn is_default(e: &Expr) -> bool {
    matches!(e, Expr::Identifier(i) if is_default_keyword(i))
}

fn is_default_keyword(i: &Ident) -> bool {
    i.quote_style.is_none() && i.value.eq_ignore_ascii_case("default")
}

/// The write check's refusal (cpp/shim.cpp): `error()`, but raised as a Permission Error, as
/// every other refusal of a principal is (spec 020).
pub const REFUSED_FN: [&str; 3] = ["system", "main", "acl_write_refused"];

impl WriteSlice {
    /// The columns the principal sees of a column-restricted target (`None`: every column).
    pub(super) fn visible(&self) -> Option<&BTreeSet<String>> {
        self.writable.as_ref()
    }

    fn outside(&self, verb: &str) -> Expr {
        let msg = format!("acl: a row written by {verb} is outside the principal's slice of {}", self.object);
        let [db, schema, name] = REFUSED_FN;
        parse_expr(&format!("\"{db}\".{schema}.{name}({})", crate::sqltext::literal(&msg))).expect("a literal call parses")
    }

    /// Only some columns are granted: the column rule refuses every star and `COLUMNS(…)` over the
    /// target (`columns`), so the ENUM cast leaves stars to it (`enums`).
    pub(super) fn column_restricted(&self) -> bool {
        self.writable.is_some()
    }

    /// The function names the predicate calls as written: the write check inlines it into the
    /// principal's statement, so the second check must expect them (spec 011).
    pub(super) fn policy_functions(&self) -> Vec<Vec<String>> {
        let mut out = Vec::new();
        if let Some(p) = &self.pred {
            let _ = p.walk(&mut Calls(&mut out));
        }
        out
    }

    fn require_writable(&self, col: &str) -> Result<()> {
        match &self.writable {
            Some(w) if !w.contains(col) => {
                Err(ReadOnly::Column { column: col.to_string(), object: self.object.clone() }.into())
            }
            _ => Ok(()),
        }
    }

    /// The predicate, qualified by the target's alias.
    fn pred_on(&self, alias: &str) -> Option<Expr> {
        let mut p = self.pred.clone()?;
        let _ = WalkMut::walk_mut(&mut p, &mut Qualify { alias });
        Some(nested(p))
    }

    /// AND the predicate into a WHERE (or ON) clause. The statement's own condition is guarded by
    /// the predicate (`CASE WHEN <pred> THEN <own> ELSE false END`): DuckDB may evaluate the
    /// conjuncts in any order, and the principal's own condition (an `error()`, a failing cast)
    /// must never run on a row outside the slice.
    ///
    /// A guarded condition is no join key, so DuckDB would join the target with a FROM item, a
    /// USING item or a MERGE source by a nested loop. Each `<target>.a = <other>.b` conjunct of the
    /// own condition is therefore repeated as `CASE WHEN <pred> THEN <target>.a END = <other>.b`:
    /// implied by the guarded condition, NULL on a row outside the slice, and a hash-join key.
    fn restrict(&self, selection: &mut Option<Expr>, alias: &str) {
        if let Some(p) = self.pred_on(alias) {
            *selection = Some(match selection.take() {
                Some(s) => {
                    let mut keys = Vec::new();
                    self.join_keys(&s, alias, &p, &mut keys);
                    let head = keys.into_iter().fold(p.clone(), and);
                    and(head, guard(p, s, Some(boolean(false))))
                }
                None => p,
            });
        }
    }

    fn join_keys(&self, e: &Expr, alias: &str, p: &Expr, out: &mut Vec<Expr>) {
        let column_of = |e: &Expr| match enums::uncast(e) {
            Expr::CompoundIdentifier(parts) if parts.len() == 2 => Some(norm(&parts[0].value)),
            _ => None,
        };
        let target = norm(alias);
        match e {
            Expr::Nested(inner) => self.join_keys(inner, alias, p, out),
            Expr::BinaryOp { left, op: BinaryOperator::And, right } => {
                self.join_keys(left, alias, p, out);
                self.join_keys(right, alias, p, out);
            }
            Expr::BinaryOp { left, op: BinaryOperator::Eq, right } => {
                let other = |q: &str| q != target && !self.names.denotes(q);
                let key = |t: &Expr, o: &Expr| Expr::BinaryOp {
                    left: Box::new(guard(p.clone(), t.clone(), None)),
                    op: BinaryOperator::Eq,
                    right: Box::new(o.clone()),
                };
                match (column_of(left), column_of(right)) {
                    (Some(l), Some(r)) if l == target && other(&r) => out.push(key(left, right)),
                    (Some(l), Some(r)) if r == target && other(&l) => out.push(key(right, left)),
                    _ => {}
                }
            }
            _ => {}
        }
    }

    /// UPDATE and MERGE … UPDATE: only writable columns, and the new row must stay in the slice.
    /// Returns whether the values now carry the check.
    fn check_assignments(&self, assignments: &mut [Assignment], alias: &str, verb: &str) -> Result<bool> {
        let mut new_values: HashMap<String, Expr> = HashMap::new();
        for a in assignments.iter() {
            let AssignmentTarget::ColumnName(name) = &a.target else {
                return Err(SlicedWrite::TupleAssignment { object: self.object.clone() }.into());
            };
            let col = column_of(name).ok_or(Unsupported::Assignment)?;
            self.require_writable(&col)?;
            new_values.insert(col, a.value.clone());
        }
        let Some(mut new_row) = self.pred_on(alias) else { return Ok(false) };
        let mut sub = Substitute { alias, values: &new_values, touched: false };
        let _ = WalkMut::walk_mut(&mut new_row, &mut sub);
        if !sub.touched {
            return Ok(false); // no assigned column is part of the predicate: WHERE already holds it
        }
        for a in assignments.iter_mut() {
            let value = std::mem::replace(&mut a.value, Expr::value(Value::Null));
            a.value = guard(new_row.clone(), value, Some(self.outside(verb)));
        }
        Ok(true)
    }

    /// MERGE … INSERT (cols) VALUES (…): each value checked against the predicate on its row.
    fn check_insert_values(&self, columns: &[ObjectName], rows: &mut [Vec<Expr>]) -> Result<()> {
        let cols = self.insert_columns(columns)?;
        let Some(pred) = &self.pred else { return Ok(()) };
        for row in rows.iter_mut() {
            let values: HashMap<String, Expr> = cols.iter().cloned().zip(row.iter().cloned()).collect();
            let mut check = pred.clone();
            let _ = WalkMut::walk_mut(&mut check, &mut Substitute { alias: "", values: &values, touched: false });
            for v in row.iter_mut() {
                let value = std::mem::replace(v, Expr::value(Value::Null));
                *v = guard(nested(check.clone()), value, Some(self.outside("MERGE")));
            }
        }
        Ok(())
    }

    /// The INSERT column list, which must be given, writable, and cover the predicate.
    fn insert_columns(&self, columns: &[ObjectName]) -> Result<Vec<String>> {
        if columns.is_empty() {
            return Err(SlicedWrite::MustListColumns { object: self.object.clone() }.into());
        }
        let cols: Vec<String> = columns.iter().filter_map(column_of).collect();
        for c in &cols {
            self.require_writable(c)?;
        }
        if let Some(pred) = &self.pred {
            let mut missing = None;
            let _ = pred.walk(&mut Idents(&mut |name: &str| {
                if missing.is_none() && !cols.iter().any(|c| c == name) {
                    missing = Some(name.to_string());
                }
            }));
            if let Some(m) = missing {
                return Err(SlicedWrite::MustSetColumn { object: self.object.clone(), column: m }.into());
            }
        }
        Ok(cols)
    }

    /// INSERT: read the rows through a checking SELECT.
    fn wrap_insert_source(&self, columns: &[ObjectName], source: &mut Option<Box<Query>>) -> Result<()> {
        let cols = self.insert_columns(columns)?;
        let Some(pred) = &self.pred else { return Ok(()) };
        let Some(src) = source.take() else {
            return Err(SlicedWrite::DefaultValues { object: self.object.clone() }.into());
        };
        let col_list = cols.iter().map(|c| crate::sqltext::ident(c)).collect::<Vec<_>>().join(", ");
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

    /// INSERT into a sliced target (the caller refused the forms with an update half).
    pub(super) fn insert(&self, ins: &mut Insert) -> Result<()> {
        if !ins.assignments.is_empty() || ins.insert_alias.is_some() {
            return Err(SlicedWrite::InsertForm { object: self.object.clone() }.into());
        }
        let alias = ins.table_alias.as_ref().map(|a| a.alias.value.as_str());
        let cols = self.columns(&*ins, alias, &[]);
        if let Some(items) = &ins.returning {
            cols.returning(items)?;
        }
        if let Some(OnInsert::OnConflict(c)) = &ins.on {
            match (&c.conflict_target, &c.action) {
                (None, OnConflictAction::DoNothing) => {}
                (Some(ConflictTarget::Columns { columns, predicate }), OnConflictAction::DoNothing) => {
                    for col in columns {
                        cols.name(std::slice::from_ref(col))?;
                    }
                    cols.expr(predicate)?;
                }
                _ => return Err(SlicedWrite::OnConflictForm { object: self.object.clone() }.into()),
            }
        }
        self.wrap_insert_source(&ins.columns, &mut ins.source)
    }

    /// UPDATE of a sliced target, known as `alias` in the statement.
    pub(super) fn update(&self, up: &mut Update, alias: &str) -> Result<()> {
        // UPDATE … FROM items are not checked: DuckDB binds them without the target in scope
        // (test/sql/security/write_columns.test pins this).
        let cols = self.columns(&*up, Some(alias), &[]);
        if let Some(items) = &up.returning {
            cols.returning(items)?;
        }
        cols.expr(&up.selection)?;
        for a in &up.assignments {
            cols.expr(&a.value)?;
        }
        self.check_assignments(&mut up.assignments, alias, "UPDATE")?;
        self.restrict(&mut up.selection, alias);
        Ok(())
    }

    /// DELETE from a sliced target (USING items, like UPDATE … FROM, do not see the target).
    pub(super) fn delete(&self, del: &mut Delete, alias: &str) -> Result<()> {
        let cols = self.columns(&*del, Some(alias), &[]);
        if let Some(items) = &del.returning {
            cols.returning(items)?;
        }
        cols.expr(&del.selection)?;
        self.restrict(&mut del.selection, alias);
        Ok(())
    }

    /// MERGE into a sliced target (see `merge`).
    pub(super) fn merge(&self, m: &mut sqlparser::ast::Merge, alias: &str) -> Result<()> {
        merge::confine(self, m, alias)
    }

    /// The column rule for one statement (a no-op on a target that shows every column).
    fn columns<'s, V: Visit>(&'s self, stmt: &V, alias: Option<&str>, extra: &'s [&'s str]) -> columns::Rule<'s> {
        let others = if self.writable.is_some() { columns::introduced(stmt) } else { Default::default() };
        columns::Rule::new(self.writable.as_ref(), &self.object, &self.names, alias, others, extra)
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

/// Collects the names of the functions an expression calls.
struct Calls<'o>(&'o mut Vec<Vec<String>>);

impl Visitor for Calls<'_> {
    type Break = ();
    fn pre_visit_expr(&mut self, e: &Expr) -> ControlFlow<()> {
        if let Expr::Function(f) = e {
            self.0.push(super::defence::parts(&f.name));
        }
        ControlFlow::Continue(())
    }
}
