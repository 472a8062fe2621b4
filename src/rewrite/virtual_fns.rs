//! Expanding virtual functions (surface §2), after `relations` resolved the principal's own
//! SQL: a marked call becomes its body with `acl_arg(n)` replaced by the n-th argument (cast to
//! the declared type) and `acl_claim('k')` by the claim's value. The body is operator-written and
//! trusted: its physical tables and table functions join the decision as they are, and its
//! function calls are not gated. The arguments are the principal's and were walked like any
//! expression before they got here.
use super::functions::{acl_arg_index, VirtualCall, MARKER};
use super::Decision;
use crate::admin::slice::{claim_name, is_acl_claim};
use crate::authz::View;
use crate::error::{AclError, Result};
use crate::policy::functions::{FnBody, FnKind};
use crate::policy::PhysName;
use sqlparser::ast::{
    CastKind, Expr, Function, FunctionArg, FunctionArgExpr, FunctionArguments, Ident, ObjectName, ObjectNamePart,
    Query, TableAlias, TableFactor, Value, VisitMut, VisitorMut,
};
use std::ops::ControlFlow;

pub(super) fn expand(stmt: &mut sqlparser::ast::Statement, view: &View<'_>, calls: &[VirtualCall], decision: &mut Decision) -> Result<()> {
    if calls.is_empty() {
        return Ok(());
    }
    let mut e = Expand { view, calls, decision, done: vec![false; calls.len()] };
    if let ControlFlow::Break(err) = stmt.visit(&mut e) {
        return Err(err);
    }
    if e.done.iter().any(|d| !d) {
        return Err(AclError::internal("a virtual function call was not expanded"));
    }
    Ok(())
}

struct Expand<'a, 'v> {
    view: &'a View<'v>,
    calls: &'a [VirtualCall],
    decision: &'a mut Decision,
    done: Vec<bool>,
}

/// The call index a marker name stands for.
fn marker_index(name: &ObjectName) -> Option<usize> {
    match name.0.as_slice() {
        [ObjectNamePart::Identifier(i)] if i.quote_style == Some('"') => i.value.strip_prefix(MARKER)?.parse().ok(),
        _ => None,
    }
}

fn plain_args(args: &[FunctionArg], shown: &str) -> Result<Vec<Expr>> {
    args.iter()
        .map(|a| match a {
            FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => Ok(e.clone()),
            _ => Err(AclError::refused(format!("virtual function {shown} takes positional arguments only"))),
        })
        .collect()
}

impl<'a> Expand<'a, '_> {
    /// Marks call `i` expanded (once, in a position of its kind) and returns it.
    fn take(&mut self, i: usize, kind: FnKind) -> Result<&'a VirtualCall> {
        let calls: &'a [VirtualCall] = self.calls;
        let call = calls.get(i).ok_or_else(|| AclError::internal("unknown virtual function marker"))?;
        if call.kind != kind || self.done[i] {
            return Err(AclError::internal("a virtual function marker is out of place"));
        }
        self.done[i] = true;
        Ok(call)
    }

    /// The arguments cast to the declared types (checked against their number).
    fn bind_args(call: &VirtualCall, args: Vec<Expr>) -> Result<Vec<Expr>> {
        let Some(params) = &call.function.params else { return Ok(args) };
        if params.len() != args.len() {
            return Err(AclError::refused(format!(
                "virtual function {} takes {} argument{}",
                call.key,
                params.len(),
                if params.len() == 1 { "" } else { "s" }
            )));
        }
        Ok(args
            .into_iter()
            .zip(params)
            .map(|(e, (_, t))| Expr::Cast { kind: CastKind::Cast, expr: Box::new(e), data_type: t.clone(), format: None })
            .collect())
    }

    fn scalar(&mut self, expr: &mut Expr) -> Result<()> {
        let Expr::Function(f) = expr else { return Ok(()) };
        let Some(i) = marker_index(&f.name) else { return Ok(()) };
        let call = self.take(i, FnKind::Scalar)?;
        let args = match &f.args {
            FunctionArguments::List(l) if l.duplicate_treatment.is_none() && l.clauses.is_empty() => {
                plain_args(&l.args, &call.key.to_string())?
            }
            _ => return Err(AclError::refused(format!("virtual function {} takes positional arguments only", call.key))),
        };
        let args = Self::bind_args(call, args)?;
        let new = match &*call.function.body {
            FnBody::Alias(target) => {
                let mut g = f.clone();
                g.name = target.clone();
                self.decision.functions.push(super::defence::parts(target));
                g.args = FunctionArguments::List(sqlparser::ast::FunctionArgumentList {
                    duplicate_treatment: None,
                    args: args.into_iter().map(|e| FunctionArg::Unnamed(FunctionArgExpr::Expr(e))).collect(),
                    clauses: vec![],
                });
                Expr::Function(g)
            }
            FnBody::Expr(body) => {
                self.decision.room.take(body_growth(body))?; // spec 012, "Memory"
                let mut body = body.clone();
                self.substitute(&mut body, &args)?;
                Expr::Nested(Box::new(body))
            }
            FnBody::Query(_) => return Err(AclError::internal("a table function body in a scalar position")),
        };
        *expr = new;
        Ok(())
    }

    fn table(&mut self, tf: &mut TableFactor) -> Result<()> {
        let TableFactor::Table { name, args: Some(targs), alias, .. } = tf else { return Ok(()) };
        let Some(i) = marker_index(name) else { return Ok(()) };
        let call = self.take(i, FnKind::Table)?;
        let args = Self::bind_args(call, plain_args(&targs.args, &call.key.to_string())?)?;
        let marker = name.clone();
        self.decision.table_functions.retain(|n| *n != marker);
        let mut query: Box<Query> = match &*call.function.body {
            FnBody::Alias(target) => {
                *name = target.clone();
                targs.args = args.into_iter().map(|e| FunctionArg::Unnamed(FunctionArgExpr::Expr(e))).collect();
                self.decision.table_functions.push(target.clone());
                if alias.is_none() {
                    *alias = Some(alias_as(&call.key.name));
                }
                return Ok(());
            }
            FnBody::Query(q) => {
                self.decision.room.take(body_growth(q))?; // spec 012, "Memory"
                q.clone()
            }
            FnBody::Expr(_) => return Err(AclError::internal("a scalar body in FROM")),
        };
        self.substitute(&mut *query, &args)?;
        let alias = alias.take().unwrap_or_else(|| alias_as(&call.key.name));
        *tf = TableFactor::Derived { lateral: false, subquery: query, alias: Some(alias), sample: None };
        Ok(())
    }

    /// Replaces the placeholders in a (cloned) body and records what the body names.
    fn substitute<T: VisitMut>(&mut self, body: &mut T, args: &[Expr]) -> Result<()> {
        let mut s = Subst { view: self.view, args, decision: self.decision };
        match body.visit(&mut s) {
            ControlFlow::Break(e) => Err(e),
            ControlFlow::Continue(()) => Ok(()),
        }
    }
}

