//! The store core without DuckDB: the round trip of every kind of record through `rows`/`load`,
//! the diff, and `Store`'s rules (create, load, the version check, rollback, unavailable, the
//! schema version) over the in-memory `fake::Fake` backend.
use super::fake::Fake;
use super::*;
use crate::error::{Invalid, StoreError};
use crate::policy::categories::categorise;

pub(super) fn host() -> Arc<HostFunctions> {
    let r = crate::policy::categories::HostRow::builtin;
    Arc::new(categorise(&[r("lower", "scalar"), r("upper", "scalar"), r("version", "scalar"), r("range", "table"), r("sum", "aggregate")]))
}

pub(super) fn apply(p: &mut Policy, statements: &[&str]) {
    for s in statements {
        let cmd = crate::admin::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"));
        crate::admin::apply(p, &cmd).unwrap_or_else(|e| panic!("{s}: {e}"));
    }
}

pub(super) fn fresh() -> Policy {
    let mut p = Policy::default();
    p.functions.host = host();
    p
}

/// Every kind of record, with every optional field set somewhere.
pub(super) const EVERYTHING: &[&str] = &[
    "CREATE VIRTUAL CATALOG sales COMMENT 'the sales data'",
    "CREATE VIRTUAL CATALOG bare",
    "ALTER VIRTUAL CATALOG sales SET SOURCES (phys, lake.main, crm.s.people)",
    "CREATE VIRTUAL TABLE sales.orders AS phys.main.orders COMMENT 'orders'",
    "CREATE VIRTUAL TABLE sales.eu.masked AS phys.main.orders COLUMNS (id, who = customer, ssn = NULL) RLS (region = 'eu' AND tenant = acl_claim('tenant')) COMMENT 'masked'",
    "CREATE VIRTUAL TABLE sales.cols AS phys.main.orders COLUMNS (id)",
    "CREATE VIRTUAL VIEW sales.totals AS SELECT customer, sum(amount) AS total FROM phys.main.orders GROUP BY customer COMMENT 'a view'",
    "CREATE VIRTUAL SCHEMA sales.raw AS phys.raw COMMENT 'live'",
    "CREATE VIRTUAL SCHEMA bare.lab AS phys.lab",
    "CREATE ROLE analyst",
    "CREATE ROLE agent CLAIMS (tenant = 'acme', tier = 2)",
    "GRANT CATALOG sales TO ROLE analyst WITH (select, explain, temp) MAIN RLS (tenant = 'x') COLUMNS (id, customer = upper(customer))",
    "GRANT CATALOG bare TO ROLE agent",
    "GRANT TABLE sales.orders TO ROLE analyst WITH (select) RLS (id > 0) COLUMNS (id)",
    "GRANT TABLE sales.orders TO ROLE agent",
    "GRANT SCHEMA sales.raw TO ROLE analyst WITH (select, create, drop)",
    "GRANT SCHEMA bare.lab TO ROLE agent COMMENT 'lab access'",
    "CREATE ISSUER 'https://idp.example' KEYS 'hmac:a-shared-secret-of-at-least-32-bytes!' AUDIENCES ('warehouse', 'lake') ALGS (HS256, HS384) ROLE CLAIM 'realm.groups' CLAIM MAP ('org.tenant' => tenant, 'tier' => tier)",
    "CREATE ISSUER 'https://other.example' KEYS 'hmac:another-shared-secret-of-32-bytes!!'",
    "MAP CLAIM 'analysts' FROM ISSUER 'https://idp.example' TO ROLE analyst",
    "MAP CLAIM 'analysts' FROM ISSUER 'https://idp.example' TO ROLE agent",
    "MAP CLAIM 'agents' FROM ISSUER 'https://other.example' TO ROLE agent",
    "CREATE FUNCTION CATEGORY text_tools",
    "ALTER FUNCTION CATEGORY text_tools ADD (lower, phys.main.my_macro)",
    "ALTER FUNCTION CATEGORY base DROP (upper)",
    "ALTER FUNCTION CATEGORY environment ADD (lower)",
    "GRANT FUNCTION CATEGORY text_tools TO ROLE analyst",
    "DENY FUNCTION upper TO ROLE agent",
    "GRANT FUNCTION phys.main.my_macro TO ALL ROLES",
    "DENY FUNCTION CATEGORY environment TO ALL ROLES",
    "REVOKE FUNCTION CATEGORY json FROM ALL ROLES",
    "CREATE VIRTUAL SCALAR sales.gross(x DOUBLE, rate DECIMAL(5, 2)) AS acl_arg(1) * acl_arg(2) COMMENT 'gross'",
    "CREATE VIRTUAL TABLE FUNCTION sales.big(min_amount INTEGER) AS WITH o AS (SELECT * FROM phys.main.orders) SELECT id FROM o WHERE amount >= acl_arg(1)",
    "CREATE VIRTUAL SCALAR sales.low ALIAS OF lower",
    "CREATE VIRTUAL SCALAR sales.low2(s VARCHAR) ALIAS OF lower",
    "CREATE VIRTUAL TABLE FUNCTION sales.nums ALIAS OF range",
    "CREATE VIRTUAL SCALAR sales.addtwo AS acl_arg(1) + acl_arg(2)",
    "CREATE VIRTUAL SCALAR sales.txt(x INTEGER) RETURNS VARCHAR AS acl_arg(1)",
    "CREATE VIRTUAL TABLE FUNCTION sales.typed(x INTEGER) RETURNS TABLE (v BIGINT) AS SELECT acl_arg(1) AS a",
    "GRANT OBJECT sales.gross TO ROLE agent WITH (select)",
    "CREATE VIRTUAL TABLE sales.customers AS phys.main.customers COLUMNS (id NOT NULL, name) PRIMARY KEY (id)",
    "COMMENT ON VIRTUAL TABLE sales.customers COLUMN name IS 'as registered'",
    "CREATE VIRTUAL VIEW sales.declared (a INTEGER NOT NULL, b VARCHAR) AS SELECT 1 AS a, 'x' AS b",
    "CREATE VIRTUAL TABLE sales.kept AS phys.main.levels TYPES (enums = keep)",
    "CREATE VIRTUAL VIEW sales.shown TYPES (enums = varchar) AS SELECT 1 AS a",
    "CREATE VIRTUAL REFERENCE sales.placed_by FROM orders TO customers ON (customer = name, id = id) CARDINALITY MANY_TO_ONE OPTIONAL COMMENT 'who'",
    "CREATE VIRTUAL REFERENCE sales.eu.back FROM customers TO orders ON (id = id)",
    "ALTER ISSUER 'https://other.example' SET UNMAPPED IGNORE",
    "CREATE ROLE operator",
    "CREATE ROLE owner",
    "GRANT ADMIN manage TO ROLE operator",
    "GRANT ADMIN passthrough TO ROLE owner",
    "GRANT CATALOG bare TO ROLE operator WITH (manage)",
    "CREATE RESOURCE GROUP small (max_sessions = 2, max_result_rows = 1000, max_stream_bytes = 1048576)",
    "CREATE RESOURCE GROUP open",
    "GRANT RESOURCE GROUP small TO ROLE analyst",
    "GRANT RESOURCE GROUP open TO ROLE analyst",
];

