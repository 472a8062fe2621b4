//! Who a principal's batch runs as: the prefix's role, or the roles and claims of a verified
//! token (spec 003); whether a rewrite kept for them still holds; and the identity a
//! transaction belongs to (`owner`).
use crate::authz::Principal;
use crate::error::{AclError, Result};
use crate::policy::Policy;
use crate::prefix::Prefix;
use crate::rewrite::{who, Settings};
use super::sessions::Session;
use std::sync::Arc;

/// A principal, and what it came from: a role, a token (with its `exp`) or a session.
pub struct Who {
    pub principal: Principal,
    /// What a view the batch creates must not outlive: a token's `exp` (a session's under
    /// `every_use`).
    pub exp: Option<i64>,
    pub credential: Credential,
}

impl Who {
    /// The `exp` a batch's statements must not outlive: a token's only. A session's statements
    /// hold while the session is live (their tag names it), whatever the binding.
    pub fn token_exp(&self) -> Option<i64> {
        match self.credential {
            Credential::Token(_) => self.exp,
            _ => None,
        }
    }
}

/// What a kept rewrite must judge again before it is reused: nothing for `ACL ROLE`, the token
/// (verified again), or the session (still live, and used now).
#[derive(Debug, Clone)]
pub enum Credential {
    Role,
    Token(String),
    Session(Arc<Session>),
}

impl PartialEq for Credential {
    fn eq(&self, other: &Credential) -> bool {
        match (self, other) {
            (Credential::Role, Credential::Role) => true,
            (Credential::Token(a), Credential::Token(b)) => a == b,
            (Credential::Session(a), Credential::Session(b)) => a.id == b.id,
            _ => false,
        }
    }
}

impl Eq for Credential {}

impl Credential {
    /// Bytes it keeps alive in a cache entry.
    pub fn bytes(&self) -> usize {
        match self {
            Credential::Token(jwt) => jwt.len(),
            _ => 0,
        }
    }

    /// The session a batch runs under (its tag carries the id), 0 for none.
    pub fn session_id(&self) -> u64 {
        match self {
            Credential::Session(s) => s.id,
            _ => 0,
        }
    }
}

/// The principal of a batch's prefix (`ACL ADMIN` has none: management goes elsewhere).
pub fn of(state: &super::State, policy: &Policy, prefix: &Prefix, settings: &Settings) -> Result<Who> {
    match prefix {
        Prefix::Role(role) => Ok(Who { principal: Principal::role(role), exp: None, credential: Credential::Role }),
        Prefix::Token(jwt) => {
            let (principal, exp) = state.tokens.verified(policy, jwt, now_unix()?, settings.clock_skew, settings.key_times)?;
            Ok(Who { principal, exp: Some(exp), credential: Credential::Token(jwt.clone()) })
        }
        Prefix::Session(handle) => {
            let session = state.sessions.enter(handle, settings.clock_skew)?;
            // Its issuer still vouches for its token (dropped or changed: the session ends).
            super::session_vouch::vouched(&state.sessions, &state.tokens, policy, &session, settings)
                .map_err(|reason| AclError::SessionRefused { reason })?;
            // Under `connect` the token's exp ended its judging at open: views live as a role's.
            let exp = state.sessions.every_use().then_some(session.exp);
            Ok(Who { principal: session.principal.clone(), exp, credential: Credential::Session(session) })
        }
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

/// Does a rewrite decided under `version` for `who` (from `credential`) hold now: the same
/// policy version, and a token that is still valid and still denotes the same roles and claims,
/// or a session still live (used by this statement)?
pub(crate) fn still_holds(
    policy: &Policy,
    tokens: &crate::auth::TokenCache,
    sessions: &super::sessions::Sessions,
    settings: &Settings,
    version: u64,
    credential: &Credential,
    who_then: &str,
) -> bool {
    if version != policy.version {
        return false;
    }
    match credential {
        Credential::Role => true,
        Credential::Token(jwt) => {
            let Ok(now) = now_unix() else { return false };
            match tokens.principal(policy, jwt, now, settings.clock_skew, settings.key_times) {
                Ok(principal) => who(&principal) == who_then,
                Err(_) => false,
            }
        }
        // Its identity was fixed at open: only whether it still runs statements can change.
        // (and whether its issuer still vouches for its token: under `every_use`, at every use).
        Credential::Session(s) => {
            sessions.use_session(s, settings.clock_skew).is_ok()
                && super::session_vouch::vouched(sessions, tokens, policy, s, settings).is_ok()
        }
    }
}

/// `owner` of the batch's principal: the prefix's (kept in `Owners`), or the session's own.
pub fn owner_of(state: &super::State, prefix: &Prefix, who: &Who) -> String {
    match &who.credential {
        Credential::Session(s) => s.owner.clone(),
        _ => state.owners.of(prefix),
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
/// same subject is the same principal; a token without a subject is a principal of its own). A
/// session's is its own (`Session::owner`, `owner_of`): never another session's, even of the
/// same subject.
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
