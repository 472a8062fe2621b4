//! Which grant allowed what (spec 001, "Errors and the grant record"): recorded where access is
//! decided, so that explain and audit can say why a statement was allowed.
//!
//! Cheap on purpose (built on every rewrite that misses the caches): a grant is a role index and
//! a kind; what the grant is on follows from the kind and the object used (`Granted::on`), and a
//! use is recorded once per object or function and statement.
use super::View;
use crate::policy::functions::{Access, FnKey, FnTarget, FunctionPolicy};
use crate::policy::{Caps, ObjKey, Policy};

/// One grant that allowed a use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grant {
    /// The role holding it, as an index into `Principal::roles`; `None`: a function grant to
    /// ALL ROLES.
    pub role: Option<u16>,
    pub kind: GrantKind,
}

/// What kind of grant, and so what it is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GrantKind {
    /// `GRANT CATALOG c`: on the catalog of the object used.
    Catalog,
    /// `GRANT SCHEMA c.s`: on the virtual schema of the name used.
    Schema,
    /// `GRANT TABLE|VIEW|OBJECT`: on the object used itself (the most specific grant).
    Object,
    /// `GRANT FUNCTION f`: on the function used, by name.
    Function,
    /// `GRANT FUNCTION CATEGORY k`: on the category with this index in the policy's
    /// `functions.categories` (name order; `Granted::on` names it).
    Category(u16),
}

/// What a use touched.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Used {
    /// A virtual object (a listed one, a name in a virtual schema, a virtual function).
    Object(ObjKey),
    /// A function call the function gate admitted.
    Function(FnKey),
}

/// One use the decision allowed, with the grants that allowed it (several when several of the
/// principal's roles each hold what the use needed: access is their union).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Granted {
    pub used: Used,
    /// The capabilities the use needed (`select` for a function call).
    pub caps: Caps,
    pub by: Vec<Grant>,
}

impl Granted {
    /// What `grant` is on, as a management statement names it: `sales`, `sales.eu`,
    /// `sales.orders`, `abs`, `base`.
    pub fn on(&self, grant: &Grant, policy: &Policy) -> String {
        match (grant.kind, &self.used) {
            (GrantKind::Catalog, Used::Object(k)) => k.catalog.clone(),
            (GrantKind::Schema, Used::Object(k)) => format!("{}.{}", k.catalog, k.schema),
            (GrantKind::Object, Used::Object(k)) => k.to_string(),
            (GrantKind::Category(i), _) => {
                policy.functions.categories.keys().nth(usize::from(i)).cloned().unwrap_or_default()
            }
            (_, Used::Function(k)) => k.name.clone(),
            (GrantKind::Function, Used::Object(k)) => k.to_string(),
        }
    }

    /// The role that holds `grant` (`None`: ALL ROLES).
    pub fn role<'a>(grant: &Grant, principal: &'a super::Principal) -> Option<&'a str> {
        grant.role.and_then(|i| principal.roles.get(usize::from(i))).map(String::as_str)
    }
}

/// Records `caps` used on `used`, allowed by `by`; a use already recorded gains the capabilities.
pub fn record(out: &mut Vec<Granted>, used: &ObjKey, caps: Caps, by: Vec<Grant>) {
    match out.iter_mut().find(|g| matches!(&g.used, Used::Object(k) if k == used)) {
        Some(g) => {
            g.caps = g.caps.union(caps);
            for b in by {
                if !g.by.contains(&b) {
                    g.by.push(b);
                }
            }
        }
        None => out.push(Granted { used: Used::Object(used.clone()), caps, by }),
    }
}

/// The index of role `i` as stored in a `Grant` (a principal has far fewer than 65 536 roles;
/// past that the index saturates rather than wrapping to another role).
fn index(i: usize) -> u16 {
    u16::try_from(i).unwrap_or(u16::MAX)
}

