//! The policy-SQL rules name by name: every author, every class, every spelling of a name.
use super::*;
use crate::policy::categories::{categorise, HostRow};

fn host() -> HostFunctions {
    let r = HostRow::builtin;
    categorise(&[
        r("lower", "scalar"),
        r("sum", "aggregate"),
        r("json_extract", "scalar"),
        r("range", "table"),
        r("unnest", "table"),
        r("read_csv", "table"),
        r("glob", "table"),
        r("duckdb_tables", "table"),
        r("current_setting", "scalar"),
        r("getvariable", "scalar"),
        r("nextval", "scalar"),
        r("checkpoint", "table"),
        r("query_table", "table"),
        r("query", "table"),
        r("acl_exec", "table"),
        r("index_key", "scalar"),
        r("duckdb_table_sample", "table"),
        HostRow { schema: "pg_catalog".into(), ..r("pg_get_viewdef", "scalar") },
    ])
}

fn rules<'a>(host: &'a HostFunctions, author: Author, home: Option<&'a Home>, listed: Option<(&'a str, &'a BTreeSet<Source>)>) -> Rules<'a> {
    Rules { host, author, home, listed }
}

const EVERY: [Author; 3] = [Author::Operator, Author::GlobalManage, Author::CatalogManage];

#[test]
fn the_never_set_listings_node_facts_and_knobs_are_refused_to_every_author_in_every_spelling() {
    let h = host();
    let never = [
        vec!["acl_exec"],
        vec!["ACL_EXEC"],
        vec!["main", "acl_exec"],
        vec!["system", "main", "acl_exec"],
        vec!["query_table"],
        vec!["pg_catalog", "query"],
        vec!["system", "main", "Query"],
        vec!["json_execute_serialized_sql"],
        vec!["postgres_query"],
        vec!["acl_exec_as"],
    ];
    for author in EVERY {
        let r = rules(&h, author, None, None);
        for p in &never {
            for kind in [FnKind::Scalar, FnKind::Table] {
                assert!(matches!(r.function(p, kind), Err(Forbidden::Never { .. })), "{author:?} {p:?}");
            }
        }
        for (p, kind) in [
            (vec!["duckdb_tables"], FnKind::Table),
            (vec!["system", "main", "duckdb_tables"], FnKind::Table),
            (vec!["current_setting"], FnKind::Scalar),
            (vec!["getvariable"], FnKind::Scalar),
            (vec!["nextval"], FnKind::Scalar),
            (vec!["checkpoint"], FnKind::Table),
            (vec!["pg_catalog", "pg_get_viewdef"], FnKind::Scalar),
        ] {
            assert!(matches!(r.function(&p, kind), Err(Forbidden::Category { .. })), "{author:?} {p:?}");
        }
        for (p, kind) in [(vec!["index_key"], FnKind::Scalar), (vec!["duckdb_table_sample"], FnKind::Table)] {
            assert!(matches!(r.function(&p, kind), Err(Forbidden::NamesObject { .. })), "{author:?} {p:?}");
        }
        // Ordinary SQL, in every spelling of a built-in.
        for (p, kind) in [
            (vec!["lower"], FnKind::Scalar),
            (vec!["main", "lower"], FnKind::Scalar),
            (vec!["system", "main", "lower"], FnKind::Scalar),
            (vec!["sum"], FnKind::Scalar),
            (vec!["json_extract"], FnKind::Scalar),
            (vec!["range"], FnKind::Table),
        ] {
            assert_eq!(r.function(&p, kind), Ok(()), "{author:?} {p:?}");
        }
        // A method call or another schema's macro: never through the search path.
        assert!(matches!(r.function(&["x", "lower"], FnKind::Scalar), Err(Forbidden::Qualifier { .. })));
        assert!(matches!(r.function(&["no_such_fn"], FnKind::Scalar), Err(Forbidden::NotBuiltin { .. })));
        // A table built-in called as a scalar is no built-in of that kind.
        assert!(matches!(r.function(&["range"], FnKind::Scalar), Err(Forbidden::NotBuiltin { .. })));
    }
}

#[test]
fn only_an_operator_reads_files_or_calls_an_attached_databases_functions() {
    let h = host();
    let listed: BTreeSet<Source> = [Source { db: "phys".into(), schema: Some("main".into()), name: None }].into();
    for (author, ok) in [(Author::Operator, true), (Author::GlobalManage, false), (Author::CatalogManage, false)] {
        let r = rules(&h, author, None, (author == Author::CatalogManage).then_some(("c", &listed)));
        for p in [vec!["read_csv"], vec!["glob"], vec!["system", "main", "read_csv"]] {
            let got = r.function(&p, FnKind::Table);
            assert_eq!(got.is_ok(), ok, "{author:?} {p:?}: {got:?}");
            if !ok {
                assert!(matches!(got, Err(Forbidden::Reader { .. })));
            }
        }
        let macro_elsewhere = r.function(&["memory", "main", "m"], FnKind::Scalar);
        assert_eq!(macro_elsewhere.is_ok(), ok, "{author:?}");
    }
    // A catalog manager may call a function of a schema listed for its catalog, and no other.
    let r = rules(&h, Author::CatalogManage, None, Some(("c", &listed)));
    assert_eq!(r.function(&["phys", "main", "m"], FnKind::Scalar), Ok(()));
    assert!(r.function(&["phys", "other", "m"], FnKind::Scalar).is_err());
    // Never in temp or system, or one of ours.
    let op = rules(&h, Author::Operator, None, None);
    for p in [vec!["temp", "main", "m"], vec!["phys", "__acl_x", "m"]] {
        assert!(matches!(op.function(&p, FnKind::Scalar), Err(Forbidden::Reserved { .. })), "{p:?}");
    }
}

