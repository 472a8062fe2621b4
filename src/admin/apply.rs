//! Applying a management command to the policy. Each arm validates before it mutates, so a
//! failed command normally leaves the policy untouched (the caller also works on a clone).
use super::{functions, issuer, schemas, Command, CreateMode, ObjectWord};
use crate::error::{AclError, Invalid, Noun, Result};
use crate::policy::{
    Slice,
    Caps, Catalog, CatalogGrant, ObjKey, ObjectGrant, Policy, Relation, RelationKind, Role,
};

pub(super) const SKIPPED_EXISTS: &str = " (skipped: exists)";
const SKIPPED_MISSING: &str = " (skipped: does not exist)";
const REPLACED: &str = " (replaced)";
const NOTHING_TO_REVOKE: &str = " (nothing to revoke)";

/// Apply `cmd` to `policy` and return a short status text. Every success (a skip included)
/// bumps `policy.version`, so the caller can publish unconditionally.
pub fn apply(policy: &mut Policy, cmd: &Command) -> Result<String> {
    let resolved = super::alter::resolve(policy, cmd)?;
    let status = match &*resolved {
        Command::CreateCatalog {
            name,
            comment,
            mode,
        } => create_catalog(policy, name, comment, *mode),
        Command::DropCatalog {
            name,
            if_exists,
            cascade,
        } => drop_catalog(policy, name, *if_exists, *cascade),
        Command::SetSources { catalog, sources } => set_sources(policy, catalog, sources),
        Command::CreateTable {
            key,
            target,
            comment,
            mode,
            slice,
            declared,
        } => {
            let rel = Relation {
                kind: RelationKind::Table(target.clone()),
                comment: comment.clone(),
                slice: slice.clone(),
                declared: declared.clone(),
            };
            create_table(policy, key, rel, *mode)
        }
        Command::DropTable { key, if_exists } => drop_table(policy, key, *if_exists, ObjectWord::Table),
        Command::DropView { key, if_exists } => drop_table(policy, key, *if_exists, ObjectWord::View),
        Command::CreateView { key, query, comment, mode, declared } => {
            let rel = Relation {
                kind: RelationKind::View(query.clone()),
                comment: comment.clone(),
                slice: Slice::default(),
                declared: declared.clone(),
            };
            create_table(policy, key, rel, *mode)
        }
        Command::Comment { on, text } => super::alter::comment(policy, on, text),
        Command::CreateReference { key, reference, mode } => super::references::create_reference(policy, key, reference, *mode),
        Command::DropReference { key, if_exists } => super::references::drop_reference(policy, key, *if_exists),
        Command::AlterRoleClaims { name, claims } => super::roles::alter_role_claims(policy, name, claims),
        // `resolve` turned these into the statements they amount to.
        Command::AlterTable { .. }
        | Command::AlterView { .. }
        | Command::AlterTypes { .. }
        | Command::AlterGrant { .. }
        | Command::AlterIssuer { .. } => {
            Err(AclError::internal("an ALTER was not resolved"))
        }
        Command::CreateRole { name, mode } => create_role(policy, name, *mode),
        Command::DropRole { name, if_exists } => drop_role(policy, name, *if_exists),
        Command::GrantCatalog {
            catalog,
            role,
            caps,
            main,
            slice,
        } => grant_catalog(policy, catalog, role, *caps, *main, slice),
        Command::GrantObject {
            key,
            role,
            caps,
            word,
            slice,
        } => grant_object(policy, key, role, *caps, *word, slice),
        Command::RevokeCatalog { catalog, role } => revoke_catalog(policy, catalog, role),
        Command::RevokeObject { key, role, word } => revoke_object(policy, key, role, *word),
        Command::CreateRoleWithClaims { name, mode, claims } => {
            super::roles::create_role_with_claims(policy, name, *mode, claims)
        }
        Command::CreateIssuer { spec, mode } => issuer::create_issuer(policy, spec, *mode),
        Command::DropIssuer { iss, if_exists } => issuer::drop_issuer(policy, iss, *if_exists),
        Command::MapClaim { iss, value, role } => issuer::map_claim(policy, iss, value, role),
        Command::UnmapClaim { iss, value, role } => {
            issuer::unmap_claim(policy, iss, value, role.as_deref())
        }
        Command::Function(f) => super::functions::apply(policy, f),
        Command::CreateSchema { catalog, schema, target, comment, mode } => {
            schemas::create_schema(policy, (catalog, schema), target, comment, *mode)
        }
        Command::ExpandSchema { catalog, schema, how, objects } => {
            super::expand::apply(policy, (catalog, schema), how, objects.as_deref())
        }
        Command::AlterSchemaPhys { catalog, schema, target } => super::expand::set_phys(policy, (catalog, schema), target),
        Command::DropSchema { catalog, schema, if_exists, cascade } => {
            schemas::drop_schema(policy, catalog, schema, *if_exists, *cascade)
        }
        Command::GrantSchema { catalog, schema, role, caps, into, comment } => {
            schemas::grant_schema(policy, (catalog, schema), role, *caps, into.as_ref(), comment)
        }
        Command::RevokeSchema { catalog, schema, role } => schemas::revoke_schema(policy, catalog, schema, role),
        Command::GrantAdmin { role, scope } => super::roles::grant_admin(policy, role, *scope),
        Command::RevokeAdmin { role } => super::roles::revoke_admin(policy, role),
        Command::ResourceGroup(g) => super::resource_groups::apply(policy, g),
        // Runs alone, as its own table function (`engine::admin::batch`).
        Command::CheckCatalog { .. } => Err(AclError::from(crate::error::StatementNotPermitted::CheckAlone)),
    }?;
    policy.version += 1;
    Ok(super::alter::status(cmd).unwrap_or(status))
}

