//! Turns a principal and a policy snapshot into what that principal may name and do.
//!
//! `View` answers two questions for the rewriter: which virtual object does a name denote
//! (`resolve`), and which capabilities does the principal hold on it. Across several roles of
//! one principal, access is the union.
use crate::error::{AclError, LacksCapability, NotGranted, On, Result, Unresolved};
use crate::policy::{Caps, ObjKey, PhysName, Policy, Relation, RelationKind, Role, Slice, DEFAULT_SCHEMA};
use std::borrow::Cow;
use std::collections::BTreeMap;

mod union;
use union::UnionLayer;

/// One layer of the subquery that stands for a sliced object, innermost first.
#[derive(Debug, Clone)]
pub enum Layer<'p> {
    /// An object's or a grant's slice (or the union of several roles' column lists).
    Slice(Cow<'p, Slice>),
    /// The union of several roles where one of them shows every column (see `union`):
    /// rows where `rls` holds; every column as `CASE WHEN open THEN col END`, except the
    /// `replace` columns, which are `CASE WHEN open THEN col ELSE <expr> END`.
    Open { rls: String, open: String, replace: Vec<(String, String)> },
}

mod listing;
mod order;
pub use listing::{Aliased, Listed, Listing, ObjectType};
/// Who a statement runs as (defined by `auth`, which makes principals of tokens).
pub use crate::auth::Principal;

pub mod enums;
mod slice_cache;
pub mod slices;
pub use slice_cache::SliceCache;
pub mod grants;
pub use grants::{Grant, GrantKind, Granted, Used};

#[derive(Clone, Debug, PartialEq, Eq)]
enum MainCatalog {
    None,
    One(String),
    Ambiguous,
}

/// A name the principal used, resolved to a virtual object and the caps it holds there.
#[derive(Debug)]
pub struct Resolved<'p> {
    pub key: ObjKey,
    /// A listed object, or (in a virtual schema) the physical table of the same name.
    pub relation: Cow<'p, Relation>,
    pub caps: Caps,
}

pub struct View<'p> {
    pub policy: &'p Policy,
    roles: Vec<&'p Role>,
    main: MainCatalog,
    pub label: &'p str,
    /// Who this is (metadata listings re-derive the view from it when they bind).
    pub principal: &'p Principal,
    /// The roles' default claims (first role in name order wins), replaced by the principal's
    /// (`None`: NULL).
    claims: BTreeMap<&'p str, Option<&'p str>>,
    /// Prefix of this principal's temporary tables (spec 005), computed when first needed.
    temp_prefix: std::cell::OnceCell<String>,
    /// Where sliced objects' subqueries are kept across statements, and this principal's key
    /// there (`rewrite::who`); `None`: built every time.
    pub slice_cache: Option<(&'p SliceCache, &'p str)>,
    /// The `exp` of the principal's token, if it came from one (`with_expiry`).
    pub expires: Option<i64>,
}

