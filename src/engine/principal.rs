//! Who a principal's batch runs as: the prefix's role, or the roles and claims of a verified
//! token (spec 003); whether a rewrite kept for them still holds; and the identity a
//! transaction belongs to (`owner`).
use crate::authz::Principal;
use crate::error::{AclError, Result};
use crate::policy::Policy;
use crate::prefix::Prefix;
use crate::rewrite::{who, Settings};

/// A principal, and the token it came from (with its `exp`), if any.
pub struct Who {
    pub principal: Principal,
    pub exp: Option<i64>,
    pub token: Option<String>,
}

/// The principal of a batch's prefix (`ACL ADMIN` has none: management goes elsewhere).
pub fn of(state: &super::State, policy: &Policy, prefix: &Prefix, settings: &Settings) -> Result<Who> {
    match prefix {
        Prefix::Role(role) => Ok(Who { principal: Principal::role(role), exp: None, token: None }),
        Prefix::Token(jwt) => {
            let (principal, exp) = state.tokens.verified(policy, jwt, now_unix()?, settings.clock_skew, settings.key_times)?;
            Ok(Who { principal, exp: Some(exp), token: Some(jwt.clone()) })
        }
        Prefix::Session(_) => Err(AclError::from(crate::error::StatementNotPermitted::Session)),
        Prefix::Admin => Err(AclError::internal("a management batch has no principal")),
    }
}

/// `acl_whoami(token)` (an operator's native call, never a principal's): what the token resolves
/// to under the policy now, one row each: the principal, its roles, every claim `acl_claim`
/// reads for it (the token's `CLAIM MAP` over the roles' defaults) and when it expires; or the
/// one row `rejected: <why>`.
pub fn whoami(state: &super::State, jwt: &str, settings: &Settings) -> Vec<String> {
    let policy = state.policy();
    let who = match of(state, &policy, &Prefix::Token(jwt.to_string()), settings) {
        Ok(who) => who,
        Err(e) => return vec![format!("rejected: {e}")],
    };
    let p = &who.principal;
    let roles = if p.roles.is_empty() { "(none: the token maps to no role)".to_string() } else { p.roles.join(", ") };
    let mut out = vec![format!("principal: {}", p.label), format!("roles: {roles}")];
    match crate::authz::View::new(&policy, p) {
        Ok(view) => {
            let claims: Vec<String> = view
                .claims()
                .map(|(k, v)| format!("claim {k}: {}", v.map_or("NULL".to_string(), crate::sqltext::literal)))
                .collect();
            if claims.is_empty() {
                out.push("claims: (none: acl_claim(…) is NULL for this token)".into());
            }
            out.extend(claims);
        }
        Err(e) => out.push(format!("rejected: {e}")),
    }
    if let Some(exp) = who.exp {
        out.push(format!("expires: {exp} (seconds since 1970)"));
    }
    out
}

/// Does a rewrite decided under `version` for `who` (from `token`, if any) hold now: the same
/// policy version, and a token that is still valid and still denotes the same roles and claims?
pub(crate) fn still_holds(
    policy: &Policy,
    tokens: &crate::auth::TokenCache,
    settings: &Settings,
    version: u64,
    token: Option<&str>,
    who_then: &str,
) -> bool {
    if version != policy.version {
        return false;
    }
    let Some(jwt) = token else { return true };
    let Ok(now) = now_unix() else { return false };
    match tokens.principal(policy, jwt, now, settings.clock_skew, settings.key_times) {
        Ok(principal) => who(&principal) == who_then,
        Err(_) => false,
    }
}

fn now_unix() -> Result<i64> {
    Ok(std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_err(|_| AclError::internal("the system clock is before 1970"))?
        .as_secs() as i64)
}

/// `owner` of each prefix met, so a batch does not hash (and, for a token, decode) it again. The
/// key is the prefix's own text; only prefixes that verified reach here.
pub struct Owners(crate::bounded::Bounded<String, String>);

impl Default for Owners {
    fn default() -> Owners {
        Owners(crate::bounded::Bounded::new(1 << 20, 4_096))
    }
}

impl Owners {
    pub fn of(&self, prefix: &Prefix) -> String {
        let key = match prefix {
            Prefix::Role(role) => format!("r{role}"),
            Prefix::Token(jwt) => format!("t{jwt}"),
            Prefix::Admin | Prefix::Session(_) => return String::new(),
        };
        if let Some(known) = self.0.get(&key) {
            return known.clone();
        }
        let owner = owner(prefix);
        let size = key.len() + owner.len() + crate::bounded::ENTRY_OVERHEAD;
        self.0.insert(key, owner.clone(), size);
        owner
    }
}

/// The identity a transaction belongs to (spec 001, "Transactions"): the role for `ACL ROLE`
/// (folded as role names are), the issuer and subject for `ACL TOKEN` (a refreshed token of the
/// same subject is the same principal; a token without a subject is a principal of its own).
/// The shim carries it in each statement's text, so it is a digest: 32 lower-case hex digits
/// (128 bits of SHA-256) that never contain `*/`. Empty for `ACL ADMIN`.
pub fn owner(prefix: &Prefix) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    match prefix {
        Prefix::Role(role) => {
            h.update(b"role\0");
            h.update(crate::policy::norm(role).as_bytes());
        }
        Prefix::Token(jwt) => {
            // Only called once the token verified: these are the claims its signature covers.
            let claims: serde_json::Value = jsonwebtoken::dangerous::insecure_decode_claims(jwt).unwrap_or_default();
            let text = |k: &str| claims.get(k).and_then(serde_json::Value::as_str).map(str::to_owned);
            h.update(b"token\0");
            h.update(text("iss").unwrap_or_default().as_bytes());
            match text("sub") {
                Some(sub) => {
                    h.update(b"\0sub\0");
                    h.update(sub.as_bytes());
                }
                None => {
                    h.update(b"\0jwt\0");
                    h.update(jwt.as_bytes());
                }
            }
        }
        Prefix::Admin | Prefix::Session(_) => return String::new(),
    }
    // One string, no formatter: this runs for every principal's batch.
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(32);
    for b in &h.finalize()[..16] {
        out.push(HEX[usize::from(b >> 4)] as char);
        out.push(HEX[usize::from(b & 15)] as char);
    }
    out
}
