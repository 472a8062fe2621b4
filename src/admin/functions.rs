//! Function management (surface §2, §6): function categories, function grants and denies, and
//! virtual functions. Parsed with sqlparser's parser helpers like the rest of `admin`.
//!
//! ```text
//! CREATE [OR REPLACE] FUNCTION CATEGORY [IF NOT EXISTS] n
//! DROP FUNCTION CATEGORY [IF EXISTS] n
//! ALTER FUNCTION CATEGORY n ADD|DROP (fn, …)          -- fn = name | db.schema.name
//! GRANT|DENY FUNCTION [CATEGORY] x TO ROLE r | TO ALL ROLES
//! REVOKE FUNCTION [CATEGORY] x FROM ROLE r | FROM ALL ROLES
//! CREATE [OR REPLACE] VIRTUAL TABLE FUNCTION|SCALAR [IF NOT EXISTS] c.[s.]f(p TYPE, …)
//!     AS <select | expr using acl_arg(n)> | ALIAS OF fn  [COMMENT '…']
//! DROP VIRTUAL TABLE FUNCTION|SCALAR [IF EXISTS] c.[s.]f
//! ```
use super::apply::{missing, q, role_missing, SKIPPED_EXISTS};
use super::parse::P;
use super::{Command, CreateMode};
use crate::error::{AclError, Invalid, Management, Noun, Result};
use crate::policy::functions::{
    Access, Class, FnBody, FnCategory, FnKind, FnName, FnTarget, Grantee, VirtualFunction, SYSTEM_DB,
};
use crate::policy::categories::never_callable;
use crate::policy::{norm, ObjKey, Policy};
use sqlparser::ast::ObjectName;
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::Token;
use std::sync::Arc;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FnCommand {
    CreateCategory { name: String, mode: CreateMode },
    DropCategory { name: String, if_exists: bool },
    AlterCategory { name: String, add: bool, functions: Vec<FnName> },
    Grant { access: Access, target: FnTarget, grantee: Grantee },
    Revoke { target: FnTarget, grantee: Grantee },
    CreateVirtual { key: ObjKey, kind: FnKind, function: VirtualFunction, mode: CreateMode },
    DropVirtual { key: ObjKey, kind: FnKind, if_exists: bool },
}

fn kind_sql(kind: FnKind) -> &'static str {
    match kind {
        FnKind::Scalar => "SCALAR",
        FnKind::Table => "TABLE FUNCTION",
    }
}

