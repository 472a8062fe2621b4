//! The last step: every table the rewritten statement names is one the decision allowed —
//! a physical object that a grant resolved, or a CTE this statement defines. Anything else
//! means a rule missed something, and the statement is refused.
use crate::sqltext::Walk as _;
use super::Decision;
use crate::error::{AclError, Result};
use sqlparser::ast::{ObjectName, ObjectNamePart, Query, Statement, TableFactor, Visitor};
use std::ops::ControlFlow;

pub(super) fn check(stmt: &Statement, decision: &Decision, faults: crate::faults::Faults) -> Result<()> {
    match stmt.walk(&mut Check { decision, trusted: super::trusted::Trusted::new(faults) }) {
        ControlFlow::Break(e) => Err(e),
        ControlFlow::Continue(()) => Ok(()),
    }
}

struct Check<'d> {
    decision: &'d Decision,
    trusted: super::trusted::Trusted,
}

impl Check<'_> {
    fn allowed(&self, name: &ObjectName) -> bool {
        if self.decision.table_functions.contains(name) {
            return true; // a table function the function gate admitted (or a trusted body's)
        }
        let parts: Vec<&str> = name
            .0
            .iter()
            .map(|p| match p {
                ObjectNamePart::Identifier(i) if i.quote_style == Some('"') => i.value.as_str(),
                _ => "\u{0}", // never matches a decision entry
            })
            .collect();
        match parts.as_slice() {
            [cte] => self.decision.ctes.iter().any(|c| c == cte),
            [db, schema, table] => {
                self.decision.physical.iter().any(|p| p.db == *db && p.schema == *schema && p.name == *table)
            }
            _ => false,
        }
    }
}

impl Visitor for Check<'_> {
    type Break = AclError;

    fn pre_visit_query(&mut self, q: &Query) -> ControlFlow<AclError> {
        self.trusted.enter(q);
        ControlFlow::Continue(())
    }

    fn post_visit_query(&mut self, _: &Query) -> ControlFlow<AclError> {
        self.trusted.leave();
        ControlFlow::Continue(())
    }

    fn pre_visit_relation(&mut self, name: &ObjectName) -> ControlFlow<AclError> {
        if self.trusted.inside() || self.allowed(name) {
            ControlFlow::Continue(())
        } else {
            ControlFlow::Break(AclError::internal("post-check found a table outside the decision"))
        }
    }

    fn post_visit_table_factor(&mut self, _: &TableFactor) -> ControlFlow<AclError> {
        self.trusted.leave_factor();
        ControlFlow::Continue(())
    }

    fn pre_visit_table_factor(&mut self, tf: &TableFactor) -> ControlFlow<AclError> {
        self.trusted.enter_factor(tf);
        if self.trusted.inside() {
            return ControlFlow::Continue(());
        }
        match tf {
            TableFactor::Table { args: None, .. }
            | TableFactor::Derived { .. }
            | TableFactor::NestedJoin { .. }
            | TableFactor::UNNEST { .. }
            | TableFactor::Pivot { .. }
            | TableFactor::Unpivot { .. } => ControlFlow::Continue(()),
            TableFactor::Table { name, args: Some(_), .. } if self.decision.table_functions.contains(name) => {
                ControlFlow::Continue(())
            }
            _ => ControlFlow::Break(AclError::internal("post-check found a FROM item outside the decision")),
        }
    }
}
