//! A virtual function call's arguments: what they may be, and how a body takes them.
use crate::sqltext::Walk as _;
use super::super::functions::{VirtualCall, MARKER};
use crate::sqltext::acl_arg_index;
use crate::error::{AclError, BadCall, Result};
use sqlparser::ast::{Expr, FunctionArg, FunctionArgExpr, ObjectName, ObjectNamePart, Query, SetExpr, TableFactor, Visitor};
use std::ops::ControlFlow;

/// The call index a marker name stands for.
pub(in crate::rewrite) fn marker_index(name: &ObjectName) -> Option<usize> {
    match name.0.as_slice() {
        [ObjectNamePart::Identifier(i)] if i.quote_style == Some('"') => i.value.strip_prefix(MARKER)?.parse().ok(),
        _ => None,
    }
}

fn one_value(call: &VirtualCall) -> AclError {
    BadCall::OneValuePerArgument { function: call.key.to_string() }.into()
}

pub(super) fn positional_only(call: &VirtualCall) -> AclError {
    BadCall::PositionalOnly { function: call.key.to_string() }.into()
}

/// The call's arguments, moved out of it (a subquery keeps its address: the fault above and the
/// post-check find it again).
pub(super) fn take_args(args: &mut Vec<FunctionArg>, call: &VirtualCall) -> Result<Vec<Expr>> {
    std::mem::take(args)
        .into_iter()
        .map(|a| match a {
            FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => Ok(e),
            FunctionArg::Unnamed(_) => Err(one_value(call)),
            _ => Err(positional_only(call)),
        })
        .collect()
}

/// What an argument may not be: several values (`*`, `t.*`, `COLUMNS(…)`, `UNPACK(…)`), or, where
/// it is evaluated on its own (`windows`), a window function — it would see one row, not the
/// caller's. Only the argument's own level is looked at: its subqueries are queries of their own.
pub(super) fn check_arg(call: &VirtualCall, arg: &Expr, windows: bool) -> Result<()> {
    struct Scan {
        depth: usize,
        star: bool,
        window: bool,
    }
    impl Visitor for Scan {
        type Break = ();
        fn pre_visit_query(&mut self, _: &Query) -> ControlFlow<()> {
            self.depth += 1;
            ControlFlow::Continue(())
        }
        fn post_visit_query(&mut self, _: &Query) -> ControlFlow<()> {
            self.depth -= 1;
            ControlFlow::Continue(())
        }
        fn pre_visit_expr(&mut self, e: &Expr) -> ControlFlow<()> {
            if self.depth > 0 {
                return ControlFlow::Continue(());
            }
            match e {
                Expr::Wildcard(_) | Expr::QualifiedWildcard(..) => self.star = true,
                Expr::Function(f) => {
                    let many = matches!(f.name.0.as_slice(), [ObjectNamePart::Identifier(i)]
                        if i.value.eq_ignore_ascii_case("columns") || i.value.eq_ignore_ascii_case("unpack"));
                    self.star |= many;
                    self.window |= f.over.is_some();
                }
                _ => {}
            }
            ControlFlow::Continue(())
        }
    }
    let mut s = Scan { depth: 0, star: false, window: false };
    let _ = arg.walk(&mut s);
    if s.star {
        return Err(one_value(call));
    }
    if s.window && windows {
        return Err(BadCall::WindowArgument { function: call.key.to_string() }.into());
    }
    Ok(())
}

/// How a body takes its arguments.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Form {
    /// `acl_arg(n)` → `(CAST(arg AS T))`: the body opens no scope of its own.
    InPlace,
    /// `acl_arg(n)` → `"__acl_args"."a<n>"`, the arguments in a VALUES list beside the body.
    Region,
}

/// A scalar body takes its arguments in place only when no principal's name can bind against
/// it: no subquery anywhere, no placeholder under a lambda (whose parameter could capture a
/// name), each placeholder at most once (an argument is evaluated once).
pub(super) fn scalar_form(body: &Expr) -> Form {
    struct Scan {
        lambdas: usize,
        seen: Vec<usize>,
        scoped: bool,
    }
    impl Visitor for Scan {
        type Break = ();
        fn pre_visit_query(&mut self, _: &Query) -> ControlFlow<()> {
            self.scoped = true;
            ControlFlow::Break(())
        }
        fn pre_visit_expr(&mut self, e: &Expr) -> ControlFlow<()> {
            match e {
                Expr::Lambda(_) => self.lambdas += 1,
                Expr::Function(f) => {
                    if let Some(n) = acl_arg_index(f) {
                        if self.lambdas > 0 || self.seen.contains(&n) {
                            self.scoped = true;
                            return ControlFlow::Break(());
                        }
                        self.seen.push(n);
                    }
                }
                _ => {}
            }
            ControlFlow::Continue(())
        }
        fn post_visit_expr(&mut self, e: &Expr) -> ControlFlow<()> {
            if let Expr::Lambda(_) = e {
                self.lambdas -= 1;
            }
            ControlFlow::Continue(())
        }
    }
    let mut s = Scan { lambdas: 0, seen: Vec::new(), scoped: false };
    let _ = body.walk(&mut s);
    if s.scoped {
        Form::Region
    } else {
        Form::InPlace
    }
}

/// `SELECT * FROM fn(acl_arg(1), …, acl_arg(n))` (what `ALIAS OF fn` with parameters stores): the
/// function's name, when the body is exactly that.
pub(super) fn alias_call(q: &Query, n: usize) -> Option<&ObjectName> {
    let SetExpr::Select(s) = q.body.as_ref() else { return None };
    let [from] = s.from.as_slice() else { return None };
    let TableFactor::Table { name, args: Some(_), .. } = &from.relation else { return None };
    let placeholders: Vec<String> = (1..=n).map(|i| format!("acl_arg({i})")).collect();
    (q.to_string() == format!("SELECT * FROM {name}({})", placeholders.join(", "))).then_some(name)
}

