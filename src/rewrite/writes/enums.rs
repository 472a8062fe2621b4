//! Rule: a write to a target whose ENUM columns are shown as VARCHAR (spec 021).
//!
//! DuckDB writes only base tables, so the target is the physical table: its columns reach the
//! statement's own expressions with their physical types, and an ENUM type lists every label,
//! also those only hidden rows carry (`RETURNING typeof(lvl)`, `SET note = enum_range(lvl)::VARCHAR`,
//! a correlated `(SELECT t.*)`). So every expression of the principal's that may see the target row
//! reads it through `"system".main.acl_enum_varchar(…)`, which DuckDB folds at bind time to the
//! value itself, or, for a type holding an ENUM, to its cast to VARCHAR (cpp/enums.cpp):
//! - every column reference (`lvl`, `t.lvl`, `excluded.lvl`, a whole row `t`, a struct field) and
//!   every `COLUMNS(…)`, in SET values, WHERE, RETURNING, ON CONFLICT, MERGE ON and WHEN
//!   conditions and values, subqueries included (a column of another relation passes unchanged);
//! - `*` and `q.*` in RETURNING, and `q.*` in a subquery's select list (it may be the target's row,
//!   correlated), become `COLUMNS(*)` / `COLUMNS(q.*)` through the cast (names kept);
//! - a bare column as a select item keeps its name (`… AS lvl`); a bare GROUP BY or query ORDER BY
//!   key stays as written (DuckDB looks aliases up there; a key only groups or orders), and so do
//!   the `.field` of a field access and a `lambda x:` parameter (its list went through the cast);
//! - on a column-restricted target stars are left to the column rule (`columns`), which refuses
//!   every one over the target.
//! Not walked: what cannot see the target (an INSERT's source, UPDATE … FROM, DELETE … USING and
//! the MERGE source are FROM items, read through the read path's own cast) and the columns a
//! write names as its targets. Values written into an ENUM column are cast back by DuckDB; a
//! value that is no label fails with DuckDB's conversion error, whose label list `errors` drops.
//! Runs before the write check, which then guards these expressions as written (its join keys
//! look through the cast).
use crate::sqltext::WalkMut as _;
use crate::authz::enums::cast;
use crate::error::{Result, SlicedWrite};
use crate::policy::norm;
use sqlparser::ast::{
    AccessExpr, Delete, Expr, LambdaSyntax, FunctionArg, FunctionArgExpr, FunctionArguments, GroupByExpr, Ident, Insert, Merge, MergeAction,
    MergeInsertKind, MergeUpdateKind, ObjectName, ObjectNamePart, OnConflictAction, OnInsert, OutputClause, Select,
    SelectItem, SelectItemQualifiedWildcardKind, Update, VisitorMut, WildcardAdditionalOptions,
};
use std::collections::HashSet;
use std::ops::ControlFlow;

/// UPDATE: SET values, WHERE, RETURNING.
pub(in crate::rewrite) fn update(up: &mut Update, object: &str, restricted: bool) -> Result<()> {
    let w = Wrap::new(object, restricted);
    for a in &mut up.assignments {
        w.expr(&mut a.value)?;
    }
    w.opt(&mut up.selection)?;
    w.returning(&mut up.returning)
}

/// DELETE: WHERE, RETURNING.
pub(in crate::rewrite) fn delete(del: &mut Delete, object: &str, restricted: bool) -> Result<()> {
    let w = Wrap::new(object, restricted);
    w.opt(&mut del.selection)?;
    w.returning(&mut del.returning)
}

/// INSERT: RETURNING, and ON CONFLICT's condition and DO UPDATE (`excluded.c` is the target's
/// type too). The rows inserted come from the source, which does not see the target.
pub(in crate::rewrite) fn insert(ins: &mut Insert, object: &str, restricted: bool) -> Result<()> {
    let w = Wrap::new(object, restricted);
    if let Some(OnInsert::OnConflict(c)) = &mut ins.on {
        if let Some(sqlparser::ast::ConflictTarget::Columns { predicate, .. }) = &mut c.conflict_target {
            w.opt(predicate)?;
        }
        if let OnConflictAction::DoUpdate(u) = &mut c.action {
            for a in &mut u.assignments {
                w.expr(&mut a.value)?;
            }
            w.opt(&mut u.selection)?;
        }
    }
    w.returning(&mut ins.returning)
}

