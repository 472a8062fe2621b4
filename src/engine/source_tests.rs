//! Management batches as one transaction, and the policy source (spec 006): memory mode, a store
//! coming into use, a failed store, a reload, through the engine over the in-memory backend.
use super::*;
use crate::error::{Invalid, StoreError};
use crate::store::fake::Fake;
use crate::store::{Location, Store};

fn state() -> State {
    State::new()
}

fn batch_sql(s: &State, batch: &str) -> String {
    let toks = |q: &str| -> Result<Vec<Token>> { Ok(prefix::test_tokens(q)) };
    match rewrite(s, batch, &admin::anonymous(false), &toks) {
        Outcome::Rewritten(r) => r.sql,
        other => panic!("{batch}: {other:?}"),
    }
}

fn store(fake: &Arc<Fake>) -> Store {
    Store::new(fake.clone(), Location::new(Some("fake"), "acl"))
}

#[test]
fn a_batch_is_one_call_validated_against_the_policy_as_it_evolves() {
    let s = state();
    let sql = batch_sql(
        &s,
        "ACL ADMIN CREATE VIRTUAL CATALOG c; CREATE VIRTUAL TABLE c.t AS phys.main.t; CREATE ROLE r; \
         GRANT CATALOG c TO ROLE r RLS (x > 1)",
    );
    // The grant's predicate is checked against the table the batch creates before it.
    let stmts: Vec<&str> = sql.split(";\n").collect();
    assert_eq!(stmts.len(), 2, "{sql}");
    assert!(stmts[0].contains("\"phys\".\"main\".\"t\"") && stmts[0].contains("x > 1"), "{sql}");
    assert_eq!(
        stmts[1],
        "SELECT * FROM acl_exec(\"system\".main.list_value('CREATE VIRTUAL CATALOG c', 'CREATE VIRTUAL TABLE c.t AS phys.main.t', \
         'CREATE ROLE r', 'GRANT CATALOG c TO ROLE r RLS (x > 1)'))"
    );
    // A statement that would fail stops the dry run; the batch still becomes its call.
    let sql = batch_sql(&s, "ACL ADMIN GRANT CATALOG nope TO ROLE r; CREATE VIRTUAL CATALOG c COMMENT 'it''s'");
    assert_eq!(sql, "SELECT * FROM acl_exec(\"system\".main.list_value('GRANT CATALOG nope TO ROLE r', 'CREATE VIRTUAL CATALOG c COMMENT ''it''''s'''))");
}

#[test]
fn a_failing_statement_leaves_the_whole_batch_unapplied() {
    let s = state();
    let before = s.policy();
    let e = admin::execute_all(&s, &["CREATE VIRTUAL CATALOG c", "CREATE ROLE a", "GRANT CATALOG nope TO ROLE a"], &admin::anonymous(false), None);
    // located: the third statement of the batch
    assert!(matches!(&e, Err(AclError::At { n: 3, error, .. }) if matches!(**error, AclError::Invalid(Invalid::Missing { .. }))), "{e:?}");
    assert_eq!(s.policy().version, before.version);
    assert!(s.policy().roles.is_empty() && s.policy().catalogs.is_empty());
    let out = admin::execute_all(&s, &["CREATE VIRTUAL CATALOG c", "CREATE ROLE a"], &admin::anonymous(false), None).unwrap();
    assert_eq!(out, vec!["CREATE VIRTUAL CATALOG c", "CREATE ROLE a"]);
    assert!(s.policy().version > before.version);
}

#[test]
fn a_store_in_use_takes_every_batch_before_it_is_published() {
    let s = state();
    admin::execute_all(&s, &["CREATE VIRTUAL CATALOG dev", "CREATE ROLE r"], &admin::anonymous(false), None).unwrap();
    let fake = Arc::new(Fake::default());
    // No store there and no init: refused, memory mode goes on.
    assert!(matches!(source::use_store(&s, store(&fake), false, false), Err(AclError::Store(StoreError::Missing { .. }))));
    assert!(s.store().is_none());
    let msg = source::use_store(&s, store(&fake), true, false).unwrap();
    assert!(msg.contains("created"), "{msg}");
    assert_eq!(fake.rows("roles"), vec![vec![Some("r".into())]], "the memory policy was written");
    assert_eq!(s.store_status().policy_version, 1);

    admin::execute_all(&s, &["CREATE ROLE s", "GRANT CATALOG dev TO ROLE s"], &admin::anonymous(false), None).unwrap();
    assert_eq!(fake.rows("roles").len(), 2);
    assert_eq!(s.store_status().policy_version, 2);

    // The store fails in the middle of the write: nothing published, the store unchanged.
    let (version, tables) = (s.policy().version, fake.data.lock().tables.clone());
    *fake.fail_in.lock() = Some(4);
    let e = admin::execute_all(&s, &["CREATE ROLE t", "CREATE ROLE u"], &admin::anonymous(false), None);
    assert!(matches!(e, Err(AclError::Store(StoreError::Failed { .. }))), "{e:?}");
    assert_eq!(s.policy().version, version);
    assert!(!s.policy().roles.contains_key("t"));
    assert_eq!(fake.data.lock().tables, tables);

    // The store goes away: management fails, typed; the snapshot stays; status says so.
    *fake.gone.lock() = true;
    let e = admin::execute_all(&s, &["CREATE ROLE t"], &admin::anonymous(false), None).unwrap_err();
    assert!(matches!(e, AclError::Store(StoreError::Unavailable { .. })));
    assert!(e.to_string().starts_with("acl: policy store unavailable"), "{e}");
    assert!(s.policy().roles.contains_key("s"));
    let status: std::collections::BTreeMap<_, _> = source::status(&s).into_iter().collect();
    assert_eq!(status["store_healthy"].as_deref(), Some("false"));
    assert!(status["store_error"].as_deref().unwrap_or("").contains("unavailable"));
    *fake.gone.lock() = false;
    let status: std::collections::BTreeMap<_, _> = source::status(&s).into_iter().collect();
    assert_eq!(status["store_healthy"].as_deref(), Some("true"));
    assert_eq!(status["mode"].as_deref(), Some("store"));
    assert_eq!(status["store_changed_since_load"].as_deref(), Some("false"));

    // Another store while this one is in use: refused. The same one again: read again.
    let other = Arc::new(Fake::default());
    let e = source::use_store(&s, Store::new(other, Location::new(Some("other"), "acl")), true, false);
    assert!(matches!(e, Err(AclError::Store(StoreError::InUse { .. }))));
    assert!(source::use_store(&s, store(&fake), false, false).unwrap().contains("reloaded"));
}

