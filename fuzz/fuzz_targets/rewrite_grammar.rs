//! The rewriter on SQL from a small grammar (`acl_fuzz::Gen`): names that collide with
//! catalog, CTE and physical names, joins, LATERAL, CTEs (also recursive and DML), DML with
//! RETURNING/ON CONFLICT, MERGE, table functions, never-callable functions, refused statement
//! types. Same properties as `rewrite`, and statement shapes (spec 012) answer as full rewrites.
#![no_main]
use arbitrary::Unstructured;
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

static FIXTURE: OnceLock<acl_fuzz::Fixture> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    let fx = FIXTURE.get_or_init(acl_fuzz::Fixture::new);
    let mut u = Unstructured::new(data);
    let Ok(which) = u.arbitrary::<u8>() else { return };
    let Ok(sql) = acl_fuzz::Gen::new(&mut u).statement() else { return };
    // On the stack region, as every rewrite runs in the extension (`acl::stack`).
    acl::stack::run(|| {
        acl_fuzz::check_rewrite(fx, usize::from(which), &sql);
        acl_fuzz::check_shapes(fx, usize::from(which), &sql);
    })
    .expect("the stack region");
});