/// MERGE: ON, every clause's condition and values, RETURNING (the source is a FROM item).
pub(in crate::rewrite) fn merge(m: &mut Merge, object: &str, restricted: bool) -> Result<()> {
    let w = Wrap::new(object, restricted);
    w.expr(&mut m.on)?;
    for c in &mut m.clauses {
        w.opt(&mut c.predicate)?;
        match &mut c.action {
            MergeAction::Update(u) => {
                if let MergeUpdateKind::Set(assignments) = &mut u.kind {
                    for a in assignments {
                        w.expr(&mut a.value)?;
                    }
                }
                w.opt(&mut u.update_predicate)?;
                w.opt(&mut u.delete_predicate)?;
            }
            MergeAction::Insert(ins) => {
                if let MergeInsertKind::Values(values) = &mut ins.kind {
                    for row in &mut values.rows {
                        for v in &mut row.content {
                            w.expr(v)?;
                        }
                    }
                }
                w.opt(&mut ins.insert_predicate)?;
            }
            MergeAction::Delete { .. } | MergeAction::DoNothing { .. } => {}
        }
    }
    match &mut m.output {
        Some(OutputClause::Returning { select_items, .. }) => w.items(select_items, true),
        _ => Ok(()),
    }
}

/// `COLUMNS(*)` or `COLUMNS(q.*)`.
fn columns(qualifier: Option<&ObjectName>) -> Result<Expr> {
    let sql = match qualifier {
        None => "COLUMNS(*)".to_string(),
        Some(q) => format!("COLUMNS({q}.*)"),
    };
    sqlparser::parser::Parser::new(&sqlparser::dialect::DuckDbDialect {})
        .try_with_sql(&sql)
        .and_then(|mut p| p.parse_expr())
        .map_err(|_| crate::error::AclError::internal("a star did not become COLUMNS"))
}

fn is_columns(name: &ObjectName) -> bool {
    matches!(name.0.as_slice(), [ObjectNamePart::Identifier(i)] if i.value.eq_ignore_ascii_case("columns"))
}

/// A plain column reference (bare or qualified): what is wrapped.
fn column_ref(e: &Expr) -> Option<&Ident> {
    match e {
        Expr::Identifier(i) => Some(i),
        Expr::CompoundIdentifier(parts) => parts.last(),
        _ => None,
    }
}

/// A name DuckDB gives a select item of its own: not `#n` (positional, named by the column it
/// reaches: through the cast it is named by its text), a star pattern's `*` or a cut's marker.
fn named_column(i: &Ident) -> bool {
    let raw = i.quote_style.is_none() && (i.value.starts_with('#') || i.value == "*");
    !raw && !crate::rewrite::parse::cuts::is_marker(&i.value)
}

fn addr<T>(t: &T) -> usize {
    t as *const T as usize
}

struct Wrap<'o> {
    object: &'o str,
    /// The target is column-restricted: the column rule refuses every star over it (and names
    /// the columns the principal may use), so stars are left to it.
    restricted: bool,
}

