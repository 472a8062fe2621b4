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
//! Earlier still: before the rules run, the statement's references are counted by how they are
//! written (`ahead_of`), and the first reference to a sliced object or a listing takes the room
//! for every reference written the same way. A 16 KiB statement naming a large sliced object 500
//! times is refused at its first copy instead of after a megabyte of copies. Only references
//! that certainly receive the same insertion are counted: listings (always replaced), and in a
//! plain query (not DML) table names that cannot be a CTE's (a one-part name that any CTE of the
//! statement defines is not counted); everything else takes its room one reference at a time.
use crate::sqltext::Walk as _;
use crate::error::{AclError, Result, TooLarge};
use crate::policy::norm;
use sqlparser::ast::{ObjectNamePart, Query, SetExpr, Statement, TableFactor, Visitor};
use std::collections::{HashMap, HashSet};
use std::ops::ControlFlow;

/// What the rules may still add to a statement before its batch passes `acl_max_rewrite_bytes`.
#[derive(Debug)]
pub struct Room {
    left: usize,
    /// References not yet paid for, by how they are written (`ahead_of`).
    ahead: HashMap<Written, usize>,
}

/// How a reference is written: a table name's normalised parts, or a listing's relation.
#[derive(Debug, PartialEq, Eq, Hash)]
enum Written {
    Table(Vec<String>),
    Listing(&'static str),
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

    /// `bytes` of room for `stmt`, its references counted ahead (see the module comment).
    pub(super) fn ahead_of(stmt: &Statement, bytes: usize) -> Room {
        let mut c = Count { tables: HashMap::new(), ctes: HashSet::new(), listings: HashMap::new() };
        let _ = stmt.walk(&mut c);
        let plain_query = match stmt {
            Statement::Query(q) => !matches!(
                q.body.as_ref(),
                SetExpr::Insert(_) | SetExpr::Update(_) | SetExpr::Delete(_) | SetExpr::Merge(_)
            ),
            _ => false,
        };
        let mut ahead: HashMap<Written, usize> = c.listings.into_iter().map(|(l, n)| (Written::Listing(l), n)).collect();
        if plain_query {
            let ctes = c.ctes;
            ahead.extend(
                c.tables
                    .into_iter()
                    .filter(|(p, _)| !(p.len() == 1 && ctes.contains(&p[0])))
                    .map(|(p, n)| (Written::Table(p), n)),
            );
        }
        Room { left: bytes, ahead }
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

    /// Takes `bytes` for a sliced object's subquery inserted where the statement wrote `name`:
    /// the first such reference takes it for every reference written the same way.
    pub fn take_for_table(&mut self, name: &[String], bytes: usize) -> Result<()> {
        let n = self.ahead.get_mut(&Written::Table(name.to_vec())).map_or(1, |n| std::mem::take(n));
        self.take(bytes.saturating_mul(n))
    }

    /// `take_for_table` for a metadata listing.
    pub fn take_for_listing(&mut self, relation: &'static str, bytes: usize) -> Result<()> {
        let n = self.ahead.get_mut(&Written::Listing(relation)).map_or(1, |n| std::mem::take(n));
        self.take(bytes.saturating_mul(n))
    }
}

/// The statement's table references (by written name), CTE names and listings.
struct Count {
    tables: HashMap<Vec<String>, usize>,
    ctes: HashSet<String>,
    listings: HashMap<&'static str, usize>,
}

impl Visitor for Count {
    type Break = ();

    fn pre_visit_query(&mut self, q: &Query) -> ControlFlow<()> {
        if let Some(with) = &q.with {
            self.ctes.extend(with.cte_tables.iter().map(|c| norm(&c.alias.name.value)));
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_table_factor(&mut self, tf: &TableFactor) -> ControlFlow<()> {
        if let Some(relation) = super::metadata::listing_name(tf) {
            *self.listings.entry(relation).or_default() += 1;
        } else if let TableFactor::Table { name, args: None, .. } = tf {
            let parts: Option<Vec<String>> = name
                .0
                .iter()
                .map(|p| match p {
                    ObjectNamePart::Identifier(i) => Some(norm(&i.value)),
                    _ => None,
                })
                .collect();
            if let Some(parts) = parts {
                *self.tables.entry(parts).or_default() += 1;
            }
        }
        ControlFlow::Continue(())
    }
}

#[cfg(test)]
mod tests;