impl<'p> View<'p> {
    pub fn new(policy: &'p Policy, principal: &'p Principal) -> Result<View<'p>> {
        let mut roles = Vec::with_capacity(principal.roles.len());
        for r in &principal.roles {
            let role = policy
                .roles
                .get(r)
                .ok_or_else(|| NotGranted::Role { name: r.clone() })?;
            roles.push(role);
        }
        let mut main = MainCatalog::None;
        for (cat, _) in roles.iter().flat_map(|r| r.catalog_grants.iter()).filter(|(_, g)| g.main) {
            main = match main {
                MainCatalog::None => MainCatalog::One(cat.clone()),
                MainCatalog::One(c) if &c == cat => MainCatalog::One(c),
                _ => MainCatalog::Ambiguous,
            };
        }
        let mut claims = BTreeMap::new();
        for role in &roles {
            for (k, v) in &role.claims {
                claims.entry(k.as_str()).or_insert(Some(v.as_str()));
            }
        }
        // A claim the token supplies in any form replaces the default (an unusable one is NULL).
        for (k, v) in &principal.claims {
            claims.insert(k.as_str(), v.as_deref());
        }
        Ok(View {
            policy,
            roles,
            main,
            label: &principal.label,
            principal,
            claims,
            temp_prefix: Default::default(),
            slice_cache: None,
            expires: None,
        })
    }

    /// Records the `exp` of the token the principal came from (unix seconds): a view this
    /// principal creates is refused after it (spec 005).
    pub fn with_expiry(mut self, expires: Option<i64>) -> View<'p> {
        self.expires = expires;
        self
    }

    /// Keeps sliced objects' subqueries in `cache` under `who` (the principal's roles and claims).
    pub fn with_slice_cache(mut self, cache: &'p SliceCache, who: &'p str) -> View<'p> {
        self.slice_cache = Some((cache, who));
        self
    }

    /// Prefix of this principal's temporary tables (spec 005): a digest of its roles and claims.
    pub fn temp_prefix(&self) -> &str {
        self.temp_prefix.get_or_init(|| temp_prefix(&self.principal.roles, &self.claims))
    }

    /// Does any catalog grant of the principal hold `cap` (an explicit-only one: temp, explain)?
    pub fn holds_anywhere(&self, cap: Caps) -> bool {
        self.roles.iter().flat_map(|r| r.catalog_grants.values()).any(|g| g.caps.contains(cap))
    }

    /// Does a catalog grant on `catalog` hold `cap`?
    pub fn holds_on_catalog(&self, catalog: &str, cap: Caps) -> bool {
        self.roles.iter().filter_map(|r| r.catalog_grants.get(catalog)).any(|g| g.caps.contains(cap))
    }

    /// The capabilities the principal's schema grants hold on `catalog.schema` (union over roles).
    /// A schema grant of the explicit empty set (`CAPS '{}'`) holds nothing and shows nothing.
    pub fn schema_caps(&self, catalog: &str, schema: &str) -> Option<Caps> {
        let key = (catalog.to_string(), schema.to_string());
        self.roles.iter().filter_map(|r| r.schema_grants.get(&key).copied()).filter(|c| !c.is_empty()).reduce(Caps::union)
    }

    /// The data capabilities a name in virtual schema `catalog.schema` resolves with: per role,
    /// those of `alias_level`, then the union over roles. `None`: no role reaches the schema.
    pub fn alias_caps(&self, catalog: &str, schema: &str) -> Option<Caps> {
        self.roles.iter().filter_map(|r| alias_level(r, catalog, schema)).map(|(c, _)| c).reduce(Caps::union)
    }

    /// Is `catalog` granted to the principal at all (by a catalog or an object grant)?
    pub fn sees_catalog(&self, catalog: &str) -> bool {
        self.roles.iter().any(|r| {
            r.catalog_grants.contains_key(catalog)
                || r.object_grants.iter().any(|(k, g)| k.catalog == catalog && g.holds_something())
                || r.schema_grants.iter().any(|((c, _), caps)| c == catalog && !caps.is_empty())
        })
    }

    /// The capabilities the principal holds on `key`: per role, those of its most specific grant
    /// there (`role_caps`); then the union over roles. `None`: nothing grants it.
    pub fn caps(&self, key: &ObjKey) -> Option<Caps> {
        self.roles.iter().filter_map(|r| role_caps(r, key)).reduce(Caps::union)
    }

    /// Resolves a table name as the principal wrote it (parts already lower-cased).
    /// Unqualified names go to the MAIN catalog; `a.b` is `catalog.table` or, in the MAIN
    /// catalog, `schema.table` — both at once is ambiguous and refused.
    pub fn resolve(&self, parts: &[String]) -> Result<Resolved<'p>> {
        if let [t] = parts {
            self.main_catalog(t)?;
        }
        self.lookup(parts)?.ok_or_else(|| not_found(parts, self))
    }

    /// `resolve`, with `None` for a name that denotes no granted object (or has no MAIN catalog
    /// to go to); ambiguity is still refused.
    pub fn lookup(&self, parts: &[String]) -> Result<Option<Resolved<'p>>> {
        let mut found: Vec<Resolved<'p>> =
            self.candidates(parts).into_iter().filter_map(|key| self.object(key)).collect();
        match found.len() {
            0 | 1 => Ok(found.pop()),
            _ => Err(Unresolved::AmbiguousTable { name: parts.join(".") }.into()),
        }
    }

    /// The keys a name may denote, before looking any of them up.
    pub fn candidates(&self, parts: &[String]) -> Vec<ObjKey> {
        match parts {
            [t] => match &self.main {
                MainCatalog::One(c) => vec![ObjKey { catalog: c.clone(), schema: DEFAULT_SCHEMA.into(), name: t.clone() }],
                _ => Vec::new(),
            },
            [a, b] => {
                let mut c = Vec::new();
                if self.sees_catalog(a) {
                    c.push(ObjKey { catalog: a.clone(), schema: DEFAULT_SCHEMA.into(), name: b.clone() });
                }
                if let MainCatalog::One(m) = &self.main {
                    c.push(ObjKey { catalog: m.clone(), schema: a.clone(), name: b.clone() });
                }
                c
            }
            [c, s, t] => vec![ObjKey { catalog: c.clone(), schema: s.clone(), name: t.clone() }],
            _ => Vec::new(),
        }
    }

    /// The object `key` denotes for this principal: a listed one its grants reach, or a name in a
    /// virtual schema it holds a schema grant on (the physical table of the same name, RENAME form).
    fn object(&self, key: ObjKey) -> Option<Resolved<'p>> {
        if let Some(vs) = self.policy.virtual_schema(&key.catalog, &key.schema) {
            let caps = self.alias_caps(&key.catalog, &key.schema)?;
            let phys = PhysName { db: vs.db.clone(), schema: vs.schema.clone(), name: key.name.clone() };
            let relation = Relation { kind: RelationKind::Table(phys), comment: None, slice: Slice::default(), declared: Default::default() };
            return Some(Resolved { key, relation: Cow::Owned(relation), caps });
        }
        let relation = self.policy.relation(&key)?;
        let caps = self.caps(&key)?;
        Some(Resolved { key, relation: Cow::Borrowed(relation), caps })
    }

    /// Pretends `parts` was not found: the one refusal for unknown, physical and ungranted names.
    pub fn not_found(&self, parts: &[String]) -> AclError {
        not_found(parts, self)
    }

    fn main_catalog(&self, name: &str) -> Result<String> {
        match &self.main {
            MainCatalog::One(c) => Ok(c.clone()),
            MainCatalog::None => {
                Err(Unresolved::NoMainCatalog { name: name.to_string(), principal: self.label.to_string() }.into())
            }
            MainCatalog::Ambiguous => {
                Err(Unresolved::SeveralMainCatalogs { name: name.to_string(), principal: self.label.to_string() }.into())
            }
        }
    }

    /// The principal's one MAIN catalog (`current_database()`), if it has exactly one.
    pub fn main_name(&self) -> Option<&str> {
        match &self.main {
            MainCatalog::One(c) => Some(c),
            _ => None,
        }
    }

    /// The catalogs the principal may name, for messages.
    pub fn visible_catalogs(&self) -> Vec<&'p str> {
        let mut v: Vec<&str> = self
            .roles
            .iter()
            .flat_map(|r| {
                r.catalog_grants
                    .keys()
                    .map(String::as_str)
                    .chain(r.object_grants.iter().filter(|(_, g)| g.holds_something()).map(|(k, _)| k.catalog.as_str()))
                    .chain(r.schema_grants.iter().filter(|(_, caps)| !caps.is_empty()).map(|((c, _), _)| c.as_str()))
            })
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// The value of claim `name` for this principal; `None` becomes SQL NULL (fails closed).
    pub fn claim(&self, name: &str) -> Option<&'p str> {
        self.claims.get(name).copied().flatten()
    }

    /// Every claim `acl_claim` reads for this principal (the token's over the roles' defaults).
    pub fn claims(&self) -> impl Iterator<Item = (&'p str, Option<&'p str>)> + '_ {
        self.claims.iter().map(|(k, v)| (*k, *v))
    }

    /// The slices that apply to a resolved object for a use that needs `needed`, innermost
    /// first: the object's own, then the grants'. Only roles that hold `needed` on the object
    /// contribute. Across several such roles access is the union (see `union`): their row
    /// predicates are OR-ed (each role's own layers AND-ed), and their column lists are merged.
    pub fn layers(&self, r: &Resolved<'p>, needed: Caps) -> Result<Vec<Layer<'p>>> {
        let Cow::Borrowed(relation) = &r.relation else {
            // A name in a virtual schema: schema grants carry no slices.
            return Ok(Vec::new());
        };
        let relation: &'p Relation = relation;
        let mut per_role: Vec<Vec<&'p Slice>> = Vec::new();
        for role in &self.roles {
            if !role_caps(role, &r.key).is_some_and(|c| c.contains(needed)) {
                continue;
            }
            let cat = role.catalog_grants.get(&r.key.catalog).map(|g| &g.slice);
            let obj = role.object_grants.get(&r.key).map(|g| &g.slice);
            let mine: Vec<&Slice> = cat.into_iter().chain(obj).filter(|s| !s.is_empty()).collect();
            if !per_role.contains(&mine) {
                per_role.push(mine);
            }
        }
        let own = Some(&relation.slice).filter(|s| !s.is_empty()).map(|s| Layer::Slice(Cow::Borrowed(s)));
        let grants: Vec<Layer<'p>> = match per_role.len() {
            0 => {
                return Err(AclError::NoSingleRole {
                    principal: self.label.to_string(),
                    capabilities: needed.names(),
                    object: r.key.to_string(),
                })
            }
            1 => per_role.pop().expect("one").into_iter().map(|s| Layer::Slice(Cow::Borrowed(s))).collect(),
            _ if per_role.iter().flatten().any(|s| s.columns.is_some()) => {
                let flat = per_role.iter().map(|l| union::flatten(l)).collect::<Result<Vec<_>>>()?;
                match union::union(&flat) {
                    UnionLayer::Listed { rls, columns } => vec![Layer::Slice(Cow::Owned(Slice {
                        rls: Some(rls),
                        columns: Some(union::as_columns(&columns)),
                    }))],
                    UnionLayer::Open { rls, open, replace } => vec![Layer::Open { rls, open, replace }],
                }
            }
            _ => {
                // A role without a predicate sees every row: the union has none.
                let mut any_open = false;
                let mut alternatives = Vec::new();
                for layers in &per_role {
                    let preds: Vec<String> = layers.iter().filter_map(|s| s.rls.as_ref().map(|p| format!("({p})"))).collect();
                    if preds.is_empty() {
                        any_open = true;
                    } else {
                        alternatives.push(format!("({})", preds.join(" AND ")));
                    }
                }
                if any_open {
                    Vec::new()
                } else {
                    vec![Layer::Slice(Cow::Owned(Slice { rls: Some(alternatives.join(" OR ")), columns: None }))]
                }
            }
        };
        Ok(order::in_object_order(own.into_iter().chain(grants).collect()))
    }

    /// Refuses unless `caps` holds `needed` on `key`.
    pub fn require(&self, r: &Resolved<'_>, needed: Caps) -> Result<()> {
        if r.caps.contains(needed) {
            Ok(())
        } else {
            let missing = needed.minus(r.caps);
            Err(LacksCapability { principal: self.label.to_string(), capabilities: missing.names(), on: On::Object(r.key.to_string()) }.into())
        }
    }
}