impl<'o> Wrap<'o> {
    fn new(object: &'o str, restricted: bool) -> Wrap<'o> {
        Wrap { object, restricted }
    }

    fn expr(&self, e: &mut Expr) -> Result<()> {
        let mut v = Walker { object: self.object, restricted: self.restricted, in_columns: 0, keep: HashSet::new(), lambdas: Vec::new() };
        match e.walk_mut(&mut v) {
            ControlFlow::Break(err) => Err(err),
            ControlFlow::Continue(()) => Ok(()),
        }
    }

    fn opt(&self, e: &mut Option<Expr>) -> Result<()> {
        e.as_mut().map_or(Ok(()), |e| self.expr(e))
    }

    fn returning(&self, items: &mut Option<Vec<SelectItem>>) -> Result<()> {
        items.as_mut().map_or(Ok(()), |items| self.items(items, true))
    }

    /// A select list (`returning`: RETURNING, where `*` is the target's row), then its expressions.
    fn items(&self, items: &mut [SelectItem], returning: bool) -> Result<()> {
        items_as_cast(items, returning, self.object, self.restricted)?;
        for item in items.iter_mut() {
            match item {
                SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } | SelectItem::ExprWithAliases { expr: e, .. } => {
                    self.expr(e)?
                }
                SelectItem::Wildcard(_) | SelectItem::QualifiedWildcard(..) => {}
            }
        }
        Ok(())
    }
}

/// Rewrites a select list's items before their expressions are walked: a bare column gets its
/// own name as alias (the cast would otherwise name it), `q.*` becomes `COLUMNS(q.*)` and, in
/// RETURNING, `*` becomes `COLUMNS(*)` (each column through the cast, its name kept). A star
/// with modifiers (EXCLUDE, REPLACE, …) is refused where it may expand the target's row. On a
/// column-restricted target stars stay as written: the column rule refuses them.
fn items_as_cast(items: &mut [SelectItem], returning: bool, object: &str, restricted: bool) -> Result<()> {
    let plain = |o: &WildcardAdditionalOptions| {
        o.opt_ilike.is_none()
            && o.opt_exclude.is_none()
            && o.opt_except.is_none()
            && o.opt_replace.is_none()
            && o.opt_rename.is_none()
            && o.opt_alias.is_none()
    };
    let refused = || SlicedWrite::EnumStar { object: object.to_string() };
    for item in items.iter_mut() {
        let replacement = match item {
            SelectItem::UnnamedExpr(e) => match column_ref(e).filter(|i| named_column(i)) {
                Some(name) => {
                    let alias = name.clone();
                    SelectItem::ExprWithAlias { expr: e.clone(), alias }
                }
                None => continue,
            },
            SelectItem::Wildcard(_) | SelectItem::QualifiedWildcard(..) if restricted => continue,
            SelectItem::Wildcard(o) if returning => match plain(o) {
                true => SelectItem::UnnamedExpr(columns(None)?),
                false => return Err(refused().into()),
            },
            SelectItem::QualifiedWildcard(SelectItemQualifiedWildcardKind::ObjectName(q), o) => match plain(o) {
                true => SelectItem::UnnamedExpr(columns(Some(q))?),
                false => return Err(refused().into()),
            },
            SelectItem::QualifiedWildcard(SelectItemQualifiedWildcardKind::Expr(_), _) => return Err(refused().into()),
            _ => continue,
        };
        *item = replacement;
    }
    Ok(())
}

struct Walker<'o> {
    object: &'o str,
    restricted: bool,
    /// Inside `COLUMNS(…)`'s arguments: names there select columns, they are not values.
    in_columns: usize,
    /// Bare GROUP BY and ORDER BY keys and the `.field` names of field accesses (by address),
    /// left as written.
    keep: HashSet<usize>,
    /// The parameters of the `lambda x: …` bodies being walked: a bare one is the list's element
    /// (read through the cast with its list), not a column.
    lambdas: Vec<Vec<String>>,
}

impl Walker<'_> {
    fn keep_bare(&mut self, e: &Expr) {
        match e {
            Expr::Identifier(_) | Expr::CompoundIdentifier(_) => {
                self.keep.insert(addr(e));
            }
            Expr::Rollup(sets) | Expr::Cube(sets) | Expr::GroupingSets(sets) => {
                for e in sets.iter().flatten() {
                    self.keep_bare(e);
                }
            }
            Expr::Tuple(items) => items.iter().for_each(|e| self.keep_bare(e)),
            Expr::Nested(inner) => self.keep_bare(inner),
            _ => {}
        }
    }
}

