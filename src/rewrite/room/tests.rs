//! `acl_max_rewrite_bytes`: a batch exactly at the limit is rewritten, one byte less refuses it;
//! a slice takes its room once per statement, a listing ahead for every reference.
use super::super::{principal_batch, RewriteCache, Settings};
use super::Room;
use crate::policy::Policy;
use crate::error::TooLarge;

fn policy() -> Policy {
    let mut p = Policy::default();
    for s in [
        "CREATE VIRTUAL CATALOG s",
        "CREATE VIRTUAL TABLE s.wide AS phys.main.wide COLUMNS (id, a = left(a, 1) || '*', b) RLS (t = acl_claim('t'))",
        "CREATE VIRTUAL TABLE s.plain AS phys.main.plain",
        "CREATE VIRTUAL TABLE s.rows AS phys.main.rows",
        "CREATE VIRTUAL VIEW s.v AS SELECT id FROM phys.main.plain WHERE id > 0",
        "CREATE VIRTUAL SCALAR s.f(x INT) AS acl_arg(1) + acl_arg(1) + 1000000",
        "CREATE VIRTUAL TABLE FUNCTION s.tf(n INT) AS SELECT id FROM phys.main.plain WHERE id > acl_arg(1)",
        "CREATE VIRTUAL SCALAR s.g() AS acl_claim('a_rather_long_claim_name') || acl_claim('t') || 'x'",
        "CREATE ROLE r CLAIMS (t = 'a')",
        "GRANT CATALOG s TO ROLE r WITH (select, insert, delete) MAIN",
        "GRANT TABLE s.rows TO ROLE r WITH (select, insert, delete) RLS (t = acl_claim('t'))",
    ] {
        crate::admin::apply(&mut p, &crate::admin::parse(s).unwrap_or_else(|e| panic!("{s}: {e}")))
            .unwrap_or_else(|e| panic!("{s}: {e}"));
    }
    p
}

fn rewrite(p: &Policy, cache: &RewriteCache, statements: &[&str], limit: u64) -> crate::error::Result<String> {
    let settings = Settings { max_rewrite_bytes: limit, ..Default::default() };
    principal_batch(p, cache, &crate::authz::Principal::role("r"), None, statements, Vec::new(), &settings, &super::super::NoHost).map(|o| o.sql)
}

const TOO_LARGE: &str = "acl: the statement is too large after the policy is applied";

/// Every way a statement grows: the early estimate never refuses what fits, and the exact
/// check refuses one byte over, whether the rewrite is fresh or cached.
#[test]
fn exactly_at_the_limit_runs_and_one_byte_less_is_refused() {
    let p = policy();
    let cases: &[&[&str]] = &[
        &["SELECT id FROM wide, wide AS w2, s.main.wide AS w3"],
        &["WITH wide AS (SELECT * FROM s.wide) SELECT * FROM wide, (SELECT a FROM wide) AS x"],
        &["SELECT * FROM v JOIN v AS v2 USING (id) WHERE id IN (SELECT id FROM wide)"],
        &["SELECT * FROM information_schema.tables, information_schema.columns AS c, information_schema.tables AS t2"],
        &["SELECT f(1), f(id), f(f2.id) FROM plain, plain AS f2"],
        // claims in a body become literals, shorter than the calls
        &["SELECT g(), g(), g(), g()"],
        &["SELECT * FROM tf(1), tf((SELECT id FROM wide LIMIT 1)) AS t2"],
        &["INSERT INTO plain SELECT id FROM wide, wide AS w2"],
        // a CTE named like the object, whose body reads the object: only the body is sliced
        &["WITH wide AS (SELECT id FROM wide) SELECT * FROM wide, wide AS w2, (SELECT id FROM wide) AS w3"],
        // a sliced target is checked, not sliced; only the source is
        &["INSERT INTO rows (id, t) SELECT id, t FROM rows WHERE id > 1"],
        &["DELETE FROM rows WHERE id IN (SELECT id FROM rows WHERE id > 1)"],
        &["SELECT 1 FROM wide", "SELECT 2 FROM wide, wide AS w2", "SHOW ALL TABLES"],
    ];
    for statements in cases {
        let full = rewrite(&p, &RewriteCache::default(), statements, u64::MAX).unwrap();
        let n = full.len() as u64;
        assert_eq!(rewrite(&p, &RewriteCache::default(), statements, n).as_deref(), Ok(full.as_str()), "{statements:?}");
        let err = rewrite(&p, &RewriteCache::default(), statements, n - 1).unwrap_err();
        assert_eq!(err, TooLarge::AfterPolicy.into(), "{statements:?}");
        // cached statements are judged again under the limit of the moment
        let cache = RewriteCache::default();
        rewrite(&p, &cache, statements, u64::MAX).unwrap();
        assert_eq!(rewrite(&p, &cache, statements, n - 1).unwrap_err(), TooLarge::AfterPolicy.into(), "{statements:?}");
        assert_eq!(rewrite(&p, &cache, statements, n).as_deref(), Ok(full.as_str()), "{statements:?}");
    }
}

/// A statement naming a sliced object 500 times holds the object's subquery once (spec 002, "One
/// slice per statement") and takes its room once; a listing is inserted at every reference, and
/// the first reference takes the room for all of them.
#[test]
fn a_slice_takes_its_room_once_and_a_listing_for_every_reference() {
    let p = policy();
    let one = rewrite(&p, &RewriteCache::default(), &["SELECT 1 FROM wide"], u64::MAX).unwrap();
    let refs = (0..500).map(|i| format!("wide AS w{i}")).collect::<Vec<_>>().join(", ");
    let sql = format!("SELECT 1 FROM {refs}");
    let full = rewrite(&p, &RewriteCache::default(), &[&sql], u64::MAX).unwrap();
    assert_eq!(full.matches(r#""phys"."main"."wide""#).count(), 1, "{full}");
    // each later reference adds its CTE's name (`"__acl_s0" AS "w1"`), not the subquery
    assert!(full.len() < one.len() + sql.len() + 500 * 12, "{} bytes", full.len());
    assert_eq!(rewrite(&p, &RewriteCache::default(), &[&sql], full.len() as u64).as_deref(), Ok(full.as_str()));
    let parse = |sql: &str| super::super::parse_one(sql).unwrap();
    let mut room = Room::ahead_of(&parse("INSERT INTO t SELECT 1 FROM information_schema.tables, information_schema.tables AS b"), 70);
    room.take_for_listing("tables", 40).unwrap_err();
    let mut room = Room::ahead_of(&parse("SELECT 1 FROM information_schema.tables, information_schema.tables AS b"), 100);
    room.take_for_listing("tables", 40).unwrap();
    assert_eq!(room.left(), 20);
    room.take_for_listing("tables", 40).unwrap(); // paid already
    assert_eq!(room.left(), 20);
}

#[test]
fn the_refusal_names_nothing() {
    let p = policy();
    let err = rewrite(&p, &RewriteCache::default(), &["SELECT a, b FROM wide"], 10).unwrap_err().to_string();
    assert_eq!(err, TOO_LARGE);
}
