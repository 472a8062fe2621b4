//! Leak-proof statements (spec 002, "Leak-proof pushdown"): whether every predicate a principal's
//! query can have DuckDB evaluate before a slice's own filter is one that cannot raise or
//! otherwise signal on a row, and which (column, literal kind) comparisons it makes.
//!
//! DuckDB moves filters down and merges them with the slice's predicate, in any order: a WHERE,
//! ON, HAVING (on group keys) or QUALIFY conjunct, and, through a derived table, CTE or set
//! operation, the expression an outer filter names. So every such position must be leak-proof:
//! comparisons of a column with a literal (`= <> < <= > >=`, IS [NOT] DISTINCT FROM, [NOT] IN a
//! list, [NOT] BETWEEN), `IS [NOT] NULL`, `[NOT] LIKE`/`ILIKE` with a string pattern and no
//! ESCAPE, a comparison of columns of two differently named relations (evaluated where both
//! meet, above the slice), `[NOT] IN`/`EXISTS` of a subquery that is itself leak-proof, and AND,
//! OR, NOT of these. A literal's kind, not its value, decides (`authz::slices::LitKind`), so a
//! statement's shape keeps its decision. Anything else (casts, arithmetic, functions, CASE,
//! parameters, a bare column as a predicate) makes the statement not leak-proof, and every
//! sliced object in it keeps the full guard.
//!
//! The select list of the outermost query block is evaluated after its filters and is free,
//! except items a WHERE, HAVING or QUALIFY names by alias (DuckDB substitutes them). Aggregate
//! calls are evaluated after the filters below them and are free values anywhere.
use crate::sqltext::Walk as _;
use crate::authz::slices::LitKind;
use crate::policy::norm;
use sqlparser::ast::{
    BinaryOperator, Distinct, Expr, FunctionArguments, GroupByExpr, InTarget, JoinConstraint, JoinOperator, Query, Select,
    SelectItem, SetExpr, Statement, TableFactor, UnaryOperator, Value, Visit, Visitor,
};
use std::collections::HashSet;
use std::ops::ControlFlow;

/// A leak-proof statement: its comparisons of a column (by the name written, any qualifier)
/// with a literal, and whether it reads a single relation.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct LeakProof {
    pub needs: Vec<(String, LitKind)>,
    pub single: bool,
    relations: usize,
    /// `alias → column` for every select item that renames a column: a filter on the alias is
    /// a filter on the column once DuckDB substitutes it.
    renames: Vec<(String, String)>,
    /// The names relations go by in the statement (alias, or a table's or CTE's last name part),
    /// and the qualifiers its two-part column names use: `a.b` is a struct field `b` of a column
    /// `a` unless `a` names a relation, and a field's comparison is not the column's.
    named: HashSet<String>,
    qualifiers: Vec<String>,
}

impl LeakProof {
    /// The slice cache's key part for the typed guard: the pairs, in order, and `single`.
    pub fn signature(&self) -> String {
        let mut s = String::from(if self.single { "1" } else { "n" });
        for (n, k) in &self.needs {
            s.push('\u{1}');
            s.push_str(n);
            s.push(match k {
                LitKind::Number => 'n',
                LitKind::Text => 't',
                LitKind::Bool => 'b',
                LitKind::Temporal => 'd',
            });
        }
        s
    }
}

