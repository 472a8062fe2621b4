use super::*;
use crate::prefix;
use crate::engine::{batch as run_batch, tests::admin, State};
use crate::rewrite::Settings;

fn tokenize(q: &str) -> Vec<Token> {
    prefix::test_tokens(q)
}

fn state() -> State {
    let s = State::new();
    for stmt in [
        "CREATE VIRTUAL CATALOG sales",
        "CREATE VIRTUAL TABLE sales.orders AS phys.main.orders_tbl",
        "CREATE VIRTUAL TABLE sales.big AS phys.main.orders_tbl COLUMNS (id, amount, region) RLS (amount > 100 AND region = acl_claim('region'))",
        "CREATE ROLE analyst CLAIMS (region = 'eu')",
        "GRANT CATALOG sales TO ROLE analyst WITH (select) MAIN",
        "CREATE ROLE clerk CLAIMS (region = 'us')",
        "GRANT CATALOG sales TO ROLE clerk WITH (select) MAIN",
    ] {
        admin(&s, stmt);
    }
    s
}

const SETTINGS: Settings = Settings {
    clock_skew: 60,
    max_rewrite_bytes: crate::rewrite::DEFAULT_MAX_REWRITE_BYTES,
    in_transaction: false,
    key_times: crate::auth::KeyTimes { refresh_secs: 300, max_stale_secs: 3600 },
    anonymous_admin: false,
    parser_override_off: false,
    faults: crate::faults::Faults { skip_relations: false, unqualified_functions: false, no_defence: false, vfn_args_unresolved: false, vfn_args_in_place: false, slow_keys_file: false, unchecked_policy_sql: false, shared_cte_nested: false },
};

fn direct(s: &State, q: &str) -> Output {
    let toks = tokenize(q);
    let batch = prefix::split(q, &toks).unwrap().unwrap();
    run_batch(s, &s.policy(), &SETTINGS, &batch, &no_tokens).unwrap()
}

/// What the shim's path does on a miss: apply a learned shape, or rewrite and learn.
fn through_shapes(s: &State, q: &str) -> (Output, bool) {
    let toks = tokenize(q);
    let batch = prefix::split(q, &toks).unwrap().unwrap();
    let policy = s.policy();
    let shape = Shape::of(q, &toks, &batch);
    if let Some(out) = shape.as_ref().and_then(|sh| s.shapes.apply(&policy, &s.tokens, &s.sessions, &SETTINGS, sh)).map(|(out, _)| out) {
        return (out, true);
    }
    let out = run_batch(s, &policy, &SETTINGS, &batch, &no_tokens).unwrap();
    if let Some(shape) = shape.as_ref().filter(|sh| s.shapes.met_before(sh)) {
        let (text, shifted) = shape.sentinel_query(&toks);
        let sb = prefix::split(&text, &shifted).unwrap().unwrap();
        if let Ok(sentinel) = run_batch(s, &policy, &SETTINGS, &sb, &no_tokens) {
            s.shapes.learn(shape, &out, &sentinel);
        }
    }
    (out, false)
}

#[test]
fn a_learned_shape_gives_exactly_the_full_rewrite_for_other_numbers() {
    let s = state();
    for template in [
        "ACL ROLE \"analyst\" SELECT region FROM orders WHERE id = {a}",
        "ACL ROLE \"analyst\" SELECT id + {a}, {b} FROM orders ORDER BY 1 LIMIT {b}",
        "ACL ROLE \"analyst\" SELECT region, amount FROM big WHERE id BETWEEN {a} AND {b} ORDER BY 2 DESC",
        "ACL ROLE \"analyst\" SELECT {a} AS x, {a} AS y FROM sales.orders o JOIN big b ON o.id = b.id",
    ] {
        // met once: nothing learned yet; met again: learned; then reused
        for (a, b) in [("42", "7"), ("41", "6")] {
            let q = template.replace("{a}", a).replace("{b}", b);
            let (out, reused) = through_shapes(&s, &q);
            assert!(!reused, "{q}");
            assert_eq!(out, direct(&s, &q));
        }
        for (a, b) in [("43", "8"), ("100", "100"), ("0", "1234567890123456789")] {
            let q = template.replace("{a}", a).replace("{b}", b);
            let (out, reused) = through_shapes(&s, &q);
            assert!(reused, "{q}");
            assert_eq!(out, direct(&s, &q), "{q}");
        }
        // a number of more than 19 digits is no hole: another shape, rewritten in full
        if !template.contains("{b}") {
            continue;
        }
        let q = template.replace("{a}", "0").replace("{b}", "123456789012345678901234567890");
        let (out, reused) = through_shapes(&s, &q);
        assert!(!reused, "{q}");
        assert_eq!(out, direct(&s, &q), "{q}");
    }
}