/// What an expansion adds to the statement at least: the body's own text without its `acl_arg`
/// and `acl_claim` calls (replaced by the arguments, which the statement held already, and by
/// literals, which may be shorter than the calls).
fn body_growth<T: std::fmt::Display + sqlparser::ast::Visit>(body: &T) -> usize {
    struct Placeholders(usize);
    impl sqlparser::ast::Visitor for Placeholders {
        type Break = ();
        fn pre_visit_expr(&mut self, e: &Expr) -> ControlFlow<()> {
            if let Expr::Function(f) = e {
                if acl_arg_index(f).is_some() || is_acl_claim(f) {
                    self.0 += e.to_string().len();
                }
            }
            ControlFlow::Continue(())
        }
    }
    let mut p = Placeholders(0);
    let _ = body.visit(&mut p);
    body.to_string().len().saturating_sub(p.0)
}

fn alias_as(name: &str) -> TableAlias {
    TableAlias { explicit: true, name: Ident::with_quote('"', name), columns: vec![], at: None }
}

impl VisitorMut for Expand<'_, '_> {
    type Break = AclError;

    fn pre_visit_table_factor(&mut self, tf: &mut TableFactor) -> ControlFlow<AclError> {
        to_flow(self.table(tf))
    }

    fn pre_visit_expr(&mut self, expr: &mut Expr) -> ControlFlow<AclError> {
        to_flow(self.scalar(expr))
    }
}

fn to_flow(r: Result<()>) -> ControlFlow<AclError> {
    match r {
        Ok(()) => ControlFlow::Continue(()),
        Err(e) => ControlFlow::Break(e),
    }
}

/// Inside a body: placeholders out, the body's own tables, CTEs and table functions in.
struct Subst<'a, 'v> {
    view: &'a View<'v>,
    args: &'a [Expr],
    decision: &'a mut Decision,
}

impl VisitorMut for Subst<'_, '_> {
    type Break = AclError;

