/// Finding 5: every statement of a principal's batch has a blob (so the shim translates its
/// errors), also one that names no table; the gateway's management batches have none.
#[test]
fn every_principal_batch_has_a_blob_and_management_none() {
    let s = crate::state::State::new();
    for stmt in [
        "CREATE VIRTUAL CATALOG hr",
        "CREATE VIRTUAL TABLE hr.pay AS secretdb.main.payroll_2024",
        "CREATE ROLE clerk",
        "GRANT CATALOG hr TO ROLE clerk WITH (select) MAIN",
    ] {
        s.execute_admin(stmt).unwrap();
    }
    let run = |q: &str| {
        let toks = crate::prefix::test_tokens(q);
        let batch = crate::prefix::split(q, &toks).unwrap().unwrap();
        crate::rewrite::batch(&s.policy(), &s.tokens, &s.rewrites, &Default::default(), &batch).unwrap().names
    };
    assert_eq!(run("ACL ROLE \"clerk\" SELECT 1"), HEADER);
    let with_table = run("ACL ROLE \"clerk\" SELECT * FROM pay");
    assert!(with_table.starts_with(HEADER) && with_table.contains("T\tpayroll_2024\tpay\n"), "{with_table}");
    assert_eq!(run("ACL ADMIN CREATE ROLE other"), "");
}