/// `Some` when `stmt` is a query whose every predicate position is leak-proof.
pub fn analyse(stmt: &Statement) -> Option<LeakProof> {
    let q = match stmt {
        Statement::Query(q) => q,
        // EXPLAIN [ANALYZE] shows (and runs) the plan the query would have; DESCRIBE shows the
        // columns' constraints, which only the guarded form keeps to the virtual object's.
        Statement::Explain { statement, describe_alias: sqlparser::ast::DescribeAlias::Explain, .. } => match &**statement {
            Statement::Query(q) => q,
            _ => return None,
        },
        _ => return None,
    };
    let mut a = LeakProof::default();
    a.query(q, true).ok()?;
    if a.qualifiers.iter().any(|q| !a.named.contains(q)) {
        return None;
    }
    // What a filter on an alias compares is the column it renames (to a fixpoint: an alias
    // of an alias).
    loop {
        let more: Vec<(String, LitKind)> = a
            .needs
            .iter()
            .flat_map(|(n, k)| a.renames.iter().filter(move |(alias, _)| alias == n).map(move |(_, col)| (col.clone(), *k)))
            .filter(|need| !a.needs.contains(need))
            .collect();
        if more.is_empty() {
            break;
        }
        a.needs.extend(more);
    }
    a.needs.sort();
    a.needs.dedup();
    // One relation, and no alias that a filter might name: then every name is that relation's
    // column (an object without a COLUMNS list is typed only then).
    a.single = a.relations == 1 && a.renames.is_empty();
    Some(a)
}

/// Not leak-proof (the reason does not matter: the guard stays).
struct No;
type R = Result<(), No>;

enum Operand {
    Column { qualifier: Option<String>, name: String },
    Literal(Option<LitKind>),
    /// An aggregate's result: computed after the filters below it.
    Aggregate,
}

impl LeakProof {
    fn query(&mut self, q: &Query, top: bool) -> R {
        if !q.locks.is_empty() || q.for_clause.is_some() || q.settings.is_some() || q.format_clause.is_some() || !q.pipe_operators.is_empty() {
            return Err(No);
        }
        if let Some(with) = &q.with {
            for cte in &with.cte_tables {
                // `WITH c(a, b)` renames by position: not followed, so not leak-proof.
                if !cte.alias.columns.is_empty() {
                    return Err(No);
                }
                self.query(&cte.query, false)?;
            }
        }
        self.set_expr(&q.body, top)?;
        // ORDER BY and LIMIT are evaluated on what the filters let through.
        if let Some(o) = &q.order_by {
            self.nested(o)?;
        }
        if let Some(l) = &q.limit_clause {
            self.nested(l)?;
        }
        if let Some(f) = &q.fetch {
            self.nested(f)?;
        }
        Ok(())
    }

    fn set_expr(&mut self, body: &SetExpr, top: bool) -> R {
        match body {
            SetExpr::Select(s) => self.select(s, top),
            SetExpr::Query(q) => self.query(q, top),
            // An outer filter is pushed into each branch.
            SetExpr::SetOperation { left, right, .. } => {
                self.set_expr(left, false)?;
                self.set_expr(right, false)
            }
            SetExpr::Values(v) => v.rows.iter().flat_map(|r| &r.content).try_for_each(|e| self.value(e)),
            _ => Err(No),
        }
    }

    fn select(&mut self, s: &Select, top: bool) -> R {
        if s.into.is_some()
            || !s.lateral_views.is_empty()
            || s.prewhere.is_some()
            || !s.connect_by.is_empty()
            || !s.cluster_by.is_empty()
            || !s.distribute_by.is_empty()
            || !s.sort_by.is_empty()
            || s.top.is_some()
            || s.value_table_mode.is_some()
            || s.exclude.is_some()
        {
            return Err(No);
        }
        for t in &s.from {
            self.factor(&t.relation)?;
            for j in &t.joins {
                self.factor(&j.relation)?;
                self.join(&j.join_operator)?;
            }
        }
        let mut named: HashSet<String> = HashSet::new();
        for e in [&s.selection, &s.having, &s.qualify].into_iter().flatten() {
            self.pred(e)?;
            if top {
                let _ = e.walk(&mut Names(&mut named));
            }
        }
        for item in &s.projection {
            if let SelectItem::ExprWithAlias { expr, alias } = item {
                if let Some(Operand::Column { name, .. }) = operand(expr) {
                    self.renames.push((norm(&alias.value), name));
                }
            }
            match item {
                SelectItem::UnnamedExpr(e) if top => self.nested(e)?,
                SelectItem::ExprWithAlias { expr, alias } if top && !named.contains(&norm(&alias.value)) => self.nested(expr)?,
                SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => self.value(e)?,
                // `*` and `t.*`: REPLACE puts expressions where the columns were.
                w if top => self.nested(w)?,
                SelectItem::Wildcard(o) | SelectItem::QualifiedWildcard(_, o) if o.opt_replace.is_none() => {}
                _ => return Err(No),
            }
        }
        match &s.distinct {
            Some(Distinct::On(es)) if !top => es.iter().try_for_each(|e| self.value(e))?,
            d => self.nested(d)?,
        }
        match &s.group_by {
            GroupByExpr::Expressions(es, _) if !top => es.iter().try_for_each(|e| self.value(e))?,
            g => self.nested(g)?,
        }
        self.nested(&s.named_window)
    }

