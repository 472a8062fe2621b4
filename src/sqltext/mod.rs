//! SQL as text: quoting identifiers and literals, folding identifiers, the placeholders policy
//! SQL may use (`acl_claim`, `acl_arg`) and their substitution, the names reserved for the
//! rewrite's own markers, and a virtual function body's normalisation. A leaf module: it knows
//! sqlparser and `error`, nothing of policies or principals (what it needs of them is passed in).
mod body;
mod placeholders;

pub use body::{check_reserved, normalise_body};
pub use placeholders::{acl_arg_index, claim_name, is_acl_claim};

/// Identifiers in DuckDB are case-insensitive, quoted or not: policy keys are lower-case.
pub fn norm(ident: &str) -> String {
    ident.to_ascii_lowercase()
}
