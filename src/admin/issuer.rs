//! Token issuers and the claims that map to roles (surface §3, §5; specs/003-tokens.md):
//! `CREATE [OR REPLACE] ISSUER`, `DROP ISSUER`, `MAP CLAIM`, `UNMAP CLAIM`, and the `CLAIMS`
//! clause of `CREATE ROLE`. Parsing extends `parse::P`; applying follows `apply`'s rules.
//! Tests: src/auth/admin_tests.rs (they go on to verify tokens against what they set up).
use super::apply::{create_role, missing, q, role_missing, SKIPPED_EXISTS};
use super::parse::P;
use super::{Command, CreateMode};
use crate::error::{AclError, Duplicate, Invalid, Management, Noun, Result};
use crate::policy::{Issuer, Policy};
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::Token;
use std::collections::BTreeMap;

/// Keys files are small; anything larger is a wrong path, not a key.
const MAX_KEYS_FILE_BYTES: u64 = 1024 * 1024;

/// Where `KEYS` came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeySource {
    /// `KEYS '<PEM | JWKS | hmac:secret>'`
    Inline(String),
    /// `KEYS FROM '<path>'`, read when the statement is applied.
    File(String),
}

/// A parsed `CREATE ISSUER`; `apply` turns it into a `policy::Issuer` after checking the keys.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IssuerSpec {
    pub iss: String,
    pub keys: KeySource,
    pub audiences: Vec<String>,
    /// As written; checked (and upper-cased) at apply time.
    pub algs: Vec<String>,
    /// `None`: the default, `roles`.
    pub role_claim: Option<String>,
    /// `(token claim path, claim name)`, names lower-case.
    pub claim_map: Vec<(String, String)>,
}

impl<'a> P<'a> {
    /// Consumes an unquoted word (case-insensitive) if it is next.
    pub(super) fn word(&mut self, w: &str) -> bool {
        let yes = self.peek_word(w);
        if yes {
            self.p.next_token();
        }
        yes
    }

    fn once<T>(&self, slot: &Option<T>, clause: &'static str) -> Result<()> {
        match slot {
            Some(_) => Err(Management::Twice { clause }.into()),
            None => Ok(()),
        }
    }

    /// A string literal (quoting as in DuckDB).
    fn string(&mut self, what: &str) -> Result<String> {
        let s = match &self.p.peek_token_ref().token {
            Token::SingleQuotedString(s) | Token::EscapedStringLiteral(s) => s.clone(),
            Token::DollarQuotedString(d) => d.value.clone(),
            _ => return self.err(what),
        };
        self.p.next_token();
        Ok(s)
    }

    fn open(&mut self, after: &str) -> Result<()> {
        if !self.p.consume_token(&Token::LParen) {
            return self.err(&format!("'(' after {after}"));
        }
        Ok(())
    }

    /// After an item of a parenthesised list: `true` if another item follows.
    fn more(&mut self) -> Result<bool> {
        if self.p.consume_token(&Token::Comma) {
            return Ok(true);
        }
        if self.p.consume_token(&Token::RParen) {
            return Ok(false);
        }
        self.err("',' or ')'")
    }

    /// A claim path: non-empty segments separated by dots.
    fn path(&mut self, what: &str) -> Result<String> {
        let s = self.string(what)?;
        if s.split('.').any(str::is_empty) {
            return Err(Invalid::ClaimPath { path: s }.into());
        }
        Ok(s)
    }

