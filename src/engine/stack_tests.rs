//! The stack a statement takes (`stack::statement_need`, spec 012 "Stacks sized to the statement"):
//! what the principal's chains and the policy's inserted trees touch, measured on fresh regions.
//! `measure_the_stack_per_level` prints the numbers (run it with `--release --ignored
//! --nocapture`); `a_policy_chain_fits_the_statements_region` holds the bound in every build.
use super::tests::admin;
use super::*;

fn chain(n: usize) -> String {
    (1..=n).map(|i| format!("id = {i}")).collect::<Vec<_>>().join(" OR ")
}

fn state_with_slice(n: usize) -> State {
    let s = State::new();
    let _ = crate::stack::measure(|| {
        for stmt in [
            "CREATE VIRTUAL CATALOG hr".to_string(),
            format!("CREATE VIRTUAL TABLE hr.pay AS db.main.pay RLS ({})", chain(n)),
            "CREATE VIRTUAL TABLE hr.plain AS db.main.plain".to_string(),
            format!("CREATE VIRTUAL SCALAR hr.f(x INTEGER) AS {}", (1..=n).map(|_| "x").collect::<Vec<_>>().join(" + ")),
            "CREATE ROLE clerk".to_string(),
            "GRANT CATALOG hr TO ROLE clerk WITH (select) MAIN".to_string(),
        ] {
            admin(&s, &stmt);
        }
    });
    s
}

fn rewrite_text(s: &State, q: &str) {
    let out = rewrite(s, q, &Settings::default(), &|q: &str| -> Result<Vec<Token>> { Ok(prefix::test_tokens(q)) });
    assert!(matches!(out, Outcome::Rewritten(_)), "{out:?}");
}

/// Stack touched by: the rewrite of a statement reading a sliced object whose RLS is a chain of
/// `n` terms, and of one calling a virtual scalar whose body is such a chain; dropping the
/// slice's tree alone; and a principal's own chain of `n` terms.
fn measured(n: usize) -> [usize; 4] {
    let s = state_with_slice(n);
    let (_, slice) = crate::stack::measure(|| rewrite_text(&s, "ACL ROLE \"clerk\" SELECT * FROM pay"));
    let (_, body) = crate::stack::measure(|| rewrite_text(&s, "ACL ROLE \"clerk\" SELECT f(id) FROM plain"));
    let sql = format!("SELECT * FROM t WHERE {}", chain(n));
    let (tree, _) = crate::stack::measure(|| crate::rewrite::parse::read(&sql, None, &crate::rewrite::parse::NoHost).map(|r| r.stmt));
    let tree = tree.expect("parses");
    let (_, drop) = crate::stack::measure(move || drop(tree));
    let own = format!("ACL ROLE \"clerk\" SELECT {} FROM plain", chain(n));
    let (_, principal) = crate::stack::measure(|| rewrite_text(&State::new().tap_policy(), &own));
    [slice, body, drop, principal]
}

trait TapPolicy {
    fn tap_policy(self) -> State;
}

impl TapPolicy for State {
    fn tap_policy(self) -> State {
        crate::stack::measure(|| {
            for stmt in ["CREATE VIRTUAL CATALOG hr", "CREATE VIRTUAL TABLE hr.plain AS db.main.plain", "CREATE ROLE clerk", "GRANT CATALOG hr TO ROLE clerk WITH (select) MAIN"] {
                admin(&self, stmt);
            }
        });
        self
    }
}

#[test]
#[ignore = "prints measurements; run with --release --ignored --nocapture"]
fn measure_the_stack_per_level() {
    let (a, b) = (500, 2_500);
    let (lo, hi) = (measured(a), measured(b));
    let per = |i: usize| (hi[i] as f64 - lo[i] as f64) / (b - a) as f64;
    println!("per term: slice rewrite {:.0} B, body rewrite {:.0} B, drop {:.0} B, principal's own chain {:.0} B", per(0), per(1), per(2), per(3));
    println!("fixed: slice {} KiB, body {} KiB, drop {} KiB, principal {} KiB (at {a} terms)", lo[0] >> 10, lo[1] >> 10, lo[2] >> 10, lo[3] >> 10);
    println!("policy ratio (rewrite / drop per term): {:.1}", per(0).max(per(1)) / per(2));
}

/// What `stack::POLICY_ROOM` rests on: a policy tree whose drop fits an 8 MiB stack is rewritten
/// within it. Release builds only (a debug build's frames are tens of times larger, and its
/// statements take the large regions anyway).
#[test]
fn the_policy_room_covers_a_policy_tree_that_drops_on_8_mib() {
    if cfg!(debug_assertions) {
        return;
    }
    let (a, b) = (500, 2_500);
    let (lo, hi) = (measured(a), measured(b));
    let per = |i: usize| (hi[i].saturating_sub(lo[i])) as f64 / (b - a) as f64;
    let ratio = per(0).max(per(1)) / per(2).max(1.0);
    let worst = (8u64 << 20) as f64 * ratio;
    assert!(worst <= crate::stack::POLICY_ROOM as f64, "ratio {ratio:.1}: {worst} B > POLICY_ROOM");
}
