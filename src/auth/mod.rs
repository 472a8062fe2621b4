//! `ACL TOKEN '<jwt>'`: a JWT verified offline against a registered issuer (`CREATE ISSUER`)
//! becomes a `Principal`. See specs/003-tokens.md.
//!
//! Order matters: the unverified payload is read only to pick the issuer; everything the
//! principal is made of comes from the payload `jsonwebtoken::decode` returns after the
//! signature checked out. Every rejection is `AclError::TokenRejected` with a fixed reason
//! (`TokenReason`), so no message ever carries the token or a claim from it.
mod cache;
mod files;
pub mod keys;
mod principal;

pub use cache::TokenCache;
pub use files::{read_keys_file, KeyFiles, KeyTimes, DEFAULT_MAX_STALE_SECS, DEFAULT_REFRESH_SECS, MAX_KEYS_FILE_BYTES, PUBLISH_WAIT};
pub use keys::IssuerKeys;
pub use principal::Principal;

use crate::error::{AclError, Result, TokenReason};
use crate::policy::{norm, Issuer, Policy, Unmapped};
use jsonwebtoken::errors::{Error as JwtError, ErrorKind};
use jsonwebtoken::{decode, decode_header, Validation};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashSet};

/// The clock skew tolerated on `exp` and `nbf` until `acl_jwt_clock_skew` is wired.
pub const DEFAULT_CLOCK_SKEW_SECS: u64 = 60;
/// The role claim when `CREATE ISSUER` names none.
pub const DEFAULT_ROLE_CLAIM: &str = "roles";
/// Longer tokens are refused before any parsing (no IdP issues JWTs near this size).
const MAX_TOKEN_BYTES: usize = 16 * 1024;

fn reject(reason: TokenReason) -> AclError {
    AclError::token(reason)
}

/// Verifies `token` against the policy's issuers at time `now_unix` (seconds), tolerating
/// `skew_secs` on `exp`/`nbf`, and derives the principal: roles through `MAP CLAIM`, claims
/// through the issuer's `CLAIM MAP` (the roles' defaults lie under them, see `View::new`).
/// Uncached; see `TokenCache`. A `KEYS FROM` issuer's tokens are refused here (`KeysNotRead`):
/// its keys live in a `TokenCache`'s `KeyFiles`, never in the policy.
pub fn principal_from_token(
    policy: &Policy,
    token: &str,
    now_unix: i64,
    skew_secs: u64,
) -> Result<Principal> {
    verify(policy, token, now_unix, skew_secs, None).map(|v| v.principal)
}

/// The roles `token` maps to under `policy`: its role claim read through the issuer `policy`
/// holds now (empty when that issuer is gone or nothing maps). It judges no signature and no
/// time: only for a token verified before, to see what a management batch of its own did to the
/// roles it maps to (`admin::scope::check_gains`).
pub fn roles_under(policy: &Policy, token: &str) -> Vec<String> {
    let Ok(claims) = jsonwebtoken::dangerous::insecure_decode_claims::<Value>(token) else { return Vec::new() };
    let Some(iss) = claims.get("iss").and_then(Value::as_str) else { return Vec::new() };
    let Some(issuer) = policy.issuers.get(iss) else { return Vec::new() };
    roles_of(policy, iss, issuer, &claims).unwrap_or_default()
}

/// What a verification gives: the principal, the token's `exp` (for the cache, kept statements
/// and views), its issuer and, for keys read from a file, their generation (`KeyFiles`).
struct Verified {
    principal: Principal,
    exp: i64,
    iss: String,
    generation: Option<u64>,
}