impl P<'_> {
    /// After `CREATE [OR REPLACE]`, at `FUNCTION CATEGORY`.
    pub(super) fn create_function_category(&mut self, or_replace: bool) -> Result<Command> {
        self.function_category_words()?;
        let mode = self.create_mode(or_replace)?;
        let name = self.one_part("a category name")?;
        Ok(Command::Function(FnCommand::CreateCategory { name, mode }))
    }

    /// After `DROP`, at `FUNCTION CATEGORY`.
    pub(super) fn drop_function_category(&mut self) -> Result<Command> {
        self.function_category_words()?;
        let if_exists = self.if_exists();
        let name = self.one_part("a category name")?;
        Ok(Command::Function(FnCommand::DropCategory { name, if_exists }))
    }

    /// After `ALTER`.
    pub(super) fn alter_function_category(&mut self) -> Result<Command> {
        self.function_category_words()?;
        let name = self.one_part("a category name")?;
        let add = if self.kw(Keyword::ADD) {
            true
        } else if self.kw(Keyword::DROP) {
            false
        } else {
            return self.err("ADD or DROP");
        };
        if !self.p.consume_token(&Token::LParen) {
            return self.err("'(' and a list of functions");
        }
        let mut functions = Vec::new();
        loop {
            functions.push(self.function_name()?);
            if !self.p.consume_token(&Token::Comma) {
                break;
            }
        }
        if !self.p.consume_token(&Token::RParen) {
            return self.err("',' or ')'");
        }
        Ok(Command::Function(FnCommand::AlterCategory { name, add, functions }))
    }

    fn function_category_words(&mut self) -> Result<()> {
        self.expect_kw(Keyword::FUNCTION, "FUNCTION")?;
        if !self.word("category") {
            return self.err("CATEGORY");
        }
        Ok(())
    }

    /// After `GRANT` / `DENY` / `REVOKE`, at `FUNCTION`. `access: None` is REVOKE.
    pub(super) fn function_grant(&mut self, access: Option<Access>) -> Result<Command> {
        self.expect_kw(Keyword::FUNCTION, "FUNCTION")?;
        let target = if self.word("category") {
            FnTarget::Category(self.one_part("a category name")?)
        } else {
            FnTarget::Function(self.function_name()?)
        };
        let (to, what) = if access.is_some() { (Keyword::TO, "TO") } else { (Keyword::FROM, "FROM") };
        self.expect_kw(to, what)?;
        let grantee = if self.kw(Keyword::ALL) {
            if !self.word("roles") {
                return self.err("ROLES after ALL");
            }
            Grantee::AllRoles
        } else {
            self.expect_kw(Keyword::ROLE, "ROLE or ALL ROLES")?;
            Grantee::Role(self.one_part("a role name")?)
        };
        Ok(Command::Function(match access {
            Some(access) => FnCommand::Grant { access, target, grantee },
            None => FnCommand::Revoke { target, grantee },
        }))
    }

    /// `name` or `db.schema.name`.
    pub(super) fn function_name(&mut self) -> Result<FnName> {
        let parts: Vec<String> = self.name("a function name")?.iter().map(|i| norm(&i.value)).collect();
        match parts.as_slice() {
            [n] => Ok(FnName { qualifier: None, name: n.clone() }),
            [d, s, n] => Ok(FnName { qualifier: Some((d.clone(), s.clone())), name: n.clone() }),
            _ => Err(Invalid::Rule("a function is named as name or db.schema.name").into()),
        }
    }

    /// After `DROP VIRTUAL` and `TABLE FUNCTION` or `SCALAR`.
    pub(super) fn drop_virtual_function(&mut self, kind: FnKind) -> Result<Command> {
        let if_exists = self.if_exists();
        let key = self.virtual_name()?;
        Ok(Command::Function(FnCommand::DropVirtual { key, kind, if_exists }))
    }

    pub(super) fn syntax_err(&self, expected: &str) -> AclError {
        match self.err::<()>(expected) {
            Err(e) => e,
            Ok(()) => Management::Bare.into(),
        }
    }
}

