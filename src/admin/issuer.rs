//! Token issuers and the claims that map to roles (surface §3, §5; specs/003-tokens.md):
//! `CREATE [OR REPLACE] ISSUER`, `ALTER ISSUER … SET`, `DROP ISSUER`, `MAP CLAIM|GROUP`, `UNMAP
//! CLAIM` and `DROP MAP CLAIM|GROUP`. Parsing extends `parse::P`; applying follows `apply`'s rules.
//! Tests: src/admin/issuer_tests.rs (they go on to verify tokens against what they set up).
use super::apply::{missing, q, role_missing, SKIPPED_EXISTS};
use super::parse::P;
use super::{Command, CreateMode, IssuerSet};
use crate::error::{AclError, Duplicate, Invalid, Management, Noun, Result};
use crate::policy::{Issuer, Policy, Unmapped};
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::Token;

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
    /// `UNMAPPED IGNORE|COUNT` (default: count).
    pub unmapped: Unmapped,
}

impl<'a> P<'a> {
    /// A claim path: non-empty segments separated by dots.
    fn path(&mut self, what: &str) -> Result<String> {
        let s = self.string(what)?;
        if s.split('.').any(str::is_empty) {
            return Err(Invalid::ClaimPath { path: s }.into());
        }
        Ok(s)
    }

    /// After `CREATE [OR REPLACE] ISSUER`: `'<iss>' KEYS … [clauses in any order]`.
    pub(super) fn create_issuer(&mut self, or_replace: bool) -> Result<Command> {
        let mode = self.create_mode(or_replace)?;
        let iss = self.string("the issuer as a string ('https://…')")?;
        if iss.is_empty() {
            return Err(Invalid::Rule("the issuer must not be empty").into());
        }
        let Some(IssuerSet::Keys(keys)) = self.issuer_field(true)? else { return self.err("KEYS") };
        let mut spec = IssuerSpec {
            iss,
            keys,
            audiences: Vec::new(),
            algs: Vec::new(),
            role_claim: None,
            claim_map: Vec::new(),
            unmapped: Unmapped::default(),
        };
        let mut given: Vec<&'static str> = Vec::new();
        while let Some(set) = self.issuer_field(false)? {
            let clause = field_name(&set);
            if given.contains(&clause) {
                return Err(Management::Twice { clause }.into());
            }
            given.push(clause);
            set_field(&mut spec, set);
        }
        Ok(Command::CreateIssuer { spec, mode })
    }

    /// After `ALTER ISSUER`: `'<iss>' SET <clause>` (one clause, any of CREATE ISSUER's).
    pub(super) fn alter_issuer(&mut self) -> Result<Command> {
        let iss = self.string("the issuer as a string")?;
        self.expect_kw(Keyword::SET, "SET")?;
        match self.issuer_field(true)? {
            Some(set) => Ok(Command::AlterIssuer { iss, set }),
            None => self.err("KEYS, AUDIENCES, ALGS, ROLE CLAIM, CLAIM MAP or UNMAPPED after SET"),
        }
    }