/// The one refusal for a name that is unknown, physical or not granted: it never says which,
/// and it repeats the name only when the name starts in a catalog the principal can see.
fn not_found(parts: &[String], view: &View<'_>) -> AclError {
    if parts.len() == 1 || view.sees_catalog(&parts[0]) {
        NotGranted::Table { name: parts.join(".") }.into()
    } else {
        NotGranted::Catalog { granted: view.visible_catalogs().into_iter().map(str::to_string).collect() }.into()
    }
}

/// `__acl_<digest>_`: 128 bits of SHA-256 over the sorted roles and the effective claims, so two
/// principals share temporary tables only when every right of theirs is the same.
fn temp_prefix(roles: &[String], claims: &BTreeMap<&str, Option<&str>>) -> String {
    use sha2::{Digest, Sha256};
    let mut sorted: Vec<&str> = roles.iter().map(String::as_str).collect();
    sorted.sort_unstable();
    sorted.dedup();
    let mut h = Sha256::new();
    h.update(sorted.len().to_le_bytes());
    for r in sorted {
        h.update(r.len().to_le_bytes());
        h.update(r.as_bytes());
    }
    for (k, v) in claims {
        h.update(k.len().to_le_bytes());
        h.update(k.as_bytes());
        match v {
            Some(v) => {
                h.update(v.len().to_le_bytes());
                h.update(v.as_bytes());
            }
            // No text has this length: NULL never digests like a value.
            None => h.update(usize::MAX.to_le_bytes()),
        }
    }
    let digest = h.finalize();
    let mut out = String::with_capacity(6 + 32 + 1);
    out.push_str("__acl_");
    for b in &digest[..16] {
        use std::fmt::Write;
        let _ = write!(out, "{b:02x}");
    }
    out.push('_');
    out
}

