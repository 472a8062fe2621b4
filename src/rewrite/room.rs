//! `acl_max_rewrite_bytes` while a statement is rewritten (spec 012, "Memory").
//!
//! Each rule that inserts SQL the principal did not write — a sliced object's or a virtual
//! view's subquery, a metadata listing, a virtual function's body — takes the printed size of
//! what it inserts from the statement's `Room` *before* it builds or copies it. What is taken is
//! a lower bound of what the statement grows by (the inserted pieces are disjoint parts of the
//! printed statement), so the early refusal never refuses a statement the exact check on the
//! printed batch would accept (`principal_batch`), and a statement bound to be refused stops
//! long before megabytes of tree are built.
//!
//! A sliced object's subquery is inserted once per statement however often the statement names
//! it (`slices::share`), so it takes its room once. Listings are inserted at every reference:
//! before the rules run, they are counted by relation (`ahead_of`), and the first one takes the
//! room for all of them.
use crate::sqltext::Walk as _;
use crate::error::{AclError, Result, TooLarge};
use sqlparser::ast::{Statement, TableFactor, Visitor};
use std::collections::HashMap;
use std::ops::ControlFlow;

/// What the rules may still add to a statement before its batch passes `acl_max_rewrite_bytes`.
#[derive(Debug)]
pub struct Room {
    left: usize,
    /// Listings not yet paid for, by relation (`ahead_of`).
    ahead: HashMap<&'static str, usize>,
}

impl Default for Room {
    fn default() -> Room {
        Room::new(usize::MAX)
    }
}

/// The refusal of a statement the policy would make larger than `acl_max_rewrite_bytes`: it
/// names nothing (neither what grew nor by how much).
pub fn too_large() -> AclError {
    TooLarge::AfterPolicy.into()
}

impl Room {
    pub fn new(bytes: usize) -> Room {
        Room { left: bytes, ahead: HashMap::new() }
    }

    /// `bytes` of room for `stmt`, its listings counted ahead (see the module comment).
    pub(super) fn ahead_of(stmt: &Statement, bytes: usize) -> Room {
        let mut c = Count { listings: HashMap::new() };
        let _ = stmt.walk(&mut c);
        Room { left: bytes, ahead: c.listings }
    }

    /// What is left.
    pub fn left(&self) -> usize {
        self.left
    }

    /// Takes `bytes`, or refuses the statement when there is not that much room left.
    pub fn take(&mut self, bytes: usize) -> Result<()> {
        match self.left.checked_sub(bytes) {
            Some(left) => {
                self.left = left;
                Ok(())
            }
            None => Err(too_large()),
        }
    }

    /// Takes `bytes` for a metadata listing inserted where the statement names `relation`: the
    /// first such reference takes it for every reference to the same relation.
    pub fn take_for_listing(&mut self, relation: &'static str, bytes: usize) -> Result<()> {
        let n = self.ahead.get_mut(relation).map_or(1, std::mem::take);
        self.take(bytes.saturating_mul(n))
    }
}

/// The statement's listings, by relation.
struct Count {
    listings: HashMap<&'static str, usize>,
}

impl Visitor for Count {
    type Break = ();

    fn pre_visit_table_factor(&mut self, tf: &TableFactor) -> ControlFlow<()> {
        if let Some(relation) = super::metadata::listing_name(tf) {
            *self.listings.entry(relation).or_default() += 1;
        }
        ControlFlow::Continue(())
    }
}

#[cfg(test)]
mod tests;