    /// One clause of an issuer, if one is next: `KEYS '…' | KEYS FROM '…'` (only where `keys`),
    /// `AUDIENCES (…) | '…'`, `ALGS (…) | '…'`, `ROLE CLAIM '…'`, `CLAIM MAP (…)`, `UNMAPPED
    /// IGNORE|COUNT`. The quoted lists are the legacy comma-separated form.
    fn issuer_field(&mut self, keys: bool) -> Result<Option<IssuerSet>> {
        if self.kw(Keyword::KEYS) {
            if !keys {
                return Err(Management::Twice { clause: "KEYS" }.into());
            }
            return Ok(Some(IssuerSet::Keys(if self.kw(Keyword::FROM) {
                let path = self.string("a file path after KEYS FROM")?;
                check_keys_path(&path)?;
                KeySource::File(path)
            } else {
                KeySource::Inline(self.string("the keys as a string after KEYS")?)
            })));
        }
        if self.word("audiences") {
            let v = match self.maybe_string() {
                Some(text) => split_list(&text),
                None => {
                    self.open("AUDIENCES")?;
                    let mut v = vec![self.string("an audience string")?];
                    while self.more()? {
                        v.push(self.string("an audience string")?);
                    }
                    v
                }
            };
            return Ok(Some(IssuerSet::Audiences(v)));
        }
        if self.word("algs") {
            let v = match self.maybe_string() {
                Some(text) => split_list(&text),
                None => {
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
                    v
                }
            };
            return Ok(Some(IssuerSet::Algs(v)));
        }
        if self.kw(Keyword::ROLE) {
            if !self.word("claim") {
                return self.err("CLAIM after ROLE");
            }
            return Ok(Some(IssuerSet::RoleClaim(self.path("the role claim path as a string")?)));
        }
        if self.word("claim") {
            self.expect_kw(Keyword::MAP, "MAP after CLAIM")?;
            // The reference system's `CLAIM MAP '{"jwt.path": "claim", …}'`.
            if let Some(text) = self.maybe_string() {
                return Ok(Some(IssuerSet::ClaimMap(claim_map_json(&text)?)));
            }
            self.open("CLAIM MAP")?;
            let mut v: Vec<(String, String)> = Vec::new();
            loop {
                // `'a.b' => c`, or unquoted `a.b => c`.
                let path = match self.p.peek_token_ref().token {
                    Token::Word(_) => self.name("a claim path")?.iter().map(|i| i.value.as_str()).collect::<Vec<_>>().join("."),
                    _ => self.path("a claim path")?,
                };
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
            return Ok(Some(IssuerSet::ClaimMap(v)));
        }
        if self.word("unmapped") {
            let u = if self.kw(Keyword::IGNORE) || self.word("ignore") {
                Unmapped::Ignore
            } else if self.word("count") {
                Unmapped::Count
            } else {
                return self.err("IGNORE or COUNT after UNMAPPED");
            };
            return Ok(Some(IssuerSet::Unmapped(u)));
        }
        Ok(None)
    }

    /// After `DROP MAP`: `CLAIM|GROUP 'v' FROM ISSUER 'iss' [TO ROLE r]` — the value's mapping
    /// to that role, or to every role.
    pub(super) fn drop_map(&mut self) -> Result<Command> {
        if !self.word("claim") && !self.word("group") {
            return self.err("CLAIM or GROUP");
        }
        let value = self.string("the claim value as a string")?;
        self.expect_kw(Keyword::FROM, "FROM")?;
        if !self.word("issuer") {
            return self.err("ISSUER");
        }
        let iss = self.string("the issuer as a string")?;
        let role = match self.kw(Keyword::TO) {
            true => {
                self.expect_kw(Keyword::ROLE, "ROLE")?;
                Some(self.one_part("a role name")?)
            }
            false => None,
        };
        Ok(Command::UnmapClaim { iss, value, role })
    }

    /// After `DROP ISSUER`.
    pub(super) fn drop_issuer(&mut self) -> Result<Command> {
        let if_exists = self.if_exists();
        let iss = self.string("the issuer as a string")?;
        Ok(Command::DropIssuer { iss, if_exists })
    }

    /// `MAP CLAIM|GROUP 'v' FROM ISSUER 'iss' TO ROLE r` / `UNMAP CLAIM 'v' FROM ISSUER 'iss'
    /// [FROM ROLE r]`. `MAP GROUP` is the reference system's name for the same mapping: both map
    /// values of the issuer's role claim.
    pub(super) fn map_claim(&mut self) -> Result<Command> {
        let map = self.word("map");
        if !map && !self.word("unmap") {
            return self.err("MAP or UNMAP");
        }
        if !self.word("claim") && !(map && self.word("group")) {
            return self.err(if map { "CLAIM or GROUP" } else { "CLAIM" });
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

}

/// `CLAIM MAP '{"jwt.path": "claim", …}'`: the same pairs as `CLAIM MAP ('jwt.path' => claim)`;
/// names lower-case, each once; every value a string.
fn claim_map_json(text: &str) -> Result<Vec<(String, String)>> {
    let bad = || AclError::from(Invalid::Rule("CLAIM MAP '…' takes a JSON object of claim paths to claim names"));
    let super::lists::Members(members) = serde_json::from_str(text).map_err(|_| bad())?;
    let mut v: Vec<(String, String)> = Vec::new();
    for (path, name) in members {
        if v.iter().any(|(p, _)| *p == path) {
            return Err(bad());
        }
        let serde_json::Value::String(name) = name else { return Err(bad()) };
        if path.split('.').any(str::is_empty) {
            return Err(Invalid::ClaimPath { path }.into());
        }
        let name = crate::policy::norm(name.trim());
        if v.iter().any(|(_, n)| *n == name) {
            return Err(Duplicate::ClaimMapped(name).into());
        }
        v.push((path, name));
    }
    Ok(v)
}

/// `KEYS FROM` takes a file path; a URL is refused (nothing is fetched over the network).
fn check_keys_path(path: &str) -> Result<()> {
    let lower = path.trim_start().to_ascii_lowercase();
    if lower.starts_with("http://") || lower.starts_with("https://") {
        return Err(Invalid::Rule("KEYS FROM a URL is not supported offline; pass the JWKS inline").into());
    }
    Ok(())
}

/// The issuer as the policy stores it, with its keys checked: an issuer that cannot verify
/// anything is refused here rather than failing every token later. A `KEYS FROM` file is read
/// and checked now, and its text is not kept: the node reads the file whenever a policy is
/// published (`auth::KeyFiles`), so no copy of keys the identity provider has since rotated out
/// can come back from the policy or the store.
fn build_issuer(spec: &IssuerSpec) -> Result<Issuer> {
    let algs = spec
        .algs
        .iter()
        .map(|a| {
            crate::auth::keys::parse_alg(a).map(|a| crate::auth::keys::alg_name(a).to_string())
        })
        .collect::<Result<Vec<_>>>()?;
    let (keys, keys_file, read) = match &spec.keys {
        KeySource::Inline(k) => (k.clone(), None, None),
        KeySource::File(path) => (String::new(), Some(path.clone()), Some(read_keys_file(path)?)),
    };
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
        keys_file,
        unmapped: spec.unmapped,
    };
    check_issuer(&issuer, read.as_deref())?;
    Ok(issuer)
}

/// Every check management makes of an issuer, made of an issuer the policy or the store holds
/// (`store::load` calls it for each `issuers` row, so a hand-edited row passes only what
/// `CREATE ISSUER` would have written). `file_keys`: the text of its keys file, when it was read
/// (at CREATE/ALTER); at load the file is read afterwards, off this path, and what it holds is
/// judged then (its tokens refused while it holds nothing usable, spec 003).
pub fn check_issuer(issuer: &Issuer, file_keys: Option<&str>) -> Result<()> {
    if issuer.iss.is_empty() {
        return Err(Invalid::Rule("the issuer must not be empty").into());
    }
    if let Some(path) = &issuer.keys_file {
        check_keys_path(path)?;
    }
    for a in &issuer.algs {
        // As `build_issuer` stores them: known names, upper-case.
        let alg = crate::auth::keys::parse_alg(a)?;
        if crate::auth::keys::alg_name(alg) != a {
            return Err(Invalid::Rule("ALGS are stored by their upper-case names").into());
        }
    }
    for path in std::iter::once(&issuer.role_claim).chain(issuer.claim_map.iter().map(|(p, _)| p)) {
        if path.split('.').any(str::is_empty) {
            return Err(Invalid::ClaimPath { path: path.clone() }.into());
        }
    }
    let mut names = std::collections::BTreeSet::new();
    for (_, name) in &issuer.claim_map {
        // `CLAIM MAP (… => name)` stores an identifier, lower-cased, each at most once.
        if name.is_empty() || crate::policy::norm(name) != *name {
            return Err(Invalid::Rule("a CLAIM MAP name is a lower-case identifier").into());
        }
        if !names.insert(name.as_str()) {
            return Err(Duplicate::ClaimMapped(name.clone()).into());
        }
    }
    if issuer.keys_file.is_none() && issuer.keys == super::export::WITHHELD_SECRET {
        return Err(Invalid::Issuer { iss: issuer.iss.clone(), problem: Box::new(Invalid::SecretWithheld) }.into());
    }
    let keys = match (&issuer.keys_file, file_keys) {
        (None, _) => issuer.clone(),
        (Some(_), Some(text)) => Issuer { keys: text.to_string(), ..issuer.clone() },
        // The ALGS were checked above; the keys are the file's, judged when it is read.
        (Some(_), None) => return Ok(()),
    };
    crate::auth::IssuerKeys::parse(&keys).map_err(|e| match e {
        AclError::Invalid(m) => Invalid::Issuer { iss: issuer.iss.clone(), problem: Box::new(m) }.into(),
        other => other,
    })?;
    Ok(())
}

fn read_keys_file(path: &str) -> Result<String> {
    crate::auth::read_keys_file(path)
        .map_err(|why| AclError::from(Invalid::KeysFile { path: path.to_string(), why }))
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

pub(super) fn issuer_missing(iss: &str) -> AclError {
    Invalid::Missing { noun: Noun::Issuer, name: iss.to_string() }.into()
}

/// The clause an `IssuerSet` stands for (for "given twice").
fn field_name(set: &IssuerSet) -> &'static str {
    match set {
        IssuerSet::Keys(_) => "KEYS",
        IssuerSet::Audiences(_) => "AUDIENCES",
        IssuerSet::Algs(_) => "ALGS",
        IssuerSet::RoleClaim(_) => "ROLE CLAIM",
        IssuerSet::ClaimMap(_) => "CLAIM MAP",
        IssuerSet::Unmapped(_) => "UNMAPPED",
    }
}

/// `spec` with one clause set: CREATE's clauses and ALTER's SET build the spec the same way.
pub(super) fn set_field(spec: &mut IssuerSpec, set: IssuerSet) {
    match set {
        IssuerSet::Keys(k) => spec.keys = k,
        IssuerSet::Audiences(v) => spec.audiences = v,
        IssuerSet::Algs(v) => spec.algs = v,
        IssuerSet::RoleClaim(c) => spec.role_claim = Some(c),
        IssuerSet::ClaimMap(v) => spec.claim_map = v,
        IssuerSet::Unmapped(u) => spec.unmapped = u,
    }
}

/// The spec that re-creates `issuer` as it is (keys from its file again, if it has one).
pub(super) fn spec_of(issuer: &Issuer) -> IssuerSpec {
    IssuerSpec {
        iss: issuer.iss.clone(),
        keys: match &issuer.keys_file {
            Some(path) => KeySource::File(path.clone()),
            None => KeySource::Inline(issuer.keys.clone()),
        },
        audiences: issuer.audiences.clone(),
        algs: issuer.algs.clone(),
        role_claim: Some(issuer.role_claim.clone()),
        claim_map: issuer.claim_map.clone(),
        unmapped: issuer.unmapped,
    }
}

/// A legacy quoted list (`'a, b'`): its items trimmed, empty ones dropped.
fn split_list(text: &str) -> Vec<String> {
    text.split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::to_string).collect()
}

/// A string for a status line, as an SQL literal.
fn lit(s: &str) -> String {
    crate::sqltext::literal(s)
}

#[cfg(test)]
#[path = "issuer_tests.rs"]
mod tests;
