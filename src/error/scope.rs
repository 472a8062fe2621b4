//! Management statements a runner may not run (spec 007, "Administration scopes"): the scope it
//! lacks, or a change to its own grants. Names are the principal's label, the virtual catalog
//! it wrote and role names: never anything physical.
use thiserror::Error;

/// `<principal> lacks <scope> (<statement>)`.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{principal} lacks {needs} ({statement})")]
pub struct LacksScope {
    /// How refusals name the runner: `role "r"`, `token of "x"`, `anonymous ACL ADMIN`.
    pub principal: String,
    pub needs: Scope,
    /// What was refused: the statement's kind (`GRANT CATALOG`, `ACL NATIVE`, …), or why.
    pub statement: &'static str,
}

/// The administration scope a statement needs.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum Scope {
    /// `manage` on a catalog grant of this catalog (global manage and passthrough hold it too).
    #[error("manage on {0}")]
    CatalogManage(String),
    /// `GRANT ADMIN manage` (or passthrough).
    #[error("global manage")]
    GlobalManage,
    /// `GRANT ADMIN passthrough`.
    #[error("passthrough")]
    Passthrough,
    /// What anonymous `ACL ADMIN` needs while a policy store is in use.
    #[error("acl_allow_anonymous_admin")]
    AnonymousAdmin,
}

/// No scope can grant itself more: a principal's management statement may not change what a
/// role it holds is granted, nor leave it holding roles it did not hold.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SelfGrant {
    #[error("{principal} may not change what role \"{role}\" is granted: it holds that role")]
    Role { principal: String, role: String },
    #[error("{principal} may not grant or deny to ALL ROLES: they include its own")]
    AllRoles { principal: String },
    #[error("{principal} would hold role \"{role}\" after this batch: no scope grants itself more")]
    Gains { principal: String, role: String },
}