    fn factor(&mut self, tf: &TableFactor) -> R {
        self.relations += 1;
        // `AS x(a, b)` renames by position: not followed, so not leak-proof.
        let renamed = match tf {
            TableFactor::Table { alias, .. } | TableFactor::Derived { alias, .. } | TableFactor::NestedJoin { alias, .. } => {
                alias.as_ref().is_some_and(|a| !a.columns.is_empty())
            }
            _ => false,
        };
        if renamed {
            return Err(No);
        }
        let name = match tf {
            TableFactor::Table { alias: Some(a), .. } | TableFactor::Derived { alias: Some(a), .. } => Some(norm(&a.name.value)),
            TableFactor::Table { name, .. } => name.0.last().and_then(|p| p.as_ident()).map(|i| norm(&i.value)),
            _ => None,
        };
        self.named.extend(name);
        match tf {
            TableFactor::Table { args: None, with_hints, version: None, partitions, json_path: None, .. }
                if with_hints.is_empty() && partitions.is_empty() =>
            {
                Ok(())
            }
            TableFactor::Derived { subquery, .. } => self.query(subquery, false),
            TableFactor::NestedJoin { table_with_joins, .. } => {
                self.relations -= 1;
                self.factor(&table_with_joins.relation)?;
                for j in &table_with_joins.joins {
                    self.factor(&j.relation)?;
                    self.join(&j.join_operator)?;
                }
                Ok(())
            }
            _ => Err(No),
        }
    }

    fn join(&mut self, op: &JoinOperator) -> R {
        let constraint = match op {
            JoinOperator::Join(c)
            | JoinOperator::Inner(c)
            | JoinOperator::Left(c)
            | JoinOperator::LeftOuter(c)
            | JoinOperator::Right(c)
            | JoinOperator::RightOuter(c)
            | JoinOperator::FullOuter(c)
            | JoinOperator::Semi(c)
            | JoinOperator::LeftSemi(c)
            | JoinOperator::RightSemi(c)
            | JoinOperator::Anti(c)
            | JoinOperator::LeftAnti(c)
            | JoinOperator::RightAnti(c) => c,
            JoinOperator::CrossJoin(c) => c,
            _ => return Err(No),
        };
        match constraint {
            JoinConstraint::On(e) => self.pred(e),
            JoinConstraint::Using(_) | JoinConstraint::Natural | JoinConstraint::None => Ok(()),
            _ => Err(No),
        }
    }