#[test]
fn tables_are_three_part_names_outside_temp_system_ours_and_the_store() {
    let h = host();
    let home = Home { db: "aclcat".into(), schema: "acl".into() };
    for author in EVERY {
        let r = rules(&h, author, Some(&home), None);
        assert_eq!(r.table(&["phys", "main", "orders"]), Ok(()));
        for p in [vec!["orders"], vec!["main", "orders"], vec!["duckdb_tables"], vec!["information_schema", "tables"], vec!["a", "b", "c", "d"]] {
            assert!(matches!(r.table(&p), Err(Forbidden::Unqualified { .. })), "{p:?}");
        }
        for p in [
            vec!["temp", "main", "t"],
            vec!["TEMP", "main", "t"],
            vec!["system", "main", "duckdb_tables"],
            vec!["system", "information_schema", "tables"],
            vec!["phys", "main", "__acl_0_t"],
            vec!["__ACL_db", "main", "t"],
        ] {
            assert!(matches!(r.table(&p), Err(Forbidden::Reserved { .. })), "{p:?}");
        }
        for p in [vec!["aclcat", "acl", "issuers"], vec!["ACLCAT", "Acl", "meta"]] {
            assert!(matches!(r.table(&p), Err(Forbidden::Store { .. })), "{p:?}");
        }
        assert!(matches!(r.schema("aclcat", "acl"), Err(Forbidden::Store { .. })));
        assert!(matches!(r.schema("temp", "main"), Err(Forbidden::Reserved { .. })));
        assert_eq!(r.schema("aclcat", "other"), Ok(()));
    }
}

#[test]
fn a_catalog_manager_names_only_what_is_listed_for_its_catalog() {
    let h = host();
    let listed: BTreeSet<Source> = [
        Source { db: "phys".into(), schema: Some("main".into()), name: None },
        Source { db: "lake".into(), schema: None, name: None },
        Source { db: "crm".into(), schema: Some("s".into()), name: Some("People".into()) },
    ]
    .into();
    let none = BTreeSet::new();
    let r = rules(&h, Author::CatalogManage, None, Some(("c", &listed)));
    for ok in [["phys", "main", "orders"], ["PHYS", "Main", "x"], ["lake", "any", "t"], ["crm", "s", "people"]] {
        assert_eq!(r.table(&ok), Ok(()), "{ok:?}");
    }
    for bad in [["phys", "other", "t"], ["crm", "s", "other"], ["elsewhere", "main", "t"]] {
        assert!(matches!(r.table(&bad), Err(Forbidden::NotListed { .. })), "{bad:?}");
    }
    assert_eq!(r.schema("phys", "main"), Ok(()));
    assert_eq!(r.schema("lake", "x"), Ok(()));
    // A table source does not cover its schema.
    assert!(matches!(r.schema("crm", "s"), Err(Forbidden::NotListed { .. })));
    // Nothing listed: nothing.
    let r = rules(&h, Author::CatalogManage, None, Some(("c", &none)));
    assert!(matches!(r.table(&["phys", "main", "orders"]), Err(Forbidden::NotListed { .. })));
    // Other authors are not held to the list.
    let g = rules(&h, Author::GlobalManage, None, None);
    assert_eq!(g.table(&["elsewhere", "main", "t"]), Ok(()));
}

#[test]
fn the_second_checks_rule_refuses_the_never_set_and_listings_in_any_spelling_the_parse_holds() {
    let h = host();
    for bad in [
        vec!["acl_exec"],
        vec!["system", "main", "acl_exec"],
        vec!["query_table"],
        vec!["duckdb_tables"],
        vec!["main", "duckdb_tables"],
        vec!["system", "main", "duckdb_tables"],
        vec!["current_setting"],
        vec!["index_key"],
        vec!["other", "lower"],
        vec!["temp", "main", "m"],
        vec!["a", "b", "c", "d"],
        // a method call `current_setting(t.c)` as DuckDB's binder makes it of `t.c.current_setting()`
        vec!["t", "c", "current_setting"],
        vec!["phys", "main", "duckdb_tables"],
    ] {
        assert!(!call_in_region(&h, &bad), "{bad:?}");
    }
    // Readers and attached databases' functions were judged with their author; syntax the parser
    // makes (an operator, list_value) is no built-in by name here and passes.
    for ok in [vec!["lower"], vec!["read_csv"], vec!["system", "main", "lower"], vec!["phys", "main", "m"], vec!["+"], vec!["list_value"]] {
        assert!(call_in_region(&h, &ok), "{ok:?}");
    }
}