#[test]
fn a_direct_edit_is_read_by_the_next_batch_and_by_reload() {
    let s = state();
    let fake = Arc::new(Fake::default());
    source::use_store(&s, store(&fake), true, false).unwrap();
    admin::execute_all(&s, &["CREATE VIRTUAL CATALOG c"], &admin::anonymous(false), None).unwrap();
    // An operator adds a role with SQL and moves the version on.
    let edit = |role: &str, version: &str| {
        fake.edit(|d| {
            d.tables.get_mut("roles").unwrap().1.push(vec![Some(role.into())]);
            d.tables.get_mut("meta").unwrap().1[0][1] = Some(version.into());
        })
    };
    edit("edited", "9");
    assert!(!s.policy().roles.contains_key("edited"), "direct edits are not watched");
    let status: std::collections::BTreeMap<_, _> = source::status(&s).into_iter().collect();
    assert_eq!(status["store_changed_since_load"].as_deref(), Some("true"));
    // The next batch is applied to the store's policy, not the node's stale copy.
    admin::execute_all(&s, &["GRANT CATALOG c TO ROLE edited"], &admin::anonymous(false), None).unwrap();
    assert!(s.policy().roles["edited"].catalog_grants.contains_key("c"));
    assert_eq!(s.store_status().policy_version, 10);
    edit("second", "20");
    let v = s.policy().version;
    source::reload(&s, false).unwrap();
    assert!(s.policy().roles.contains_key("second"));
    assert!(s.policy().version > v, "a reload is a publish: caches start over");
    assert_eq!(s.store_status().policy_version, 20);
}

#[test]
fn a_batch_naming_the_stores_tables_is_refused_when_parsed_and_when_run() {
    let s = state();
    let fake = Arc::new(Fake::default());
    source::use_store(&s, store(&fake), true, false).unwrap();
    admin::execute_all(&s, &["CREATE VIRTUAL CATALOG c"], &admin::anonymous(false), None).unwrap();
    let toks = |q: &str| -> Result<Vec<Token>> { Ok(prefix::test_tokens(q)) };
    let bad = "CREATE VIRTUAL TABLE c.t AS fake.acl.roles";
    match rewrite(&s, &format!("ACL ADMIN {bad}"), &admin::anonymous(false), &toks) {
        Outcome::Refused(AclError::Invalid(Invalid::StoreSource { .. })) => {}
        other => panic!("{other:?}"),
    }
    let e = admin::execute_all(&s, &[bad], &admin::anonymous(false), None);
    assert!(matches!(e, Err(AclError::Invalid(Invalid::StoreSource { .. }))), "{e:?}");
}

#[test]
fn reload_in_memory_mode_and_use_in_a_transaction_are_refused() {
    let s = state();
    assert!(matches!(source::reload(&s, false), Err(AclError::Store(StoreError::MemoryMode))));
    assert!(matches!(source::reload(&s, true), Err(AclError::StatementNotPermitted(_))));
    let fake = Arc::new(Fake::default());
    let e = source::use_store(&s, store(&fake), true, true);
    assert!(matches!(e, Err(AclError::StatementNotPermitted(_))));
    assert!(fake.rows("meta").is_empty());
}

#[test]
fn refresh_publishes_only_a_version_that_moved_and_notes_a_store_gone() {
    let s = state();
    // Memory mode: nothing to refresh.
    assert!(!source::refresh(&s).unwrap());
    let fake = Arc::new(Fake::default());
    source::use_store(&s, store(&fake), true, false).unwrap();
    admin::execute_all(&s, &["CREATE ROLE mine"], &admin::anonymous(false), None).unwrap();
    // This node's own batch is not read back as another's.
    let v = s.policy().version;
    let reads = fake.log.lock().len();
    assert!(!source::refresh(&s).unwrap());
    assert_eq!(s.policy().version, v, "the same version: nothing published");
    assert!(fake.log.lock()[reads..].iter().all(|q| !q.contains("\"roles\"")), "the same version: no table read");
    // Another node committed (as far as this one can tell: the version moved, a role came).
    fake.edit(|d| {
        d.tables.get_mut("roles").unwrap().1.push(vec![Some("theirs".into())]);
        d.tables.get_mut("meta").unwrap().1[0][1] = Some("7".into());
    });
    assert!(source::refresh(&s).unwrap());
    assert!(s.policy().roles.contains_key("theirs") && s.policy().version > v);
    assert_eq!(s.store_status().policy_version, 7);
    // The store gone: the snapshot stays, the status says so; back: healthy again.
    *fake.gone.lock() = true;
    assert!(matches!(source::refresh(&s), Err(AclError::Store(StoreError::Unavailable { .. }))));
    assert!(!s.store_status().healthy && s.policy().roles.contains_key("theirs"));
    *fake.gone.lock() = false;
    assert!(!source::refresh(&s).unwrap());
    assert!(s.store_status().healthy);
}
