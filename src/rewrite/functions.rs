//! Rule: functions that no principal may ever call, whatever it is granted — they run SQL
//! text, attach databases or reach the extension's own state. Until the full function gate
//! lands, calls to qualified names are refused too (a qualified name can reach a macro in
//! any attached database).
use crate::error::{AclError, Result};
use sqlparser::ast::{Expr, ObjectNamePart, Statement, Visit, Visitor};
use std::ops::ControlFlow;

pub(super) fn check(stmt: &Statement) -> Result<()> {
    match stmt.visit(&mut Gate) {
        ControlFlow::Break(e) => Err(e),
        ControlFlow::Continue(()) => Ok(()),
    }
}

/// True for names in the never-callable set.
pub fn never_callable(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n.starts_with("acl_")
        || n.starts_with("__internal")
        || matches!(n.as_str(), "query" | "query_table" | "json_execute_serialized_sql")
        || n.ends_with("_query")
        || n.ends_with("_execute")
        || n.ends_with("_attach")
}

struct Gate;

impl Visitor for Gate {
    type Break = AclError;

    fn pre_visit_expr(&mut self, expr: &Expr) -> ControlFlow<AclError> {
        let Expr::Function(f) = expr else { return ControlFlow::Continue(()) };
        let parts = &f.name.0;
        let last = match parts.last() {
            Some(ObjectNamePart::Identifier(i)) => i.value.as_str(),
            _ => return ControlFlow::Break(AclError::refused("this form of function name is not supported")),
        };
        if parts.len() > 1 {
            return ControlFlow::Break(AclError::refused(format!(
                "function \"{last}\" may not be called with a qualified name"
            )));
        }
        if never_callable(last) {
            return ControlFlow::Break(AclError::refused(format!("function \"{last}\" is not permitted")));
        }
        ControlFlow::Continue(())
    }
}
