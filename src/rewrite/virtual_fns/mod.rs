//! Expanding virtual functions (surface §2, spec 004), after `relations` resolved the principal's
//! own SQL. A call's arguments are the caller's expressions: they bind in the caller's scope and
//! reach the body as values, so nothing the principal wrote can resolve against the body.
//!
//! - A table function with a query body: `FROM f(a1, …) [AS x]` becomes
//!   `(SELECT "__acl_p<j>".* FROM (VALUES (CAST(a1 AS T1), …)) AS "__acl_args"("a1", …),
//!   LATERAL (<body>) AS "__acl_p<j>") AS x`, with `acl_arg(n)` → `"__acl_args"."a<n>"` in the
//!   body. The arguments sit in a VALUES list with no FROM of its own, so their names resolve
//!   only in the caller's scope (a lateral reference to the caller's earlier FROM items keeps
//!   working); the body is region j for the second check (spec 011).
//! - A scalar body that opens no scope of its own (no subquery, no placeholder under a lambda)
//!   and uses each placeholder at most once takes its arguments in place, as
//!   `(CAST(arg AS T))`; any other scalar body becomes
//!   `(SELECT "__acl_p<j>".* FROM (VALUES …) AS "__acl_args"(…), LATERAL (SELECT <body>) AS "__acl_p<j>")`.
//! - `ALIAS OF fn` (and a body that is only `SELECT * FROM fn(acl_arg(1), …)`) calls the real
//!   function with the arguments, in the caller's scope.
//!
//! `acl_claim('k')` becomes the claim's value. The body is operator-written and trusted: it is not
//! gated or resolved again, and what it names is region j's allowed set, read from the stored body.
use crate::sqltext::{Walk as _, WalkMut as _};
use super::defence::{region_alias, Region, ARGS};
use super::functions::VirtualCall;
use super::slices::template;
use super::Decision;
use crate::authz::View;
use crate::error::{AclError, BadCall, Result};
use crate::faults::Faults;
use crate::policy::functions::{FnBody, FnKind};
use crate::sqltext::{acl_arg_index, claim_value, is_acl_claim, quoted};
use sqlparser::ast::{
    CastKind, Expr, FunctionArg, FunctionArgExpr, FunctionArguments, ObjectName,
    Query, SelectItem, SelectItemQualifiedWildcardKind, SetExpr, Statement, TableAlias, TableAliasColumnDef,
    TableFactor, Value, VisitMut, VisitorMut,
};
use std::ops::ControlFlow;
use std::sync::OnceLock;

mod args;

use args::{alias_call, check_arg, positional_only, scalar_form, take_args, Form};
pub(in crate::rewrite) use args::marker_index;