fn create_catalog(
    p: &mut Policy,
    name: &str,
    comment: &Option<String>,
    mode: CreateMode,
) -> Result<String> {
    let status = format!("CREATE VIRTUAL CATALOG {}", q(name));
    if name == "temp" {
        // Under a principal `temp.t` names the principal's own temporary table (spec 005).
        return Err(Invalid::Rule("the catalog name \"temp\" is reserved for temporary tables").into());
    }
    let exists = p.catalogs.contains_key(name);
    match (exists, mode) {
        (true, CreateMode::Create) => Err(Invalid::Exists { noun: Noun::Catalog, name: name.to_string() }.into()),
        (true, CreateMode::IfNotExists) => Ok(status + SKIPPED_EXISTS),
        _ => {
            // OR REPLACE replaces the catalog as a whole, like replacing a schema: the new one is
            // empty, so grants on the old objects go too. Catalog grants name the catalog, which
            // still exists, and are kept.
            if exists {
                remove_grants(p, |_| false, |k| k.catalog == name);
                schemas::forget(p, |c, _| c == name);
                functions::forget_catalog(p, name);
            }
            p.catalogs.insert(
                name.to_string(),
                Catalog {
                    comment: comment.clone(),
                    ..Catalog::default()
                },
            );
            Ok(if exists { status + REPLACED } else { status })
        }
    }
}

/// `ALTER VIRTUAL CATALOG c SET SOURCES (…)`: the list replaces the one before. Objects its
/// managers mapped under a source no longer listed stay (as PostgreSQL keeps objects whose
/// creator lost CREATE).
fn set_sources(p: &mut Policy, catalog: &str, sources: &[crate::policy::policy_sql::Source]) -> Result<String> {
    let cat = p.catalogs.get_mut(catalog).ok_or_else(|| catalog_missing(catalog))?;
    cat.sources = sources.iter().cloned().collect();
    let listed: Vec<String> = sources.iter().map(ToString::to_string).collect();
    Ok(format!("ALTER VIRTUAL CATALOG {} SET SOURCES ({})", q(catalog), listed.join(", ")))
}

fn drop_catalog(p: &mut Policy, name: &str, if_exists: bool, cascade: bool) -> Result<String> {
    let status = format!("DROP VIRTUAL CATALOG {}", q(name));
    let Some(cat) = p.catalogs.get(name) else {
        return missing(if_exists, status, || catalog_missing(name));
    };
    let n = cat.objects.len() + cat.schemas.len() + cat.references.len() + functions::functions_in(p, name);
    if n > 0 && !cascade {
        return Err(Invalid::NotEmpty { name: name.to_string() }.into());
    }
    // As in the reference system: grants on it are not dropped silently either.
    let granted: Vec<String> = p
        .roles
        .iter()
        .filter(|(_, r)| {
            r.catalog_grants.contains_key(name)
                || r.object_grants.keys().any(|k| k.catalog == name)
                || r.schema_grants.keys().any(|(c, _)| c == name)
        })
        .map(|(n, _)| n.clone())
        .collect();
    if !granted.is_empty() && !cascade {
        return Err(Invalid::StillGranted { name: name.to_string(), roles: granted }.into());
    }
    p.catalogs.remove(name);
    functions::forget_catalog(p, name);
    remove_grants(p, |c| c == name, |k| k.catalog == name);
    schemas::forget(p, |c, _| c == name);
    Ok(match n {
        0 => status,
        1 => status + " (and 1 object)",
        n => format!("{status} (and {n} objects)"),
    })
}

