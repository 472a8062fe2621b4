//! The issuer behind a session (spec 017, "A session outlives no issuer"): a session runs only
//! while its token would still verify against its issuer as the policy holds it now. Identity
//! stays what it was at open (the roles are not mapped again); what is judged again is the trust:
//! the issuer is there, and its keys, algorithms and audiences still accept the token.
//!
//! Under `connect` the token is verified again once per policy version (a statement compares one
//! atomic with the policy's version; a changed policy costs each session one verification, then
//! the token cache's), as of the time it opened (its `exp` was judged then). Under `every_use` it
//! is verified at every use as `ACL TOKEN` verifies it (the token cache: a hash and a lookup),
//! keys read `KEYS FROM` a file included. A token that no longer verifies ends its session
//! (`revoked`; under `every_use` one past `exp` + skew, `expired`).
use super::sessions::{now_ms, Session, Sessions};
use crate::auth::TokenCache;
use crate::error::{AclError, Result, SessionReason, TokenReason};
use crate::policy::Policy;
use crate::rewrite::Settings;

/// Whether `s`'s token still verifies under `policy` (ending it, with the reason, if not).
pub fn vouched(sessions: &Sessions, tokens: &TokenCache, policy: &Policy, s: &Session, settings: &Settings) -> std::result::Result<(), SessionReason> {
    let every_use = sessions.every_use();
    if !every_use && s.vouched_at() == policy.version {
        return Ok(());
    }
    let at = if every_use { now_ms() / 1000 } else { s.opened_ms / 1000 };
    match tokens.verified(policy, s.token(), at, settings.clock_skew, settings.key_times) {
        // The roles were mapped once, at open: a token that maps to none now still verifies.
        Ok(_) | Err(AclError::TokenRejected { reason: TokenReason::NoRole }) => {
            s.vouch(policy.version);
            Ok(())
        }
        // The signature held (time is judged after it); under `connect` exp was judged at open.
        Err(AclError::TokenRejected { reason: TokenReason::Expired }) if !every_use => {
            s.vouch(policy.version);
            Ok(())
        }
        Err(AclError::TokenRejected { reason: TokenReason::Expired }) => Err(sessions.end_for(s, SessionReason::Expired)),
        Err(_) => Err(sessions.end_for(s, SessionReason::Revoked)),
    }
}

/// A statement kept from session `id` runs now (`acl_rs_session_check`): live, used, and its
/// token still vouched for by its issuer.
pub fn enter_kept(state: &super::State, id: u64, clock_skew: u64) -> Result<()> {
    state.sessions.enter_id(id, clock_skew)?;
    let Some(s) = state.sessions.by_id(id) else { return Err(AclError::SessionEnded { reason: SessionReason::Unknown }) };
    let settings = Settings { clock_skew, ..Settings::default() };
    vouched(&state.sessions, &state.tokens, &state.policy(), &s, &settings).map_err(|reason| AclError::SessionEnded { reason })
}
