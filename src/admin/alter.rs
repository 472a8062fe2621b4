//! `ALTER` statements that change one field of a record (`ALTER VIRTUAL TABLE|VIEW … SET`,
//! `ALTER GRANT … SET`, `ALTER ISSUER … SET`) are applied as the whole statement they amount to:
//! `resolve` reads the record from the policy and returns the CREATE OR REPLACE / GRANT that
//! states it with the field changed. So an ALTER goes through exactly the checks of its modern
//! twin (sources, masks, keys, binding in `validate`) and no second code path exists per spelling.
//! Comments (`COMMENT ON VIRTUAL …`, `ALTER VIRTUAL CATALOG c SET COMMENT`) and role claims
//! change their field in place: re-creating a catalog or a role would empty it.
use super::apply::{q, role_missing};
use super::{Command, CommentOn, CreateMode, GrantOn, GrantSet, ObjectWord, TableSet};
use crate::error::{AclError, Invalid, Noun, Result};
use crate::policy::{Policy, RelationKind};
use std::borrow::Cow;

/// `cmd` as the statement that states its whole record; any other command as it is.
pub fn resolve<'c>(p: &Policy, cmd: &'c Command) -> Result<Cow<'c, Command>> {
    Ok(Cow::Owned(match cmd {
        Command::AlterTable { key, set } => {
            let rel = p.relation(key).ok_or_else(|| missing_object(key, Noun::Table))?;
            let RelationKind::Table(target) = &rel.kind else { return Err(missing_object(key, Noun::Table)) };
            let (mut target, mut slice, mut declared) = (target.clone(), rel.slice.clone(), rel.declared.clone());
            match set {
                TableSet::Phys(t) => target = t.clone(),
                TableSet::Columns { columns, not_null } => {
                    slice.columns = columns.clone();
                    declared.not_null = not_null.clone();
                }
                TableSet::Rls(r) => slice.rls = r.clone(),
                TableSet::PrimaryKey(k) => declared.primary_key = k.clone(),
            }
            let listed = slice.columns.as_ref().map(|c| c.iter().map(|c| c.name.as_str()).collect());
            super::objects::check_declared(key, listed, &declared)?;
            let (key, comment, mode) = (key.clone(), rel.comment.clone(), CreateMode::OrReplace);
            Command::CreateTable { key, target, comment, mode, slice, declared }
        }
        Command::AlterView { key, query } => {
            let rel = p.relation(key).ok_or_else(|| missing_object(key, Noun::View))?;
            if !matches!(rel.kind, RelationKind::View(_)) {
                return Err(missing_object(key, Noun::View));
            }
            let (key, query, comment, declared) = (key.clone(), query.clone(), rel.comment.clone(), rel.declared.clone());
            Command::CreateView { key, query, comment, mode: CreateMode::OrReplace, declared }
        }
        Command::AlterTypes { key, word, enums } => {
            let noun = match word {
                ObjectWord::View => Noun::View,
                _ => Noun::Table,
            };
            let rel = p.relation(key).ok_or_else(|| missing_object(key, noun))?;
            let (key, comment, mode) = (key.clone(), rel.comment.clone(), CreateMode::OrReplace);
            let declared = crate::policy::Declared { enums: *enums, ..rel.declared.clone() };
            match (&rel.kind, word) {
                (RelationKind::Table(target), ObjectWord::Table | ObjectWord::Object) => {
                    Command::CreateTable { key, target: target.clone(), comment, mode, slice: rel.slice.clone(), declared }
                }
                (RelationKind::View(query), ObjectWord::View | ObjectWord::Object) => {
                    Command::CreateView { key, query: query.clone(), comment, mode, declared }
                }
                _ => return Err(missing_object(&key, noun)),
            }
        }
        Command::AlterGrant { on, role, set } => {
            let r = p.roles.get(role).ok_or_else(|| role_missing(role))?;
            let grant_missing = || AclError::from(Invalid::Missing { noun: Noun::Grant, name: grant_name(on, role) });
            match on {
                GrantOn::Catalog(catalog) => {
                    let g = r.catalog_grants.get(catalog).ok_or_else(grant_missing)?;
                    let (mut caps, mut main, mut slice) = (g.caps, g.main, g.slice.clone());
                    match set {
                        GrantSet::Caps(c) => caps = *c,
                        GrantSet::Rls(x) => slice.rls = x.clone(),
                        GrantSet::Columns(c) => slice.columns = c.clone(),
                        GrantSet::Main(m) => main = *m,
                    }
                    Command::GrantCatalog { catalog: catalog.clone(), role: role.clone(), caps, main, slice }
                }
                GrantOn::Object { key, word } => {
                    let g = r.object_grants.get(key).ok_or_else(grant_missing)?;
                    let (mut caps, mut slice) = (g.caps, g.slice.clone());
                    match set {
                        GrantSet::Caps(c) => caps = Some(*c),
                        GrantSet::Rls(x) => slice.rls = x.clone(),
                        GrantSet::Columns(c) => slice.columns = c.clone(),
                        GrantSet::Main(_) => return Err(crate::error::Management::MainOutsideCatalogGrant.into()),
                    }
                    Command::GrantObject { key: key.clone(), role: role.clone(), caps, word: *word, slice }
                }
            }
        }
        Command::AlterIssuer { iss, set } => {
            let issuer = p.issuers.get(iss).ok_or_else(|| super::issuer::issuer_missing(iss))?;
            let mut spec = super::issuer::spec_of(issuer);
            super::issuer::set_field(&mut spec, set.clone());
            Command::CreateIssuer { spec, mode: CreateMode::OrReplace }
        }
        _ => return Ok(Cow::Borrowed(cmd)),
    }))
}

