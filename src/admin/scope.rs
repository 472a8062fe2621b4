//! Administration scopes (spec 007): which management statements a principal may run after its
//! prefix (`ACL ROLE "r" ACL GRANT …`). The decision is data in, verdict out: what the
//! principal's roles hold (`Held::of`) against what one command needs (`needs`), and the rule
//! that no scope grants itself more (`target`).
//!
//! - catalog manage (`manage` on a catalog grant): statements on that catalog's objects only —
//!   not GRANT/REVOKE/ALTER GRANT, not DROP or CREATE CATALOG, nothing catalog-less;
//! - global manage (`GRANT ADMIN manage`): every management statement but GRANT/REVOKE ADMIN;
//! - passthrough (`GRANT ADMIN passthrough`): everything, `ACL NATIVE` included.
//!
//! Managing does not imply reading: nothing here is consulted when a principal's query is judged.
use super::functions::FnCommand;
use super::{Command, CommentOn, Expansion, ObjectWord};
use crate::error::{AclError, LacksScope, NotGranted, Result, Scope, SelfGrant};
use crate::policy::functions::Grantee;
use crate::policy::{AdminScope, Caps, Policy};
use std::collections::BTreeSet;

/// What a principal's roles hold, as far as administration goes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Held {
    /// The widest `GRANT ADMIN` scope among its roles.
    pub admin: Option<AdminScope>,
    /// Catalogs a catalog grant of one of its roles holds `manage` on.
    pub catalogs: BTreeSet<String>,
    /// Its roles (lower-case) that the policy holds.
    pub roles: BTreeSet<String>,
    /// The resource groups granted to its roles, each with the first of its roles holding it:
    /// groups whose capacity it may not change (no scope grants itself more).
    pub groups: std::collections::BTreeMap<String, String>,
}

impl Held {
    /// What `roles` hold in `policy`; a role the policy does not hold holds nothing.
    pub fn of(policy: &Policy, roles: &[String]) -> Held {
        let mut held = Held::default();
        for name in roles {
            let Some(role) = policy.roles.get(name) else { continue };
            held.roles.insert(name.clone());
            for g in &role.resource_groups {
                held.groups.entry(g.clone()).or_insert_with(|| name.clone());
            }
            held.admin = held.admin.max(role.admin);
            let managed = role.catalog_grants.iter().filter(|(_, g)| g.caps.contains(Caps::MANAGE));
            held.catalogs.extend(managed.map(|(c, _)| c.clone()));
        }
        held
    }

    /// `of`, refusing a role the policy does not hold, as a principal's query is refused
    /// (`authz::View::new`): at the start of a batch, when the principal is first judged.
    pub fn of_existing(policy: &Policy, roles: &[String]) -> Result<Held> {
        if let Some(missing) = roles.iter().find(|r| !policy.roles.contains_key(*r)) {
            return Err(NotGranted::Role { name: missing.clone() }.into());
        }
        Ok(Held::of(policy, roles))
    }

    fn covers(&self, need: &Need) -> bool {
        match (self.admin, need) {
            (Some(AdminScope::Passthrough), _) => true,
            (Some(AdminScope::Manage), Need::Catalog(_) | Need::Global) => true,
            (_, Need::Catalog(c)) => self.catalogs.contains(c),
            _ => false,
        }
    }
}

/// What one command needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Need {
    /// Manage on this catalog: its catalog manage, global manage or passthrough.
    Catalog(String),
    /// Global manage or passthrough.
    Global,
    Passthrough,
}

impl Need {
    fn scope(&self) -> Scope {
        match self {
            Need::Catalog(c) => Scope::CatalogManage(c.clone()),
            Need::Global => Scope::GlobalManage,
            Need::Passthrough => Scope::Passthrough,
        }
    }
}

/// Whose grants a command changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target<'c> {
    Role(&'c str),
    AllRoles,
}

/// Refuses `cmd` unless `held` covers it and it changes no grant of a role the principal holds.
/// `label` names the principal in the refusal.
pub fn check(held: &Held, label: &str, cmd: &Command) -> Result<()> {
    let (need, statement) = needs(cmd);
    if !held.covers(&need) {
        return Err(LacksScope { principal: label.to_string(), needs: need.scope(), statement }.into());
    }
    match target(cmd) {
        Some(Target::AllRoles) => Err(SelfGrant::AllRoles { principal: label.to_string() }.into()),
        Some(Target::Role(r)) if held.roles.contains(r) => {
            Err(SelfGrant::Role { principal: label.to_string(), role: r.to_string() }.into())
        }
        _ => match cmd {
            // Changing a group that caps one of its roles changes that role's capacity: as a
            // grant to it (ALTER, CREATE OR REPLACE, DROP; narrowing included).
            Command::ResourceGroup(g) => match g.capacity_of().and_then(|name| held.groups.get(name)) {
                Some(role) => Err(SelfGrant::Role { principal: label.to_string(), role: role.clone() }.into()),
                None => Ok(()),
            },
            _ => Ok(()),
        },
    }
}

