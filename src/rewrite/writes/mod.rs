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
//! - A grant column with a closed value expression (`tenant = acl_claim('tenant')`, `ssn = NULL`:
//!   no column reference) supplies the value on write (`supplied`): INSERT adds it, or puts it in
//!   place of what the principal gave; UPDATE and MERGE … UPDATE cannot set it; write expressions
//!   cannot read it (it reads the stored value, not the mask). Issue 34, item 2.
//!
//! Targets with the object's own COLUMNS/RLS, or a grant column whose expression reads columns
//! (a rename, a mask over a column, a computed column), stay read-only.
mod columns;
pub(super) mod enums;
mod merge;
pub(super) mod qualified;
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
    /// Columns whose value the grant supplies on INSERT (claims substituted), in grant order.
    supplied: Vec<(String, Expr)>,
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
    let mut supplied: Vec<(String, Expr)> = Vec::new();
    for layer in layers {
        // The union of roles that show different columns: which role's slice a written row
        // falls under is not one answer, so such a target is read-only.
        let Layer::Slice(layer) = layer else { return Err(read_only()) };
        if let Some(cols) = &layer.columns {
            let mut names = BTreeSet::new();
            for c in cols {
                let Some(e) = &c.expr else {
                    names.insert(c.name.clone());
                    continue;
                };
                // Only a value that reads no column can be supplied; and one value per column
                // (two layers supplying it would not agree on which one a row holds).
                let Some(value) = closed(e)? else { return Err(read_only()) };
                if supplied.iter().any(|(n, _)| *n == c.name) {
                    return Err(read_only());
                }
                supplied.push((c.name.clone(), value));
            }
            writable = Some(match writable {
                None => names,
                Some(w) => w.intersection(&names).cloned().collect(),
            });
        }
        if let Some(p) = &layer.rls {
            preds.push(parse_expr(p)?);
        }
    }
    // A supplied column is neither writable nor readable by the write's expressions: those read
    // the stored value, which the principal sees only through the mask.
    if let Some(w) = &mut writable {
        for (n, _) in &supplied {
            w.remove(n);
        }
    }
    for (_, v) in &mut supplied {
        substitute_claims(view, v)?;
    }
    let mut pred = preds.into_iter().reduce(|a, b| and(nested(a), nested(b)));
    if let Some(p) = &mut pred {
        substitute_claims(view, p)?;
    }
    let names = columns::TargetNames::new(&r.key, phys);
    Ok(Some(WriteSlice { pred, writable, object: r.key.to_string(), names, supplied }))
}