    /// After `CREATE [OR REPLACE] ISSUER`.
    pub(super) fn create_issuer(&mut self, or_replace: bool) -> Result<Command> {
        let mode = self.create_mode(or_replace)?;
        let iss = self.string("the issuer as a string ('https://…')")?;
        if iss.is_empty() {
            return Err(Invalid::Rule("the issuer must not be empty").into());
        }
        self.expect_kw(Keyword::KEYS, "KEYS")?;
        let keys = if self.kw(Keyword::FROM) {
            let path = self.string("a file path after KEYS FROM")?;
            let lower = path.trim_start().to_ascii_lowercase();
            if lower.starts_with("http://") || lower.starts_with("https://") {
                return Err(Invalid::Rule("KEYS FROM a URL is not supported offline; pass the JWKS inline").into());
            }
            KeySource::File(path)
        } else {
            KeySource::Inline(self.string("the keys as a string after KEYS")?)
        };
        let (mut audiences, mut algs, mut role_claim, mut claim_map) = (None, None, None, None);
        loop {
            if self.word("audiences") {
                self.once(&audiences, "AUDIENCES")?;
                self.open("AUDIENCES")?;
                let mut v = vec![self.string("an audience string")?];
                while self.more()? {
                    v.push(self.string("an audience string")?);
                }
                audiences = Some(v);
            } else if self.word("algs") {
                self.once(&algs, "ALGS")?;
                self.open("ALGS")?;
                let mut v = Vec::new();
                loop {
                    match &self.p.peek_token_ref().token {
                        Token::Word(w) => v.push(w.value.clone()),
                        Token::SingleQuotedString(s) => v.push(s.clone()),
                        _ => return self.err("an algorithm"),
                    }
                    self.p.next_token();
                    if !self.more()? {
                        break;
                    }
                }
                algs = Some(v);
            } else if self.kw(Keyword::ROLE) {
                if !self.word("claim") {
                    return self.err("CLAIM after ROLE");
                }
                self.once(&role_claim, "ROLE CLAIM")?;
                role_claim = Some(self.path("the role claim path as a string")?);
            } else if self.word("claim") {
                self.expect_kw(Keyword::MAP, "MAP after CLAIM")?;
                self.once(&claim_map, "CLAIM MAP")?;
                self.open("CLAIM MAP")?;
                let mut v: Vec<(String, String)> = Vec::new();
                loop {
                    let path = self.path("a claim path as a string")?;
                    if !self.p.consume_token(&Token::RArrow) {
                        return self.err("'=>'");
                    }
                    let name = self.one_part("a claim name")?;
                    if v.iter().any(|(_, n)| *n == name) {
                        return Err(Duplicate::ClaimMapped(name).into());
                    }
                    v.push((path, name));
                    if !self.more()? {
                        break;
                    }
                }
                claim_map = Some(v);
            } else {
                break;
            }
        }
        let spec = IssuerSpec {
            iss,
            keys,
            audiences: audiences.unwrap_or_default(),
            algs: algs.unwrap_or_default(),
            role_claim,
            claim_map: claim_map.unwrap_or_default(),
        };
        Ok(Command::CreateIssuer { spec, mode })
    }

    /// After `DROP ISSUER`.
    pub(super) fn drop_issuer(&mut self) -> Result<Command> {
        let if_exists = self.if_exists();
        let iss = self.string("the issuer as a string")?;
        Ok(Command::DropIssuer { iss, if_exists })
    }

    /// `MAP CLAIM 'v' FROM ISSUER 'iss' TO ROLE r` / `UNMAP CLAIM 'v' FROM ISSUER 'iss' [FROM ROLE r]`.
    pub(super) fn map_claim(&mut self) -> Result<Command> {
        let map = self.word("map");
        if !map && !self.word("unmap") {
            return self.err("MAP or UNMAP");
        }
        if !self.word("claim") {
            return self.err("CLAIM");
        }
        let value = self.string("the claim value as a string")?;
        self.expect_kw(Keyword::FROM, "FROM")?;
        if !self.word("issuer") {
            return self.err("ISSUER");
        }
        let iss = self.string("the issuer as a string")?;
        let role_after = |s: &mut Self, k: Keyword, w: &str| -> Result<String> {
            s.expect_kw(k, w)?;
            s.expect_kw(Keyword::ROLE, "ROLE")?;
            s.one_part("a role name")
        };
        if map {
            let role = role_after(self, Keyword::TO, "TO")?;
            return Ok(Command::MapClaim { iss, value, role });
        }
        let role = match self.p.peek_keyword(Keyword::FROM) {
            true => Some(role_after(self, Keyword::FROM, "FROM")?),
            false => None,
        };
        Ok(Command::UnmapClaim { iss, value, role })
    }

