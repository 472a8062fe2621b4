//! The engine's order: what is looked up first, when DuckDB's tokens are asked for, what is kept,
//! and management statements parsed once.
use super::*;
use std::cell::Cell;

/// Applies a management statement as `acl_exec` does (outside a transaction).
#[track_caller]
pub(crate) fn admin(s: &State, stmt: &str) {
    admin::execute(s, stmt, false).unwrap_or_else(|e| panic!("{stmt}: {e}"));
}

fn state() -> State {
    let s = State::new();
    for stmt in [
        "CREATE VIRTUAL CATALOG hr",
        "CREATE VIRTUAL TABLE hr.pay AS secretdb.main.payroll_2024",
        "CREATE ROLE clerk",
        "GRANT CATALOG hr TO ROLE clerk WITH (select) MAIN",
    ] {
        admin(&s, stmt);
    }
    s
}

/// The test tokenizer, counting how often the engine asks for tokens (sqlparser's or DuckDB's).
struct Counting(Cell<usize>);

impl Tokenize for Counting {
    fn tokens(&self, query: &str) -> Result<Vec<Token>> {
        self.0.set(self.0.get() + 1);
        Ok(prefix::test_tokens(query))
    }
    fn own_tokens(&self, query: &str) -> Option<tokens::Lexed> {
        self.0.set(self.0.get() + 1);
        tokens::lex(query)
    }
}

/// A text sqlparser cannot tokenize (an open string), so DuckDB's tokenizer is asked.
const UNTOKENIZABLE: &str = "ACL ROLE \"clerk\" SELECT 'open";

fn rewritten(outcome: Outcome) -> Rewritten {
    match outcome {
        Outcome::Rewritten(r) => r,
        other => panic!("not rewritten: {other:?}"),
    }
}

fn refusal(outcome: Outcome) -> String {
    match outcome {
        Outcome::Refused(e) => e.to_string(),
        other => panic!("not refused: {other:?}"),
    }
}

/// Finding 5: every statement of a principal's batch has a blob (so the shim translates its
/// errors), also one that names no table; management batches the header alone (their validation
/// statements bind with replacement scans off, spec 007).
#[test]
fn every_principal_batch_has_a_blob_and_management_the_header() {
    let s = state();
    let run = |q: &str| {
        let toks = crate::prefix::test_tokens(q);
        let b = crate::prefix::split(q, &toks).unwrap().unwrap();
        batch(&s, &s.policy(), &Default::default(), &b, &no_tokens).unwrap().names
    };
    const HEADER: &str = "acl names\n";
    assert_eq!(run("ACL ROLE \"clerk\" SELECT 1"), HEADER);
    let with_table = run("ACL ROLE \"clerk\" SELECT * FROM pay");
    assert!(with_table.starts_with(HEADER) && with_table.contains("T\tpayroll_2024\tpay\n"), "{with_table}");
    assert_eq!(run("ACL ADMIN CREATE ROLE other"), HEADER);
}

/// `acl_max_rewrite_bytes` is the principal's limit: a management batch is the gateway's own.
#[test]
fn a_management_batch_is_not_held_to_the_rewrite_limit() {
    let s = state();
    let settings = Settings { max_rewrite_bytes: 10, ..Default::default() };
    let r = rewritten(rewrite(&s, "ACL ADMIN CREATE ROLE someone_with_a_long_name", &settings, &Counting(Cell::new(0))));
    assert_eq!(r.sql, "SELECT * FROM acl_exec('CREATE ROLE someone_with_a_long_name')");
    let refused = refusal(rewrite(&s, "ACL ROLE \"clerk\" SELECT * FROM pay", &settings, &Counting(Cell::new(0))));
    assert_eq!(refused, "acl: the statement is too large after the policy is applied");
}