#[test]
fn shapes_are_per_principal_and_per_policy_version() {
    let s = state();
    let q = |role: &str, n: u32| format!("ACL ROLE \"{role}\" SELECT id FROM big WHERE id = {n}");
    through_shapes(&s, &q("analyst", 1));
    through_shapes(&s, &q("analyst", 1));
    let (out, reused) = through_shapes(&s, &q("clerk", 2));
    assert!(!reused);
    assert!(out.sql.contains("'us'") && !out.sql.contains("'eu'"), "{}", out.sql);
    let (out, reused) = through_shapes(&s, &q("analyst", 3));
    assert!(reused && out.sql.contains("'eu'"), "{}", out.sql);
    admin(&s, "CREATE OR REPLACE ROLE analyst CLAIMS (region = 'apac')");
    admin(&s, "GRANT CATALOG sales TO ROLE analyst WITH (select) MAIN");
    let (out, reused) = through_shapes(&s, &q("analyst", 4));
    assert!(!reused); // met before, so learned again under the new version
    assert!(out.sql.contains("'apac'"), "{}", out.sql);
    let (out, reused) = through_shapes(&s, &q("analyst", 5));
    assert!(reused);
    assert!(out.sql.contains("'apac'"), "{}", out.sql);
}

#[test]
fn what_has_no_shape() {
    let s = state();
    let none = |q: &str| {
        let toks = tokenize(q);
        let batch = prefix::split(q, &toks).unwrap().unwrap();
        Shape::of(q, &toks, &batch).is_none()
    };
    assert!(none("ACL ROLE \"analyst\" SELECT id FROM orders")); // no literal
    assert!(none("ACL ROLE \"analyst\" SELECT 1.5 FROM orders")); // not plain digits
    assert!(none("ACL ROLE \"analyst\" SELECT 1; SELECT 2")); // two statements
    assert!(none("ACL ROLE \"analyst\" SELECT acl_arg(1)")); // the rule that reads a number
    assert!(none("ACL ROLE \"analyst\" SELECT 1, '\0'")); // the hole marker itself
    assert!(none("ACL ADMIN CREATE ROLE r1")); // management
    assert!(!none("ACL ROLE \"analyst\" SELECT 1"));
    drop(s);
}

#[test]
fn a_sentinel_that_does_not_come_back_exactly_once_teaches_nothing() {
    assert!(cut("SELECT 7777777777000000000", 1).is_some());
    assert!(cut("SELECT 7777777777000000000, 7777777777000000000", 1).is_none()); // twice
    assert!(cut("SELECT 1", 1).is_none()); // gone
    assert!(cut("SELECT x7777777777000000000", 1).is_none()); // inside a name
    assert!(cut("SELECT '7777777777000000000'", 1).is_none()); // inside a string
    assert!(cut("SELECT 77777777770000000001", 1).is_none()); // inside a longer number
    let (pieces, holes) = cut("a 7777777777000000001 b 7777777777000000000 c", 2).unwrap();
    assert_eq!((pieces, holes), (vec!["a ".to_string(), " b ".into(), " c".into()], vec![1, 0]));
}

