//! Rule: on a column-restricted write target, every expression the write evaluates names only
//! granted columns (spec 002, "Hidden columns in writes").
//!
//! Inside a write the target is the physical table itself (DuckDB writes only base tables), so a
//! star, `COLUMNS(…)`, a whole-row reference or an unqualified name in a correlated subquery would
//! reach its hidden columns. DuckDB's binder is not available in the parser hook, so the rule is
//! one that can be decided from the text alone:
//! - an unqualified name is a granted column (inside a subquery too: it may resolve outward to
//!   the target), or a `lambda x: …` parameter in scope (`x -> …` is DuckDB's JSON operator on a
//!   column `x`, not a lambda);
//! - in `q.c…`, where a prefix names the target (its alias, its virtual or physical name, with
//!   schema and database), the column after it must be granted — even when `q` is also a lambda
//!   parameter: DuckDB binds `q.c` to a table `q` first; otherwise `q` must be a granted column (a
//!   struct field), a lambda parameter or a relation the statement itself introduces;
//! - `*`, `q.*` and `COLUMNS(…)` only inside a subquery with its own FROM, never over the target;
//!   the same for a star filtered by a pattern (`* LIKE 'a%'`, read from DuckDB's print as
//!   `(* ~~ 'a%')`, spec 016);
//! - `#n` (positional): never, outside a subquery with its own FROM. Over the target it would
//!   count the physical table's columns, hidden ones included, not the principal's.
use crate::sqltext::Walk as _;
use super::is_default_keyword;
use crate::error::{AclError, NotGranted, Result, SlicedWrite};
use crate::policy::{norm, ObjKey, PhysName};
use sqlparser::ast::{
    Expr, FunctionArg, FunctionArgExpr, FunctionArgumentList, FunctionArguments, Ident, LambdaSyntax, ObjectName,
    ObjectNamePart, Query, Select, SelectItem, SelectItemQualifiedWildcardKind, TableFactor, Visit, Visitor,
};
use std::collections::{BTreeSet, HashSet};
use std::ops::ControlFlow;

/// The names under which DuckDB may bind the target row besides the statement's alias.
pub(super) struct TargetNames {
    single: Vec<String>,
    paths: Vec<Vec<String>>,
}

impl TargetNames {
    pub(super) fn new(key: &ObjKey, phys: &PhysName) -> TargetNames {
        let (db, schema, name) = (norm(&phys.db), norm(&phys.schema), norm(&phys.name));
        TargetNames {
            single: vec![key.name.clone(), name.clone()],
            paths: vec![
                vec![schema.clone(), name.clone()],
                vec![db, schema, name],
                vec![key.schema.clone(), key.name.clone()],
                vec![key.catalog.clone(), key.schema.clone(), key.name.clone()],
            ],
        }
    }

    /// Is `q` (normalised) one of the target's own one-part names?
    pub(super) fn denotes(&self, q: &str) -> bool {
        self.single.iter().any(|s| s == q)
    }
}

/// The relation names a statement introduces (FROM items' aliases or table names, table
/// functions' names): qualifiers that do not denote the target.
pub(super) fn introduced<V: Visit>(node: &V) -> HashSet<String> {
    struct Names(HashSet<String>);
    impl Visitor for Names {
        type Break = ();
        fn pre_visit_table_factor(&mut self, tf: &TableFactor) -> ControlFlow<()> {
            let name = match tf {
                TableFactor::Table { alias: Some(a), .. }
                | TableFactor::Derived { alias: Some(a), .. }
                | TableFactor::UNNEST { alias: Some(a), .. } => Some(&a.name),
                TableFactor::Table { name, alias: None, .. } => match name.0.last() {
                    Some(ObjectNamePart::Identifier(i)) => Some(i),
                    _ => None,
                },
                _ => None,
            };
            if let Some(n) = name {
                self.0.insert(norm(&n.value));
            }
            ControlFlow::Continue(())
        }
    }
    let mut names = Names(HashSet::new());
    let _ = node.walk(&mut names);
    names.0
}

pub(super) struct Rule<'s> {
    /// `None`: every column is granted, nothing to check.
    granted: Option<&'s BTreeSet<String>>,
    object: &'s str,
    single: Vec<String>,
    paths: &'s [Vec<String>],
    others: HashSet<String>,
    /// Unqualified names that are not columns of the target (MERGE's `merge_action`).
    extra: &'s [&'s str],
}