impl VisitorMut for Walker<'_> {
    type Break = crate::error::AclError;

    /// A query's own ORDER BY keys order, they are not values: a bare one stays as written (it may
    /// name an output column of a set operation).
    fn pre_visit_query(&mut self, q: &mut sqlparser::ast::Query) -> ControlFlow<Self::Break> {
        if let Some(sqlparser::ast::OrderBy { kind: sqlparser::ast::OrderByKind::Expressions(keys), .. }) = &q.order_by {
            for k in keys {
                self.keep_bare(&k.expr);
            }
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_select(&mut self, s: &mut Select) -> ControlFlow<Self::Break> {
        if let Err(e) = items_as_cast(&mut s.projection, false, self.object, self.restricted) {
            return ControlFlow::Break(e);
        }
        if let GroupByExpr::Expressions(keys, _) = &s.group_by {
            for k in keys {
                self.keep_bare(k);
            }
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, e: &mut Expr) -> ControlFlow<Self::Break> {
        match e {
            Expr::Function(f) if is_columns(&f.name) => self.in_columns += 1,
            Expr::CompoundFieldAccess { access_chain, .. } => {
                for a in access_chain.iter() {
                    if let AccessExpr::Dot(d @ (Expr::Identifier(_) | Expr::CompoundIdentifier(_))) = a {
                        self.keep.insert(addr(d));
                    }
                }
            }
            Expr::Lambda(l) if l.syntax == LambdaSyntax::LambdaKeyword => {
                self.lambdas.push(l.params.iter().map(|p| norm(&p.name.value)).collect());
            }
            _ => {}
        }
        ControlFlow::Continue(())
    }

    fn post_visit_expr(&mut self, e: &mut Expr) -> ControlFlow<Self::Break> {
        match e {
            Expr::Lambda(l) if l.syntax == LambdaSyntax::LambdaKeyword => {
                self.lambdas.pop();
            }
            Expr::Identifier(i) if self.lambdas.iter().flatten().any(|p| *p == norm(&i.value)) => {}
            Expr::Function(f) if is_columns(&f.name) => {
                self.in_columns -= 1;
                if self.in_columns == 0 {
                    *e = cast(std::mem::replace(e, Expr::value(sqlparser::ast::Value::Null)));
                }
            }
            Expr::Identifier(_) | Expr::CompoundIdentifier(_) if self.in_columns == 0 && !self.keep.contains(&addr(&*e)) => {
                let name = column_ref(e).expect("a column reference");
                // A star pattern's `*` (`* LIKE 'a%'`) expands the row: refused. `DEFAULT` and a
                // cut-out's marker are no value; `#n` is one (a column of the target's row).
                if name.quote_style.is_none() && name.value == "*" {
                    if self.restricted {
                        return ControlFlow::Continue(()); // the column rule's to refuse
                    }
                    return ControlFlow::Break(SlicedWrite::EnumStar { object: self.object.to_string() }.into());
                }
                let marker = crate::rewrite::parse::cuts::is_marker(&name.value);
                let default = matches!(e, Expr::Identifier(i) if super::is_default_keyword(i));
                if !(marker || default) {
                    *e = cast(std::mem::replace(e, Expr::value(sqlparser::ast::Value::Null)));
                }
            }
            _ => {}
        }
        ControlFlow::Continue(())
    }
}

/// The column a join key compares, seen through the cast: `acl_enum_varchar(t.a)` is `t.a`.
pub(super) fn uncast(e: &Expr) -> &Expr {
    if let Expr::Function(f) = e {
        let path = f.name.0.iter().map(|p| match p {
            ObjectNamePart::Identifier(i) => norm(&i.value),
            _ => String::new(),
        });
        if path.eq(crate::authz::enums::ENUM_FN) {
            if let FunctionArguments::List(list) = &f.args {
                if let [FunctionArg::Unnamed(FunctionArgExpr::Expr(inner))] = list.args.as_slice() {
                    return inner;
                }
            }
        }
    }
    e
}
