//! Expanded virtual schemas (`CREATE VIRTUAL SCHEMA c.s FROM db.schema`, spec 007 "Expanded
//! schemas"): one listed virtual table per table and view the source holds when the statement
//! runs, each an ordinary object afterwards (grants, RLS, columns, comments as for any other).
//! The policy keeps the source (`Catalog::expansions`) so that `ALTER VIRTUAL SCHEMA … REFRESH`
//! can list it again: new objects are added, objects already listed are left as they are (an
//! operator's changes survive), and `PRUNE` drops the objects whose source object is gone.
//!
//! Applying stays pure: the engine lists the source from the host (`objects`) before it applies.
use super::apply::{drop_object, q, SKIPPED_EXISTS};
use super::{CreateMode, Expansion};
use crate::error::{AclError, Invalid, Noun, Result};
use crate::policy::{norm, Catalog, ObjKey, PhysName, Policy, Relation, RelationKind, VirtualSchema};

const REPLACED: &str = " (replaced)";

fn shown(catalog: &str, schema: &str) -> String {
    format!("{}.{}", q(catalog), q(schema))
}

/// DuckDB's names are case-insensitive: a source object is in `source` whatever its spelling.
fn in_source(phys: &PhysName, source: &VirtualSchema) -> bool {
    phys.db.eq_ignore_ascii_case(&source.db) && phys.schema.eq_ignore_ascii_case(&source.schema)
}

fn missing(catalog: &str, schema: &str) -> AclError {
    Invalid::Missing { noun: Noun::Schema, name: format!("{catalog}.{schema}") }.into()
}

fn catalog<'a>(p: &'a mut Policy, name: &str) -> Result<&'a mut Catalog> {
    p.catalogs.get_mut(name).ok_or_else(|| Invalid::Missing { noun: Noun::Catalog, name: name.to_string() }.into())
}

/// `CREATE … FROM` or `REFRESH`, with the source's object names as the engine listed them.
pub(super) fn apply(p: &mut Policy, (c, s): (&str, &str), how: &Expansion, objects: Option<&[String]>) -> Result<String> {
    // Parsed but never listed: a bug upstream, refused rather than expanded into nothing.
    let objects = objects.ok_or(AclError::internal("an expansion that was not listed"))?;
    match how {
        Expansion::Create { source, comment, mode } => create(p, (c, s), source, comment, *mode, objects),
        Expansion::Refresh { prune } => {
            let status = format!("ALTER VIRTUAL SCHEMA {} REFRESH{}", shown(c, s), if *prune { " PRUNE" } else { "" });
            let cat = catalog(p, c)?;
            if cat.schemas.contains_key(s) {
                return Err(Invalid::NotExpanded { name: format!("{c}.{s}") }.into());
            }
            let source = cat.expansions.get(s).cloned().ok_or_else(|| missing(c, s))?;
            let (added, dropped) = sync(p, (c, s), &source, &source, objects, *prune);
            Ok(format!("{status} ({added} added, {dropped} dropped)"))
        }
    }
}

fn create(
    p: &mut Policy,
    (c, s): (&str, &str),
    (db, schema): &(String, String),
    comment: &Option<String>,
    mode: CreateMode,
    objects: &[String],
) -> Result<String> {
    let status = format!("CREATE VIRTUAL SCHEMA {}", shown(c, s));
    let cat = catalog(p, c)?;
    let exists = cat.schemas.contains_key(s) || cat.expansions.contains_key(s);
    match (exists, mode) {
        (true, CreateMode::Create) => return Err(Invalid::Exists { noun: Noun::Schema, name: format!("{c}.{s}") }.into()),
        (true, CreateMode::IfNotExists) => return Ok(status + SKIPPED_EXISTS),
        (false, _) if cat.objects.keys().any(|(schema, _)| schema == s) => {
            return Err(Invalid::SchemaHoldsObjects { name: format!("{c}.{s}") }.into());
        }
        _ => {}
    }
    if objects.is_empty() {
        return Err(Invalid::EmptySource { name: format!("{db}.{schema}") }.into());
    }
    let next = VirtualSchema { db: db.clone(), schema: schema.clone(), comment: comment.clone() };
    // OR REPLACE over an alias: the alias and its schema grants go (they reached every name).
    if cat.schemas.remove(s).is_some() {
        super::schemas::forget(p, |gc, gs| gc == c && gs == s);
    }
    let cat = catalog(p, c)?;
    // OR REPLACE over an expansion: a new source; the objects that came from the old one are
    // pointed at the new one where it holds the same name (their grants and slices kept), and
    // dropped where it does not.
    let previous = cat.expansions.insert(s.to_string(), next.clone());
    sync(p, (c, s), previous.as_ref().unwrap_or(&next), &next, objects, true);
    Ok(if exists { status + REPLACED } else { status })
}

