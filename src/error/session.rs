//! Refusals of `ACL SESSION` and of the session functions (spec 017). None carries the handle:
//! a reason is fixed text, and a session is named only by its operator id.
use thiserror::Error;

/// Why a session handle does not run statements: what `acl_session_reason(handle)` answers
/// (`code`), and the text of the refusal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum SessionReason {
    #[error("the session was closed")]
    Closed,
    #[error("the session was idle longer than acl_session_idle_timeout")]
    Idle,
    #[error("the session's token expired (acl_session_token_binding is 'every_use')")]
    Expired,
    #[error("the session was killed")]
    Killed,
    /// Its token no longer verifies: its issuer was dropped, or its keys (or algorithms or
    /// audiences) changed so that the token's signature no longer holds (spec 017, "Issuer").
    #[error("the session's token no longer verifies (its issuer was dropped or changed)")]
    Revoked,
    /// Never opened on this node, or ended so long ago that the node forgot it.
    #[error("unknown session")]
    Unknown,
}

impl SessionReason {
    /// The word `acl_session_reason` answers for it.
    pub fn code(self) -> &'static str {
        match self {
            SessionReason::Closed => "closed",
            SessionReason::Idle => "idle",
            SessionReason::Expired => "expired",
            SessionReason::Killed => "killed",
            SessionReason::Revoked => "revoked",
            SessionReason::Unknown => "unknown",
        }
    }
}

/// A session function or setting refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SessionProblem {
    /// `acl_max_sessions` reached: a new session is refused, an old one is never evicted.
    #[error("session refused: the node holds {max} sessions (acl_max_sessions); close or kill one first")]
    AtCap { max: u64 },
    /// Every resource group of the principal holds its `max_sessions` live sessions.
    #[error("session refused: every resource group of the principal ({groups}) holds its max_sessions sessions; close or kill one first")]
    GroupsFull { groups: String },
    /// The door label `acl_session_open` or a door gives a session.
    #[error("a session's door label is 1 to 64 characters: letters, digits, '_', '-', '.' or ':'")]
    Door,
    /// A session setting given a value it does not take (refused at SET).
    #[error("{setting} must be {expected}")]
    Setting { setting: &'static str, expected: &'static str },
}
