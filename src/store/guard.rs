//! The store's own tables are never a physical source (spec 006, "Security"): no virtual table,
//! view, schema or function body may name them, so no grant can hand a principal the policy.
//! Checked for each management command before it is applied, and for a whole policy when a
//! store comes into use (the memory policy about to be written, or the one the store holds).
//!
//! A body's table name is judged by every table it could denote: `c.s.t` is the store when `c`,
//! `s` are the store's catalog and schema; `a.t` may be `a.main.t` or `<default catalog>.a.t`,
//! so it is refused when `a` is the store's schema (or its catalog, for a store in `main`); a
//! one-part `t` may reach the store through a search path, so it is refused when `t` is one of the
//! store's table names. A store without a DuckDB catalog (PostgreSQL) is out of DuckDB's reach.
use crate::sqltext::Walk as _;
use super::layout::{META, TABLES};
use super::Location;
use crate::admin::functions::FnCommand;
use crate::admin::{Command, TableSet};
use crate::error::{AclError, Invalid, Result};
use crate::policy::functions::FnBody;
use crate::policy::{norm, Policy, RelationKind};
use sqlparser::ast::{ObjectName, ObjectNamePart, TableFactor, Visit, Visitor};
use std::ops::ControlFlow;

struct Guard<'a> {
    catalog: String,
    schema: String,
    shown: &'a str,
}

impl Guard<'_> {
    fn new<'a>(loc: &Location, shown: &'a str) -> Option<Guard<'a>> {
        Some(Guard { catalog: norm(loc.catalog.as_ref()?), schema: norm(&loc.schema), shown })
    }

    fn refuse(&self, name: &str) -> AclError {
        Invalid::StoreSource { name: name.to_string(), store: self.shown.to_string() }.into()
    }

    /// A physical schema `db.schema` (a table in it, or a virtual schema over it).
    fn schema(&self, db: &str, schema: &str) -> bool {
        norm(db) == self.catalog && norm(schema) == self.schema
    }

    /// A table name in a body, by the parts written.
    fn may_name_store(&self, parts: &[String]) -> bool {
        match parts {
            [db, schema, _] => self.schema(db, schema),
            [a, _] => *a == self.schema || (*a == self.catalog && self.schema == crate::policy::DEFAULT_SCHEMA),
            [t] => t == META.name || TABLES.iter().any(|x| x.name == t),
            _ => true,
        }
    }

    fn body<T: Visit + ?Sized>(&self, body: &T) -> Result<()> {
        struct Names<'g, 'a> {
            guard: &'g Guard<'a>,
            found: Option<String>,
        }
        impl Visitor for Names<'_, '_> {
            type Break = ();
            fn pre_visit_table_factor(&mut self, tf: &TableFactor) -> ControlFlow<()> {
                if let TableFactor::Table { name, args: None, .. } = tf {
                    let parts = parts(name);
                    if self.guard.may_name_store(&parts) {
                        self.found = Some(parts.join("."));
                        return ControlFlow::Break(());
                    }
                }
                ControlFlow::Continue(())
            }
        }
        let mut v = Names { guard: self, found: None };
        let _ = body.walk(&mut v);
        v.found.map_or(Ok(()), |n| Err(self.refuse(&n)))
    }

    fn view(&self, query: &str) -> Result<()> {
        let dialect = sqlparser::dialect::DuckDbDialect {};
        // A view's query was parsed when it was created; one that no longer parses names nothing
        // we could check, so it is refused rather than let through.
        let q = sqlparser::parser::Parser::new(&dialect)
            .try_with_sql(query)
            .and_then(|mut p| p.parse_query())
            .map_err(|_| self.refuse("a view's query"))?;
        self.body(&*q)
    }

    fn function(&self, body: &FnBody) -> Result<()> {
        match body {
            FnBody::Expr(e) => self.body(e),
            FnBody::Query(q) => self.body(&**q),
            FnBody::Alias(_) => Ok(()),
        }
    }
}

fn parts(name: &ObjectName) -> Vec<String> {
    name.0
        .iter()
        .map(|p| match p {
            ObjectNamePart::Identifier(i) => norm(&i.value),
            _ => String::new(),
        })
        .collect()
}