/// `ACL NATIVE <sql>`: passthrough only.
pub fn check_native(held: &Held, label: &str) -> Result<()> {
    if held.covers(&Need::Passthrough) {
        return Ok(());
    }
    Err(LacksScope { principal: label.to_string(), needs: Scope::Passthrough, statement: "ACL NATIVE" }.into())
}

/// After a principal's batch: it may not hold a role it did not hold before (a claim mapped to
/// another role, an issuer re-created to count other values, a role created under a name its
/// token carries).
pub fn check_gains(label: &str, before: &[String], after: &[String]) -> Result<()> {
    match after.iter().find(|r| !before.contains(r)) {
        Some(role) => Err(AclError::from(SelfGrant::Gains { principal: label.to_string(), role: role.clone() })),
        None => Ok(()),
    }
}

/// The scope `cmd` needs and the statement's kind for the refusal. Every arm is written out: a
/// command added later does not compile here until its scope is decided.
pub fn needs(cmd: &Command) -> (Need, &'static str) {
    let on = |c: &str| Need::Catalog(c.to_string());
    match cmd {
        // The catalog itself: creating, replacing or dropping one is catalog-less work.
        Command::CreateCatalog { .. } => (Need::Global, "CREATE VIRTUAL CATALOG"),
        Command::DropCatalog { .. } => (Need::Global, "DROP VIRTUAL CATALOG"),
        // What a catalog's managers may name: no scope lists itself more.
        Command::SetSources { .. } => (Need::Global, "ALTER VIRTUAL CATALOG SET SOURCES"),
        // A catalog's objects.
        Command::CreateTable { key, .. } => (on(&key.catalog), "CREATE VIRTUAL TABLE"),
        Command::DropTable { key, .. } => (on(&key.catalog), "DROP VIRTUAL TABLE"),
        Command::CreateView { key, .. } => (on(&key.catalog), "CREATE VIRTUAL VIEW"),
        Command::DropView { key, .. } => (on(&key.catalog), "DROP VIRTUAL VIEW"),
        Command::AlterTable { key, .. } => (on(&key.catalog), "ALTER VIRTUAL TABLE"),
        Command::AlterView { key, .. } => (on(&key.catalog), "ALTER VIRTUAL VIEW"),
        Command::AlterTypes { key, word: ObjectWord::View, .. } => (on(&key.catalog), "ALTER VIRTUAL VIEW"),
        Command::AlterTypes { key, .. } => (on(&key.catalog), "ALTER VIRTUAL TABLE"),
        Command::CreateReference { key, .. } => (on(&key.catalog), "CREATE VIRTUAL REFERENCE"),
        Command::DropReference { key, .. } => (on(&key.catalog), "DROP VIRTUAL REFERENCE"),
        Command::CreateSchema { catalog, .. } => (on(catalog), "CREATE VIRTUAL SCHEMA"),
        Command::DropSchema { catalog, .. } => (on(catalog), "DROP VIRTUAL SCHEMA"),
        // Expanding maps physical objects into the catalog, as CREATE VIRTUAL TABLE does.
        Command::ExpandSchema { catalog, how: Expansion::Create { .. }, .. } => (on(catalog), "CREATE VIRTUAL SCHEMA"),
        Command::ExpandSchema { catalog, how: Expansion::Refresh { .. }, .. } | Command::AlterSchemaPhys { catalog, .. } => {
            (on(catalog), "ALTER VIRTUAL SCHEMA")
        }
        Command::Comment { on: what, .. } => match what {
            // The catalog's own comment describes what it manages: its business too.
            CommentOn::Catalog(c) | CommentOn::Schema(c, _) => (on(c), "COMMENT ON VIRTUAL"),
            CommentOn::Object { key, .. } | CommentOn::Function { key, .. } | CommentOn::Column { key, .. } => {
                (on(&key.catalog), "COMMENT ON VIRTUAL")
            }
        },
        // Handing out access, on any catalog: global.
        Command::GrantCatalog { .. } => (Need::Global, "GRANT CATALOG"),
        Command::GrantObject { word, .. } => (Need::Global, grant_word(*word)),
        Command::AlterGrant { .. } => (Need::Global, "ALTER GRANT"),
        Command::RevokeCatalog { .. } => (Need::Global, "REVOKE CATALOG"),
        Command::RevokeObject { .. } => (Need::Global, "REVOKE"),
        Command::GrantSchema { .. } => (Need::Global, "GRANT SCHEMA"),
        Command::RevokeSchema { .. } => (Need::Global, "REVOKE SCHEMA"),
        // Catalog-less: roles, issuers, maps.
        Command::CreateRole { .. } | Command::CreateRoleWithClaims { .. } => (Need::Global, "CREATE ROLE"),
        Command::DropRole { .. } => (Need::Global, "DROP ROLE"),
        Command::AlterRoleClaims { .. } => (Need::Global, "ALTER ROLE"),
        Command::CreateIssuer { .. } => (Need::Global, "CREATE ISSUER"),
        Command::AlterIssuer { .. } => (Need::Global, "ALTER ISSUER"),
        Command::DropIssuer { .. } => (Need::Global, "DROP ISSUER"),
        Command::MapClaim { .. } => (Need::Global, "MAP CLAIM"),
        Command::UnmapClaim { .. } => (Need::Global, "UNMAP CLAIM"),
        Command::Function(f) => match f {
            FnCommand::CreateCategory { .. } => (Need::Global, "CREATE FUNCTION CATEGORY"),
            FnCommand::DropCategory { .. } => (Need::Global, "DROP FUNCTION CATEGORY"),
            FnCommand::AlterCategory { .. } => (Need::Global, "ALTER FUNCTION CATEGORY"),
            FnCommand::Grant { .. } => (Need::Global, "GRANT FUNCTION"),
            FnCommand::Revoke { .. } => (Need::Global, "REVOKE FUNCTION"),
            FnCommand::CreateVirtual { key, .. } => (on(&key.catalog), "CREATE VIRTUAL FUNCTION"),
            FnCommand::DropVirtual { key, .. } => (on(&key.catalog), "DROP VIRTUAL FUNCTION"),
        },
        Command::GrantAdmin { .. } => (Need::Passthrough, "GRANT ADMIN"),
        Command::RevokeAdmin { .. } => (Need::Passthrough, "REVOKE ADMIN"),
        // Sessions' capacity is the node's: global manage, as issuers and claim maps.
        Command::ResourceGroup(g) => (Need::Global, g.verb()),
        // Reading what drifted in c (physical detail included) is c's administration.
        Command::CheckCatalog { catalog } => (on(catalog), "CHECK VIRTUAL CATALOG"),
    }
}

