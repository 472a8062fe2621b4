//! Virtual schemas (`CREATE VIRTUAL SCHEMA c.s AS db.schema`, a live alias of a physical schema)
//! and schema grants (`GRANT SCHEMA c.s TO ROLE r [WITH (caps)]`).
//!
//! A virtual schema lists no objects: every name `c.s.x` denotes `db.schema.x`, whether or not it
//! exists yet. So a virtual schema and listed virtual objects never share a schema (either one
//! refuses the other), and only a schema grant reaches into it.
use super::apply::{missing, q, role_missing, SKIPPED_EXISTS};
use super::CreateMode;
use crate::error::{AclError, Invalid, Noun, Result};
use crate::policy::{Caps, Policy, VirtualSchema};

const REPLACED: &str = " (replaced)";

fn shown(catalog: &str, schema: &str) -> String {
    format!("{}.{}", q(catalog), q(schema))
}

fn schema_missing(catalog: &str, schema: &str) -> AclError {
    Invalid::Missing { noun: Noun::Schema, name: format!("{catalog}.{schema}") }.into()
}

fn catalog_missing(name: &str) -> AclError {
    Invalid::Missing { noun: Noun::Catalog, name: name.to_string() }.into()
}

pub(super) fn create_schema(
    p: &mut Policy,
    (catalog, schema): (&str, &str),
    target: &(String, String),
    comment: &Option<String>,
    mode: CreateMode,
) -> Result<String> {
    let status = format!("CREATE VIRTUAL SCHEMA {}", shown(catalog, schema));
    let cat = p.catalogs.get_mut(catalog).ok_or_else(|| catalog_missing(catalog))?;
    if cat.expansions.contains_key(schema) || cat.objects.keys().any(|(s, _)| s == schema) {
        return Err(Invalid::SchemaHoldsObjects { name: format!("{catalog}.{schema}") }.into());
    }
    let exists = cat.schemas.contains_key(schema);
    match (exists, mode) {
        (true, CreateMode::Create) => {
            Err(Invalid::Exists { noun: Noun::Schema, name: format!("{catalog}.{schema}") }.into())
        }
        (true, CreateMode::IfNotExists) => Ok(status + SKIPPED_EXISTS),
        _ => {
            // Replacing the target keeps the grants on the name, as for a virtual table.
            let vs = VirtualSchema { db: target.0.clone(), schema: target.1.clone(), comment: comment.clone() };
            cat.schemas.insert(schema.to_string(), vs);
            Ok(if exists { status + REPLACED } else { status })
        }
    }
}

pub(super) fn drop_schema(p: &mut Policy, catalog: &str, schema: &str, if_exists: bool, cascade: bool) -> Result<String> {
    let status = format!("DROP VIRTUAL SCHEMA {}", shown(catalog, schema));
    let removed = p.catalogs.get_mut(catalog).and_then(|c| c.schemas.remove(schema));
    if removed.is_none() {
        // Not an alias: an expanded schema (its objects go with it, under CASCADE), or nothing.
        let held = p.catalogs.get(catalog).filter(|c| c.expansions.contains_key(schema)).map(|c| c.objects.keys().filter(|(s, _)| s == schema).count());
        return match held {
            Some(n) if n > 0 && !cascade => Err(Invalid::SchemaNotEmpty { name: format!("{catalog}.{schema}"), objects: n }.into()),
            Some(_) => {
                super::expand::drop(p, catalog, schema);
                forget(p, |c, s| c == catalog && s == schema);
                Ok(status)
            }
            None => missing(if_exists, status, || schema_missing(catalog, schema)),
        };
    }
    forget(p, |c, s| c == catalog && s == schema);
    Ok(status)
}

/// `GRANT SCHEMA`: on a live alias or an expanded schema. `INTO` names where the role's CREATE
/// lands, which is the alias's own physical schema (anything else is refused: an object created
/// elsewhere would not be in the schema); an expansion takes no `create`/`drop` (a principal's
/// CREATE lands only in an alias). The comment is kept with the grant.
pub(super) fn grant_schema(
    p: &mut Policy,
    (catalog, schema): (&str, &str),
    role: &str,
    caps: Caps,
    into: Option<&(String, String)>,
    comment: &Option<String>,
) -> Result<String> {
    let status = format!("GRANT SCHEMA {} TO ROLE {}", shown(catalog, schema), q(role));
    if !p.grantable_schema(catalog, schema) {
        return Err(schema_missing(catalog, schema));
    }
    let ddl = Caps::CREATE.union(Caps::DROP);
    match p.virtual_schema(catalog, schema) {
        None if caps.minus(ddl) != caps || into.is_some() => {
            return Err(Invalid::Rule("an expanded schema (FROM) takes no create, drop or INTO: a principal's CREATE lands only in a schema alias (AS)").into());
        }
        Some(vs) if into.is_some_and(|(db, s)| !db.eq_ignore_ascii_case(&vs.db) || !s.eq_ignore_ascii_case(&vs.schema)) => {
            return Err(Invalid::Rule("INTO must name the schema alias's own physical schema: a principal's CREATE in the virtual schema lands there").into());
        }
        _ => {}
    }
    let r = p.roles.get_mut(role).ok_or_else(|| role_missing(role))?;
    let key = (catalog.to_string(), schema.to_string());
    // As for catalog grants, the statement states the whole grant (its comment included).
    let previous = r.schema_grants.insert(key.clone(), caps);
    match comment {
        Some(c) => r.schema_grant_comments.insert(key, c.clone()),
        None => r.schema_grant_comments.remove(&key),
    };
    Ok(if previous.is_some() { status + REPLACED } else { status })
}

pub(super) fn revoke_schema(p: &mut Policy, catalog: &str, schema: &str, role: &str) -> Result<String> {
    let status = format!("REVOKE SCHEMA {} FROM ROLE {}", shown(catalog, schema), q(role));
    if !p.grantable_schema(catalog, schema) {
        return Err(schema_missing(catalog, schema));
    }
    let r = p.roles.get_mut(role).ok_or_else(|| role_missing(role))?;
    let key = (catalog.to_string(), schema.to_string());
    r.schema_grant_comments.remove(&key);
    Ok(match r.schema_grants.remove(&key) {
        Some(_) => status,
        None => status + " (nothing to revoke)",
    })
}

/// Drops the schema grants whose `(catalog, schema)` matches, in every role.
pub(super) fn forget(p: &mut Policy, matches: impl Fn(&str, &str) -> bool) {
    p.update_roles(|r| r.schema_grants.keys().any(|(c, s)| matches(c, s)), |r| {
        r.schema_grants.retain(|(c, s), _| !matches(c, s));
        r.schema_grant_comments.retain(|(c, s), _| !matches(c, s));
    });
}

/// A listed virtual object may not be created inside a virtual schema (it would be shadowed).
pub(super) fn refuse_object_in_schema(p: &Policy, catalog: &str, schema: &str) -> Result<()> {
    if p.virtual_schema(catalog, schema).is_some() {
        return Err(Invalid::ObjectInVirtualSchema { name: format!("{catalog}.{schema}") }.into());
    }
    Ok(())
}
