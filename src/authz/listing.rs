//! What a principal's catalog listing holds (specs/005, "Metadata"): the one place that decides
//! which virtual catalogs, schemas and objects a principal sees in `information_schema`,
//! `duckdb_*()` and `SHOW`, and through which slice layers their columns are shown.
//!
//! An object is listed when the principal holds any capability on it (the union over its roles,
//! as for access). Its columns are those of the use it is granted: the `select` shape when it
//! holds select, else the shape of its first write capability; an object whose roles disagree on
//! the column list (refused for reads, see `layers`) is listed without columns.
use super::{Resolved, View};
use crate::policy::{Caps, ObjKey, Relation, RelationKind, VirtualSchema, DEFAULT_SCHEMA};

/// How the listing presents an object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ObjectType {
    /// A virtual table, RENAME or SUBQUERY form (`BASE TABLE`).
    Table,
    /// A virtual view (`VIEW`).
    View,
}

#[derive(Debug)]
pub struct Listed<'p> {
    pub key: ObjKey,
    pub relation: &'p Relation,
    pub object_type: ObjectType,
    pub caps: Caps,
    /// The slice layers the columns are shown through (as `View::layers`); `None`: no single
    /// column shape, the object is listed without columns.
    pub layers: Option<Vec<super::Layer<'p>>>,
}

impl Listed<'_> {
    /// Could the principal INSERT into it: a RENAME-form table it holds insert on.
    pub fn insertable(&self) -> bool {
        self.object_type == ObjectType::Table && self.relation.slice.is_empty() && self.caps.contains(Caps::INSERT)
    }
}

#[derive(Debug, Default)]
pub struct Listing<'p> {
    /// Virtual catalogs with their comments, by name.
    pub catalogs: Vec<(String, Option<String>)>,
    /// `(catalog, schema)`: `main` of every catalog, and every schema holding a listed object.
    pub schemas: Vec<(String, String)>,
    /// By catalog, schema, name.
    pub objects: Vec<Listed<'p>>,
    /// Virtual schemas whose objects are listed: those a name in resolves with a data capability
    /// (`View::alias_caps`: a schema grant, or a catalog grant without slices that reaches them). Their objects are whatever the physical
    /// schema holds when the listing binds (`acl_meta`), so only the alias is known here.
    pub aliases: Vec<Aliased<'p>>,
}

/// A virtual schema as the listing sees it: `catalog.schema` names every table and view of
/// `target`, RENAME form, with `caps`.
#[derive(Debug)]
pub struct Aliased<'p> {
    pub catalog: String,
    pub schema: String,
    pub target: &'p VirtualSchema,
    pub caps: Caps,
}

impl<'p> View<'p> {
    /// The principal's virtual catalog as listings show it. Nothing physical is in it except
    /// through `Listed::relation`, which only the column-type lookup reads.
    pub fn listing(&self) -> Listing<'p> {
        let mut out = Listing::default();
        for name in self.visible_catalogs() {
            let Some(catalog) = self.policy.catalogs.get(name) else { continue };
            out.catalogs.push((name.to_string(), catalog.comment.clone()));
            out.schemas.push((name.to_string(), DEFAULT_SCHEMA.to_string()));
            for ((schema, table), relation) in &catalog.objects {
                let key = ObjKey { catalog: name.to_string(), schema: schema.clone(), name: table.clone() };
                let Some(caps) = self.caps(&key).filter(|c| !c.is_empty()) else { continue };
                let shown = [Caps::SELECT, Caps::INSERT, Caps::UPDATE, Caps::DELETE, Caps::MERGE]
                    .into_iter()
                    .find(|c| caps.contains(*c));
                let resolved = Resolved { key: key.clone(), relation: std::borrow::Cow::Borrowed(relation), caps };
                let layers = shown.and_then(|use_| self.layers(&resolved, use_).ok());
                if !out.schemas.iter().any(|(c, s)| c == name && s == schema) {
                    out.schemas.push((name.to_string(), schema.clone()));
                }
                let object_type = match relation.kind {
                    RelationKind::Table(_) => ObjectType::Table,
                    RelationKind::View(_) => ObjectType::View,
                };
                out.objects.push(Listed { key, relation, object_type, caps, layers });
            }
            // A schema grant shows its schema (even one holding only create/drop); the schema's
            // objects when it holds a data capability, as `View::object` resolves them.
            // A catalog grant that reaches into the schema (`alias_level`) lists it the same way.
            for (schema, target) in &catalog.schemas {
                let data = self.alias_caps(name, schema).filter(|c| !c.is_empty());
                if self.schema_caps(name, schema).is_none() && data.is_none() {
                    continue;
                }
                if !out.schemas.iter().any(|(c, s)| c == name && s == schema) {
                    out.schemas.push((name.to_string(), schema.clone()));
                }
                if let Some(caps) = data {
                    out.aliases.push(Aliased { catalog: name.to_string(), schema: schema.clone(), target, caps });
                }
            }
        }
        out.schemas.sort();
        out
    }
}

#[cfg(test)]
mod tests {
    use crate::authz::{Principal, View};
    use crate::policy::*;

    fn obj(c: &str, s: &str, n: &str) -> ObjKey {
        ObjKey { catalog: c.into(), schema: s.into(), name: n.into() }
    }

    fn policy() -> Policy {
        let mut p = Policy::default();
        for (c, s, n) in [("sales", "main", "orders"), ("sales", "eu", "orders"), ("sales", "main", "secret"), ("hr", "main", "people")] {
            let rel = Relation {
                kind: RelationKind::Table(PhysName { db: "phys".into(), schema: "main".into(), name: format!("p_{n}") }),
                comment: None,
                slice: Slice::default(),
                declared: Declared::default(),
            };
            p.catalogs.entry(c.into()).or_default().objects.insert((s.into(), n.into()), rel);
        }
        let mut a = Role::default();
        a.catalog_grants.insert("sales".into(), CatalogGrant { caps: Caps::SELECT, main: true, slice: Slice::default() });
        p.roles.insert("a".into(), a);
        // an object grant alone: only that object, and its catalog
        let mut b = Role::default();
        b.object_grants.insert(obj("hr", "main", "people"), ObjectGrant { caps: Some(Caps::INSERT), slice: Slice::default() });
        p.roles.insert("b".into(), b);
        p
    }

    #[test]
    fn lists_what_some_capability_grants_and_nothing_else() {
        let p = policy();
        let pa = Principal::role("a");
        let l = View::new(&p, &pa).unwrap().listing();
        let names: Vec<String> = l.objects.iter().map(|o| o.key.to_string()).collect();
        assert_eq!(names, ["sales.eu.orders", "sales.orders", "sales.secret"]);
        assert_eq!(l.catalogs.iter().map(|c| c.0.as_str()).collect::<Vec<_>>(), ["sales"]);
        assert_eq!(l.schemas, [("sales".to_string(), "eu".to_string()), ("sales".into(), "main".into())]);

        let pb = Principal::role("b");
        let l = View::new(&p, &pb).unwrap().listing();
        let names: Vec<String> = l.objects.iter().map(|o| o.key.to_string()).collect();
        assert_eq!(names, ["hr.people"]);
        assert!(l.objects[0].insertable());
        assert!(l.objects[0].layers.as_ref().is_some_and(|v| v.is_empty()));
        // several roles: the union
        let both = Principal { roles: vec!["a".into(), "b".into()], label: "token".into(), claims: Default::default() };
        assert_eq!(View::new(&p, &both).unwrap().listing().objects.len(), 4);
    }
}
