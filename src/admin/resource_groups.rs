//! Resource groups (spec 017, "Resource groups"; issue 33 item 3): `CREATE [OR REPLACE] RESOURCE
//! GROUP [IF NOT EXISTS] g [(max_sessions = N, max_result_rows = N, max_stream_bytes = N)]`,
//! `ALTER RESOURCE GROUP g SET (…)`, `DROP RESOURCE GROUP [IF EXISTS] g`, `GRANT RESOURCE GROUP g
//! TO ROLE r`, `REVOKE RESOURCE GROUP g FROM ROLE r`. A limit of 0 or NULL is no limit (as
//! `acl_max_sessions = 0`). Sessions take their limits from their roles' groups when they open
//! (`engine::sessions`), the most generous winning.
use super::parse::P;
use super::{Command, CreateMode};
use crate::error::{AclError, Duplicate, Invalid, Noun, Result};
use crate::policy::{Policy, ResourceGroup};
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::Token;

/// One resource-group statement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GroupCommand {
    Create { name: String, limits: Vec<(String, Option<u64>)>, mode: CreateMode },
    /// `ALTER RESOURCE GROUP g SET (…)`: the limits named change, the others stay.
    Alter { name: String, limits: Vec<(String, Option<u64>)> },
    Drop { name: String, if_exists: bool },
    Grant { group: String, role: String },
    Revoke { group: String, role: String },
}

impl GroupCommand {
    /// The role whose sessions' limits the statement changes (GRANT/REVOKE), for the scope's
    /// no-self-grant rule.
    pub fn role(&self) -> Option<&str> {
        match self {
            GroupCommand::Grant { role, .. } | GroupCommand::Revoke { role, .. } => Some(role),
            _ => None,
        }
    }

    /// The group whose limits the statement changes (ALTER, CREATE OR REPLACE, DROP): no
    /// principal changes a group that applies to a role it holds (`scope::check`). A plain
    /// CREATE or IF NOT EXISTS of an existing group changes nothing (refused, or left as is).
    pub fn capacity_of(&self) -> Option<&str> {
        match self {
            GroupCommand::Alter { name, .. } | GroupCommand::Drop { name, .. } => Some(name),
            GroupCommand::Create { name, mode: CreateMode::OrReplace, .. } => Some(name),
            _ => None,
        }
    }

    pub fn verb(&self) -> &'static str {
        match self {
            GroupCommand::Create { .. } => "CREATE RESOURCE GROUP",
            GroupCommand::Alter { .. } => "ALTER RESOURCE GROUP",
            GroupCommand::Drop { .. } => "DROP RESOURCE GROUP",
            GroupCommand::Grant { .. } => "GRANT RESOURCE GROUP",
            GroupCommand::Revoke { .. } => "REVOKE RESOURCE GROUP",
        }
    }
}

impl P<'_> {
    /// After `RESOURCE`: `GROUP` and the group's name.
    fn group_name(&mut self) -> Result<String> {
        self.expect_kw(Keyword::GROUP, "GROUP after RESOURCE")?;
        self.one_part("a resource group name")
    }

    /// Whether `RESOURCE` comes next (consumed).
    pub(super) fn resource(&mut self) -> bool {
        self.word("resource")
    }

    /// `CREATE [OR REPLACE] RESOURCE GROUP …`, after `RESOURCE`.
    pub(super) fn create_resource_group(&mut self, or_replace: bool) -> Result<Command> {
        self.expect_kw(Keyword::GROUP, "GROUP after RESOURCE")?;
        let mode = self.create_mode(or_replace)?;
        let name = self.one_part("a resource group name")?;
        let limits = if self.p.peek_token_ref().token == Token::LParen { self.limits()? } else { Vec::new() };
        Ok(Command::ResourceGroup(GroupCommand::Create { name, limits, mode }))
    }

    pub(super) fn alter_resource_group(&mut self) -> Result<Command> {
        let name = self.group_name()?;
        self.expect_kw(Keyword::SET, "SET")?;
        let limits = self.limits()?;
        Ok(Command::ResourceGroup(GroupCommand::Alter { name, limits }))
    }

    pub(super) fn drop_resource_group(&mut self) -> Result<Command> {
        self.expect_kw(Keyword::GROUP, "GROUP after RESOURCE")?;
        let if_exists = self.if_exists();
        let name = self.one_part("a resource group name")?;
        Ok(Command::ResourceGroup(GroupCommand::Drop { name, if_exists }))
    }

    /// `GRANT|REVOKE RESOURCE GROUP g TO|FROM ROLE r`, after `RESOURCE`.
    pub(super) fn grant_resource_group(&mut self, grant: bool) -> Result<Command> {
        let group = self.group_name()?;
        Ok(Command::ResourceGroup(if grant {
            GroupCommand::Grant { group, role: self.role_after(Keyword::TO, "TO")? }
        } else {
            GroupCommand::Revoke { group, role: self.role_after(Keyword::FROM, "FROM")? }
        }))
    }

    /// `(name = N | NULL, …)`: each limit at most once, a whole number.
    fn limits(&mut self) -> Result<Vec<(String, Option<u64>)>> {
        if !self.p.consume_token(&Token::LParen) {
            return self.err("'(' and the group's limits");
        }
        let mut out: Vec<(String, Option<u64>)> = Vec::new();
        loop {
            let name = match &self.p.peek_token_ref().token {
                Token::Word(w) => w.value.to_ascii_lowercase(),
                _ => return self.err("max_sessions, max_result_rows or max_stream_bytes"),
            };
            if !ResourceGroup::LIMITS.contains(&name.as_str()) {
                return self.err("max_sessions, max_result_rows or max_stream_bytes");
            }
            self.p.next_token();
            if out.iter().any(|(n, _)| *n == name) {
                return Err(Invalid::Duplicate(Duplicate::Limit(name)).into());
            }
            if !self.p.consume_token(&Token::Eq) {
                return self.err("'=' after the limit's name");
            }
            let value = match self.p.next_token().token {
                Token::Number(n, _) => match n.parse::<u64>() {
                    Ok(v) => (v != 0).then_some(v),
                    Err(_) => return Err(Invalid::Rule("a resource group's limit is a whole number from 0 (no limit) up, or NULL").into()),
                },
                Token::Word(w) if w.keyword == Keyword::NULL => None,
                _ => return Err(Invalid::Rule("a resource group's limit is a whole number from 0 (no limit) up, or NULL").into()),
            };
            out.push((name, value));
            if self.p.consume_token(&Token::RParen) {
                return Ok(out);
            }
            if !self.p.consume_token(&Token::Comma) {
                return self.err("',' or ')'");
            }
        }
    }
}

