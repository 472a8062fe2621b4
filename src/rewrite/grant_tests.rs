//! The decision's record of which grant allowed each use (`authz::grants`), read through
//! `statement_allowed`.
use super::{statement_allowed, FnGate};
use crate::authz::{Grant, GrantKind, Granted, Principal, Used, View};
use crate::policy::categories::categorise;
use crate::policy::functions::FnKey;
use crate::policy::{Caps, ObjKey, Policy};
use std::sync::Arc;

fn policy() -> Policy {
    let mut p = Policy::default();
    let r = crate::policy::categories::HostRow::builtin;
    let host = categorise(&[r("lower", "scalar"), r("getvariable", "scalar")]);
    p.functions.host = Arc::new(host.with_types(super::types::BUILTIN_TYPES.iter().copied()));
    for s in [
        "CREATE VIRTUAL CATALOG sales",
        "CREATE VIRTUAL TABLE sales.orders AS phys.main.orders",
        "CREATE VIRTUAL TABLE sales.items AS phys.main.items",
        "CREATE VIRTUAL CATALOG hr",
        "CREATE VIRTUAL TABLE hr.people AS hrdb.main.people",
        "CREATE VIRTUAL SCHEMA sales.raw AS phys.raw",
        "CREATE ROLE analyst",
        "GRANT CATALOG sales TO ROLE analyst WITH (select) MAIN",
        "GRANT TABLE sales.items TO ROLE analyst WITH (select)",
        "GRANT SCHEMA sales.raw TO ROLE analyst WITH (select)",
        "GRANT FUNCTION getvariable TO ROLE analyst",
        "CREATE ROLE hr",
        "GRANT TABLE hr.people TO ROLE hr WITH (select, insert)",
        "CREATE ROLE clerk",
        "GRANT CATALOG sales TO ROLE clerk WITH (select, insert)",
    ] {
        let cmd = crate::admin::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"));
        crate::admin::apply(&mut p, &cmd).unwrap_or_else(|e| panic!("{s}: {e}"));
    }
    p
}

fn principal(roles: &[&str]) -> Principal {
    Principal { roles: roles.iter().map(|r| r.to_string()).collect(), label: "test".into(), claims: Default::default() }
}

fn granted(p: &Policy, who: &Principal, sql: &str) -> Vec<Granted> {
    let view = View::new(p, who).unwrap();
    let fns = FnGate::new(p, who);
    statement_allowed(&view, &fns, sql).unwrap_or_else(|e| panic!("{sql}: {e}")).1.granted
}

fn key(c: &str, s: &str, n: &str) -> ObjKey {
    ObjKey { catalog: c.into(), schema: s.into(), name: n.into() }
}

fn of<'g>(all: &'g [Granted], used: &ObjKey) -> &'g Granted {
    all.iter().find(|g| g.used == Used::Object(used.clone())).unwrap_or_else(|| panic!("{used} not recorded in {all:?}"))
}

const fn by(role: u16, kind: GrantKind) -> Grant {
    Grant { role: Some(role), kind }
}

#[test]
fn a_table_grant_decides_over_the_catalog_grant_it_refines() {
    let p = policy();
    let who = principal(&["analyst"]);
    let g = granted(&p, &who, "SELECT * FROM items JOIN orders ON true");
    let items = of(&g, &key("sales", "main", "items"));
    assert_eq!(items.by, vec![by(0, GrantKind::Object)]);
    assert_eq!(items.caps, Caps::SELECT);
    assert_eq!(items.on(&items.by[0], &p), "sales.items");
    let orders = of(&g, &key("sales", "main", "orders"));
    assert_eq!(orders.by, vec![by(0, GrantKind::Catalog)]);
    assert_eq!(orders.on(&orders.by[0], &p), "sales");
    assert_eq!(Granted::role(&orders.by[0], &who), Some("analyst"));
}

#[test]
fn a_name_in_a_virtual_schema_names_the_schema_grant() {
    let p = policy();
    let g = granted(&p, &principal(&["analyst"]), "SELECT * FROM sales.raw.events");
    let events = of(&g, &key("sales", "raw", "events"));
    assert_eq!(events.by, vec![by(0, GrantKind::Schema)]);
    assert_eq!(events.on(&events.by[0], &p), "sales.raw");
}

#[test]
fn of_two_roles_the_one_that_gave_the_capability_is_named() {
    let p = policy();
    // Roles are sorted by name in a principal from a token; here: analyst = 0, hr = 1.
    let who = principal(&["analyst", "hr"]);
    let g = granted(&p, &who, "SELECT * FROM hr.people, sales.orders");
    let people = of(&g, &key("hr", "main", "people"));
    assert_eq!(people.by, vec![by(1, GrantKind::Object)]);
    assert_eq!(Granted::role(&people.by[0], &who), Some("hr"));
    assert_eq!(of(&g, &key("sales", "main", "orders")).by, vec![by(0, GrantKind::Catalog)]);

    // A write needs insert, which only clerk holds; a read by both names both.
    let who = principal(&["analyst", "clerk"]);
    let g = granted(&p, &who, "INSERT INTO orders SELECT * FROM orders");
    let orders = of(&g, &key("sales", "main", "orders"));
    assert_eq!(orders.caps, Caps::INSERT.union(Caps::SELECT));
    assert_eq!(orders.by, vec![by(1, GrantKind::Catalog), by(0, GrantKind::Catalog)]);

    // INSERT … RETURNING needs insert and select in one use: analyst, holding only select, did
    // not allow it.
    let g = granted(&p, &who, "INSERT INTO orders VALUES (1) RETURNING *");
    let orders = of(&g, &key("sales", "main", "orders"));
    assert_eq!(orders.caps, Caps::INSERT.union(Caps::SELECT));
    assert_eq!(orders.by, vec![by(1, GrantKind::Catalog)]);
}

#[test]
fn function_calls_name_the_category_or_the_by_name_grant() {
    let p = policy();
    let g = granted(&p, &principal(&["analyst"]), "SELECT lower(getvariable('x')), lower('y')");
    let lower = FnKey { db: "system".into(), schema: "main".into(), name: "lower".into(), kind: crate::policy::functions::FnKind::Scalar };
    let calls: Vec<&Granted> = g.iter().filter(|x| x.used == Used::Function(lower.clone())).collect();
    assert_eq!(calls.len(), 1, "one record per function: {g:?}");
    let [Grant { role: None, kind: GrantKind::Category(_) }] = calls[0].by[..] else { panic!("{:?}", calls[0].by) };
    assert_eq!(calls[0].on(&calls[0].by[0], &p), "base");
    let var = g.iter().find(|x| matches!(&x.used, Used::Function(k) if k.name == "getvariable")).expect("recorded");
    assert_eq!(var.by, vec![by(0, GrantKind::Function)]);
    assert_eq!(var.on(&var.by[0], &p), "getvariable");
}