pub(super) fn everything() -> Policy {
    let mut p = fresh();
    apply(&mut p, EVERYTHING);
    // As `KEYS FROM` leaves it: the path, and no keys (the node reads the file when it publishes).
    let other = p.issuers.get_mut("https://other.example").expect("created");
    other.keys_file = Some("/etc/acl/other.jwks".into());
    other.keys = String::new();
    p
}

#[test]
fn every_record_and_field_survives_the_round_trip() {
    let p = everything();
    let tables = rows(&p);
    // Every table holds something, so nothing is silently skipped.
    for t in layout::TABLES.iter() {
        assert!(!tables.of(t).is_empty(), "{} is empty", t.name);
    }
    let mut back = load(&tables, host(), "t").unwrap();
    back.version = p.version;
    assert_eq!(back, p);
    // The listing rows are a function of the policy alone.
    assert_eq!(rows(&back), tables);
}

/// `TYPES (enums = …)` rides in `objects.declared` (no column of its own): written as its word,
/// read back as it was, absent when the object follows the instance's setting.
#[test]
fn an_objects_enum_exposure_survives_the_round_trip() {
    let mut p = fresh();
    apply(&mut p, &[
        "CREATE VIRTUAL CATALOG c",
        "CREATE VIRTUAL TABLE c.kept AS phys.main.t TYPES (enums = keep)",
        "CREATE VIRTUAL TABLE c.shown AS phys.main.t TYPES (enums = 'VARCHAR') COLUMNS (id) RLS (id > 0)",
        "CREATE VIRTUAL TABLE c.plain AS phys.main.t",
        "ALTER VIRTUAL TABLE c.plain SET TYPES (enums = varchar)",
        "ALTER VIRTUAL TABLE c.plain SET TYPES (enums = default)",
    ]);
    let tables = rows(&p);
    let declared: Vec<(Option<String>, Option<String>)> =
        tables.of(&layout::OBJECTS).iter().map(|r| (r[2].clone(), r[11].clone())).collect();
    assert_eq!(
        declared,
        vec![
            (Some("kept".into()), Some(r#"{"enums":"keep"}"#.into())),
            (Some("plain".into()), None),
            (Some("shown".into()), Some(r#"{"enums":"varchar"}"#.into())),
        ]
    );
    let mut back = load(&tables, host(), "t").unwrap();
    back.version = p.version;
    assert_eq!(back, p);
    let key = |n: &str| crate::policy::ObjKey { catalog: "c".into(), schema: "main".into(), name: n.into() };
    assert_eq!(back.relation(&key("kept")).unwrap().declared.enums, Some(crate::policy::EnumTypes::Keep));
    assert_eq!(back.relation(&key("shown")).unwrap().declared.enums, Some(crate::policy::EnumTypes::Varchar));
    assert_eq!(back.relation(&key("plain")).unwrap().declared.enums, None);
}

#[test]
fn a_lost_field_fails_the_round_trip() {
    let p = everything();
    for (i, t) in layout::TABLES.iter().enumerate() {
        for col in 0..t.width() {
            let mut tables = rows(&p);
            let Some(row) = tables.0[i].iter().find(|r| r[col].is_some()).cloned() else { continue };
            let mut changed = row.clone();
            changed[col] = None;
            tables.0[i].remove(&row);
            tables.0[i].insert(changed);
            // A NULL where a value was: either refused, or a different policy.
            if let Ok(mut back) = load(&tables, host(), "t") {
                back.version = p.version;
                assert_ne!(back, p, "{}.{} is not read back", t.name, t.columns[col].0);
            }
        }
    }
}

#[test]
fn unreadable_records_refuse_the_store() {
    let p = everything();
    let bad = |table: &'static layout::Table, col: usize, value: &str| {
        let mut tables = rows(&p);
        let i = layout::index(table);
        let row = tables.0[i].iter().next().cloned().unwrap();
        let mut changed = row.clone();
        changed[col] = Some(value.into());
        tables.0[i].remove(&row);
        tables.0[i].insert(changed);
        match load(&tables, host(), "t") {
            Err(AclError::Store(StoreError::Corrupt { table: t, .. })) => assert_eq!(t, table.name),
            other => panic!("{}: {other:?}", table.name),
        }
    };
    bad(&layout::CATALOG_GRANTS, 2, "[\"selectt\"]");
    bad(&layout::CATALOG_GRANTS, 0, "nobody");
    bad(&layout::CATALOG_GRANTS, 3, "maybe");
    bad(&layout::OBJECTS, 3, "index");
    bad(&layout::OBJECTS, 0, "nowhere");
    bad(&layout::ISSUERS, 3, "not json");
    bad(&layout::VIRTUAL_FUNCTIONS, 5, "macro");
    // A body that calls what no body may call, written straight into the store.
    bad(&layout::VIRTUAL_FUNCTIONS, 6, "(SELECT * FROM query('SELECT 1'))");
    bad(&layout::FUNCTION_GRANTS, 5, "maybe");
    // A subquery in a predicate or a mask (which could read the store itself), or no expression.
    bad(&layout::CATALOG_GRANTS, 4, "id IN (SELECT 1 FROM aclcat.acl.issuers)");
    bad(&layout::OBJECT_GRANTS, 6, r#"[{"name":"id","expr":"(SELECT max(keys) FROM acl.issuers)"}]"#);
    bad(&layout::OBJECTS, 8, "x > 1; DROP TABLE t");
    // An ENUM exposure that is none (spec 021): refused, never read as the default.
    bad(&layout::OBJECTS, 11, r#"{"enums":"text"}"#);
    bad(&layout::ISSUERS, 1, "hmac:short");
    // An administration scope that is no scope, or of a role the store does not hold.
    bad(&layout::ADMINS, 1, "root");
    bad(&layout::ADMINS, 1, "MANAGE");
    bad(&layout::ADMINS, 0, "nobody");
    // A limit that is no positive number; a group grant of a group or role the store lacks.
    bad(&layout::RESOURCE_GROUPS, 1, "0");
    bad(&layout::RESOURCE_GROUPS, 2, "-5");
    bad(&layout::RESOURCE_GROUP_GRANTS, 1, "nogroup");
    bad(&layout::RESOURCE_GROUP_GRANTS, 0, "nobody");
    // An alias of a never-callable function, or one not qualified as ALIAS OF leaves it.
    let alias = |body: &str| {
        let mut tables = rows(&p);
        let i = layout::index(&layout::VIRTUAL_FUNCTIONS);
        let row = tables.0[i].iter().find(|r| r[5].as_deref() == Some("alias")).cloned().unwrap();
        let mut changed = row.clone();
        changed[6] = Some(body.into());
        tables.0[i].remove(&row);
        tables.0[i].insert(changed);
        load(&tables, host(), "t")
    };
    assert!(alias("system.main.upper").is_ok());
    for body in ["system.main.query_table", "system.main.acl_exec", "query", "main.lower"] {
        assert!(matches!(alias(body), Err(AclError::Store(StoreError::Corrupt { table: "virtual_functions", .. }))), "{body}");
    }
    // A second record under one key.
    let mut tables = rows(&p);
    let i = layout::index(&layout::ROLE_CLAIMS);
    let mut dup = tables.0[i].iter().next().cloned().unwrap();
    dup[2] = Some("other".into());
    tables.0[i].insert(dup);
    assert!(matches!(load(&tables, host(), "t"), Err(AclError::Store(StoreError::Corrupt { table: "role_claims", .. }))));
    // A role holds one scope: two rows of one role are refused, whichever scopes they hold.
    let mut tables = rows(&p);
    let i = layout::index(&layout::ADMINS);
    let mut dup = tables.0[i].iter().find(|r| r[1].as_deref() == Some("manage")).cloned().unwrap();
    dup[1] = Some("passthrough".into());
    tables.0[i].insert(dup);
    assert!(matches!(load(&tables, host(), "t"), Err(AclError::Store(StoreError::Corrupt { table: "admins", .. }))));
}

/// The attacker's words (an operator's hand, or whoever can write the store's tables): "CREATE
/// ISSUER refuses my 1024-bit key, so I write the issuer's row myself; load only parses the keys
/// and nodes enforce whatever the row says." Load makes every check CREATE ISSUER makes, and a row
/// that fails one refuses the whole store (`StoreError::Corrupt`, naming the issuers table).
#[test]
fn hand_edited_issuers_refuse_the_store() {
    let p = everything();
    let edited = |iss: &str, edits: &[(usize, Option<&str>)]| {
        let mut tables = rows(&p);
        let i = layout::index(&layout::ISSUERS);
        let row = tables.0[i].iter().find(|r| r[0].as_deref() == Some(iss)).cloned().unwrap();
        let mut changed = row.clone();
        for (col, value) in edits {
            changed[*col] = value.map(str::to_string);
        }
        tables.0[i].remove(&row);
        tables.0[i].insert(changed);
        load(&tables, host(), "t")
    };
    let refused_all = |iss: &str, edits: &[(usize, Option<&str>)]| match edited(iss, edits) {
        Err(AclError::Store(StoreError::Corrupt { table: "issuers", .. })) => {}
        other => panic!("{iss} {edits:?}: {other:?}"),
    };
    let refused = |iss: &str, col: usize, value: &str| refused_all(iss, &[(col, Some(value))]);
    let inline = "https://idp.example";
    // the keys alone (ALGS emptied, so that nothing but the key's own rule can refuse them)
    let padded = crate::auth::keys::tests::padded_rsa1024_jwk();
    for keys in [padded.clone(), format!(r#"{{"keys": [{padded}]}}"#), crate::auth::test_keys::RSA1024_PUBLIC.to_string(), format!("hmac:0123456789abcdef{}", "\0".repeat(16))] {
        refused_all(inline, &[(1, Some(&keys)), (4, Some("[]"))]);
    }
    assert!(edited(inline, &[(1, Some(crate::auth::test_keys::RSA_PUBLIC)), (4, Some("[]"))]).is_ok(), "a key management takes loads");
    // ALGS as CREATE ISSUER stores them: known, upper-case, never none
    refused(inline, 4, r#"["none"]"#);
    refused(inline, 4, r#"["hs256"]"#);
    refused(inline, 4, r#"["HS256", "RS256"]"#);
    // claim paths and CLAIM MAP names as the grammar admits them
    refused(inline, 5, "realm..groups");
    refused(inline, 6, r#"[["org..tenant", "tenant"]]"#);
    refused(inline, 6, r#"[["org.tenant", "Tenant"]]"#);
    refused(inline, 6, r#"[["org.tenant", "tenant"], ["tier", "tenant"]]"#);
    refused(inline, 6, r#"[["org.tenant", ""]]"#);
    // KEYS FROM takes no URL
    refused("https://other.example", 2, "https://idp.example/jwks.json");
    // A file issuer's keys in the store are not the node's keys: whatever the row holds, the
    // policy loaded holds none (the file is read when the policy is published).
    let back = edited("https://other.example", &[(1, Some("hmac:a-secret-rotated-out-of-the-keys-file"))]).unwrap();
    assert_eq!(back.issuers["https://other.example"].keys, "");
    // and an edit management would make loads
    let back = edited(inline, &[(4, Some(r#"["HS512"]"#))]).unwrap();
    assert_eq!(back.issuers[inline].algs, vec!["HS512".to_string()]);
}

#[test]
fn the_diff_deletes_what_went_and_inserts_what_came() {
    let loc = Location::new(Some("AclCat"), "acl");
    let sql = sql::Sql { dialect: Dialect::DuckDb, location: &loc };
    let before = everything();
    let mut after = before.clone();
    apply(&mut after, &["GRANT CATALOG bare TO ROLE agent WITH (select)", "DROP ROLE analyst", "CREATE ROLE new_one"]);
    let stmts = sql.diff(&rows(&before), &rows(&after));
    assert!(stmts.iter().all(|s| s.contains("\"aclcat\".\"acl\".")), "{stmts:?}");
    let first_insert = stmts.iter().position(|s| s.starts_with("INSERT")).unwrap();
    assert!(stmts[..first_insert].iter().all(|s| s.starts_with("DELETE")));
    assert!(stmts[first_insert..].iter().all(|s| s.starts_with("INSERT")));
    assert!(stmts.iter().any(|s| s.starts_with("DELETE FROM \"aclcat\".\"acl\".\"roles\"") && s.contains("'analyst'")));
    assert!(stmts.iter().any(|s| s.starts_with("INSERT INTO \"aclcat\".\"acl\".\"roles\"") && s.contains("'new_one'")));
    // The changed grant: deleted by its key, inserted whole.
    assert!(stmts.iter().any(|s| s.starts_with("DELETE FROM \"aclcat\".\"acl\".\"catalog_grants\"") && s.contains("'agent'")));
    // Nothing is written for what did not change.
    assert!(!stmts.iter().any(|s| s.contains("issuers")));
    assert!(sql.diff(&rows(&before), &rows(&before)).is_empty());
}

#[test]
fn postgres_spells_text_locks_meta_for_writers_only_and_notifies_on_commit() {
    let loc = Location::new(None, "Pol");
    let pg = sql::Sql { dialect: Dialect::Postgres, location: &loc };
    assert_eq!(pg.read_meta(true), "SELECT \"schema_version\"::text, \"policy_version\"::text FROM \"pol\".\"meta\" FOR UPDATE");
    assert!(!pg.read_meta(false).contains("FOR UPDATE"), "the version poll takes no lock");
    assert_eq!(pg.notify(8).as_deref(), Some("NOTIFY \"acl_policy_pol\", '8'"));
    assert!(pg.catalog_exists().is_none());
    assert!(pg.create_table(&layout::TABLES[0]).contains(" TEXT"));
    let duck = sql::Sql { dialect: Dialect::DuckDb, location: &loc };
    assert!(duck.notify(8).is_none() && !duck.read_meta(true).contains("FOR UPDATE"));
}

fn store(fake: &Arc<Fake>) -> Store {
    Store::new(fake.clone(), Location::new(Some("fake"), "acl"))
}

#[test]
fn create_writes_the_memory_policy_and_a_second_node_loads_it() {
    let fake = Arc::new(Fake::default());
    let s = store(&fake);
    assert!(matches!(s.open(false, &fresh()), Err(AclError::Store(StoreError::Missing { .. }))));
    let memory = everything();
    assert!(matches!(s.open(true, &memory).unwrap(), Opened::Created { version: 1 }));
    assert_eq!(fake.rows("meta"), vec![vec![Some(SCHEMA_VERSION.to_string()), Some("1".into())]]);
    // Create on a store that holds a policy loads it: the store's replaces the memory's.
    match s.open(true, &fresh()).unwrap() {
        Opened::Loaded { mut policy, version } => {
            assert_eq!(version, 1);
            policy.version = memory.version;
            // A loaded policy knows where its store is (never a source); the memory's did not.
            assert_eq!(policy.home.take(), s.home());
            assert_eq!(policy, memory);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_batch_commits_whole_or_not_at_all() {
    let fake = Arc::new(Fake::default());
    let s = store(&fake);
    let mut current = fresh();
    s.open(true, &current).unwrap();
    let c = s.commit(1, &current, &mut |p| {
        apply(p, &["CREATE VIRTUAL CATALOG a", "CREATE ROLE r", "GRANT CATALOG a TO ROLE r"]);
        Ok(())
    });
    let c = c.unwrap();
    assert_eq!((c.version, c.reloaded), (2, false));
    current = c.policy;
    assert_eq!(fake.rows("roles"), vec![vec![Some("r".into())]]);
    // A command that fails after others applied: nothing of the batch is written.
    let before = fake.data.lock().clone();
    let r = s.commit(2, &current, &mut |p| {
        apply(p, &["CREATE ROLE s"]);
        crate::admin::apply(p, &crate::admin::parse("GRANT CATALOG nope TO ROLE s").unwrap())
    });
    assert!(matches!(r, Err(AclError::Invalid(Invalid::Missing { .. }))));
    assert_eq!(fake.data.lock().tables, before.tables);
    // The store refuses a statement in the middle of the write: rolled back, typed.
    *fake.fail_in.lock() = Some(5);
    let r = s.commit(2, &current, &mut |p| {
        apply(p, &["CREATE ROLE s", "CREATE ROLE t", "CREATE VIRTUAL CATALOG b", "GRANT CATALOG b TO ROLE t"]);
        Ok(())
    });
    assert!(matches!(r, Err(AclError::Store(StoreError::Failed { .. }))), "{r:?}");
    assert_eq!(fake.data.lock().tables, before.tables);
}

#[test]
fn another_writers_change_is_read_before_the_batch_applies() {
    let fake = Arc::new(Fake::default());
    let s = store(&fake);
    let node_a = fresh();
    s.open(true, &node_a).unwrap();
    // Node B (the same store) commits a role; node A still holds version 1.
    let (b_policy, v) = s.load(&host()).unwrap();
    let b = s.commit(v, &b_policy, &mut |p| {
        apply(p, &["CREATE ROLE from_b"]);
        Ok(())
    });
    assert_eq!(b.unwrap().version, 2);
    let a = s
        .commit(1, &node_a, &mut |p| {
            // A's batch sees B's role: it was applied to the store's current policy.
            apply(p, &["GRANT FUNCTION version TO ROLE from_b"]);
            Ok(())
        })
        .unwrap();
    assert!(a.reloaded);
    assert_eq!(a.version, 3);
    assert!(a.policy.roles.contains_key("from_b"));
    assert!(a.policy.version >= node_a.version, "the node's counter only moves forward");
}

#[test]
fn a_store_that_went_away_is_unavailable_and_another_schema_version_is_refused() {
    let fake = Arc::new(Fake::default());
    let s = store(&fake);
    let p = fresh();
    s.open(true, &p).unwrap();
    *fake.gone.lock() = true;
    let r = s.commit(1, &p, &mut |_| Ok(()));
    assert!(matches!(r, Err(AclError::Store(StoreError::Unavailable { .. }))), "{r:?}");
    assert!(r.unwrap_err().to_string().starts_with("acl: policy store unavailable"));
    assert!(matches!(s.version(), Err(AclError::Store(StoreError::Unavailable { .. }))));
    *fake.gone.lock() = false;
    assert_eq!(s.version().unwrap(), 1);
    fake.edit(|d| d.tables.get_mut("meta").unwrap().1[0][0] = Some("7".into()));
    let e = s.load(&host()).unwrap_err();
    assert!(matches!(&e, AclError::Store(StoreError::SchemaVersion { found, expected: SCHEMA_VERSION, .. }) if found == "7"), "{e:?}");
    assert!(e.to_string().contains("schema version 7") && e.to_string().contains(&format!("schema version {SCHEMA_VERSION}")), "{e}");
}

/// A store of schema version 3 (before resource groups) or 2 (before `catalog_sources` too) is
/// brought to this layout when a node opens it: the tables later versions added are created,
/// the policy it holds loads, and what it did not have can be written.
#[test]
fn an_older_store_is_upgraded_when_a_node_opens_it() {
    for (from, gone) in [(4, &[][..]), (3, &["resource_groups", "resource_group_grants"][..]), (2, &["catalog_sources", "resource_groups", "resource_group_grants"][..])] {
        let fake = Arc::new(Fake::default());
        let s = store(&fake);
        let mut p = fresh();
        apply(&mut p, &["CREATE VIRTUAL CATALOG sales", "CREATE ROLE analyst"]);
        s.open(true, &p).unwrap();
        fake.edit(|d| {
            for t in gone {
                assert!(d.tables.remove(*t).is_some(), "{t}");
            }
            d.tables.get_mut("meta").unwrap().1[0][0] = Some(from.to_string());
        });
        // Before version 5, schema_grants had no comment.
        fake.edit(|d| {
            let (cols, rows) = d.tables.get_mut("schema_grants").unwrap();
            assert_eq!(cols.pop().as_deref(), Some("comment"));
            rows.iter_mut().for_each(|r| drop(r.pop()));
        });
        let Opened::Loaded { policy, .. } = s.open(false, &p).unwrap() else { panic!("loads") };
        assert!(policy.roles.contains_key("analyst"));
        assert_eq!(fake.data.lock().tables["schema_grants"].0.last().map(String::as_str), Some("comment"), "from {from}");
        assert_eq!(fake.rows("meta")[0][0].as_deref(), Some(SCHEMA_VERSION.to_string().as_str()), "from {from}");
        for t in gone {
            assert!(fake.data.lock().tables.contains_key(*t), "{t} made (from {from})");
        }
        let r = s.commit(1, &policy, &mut |p| {
            apply(p, &["CREATE RESOURCE GROUP g (max_sessions = 1)", "GRANT RESOURCE GROUP g TO ROLE analyst"]);
            Ok(())
        });
        assert!(r.is_ok(), "{r:?}");
        assert_eq!(fake.rows("resource_group_grants"), vec![vec![Some("analyst".into()), Some("g".into())]]);
    }
}

#[test]
fn the_stores_tables_are_never_a_source() {
    let loc = Location::new(Some("aclcat"), "acl");
    let check = |sql: &str| guard::check_command(&loc, "aclcat.acl", &crate::admin::parse(sql).unwrap());
    for bad in [
        "CREATE VIRTUAL TABLE c.t AS aclcat.acl.roles",
        "CREATE VIRTUAL TABLE c.t AS AclCat.ACL.anything",
        "CREATE VIRTUAL TABLE c.t AS aclcat.acl.roles RLS (true)",
        "CREATE VIRTUAL SCHEMA c.s AS aclcat.acl",
        "CREATE VIRTUAL VIEW c.v AS SELECT * FROM aclcat.acl.meta",
        "CREATE VIRTUAL VIEW c.v AS SELECT * FROM acl.roles",
        "CREATE VIRTUAL VIEW c.v AS SELECT * FROM roles",
        "CREATE VIRTUAL VIEW c.v AS SELECT * FROM phys.main.t WHERE id IN (SELECT 1 FROM aclcat.acl.grants)",
        "CREATE VIRTUAL TABLE FUNCTION c.f() AS SELECT * FROM aclcat.acl.issuers",
        "CREATE VIRTUAL SCALAR c.f() AS (SELECT count(*) FROM aclcat.acl.roles)",
        // The reference system's forms that set a source.
        "ALTER VIRTUAL TABLE c.t SET PHYS aclcat.acl.roles",
        "ALTER VIRTUAL VIEW c.v SET AS SELECT * FROM aclcat.acl.meta",
        "ADD TABLE aclcat.acl.roles AS c.t",
        "CREATE VIRTUAL VIEW c.v AS 'SELECT * FROM aclcat.acl.meta'",
    ] {
        assert!(matches!(check(bad), Err(AclError::Invalid(Invalid::StoreSource { .. }))), "{bad}");
    }
    for ok in [
        "CREATE VIRTUAL TABLE c.t AS aclcat.main.roles",
        "CREATE VIRTUAL SCHEMA c.s AS aclcat.main",
        "CREATE VIRTUAL VIEW c.v AS SELECT * FROM phys.acl.roles",
        "CREATE VIRTUAL VIEW c.v AS SELECT * FROM orders",
        "ALTER VIRTUAL TABLE c.t SET PHYS aclcat.main.roles",
        "ALTER VIRTUAL TABLE c.t SET RLS (true)",
    ] {
        assert!(check(ok).is_ok(), "{ok}");
    }
    // A policy made before the store came into use is judged whole.
    let mut p = fresh();
    apply(&mut p, &["CREATE VIRTUAL CATALOG c", "CREATE VIRTUAL VIEW c.v AS SELECT * FROM aclcat.acl.roles"]);
    assert!(guard::check_policy(&loc, "aclcat.acl", &p).is_err());
    assert!(guard::check_policy(&loc, "aclcat.acl", &everything()).is_ok());
    // A PostgreSQL store is out of DuckDB's reach.
    assert!(guard::check_policy(&Location::new(None, "acl"), "pg", &p).is_ok());
}