/// The batch cache is asked first: a batch met before is not tokenized again, and is handed
/// over with its entry (which keeps DuckDB's parse); management is never kept.
#[test]
fn a_kept_batch_needs_no_tokens_and_management_is_never_kept() {
    let s = state();
    let tokens = Counting(Cell::new(0));
    let q = "ACL ROLE \"clerk\" SELECT * FROM pay";
    let first = rewritten(rewrite(&s, q, &Default::default(), &tokens));
    assert_eq!(tokens.0.get(), 1);
    assert!(first.kept.is_some());
    let again = rewritten(rewrite(&s, q, &Default::default(), &tokens));
    assert_eq!(tokens.0.get(), 1, "a kept batch is not tokenized");
    assert_eq!((again.sql, again.names, again.statements), (first.sql, first.names, first.statements));
    assert!(Arc::ptr_eq(again.kept.as_ref().unwrap(), first.kept.as_ref().unwrap()));
    // a policy change: the entry no longer holds
    admin(&s, "CREATE ROLE other");
    rewritten(rewrite(&s, q, &Default::default(), &tokens));
    assert_eq!(tokens.0.get(), 2);
    for _ in 0..2 {
        let m = rewritten(rewrite(&s, "ACL ADMIN CREATE ROLE third", &Default::default(), &tokens));
        assert!(m.kept.is_none() && m.principal.is_empty() && m.checks == [None]);
    }
    assert_eq!(tokens.0.get(), 4, "management is tokenized every time");
}

#[test]
fn what_is_not_ours_or_cannot_be_tokenized() {
    let s = state();
    let tokens = Counting(Cell::new(0));
    assert!(matches!(rewrite(&s, "/* acl */ SELECT 1", &Default::default(), &tokens), Outcome::NotOurs));
    let failing = |_: &str| -> Result<Vec<Token>> { Err(AclError::internal("the statement could not be tokenized")) };
    assert_eq!(
        refusal(rewrite(&s, UNTOKENIZABLE, &Default::default(), &failing)),
        "acl: internal error: the statement could not be tokenized"
    );
    let session = refusal(rewrite(&s, "ACL SESSION 'h' SELECT 1", &Default::default(), &tokens));
    assert_eq!(session, "acl: session refused: unknown session");
}

/// A long statement runs on the thread's large stack (`stack::run`; a test thread's own stack is
/// 2 MiB, and sqlparser does not probe for room) and comes back the same; past `MAX_TOKENS`, or
/// past what the stack holds, it is refused.
#[test]
fn long_batches_run_on_the_large_stack_and_the_longest_are_refused() {
    let s = state();
    // 4 096 tokens: about 90 MiB of frames in this (debug) build
    let sum = vec!["1"; 2_048].join("+");
    let q = format!("ACL ROLE \"clerk\" SELECT {sum}");
    let r = rewritten(rewrite(&s, &q, &Default::default(), &Counting(Cell::new(0))));
    assert!(r.sql.starts_with("SELECT 1 + 1"), "{}", &r.sql[..40]);
    // nesting past sqlparser's limit is refused, not overflowed
    let deep = format!("ACL ROLE \"clerk\" SELECT {}1{}", "(".repeat(5_000), ")".repeat(5_000));
    assert!(matches!(rewrite(&s, &deep, &Default::default(), &Counting(Cell::new(0))), Outcome::Refused(AclError::Syntax(_))));
    let over = (1..MAX_TOKENS).find(|n| !crate::stack::fits(*n)).unwrap_or(MAX_TOKENS) / 2 + 1;
    let over = format!("ACL ROLE \"clerk\" SELECT {}", vec!["1"; over].join("+"));
    assert_eq!(refusal(rewrite(&s, &over, &Default::default(), &Counting(Cell::new(0)))), "acl: the statement is too long");
    let nested = format!("ACL ROLE \"clerk\" SELECT {}1{}", "(".repeat(60), ")".repeat(60));
    assert!(matches!(rewrite(&s, &nested, &Default::default(), &Counting(Cell::new(0))), Outcome::Rewritten(_)));
    let many = |_: &str| -> Result<Vec<Token>> { Ok(vec![Token { start: 0, kind: prefix::TokenKind::Operator }; MAX_TOKENS + 1]) };
    assert_eq!(refusal(rewrite(&s, UNTOKENIZABLE, &Default::default(), &many)), "acl: the statement is too long");
    let long = format!("ACL ROLE \"clerk\" SELECT {}", vec!["1"; MAX_TOKENS / 2 + 1].join("+"));
    assert_eq!(refusal(rewrite(&s, &long, &Default::default(), &no_tokens)), "acl: the statement is too long");
}

