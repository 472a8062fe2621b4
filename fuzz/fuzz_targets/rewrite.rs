//! The rewriter on arbitrary text: `acl::rewrite::statement` for each principal of a fixed
//! policy. Properties: no panic; deterministic; an Ok output parses again (sqlparser, DuckDB
//! dialect) and names only `__acl_cte…` CTEs and physical tables the principal's grants reach;
//! a refusal starts with `acl:` and names no physical object the input did not.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

static FIXTURE: OnceLock<acl_fuzz::Fixture> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    let fx = FIXTURE.get_or_init(acl_fuzz::Fixture::new);
    let Some((which, text)) = data.split_first() else { return };
    let Ok(sql) = std::str::from_utf8(text) else { return };
    // On the stack region, as every rewrite runs in the extension (`acl::stack`).
    acl::stack::run(|| acl_fuzz::check_rewrite(fx, usize::from(*which), sql)).expect("the stack region");
});