impl View<'_> {
    /// The grants that allow `needed` on `key`: per role of the principal that holds all of
    /// `needed` there, the most specific of its grants that states capabilities (`level`: an
    /// object grant that states none names the grant it inherits from); in a virtual schema,
    /// its schema grant, or the catalog grant it inherits from (`alias_level`).
    pub fn grants(&self, key: &ObjKey, needed: Caps) -> Vec<Grant> {
        let mut out = Vec::new();
        let schema = self.policy.virtual_schema(&key.catalog, &key.schema).map(|_| (key.catalog.clone(), key.schema.clone()));
        for (i, role) in self.roles.iter().enumerate() {
            let kind = if let Some((c, s)) = &schema {
                match super::alias_level(role, c, s) {
                    Some((caps, kind)) if caps.contains(needed) => kind,
                    _ => continue,
                }
            } else {
                match super::level(role, key) {
                    Some((c, kind)) if c.contains(needed) => kind,
                    _ => continue,
                }
            };
            out.push(Grant { role: Some(index(i)), kind });
        }
        out
    }
}

/// The grants that admit `key` for a principal holding `roles` (in `Principal::roles` order):
/// every grant (not deny) to ALL ROLES or to one of the roles whose category or by-name target
/// holds the key. Called only for an admitted key (a deny anywhere refuses it first).
pub fn function_grants<'a>(fns: &FunctionPolicy, roles: impl Iterator<Item = &'a str>, key: &FnKey) -> Vec<Grant> {
    let class = fns.host.class(key);
    let mut out = Vec::new();
    let mut add = |role: Option<u16>, grants: &std::collections::BTreeMap<FnTarget, Access>| {
        for (target, access) in grants {
            if *access != Access::Grant || !fns.target_holds(target, key, class) {
                continue;
            }
            let kind = match target {
                FnTarget::Category(c) => GrantKind::Category(index(fns.categories.keys().position(|k| k == c).unwrap_or(usize::MAX))),
                FnTarget::Function(_) => GrantKind::Function,
            };
            out.push(Grant { role, kind });
        }
    };
    add(None, &fns.all_roles);
    for (i, r) in roles.enumerate() {
        if let Some(g) = fns.role_grants.get(r) {
            add(Some(index(i)), g);
        }
    }
    out
}

/// One role's effective capabilities on one object (`acl_effective_grants()`, spec 001,
/// "Capabilities"): what a principal holding only that role may do there, and the grant that
/// decided it.
#[derive(Debug, PartialEq, Eq)]
pub struct Effective<'p> {
    pub role: &'p str,
    pub key: ObjKey,
    /// `false`: a virtual schema (`key.name` empty), where every name holds `caps`.
    pub object: bool,
    pub caps: Caps,
    pub by: GrantKind,
}

/// Every role's effective capabilities on every listed object its grants reach, and on every
/// virtual schema a schema grant of a data capability reaches (role, then catalog, schema, name).
pub fn effective(policy: &Policy) -> Vec<Effective<'_>> {
    let mut out = Vec::new();
    for (name, role) in &policy.roles {
        for (catalog, cat) in &policy.catalogs {
            for (schema, object) in cat.objects.keys() {
                let key = ObjKey { catalog: catalog.clone(), schema: schema.clone(), name: object.clone() };
                if let Some((caps, by)) = super::level(role, &key).filter(|(c, _)| !c.is_empty()) {
                    out.push(Effective { role: name, key, object: true, caps, by });
                }
            }
            // an alias schema: its schema grant, or the catalog grant that reaches into it
            for schema in cat.schemas.keys() {
                if let Some((caps, by)) = super::alias_level(role, catalog, schema).filter(|(c, _)| !c.is_empty()) {
                    let key = ObjKey { catalog: catalog.clone(), schema: schema.clone(), name: String::new() };
                    out.push(Effective { role: name, key, object: false, caps, by });
                }
            }
        }
    }
    out
}
