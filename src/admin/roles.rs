//! A role's default claims: `CREATE ROLE r CLAIMS (k = 'v' | number, …)`, the legacy quoted
//! `CLAIMS 'k=v,…'`, and `ALTER ROLE r SET CLAIMS (…) | '…'` (specs/003). Both spellings give the
//! same map: names lower-case, values as text.
use super::apply::{create_role, q, role_missing, SKIPPED_EXISTS};
use crate::policy::AdminScope;
use super::parse::P;
use super::{Command, CreateMode};
use crate::error::{Duplicate, Result};
use crate::policy::Policy;
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::Token;
use std::collections::BTreeMap;

impl P<'_> {
    /// `[CLAIMS (k = 'v' | number, …) | CLAIMS 'k=v,…']` after `CREATE ROLE r`.
    pub(super) fn role_claims(&mut self) -> Result<Option<BTreeMap<String, String>>> {
        if !self.word("claims") {
            return Ok(None);
        }
        self.claims_after_word().map(Some)
    }

    /// After the word `CLAIMS`.
    fn claims_after_word(&mut self) -> Result<BTreeMap<String, String>> {
        if let Some(text) = self.maybe_string() {
            return super::lists::claims_list(&text);
        }
        self.open("CLAIMS")?;
        let mut claims = BTreeMap::new();
        loop {
            let key = self.one_part("a claim name")?;
            if !self.p.consume_token(&Token::Eq) {
                return self.err("'='");
            }
            let minus = self.p.consume_token(&Token::Minus);
            let value = match &self.p.peek_token_ref().token {
                Token::Number(n, _) => format!("{}{n}", if minus { "-" } else { "" }),
                Token::SingleQuotedString(s) | Token::EscapedStringLiteral(s) if !minus => s.clone(),
                Token::DollarQuotedString(d) if !minus => d.value.clone(),
                _ => return self.err("a string or a number"),
            };
            self.p.next_token();
            if claims.insert(key.clone(), value).is_some() {
                return Err(Duplicate::Claim(key).into());
            }
            if !self.more()? {
                break;
            }
        }
        Ok(claims)
    }

    /// After `CREATE [OR REPLACE] ROLE`. Claims that say nothing (`CLAIMS ''`) are a plain role.
    pub(super) fn create_role_statement(&mut self, or_replace: bool) -> Result<Command> {
        let mode = self.create_mode(or_replace)?;
        let name = self.one_part("a role name")?;
        match self.role_claims()? {
            Some(claims) if !claims.is_empty() => Ok(Command::CreateRoleWithClaims { name, mode, claims }),
            _ => Ok(Command::CreateRole { name, mode }),
        }
    }

    /// After `ALTER ROLE`: `r SET CLAIMS (…) | '…'`.
    pub(super) fn alter_role(&mut self) -> Result<Command> {
        let name = self.one_part("a role name")?;
        self.expect_kw(Keyword::SET, "SET")?;
        if !self.word("claims") {
            return self.err("CLAIMS after SET");
        }
        let claims = self.claims_after_word()?;
        Ok(Command::AlterRoleClaims { name, claims })
    }
}

pub(super) fn create_role_with_claims(
    p: &mut Policy,
    name: &str,
    mode: CreateMode,
    claims: &BTreeMap<String, String>,
) -> Result<String> {
    let status = create_role(p, name, mode)?;
    if !status.ends_with(SKIPPED_EXISTS) {
        if let Some(r) = p.roles.get_mut(name) {
            r.claims = claims.clone();
        }
    }
    Ok(status)
}

/// `ALTER ROLE r SET CLAIMS …`: the defaults replaced whole; grants and mappings stay.
pub(super) fn alter_role_claims(p: &mut Policy, name: &str, claims: &BTreeMap<String, String>) -> Result<String> {
    let r = p.roles.get_mut(name).ok_or_else(|| role_missing(name))?;
    r.claims = claims.clone();
    Ok(format!("ALTER ROLE {} SET CLAIMS", q(name)))
}

/// `GRANT ADMIN manage|passthrough TO ROLE r`: the statement states the role's whole scope, so a
/// second one replaces the first (passthrough after manage widens, manage after passthrough
/// narrows), as a second GRANT CATALOG does.
pub(super) fn grant_admin(p: &mut Policy, role: &str, scope: AdminScope) -> Result<String> {
    let status = format!("GRANT ADMIN {} TO ROLE {}", scope.name(), q(role));
    let r = p.roles.get_mut(role).ok_or_else(|| role_missing(role))?;
    Ok(match r.admin.replace(scope) {
        Some(_) => status + " (replaced)",
        None => status,
    })
}

/// `REVOKE ADMIN FROM ROLE r`.
pub(super) fn revoke_admin(p: &mut Policy, role: &str) -> Result<String> {
    let status = format!("REVOKE ADMIN FROM ROLE {}", q(role));
    let r = p.roles.get_mut(role).ok_or_else(|| role_missing(role))?;
    Ok(match r.admin.take() {
        Some(_) => status,
        None => status + " (nothing to revoke)",
    })
}