/// The status line of an ALTER (what `apply` reports instead of its twin's).
pub(super) fn status(cmd: &Command) -> Option<String> {
    Some(match cmd {
        Command::AlterTable { key, set } => {
            let what = match set {
                TableSet::Phys(_) => "SET PHYS",
                TableSet::Columns { .. } => "SET COLUMNS",
                TableSet::Rls(_) => "SET RLS",
                TableSet::PrimaryKey(k) if k.is_empty() => "DROP PRIMARY KEY",
                TableSet::PrimaryKey(_) => "SET PRIMARY KEY",
            };
            format!("ALTER VIRTUAL TABLE {key} {what}")
        }
        Command::AlterView { key, .. } => format!("ALTER VIRTUAL VIEW {key} SET AS"),
        Command::AlterTypes { key, word, .. } => format!("ALTER VIRTUAL {} {key} SET TYPES", word.sql()),
        Command::AlterGrant { on, role, set } => {
            let what = match set {
                GrantSet::Caps(_) => "CAPS",
                GrantSet::Rls(_) => "RLS",
                GrantSet::Columns(_) => "COLUMNS",
                GrantSet::Main(_) => "MAIN",
            };
            format!("ALTER GRANT {} SET {what}", grant_name(on, role))
        }
        Command::AlterIssuer { iss, .. } => format!("ALTER ISSUER {}", crate::sqltext::literal(iss)),
        _ => return None,
    })
}

fn grant_name(on: &GrantOn, role: &str) -> String {
    match on {
        GrantOn::Catalog(c) => format!("CATALOG {} TO ROLE {}", q(c), q(role)),
        GrantOn::Object { key, word } => format!("{} {key} TO ROLE {}", word.sql(), q(role)),
    }
}

fn missing_object(key: &crate::policy::ObjKey, noun: Noun) -> AclError {
    Invalid::Missing { noun, name: key.to_string() }.into()
}

/// `COMMENT ON VIRTUAL … IS '…' | NULL` and `ALTER VIRTUAL CATALOG c SET COMMENT '…'`.
pub(super) fn comment(p: &mut Policy, on: &CommentOn, text: &Option<String>) -> Result<String> {
    let missing = |noun: Noun, name: String| AclError::from(Invalid::Missing { noun, name });
    let status = match on {
        CommentOn::Catalog(c) => {
            let cat = p.catalogs.get_mut(c).ok_or_else(|| missing(Noun::Catalog, c.clone()))?;
            cat.comment = text.clone();
            format!("COMMENT ON VIRTUAL CATALOG {}", q(c))
        }
        CommentOn::Schema(c, s) => {
            let vs = p
                .catalogs
                .get_mut(c)
                .and_then(|cat| match cat.schemas.get_mut(s) {
                    Some(vs) => Some(vs),
                    None => cat.expansions.get_mut(s),
                })
                .ok_or_else(|| missing(Noun::Schema, format!("{c}.{s}")))?;
            vs.comment = text.clone();
            format!("COMMENT ON VIRTUAL SCHEMA {}.{}", q(c), q(s))
        }
        CommentOn::Object { key, word } => {
            let rel = relation_mut(p, key, *word)?;
            rel.comment = text.clone();
            format!("COMMENT ON VIRTUAL {} {key}", word.sql())
        }
        CommentOn::Column { key, word, column } => {
            let rel = relation_mut(p, key, *word)?;
            if lists_column(rel, column) == Some(false) {
                return Err(Invalid::NotAColumn { column: column.clone(), object: key.to_string() }.into());
            }
            match text {
                Some(t) => rel.declared.column_comments.insert(column.clone(), t.clone()),
                None => rel.declared.column_comments.remove(column),
            };
            format!("COMMENT ON VIRTUAL {} {key} COLUMN {}", word.sql(), q(column))
        }
        CommentOn::Function { key, kind } => {
            let vkey = (key.catalog.clone(), key.schema.clone(), key.name.clone(), *kind);
            let noun = match kind {
                crate::policy::functions::FnKind::Scalar => Noun::ScalarFunction,
                crate::policy::functions::FnKind::Table => Noun::TableFunction,
            };
            let f = p.functions.virtuals.get_mut(&vkey).ok_or_else(|| missing(noun, key.to_string()))?;
            f.comment = text.clone();
            let word = match kind {
                crate::policy::functions::FnKind::Scalar => "SCALAR",
                crate::policy::functions::FnKind::Table => "TABLE FUNCTION",
            };
            format!("COMMENT ON VIRTUAL {word} {key}")
        }
    };
    Ok(status)
}

/// Does the object show `column`? `None`: it does not list its columns (RENAME form, a view
/// without declared columns), so only binding can tell (`validate`).
pub(super) fn lists_column(rel: &crate::policy::Relation, column: &str) -> Option<bool> {
    match (&rel.slice.columns, &rel.declared.types) {
        (Some(c), _) => Some(c.iter().any(|c| c.name == column)),
        (None, Some(t)) => Some(t.iter().any(|(n, _)| n == column)),
        (None, None) => None,
    }
}

/// A virtual table or view for a comment. As in GRANT, TABLE, VIEW and OBJECT name any relation.
fn relation_mut<'p>(p: &'p mut Policy, key: &crate::policy::ObjKey, word: ObjectWord) -> Result<&'p mut crate::policy::Relation> {
    let noun = match word {
        ObjectWord::View => Noun::View,
        _ => Noun::Table,
    };
    p.catalogs
        .get_mut(&key.catalog)
        .and_then(|c| c.objects.get_mut(&(key.schema.clone(), key.name.clone())))
        .ok_or_else(|| Invalid::Missing { noun, name: key.to_string() }.into())
}