    /// A predicate that cannot raise on any row.
    fn pred(&mut self, e: &Expr) -> R {
        match e {
            Expr::Nested(e) => self.pred(e),
            Expr::BinaryOp { left, op: BinaryOperator::And | BinaryOperator::Or, right } => {
                self.pred(left)?;
                self.pred(right)
            }
            Expr::UnaryOp { op: UnaryOperator::Not, expr } => self.pred(expr),
            Expr::BinaryOp {
                left,
                op: BinaryOperator::Eq | BinaryOperator::NotEq | BinaryOperator::Lt | BinaryOperator::LtEq | BinaryOperator::Gt | BinaryOperator::GtEq,
                right,
            }
            | Expr::IsDistinctFrom(left, right)
            | Expr::IsNotDistinctFrom(left, right) => self.compare(left, right),
            Expr::IsNull(e) | Expr::IsNotNull(e) => match self.op(e) {
                Some(_) => Ok(()),
                None => Err(No),
            },
            Expr::Between { expr, low, high, .. } => {
                self.compare(expr, low)?;
                self.compare(expr, high)
            }
            Expr::In { expr, target: InTarget::List(list), .. } => list.iter().try_for_each(|l| self.compare(expr, l)),
            Expr::In { expr, target: InTarget::Subquery(q), .. } => match self.op(expr) {
                Some(Operand::Column { .. } | Operand::Literal(_)) => self.query(q, false),
                _ => Err(No),
            },
            Expr::Exists { subquery, .. } => self.query(subquery, false),
            Expr::Like { expr, pattern, escape_char: None, any: false, .. }
            | Expr::ILike { expr, pattern, escape_char: None, any: false, .. } => {
                match (self.op(expr), self.op(pattern)) {
                    (Some(Operand::Column { name, .. }), Some(Operand::Literal(Some(LitKind::Text)))) => {
                        self.needs.push((name, LitKind::Text));
                        Ok(())
                    }
                    _ => Err(No),
                }
            }
            Expr::Value(v) if matches!(v.value, Value::Boolean(_)) => Ok(()),
            _ => Err(No),
        }
    }

    /// `a <op> b`: a column against a literal (the pair is recorded), literals, aggregates, or
    /// columns of two differently named relations.
    fn compare(&mut self, a: &Expr, b: &Expr) -> R {
        match (self.op(a).ok_or(No)?, self.op(b).ok_or(No)?) {
            (Operand::Column { name, .. }, Operand::Literal(k)) | (Operand::Literal(k), Operand::Column { name, .. }) => {
                if let Some(k) = k {
                    self.needs.push((name, k));
                }
                Ok(())
            }
            (Operand::Column { qualifier: Some(x), .. }, Operand::Column { qualifier: Some(y), .. }) if x != y => Ok(()),
            (Operand::Column { .. }, Operand::Column { .. }) => Err(No),
            (Operand::Aggregate, Operand::Column { .. }) | (Operand::Column { .. }, Operand::Aggregate) => Err(No),
            _ => Ok(()),
        }
    }

    /// An expression an outer filter may name: a leak-proof predicate, a column, a literal or an
    /// aggregate.
    fn value(&mut self, e: &Expr) -> R {
        match self.op(e) {
            Some(Operand::Aggregate) => self.nested(e),
            Some(_) => Ok(()),
            None => self.pred(e),
        }
    }

    /// `operand`, noting the qualifier of a column (checked against the relations' names).
    fn op(&mut self, e: &Expr) -> Option<Operand> {
        let o = operand(e);
        if let Some(Operand::Column { qualifier: Some(q), .. }) = &o {
            self.qualifiers.push(q.clone());
        }
        o
    }

    /// Anything, as long as the subqueries in it are leak-proof (each is a query block of its own).
    fn nested<V: Visit>(&mut self, v: &V) -> R {
        let mut n = Nested { outer: self, depth: 0 };
        match v.walk(&mut n) {
            ControlFlow::Break(()) => Err(No),
            ControlFlow::Continue(()) => Ok(()),
        }
    }
}