/// `principal_from_token`; with `files`, an issuer's `KEYS FROM` file's keys (read again when due).
fn verify(policy: &Policy, token: &str, now_unix: i64, skew_secs: u64, files: Option<(&KeyFiles, KeyTimes)>) -> Result<Verified> {
    if token.is_empty() || token.len() > MAX_TOKEN_BYTES {
        return Err(reject(TokenReason::Malformed));
    }
    let header = decode_header(token).map_err(|e| reject(header_reason(&e)))?;
    // RFC 7515 §4.1.11: a critical extension we do not implement must not be ignored.
    if header.crit.as_ref().is_some_and(|c| !c.is_empty()) {
        return Err(reject(TokenReason::CriticalHeader));
    }
    // The only use of unverified data: which issuer's keys to verify with.
    let peek: Value =
        jsonwebtoken::dangerous::insecure_decode_claims(token).map_err(|_| reject(TokenReason::Malformed))?;
    let iss = peek
        .get("iss")
        .and_then(Value::as_str)
        .ok_or_else(|| reject(TokenReason::UnknownIssuer))?;
    let issuer = policy
        .issuers
        .get(iss)
        .ok_or_else(|| reject(TokenReason::UnknownIssuer))?;
    let (keys, generation) = issuer_keys(policy, issuer, now_unix, files)?;
    if !keys.allows(header.alg) {
        return Err(reject(TokenReason::AlgorithmNotAllowed));
    }
    let key = keys
        .select(header.kid.as_deref())
        .ok_or_else(|| reject(TokenReason::UnknownKey))?;
    if !key.algs.contains(&header.alg) {
        return Err(reject(TokenReason::AlgorithmNotAllowed));
    }

    let mut v = Validation::new(header.alg);
    // Time is checked below against the caller's clock, not the library's.
    v.validate_exp = false;
    v.validate_nbf = false;
    v.leeway = 0;
    v.required_spec_claims = HashSet::from(["iss".to_string()]);
    v.set_issuer(&[iss]);
    if issuer.audiences.is_empty() {
        v.validate_aud = false;
    } else {
        v.set_audience(&issuer.audiences);
        v.required_spec_claims.insert("aud".to_string());
    }
    let claims = decode::<Value>(token, &key.key, &v)
        .map_err(|e| reject(decode_reason(&e)))?
        .claims;

    let skew = i64::try_from(skew_secs).unwrap_or(i64::MAX);
    let exp = match claims.get("exp") {
        None => return Err(reject(TokenReason::NoExpiry)),
        Some(v) => numeric_date(v).ok_or_else(|| reject(TokenReason::Malformed))?,
    };
    if exp.saturating_add(skew) < now_unix {
        return Err(reject(TokenReason::Expired));
    }
    if let Some(nbf) = claims.get("nbf") {
        let nbf = numeric_date(nbf).ok_or_else(|| reject(TokenReason::Malformed))?;
        if nbf > now_unix.saturating_add(skew) {
            return Err(reject(TokenReason::NotYetValid));
        }
    }

    let roles = roles_of(policy, iss, issuer, &claims)?;
    let principal_claims = claims_of(issuer, &claims);
    let label = match claims.get("sub").and_then(Value::as_str) {
        Some(sub) => format!("token of \"{}\"", sub.chars().take(64).collect::<String>()),
        None => "token".to_string(),
    };
    let principal = Principal { roles, label, claims: principal_claims };
    Ok(Verified { principal, exp, iss: iss.to_string(), generation })
}

/// The keys to verify `issuer`'s tokens with now: for an issuer with a keys file, what the file
/// gave (`KeyFiles`; never keys the policy or the store kept), with their generation; else the
/// policy's. Without `KeyFiles` a file issuer's tokens are refused: nothing read its file.
fn issuer_keys(policy: &Policy, issuer: &Issuer, now: i64, files: Option<(&KeyFiles, KeyTimes)>) -> Result<(std::sync::Arc<IssuerKeys>, Option<u64>)> {
    if let Some(path) = &issuer.keys_file {
        let Some((files, times)) = files else { return Err(reject(TokenReason::KeysNotRead)) };
        let c = files.current(issuer, path, policy.version, now, times).map_err(reject)?;
        return Ok((c.keys, Some(c.generation)));
    }
    // Keys were checked when the issuer was created and when the store was loaded; if they no
    // longer parse, verify nothing.
    let keys = IssuerKeys::parse(issuer).map_err(|_| reject(TokenReason::IssuerKeysUnusable))?;
    Ok((std::sync::Arc::new(keys), None))
}

/// `decode_header` fails on an `alg` outside jsonwebtoken's enum (`none` included) with serde's
/// "unknown variant"; anything else wrong with the header is malformed.
fn header_reason(e: &JwtError) -> TokenReason {
    match e.kind() {
        ErrorKind::Json(j) if j.to_string().contains("unknown variant") => TokenReason::AlgorithmNotAllowed,
        _ => TokenReason::Malformed,
    }
}

fn decode_reason(e: &JwtError) -> TokenReason {
    match e.kind() {
        ErrorKind::InvalidSignature => TokenReason::BadSignature,
        // Key and algorithm were matched above; a key the backend cannot use fails closed here.
        ErrorKind::InvalidKeyFormat
        | ErrorKind::InvalidRsaKey(_)
        | ErrorKind::InvalidEcdsaKey
        | ErrorKind::InvalidEddsaKey => TokenReason::BadSignature,
        ErrorKind::InvalidAlgorithm
        | ErrorKind::MissingAlgorithm
        | ErrorKind::UnsupportedAlgorithm => TokenReason::AlgorithmNotAllowed,
        ErrorKind::InvalidIssuer => TokenReason::UnknownIssuer,
        ErrorKind::InvalidAudience => TokenReason::WrongAudience,
        ErrorKind::MissingRequiredClaim(c) if c == "aud" => TokenReason::WrongAudience,
        ErrorKind::MissingRequiredClaim(c) if c == "iss" => TokenReason::UnknownIssuer,
        _ => TokenReason::Malformed,
    }
}

