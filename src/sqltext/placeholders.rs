//! The placeholders policy SQL may use: `acl_claim('k')` (the principal's claim, in RLS, masks,
//! views and function bodies) and `acl_arg(n)` (a virtual function's argument).
use sqlparser::ast::{Expr, FunctionArg, FunctionArgExpr, FunctionArgumentList, FunctionArguments, ObjectNamePart, Value};

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
