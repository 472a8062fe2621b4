//! The most specific grant decides a role's capabilities (spec 001, "Capabilities", issue 34).
use super::grants::{effective, GrantKind};
use super::{level, Principal, View};
use crate::policy::*;

fn key(c: &str, s: &str, n: &str) -> ObjKey {
    ObjKey { catalog: c.into(), schema: s.into(), name: n.into() }
}

fn cat(caps: Caps) -> CatalogGrant {
    CatalogGrant { caps, main: true, slice: Slice::default() }
}

fn obj(caps: Option<Caps>) -> ObjectGrant {
    ObjectGrant { caps, slice: Slice::default() }
}

#[test]
fn each_level_states_its_own_capabilities() {
    let k = key("c", "main", "t");
    let mut r = Role::default();
    assert_eq!(level(&r, &k), None);
    // an object grant alone: its caps, five by default
    r.object_grants.insert(k.clone(), obj(None));
    assert_eq!(level(&r, &k), Some((Caps::DATA, GrantKind::Object)));
    // under a catalog grant, an object grant that states none inherits (never the five)
    r.catalog_grants.insert("c".into(), cat(Caps::SELECT.union(Caps::EXPLAIN)));
    assert_eq!(level(&r, &k), Some((Caps::SELECT, GrantKind::Catalog)));
    // one that states more than the catalog's holds them: the reference's pattern
    r.catalog_grants.insert("c".into(), cat(Caps::NONE));
    r.object_grants.insert(k.clone(), obj(Some(Caps::SELECT.union(Caps::INSERT))));
    assert_eq!(level(&r, &k), Some((Caps::SELECT.union(Caps::INSERT), GrantKind::Object)));
    // one that states fewer narrows
    r.catalog_grants.insert("c".into(), cat(Caps::DATA));
    r.object_grants.insert(k.clone(), obj(Some(Caps::SELECT)));
    assert_eq!(level(&r, &k), Some((Caps::SELECT, GrantKind::Object)));
    // the other objects keep the catalog's
    assert_eq!(level(&r, &key("c", "main", "u")), Some((Caps::DATA, GrantKind::Catalog)));
    // the explicit empty set takes the object back
    r.object_grants.insert(k.clone(), obj(Some(Caps::NONE)));
    assert_eq!(level(&r, &k), None);
}

#[test]
fn a_schema_grant_sits_between_object_and_catalog() {
    let (t, u) = (key("c", "s", "t"), key("c", "s", "u"));
    let mut r = Role::default();
    r.catalog_grants.insert("c".into(), cat(Caps::DATA));
    r.schema_grants.insert(("c".into(), "s".into()), Caps::SELECT);
    r.object_grants.insert(t.clone(), obj(Some(Caps::DELETE)));
    assert_eq!(level(&r, &t), Some((Caps::DELETE, GrantKind::Object)));
    assert_eq!(level(&r, &u), Some((Caps::SELECT, GrantKind::Schema)));
    assert_eq!(level(&r, &key("c", "main", "u")), Some((Caps::DATA, GrantKind::Catalog)));
    // an object grant that states none inherits the schema grant's
    r.object_grants.insert(t.clone(), obj(None));
    assert_eq!(level(&r, &t), Some((Caps::SELECT, GrantKind::Schema)));
    // a schema grant of create/drop only states no data capability: the catalog's
    r.schema_grants.insert(("c".into(), "s".into()), Caps::CREATE);
    assert_eq!(level(&r, &u), Some((Caps::DATA, GrantKind::Catalog)));
    // its explicit empty set takes the schema's objects back
    r.schema_grants.insert(("c".into(), "s".into()), Caps::NONE);
    assert_eq!(level(&r, &u), None);
}

#[test]
fn two_roles_hold_the_union_of_their_levels() {
    let k = key("c", "main", "t");
    let mut p = Policy::default();
    p.catalogs.entry("c".into()).or_default().objects.insert(
        ("main".into(), "t".into()),
        Relation {
            kind: RelationKind::Table(PhysName { db: "d".into(), schema: "main".into(), name: "t".into() }),
            comment: None,
            slice: Slice::default(),
            declared: Declared::default(),
        },
    );
    for (name, caps) in [("a", Caps::SELECT), ("b", Caps::DELETE)] {
        let mut r = Role::default();
        r.catalog_grants.insert("c".into(), cat(Caps::NONE));
        r.object_grants.insert(k.clone(), obj(Some(caps)));
        p.roles.insert(name.into(), r);
    }
    let both = Principal { roles: vec!["a".into(), "b".into()], label: "token".into(), claims: Default::default() };
    assert_eq!(View::new(&p, &both).unwrap().caps(&k), Some(Caps::SELECT.union(Caps::DELETE)));
    assert_eq!(View::new(&p, &Principal::role("a")).unwrap().caps(&k), Some(Caps::SELECT));
    let rows: Vec<(&str, Caps, GrantKind)> = effective(&p).into_iter().map(|e| (e.role, e.caps, e.by)).collect();
    assert_eq!(rows, [("a", Caps::SELECT, GrantKind::Object), ("b", Caps::DELETE, GrantKind::Object)]);
}