/// What a comparison's side is, if it is one of the leak-proof kinds.
fn operand(e: &Expr) -> Option<Operand> {
    match e {
        Expr::Nested(e) => operand(e),
        Expr::Identifier(i) => Some(Operand::Column { qualifier: None, name: norm(&i.value) }),
        // `t.col`; three or more parts may be a struct's fields: not an operand.
        Expr::CompoundIdentifier(parts) if parts.len() == 2 => Some(Operand::Column {
            qualifier: Some(norm(&parts[parts.len() - 2].value)),
            name: norm(&parts[parts.len() - 1].value),
        }),
        Expr::Value(v) => literal(&v.value),
        Expr::UnaryOp { op: UnaryOperator::Minus | UnaryOperator::Plus, expr } => match &**expr {
            Expr::Value(v) if matches!(v.value, Value::Number(..)) => literal(&v.value),
            _ => None,
        },
        Expr::TypedString(t) => match t.data_type {
            sqlparser::ast::DataType::Date | sqlparser::ast::DataType::Timestamp(..) => Some(Operand::Literal(Some(LitKind::Temporal))),
            _ => None,
        },
        Expr::Function(f) if f.over.is_none() && f.within_group.is_empty() && f.filter.is_none() => {
            // The built-in, as the function gate qualified it (a macro of the same name is not one).
            let parts: Vec<String> = f.name.0.iter().map(|p| p.as_ident().map(|i| norm(&i.value))).collect::<Option<_>>()?;
            let name = match parts.as_slice() {
                [n] => n,
                [s, m, n] if s == "system" && m == "main" => n,
                _ => return None,
            };
            let aggregate = ["count", "sum", "min", "max", "avg", "count_star"].contains(&name.as_str());
            (aggregate && matches!(f.args, FunctionArguments::List(_))).then_some(Operand::Aggregate)
        }
        _ => None,
    }
}

fn literal(v: &Value) -> Option<Operand> {
    Some(Operand::Literal(match v {
        Value::Number(n, _) if safe_number(n) => Some(LitKind::Number),
        Value::SingleQuotedString(_) | Value::DollarQuotedString(_) => Some(LitKind::Text),
        Value::Boolean(_) => Some(LitKind::Bool),
        Value::Null => None,
        _ => return None,
    }))
}

/// A number DuckDB compares with any numeric column (`LitKind::Number`'s types) without casting
/// the column to a type some of its values overflow: up to 19 digits (a BIGINT; the shapes'
/// sentinels have 19), or up to 18 digits of which at most 6 follow the point (a decimal literal
/// of scale 35 casts an INTEGER column to DECIMAL(38,35)). No exponent.
fn safe_number(n: &str) -> bool {
    match n.split_once('.') {
        None => !n.is_empty() && n.len() <= 19 && n.bytes().all(|b| b.is_ascii_digit()),
        Some((int, frac)) => {
            frac.len() <= 6 && int.len() + frac.len() <= 18 && int.len() + frac.len() > 0 && (int.bytes().chain(frac.bytes())).all(|b| b.is_ascii_digit())
        }
    }
}

/// Analyses each subquery met at the first level (deeper ones are the subquery's own business).
struct Nested<'a> {
    outer: &'a mut LeakProof,
    depth: usize,
}

impl Visitor for Nested<'_> {
    type Break = ();

    fn pre_visit_query(&mut self, q: &Query) -> ControlFlow<()> {
        if self.depth == 0 && self.outer.query(q, false).is_err() {
            return ControlFlow::Break(());
        }
        self.depth += 1;
        ControlFlow::Continue(())
    }

    fn post_visit_query(&mut self, _: &Query) -> ControlFlow<()> {
        self.depth -= 1;
        ControlFlow::Continue(())
    }
}

/// The unqualified names an expression uses (select aliases it may name).
struct Names<'a>(&'a mut HashSet<String>);

impl Visitor for Names<'_> {
    type Break = ();

    fn pre_visit_expr(&mut self, e: &Expr) -> ControlFlow<()> {
        if let Expr::Identifier(i) = e {
            self.0.insert(norm(&i.value));
        }
        ControlFlow::Continue(())
    }
}

#[cfg(test)]
#[path = "leakproof_tests.rs"]
mod tests;