impl<'s> Rule<'s> {
    pub(super) fn new(
        granted: Option<&'s BTreeSet<String>>,
        object: &'s str,
        names: &'s TargetNames,
        alias: Option<&str>,
        others: HashSet<String>,
        extra: &'s [&'s str],
    ) -> Rule<'s> {
        let mut single = names.single.clone();
        single.extend(alias.map(norm));
        Rule { granted, object, single, paths: &names.paths, others, extra }
    }

    /// Every column reference and star in `node` (an expression, a list of them, …).
    pub(super) fn expr<V: Visit>(&self, node: &V) -> Result<()> {
        if self.granted.is_none() {
            return Ok(());
        }
        let mut w = Walk { rule: self, from: Vec::new(), lambdas: Vec::new(), fields: HashSet::new() };
        match node.walk(&mut w) {
            ControlFlow::Break(e) => Err(e),
            ControlFlow::Continue(()) => Ok(()),
        }
    }

    /// RETURNING: no star at all (it would expand the target), then the expressions.
    pub(super) fn returning(&self, items: &[SelectItem]) -> Result<()> {
        if self.granted.is_some()
            && items.iter().any(|i| matches!(i, SelectItem::Wildcard(_) | SelectItem::QualifiedWildcard(..)))
        {
            return Err(SlicedWrite::ReturningStar { object: self.object.to_string() }.into());
        }
        items.iter().try_for_each(|i| self.expr(i))
    }

    /// One column reference written as `parts` (outside any lambda).
    pub(super) fn name(&self, parts: &[Ident]) -> Result<()> {
        if self.granted.is_none() {
            return Ok(());
        }
        Walk { rule: self, from: Vec::new(), lambdas: Vec::new(), fields: HashSet::new() }.column(parts)
    }

    fn granted(&self, col: &str) -> bool {
        self.granted.is_none_or(|g| g.contains(col))
    }

    /// Does `prefix` name the target row?
    fn is_target(&self, prefix: &[String]) -> bool {
        match prefix {
            [one] => self.single.iter().any(|s| s == one),
            _ => self.paths.iter().any(|p| p.as_slice() == prefix),
        }
    }

    fn not_granted(&self, written: &Ident) -> AclError {
        NotGranted::Column { column: written.value.clone(), object: self.object.to_string() }.into()
    }

    fn star(&self) -> AclError {
        SlicedWrite::Star { object: self.object.to_string() }.into()
    }
}

struct Walk<'r, 's> {
    rule: &'r Rule<'s>,
    /// Per enclosing SELECT (true: it has a FROM), query or FROM item (false).
    from: Vec<bool>,
    lambdas: Vec<Vec<String>>,
    /// Addresses of `.field` names in a field access chain: not column references.
    fields: HashSet<usize>,
}

fn addr<T>(t: &T) -> usize {
    t as *const T as usize
}

impl Walk<'_, '_> {
    /// A star may expand only the FROM of the query it is written in.
    fn own_from(&self) -> bool {
        self.from.last().copied().unwrap_or(false)
    }

    fn is_lambda(&self, name: &str) -> bool {
        self.lambdas.iter().any(|l| l.iter().any(|p| p == name))
    }

    fn column(&self, parts: &[Ident]) -> Result<()> {
        let rule = self.rule;
        let p: Vec<String> = parts.iter().map(|i| norm(&i.value)).collect();
        let Some(head) = p.first() else { return Ok(()) };
        // `#n` and a pattern's `*` stand in the tree as unquoted names (`parse::dialect::raw`)
        if p.len() == 1 && parts[0].quote_style.is_none() && (head.starts_with('#') || head == "*") {
            if self.own_from() {
                return Ok(()); // a subquery's own FROM
            }
            return Err(if head == "*" { rule.star() } else { SlicedWrite::Positional { object: rule.object.to_string() }.into() });
        }
        if p.len() == 1 && crate::rewrite::parse::cuts::is_marker(&parts[0].value) {
            return Ok(()); // a clause cut out of DuckDB's print stands here (spec 016)
        }
        if p.len() == 1 {
            // a lambda parameter wins over a column, and a column over the row of a table
            if self.is_lambda(head)
                || rule.granted(head)
                || rule.extra.iter().any(|e| e == head)
                || is_default_keyword(&parts[0])
            {
                return Ok(());
            }
            return Err(rule.not_granted(&parts[0]));
        }
        // DuckDB binds `x.c` to a table x before a lambda parameter x: the target's names first
        let mut target = false;
        for k in 1..p.len() {
            if rule.is_target(&p[..k]) {
                target = true;
                if !rule.granted(&p[k]) {
                    return Err(rule.not_granted(&parts[k]));
                }
            }
        }
        if target || rule.granted(head) || rule.others.contains(head) || self.is_lambda(head) {
            return Ok(());
        }
        Err(SlicedWrite::ForeignQualifier { column: parts[p.len() - 1].value.clone(), object: rule.object.to_string() }.into())
    }

    /// `q.*`: never over the target; elsewhere only over a relation of the statement, a granted
    /// (struct) column or a lambda parameter.
    fn qualified_star(&self, q: &ObjectName) -> Result<()> {
        let p: Vec<String> = q
            .0
            .iter()
            .map(|part| match part {
                ObjectNamePart::Identifier(i) => norm(&i.value),
                other => other.to_string(),
            })
            .collect();
        let rule = self.rule;
        let target = (1..=p.len()).any(|k| rule.is_target(&p[..k]));
        match p.as_slice() {
            _ if target => Err(rule.star()),
            [one] if rule.others.contains(one) || rule.granted(one) || self.is_lambda(one) => Ok(()),
            _ => Err(rule.star()),
        }
    }

