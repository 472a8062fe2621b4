//! Policy-supplied subqueries (a metadata listing, a virtual function's body) in a statement:
//! DuckDB's errors about the tables inside them are reported under one name.
use super::Decision;
use crate::policy::PhysName;
use sqlparser::ast::{ObjectName, ObjectNamePart, Query};
use std::ops::ControlFlow;

/// Maps every fully qualified table inside a policy-supplied subquery to one virtual object, so
/// DuckDB's errors about it are reported under that name.
/// A subquery a rule supplied (a metadata listing) maps to "(hidden)".
pub(super) fn map_supplied(decision: &mut Decision, q: &Query) {
    let key = crate::policy::ObjKey { catalog: "(hidden)".into(), schema: "(hidden)".into(), name: "(hidden)".into() };
    map_to(decision, q, &key);
}

/// Maps every fully qualified table inside `q` to the virtual object `key`.
pub(super) fn map_to(decision: &mut Decision, q: &Query, key: &crate::policy::ObjKey) {
    let _ = crate::sqltext::Walk::walk(q, &mut MapNames { decision, key });
}

struct MapNames<'d, 'k> {
    decision: &'d mut Decision,
    key: &'k crate::policy::ObjKey,
}

impl sqlparser::ast::Visitor for MapNames<'_, '_> {
    type Break = ();
    fn pre_visit_relation(&mut self, name: &ObjectName) -> ControlFlow<()> {
        if let [ObjectNamePart::Identifier(d), ObjectNamePart::Identifier(s), ObjectNamePart::Identifier(t)] =
            name.0.as_slice()
        {
            let phys = PhysName { db: d.value.clone(), schema: s.value.clone(), name: t.value.clone() };
            self.decision.map_object(&phys, self.key);
        }
        ControlFlow::Continue(())
    }
}
