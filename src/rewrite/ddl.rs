//! Rule: DDL under a principal (spec 005) — where CREATE/DROP TABLE|VIEW land and what they need.
//!
//! - A temporary table or view (`CREATE TEMP …`, or a name `temp.t`) needs `temp` on any catalog
//!   grant and lands in DuckDB's `temp.main` under a name mangled per principal
//!   (`__acl_<digest of roles and claims>_t`): temp objects belong to a connection, which several
//!   principals may share, and one principal must never name another's.
//! - Anything else lands in a virtual schema (a live alias of a physical schema) and needs
//!   `create` (`drop` for DROP; both for OR REPLACE) on the principal's schema grant.
//!
//! Only the plain forms are admitted: a CREATE TABLE with any clause beyond columns, constraints
//! (no foreign keys) and AS SELECT is refused, so nothing names a table outside the decision.
use super::relations::parts;
use crate::authz::View;
use crate::error::{AclError, LacksCapability, NotGranted, On, Result, Unresolved, Unsupported};
use crate::policy::{Caps, ObjKey, PhysName, DEFAULT_SCHEMA};
use sqlparser::ast::helpers::stmt_create_table::CreateTableBuilder;
use sqlparser::ast::{ColumnOption, CreateTable, CreateView, DataType, ObjectName, ObjectType, TableConstraint};

/// The catalog name that always means the principal's own temporary objects.
pub(super) const TEMP: &str = "temp";

/// Where a name a statement creates, drops or reads lands.
pub(super) struct Placed {
    pub phys: PhysName,
    pub key: ObjKey,
}

/// The principal's temporary table a name denotes, if it denotes one: `temp.t`, `temp.main.t`,
/// or a bare `t` that is no virtual object, when the principal holds `temp`. Without `temp` the
/// name is left to the ordinary resolution (and its ordinary refusal).
pub(super) fn temp_table(view: &View<'_>, p: &[String]) -> Result<Option<Placed>> {
    if !view.holds_anywhere(Caps::TEMP) {
        return Ok(None);
    }
    let name = match p {
        [c, t] if c == TEMP => t,
        [c, s, t] if c == TEMP && s == DEFAULT_SCHEMA => t,
        [t] if view.lookup(p)?.is_none() => t,
        _ => return Ok(None),
    };
    Ok(Some(temp_place(view, name)))
}

fn temp_place(view: &View<'_>, name: &str) -> Placed {
    Placed {
        phys: PhysName { db: TEMP.into(), schema: DEFAULT_SCHEMA.into(), name: format!("{}{name}", view.temp_prefix()) },
        key: ObjKey { catalog: TEMP.into(), schema: DEFAULT_SCHEMA.into(), name: name.to_string() },
    }
}

fn require_temp(view: &View<'_>) -> Result<()> {
    if view.holds_anywhere(Caps::TEMP) {
        Ok(())
    } else {
        Err(LacksCapability { principal: view.label.to_string(), capabilities: Caps::TEMP.names(), on: On::TempTables }.into())
    }
}

/// The name of a temporary object being created: `t`, `temp.t` or `temp.main.t`.
fn temp_for_create(view: &View<'_>, p: &[String]) -> Result<Placed> {
    require_temp(view)?;
    match p {
        [t] => Ok(temp_place(view, t)),
        [c, t] if c == TEMP => Ok(temp_place(view, t)),
        [c, s, t] if c == TEMP && s == DEFAULT_SCHEMA => Ok(temp_place(view, t)),
        _ => Err(Unsupported::TempTableName.into()),
    }
}

/// Is the name written into the `temp` catalog (`temp.t`, `temp.main.t`)?
fn names_temp(p: &[String]) -> bool {
    p.len() > 1 && p[0] == TEMP
}

/// The virtual schema a name lands in, checked for `needed` on the principal's schema grant.
fn in_schema(view: &View<'_>, p: &[String], needed: Caps) -> Result<Placed> {
    let mut homes: Vec<ObjKey> = view
        .candidates(p)
        .into_iter()
        .filter(|k| view.policy.virtual_schema(&k.catalog, &k.schema).is_some())
        .filter(|k| view.schema_caps(&k.catalog, &k.schema).is_some())
        .collect();
    let key = match homes.len() {
        1 => homes.pop().expect("one"),
        0 if p.len() == 1 || view.sees_catalog(&p[0]) => {
            return Err(NotGranted::Schema { name: p.join("."), principal: view.label.to_string() }.into())
        }
        0 => return Err(view.not_found(p)),
        _ => {
            return Err(Unresolved::AmbiguousName { name: p.join(".") }.into())
        }
    };
    let caps = view.schema_caps(&key.catalog, &key.schema).unwrap_or(Caps::NONE);
    if !caps.contains(needed) {
        return Err(LacksCapability {
            principal: view.label.to_string(),
            capabilities: needed.minus(caps).names(),
            on: On::Schema(format!("{}.{}", key.catalog, key.schema)),
        }
        .into());
    }
    let vs = view.policy.virtual_schema(&key.catalog, &key.schema).expect("filtered above");
    Ok(Placed { phys: PhysName { db: vs.db.clone(), schema: vs.schema.clone(), name: key.name.clone() }, key })
}

