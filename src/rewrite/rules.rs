//! The rules that rewrite one admitted statement, in order, in one place (`RULES`). Each is a
//! unit struct behind `Rule`, so running them is a loop over a static list (no allocation); the
//! post-check runs after the loop (`run`). The gate and the type check admit the statement
//! before any rule runs (`statement_with_names`).
use super::functions::VirtualCall;
use super::{functions, metadata, post_check, relations, virtual_fns, Decision};
use crate::authz::View;
use crate::error::Result;
use crate::faults::Faults;
use super::FnGate;
use sqlparser::ast::Statement;

/// What the rules share while rewriting one statement.
pub(super) struct Context<'a, 'v, 'p> {
    pub view: &'a View<'v>,
    pub fns: &'a FnGate<'p>,
    pub decision: &'a mut Decision,
    pub faults: Faults,
    /// The statement is the body of a view that outlives the connection (see `views`).
    pub persistent_view: bool,
    /// The statement is a view's body: whoever reads the view filters it later, with predicates
    /// this statement does not show, so its sliced objects keep the full guard.
    pub view_body: bool,
    /// The virtual function calls `functions` found, which `virtual_fns` expands.
    pub calls: Vec<VirtualCall>,
}

/// One pass over the statement.
pub(super) trait Rule: Sync {
    /// The rule's module, for the tests that pin the order (and for diagnostics).
    #[cfg_attr(not(test), allow(dead_code))]
    fn name(&self) -> &'static str;
    fn apply(&self, stmt: &mut Statement, cx: &mut Context<'_, '_, '_>) -> Result<()>;
}

/// The rules in the order they run (see the module comment of `rewrite`).
pub(super) const RULES: &[&dyn Rule] = &[&Functions, &Metadata, &Relations, &VirtualFns];

/// Runs `RULES` over `stmt`, then the post-check.
pub(super) fn run(stmt: &mut Statement, cx: &mut Context<'_, '_, '_>) -> Result<()> {
    for rule in RULES {
        rule.apply(stmt, cx)?;
    }
    if !cx.faults.skip_relations {
        post_check::check(stmt, cx.decision, cx.faults)?;
    }
    Ok(())
}

/// Every function call admitted by the function policy and qualified to its key.
struct Functions;
impl Rule for Functions {
    fn name(&self) -> &'static str {
        "functions"
    }
    fn apply(&self, stmt: &mut Statement, cx: &mut Context<'_, '_, '_>) -> Result<()> {
        cx.calls = functions::apply(stmt, cx.view, cx.fns, cx.decision, cx.faults)?;
        cx.decision.catalogs.extend(cx.calls.iter().map(|c| c.key.catalog.clone()));
        Ok(())
    }
}

/// information_schema, duckdb_*() and SHOW answered from the virtual catalog.
struct Metadata;
impl Rule for Metadata {
    fn name(&self) -> &'static str {
        "metadata"
    }
    fn apply(&self, stmt: &mut Statement, cx: &mut Context<'_, '_, '_>) -> Result<()> {
        metadata::apply(stmt, cx.view, cx.decision, cx.view_body)
    }
}

/// Every table name resolved through the virtual catalog, capabilities checked.
struct Relations;
impl Rule for Relations {
    fn name(&self) -> &'static str {
        "relations"
    }
    fn apply(&self, stmt: &mut Statement, cx: &mut Context<'_, '_, '_>) -> Result<()> {
        if cx.faults.skip_relations {
            return Ok(());
        }
        relations::apply_in(stmt, cx.view, cx.decision, cx.persistent_view, cx.view_body, cx.faults)
    }
}

/// Calls of virtual functions replaced by their (trusted) bodies.
struct VirtualFns;
impl Rule for VirtualFns {
    fn name(&self) -> &'static str {
        "virtual_fns"
    }
    fn apply(&self, stmt: &mut Statement, cx: &mut Context<'_, '_, '_>) -> Result<()> {
        virtual_fns::expand(stmt, cx.view, &cx.calls, cx.decision, cx.faults)
    }
}

#[cfg(test)]
mod tests {
    /// The order is part of the design (spec 001, "The pipeline"): a rule added or moved shows here.
    #[test]
    fn rules_run_in_the_documented_order() {
        let names: Vec<&str> = super::RULES.iter().map(|r| r.name()).collect();
        assert_eq!(names, ["functions", "metadata", "relations", "virtual_fns"]);
    }
}