/// Management statements are parsed once per text (the batch and its `acl_exec`, and a
/// prepared statement run again), and what is kept is the parse of the text alone: everything
/// that depends on the policy is judged again when it is applied.
#[test]
fn a_management_statement_is_parsed_once_and_judged_at_apply() {
    let s = state();
    let before = s.commands.len();
    let grant = "GRANT CATALOG hr TO ROLE temp_role WITH (select)";
    // unknown role: the batch parses it (syntax now), applying it fails
    rewritten(rewrite(&s, &format!("ACL ADMIN {grant}"), &Default::default(), &Counting(Cell::new(0))));
    assert_eq!(s.commands.len(), before + 1);
    let err = admin::execute(&s, grant, false).unwrap_err().to_string();
    assert!(err.contains("temp_role"), "{err}");
    assert_eq!(s.commands.len(), before + 1, "the same text is not parsed again");
    // the same command applies once the policy allows it, and fails again once it does not
    admin(&s, "CREATE ROLE temp_role");
    admin(&s, grant);
    admin(&s, "DROP ROLE temp_role");
    assert_eq!(admin::execute(&s, grant, false).unwrap_err().to_string(), err);
    // a statement that does not parse is refused every time and not kept
    let bad = "GRANT CATALOG hr TO ROLE";
    let first = admin::execute(&s, bad, false).unwrap_err().to_string();
    assert_eq!(admin::execute(&s, bad, false).unwrap_err().to_string(), first);
    assert!(first.starts_with("acl: "), "{first}");
    assert_eq!(s.commands.len(), before + 3, "the grant, CREATE ROLE and DROP ROLE; not the broken one");
    // inside a transaction: refused before anything is parsed
    let refused = admin::execute(&s, "CREATE ROLE in_txn", true).unwrap_err();
    assert_eq!(refused, crate::error::StatementNotPermitted::ManagementInTransaction.into());
    assert!(s.policy().roles.get("in_txn").is_none());
}

/// Validation of a management statement's policy SQL runs against the policy of the moment,
/// also for a command taken from the cache.
#[test]
fn a_cached_command_is_validated_against_the_policy_of_the_moment() {
    let s = state();
    let grant = "GRANT TABLE hr.pay TO ROLE clerk WITH (select) RLS (id > 0)";
    let toks = Counting(Cell::new(0));
    let first = rewritten(rewrite(&s, &format!("ACL ADMIN {grant}"), &Default::default(), &toks));
    assert_eq!(first.statements, 2, "a check of the RLS, then the call: {}", first.sql);
    assert!(first.sql.contains("secretdb"), "{}", first.sql);
    admin(&s, "CREATE OR REPLACE VIRTUAL TABLE hr.pay AS otherdb.main.pay_2025");
    let again = rewritten(rewrite(&s, &format!("ACL ADMIN {grant}"), &Default::default(), &toks));
    assert!(again.sql.contains("otherdb") && !again.sql.contains("secretdb"), "{}", again.sql);
}

/// Each statement of a management batch is checked against the policy the statements before it
/// leave: a grant on a table the batch creates binds its RLS, an ALTER of a view the batch
/// creates is checked against the view's declared columns. Nothing is applied by the batch.
#[test]
fn a_batch_checks_each_statement_against_what_the_earlier_ones_make() {
    let s = state();
    let version = s.policy().version;
    let sql = "ACL ADMIN CREATE VIRTUAL TABLE hr.staff AS secretdb.main.staff; \
               GRANT TABLE hr.staff TO ROLE clerk RLS (dept = 1); \
               CREATE VIRTUAL VIEW hr.v (a INTEGER) AS SELECT 1 AS a; \
               ALTER VIRTUAL VIEW hr.v SET AS SELECT 'x' AS a";
    let out = rewritten(rewrite(&s, sql, &Default::default(), &Counting(Cell::new(0))));
    let stmts: Vec<&str> = out.sql.split(";\n").collect();
    // The checks come first, then one acl_exec applies the batch whole.
    let (exec, checks) = stmts.split_last().unwrap();
    assert!(exec.contains("acl_exec(\"system\".main.list_value(") && exec.contains("ALTER VIRTUAL VIEW"), "{}", out.sql);
    assert!(checks.iter().any(|q| q.contains("\"staff\"") && q.contains("dept = 1")), "{}", out.sql);
    assert!(checks.iter().any(|q| q.contains("does not give its declared columns") && q.contains("'x'")), "{}", out.sql);
    assert_eq!(s.policy().version, version, "parsing a batch applies nothing");
    assert!(s.policy().relation(&crate::policy::ObjKey { catalog: "hr".into(), schema: "main".into(), name: "staff".into() }).is_none());
}

/// No tokenizer (the batch is split already) and no DuckDB to print statements.
fn no_tokens(_: &str) -> crate::error::Result<Vec<crate::prefix::Token>> {
    Err(crate::error::AclError::internal("no tokenizer in this test"))
}
