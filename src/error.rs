//! Every refusal or failure the extension reports. Messages start with `acl:` and name only
//! what the principal may see: virtual names it typed or was granted, and capabilities.
use thiserror::Error;

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum AclError {
    /// The text after a prefix is not something we can parse.
    #[error("acl: {0}")]
    Syntax(String),
    /// The principal may not do this; DuckDB shows it as a permission error.
    #[error("acl: {0}")]
    Refused(String),
    /// A management statement that is invalid (it changed nothing).
    #[error("acl: {0}")]
    Invalid(String),
    /// A bug of ours, reported without any statement text.
    #[error("acl: internal error: {0}")]
    Internal(String),
}

impl AclError {
    pub fn syntax(m: impl Into<String>) -> Self {
        AclError::Syntax(m.into())
    }
    pub fn refused(m: impl Into<String>) -> Self {
        AclError::Refused(m.into())
    }
    pub fn invalid(m: impl Into<String>) -> Self {
        AclError::Invalid(m.into())
    }
    pub fn internal(m: impl Into<String>) -> Self {
        AclError::Internal(m.into())
    }
}

pub type Result<T> = std::result::Result<T, AclError>;