/// One role's capabilities on `key`: those of the most specific of its grants that states any
/// (`level`).
fn role_caps(role: &Role, key: &ObjKey) -> Option<Caps> {
    level(role, key).map(|(caps, _)| caps)
}

/// One role's capabilities on the listed object `key`, and the grant that decided them: the most
/// specific of its grants that states capabilities — object, then schema, then catalog (spec
/// 001, "Capabilities"). An object grant that states none inherits the next level's, or holds
/// the five data capabilities when it is the role's only grant there. Only capabilities take
/// one level: predicates and column lists compose down the chain (`View::layers`). An object
/// grant of the explicit empty set (`CAPS '{}'`) takes the object back: the role holds nothing
/// on it, so it does not resolve for the role at all.
pub(crate) fn level(role: &Role, key: &ObjKey) -> Option<(Caps, GrantKind)> {
    let obj = role.object_grants.get(key);
    if let Some(o) = obj {
        if !o.holds_something() {
            return None;
        }
        if let Some(caps) = o.caps {
            return Some((caps.data(), GrantKind::Object));
        }
    }
    // A schema grant on a schema that holds listed objects (only a virtual schema takes one
    // today, and its names are resolved by `View::object`, not here). Found without building a
    // key: a role has few schema grants. `CAPS '{}'` takes the schema's objects back, as on an
    // object; one that holds only `create`/`drop` states no data capability and inherits.
    let schema = role.schema_grants.iter().find(|((c, s), _)| *c == key.catalog && *s == key.schema).map(|(_, c)| *c);
    match schema {
        Some(caps) if caps.is_empty() => return None,
        Some(caps) if !caps.data().is_empty() => return Some((caps.data(), GrantKind::Schema)),
        _ => {}
    }
    match (role.catalog_grants.get(&key.catalog), obj) {
        (Some(c), _) => Some((c.caps.data(), GrantKind::Catalog)),
        (None, Some(_)) => Some((Caps::DATA, GrantKind::Object)),
        (None, None) => None,
    }
}