/// Makes schema `c.s` hold an object for each of `objects` (names in `to`): an object that came
/// from `from` is re-pointed to `to` if `to` lists its name, else dropped when `prune`; a name not
/// yet in the schema gets a new object. Returns (added, dropped).
fn sync(p: &mut Policy, (c, s): (&str, &str), from: &VirtualSchema, to: &VirtualSchema, objects: &[String], prune: bool) -> (usize, usize) {
    let listed: std::collections::BTreeMap<String, &String> = objects.iter().map(|n| (norm(n), n)).collect();
    let mut gone = Vec::new();
    let Some(cat) = p.catalogs.get_mut(c) else { return (0, 0) };
    for ((schema, name), rel) in cat.objects.iter_mut().filter(|((schema, _), _)| schema == s) {
        let RelationKind::Table(phys) = &mut rel.kind else { continue };
        if !in_source(phys, from) {
            continue;
        }
        match listed.get(&norm(&phys.name)) {
            Some(spelled) => *phys = PhysName { db: to.db.clone(), schema: to.schema.clone(), name: (*spelled).clone() },
            None if prune => gone.push(ObjKey { catalog: c.to_string(), schema: schema.clone(), name: name.clone() }),
            None => {}
        }
    }
    let mut added = 0;
    for (name, spelled) in &listed {
        let slot = (s.to_string(), name.clone());
        if cat.objects.contains_key(&slot) {
            continue;
        }
        let phys = PhysName { db: to.db.clone(), schema: to.schema.clone(), name: (*spelled).clone() };
        let rel = Relation { kind: RelationKind::Table(phys), comment: None, slice: Default::default(), declared: Default::default() };
        cat.objects.insert(slot, rel);
        added += 1;
    }
    for key in &gone {
        drop_object(p, key);
    }
    (added, gone.len())
}

/// `ALTER VIRTUAL SCHEMA c.s SET PHYS db.schema`: an alias's new target, or an expansion's new
/// source (its objects from the old source re-pointed by name; `REFRESH [PRUNE]` lists the new
/// one).
pub(super) fn set_phys(p: &mut Policy, (c, s): (&str, &str), (db, schema): &(String, String)) -> Result<String> {
    let status = format!("ALTER VIRTUAL SCHEMA {} SET PHYS", shown(c, s));
    let cat = catalog(p, c)?;
    if let Some(alias) = cat.schemas.get_mut(s) {
        alias.db = db.clone();
        alias.schema = schema.clone();
        return Ok(status);
    }
    let Some(source) = cat.expansions.get_mut(s) else { return Err(missing(c, s)) };
    let from = source.clone();
    source.db = db.clone();
    source.schema = schema.clone();
    for ((_, _), rel) in cat.objects.iter_mut().filter(|((schema, _), _)| schema == s) {
        if let RelationKind::Table(phys) = &mut rel.kind {
            if in_source(phys, &from) {
                phys.db = db.clone();
                phys.schema = schema.clone();
            }
        }
    }
    Ok(status)
}

/// `DROP VIRTUAL SCHEMA` of an expanded schema: the record and every object in the schema (with
/// their grants); never anything physical. `None` if `c.s` is no expansion.
pub(super) fn drop(p: &mut Policy, c: &str, s: &str) -> Option<()> {
    let cat = p.catalogs.get_mut(c)?;
    cat.expansions.remove(s)?;
    let keys: Vec<ObjKey> = cat
        .objects
        .keys()
        .filter(|(schema, _)| schema == s)
        .map(|(schema, name)| ObjKey { catalog: c.to_string(), schema: schema.clone(), name: name.clone() })
        .collect();
    for key in &keys {
        drop_object(p, key);
    }
    Some(())
}

#[cfg(test)]
#[path = "expand_tests.rs"]
mod tests;