/// A grant column's expression when it reads no column (a value the grant can supply: literals,
/// `acl_claim('k')`, calls of those); `None` when it names anything a row could hold.
fn closed(sql: &str) -> Result<Option<Expr>> {
    struct Reads(bool);
    impl Visitor for Reads {
        type Break = ();
        fn pre_visit_expr(&mut self, e: &Expr) -> ControlFlow<()> {
            match e {
                Expr::Identifier(_)
                | Expr::CompoundIdentifier(_)
                | Expr::Wildcard(_)
                | Expr::QualifiedWildcard(..) => {
                    self.0 = true;
                    ControlFlow::Break(())
                }
                _ => ControlFlow::Continue(()),
            }
        }
        fn pre_visit_query(&mut self, _: &Query) -> ControlFlow<()> {
            self.0 = true;
            ControlFlow::Break(())
        }
    }
    let e = parse_expr(sql)?;
    let mut reads = Reads(false);
    let _ = e.walk(&mut reads);
    Ok((!reads.0).then_some(e))
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
        for e in self.pred.iter().chain(self.supplied.iter().map(|(_, v)| v)) {
            let _ = e.walk(&mut Calls(&mut out));
        }
        out
    }

    fn supplied(&self, col: &str) -> Option<&Expr> {
        self.supplied.iter().find(|(n, _)| n == col).map(|(_, v)| v)
    }

    /// The columns an INSERT writes: the principal's, then the supplied ones it did not list
    /// (appended to `columns`).
    fn with_supplied(&self, columns: &mut Vec<ObjectName>, cols: &mut Vec<String>) {
        for (n, _) in &self.supplied {
            if !cols.contains(n) {
                cols.push(n.clone());
                columns.push(ObjectName::from(vec![Ident::with_quote('"', n)]));
            }
        }
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

    /// MERGE … INSERT (cols) VALUES (…): the supplied values put in (in place of the
    /// principal's, or appended), then each value checked against the predicate on its row.
    fn check_insert_values(&self, columns: &mut Vec<ObjectName>, rows: &mut [Vec<Expr>]) -> Result<()> {
        let mut cols = self.insert_columns(columns)?;
        let given = cols.len();
        self.with_supplied(columns, &mut cols);
        for row in rows.iter_mut() {
            if row.len() != given {
                // DuckDB would refuse it; the supplied values must never shift into another column.
                return Err(SlicedWrite::MustListColumns { object: self.object.clone() }.into());
            }
            for (c, v) in cols.iter().zip(row.iter_mut()) {
                if let Some(value) = self.supplied(c) {
                    *v = nested(value.clone());
                }
            }
            row.extend(cols[given..].iter().filter_map(|c| self.supplied(c)).map(|v| nested(v.clone())));
        }
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
        if cols.len() != columns.len() {
            return Err(Unsupported::Assignment.into());
        }
        for c in &cols {
            // A supplied column may be listed: the grant's value replaces the principal's.
            if self.supplied(c).is_none() {
                self.require_writable(c)?;
            }
        }
        if let Some(pred) = &self.pred {
            let mut missing = None;
            let _ = pred.walk(&mut Idents(&mut |name: &str| {
                if missing.is_none() && !cols.iter().any(|c| c == name) && self.supplied(name).is_none() {
                    missing = Some(name.to_string());
                }
            }));
            if let Some(m) = missing {
                return Err(SlicedWrite::MustSetColumn { object: self.object.clone(), column: m }.into());
            }
        }
        Ok(cols)
    }

    /// INSERT: read the rows through a SELECT that puts the supplied values in and checks each
    /// row against the predicate (on the row as written, supplied values included).
    fn wrap_insert_source(&self, columns: &mut Vec<ObjectName>, source: &mut Option<Box<Query>>) -> Result<()> {
        let mut cols = self.insert_columns(columns)?;
        if self.pred.is_none() && self.supplied.is_empty() {
            return Ok(());
        }
        let Some(src) = source.take() else {
            return Err(SlicedWrite::DefaultValues { object: self.object.clone() }.into());
        };
        let col_list = cols.iter().map(|c| crate::sqltext::ident(c)).collect::<Vec<_>>().join(", ");
        let given = cols.len();
        self.with_supplied(columns, &mut cols);
        // Each column by position: the principal's value, or the grant's in its place.
        let items = if self.supplied.is_empty() {
            "*".to_string()
        } else {
            cols.iter()
                .map(|c| match self.supplied(c) {
                    Some(v) => format!("({v}) AS {}", crate::sqltext::ident(c)),
                    None => format!("\"__acl_new\".{}", crate::sqltext::ident(c)),
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        debug_assert!(cols[given..].iter().all(|c| self.supplied(c).is_some()));
        let check = match &self.pred {
            Some(pred) => {
                let values: HashMap<String, Expr> =
                    self.supplied.iter().map(|(n, v)| (n.clone(), v.clone())).collect();
                let mut pred = pred.clone();
                let _ = WalkMut::walk_mut(&mut pred, &mut Substitute { alias: "", values: &values, touched: false });
                format!(" WHERE CASE WHEN ({pred}) THEN true ELSE {} END", self.outside("INSERT"))
            }
            None => String::new(),
        };
        let sql = format!("SELECT {items} FROM (SELECT 1) AS \"__acl_new\" ({col_list}){check}");
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
        self.wrap_insert_source(&mut ins.columns, &mut ins.source)
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