/// Applies a function command. Validation first, so a failure changes nothing.
pub(super) fn apply(p: &mut Policy, cmd: &FnCommand) -> Result<String> {
    match cmd {
        FnCommand::CreateCategory { name, mode } => {
            let status = format!("CREATE FUNCTION CATEGORY {}", q(name));
            let existing = p.functions.categories.get(name);
            match (existing, mode) {
                (Some(c), _) if c.shipped.is_some() && *mode != CreateMode::IfNotExists => {
                    Err(Invalid::Shipped { name: name.clone(), dropped: false }.into())
                }
                (Some(_), CreateMode::Create) => {
                    Err(Invalid::Exists { noun: Noun::Category, name: name.clone() }.into())
                }
                (Some(_), CreateMode::IfNotExists) => Ok(status + SKIPPED_EXISTS),
                (existing, _) => {
                    let replaced = existing.is_some();
                    p.functions.categories.insert(name.clone(), FnCategory::default());
                    Ok(if replaced { status + " (replaced)" } else { status })
                }
            }
        }
        FnCommand::DropCategory { name, if_exists } => {
            let status = format!("DROP FUNCTION CATEGORY {}", q(name));
            match p.functions.categories.get(name) {
                None => missing(*if_exists, status, || category_missing(name)),
                Some(c) if c.shipped.is_some() => {
                    Err(Invalid::Shipped { name: name.clone(), dropped: true }.into())
                }
                Some(_) => {
                    p.functions.categories.remove(name);
                    let t = FnTarget::Category(name.clone());
                    p.functions.all_roles.remove(&t);
                    for g in p.functions.role_grants.values_mut() {
                        g.remove(&t);
                    }
                    Ok(status)
                }
            }
        }
        FnCommand::AlterCategory { name, add, functions } => {
            for f in functions {
                check_function(p, f)?;
            }
            let c = p.functions.categories.get_mut(name).ok_or_else(|| category_missing(name))?;
            for f in functions {
                if *add {
                    c.dropped.remove(f);
                    c.added.insert(f.clone());
                } else {
                    c.added.remove(f);
                    if c.shipped.is_some() {
                        c.dropped.insert(f.clone());
                    }
                }
            }
            let list: Vec<String> = functions.iter().map(ToString::to_string).collect();
            let verb = if *add { "ADD" } else { "DROP" };
            Ok(format!("ALTER FUNCTION CATEGORY {} {verb} ({})", q(name), list.join(", ")))
        }
        FnCommand::Grant { access, target, grantee } => {
            check_target(p, target)?;
            check_grantee(p, grantee)?;
            let verb = if *access == Access::Grant { "GRANT" } else { "DENY" };
            let status = format!("{verb} FUNCTION {} TO {grantee}", target_sql(target));
            let previous = p.functions.grants_mut(grantee).insert(target.clone(), *access);
            Ok(if previous.is_some() { status + " (replaced)" } else { status })
        }
        FnCommand::Revoke { target, grantee } => {
            check_target(p, target)?;
            check_grantee(p, grantee)?;
            let status = format!("REVOKE FUNCTION {} FROM {grantee}", target_sql(target));
            let removed = p.functions.grants_mut(grantee).remove(target);
            if let Grantee::Role(r) = grantee {
                if p.functions.role_grants.get(r).is_some_and(|g| g.is_empty()) {
                    p.functions.role_grants.remove(r);
                }
            }
            Ok(if removed.is_some() { status } else { status + " (nothing to revoke)" })
        }
        FnCommand::CreateVirtual { key, kind, function, mode } => create_virtual(p, key, *kind, function, *mode),
        FnCommand::DropVirtual { key, kind, if_exists } => {
            let status = format!("DROP VIRTUAL {} {}", kind_sql(*kind), show_key(key));
            if !p.catalogs.contains_key(&key.catalog) {
                return missing(*if_exists, status, || catalog_missing(&key.catalog));
            }
            let vkey = (key.catalog.clone(), key.schema.clone(), key.name.clone(), *kind);
            if p.functions.virtuals.remove(&vkey).is_none() {
                return missing(*if_exists, status, || {
                    Invalid::Missing { noun: kind_word(*kind), name: key.to_string() }.into()
                });
            }
            // Object grants name the key; keep them while a table or the other kind still uses it.
            if p.relation(key).is_none() && !has_function(p, key) {
                p.update_roles(|r| r.object_grants.contains_key(key), |r| {
                    r.object_grants.remove(key);
                });
            }
            Ok(status)
        }
    }
}

fn create_virtual(p: &mut Policy, key: &ObjKey, kind: FnKind, f: &VirtualFunction, mode: CreateMode) -> Result<String> {
    let status = format!("CREATE VIRTUAL {} {}", kind_sql(kind), show_key(key));
    if !p.catalogs.contains_key(&key.catalog) {
        return Err(catalog_missing(&key.catalog));
    }
    let mut f = f.clone();
    if let FnBody::Alias(name) = &*f.body {
        let target = qualify_alias(p, name, kind)?;
        f.body = Arc::new(match &f.params {
            None => FnBody::Alias(target),
            Some(ps) => super::virtual_fns::alias_body(&target, kind, ps.len())?,
        });
    }
    let vkey = (key.catalog.clone(), key.schema.clone(), key.name.clone(), kind);
    let exists = p.functions.virtuals.contains_key(&vkey);
    match (exists, mode) {
        (true, CreateMode::Create) => {
            Err(Invalid::Exists { noun: kind_word(kind), name: key.to_string() }.into())
        }
        (true, CreateMode::IfNotExists) => Ok(status + SKIPPED_EXISTS),
        _ => {
            p.functions.virtuals.insert(vkey, f);
            Ok(if exists { status + " (replaced)" } else { status })
        }
    }
}

/// `ALIAS OF name`: the target, qualified to its key, so the alias cannot be captured either.
fn qualify_alias(p: &Policy, name: &ObjectName, kind: FnKind) -> Result<ObjectName> {
    let parts: Vec<String> = name
        .0
        .iter()
        .map(|x| match x {
            sqlparser::ast::ObjectNamePart::Identifier(i) => norm(&i.value),
            _ => String::new(),
        })
        .collect();
    let last = parts.last().cloned().unwrap_or_default();
    if never_callable(&last) {
        return Err(Invalid::NeverCallable { name: last, alias: true }.into());
    }
    if parts.len() == 3 {
        return Ok(name.clone());
    }
    match p.functions.host.resolve(&last, kind) {
        Some(f) if f.class != Class::Never => Ok(crate::sqltext::quoted_name(&[&f.key.db, &f.key.schema, &f.key.name])),
        Some(_) => Err(Invalid::NeverCallable { name: last, alias: true }.into()),
        None => Err(Invalid::NotBuiltinOfKind { name: last, kind: kind.sql() }.into()),
    }
}

