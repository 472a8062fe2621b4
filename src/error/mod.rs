//! Every refusal or failure the extension reports. Messages start with `acl:` and name only
//! what the principal may see: virtual names it typed or was granted, and capabilities.
//!
//! Each variant says *what* was refused (spec 001, "Errors"); its `Display` is the message the
//! principal reads, and `class` is how the shim reports it to DuckDB. This module is a leaf: it
//! holds names and capability words as text, never the policy's own types.
use thiserror::Error;

mod door;
mod management;
mod policy_sql;
mod refusal;
mod scope;
mod session;
mod store;

pub use management::{Duplicate, Invalid, KeyProblem, Management, Noun, Syntax};
pub use policy_sql::{Forbidden, PolicySql};
pub use scope::{LacksScope, Scope, SelfGrant};
pub use session::{SessionProblem, SessionReason};
pub use door::DoorProblem;
pub use store::{why as store_why, StoreError};
pub use refusal::{
    BadCall, Drifted, FunctionNotPermitted, LacksCapability, MergeForm, Nesting, NotGranted, On, ReadOnly, SlicedWrite, Stale,
    StatementNotPermitted, TokenReason, TooLarge, TypeNotPermitted, Uncombinable, Unresolved, Unsupported,
};

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum AclError {
    /// The principal may name the object but does not hold the capability the use needs.
    #[error("acl: {0}")]
    LacksCapability(#[from] LacksCapability),
    /// Every capability is held, but by different roles: no single role may do the whole use.
    #[error("acl: no single role of {principal} holds {} on {object}", .capabilities.join(", "))]
    NoSingleRole { principal: String, capabilities: Vec<&'static str>, object: String },
    /// The name denotes nothing granted (an unknown, physical or ungranted name: never which).
    #[error("acl: {0}")]
    NotGranted(#[from] NotGranted),
    /// The name could denote several objects, or none without a MAIN catalog.
    #[error("acl: {0}")]
    Unresolved(#[from] Unresolved),
    #[error("acl: {0}")]
    FunctionNotPermitted(#[from] FunctionNotPermitted),
    /// A permitted function called in a form it does not take.
    #[error("acl: {0}")]
    BadCall(#[from] BadCall),
    #[error("acl: {0}")]
    StatementNotPermitted(#[from] StatementNotPermitted),
    #[error("acl: {0}")]
    TypeNotPermitted(#[from] TypeNotPermitted),
    /// A management statement its runner's administration scope does not cover (spec 007).
    #[error("acl: {0}")]
    LacksScope(#[from] LacksScope),
    /// A principal's management statement that would widen its own access.
    #[error("acl: {0}")]
    SelfGrant(#[from] SelfGrant),
    /// `ACL TOKEN`: the token did not verify or maps to no role. The reason is fixed text: no
    /// message carries the token or a claim from it.
    #[error("acl: token rejected: {reason}")]
    TokenRejected { reason: TokenReason },
    /// `ACL SESSION '<handle>'` with a handle that runs nothing (spec 017). The reason is fixed
    /// text: no message carries the handle.
    #[error("acl: session refused: {reason}")]
    SessionRefused { reason: SessionReason },
    /// A statement kept from a session (prepared, a relation) run after the session ended.
    #[error("acl: the session this statement was prepared under has ended ({}); prepare it again", .reason.code())]
    SessionEnded { reason: SessionReason },
    #[error("acl: {0}")]
    Session(#[from] SessionProblem),
    /// The Flight SQL door's functions and stream limits (spec 018).
    #[error("acl: {0}")]
    Door(#[from] DoorProblem),
    /// A write to an object the principal may only read.
    #[error("acl: {0}")]
    ReadOnly(#[from] ReadOnly),
    /// A write form the row or column policy of a sliced target cannot follow.
    #[error("acl: {0}")]
    SlicedWrite(#[from] SlicedWrite),
    /// A statement form no rule understands (fail closed).
    #[error("acl: {0}")]
    Unsupported(#[from] Unsupported),
    /// A policy object whose source no longer matches it.
    #[error("acl: {0}")]
    Drifted(#[from] Drifted),
    /// A view whose definer's rights no longer hold.
    #[error("acl: view {view} was created under {why}; create it again")]
    StaleView { view: String, why: Stale },
    /// The grants of the principal's roles on one object cannot be merged into one slice.
    #[error("acl: the grants of several roles on one object cannot be combined: a grant's expression uses {uses}; use one role")]
    RolesNotCombinable { uses: Uncombinable },
    #[error("acl: {0}")]
    TooLarge(#[from] TooLarge),
    /// A listing or view guard reached again from inside its own bind, or nested too deeply.
    #[error("acl: {0}")]
    Nesting(#[from] Nesting),
    /// The text after a prefix, or a management statement, does not parse.
    #[error("acl: {0}")]
    Syntax(#[from] Syntax),
    /// A management statement that is invalid (it changed nothing).
    #[error("acl: {0}")]
    Invalid(#[from] Invalid),
    /// Policy SQL (a view's query, a predicate, a mask, a function body) that calls or names what
    /// policy SQL may not (spec 007, "Policy SQL is input"): refused when written and when loaded.
    #[error("acl: {0}")]
    PolicySql(#[from] PolicySql),
    /// The policy store failed or refused (spec 006).
    #[error("acl: {0}")]
    Store(#[from] StoreError),
    /// A bug of ours, reported without any statement text.
    #[error("acl: internal error: {detail}")]
    Internal { detail: &'static str },
    /// The second check (spec 011) found DuckDB's parse naming something the decision did not
    /// allow: the rules missed it.
    #[error("acl: internal error: the second check found {found} outside the decision; the statement was refused")]
    SecondCheck { found: &'static str },
    /// Text built on a principal's statement (a client's relation over it) calls, unqualified,
    /// something that is no built-in of `system.main` (spec 011, "Text that comes back").
    #[error("acl: text built on a principal's statement may call only DuckDB's built-ins unqualified; qualify {found}")]
    Reparsed { found: &'static str },
    /// An error of one statement of a batch of several: which one, by its number and first words
    /// (the batch's author's own text), so that the author finds it.
    #[error("{error} (statement {n} of the batch: {words})")]
    At { n: usize, words: String, error: Box<AclError> },
}

/// How the shim reports an error to DuckDB (`src/ffi` maps it to a status code).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// A permission error.
    Refused,
    /// A parser error.
    Syntax,
    /// An invalid management statement.
    Invalid,
    /// A bug of ours.
    Internal,
}

impl AclError {
    /// The category the shim reports this error under.
    pub fn class(&self) -> Class {
        match self {
            AclError::At { error, .. } => error.class(),
            AclError::Syntax(_) => Class::Syntax,
            AclError::Reparsed { .. } => Class::Refused,
            AclError::Invalid(_) | AclError::PolicySql(_) | AclError::Store(_) => Class::Invalid,
            AclError::Session(SessionProblem::Door | SessionProblem::Setting { .. }) => Class::Invalid,
            AclError::Door(DoorProblem::TooManyRows { .. } | DoorProblem::TooManyBytes { .. }) => Class::Refused,
            AclError::Door(_) => Class::Invalid,
            AclError::Session(SessionProblem::AtCap { .. } | SessionProblem::GroupsFull { .. }) | AclError::SessionRefused { .. } | AclError::SessionEnded { .. } => {
                Class::Refused
            }
            AclError::Internal { .. } | AclError::SecondCheck { .. } => Class::Internal,
            AclError::LacksCapability(_)
            | AclError::NoSingleRole { .. }
            | AclError::NotGranted(_)
            | AclError::Unresolved(_)
            | AclError::FunctionNotPermitted(_)
            | AclError::BadCall(_)
            | AclError::StatementNotPermitted(_)
            | AclError::TypeNotPermitted(_)
            | AclError::LacksScope(_)
            | AclError::SelfGrant(_)
            | AclError::TokenRejected { .. }
            | AclError::ReadOnly(_)
            | AclError::SlicedWrite(_)
            | AclError::Unsupported(_)
            | AclError::StaleView { .. }
            | AclError::Drifted(_)
            | AclError::RolesNotCombinable { .. }
            | AclError::TooLarge(_)
            | AclError::Nesting(_) => Class::Refused,
        }
    }

    /// The error itself, without the statement it was located at.
    pub fn unlocated(&self) -> &AclError {
        match self {
            AclError::At { error, .. } => error.unlocated(),
            e => e,
        }
    }

    /// This error located at statement `index` (from 0) of a batch of `count`: unchanged in a
    /// batch of one, and an error already located stays as it is.
    pub fn at(self, index: usize, count: usize, statement: &str) -> Self {
        if count < 2 || matches!(self, AclError::At { .. }) {
            return self;
        }
        AclError::At { n: index + 1, words: first_words(statement), error: Box::new(self) }
    }

    /// A bug of ours; `detail` is fixed text that names nothing of the statement.
    pub fn internal(detail: &'static str) -> Self {
        AclError::Internal { detail }
    }

    /// A token that did not verify.
    pub fn token(reason: TokenReason) -> Self {
        AclError::TokenRejected { reason }
    }
}

pub type Result<T> = std::result::Result<T, AclError>;

/// The first few words of a statement (at most four words and 40 characters), `…` when cut.
fn first_words(statement: &str) -> String {
    let mut out = String::new();
    let mut words = statement.split_whitespace();
    for (i, w) in words.by_ref().take(4).enumerate() {
        if i > 0 {
            out.push(' ');
        }
        out.push_str(w);
    }
    let cut = out.chars().count() > 40 || words.next().is_some();
    if out.chars().count() > 40 {
        out = out.chars().take(40).collect();
    }
    if cut {
        out.push_str(" …");
    }
    out
}

#[cfg(test)]
mod tests;