/// RFC 7519 NumericDate: seconds, possibly fractional.
fn numeric_date(v: &Value) -> Option<i64> {
    let n = v.as_number()?;
    n.as_i64().or_else(|| n.as_f64().map(|f| f.floor() as i64))
}

/// The value at a dotted claim path. At each level the longest run of segments that names a
/// key wins, so namespaced claims such as `https://example.com/roles` need no escaping.
pub fn claim_at<'v>(claims: &'v Value, path: &str) -> Option<&'v Value> {
    fn walk<'v>(v: &'v Value, segs: &[&str]) -> Option<&'v Value> {
        if segs.is_empty() {
            return Some(v);
        }
        let obj = v.as_object()?;
        (1..=segs.len()).rev().find_map(|n| {
            obj.get(&segs[..n].join("."))
                .and_then(|x| walk(x, &segs[n..]))
        })
    }
    let segs: Vec<&str> = path.split('.').collect();
    walk(claims, &segs)
}

/// Roles from the role claim (a string or an array of strings) through `MAP CLAIM|GROUP`; a value
/// with no mapping counts when it names an existing role (the reference system's rule), unless
/// the issuer says `UNMAPPED IGNORE`. Mapped roles that no longer exist are skipped. Sorted,
/// without duplicates.
fn roles_of(policy: &Policy, iss: &str, issuer: &Issuer, claims: &Value) -> Result<Vec<String>> {
    let path = if issuer.role_claim.is_empty() {
        DEFAULT_ROLE_CLAIM
    } else {
        issuer.role_claim.as_str()
    };
    let values: Vec<&str> = match claim_at(claims, path) {
        Some(Value::String(s)) => vec![s.as_str()],
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let mut roles = BTreeSet::new();
    for value in values {
        match policy.claim_roles.get(&(iss.to_string(), value.to_string())) {
            Some(mapped) => roles.extend(mapped.iter().filter(|r| policy.roles.contains_key(*r)).cloned()),
            // Role names are identifiers, folded as `ACL ROLE "<r>"` folds them.
            None if issuer.unmapped == Unmapped::Count => {
                let role = norm(value);
                if policy.roles.contains_key(&role) {
                    roles.insert(role);
                }
            }
            None => {}
        }
    }
    if roles.is_empty() {
        return Err(reject(TokenReason::NoRole));
    }
    Ok(roles.into_iter().collect())
}

/// The claims the token supplies through the issuer's `CLAIM MAP`: a mapped path the token
/// holds as a string, number or boolean gives its text; a path it holds in any other form (null,
/// an array, an object, or a non-object where the path goes on) gives `None`, which replaces the
/// role's default and reads as NULL (fails closed). Only a path the token does not reach at all
/// (a key missing from an object) is left out, so the role's default applies (`View::new`).
fn claims_of(issuer: &Issuer, claims: &Value) -> BTreeMap<String, Option<String>> {
    let mut out = BTreeMap::new();
    for (path, name) in &issuer.claim_map {
        let text = match claim_lookup(claims, path) {
            Lookup::Absent => continue,
            Lookup::Unusable => None,
            Lookup::Found(Value::String(s)) => Some(s.clone()),
            Lookup::Found(Value::Number(n)) => Some(n.to_string()),
            Lookup::Found(Value::Bool(b)) => Some(b.to_string()),
            Lookup::Found(_) => None,
        };
        out.insert(norm(name), text);
    }
    out
}

/// What a claim path finds in a token (see `claims_of`).
enum Lookup<'v> {
    /// A key on the path is missing from an object.
    Absent,
    /// The path runs into a value that is not an object before its end.
    Unusable,
    Found(&'v Value),
}

/// `claim_at`, telling a path the token does not reach from one it blocks.
fn claim_lookup<'v>(claims: &'v Value, path: &str) -> Lookup<'v> {
    fn walk<'v>(v: &'v Value, segs: &[&str]) -> Lookup<'v> {
        if segs.is_empty() {
            return Lookup::Found(v);
        }
        let Some(obj) = v.as_object() else { return Lookup::Unusable };
        let mut best = Lookup::Absent;
        for n in (1..=segs.len()).rev() {
            let Some(x) = obj.get(&segs[..n].join(".")) else { continue };
            match walk(x, &segs[n..]) {
                found @ Lookup::Found(_) => return found,
                Lookup::Unusable => best = Lookup::Unusable,
                Lookup::Absent => {}
            }
        }
        best
    }
    let segs: Vec<&str> = path.split('.').collect();
    walk(claims, &segs)
}

#[cfg(test)]
pub(crate) mod test_keys;
#[cfg(test)]
pub(crate) mod tests;
#[cfg(test)]
mod files_tests;
