//! Verified tokens, so a gateway sending the same JWT on every statement pays for the
//! signature once. Keyed by the SHA-256 of the token text (the token itself is never stored),
//! tied to the policy version it was verified under, and valid until the token's `exp`.
use super::{verify, KeyFiles, KeyTimes, Principal};
use crate::bounded::{texts, Bounded};
use crate::error::Result;
use crate::policy::Policy;
use sha2::{Digest, Sha256};
use std::sync::atomic::{AtomicU64, Ordering};

/// Past this many entries, or these many bytes (a token's claims can be long), the cache starts
/// over: a simple bound that needs no LRU bookkeeping (spec 012, "Memory").
const MAX_ENTRIES: usize = 10_000;
const MAX_BYTES: usize = 4 << 20;

struct Entry {
    version: u64,
    exp: i64,
    principal: Principal,
    iss: String,
    /// The generation of the keys it was verified with, for an issuer with a keys file.
    generation: Option<u64>,
}

/// Owned by the caller (one per database's state); cheap to share across threads.
pub struct TokenCache {
    entries: Bounded<[u8; 32], Entry>,
    /// The policy version the entries belong to; a different one empties the cache, so any
    /// policy change (a dropped issuer, an unmapped claim, a dropped role) acts at once.
    version: AtomicU64,
    /// Keys read `KEYS FROM` a file (read at every publish, `KeyFiles::publish`, and again on
    /// `acl_jwks_refresh_interval`).
    pub files: KeyFiles,
}

impl Default for TokenCache {
    fn default() -> Self {
        TokenCache {
            entries: Bounded::new(MAX_BYTES, MAX_ENTRIES),
            version: AtomicU64::new(u64::MAX),
            files: KeyFiles::default(),
        }
    }
}

impl TokenCache {
    pub fn new() -> TokenCache {
        TokenCache::default()
    }

    /// `principal_from_token`, answered from the cache when this token was verified under the
    /// same policy version and its `exp` (plus skew) has not passed.
    pub fn principal(
        &self,
        policy: &Policy,
        token: &str,
        now_unix: i64,
        skew_secs: u64,
        times: KeyTimes,
    ) -> Result<Principal> {
        self.verified(policy, token, now_unix, skew_secs, times).map(|(p, _)| p)
    }

    /// `principal`, also returning the token's `exp` (unix seconds, skew not applied): what a
    /// statement or view decided under the token must not outlive. A token of an issuer whose
    /// keys come from a file is judged against the file's keys as `times` say (`KeyFiles`): a
    /// hit verified with keys since replaced is verified again, and stale keys refuse it.
    pub fn verified(
        &self,
        policy: &Policy,
        token: &str,
        now_unix: i64,
        skew_secs: u64,
        times: KeyTimes,
    ) -> Result<(Principal, i64)> {
        // The keys files' entries are kept by the publish (`KeyFiles::publish`), not here: a
        // statement of the policy before would drop a new issuer's entry, whose tokens would
        // then wait for a read again.
        if self.version.swap(policy.version, Ordering::AcqRel) != policy.version {
            self.entries.clear();
        }
        let key: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        let skew = i64::try_from(skew_secs).unwrap_or(i64::MAX);
        {
            // Scoped: the shard lock must be released before `remove`/`insert` below.
            if let Some(e) = self.entries.get(&key) {
                if e.version == policy.version && now_unix <= e.exp.saturating_add(skew) && self.keys_hold(policy, &e, now_unix, times)? {
                    return Ok((e.principal.clone(), e.exp));
                }
            }
        }
        self.entries.remove(&key);
        let v = verify(policy, token, now_unix, skew_secs, Some((&self.files, times)))?;
        let (principal, exp) = (v.principal, v.exp);
        let size = 32
            + texts(&principal.roles)
            + principal.label.len()
            + principal.claims.iter().map(|(k, v)| k.len() + v.as_deref().map_or(0, str::len) + 64).sum::<usize>();
        self.entries.insert(
            key,
            Entry {
                version: policy.version,
                exp,
                principal: principal.clone(),
                iss: v.iss,
                generation: v.generation,
            },
            size,
        );
        Ok((principal, exp))
    }

    /// Were `e`'s keys its issuer's keys still (`Ok(false)`: replaced since, verify again)?
    fn keys_hold(&self, policy: &Policy, e: &Entry, now: i64, times: KeyTimes) -> Result<bool> {
        let Some(generation) = e.generation else { return Ok(true) };
        let Some(issuer) = policy.issuers.get(&e.iss) else { return Ok(false) };
        let Some(path) = &issuer.keys_file else { return Ok(false) };
        match self.files.current(issuer, path, policy.version, now, times) {
            Ok(c) => Ok(c.generation == generation),
            Err(reason) => Err(crate::error::AclError::token(reason)),
        }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn clear(&self) {
        self.entries.clear();
    }
}