fn create_table(p: &mut Policy, key: &ObjKey, rel: Relation, mode: CreateMode) -> Result<String> {
    let word = match rel.kind {
        RelationKind::Table(_) => "TABLE",
        RelationKind::View(_) => "VIEW",
    };
    let status = format!("CREATE VIRTUAL {word} {}", qkey(key));
    schemas::refuse_object_in_schema(p, &key.catalog, &key.schema)?;
    let cat = p
        .catalogs
        .get_mut(&key.catalog)
        .ok_or_else(|| catalog_missing(&key.catalog))?;
    let slot = (key.schema.clone(), key.name.clone());
    let exists = cat.objects.contains_key(&slot);
    match (exists, mode) {
        (true, CreateMode::Create) => Err(Invalid::Exists { noun: if word == "VIEW" { Noun::View } else { Noun::Table }, name: key.to_string() }.into()),
        (true, CreateMode::IfNotExists) => Ok(status + SKIPPED_EXISTS),
        _ => {
            // Replacing a table's definition keeps the grants on its name, as CREATE OR REPLACE
            // VIEW does in PostgreSQL: the grant is about the virtual name, not its target.
            cat.objects.insert(slot, rel);
            Ok(if exists { status + REPLACED } else { status })
        }
    }
}

fn drop_table(p: &mut Policy, key: &ObjKey, if_exists: bool, word: ObjectWord) -> Result<String> {
    let status = format!("DROP VIRTUAL {} {}", word.sql(), qkey(key));
    let Some(cat) = p.catalogs.get_mut(&key.catalog) else {
        return missing(if_exists, status, || catalog_missing(&key.catalog));
    };
    if !cat.objects.contains_key(&(key.schema.clone(), key.name.clone())) {
        return missing(if_exists, status, || object_missing(key, word));
    }
    drop_object(p, key);
    Ok(status)
}

/// Removes a listed object with its grants and the references that name it.
pub(super) fn drop_object(p: &mut Policy, key: &ObjKey) {
    if let Some(cat) = p.catalogs.get_mut(&key.catalog) {
        cat.objects.remove(&(key.schema.clone(), key.name.clone()));
    }
    remove_grants(p, |_| false, |k| k == key);
    super::references::forget_object(p, key);
}

pub(super) fn create_role(p: &mut Policy, name: &str, mode: CreateMode) -> Result<String> {
    let status = format!("CREATE ROLE {}", q(name));
    let exists = p.roles.contains_key(name);
    match (exists, mode) {
        (true, CreateMode::Create) => {
            Err(Invalid::Exists { noun: Noun::Role, name: name.to_string() }.into())
        }
        (true, CreateMode::IfNotExists) => Ok(status + SKIPPED_EXISTS),
        _ => {
            // OR REPLACE states the whole role: the new one starts without grants, as DuckDB's
            // CREATE OR REPLACE starts a table empty.
            p.roles.insert(name.to_string(), Role::default());
            functions::forget_role(p, name);
            Ok(if exists { status + REPLACED } else { status })
        }
    }
}

fn drop_role(p: &mut Policy, name: &str, if_exists: bool) -> Result<String> {
    let status = format!("DROP ROLE {}", q(name));
    if p.roles.remove(name).is_none() {
        return missing(if_exists, status, || role_missing(name));
    }
    issuer::forget_role(p, name);
    functions::forget_role(p, name);
    Ok(status)
}

fn grant_catalog(
    p: &mut Policy,
    catalog: &str,
    role: &str,
    caps: Caps,
    main: bool,
    slice: &Slice,
) -> Result<String> {
    let status = format!("GRANT CATALOG {} TO ROLE {}", q(catalog), q(role));
    if !p.catalogs.contains_key(catalog) {
        return Err(catalog_missing(catalog));
    }
    super::slice::check_masks(p, role, catalog, None, slice)?;
    let r = p.roles.get_mut(role).ok_or_else(|| role_missing(role))?;
    // The statement states the whole grant, so a second GRANT replaces the first (no merging of
    // capabilities: granting `reader` after `writer` narrows).
    let previous = r
        .catalog_grants
        .insert(catalog.to_string(), CatalogGrant { caps, main, slice: slice.clone() });
    Ok(if previous.is_some() {
        status + REPLACED
    } else {
        status
    })
}

