//! The placeholders policy SQL may use: `acl_claim('k')` (the principal's claim, in RLS, masks,
//! views and function bodies) and `acl_arg(n)` (a virtual function's argument).
use crate::sqltext::WalkMut as _;
use crate::error::{AclError, Result};
use sqlparser::ast::{
    Expr, Function, FunctionArg, FunctionArgExpr, FunctionArgumentList, FunctionArguments, ObjectNamePart, Value, VisitMut,
    VisitorMut,
};
use std::ops::ControlFlow;

pub fn is_acl_claim(f: &sqlparser::ast::Function) -> bool {
    matches!(f.name.0.as_slice(), [ObjectNamePart::Identifier(i)] if i.value.eq_ignore_ascii_case("acl_claim"))
}

/// The claim name of `acl_claim('<name>')`, lower-case.
pub fn claim_name(f: &sqlparser::ast::Function) -> Option<String> {
    let FunctionArguments::List(list) = &f.args else { return None };
    match list.args.as_slice() {
        [FunctionArg::Unnamed(FunctionArgExpr::Expr(Expr::Value(v)))] => match &v.value {
            Value::SingleQuotedString(s) => Some(super::norm(s)),
            _ => None,
        },
        _ => None,
    }
}

/// `acl_arg(n)` → n (1-based), for virtual function bodies.
pub fn acl_arg_index(f: &sqlparser::ast::Function) -> Option<usize> {
    let [ObjectNamePart::Identifier(i)] = f.name.0.as_slice() else { return None };
    if !i.value.eq_ignore_ascii_case("acl_arg") {
        return None;
    }
    let FunctionArguments::List(FunctionArgumentList { args, duplicate_treatment: None, clauses }) = &f.args else {
        return None;
    };
    match (args.as_slice(), clauses.is_empty()) {
        ([FunctionArg::Unnamed(FunctionArgExpr::Expr(Expr::Value(v)))], true) => match &v.value {
            sqlparser::ast::Value::Number(n, _) => n.parse().ok().filter(|n: &usize| *n >= 1),
            _ => None,
        },
        _ => None,
    }
}

/// `acl_claim('k')` as the claim's value: `claim(k)` as a string literal, NULL when it has none.
/// `None` for any other call.
pub fn claim_value<'c>(f: &Function, claim: impl FnOnce(&str) -> Option<&'c str>) -> Option<Result<Expr>> {
    if !is_acl_claim(f) {
        return None;
    }
    let Some(name) = claim_name(f) else {
        return Some(Err(AclError::internal("acl_claim without a literal name")));
    };
    let value = match claim(&name) {
        Some(v) => Value::SingleQuotedString(v.to_string()),
        None => Value::Null,
    };
    Some(Ok(Expr::value(value)))
}

/// Replaces every `acl_claim('k')` in `sql` by `claim(k)`'s value (`claim_value`).
pub fn substitute_claims<'c, T: VisitMut + ?Sized>(sql: &mut T, claim: impl Fn(&str) -> Option<&'c str>) -> Result<()> {
    struct Claims<F>(F);
    impl<'c, F: Fn(&str) -> Option<&'c str>> VisitorMut for Claims<F> {
        type Break = AclError;

        fn post_visit_expr(&mut self, e: &mut Expr) -> ControlFlow<AclError> {
            let Expr::Function(f) = e else { return ControlFlow::Continue(()) };
            match claim_value(f, &self.0) {
                Some(Ok(value)) => *e = value,
                Some(Err(err)) => return ControlFlow::Break(err),
                None => {}
            }
            ControlFlow::Continue(())
        }
    }
    match sql.walk_mut(&mut Claims(claim)) {
        ControlFlow::Break(err) => Err(err),
        ControlFlow::Continue(()) => Ok(()),
    }
}
