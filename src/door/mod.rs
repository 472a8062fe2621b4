//! The Arrow Flight SQL door (issue 33, specs/018-flight-door.md): a gRPC server inside the node
//! that a client (ADBC, JDBC, a BI tool) connects to with a bearer token.
//!
//! The door verifies the token once and opens a session (spec 017); every statement the client
//! sends then runs on a DuckDB connection of the node as `ACL SESSION '<handle>' <sql>`, so it
//! takes the gateway's path — the same rewrite, the same refusals — and nothing else. Results
//! stream as Arrow record batches from DuckDB's own conversion (one chunk, one batch).
//!
//! Layering: the door uses `engine` (sessions, the state) and `node::Node`, which `ffi`
//! implements over DuckDB's C API; nothing below it knows the door. Only the settings are built
//! without the `flight-sql` feature (a build without the door still takes and validates them).
mod limits;
pub use limits::{validate_setting, Limits, DEFAULT_STREAM_IDLE};

#[cfg(feature = "flight-sql")]
pub mod node;
#[cfg(feature = "flight-sql")]
mod auth;
#[cfg(feature = "flight-sql")]
mod budget;
#[cfg(feature = "flight-sql")]
mod catalog;
#[cfg(feature = "flight-sql")]
mod ingest;
#[cfg(feature = "flight-sql")]
mod params;
#[cfg(feature = "flight-sql")]
mod query;
#[cfg(feature = "flight-sql")]
mod server;
#[cfg(feature = "flight-sql")]
mod service;
#[cfg(feature = "flight-sql")]
pub use server::{serve, stop, Doors, ServeArgs};