    fn pre_visit_expr(&mut self, expr: &mut Expr) -> ControlFlow<AclError> {
        let Expr::Function(f) = expr else { return ControlFlow::Continue(()) };
        if let Some(n) = acl_arg_index(f) {
            match self.args.get(n - 1) {
                Some(a) => *expr = Expr::Nested(Box::new(a.clone())),
                None => return ControlFlow::Break(AclError::internal("acl_arg out of range")),
            }
        } else if is_acl_claim(f) {
            let Some(name) = claim_name(f) else {
                return ControlFlow::Break(AclError::internal("acl_claim without a literal name"));
            };
            let v = self.view.claim(&name).map_or(Value::Null, |c| Value::SingleQuotedString(c.to_string()));
            *expr = Expr::value(v);
        } else {
            // The body's own calls are not gated; the second check accepts them as written.
            self.decision.functions.push(super::defence::parts(&f.name));
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_query(&mut self, q: &mut Query) -> ControlFlow<AclError> {
        if let Some(with) = &q.with {
            for cte in &with.cte_tables {
                self.decision.ctes.push(cte.alias.name.value.clone());
            }
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_table_factor(&mut self, tf: &mut TableFactor) -> ControlFlow<AclError> {
        if let TableFactor::Table { name, args: Some(_), .. } = tf {
            self.decision.table_functions.push(name.clone());
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_relation(&mut self, name: &mut ObjectName) -> ControlFlow<AclError> {
        // Bodies were normalised at CREATE: three quoted parts, or a quoted CTE name.
        if let [ObjectNamePart::Identifier(d), ObjectNamePart::Identifier(s), ObjectNamePart::Identifier(t)] =
            name.0.as_slice()
        {
            self.decision.physical.push(PhysName { db: d.value.clone(), schema: s.value.clone(), name: t.value.clone() });
        }
        ControlFlow::Continue(())
    }
}

/// Used by management: checks a body and normalises its table names so the post-check can
/// match them (three quoted parts, or a quoted CTE of the body). Returns the highest `acl_arg`.
pub fn normalise_body<T: VisitMut>(body: &mut T) -> Result<usize> {
    struct Norm {
        ctes: Vec<String>,
        /// The next relation is a table function's name, not a table.
        function_name: bool,
        max_arg: usize,
        err: Option<AclError>,
    }
    impl VisitorMut for Norm {
        type Break = ();
        fn pre_visit_query(&mut self, q: &mut Query) -> ControlFlow<()> {
            if let Some(with) = &mut q.with {
                for cte in &mut with.cte_tables {
                    self.ctes.push(cte.alias.name.value.to_lowercase());
                    cte.alias.name = Ident::with_quote('"', cte.alias.name.value.to_lowercase());
                }
            }
            ControlFlow::Continue(())
        }
        fn pre_visit_expr(&mut self, e: &mut Expr) -> ControlFlow<()> {
            if let Expr::Function(f) = e {
                if let Some(n) = acl_arg_index(f) {
                    self.max_arg = self.max_arg.max(n);
                } else if let Some(bad) = never_in_body(f) {
                    self.err = Some(AclError::invalid(format!("function \"{bad}\" may not be used in a virtual function")));
                    return ControlFlow::Break(());
                }
            }
            ControlFlow::Continue(())
        }
        fn pre_visit_table_factor(&mut self, tf: &mut TableFactor) -> ControlFlow<()> {
            self.function_name = false;
            if let TableFactor::Table { name, args: Some(_), .. } = tf {
                self.function_name = true;
                if let Some(ObjectNamePart::Identifier(i)) = name.0.last() {
                    if super::never_callable(&i.value) {
                        self.err = Some(AclError::invalid(format!(
                            "function \"{}\" may not be used in a virtual function",
                            i.value.to_lowercase()
                        )));
                        return ControlFlow::Break(());
                    }
                }
            }
            ControlFlow::Continue(())
        }
        fn pre_visit_relation(&mut self, name: &mut ObjectName) -> ControlFlow<()> {
            if std::mem::take(&mut self.function_name) {
                return ControlFlow::Continue(());
            }
            let parts: Vec<Ident> = name
                .0
                .iter()
                .filter_map(|p| match p {
                    ObjectNamePart::Identifier(i) => Some(i.clone()),
                    _ => None,
                })
                .collect();
            match parts.as_slice() {
                [one] if self.ctes.contains(&one.value.to_lowercase()) => {
                    *name = ObjectName::from(vec![Ident::with_quote('"', one.value.to_lowercase())]);
                }
                [_, _, _] if parts.len() == name.0.len() => {
                    *name = ObjectName::from(parts.iter().map(|i| Ident::with_quote('"', &i.value)).collect::<Vec<_>>());
                }
                _ => {
                    self.err = Some(AclError::invalid(
                        "a virtual function body must name its tables as db.schema.table (or a CTE of the body)",
                    ));
                    return ControlFlow::Break(());
                }
            }
            ControlFlow::Continue(())
        }
    }
    let mut n = Norm { ctes: Vec::new(), function_name: false, max_arg: 0, err: None };
    let _ = body.visit(&mut n);
    match n.err {
        Some(e) => Err(e),
        None => Ok(n.max_arg),
    }
}

/// A never-callable function in a body (other than the placeholders): an operator may expose a
/// reader through a virtual function, but not a way to run SQL text.
fn never_in_body(f: &Function) -> Option<String> {
    let last = match f.name.0.last() {
        Some(ObjectNamePart::Identifier(i)) => i.value.to_lowercase(),
        _ => return None,
    };
    let allowed = last == "acl_arg" || last == "acl_claim";
    (!allowed && super::never_callable(&last)).then_some(last)
}
