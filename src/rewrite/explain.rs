//! Rule: EXPLAIN [ANALYZE] of a statement the principal may run needs `explain` (spec 005).
//!
//! The inner statement is rewritten exactly as without EXPLAIN, and DuckDB's plan shows the
//! rewritten statement: physical table names, slice predicates and masks, estimated and (with
//! ANALYZE) actual row counts of the physical tables. That cannot be filtered out of DuckDB's
//! output, so it is what the capability means: `explain` on a catalog grant discloses the physical
//! layout behind that catalog's objects. EXPLAIN is admitted only when every catalog the statement
//! touches is granted to the principal WITH (explain).
use super::ddl::TEMP;
use super::Decision;
use crate::authz::View;
use crate::error::{LacksCapability, On, Result};
use crate::policy::Caps;

pub(super) fn require(view: &View<'_>, decision: &Decision) -> Result<()> {
    let mut catalogs: Vec<&str> = decision.catalogs.iter().map(String::as_str).filter(|c| *c != TEMP).collect();
    catalogs.sort_unstable();
    catalogs.dedup();
    if catalogs.is_empty() {
        // Nothing virtual is touched (constants, the principal's own temporary tables): any
        // catalog grant with explain will do.
        if view.holds_anywhere(Caps::EXPLAIN) {
            return Ok(());
        }
        return Err(LacksCapability { principal: view.label.to_string(), capabilities: Caps::EXPLAIN.names(), on: On::Anything }.into());
    }
    match catalogs.iter().find(|c| !view.holds_on_catalog(c, Caps::EXPLAIN)) {
        Some(c) => Err(LacksCapability {
            principal: view.label.to_string(),
            capabilities: Caps::EXPLAIN.names(),
            on: On::Catalog(c.to_string()),
        }
        .into()),
        None => Ok(()),
    }
}