fn check_function(p: &Policy, f: &FnName) -> Result<()> {
    if never_callable(&f.name) {
        return Err(Invalid::NeverCallable { name: f.name.clone(), alias: false }.into());
    }
    if f.qualifier.is_none() && p.functions.host.named(&f.name).all(|h| h.key.db != SYSTEM_DB) {
        return Err(Invalid::NotBuiltin { name: f.name.clone() }.into());
    }
    Ok(())
}

fn check_target(p: &Policy, t: &FnTarget) -> Result<()> {
    match t {
        FnTarget::Category(c) if !p.functions.categories.contains_key(c) => Err(category_missing(c)),
        FnTarget::Category(_) => Ok(()),
        FnTarget::Function(f) => check_function(p, f),
    }
}

fn check_grantee(p: &Policy, g: &Grantee) -> Result<()> {
    match g {
        Grantee::Role(r) if !p.roles.contains_key(r) => Err(role_missing(r)),
        _ => Ok(()),
    }
}

fn target_sql(t: &FnTarget) -> String {
    match t {
        FnTarget::Category(c) => format!("CATEGORY {}", q(c)),
        FnTarget::Function(f) => f.to_string(),
    }
}

fn show_key(k: &ObjKey) -> String {
    k.to_string()
}

fn kind_word(kind: FnKind) -> Noun {
    match kind {
        FnKind::Scalar => Noun::ScalarFunction,
        FnKind::Table => Noun::TableFunction,
    }
}

fn category_missing(name: &str) -> AclError {
    Invalid::Missing { noun: Noun::Category, name: name.to_string() }.into()
}

fn catalog_missing(name: &str) -> AclError {
    Invalid::Missing { noun: Noun::Catalog, name: name.to_string() }.into()
}

/// Is there a virtual function (either kind) under this key?
pub(super) fn has_function(p: &Policy, key: &ObjKey) -> bool {
    [FnKind::Scalar, FnKind::Table]
        .into_iter()
        .any(|k| p.functions.virtuals.contains_key(&(key.catalog.clone(), key.schema.clone(), key.name.clone(), k)))
}

/// A dropped or replaced role loses its function grants.
pub(super) fn forget_role(p: &mut Policy, role: &str) {
    p.functions.role_grants.remove(role);
}

/// A dropped or replaced catalog loses its virtual functions.
pub(super) fn forget_catalog(p: &mut Policy, catalog: &str) -> usize {
    let before = p.functions.virtuals.len();
    p.functions.virtuals.retain(|(c, ..), _| c != catalog);
    before - p.functions.virtuals.len()
}

/// How many virtual functions a catalog holds (DROP … needs CASCADE when it has any).
pub(super) fn functions_in(p: &Policy, catalog: &str) -> usize {
    p.functions.virtuals.keys().filter(|(c, ..)| c == catalog).count()
}

#[cfg(test)]
mod tests {
    use super::super::is_management;

    #[test]
    fn function_statements_are_routed_and_macros_are_not() {
        for s in [
            "DENY FUNCTION read_csv TO ALL ROLES",
            "ALTER FUNCTION CATEGORY c ADD (lower)",
            "CREATE FUNCTION CATEGORY c",
            "create or replace function category c",
            "DROP FUNCTION CATEGORY c",
            "GRANT FUNCTION CATEGORY readers TO ROLE r",
            "CREATE VIRTUAL SCALAR c.f(x INT) AS acl_arg(1)",
            "DROP VIRTUAL TABLE FUNCTION c.f",
        ] {
            assert!(is_management(s), "{s}");
        }
        for s in ["CREATE FUNCTION f(x) AS x", "CREATE OR REPLACE FUNCTION f(x) AS x", "DROP FUNCTION f", "ALTER TABLE t ADD x INT"] {
            assert!(!is_management(s), "{s}");
        }
    }
}