fn grant_object(
    p: &mut Policy,
    key: &ObjKey,
    role: &str,
    caps: Option<Caps>,
    word: ObjectWord,
    slice: &Slice,
) -> Result<String> {
    let status = format!("GRANT {} {} TO ROLE {}", word.sql(), qkey(key), q(role));
    // The parser already refuses these with the typed word; this covers commands built in code.
    if let Some(c) = caps.filter(|c| c.data() != *c) {
        let extra = c
            .names()
            .into_iter()
            .find(|n| Caps::parse_one(n).is_ok_and(|x| !Caps::DATA.contains(x)));
        let extra = extra.unwrap_or("?");
        return Err(Invalid::CatalogOnly { capability: extra.to_string() }.into());
    }
    require_relation(p, key, word)?;
    super::slice::check_masks(p, role, &key.catalog, Some(key), slice)?;
    let r = p.roles.get_mut(role).ok_or_else(|| role_missing(role))?;
    let previous = r.object_grants.insert(key.clone(), ObjectGrant { caps, slice: slice.clone() });
    Ok(if previous.is_some() {
        status + REPLACED
    } else {
        status
    })
}

fn revoke_catalog(p: &mut Policy, catalog: &str, role: &str) -> Result<String> {
    let status = format!("REVOKE CATALOG {} FROM ROLE {}", q(catalog), q(role));
    if !p.catalogs.contains_key(catalog) {
        return Err(catalog_missing(catalog));
    }
    let r = p.roles.get_mut(role).ok_or_else(|| role_missing(role))?;
    // The role's object grants in the catalog go too (the reference system's rule): an object
    // grant alone gives access, so a script that revokes the catalog means "nothing in it any
    // more". Schema grants are revoked by REVOKE SCHEMA.
    let objects = r.object_grants.len();
    r.object_grants.retain(|k, _| k.catalog != catalog);
    let objects = objects - r.object_grants.len();
    Ok(match (r.catalog_grants.remove(catalog), objects) {
        (None, 0) => status + NOTHING_TO_REVOKE,
        (_, 0) => status,
        (_, 1) => status + " (and 1 object grant)",
        (_, n) => format!("{status} (and {n} object grants)"),
    })
}

fn revoke_object(p: &mut Policy, key: &ObjKey, role: &str, word: ObjectWord) -> Result<String> {
    let status = format!("REVOKE {} {} FROM ROLE {}", word.sql(), qkey(key), q(role));
    require_relation(p, key, word)?;
    let r = p.roles.get_mut(role).ok_or_else(|| role_missing(role))?;
    Ok(match r.object_grants.remove(key) {
        Some(_) => status,
        None => status + NOTHING_TO_REVOKE,
    })
}

/// Every virtual relation answers to TABLE, VIEW and OBJECT alike (only tables exist so far).
fn require_relation(p: &Policy, key: &ObjKey, word: ObjectWord) -> Result<()> {
    if !p.catalogs.contains_key(&key.catalog) {
        return Err(catalog_missing(&key.catalog));
    }
    // A virtual function is an object too: `select` on it lets a role call it.
    if p.relation(key).is_none() && !functions::has_function(p, key) {
        return Err(object_missing(key, word));
    }
    Ok(())
}

/// Drop catalog grants whose catalog matches and object grants whose key matches, in every role.
fn remove_grants(p: &mut Policy, catalog: impl Fn(&str) -> bool, object: impl Fn(&ObjKey) -> bool) {
    p.update_roles(
        |r| r.catalog_grants.keys().any(|c| catalog(c)) || r.object_grants.keys().any(&object),
        |r| {
            r.catalog_grants.retain(|c, _| !catalog(c));
            r.object_grants.retain(|k, _| !object(k));
        },
    );
}

/// A DROP of something absent: silent with IF EXISTS, an error otherwise.
pub(super) fn missing(if_exists: bool, status: String, err: impl FnOnce() -> AclError) -> Result<String> {
    if if_exists {
        Ok(status + SKIPPED_MISSING)
    } else {
        Err(err())
    }
}

fn catalog_missing(name: &str) -> AclError {
    Invalid::Missing { noun: Noun::Catalog, name: name.to_string() }.into()
}

pub(super) fn role_missing(name: &str) -> AclError {
    Invalid::Missing { noun: Noun::Role, name: name.to_string() }.into()
}

fn object_missing(key: &ObjKey, word: ObjectWord) -> AclError {
    let noun = match word {
        ObjectWord::Table => Noun::Table,
        ObjectWord::View => Noun::View,
        ObjectWord::Object => Noun::Object,
    };
    Invalid::Missing { noun, name: key.to_string() }.into()
}

/// A name for a status line, quoted only when it would not read back as the same identifier.
pub(super) fn q(name: &str) -> String {
    let plain = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if plain {
        name.to_string()
    } else {
        crate::sqltext::ident(name)
    }
}

fn qkey(k: &ObjKey) -> String {
    if k.schema == crate::policy::DEFAULT_SCHEMA {
        format!("{}.{}", q(&k.catalog), q(&k.name))
    } else {
        format!("{}.{}.{}", q(&k.catalog), q(&k.schema), q(&k.name))
    }
}

#[cfg(test)]
#[path = "apply_tests.rs"]
mod tests;