    /// `[CLAIMS (k = 'v' | number, …)]` after `CREATE ROLE r`: keys lower-case, numbers as text.
    pub(super) fn role_claims(&mut self) -> Result<Option<BTreeMap<String, String>>> {
        if !self.word("claims") {
            return Ok(None);
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
                Token::SingleQuotedString(s) | Token::EscapedStringLiteral(s) if !minus => {
                    s.clone()
                }
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
        Ok(Some(claims))
    }
}

/// The issuer as the policy stores it, with its keys checked: an issuer that cannot verify
/// anything is refused here rather than failing every token later.
fn build_issuer(spec: &IssuerSpec) -> Result<Issuer> {
    let keys = match &spec.keys {
        KeySource::Inline(k) => k.clone(),
        KeySource::File(path) => read_keys_file(path)?,
    };
    let algs = spec
        .algs
        .iter()
        .map(|a| {
            crate::auth::keys::parse_alg(a).map(|a| crate::auth::keys::alg_name(a).to_string())
        })
        .collect::<Result<Vec<_>>>()?;
    let issuer = Issuer {
        iss: spec.iss.clone(),
        keys,
        audiences: spec.audiences.clone(),
        algs,
        role_claim: spec
            .role_claim
            .clone()
            .unwrap_or_else(|| crate::auth::DEFAULT_ROLE_CLAIM.to_string()),
        claim_map: spec.claim_map.clone(),
        keys_file: match &spec.keys {
            KeySource::Inline(_) => None,
            KeySource::File(path) => Some(path.clone()),
        },
    };
    crate::auth::IssuerKeys::parse(&issuer).map_err(|e| match e {
        AclError::Invalid(m) => Invalid::Issuer { iss: spec.iss.clone(), problem: Box::new(m) }.into(),
        other => other,
    })?;
    Ok(issuer)
}

fn read_keys_file(path: &str) -> Result<String> {
    let fail = |why: &str| AclError::from(Invalid::KeysFile { path: path.to_string(), why: why.to_string() });
    let meta = std::fs::metadata(path).map_err(|e| fail(&e.kind().to_string().to_lowercase()))?;
    if !meta.is_file() || meta.len() > MAX_KEYS_FILE_BYTES {
        return Err(fail("not a file of at most 1 MiB"));
    }
    std::fs::read_to_string(path).map_err(|e| fail(&e.kind().to_string().to_lowercase()))
}

pub(super) fn create_issuer(p: &mut Policy, spec: &IssuerSpec, mode: CreateMode) -> Result<String> {
    let status = format!("CREATE ISSUER {}", lit(&spec.iss));
    let exists = p.issuers.contains_key(&spec.iss);
    match (exists, mode) {
        (true, CreateMode::Create) => Err(Invalid::Exists { noun: Noun::Issuer, name: spec.iss.clone() }.into()),
        (true, CreateMode::IfNotExists) => Ok(status + SKIPPED_EXISTS),
        _ => {
            // Claim mappings stay on OR REPLACE: replacing is how keys are rotated.
            p.issuers.insert(spec.iss.clone(), build_issuer(spec)?);
            Ok(if exists {
                status + " (replaced)"
            } else {
                status
            })
        }
    }
}

pub(super) fn drop_issuer(p: &mut Policy, iss: &str, if_exists: bool) -> Result<String> {
    let status = format!("DROP ISSUER {}", lit(iss));
    if p.issuers.remove(iss).is_none() {
        return missing(if_exists, status, || issuer_missing(iss));
    }
    p.claim_roles.retain(|(i, _), _| i != iss);
    Ok(status)
}

pub(super) fn map_claim(p: &mut Policy, iss: &str, value: &str, role: &str) -> Result<String> {
    let status = format!(
        "MAP CLAIM {} FROM ISSUER {} TO ROLE {}",
        lit(value),
        lit(iss),
        q(role)
    );
    check_issuer_and_role(p, iss, Some(role))?;
    let roles = p
        .claim_roles
        .entry((iss.to_string(), value.to_string()))
        .or_default();
    if roles.iter().any(|r| r == role) {
        return Ok(status + " (already mapped)");
    }
    roles.push(role.to_string());
    roles.sort();
    Ok(status)
}

pub(super) fn unmap_claim(
    p: &mut Policy,
    iss: &str,
    value: &str,
    role: Option<&str>,
) -> Result<String> {
    let mut status = format!("UNMAP CLAIM {} FROM ISSUER {}", lit(value), lit(iss));
    if let Some(r) = role {
        status += &format!(" FROM ROLE {}", q(r));
    }
    check_issuer_and_role(p, iss, role)?;
    let slot = (iss.to_string(), value.to_string());
    let Some(roles) = p.claim_roles.get_mut(&slot) else {
        return Ok(status + " (nothing to unmap)");
    };
    let before = roles.len();
    match role {
        Some(r) => roles.retain(|x| x != r),
        None => roles.clear(),
    }
    let removed = roles.len() < before;
    if roles.is_empty() {
        p.claim_roles.remove(&slot);
    }
    Ok(if removed {
        status
    } else {
        status + " (nothing to unmap)"
    })
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

/// `DROP ROLE` forgets the role's claim mappings, so a later role of the same name does not
/// silently inherit them.
pub(super) fn forget_role(p: &mut Policy, role: &str) {
    p.claim_roles.retain(|_, roles| {
        roles.retain(|r| r != role);
        !roles.is_empty()
    });
}

fn check_issuer_and_role(p: &Policy, iss: &str, role: Option<&str>) -> Result<()> {
    if !p.issuers.contains_key(iss) {
        return Err(issuer_missing(iss));
    }
    match role {
        Some(r) if !p.roles.contains_key(r) => Err(role_missing(r)),
        _ => Ok(()),
    }
}

fn issuer_missing(iss: &str) -> AclError {
    Invalid::Missing { noun: Noun::Issuer, name: iss.to_string() }.into()
}

/// A string for a status line, as an SQL literal.
fn lit(s: &str) -> String {
    crate::sqltext::literal(s)
}

#[cfg(test)]
#[path = "issuer_tests.rs"]
mod tests;