fn grant_word(word: super::ObjectWord) -> &'static str {
    match word {
        super::ObjectWord::Table => "GRANT TABLE",
        super::ObjectWord::View => "GRANT VIEW",
        super::ObjectWord::Object => "GRANT OBJECT",
    }
}

/// The role whose access `cmd` changes, if any: every grant, revoke and alter of a grant (a
/// revoke can widen too: an object grant narrows its catalog grant), function grants and denies,
/// admin scopes, claim mappings and a role's default claims (they feed its row policies).
pub fn target(cmd: &Command) -> Option<Target<'_>> {
    fn role(r: &String) -> Option<Target<'_>> {
        Some(Target::Role(r.as_str()))
    }
    match cmd {
        Command::GrantCatalog { role: r, .. }
        | Command::GrantObject { role: r, .. }
        | Command::AlterGrant { role: r, .. }
        | Command::RevokeCatalog { role: r, .. }
        | Command::RevokeObject { role: r, .. }
        | Command::GrantSchema { role: r, .. }
        | Command::RevokeSchema { role: r, .. }
        | Command::GrantAdmin { role: r, .. }
        | Command::RevokeAdmin { role: r }
        | Command::MapClaim { role: r, .. }
        | Command::AlterRoleClaims { name: r, .. }
        | Command::CreateRoleWithClaims { name: r, .. } => role(r),
        Command::UnmapClaim { role: r, .. } => r.as_ref().and_then(role),
        // A role's groups are its sessions' capacity: no self-grant of a more generous one.
        Command::ResourceGroup(g) => g.role().map(Target::Role),
        Command::Function(FnCommand::Grant { grantee, .. } | FnCommand::Revoke { grantee, .. }) => match grantee {
            Grantee::AllRoles => Some(Target::AllRoles),
            Grantee::Role(r) => role(r),
        },
        // Replacing a role states it whole, without grants; the rest change no role's grants.
        Command::CreateRole { .. }
        | Command::DropRole { .. }
        | Command::CreateCatalog { .. }
        | Command::DropCatalog { .. }
        | Command::SetSources { .. }
        | Command::CreateTable { .. }
        | Command::DropTable { .. }
        | Command::CreateView { .. }
        | Command::DropView { .. }
        | Command::AlterTable { .. }
        | Command::AlterView { .. }
        | Command::AlterTypes { .. }
        | Command::Comment { .. }
        | Command::CreateReference { .. }
        | Command::DropReference { .. }
        | Command::CreateIssuer { .. }
        | Command::AlterIssuer { .. }
        | Command::DropIssuer { .. }
        | Command::Function(_)
        | Command::CreateSchema { .. }
        | Command::ExpandSchema { .. }
        | Command::AlterSchemaPhys { .. }
        | Command::DropSchema { .. }
        | Command::CheckCatalog { .. } => None,
    }
}

#[cfg(test)]
#[path = "scope_tests.rs"]
mod tests;