/// What creating needs: `create`, and `drop` too when OR REPLACE may drop an existing object.
fn create_caps(or_replace: bool) -> Caps {
    if or_replace {
        Caps::CREATE.union(Caps::DROP)
    } else {
        Caps::CREATE
    }
}

fn place_create(view: &View<'_>, name: &ObjectName, temporary: &mut bool, or_replace: bool) -> Result<Placed> {
    let p = parts(name)?;
    if *temporary || names_temp(&p) {
        *temporary = true;
        temp_for_create(view, &p)
    } else {
        in_schema(view, &p, create_caps(or_replace))
    }
}

/// `CREATE [OR REPLACE] [TEMP] TABLE [IF NOT EXISTS] name (cols) | AS SELECT …`.
pub(super) fn create_table(view: &View<'_>, ct: &mut CreateTable) -> Result<Placed> {
    check_table_form(ct)?;
    place_create(view, &ct.name, &mut ct.temporary, ct.or_replace)
}

/// `CREATE [OR REPLACE] [TEMP] VIEW [IF NOT EXISTS] name [(cols)] AS SELECT …`.
pub(super) fn create_view(view: &View<'_>, cv: &mut CreateView) -> Result<Placed> {
    check_view_form(cv)?;
    place_create(view, &cv.name, &mut cv.temporary, cv.or_replace)
}

/// Is the view being created temporary (`CREATE TEMP VIEW`, or a name in `temp`)? Refuses an
/// unsupported form or a place the principal may not create in before the body is judged (the
/// name is placed for good by `relations`).
pub(super) fn view_is_temporary(view: &View<'_>, cv: &CreateView) -> Result<bool> {
    check_view_form(cv)?;
    let mut temporary = cv.temporary;
    place_create(view, &cv.name, &mut temporary, cv.or_replace)?;
    Ok(temporary)
}

fn check_view_form(cv: &CreateView) -> Result<()> {
    let plain = !cv.or_alter
        && !cv.materialized
        && !cv.secure
        && cv.columns.iter().all(|c| c.data_type.is_none() && c.options.is_none())
        && matches!(cv.options, sqlparser::ast::CreateTableOptions::None)
        && cv.cluster_by.is_empty()
        && cv.comment.is_none()
        && !cv.with_no_schema_binding
        && !cv.copy_grants
        && cv.to.is_none()
        && cv.params.is_none();
    if !plain {
        return Err(Unsupported::CreateView.into());
    }
    Ok(())
}

/// `DROP TABLE|VIEW [IF EXISTS] name, …` (no CASCADE: it would drop what depends on the object).
pub(super) fn drop(view: &View<'_>, object_type: &ObjectType, names: &[ObjectName], plain: bool) -> Result<Vec<Placed>> {
    if !matches!(object_type, ObjectType::Table | ObjectType::View) || !plain {
        return Err(Unsupported::Drop.into());
    }
    names
        .iter()
        .map(|n| {
            let p = parts(n)?;
            match temp_table(view, &p)? {
                Some(t) => Ok(t),
                None => in_schema(view, &p, Caps::DROP),
            }
        })
        .collect()
}

/// Only columns, constraints and AS SELECT: rebuilt from those alone, the statement must come out
/// the same, so any other clause (LIKE, CLONE, options, …) is refused without being listed here.
fn check_table_form(ct: &CreateTable) -> Result<()> {
    let unsupported = || AclError::from(Unsupported::CreateTable);
    let rebuilt = CreateTableBuilder::new(ct.name.clone())
        .or_replace(ct.or_replace)
        .temporary(ct.temporary)
        .if_not_exists(ct.if_not_exists)
        .columns(ct.columns.clone())
        .constraints(ct.constraints.clone())
        .query(ct.query.clone())
        .build();
    if rebuilt != *ct {
        return Err(unsupported());
    }
    for c in &ct.columns {
        // A qualified type name reaches into some database's catalog.
        if matches!(&c.data_type, DataType::Custom(name, _) if name.0.len() > 1) {
            return Err(Unsupported::QualifiedColumnType.into());
        }
        for o in &c.options {
            match o.option {
                ColumnOption::Null
                | ColumnOption::NotNull
                | ColumnOption::Default(_)
                | ColumnOption::PrimaryKey(_)
                | ColumnOption::Unique(_)
                | ColumnOption::Check(_) => {}
                _ => return Err(Unsupported::ColumnOption.into()),
            }
        }
    }
    for t in &ct.constraints {
        match t {
            TableConstraint::PrimaryKey(_) | TableConstraint::Unique(_) | TableConstraint::Check(_) => {}
            _ => return Err(Unsupported::TableConstraint.into()),
        }
    }
    Ok(())
}
