//! Policy is data: virtual catalogs and their objects, roles and their grants. It is immutable
//! once published; changes build a new `Policy` and swap it in (see `state`).
pub mod caps;

pub use caps::Caps;
use std::collections::BTreeMap;

/// A physical object `db.schema.name`, spelled as the operator wrote it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PhysName {
    pub db: String,
    pub schema: String,
    pub name: String,
}

/// Key of a virtual object inside its catalog: `(schema, name)`, lower-case.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ObjKey {
    pub catalog: String,
    pub schema: String,
    pub name: String,
}

impl std::fmt::Display for ObjKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.schema == DEFAULT_SCHEMA {
            write!(f, "{}.{}", self.catalog, self.name)
        } else {
            write!(f, "{}.{}.{}", self.catalog, self.schema, self.name)
        }
    }
}

pub const DEFAULT_SCHEMA: &str = "main";

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RelationKind {
    /// RENAME form: a real table rewritten in place; DML works.
    Table,
}

#[derive(Clone, Debug)]
pub struct Relation {
    pub kind: RelationKind,
    pub target: PhysName,
    pub comment: Option<String>,
}

#[derive(Clone, Debug, Default)]
pub struct Catalog {
    pub comment: Option<String>,
    /// Keyed by `(schema, name)`, lower-case.
    pub objects: BTreeMap<(String, String), Relation>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CatalogGrant {
    pub caps: Caps,
    pub main: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObjectGrant {
    /// `None`: the grant named no capability and inherits its catalog grant's.
    pub caps: Option<Caps>,
}

#[derive(Clone, Debug, Default)]
pub struct Role {
    pub catalog_grants: BTreeMap<String, CatalogGrant>,
    pub object_grants: BTreeMap<ObjKey, ObjectGrant>,
}

#[derive(Clone, Debug, Default)]
pub struct Policy {
    /// Bumped by every change; caches key on it.
    pub version: u64,
    pub catalogs: BTreeMap<String, Catalog>,
    pub roles: BTreeMap<String, Role>,
}

impl Policy {
    pub fn relation(&self, key: &ObjKey) -> Option<&Relation> {
        self.catalogs.get(&key.catalog)?.objects.get(&(key.schema.clone(), key.name.clone()))
    }
}

/// Identifiers in DuckDB are case-insensitive, quoted or not: policy keys are lower-case.
pub fn norm(ident: &str) -> String {
    ident.to_lowercase()
}