pub(super) fn expand(stmt: &mut Statement, view: &View<'_>, calls: &[VirtualCall], decision: &mut Decision, faults: Faults) -> Result<()> {
    if calls.is_empty() {
        return Ok(());
    }
    let mut e = Expand { view, calls, decision, done: vec![false; calls.len()], in_place_fault: faults.vfn_args_in_place };
    if let ControlFlow::Break(err) = stmt.walk_mut(&mut e) {
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
    /// Test-only fault: the arguments go into the body in place (the old behaviour).
    in_place_fault: bool,
}

fn alias_as(name: &str) -> TableAlias {
    TableAlias { explicit: true, name: quoted(name), columns: vec![], at: None }
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

    /// The arguments cast to the declared types (checked against their number and shape).
    fn bind_args(call: &VirtualCall, args: Vec<Expr>, windows: bool) -> Result<Vec<Expr>> {
        for a in &args {
            check_arg(call, a, windows)?;
        }
        let Some(params) = &call.function.params else { return Ok(args) };
        if params.len() != args.len() {
            return Err(BadCall::ArgumentCount { function: call.key.to_string(), expected: params.len() }.into());
        }
        Ok(args
            .into_iter()
            .zip(params)
            .map(|(e, (_, t))| match t {
                // A body without a parameter list: its arguments pass as given (spec 007).
                sqlparser::ast::DataType::Unspecified => e,
                t => Expr::Cast { kind: CastKind::Cast, expr: Box::new(e), data_type: t.clone(), format: None },
            })
            .collect())
    }

    fn scalar(&mut self, expr: &mut Expr) -> Result<()> {
        let Expr::Function(f) = expr else { return Ok(()) };
        let Some(i) = marker_index(&f.name) else { return Ok(()) };
        let call = self.take(i, FnKind::Scalar)?;
        let args = match &mut f.args {
            FunctionArguments::List(l) if l.duplicate_treatment.is_none() && l.clauses.is_empty() => {
                take_args(&mut l.args, call)?
            }
            _ => return Err(positional_only(call)),
        };
        if let FnBody::Expr(body) = &*call.function.body {
            self.decision.room.take(body_growth(body))?; // spec 012, "Memory"
        }
        let new = match &*call.function.body {
            FnBody::Alias(target) => {
                let args = Self::bind_args(call, args, false)?;
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
            FnBody::Expr(body) => match scalar_form(body) {
                Form::InPlace => {
                    let args = Self::bind_args(call, args, false)?;
                    // The body stands among the principal's own calls (outside every region): its
                    // calls, read from the stored body, join the principal's allowed set.
                    self.decision.functions.extend(Region::of(body).names.functions);
                    let mut body = body.clone();
                    self.substitute(&mut body, Form::InPlace, args)?;
                    self.enum_cast(Expr::Nested(Box::new(body)))
                }
                Form::Region => {
                    let args = Self::bind_args(call, args, true)?;
                    let mut body = body.clone();
                    // Its CTEs bind as DuckDB binds them, or not at all (spec 011, "regions").
                    crate::sqltext::rename_ctes(&mut body);
                    let region = Region::of(&body);
                    let values = self.region_body(&mut body, args)?;
                    static SELECT: OnceLock<Query> = OnceLock::new();
                    let mut inner = Box::new(template(&SELECT, "SELECT 1").clone());
                    if let SetExpr::Select(s) = inner.body.as_mut() {
                        s.projection = vec![SelectItem::UnnamedExpr(body)];
                    }
                    Expr::Subquery(self.region(region, inner, values))
                }
            },
            FnBody::Query(_) => return Err(AclError::internal("a table function body in a scalar position")),
        };
        *expr = new;
        Ok(())
    }

    fn table(&mut self, tf: &mut TableFactor) -> Result<()> {
        let TableFactor::Table { name, args: Some(targs), alias, with_hints, version, with_ordinality, partitions, json_path, sample, index_directives, inheritance } = tf
        else {
            return Ok(());
        };
        let Some(i) = marker_index(name) else { return Ok(()) };
        let call = self.take(i, FnKind::Table)?;
        if !with_hints.is_empty() || version.is_some() || *with_ordinality || !partitions.is_empty() || json_path.is_some()
            || !index_directives.is_empty() || inheritance.is_some() || targs.settings.is_some()
        {
            return Err(BadCall::Form { function: call.key.to_string() }.into());
        }
        let args = take_args(&mut targs.args, call)?;
        let marker = name.clone();
        self.decision.table_functions.retain(|n| *n != marker);
        let n = call.function.params.as_ref().map_or(0, Vec::len);
        let target = match &*call.function.body {
            FnBody::Alias(target) => Some(target),
            FnBody::Query(q) => alias_call(q, n),
            FnBody::Expr(_) => return Err(AclError::internal("a scalar body in FROM")),
        };
        if let Some(target) = target {
            // The real function, with the arguments as given (in the caller's scope, like any
            // table function call the gate admitted).
            let args = Self::bind_args(call, args, false)?;
            *name = target.clone();
            targs.args = args.into_iter().map(|e| FunctionArg::Unnamed(FunctionArgExpr::Expr(e))).collect();
            self.decision.table_functions.push(target.clone());
            if alias.is_none() {
                *alias = Some(alias_as(&call.key.name));
            }
            return Ok(());
        }
        let FnBody::Query(q) = &*call.function.body else { return Err(AclError::internal("a table function without a body")) };
        self.decision.room.take(body_growth(&**q))?; // spec 012, "Memory"
        let args = Self::bind_args(call, args, true)?;
        let mut body = q.clone();
        crate::sqltext::rename_ctes(&mut *body);
        let region = Region::of(&*body);
        let values = self.region_body(&mut *body, args)?;
        let subquery = self.region(region, body, values);
        let alias = alias.take().unwrap_or_else(|| alias_as(&call.key.name));
        let sample = sample.take();
        *tf = TableFactor::Derived { lateral: false, subquery, alias: Some(alias), sample };
        Ok(())
    }

    /// A virtual function's result shows ENUMs as VARCHAR unless the instance's `acl_enum_types`
    /// is `keep` (spec 021): its body is the operator's SQL over physical tables,
    /// which may return a column whose type lists labels of rows the body does not return — a
    /// sliced read.
    fn enums(&self) -> bool {
        self.view.policy.enum_types.varchar(true)
    }

    /// `e` through `"system".main.acl_enum_varchar(…)` under `varchar` (the second check then
    /// expects the call outside every region), else `e`.
    fn enum_cast(&mut self, e: Expr) -> Expr {
        if !self.enums() {
            return e;
        }
        self.decision.functions.push(crate::authz::enums::ENUM_FN.map(String::from).to_vec());
        crate::authz::enums::cast(e)
    }

    /// Substitutes a region body's placeholders; returns the arguments for the VALUES list (none
    /// under the test fault, which puts them inside the body instead).
    fn region_body<T: VisitMut + ?Sized>(&mut self, body: &mut T, args: Vec<Expr>) -> Result<Vec<Expr>> {
        if self.in_place_fault {
            self.substitute(body, Form::InPlace, args)?;
            return Ok(Vec::new());
        }
        let n = args.len();
        self.substitute(body, Form::Region, (0..n).map(|_| Expr::value(Value::Null)).collect())?;
        Ok(args)
    }

    /// Inserts `body` (already substituted) as region j:
    /// `SELECT "__acl_p<j>".* FROM (VALUES (<values>)) AS "__acl_args"("a1", …), LATERAL (<body>) AS "__acl_p<j>"`,
    /// or `SELECT "__acl_p<j>".* FROM (<body>) AS "__acl_p<j>"` when there are no values.
    fn region(&mut self, mut region: Region, body: Box<Query>, values: Vec<Expr>) -> Box<Query> {
        if self.enums() && values.is_empty() {
            // Without a VALUES list the wrapper's only FROM item is the region's alias, so DuckDB's
            // parse counts the wrapper, and the cast in it, as the region's (`trusted`).
            region.names.functions.push(crate::authz::enums::ENUM_FN.map(String::from).to_vec());
        }
        let j = self.decision.region(region);
        // DuckDB's errors about the body's tables are reported as "(hidden)".
        super::supplied::map_supplied(self.decision, &body);
        static WITH_VALUES: OnceLock<Query> = OnceLock::new();
        static WITHOUT: OnceLock<Query> = OnceLock::new();
        let passed = !values.is_empty();
        let mut q = Box::new(if passed {
            template(&WITH_VALUES, "SELECT x.* FROM (VALUES (1)) AS a (a1), LATERAL (SELECT 1) AS x").clone()
        } else {
            template(&WITHOUT, "SELECT x.* FROM (SELECT 1) AS x").clone()
        });
        let SetExpr::Select(s) = q.body.as_mut() else { return q };
        let row = ObjectName::from(vec![quoted(&region_alias(j))]);
        s.projection = vec![match self.enums() {
            // every column of the body through the ENUM cast, under its own name (the body is the
            // only FROM item without a VALUES list: there `COLUMNS(*)`, which names no column)
            true => SelectItem::UnnamedExpr(self.enum_cast(columns_of(passed.then_some(&row)))),
            false => SelectItem::QualifiedWildcard(SelectItemQualifiedWildcardKind::ObjectName(row), Default::default()),
        }];
        let body = TableFactor::Derived { lateral: passed, subquery: body, alias: Some(super::slices::region_alias(j)), sample: None };
        if !passed {
            s.from[0].relation = body;
            return q;
        }
        let columns =
            (1..=values.len()).map(|n| TableAliasColumnDef { name: quoted(&format!("a{n}")), data_type: None }).collect();
        let list = Box::new(Query {
            body: Box::new(SetExpr::Values(sqlparser::ast::Values {
                explicit_row: false,
                value_keyword: false,
                rows: vec![sqlparser::ast::Parens::with_empty_span(values)],
            })),
            ..template(&WITHOUT, "SELECT x.* FROM (SELECT 1) AS x").clone()
        });
        s.from[0].relation = TableFactor::Derived {
            lateral: false,
            subquery: list,
            alias: Some(TableAlias { explicit: true, name: quoted(ARGS), columns, at: None }),
            sample: None,
        };
        s.from[1].relation = body;
        q
    }

    /// Replaces the placeholders in a (cloned) body — in place by the arguments, or by
    /// `"__acl_args"."a<n>"` — and the claims by their values.
    fn substitute<T: VisitMut + ?Sized>(&mut self, body: &mut T, form: Form, args: Vec<Expr>) -> Result<()> {
        let mut s = Subst { view: self.view, form, args: args.into_iter().map(Some).collect() };
        match body.walk_mut(&mut s) {
            ControlFlow::Break(e) => Err(e),
            ControlFlow::Continue(()) => Ok(()),
        }
    }
}

impl VisitorMut for Expand<'_, '_> {
    type Break = AclError;

    // After the children: a call inside another call's arguments is expanded first, and the
    // visitor never walks into a body it inserted.
    fn post_visit_table_factor(&mut self, tf: &mut TableFactor) -> ControlFlow<AclError> {
        to_flow(self.table(tf))
    }

    fn post_visit_expr(&mut self, expr: &mut Expr) -> ControlFlow<AclError> {
        to_flow(self.scalar(expr))
    }
}

/// `COLUMNS(<row>.*)` (or `COLUMNS(*)`): every column of the FROM item `row` (or of every one),
/// each under its own name.
fn columns_of(row: Option<&ObjectName>) -> Expr {
    let star = match row {
        Some(row) => FunctionArgExpr::QualifiedWildcard(row.clone()),
        None => FunctionArgExpr::Wildcard,
    };
    let args = vec![FunctionArg::Unnamed(star)];
    Expr::Function(sqlparser::ast::Function {
        name: ObjectName::from(vec![sqlparser::ast::Ident::new("COLUMNS")]),
        uses_odbc_syntax: false,
        parameters: FunctionArguments::None,
        args: FunctionArguments::List(sqlparser::ast::FunctionArgumentList { duplicate_treatment: None, args, clauses: vec![] }),
        filter: None,
        null_treatment: None,
        over: None,
        within_group: vec![],
    })
}

fn to_flow(r: Result<()>) -> ControlFlow<AclError> {
    match r {
        Ok(()) => ControlFlow::Continue(()),
        Err(e) => ControlFlow::Break(e),
    }
}

/// Inside a body: placeholders out, claims in.
struct Subst<'a, 'v> {
    view: &'a View<'v>,
    form: Form,
    /// In place: each argument, taken at its placeholder's (only) use.
    args: Vec<Option<Expr>>,
}

impl Subst<'_, '_> {
    fn placeholder(&mut self, n: usize) -> Result<Expr> {
        let slot = self.args.get_mut(n - 1).ok_or_else(|| AclError::internal("acl_arg out of range"))?;
        Ok(match self.form {
            Form::Region => Expr::CompoundIdentifier(vec![quoted(ARGS), quoted(&format!("a{n}"))]),
            Form::InPlace => Expr::Nested(Box::new(match slot {
                Some(_) => slot.take().expect("just matched"),
                None => return Err(AclError::internal("an argument used twice in place")),
            })),
        })
    }
}

impl VisitorMut for Subst<'_, '_> {
    type Break = AclError;

    // After the children, so the visitor never walks into an argument it put in place: what the
    // principal wrote is never read as the body's.
    fn post_visit_expr(&mut self, expr: &mut Expr) -> ControlFlow<AclError> {
        let Expr::Function(f) = expr else { return ControlFlow::Continue(()) };
        if let Some(n) = acl_arg_index(f) {
            match self.placeholder(n) {
                Ok(e) => *expr = e,
                Err(e) => return ControlFlow::Break(e),
            }
        } else if let Some(value) = claim_value(f, |k| self.view.claim(k)) {
            match value {
                Ok(v) => *expr = v,
                Err(e) => return ControlFlow::Break(e),
            }
        }
        ControlFlow::Continue(())
    }
}

/// What an expansion adds to the statement at least: the body's own text without its `acl_arg`
/// and `acl_claim` calls (replaced by the arguments, which the statement held already, and by
/// literals, which may be shorter than the calls).
fn body_growth<T: std::fmt::Display + sqlparser::ast::Visit + ?Sized>(body: &T) -> usize {
    struct Placeholders(usize);
    impl sqlparser::ast::Visitor for Placeholders {
        type Break = ();
        fn pre_visit_expr(&mut self, e: &Expr) -> std::ops::ControlFlow<()> {
            if let Expr::Function(f) = e {
                if acl_arg_index(f).is_some() || is_acl_claim(f) {
                    self.0 += e.to_string().len();
                }
            }
            std::ops::ControlFlow::Continue(())
        }
    }
    let mut p = Placeholders(0);
    let _ = body.walk(&mut p);
    body.to_string().len().saturating_sub(p.0)
}
