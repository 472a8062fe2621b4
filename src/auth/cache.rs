//! Verified tokens, so a gateway sending the same JWT on every statement pays for the
//! signature once. Keyed by the SHA-256 of the token text (the token itself is never stored),
//! tied to the policy version it was verified under, and valid until the token's `exp`.
use super::verify;
use super::Principal;
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
}

/// Owned by the caller (one per database's state); cheap to share across threads.
pub struct TokenCache {
    entries: Bounded<[u8; 32], Entry>,
    /// The policy version the entries belong to; a different one empties the cache, so any
    /// policy change (a dropped issuer, an unmapped claim, a dropped role) acts at once.
    version: AtomicU64,
}

impl Default for TokenCache {
    fn default() -> Self {
        TokenCache {
            entries: Bounded::new(MAX_BYTES, MAX_ENTRIES),
            version: AtomicU64::new(u64::MAX),
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
    ) -> Result<Principal> {
        self.verified(policy, token, now_unix, skew_secs).map(|(p, _)| p)
    }

    /// `principal`, also returning the token's `exp` (unix seconds, skew not applied): what a
    /// statement or view decided under the token must not outlive.
    pub fn verified(
        &self,
        policy: &Policy,
        token: &str,
        now_unix: i64,
        skew_secs: u64,
    ) -> Result<(Principal, i64)> {
        if self.version.swap(policy.version, Ordering::AcqRel) != policy.version {
            self.entries.clear();
        }
        let key: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        let skew = i64::try_from(skew_secs).unwrap_or(i64::MAX);
        {
            // Scoped: the shard lock must be released before `remove`/`insert` below.
            if let Some(e) = self.entries.get(&key) {
                if e.version == policy.version && now_unix <= e.exp.saturating_add(skew) {
                    return Ok((e.principal.clone(), e.exp));
                }
            }
        }
        self.entries.remove(&key);
        let (principal, exp) = verify(policy, token, now_unix, skew_secs)?;
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
            },
            size,
        );
        Ok((principal, exp))
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