/// Refuses a command that would map the store's tables (`shown` names the store in the error).
pub fn check_command(loc: &Location, shown: &str, cmd: &Command) -> Result<()> {
    let Some(g) = Guard::new(loc, shown) else { return Ok(()) };
    // Every command is listed: a new one must say whether it names a physical source.
    match cmd {
        Command::CreateTable { target, .. } => {
            if g.schema(&target.db, &target.schema) {
                return Err(g.refuse(&format!("{}.{}.{}", target.db, target.schema, target.name)));
            }
            Ok(())
        }
        Command::CreateView { query, .. } | Command::AlterView { query, .. } => g.view(query),
        Command::AlterTable { set: TableSet::Phys(p), .. } => {
            if g.schema(&p.db, &p.schema) {
                return Err(g.refuse(&format!("{}.{}.{}", p.db, p.schema, p.name)));
            }
            Ok(())
        }
        Command::AlterTable { set: TableSet::Columns { .. } | TableSet::Rls(_) | TableSet::PrimaryKey(_), .. }
        | Command::AlterTypes { .. }
        | Command::Comment { .. }
        | Command::CreateReference { .. }
        | Command::DropReference { .. }
        | Command::AlterGrant { .. }
        | Command::AlterRoleClaims { .. }
        | Command::AlterIssuer { .. } => Ok(()),
        Command::CreateSchema { target: (db, schema), .. }
        | Command::AlterSchemaPhys { target: (db, schema), .. }
        | Command::ExpandSchema { how: crate::admin::Expansion::Create { source: (db, schema), .. }, .. } => {
            if g.schema(db, schema) {
                return Err(g.refuse(&format!("{db}.{schema}")));
            }
            Ok(())
        }
        Command::SetSources { sources, .. } => {
            match sources.iter().find(|s| s.schema.as_deref().is_some_and(|schema| g.schema(&s.db, schema))) {
                Some(s) => Err(g.refuse(&s.to_string())),
                None => Ok(()),
            }
        }
        Command::Function(FnCommand::CreateVirtual { function, .. }) => g.function(&function.body),
        Command::Function(
            FnCommand::CreateCategory { .. }
            | FnCommand::DropCategory { .. }
            | FnCommand::AlterCategory { .. }
            | FnCommand::Grant { .. }
            | FnCommand::Revoke { .. }
            | FnCommand::DropVirtual { .. },
        )
        | Command::CreateCatalog { .. }
        | Command::DropCatalog { .. }
        | Command::DropTable { .. }
        | Command::DropView { .. }
        | Command::CreateRole { .. }
        | Command::DropRole { .. }
        | Command::GrantCatalog { .. }
        | Command::GrantObject { .. }
        | Command::RevokeCatalog { .. }
        | Command::RevokeObject { .. }
        | Command::CreateRoleWithClaims { .. }
        | Command::CreateIssuer { .. }
        | Command::DropIssuer { .. }
        | Command::MapClaim { .. }
        | Command::UnmapClaim { .. }
        // Lists the source the policy already holds (checked when it got there).
        | Command::ExpandSchema { how: crate::admin::Expansion::Refresh { .. }, .. }
        | Command::DropSchema { .. }
        | Command::GrantSchema { .. }
        | Command::RevokeSchema { .. }
        | Command::GrantAdmin { .. }
        | Command::RevokeAdmin { .. }
        | Command::ResourceGroup(_)
        | Command::CheckCatalog { .. } => Ok(()),
    }
}

/// Refuses a policy any of whose sources is, or may be, the store.
pub fn check_policy(loc: &Location, shown: &str, p: &Policy) -> Result<()> {
    let Some(g) = Guard::new(loc, shown) else { return Ok(()) };
    for cat in p.catalogs.values() {
        for rel in cat.objects.values() {
            match &rel.kind {
                RelationKind::Table(t) if g.schema(&t.db, &t.schema) => {
                    return Err(g.refuse(&format!("{}.{}.{}", t.db, t.schema, t.name)));
                }
                RelationKind::Table(_) => {}
                RelationKind::View(q) => g.view(q)?,
            }
        }
        for vs in cat.schemas.values().chain(cat.expansions.values()) {
            if g.schema(&vs.db, &vs.schema) {
                return Err(g.refuse(&format!("{}.{}", vs.db, vs.schema)));
            }
        }
    }
    for f in p.functions.virtuals.values() {
        g.function(&f.body)?;
    }
    Ok(())
}