fn missing(name: &str) -> AclError {
    Invalid::Missing { noun: Noun::ResourceGroup, name: name.to_string() }.into()
}

fn set(g: &mut ResourceGroup, limits: &[(String, Option<u64>)]) {
    for (name, value) in limits {
        if let Some(slot) = g.limit_mut(name) {
            *slot = *value;
        }
    }
}

/// Applies `cmd` to `p`; the status line.
pub(super) fn apply(p: &mut Policy, cmd: &GroupCommand) -> Result<String> {
    let q = |s: &str| format!("\"{}\"", s.replace('"', "\"\""));
    match cmd {
        GroupCommand::Create { name, limits, mode } => {
            let exists = p.resource_groups.contains_key(name);
            match (exists, mode) {
                (true, CreateMode::Create) => Err(Invalid::Exists { noun: Noun::ResourceGroup, name: name.clone() }.into()),
                (true, CreateMode::IfNotExists) => Ok(format!("CREATE RESOURCE GROUP {} (exists)", q(name))),
                _ => {
                    let mut g = ResourceGroup::default();
                    set(&mut g, limits);
                    p.resource_groups.insert(name.clone(), g);
                    Ok(format!("CREATE RESOURCE GROUP {}{}", q(name), if exists { " (replaced)" } else { "" }))
                }
            }
        }
        GroupCommand::Alter { name, limits } => {
            let g = p.resource_groups.get_mut(name).ok_or_else(|| missing(name))?;
            set(g, limits);
            Ok(format!("ALTER RESOURCE GROUP {}", q(name)))
        }
        GroupCommand::Drop { name, if_exists } => {
            if p.resource_groups.remove(name).is_none() {
                return if *if_exists { Ok(format!("DROP RESOURCE GROUP {} (did not exist)", q(name))) } else { Err(missing(name)) };
            }
            // Its grants go with it: a role's sessions open under its other groups only.
            p.update_roles(|r| r.resource_groups.contains(name), |r| {
                r.resource_groups.remove(name);
            });
            Ok(format!("DROP RESOURCE GROUP {}", q(name)))
        }
        GroupCommand::Grant { group, role } => {
            if !p.resource_groups.contains_key(group) {
                return Err(missing(group));
            }
            let r = p.roles.get_mut(role).ok_or_else(|| super::apply::role_missing(role))?;
            let new = r.resource_groups.insert(group.clone());
            Ok(format!("GRANT RESOURCE GROUP {} TO ROLE {}{}", q(group), q(role), if new { "" } else { " (already granted)" }))
        }
        GroupCommand::Revoke { group, role } => {
            if !p.resource_groups.contains_key(group) {
                return Err(missing(group));
            }
            let r = p.roles.get_mut(role).ok_or_else(|| super::apply::role_missing(role))?;
            let had = r.resource_groups.remove(group);
            Ok(format!("REVOKE RESOURCE GROUP {} FROM ROLE {}{}", q(group), q(role), if had { "" } else { " (nothing to revoke)" }))
        }
    }
}

/// The limits a session of a principal holding `roles` opens under: its groups (by name) and, per
/// limit, the most generous value (`None`, no limit, beats any number). A principal in no group
/// has no group limits.
pub fn resolve<'a>(p: &Policy, roles: impl IntoIterator<Item = &'a str>) -> Vec<(String, ResourceGroup)> {
    let mut names = std::collections::BTreeSet::new();
    for role in roles {
        if let Some(r) = p.roles.get(role) {
            names.extend(r.resource_groups.iter().cloned());
        }
    }
    names.into_iter().filter_map(|n| p.resource_groups.get(&n).map(|g| (n, g.clone()))).collect()
}

/// The most generous of `groups`' values of one limit: `None` (no limit) when any group has
/// none, or when there are no groups.
pub fn most_generous(groups: &[(String, ResourceGroup)], limit: impl Fn(&ResourceGroup) -> Option<u64>) -> Option<u64> {
    let mut best = Some(0);
    for (_, g) in groups {
        best = match (best, limit(g)) {
            (Some(a), Some(b)) => Some(a.max(b)),
            _ => None,
        };
    }
    if groups.is_empty() { None } else { best }
}

#[cfg(test)]
#[path = "resource_groups_tests.rs"]
mod tests;