    fn function(&self, f: &sqlparser::ast::Function) -> Result<()> {
        let last = match f.name.0.last() {
            Some(ObjectNamePart::Identifier(i)) => norm(&i.value),
            _ => String::new(),
        };
        if f.name.0.len() == 1 && last == "columns" && !self.own_from() {
            return Err(self.rule.star());
        }
        let FunctionArguments::List(FunctionArgumentList { args, .. }) = &f.args else { return Ok(()) };
        for a in args {
            let arg = match a {
                FunctionArg::Named { arg, .. } | FunctionArg::ExprNamed { arg, .. } | FunctionArg::Unnamed(arg) => arg,
            };
            match arg {
                // count(*) counts rows and reads no column
                FunctionArgExpr::Wildcard if last == "count" => {}
                FunctionArgExpr::Wildcard | FunctionArgExpr::WildcardWithOptions(_) if !self.own_from() => {
                    return Err(self.rule.star())
                }
                FunctionArgExpr::QualifiedWildcard(q) => self.qualified_star(q)?,
                _ => {}
            }
        }
        Ok(())
    }

    /// A SELECT's own stars: `*` needs its FROM, `q.*` a qualifier that is not the target.
    fn select(&self, s: &Select) -> Result<()> {
        for item in &s.projection {
            match item {
                SelectItem::Wildcard(_) if s.from.is_empty() => return Err(self.rule.star()),
                SelectItem::QualifiedWildcard(SelectItemQualifiedWildcardKind::ObjectName(n), _) => self.qualified_star(n)?,
                _ => {}
            }
        }
        Ok(())
    }
}

fn flow(r: Result<()>) -> ControlFlow<AclError> {
    match r {
        Ok(()) => ControlFlow::Continue(()),
        Err(e) => ControlFlow::Break(e),
    }
}

impl Visitor for Walk<'_, '_> {
    type Break = AclError;

    // A query's ORDER BY, LIMIT and VALUES rows have no FROM of their own; its SELECTs do.
    fn pre_visit_query(&mut self, _: &Query) -> ControlFlow<AclError> {
        self.from.push(false);
        ControlFlow::Continue(())
    }

    fn post_visit_query(&mut self, _: &Query) -> ControlFlow<AclError> {
        self.from.pop();
        ControlFlow::Continue(())
    }

    fn pre_visit_select(&mut self, s: &Select) -> ControlFlow<AclError> {
        self.from.push(!s.from.is_empty());
        flow(self.select(s))
    }

    fn post_visit_select(&mut self, _: &Select) -> ControlFlow<AclError> {
        self.from.pop();
        ControlFlow::Continue(())
    }

    fn pre_visit_table_factor(&mut self, _: &TableFactor) -> ControlFlow<AclError> {
        self.from.push(false);
        ControlFlow::Continue(())
    }

    fn post_visit_table_factor(&mut self, _: &TableFactor) -> ControlFlow<AclError> {
        self.from.pop();
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, e: &Expr) -> ControlFlow<AclError> {
        match e {
            Expr::Identifier(i) if !self.fields.contains(&addr(e)) => flow(self.column(std::slice::from_ref(i))),
            Expr::CompoundIdentifier(parts) if !self.fields.contains(&addr(e)) => flow(self.column(parts)),
            Expr::CompoundFieldAccess { access_chain, .. } => {
                for a in access_chain {
                    if let sqlparser::ast::AccessExpr::Dot(d @ (Expr::Identifier(_) | Expr::CompoundIdentifier(_))) = a {
                        self.fields.insert(addr(d));
                    }
                }
                ControlFlow::Continue(())
            }
            Expr::Wildcard(_) if !self.own_from() => ControlFlow::Break(self.rule.star()),
            Expr::QualifiedWildcard(q, _) => flow(self.qualified_star(q)),
            Expr::Function(f) => flow(self.function(f)),
            Expr::Lambda(l) => match l.syntax {
                LambdaSyntax::LambdaKeyword => {
                    self.lambdas.push(l.params.iter().map(|p| norm(&p.name.value)).collect());
                    ControlFlow::Continue(())
                }
                // DuckDB binds `a -> b` as the JSON operator on a column `a`
                LambdaSyntax::Arrow => {
                    for p in l.params.iter() {
                        if let ControlFlow::Break(e) = flow(self.column(std::slice::from_ref(&p.name))) {
                            return ControlFlow::Break(e);
                        }
                    }
                    ControlFlow::Continue(())
                }
            },
            _ => ControlFlow::Continue(()),
        }
    }

    fn post_visit_expr(&mut self, e: &Expr) -> ControlFlow<AclError> {
        if let Expr::Lambda(l) = e {
            if l.syntax == LambdaSyntax::LambdaKeyword {
                self.lambdas.pop();
            }
        }
        ControlFlow::Continue(())
    }
}