#[test]
fn a_rewrite_that_depends_on_its_numbers_is_not_learned() {
    let s = state();
    let q = "ACL ROLE \"analyst\" SELECT id FROM orders WHERE id = 5";
    let toks = tokenize(q);
    let batch = prefix::split(q, &toks).unwrap().unwrap();
    let shape = Shape::of(q, &toks, &batch).unwrap();
    let actual = direct(&s, q);
    // as if a rule had printed the literal somewhere else too (or changed it)
    let mut sentinel = direct(&s, "ACL ROLE \"analyst\" SELECT id FROM orders WHERE id = 7777777777000000000");
    sentinel.sql = sentinel.sql.replace("7777777777000000000", "7777777777000000000 + 1");
    s.shapes.learn(&shape, &actual, &sentinel);
    assert!(s.shapes.apply(&s.policy(), &s.tokens, &s.sessions, &SETTINGS, &shape).is_none());
    // a different allowed set or names: not learned either
    let mut sentinel = direct(&s, "ACL ROLE \"analyst\" SELECT id FROM orders WHERE id = 7777777777000000000");
    sentinel.names.push_str("x\ty\n");
    s.shapes.learn(&shape, &actual, &sentinel);
    assert!(s.shapes.apply(&s.policy(), &s.tokens, &s.sessions, &SETTINGS, &shape).is_none());
    // the honest pair is learned
    let sentinel = direct(&s, "ACL ROLE \"analyst\" SELECT id FROM orders WHERE id = 7777777777000000000");
    s.shapes.learn(&shape, &actual, &sentinel);
    assert_eq!(s.shapes.apply(&s.policy(), &s.tokens, &s.sessions, &SETTINGS, &shape).unwrap().0, actual);
}

/// A stand-in for the shim's parse: nothing to free.
///
/// # Safety
/// Reads nothing; any pointer will do.
unsafe extern "C" fn no_free(_: *mut std::ffi::c_void) {}

#[test]
fn a_later_instance_finds_each_literal_where_the_kept_parse_has_it() {
    let s = state();
    let q = |a: &str, b: &str| {
        format!("ACL ROLE \"analyst\" SELECT id + {a}, {b} FROM big WHERE id BETWEEN {a} AND {b} ORDER BY 1 LIMIT {b}")
    };
    fn shape_of(q: &str) -> (Shape<'_>, Vec<Token>) {
        let toks = tokenize(q);
        let batch = prefix::split(q, &toks).unwrap().unwrap();
        (Shape::of(q, &toks, &batch).unwrap(), toks)
    }
    through_shapes(&s, &q("1", "2"));
    // learned the second time; the shim keeps that instance's parse once its check passed
    let q2 = q("42", "7");
    let (shape2, toks2) = shape_of(&q2);
    let actual = direct(&s, &q2);
    let (text, shifted) = shape2.sentinel_query(&toks2);
    let sentinel = run_batch(&s, &s.policy(), &SETTINGS, &prefix::split(&text, &shifted).unwrap().unwrap(), &no_tokens).unwrap();
    let used = s.shapes.learn(&shape2, &actual, &sentinel).expect("learned");
    assert!(used.parsed().is_none() && used.parse_wanted());
    // SAFETY: a pointer never read, freed by a function that does nothing.
    used.keep_parse(unsafe { crate::engine::HostParse::new(std::ptr::NonNull::dangling().as_ptr(), no_free) });
    assert!(!used.parse_wanted());
    // a later instance: each hole's literal, in the kept rewrite and in its own
    let q3 = q("123456", "0");
    let (shape3, _) = shape_of(&q3);
    let (out3, used3) = s.shapes.apply(&s.policy(), &s.tokens, &s.sessions, &SETTINGS, &shape3).expect("applied");
    assert_eq!(out3, direct(&s, &q3));
    let kept = used3.parsed().expect("the kept parse");
    assert_eq!(kept.sql(), actual.sql);
    let subs = used3.substitutions(kept);
    assert_eq!(subs.iter().map(|x| (x.old, x.new)).collect::<Vec<_>>(), [("42", "123456"), ("7", "0"), ("42", "123456"), ("7", "0"), ("1", "1"), ("7", "0")]);
    let mut rest = (String::new(), String::new());
    let (mut old_end, mut new_end) = (0, 0);
    for x in &subs {
        assert_eq!(&kept.sql()[x.old_at..x.old_at + x.old.len()], x.old);
        assert_eq!(&out3.sql[x.new_at..x.new_at + x.new.len()], x.new);
        rest.0.push_str(&kept.sql()[old_end..x.old_at]);
        rest.1.push_str(&out3.sql[new_end..x.new_at]);
        (old_end, new_end) = (x.old_at + x.old.len(), x.new_at + x.new.len());
    }
    rest.0.push_str(&kept.sql()[old_end..]);
    rest.1.push_str(&out3.sql[new_end..]);
    assert_eq!(rest.0, rest.1, "the two rewrites differ only in the holes");
}

/// No tokenizer (the batch is split already) and no DuckDB to print statements.
fn no_tokens(_: &str) -> crate::error::Result<Vec<crate::prefix::Token>> {
    Err(crate::error::AclError::internal("no tokenizer in this test"))
}
