//! Refusals of the Arrow Flight SQL door's functions (`acl_flight_serve`, `acl_flight_stop`,
//! spec 018) and of its stream limits. None names a physical object; a URI is the operator's own.
use thiserror::Error;

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum DoorProblem {
    /// This build has no door (built without the `flight-sql` feature).
    #[error("this build of the extension has no Flight SQL door")]
    NotBuilt,
    /// A door serves only a policy kept in a store (spec 006): sessions would otherwise follow a
    /// policy any native connection may change unseen.
    #[error("the Flight SQL door serves only with a policy store in use (acl_use_db or acl_use_postgres first)")]
    NoStore,
    #[error("the Flight SQL door does not serve while acl_allow_anonymous_admin is on")]
    AnonymousAdmin,
    /// Without the strict parser override a statement could reach DuckDB's parser unrewritten.
    #[error("the Flight SQL door serves only while allow_parser_override_extension is 'strict'")]
    NotStrict,
    #[error("cleartext Flight SQL binds loopback addresses only (127.0.0.0/8, ::1, localhost); give a certificate and key to serve {host}")]
    Cleartext { host: String },
    #[error("{uri} is no Flight SQL URI: {why}")]
    Uri { uri: String, why: &'static str },
    #[error("a certificate needs its key, and a key its certificate")]
    HalfTls,
    #[error("the TLS {what} could not be read: {why}")]
    TlsFile { what: &'static str, why: String },
    #[error("could not serve Flight SQL at {uri}: {why}")]
    Bind { uri: String, why: String },
    #[error("a Flight SQL door already serves {uri}")]
    AlreadyServed { uri: String },
    #[error("no Flight SQL door serves {uri} on this node")]
    NotServed { uri: String },
    #[error("{setting} must be {expected}")]
    Setting { setting: &'static str, expected: &'static str },
    /// `acl_max_result_rows` or the session's resource group's `max_result_rows`.
    #[error("the result has more than {max} rows ({limit}); narrow the query")]
    TooManyRows { max: u64, limit: &'static str },
    /// The session's resource group's `max_stream_bytes`.
    #[error("the result is larger than {max} bytes (the resource group's max_stream_bytes); narrow the query")]
    TooManyBytes { max: u64 },
    /// The client did not read for `acl_flight_stream_idle` seconds.
    #[error("the client read nothing for {secs} s (acl_flight_stream_idle); the stream was cut off")]
    StreamIdle { secs: u64 },
    /// The node's buffered result bytes stayed at `acl_node_stream_budget`.
    #[error("the node's stream budget (acl_node_stream_budget, {budget} bytes) stayed full for {secs} s; the stream was cut off")]
    Budget { budget: u64, secs: u64 },
}
