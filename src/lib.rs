//! duckdb-acl: role- and token-scoped access control in front of DuckDB 2.0.
//!
//! `lib.rs` only wires modules together; the C++ shim calls the `ffi` entry points.
pub mod admin;
pub mod auth;
pub mod authz;
pub mod bounded;
pub mod door;
pub mod engine;
pub mod error;
pub mod faults;
pub mod policy;
pub mod prefix;
pub mod rewrite;
pub mod sqltext;
pub mod stack;
pub mod store;

#[cfg(feature = "extension")]
mod ffi;

// Every Rust allocation of the extension, and only Rust's: nothing allocated here is freed by the
// shim or DuckDB, nor the reverse (each side frees its own through `acl_rs_*_free`).
#[cfg(feature = "extension")]
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;
// cpp/acl_ffi.hpp matches the Rust side; runs with the unit tests, which build no `ffi`.
#[cfg(test)]
#[path = "ffi/header.rs"]
mod ffi_header;
