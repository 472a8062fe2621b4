//! Skipping the policy's own SQL. A subquery the policy supplied (a sliced object, a metadata
//! listing, a virtual view or function body: `Decision::trusted`) is operator-written SQL over
//! physical names, inserted whole; the rules after the one that inserted it, and the post-check,
//! leave it and everything inside it alone. Every visitor tracks that the same way, here.
use super::Decision;
use sqlparser::ast::Query;

/// How deep a visitor is inside policy SQL (0: in the principal's own SQL).
#[derive(Default)]
pub(super) struct Trusted {
    depth: usize,
}

impl Trusted {
    /// From `pre_visit_query`: whether `q` is policy SQL or inside it (the visitor skips it).
    pub fn enter(&mut self, q: &Query, decision: &Decision) -> bool {
        if self.depth > 0 || decision.trusted.contains(&(q as *const Query as usize)) {
            self.depth += 1;
            return true;
        }
        false
    }

    /// From `post_visit_query`: whether the query being left was policy SQL or inside it.
    pub fn leave(&mut self) -> bool {
        if self.depth > 0 {
            self.depth -= 1;
            return true;
        }
        false
    }

    /// Whether the visitor is inside policy SQL now (every other hook skips there).
    pub fn inside(&self) -> bool {
        self.depth > 0
    }
}