/// One role's data capabilities on the names of virtual schema `catalog.schema` (a live alias of a
/// physical schema), and the grant that decided them: the most specific level, as for listed
/// objects (`level`). Its schema grant when that states a data capability; `CAPS '{}'` takes the
/// schema back; otherwise (no schema grant, or one holding only `create`/`drop`) the catalog
/// grant's data capabilities — when that grant carries no RLS and no COLUMNS: those are written
/// for the objects an operator listed and are not applied to tables nobody listed, so a sliced
/// catalog grant does not reach into an alias (fail closed; spec 005, "Virtual schemas").
pub(crate) fn alias_level(role: &Role, catalog: &str, schema: &str) -> Option<(Caps, GrantKind)> {
    let own = role.schema_grants.iter().find(|((c, s), _)| c == catalog && s == schema).map(|(_, c)| *c);
    match own {
        Some(caps) if caps.is_empty() => return None,
        Some(caps) if !caps.data().is_empty() => return Some((caps.data(), GrantKind::Schema)),
        _ => {}
    }
    let g = role.catalog_grants.get(catalog)?;
    (g.slice.is_empty() && !g.caps.data().is_empty()).then(|| (g.caps.data(), GrantKind::Catalog))
}

#[cfg(test)]
mod claim_tests;
#[cfg(test)]
mod level_tests;
