//! Write checks on sliced targets: MERGE confinement (every branch on the slice only) and the
//! column rule (every expression of a write names only granted columns).
use crate::authz::{Principal, View};
use crate::error::{AclError, MergeForm, NotGranted, ReadOnly, SlicedWrite, Unsupported};
use crate::policy::categories::categorise;
use crate::policy::Policy;
use crate::rewrite::{statement, statement_allowed, FnGate};
use std::sync::Arc;

/// `c.people` over `hrdb.main.people_tbl(id, tenant, name, ssn)` and `c.other` over
/// `hrdb.main.other_tbl`; role `r` writes the people rows of tenant acme, `r2` every row but
/// not ssn, `r3` both (its predicate calls a function). `other` is not sliced.
fn policy() -> Policy {
    let mut p = Policy::default();
    // ENUM exposure has tests of its own (`enum_tests`): here DuckDB's types keep the SQL as it was.
    p.enum_types = crate::policy::EnumTypes::Keep;
    let host = crate::policy::categories::HostRow::builtin;
    p.functions.host = Arc::new(categorise(&[
        host("error", "scalar"),
        host("lower", "scalar"),
        host("upper", "scalar"),
        host("to_json", "scalar"),
        host("struct_pack", "scalar"),
        host("list_transform", "scalar"),
        host("max", "aggregate"),
        host("count", "aggregate"),
        host("count_star", "aggregate"),
        host("string_agg", "aggregate"),
    ])
    .with_types(crate::rewrite::types::BUILTIN_TYPES.iter().copied()));
    for s in [
        "CREATE VIRTUAL CATALOG c",
        "CREATE VIRTUAL TABLE c.people AS hrdb.main.people_tbl",
        "CREATE VIRTUAL TABLE c.other AS hrdb.main.other_tbl",
        "CREATE ROLE r CLAIMS (tenant = 'acme')",
        "GRANT CATALOG c TO ROLE r WITH (writer) MAIN",
        "GRANT TABLE c.people TO ROLE r RLS (tenant = acl_claim('tenant'))",
        "CREATE ROLE r2",
        "GRANT CATALOG c TO ROLE r2 WITH (writer) MAIN",
        "GRANT TABLE c.people TO ROLE r2 COLUMNS (id, tenant, name)",
        "CREATE ROLE r3 CLAIMS (tenant = 'acme')",
        "GRANT CATALOG c TO ROLE r3 WITH (writer) MAIN",
        "GRANT TABLE c.people TO ROLE r3 RLS (lower(tenant) = acl_claim('tenant')) COLUMNS (id, tenant, name)",
    ] {
        let cmd = crate::admin::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"));
        crate::admin::apply(&mut p, &cmd).unwrap_or_else(|e| panic!("{s}: {e}"));
    }
    p
}

fn run(role: &str, sql: &str) -> crate::error::Result<String> {
    let p = policy();
    let principal = Principal::role(role);
    let view = View::new(&p, &principal)?;
    statement(&view, &FnGate::new(&p, &principal), sql)
}

#[track_caller]
fn rewrites_to(role: &str, sql: &str, expected: &str) {
    assert_eq!(run(role, sql).unwrap(), expected);
}

#[track_caller]
fn contains(role: &str, sql: &str, parts: &[&str]) {
    let out = run(role, sql).unwrap();
    for p in parts {
        assert!(out.contains(p), "{sql}\n=> {out}\ndoes not contain {p}");
    }
}

#[track_caller]
fn refused(role: &str, sql: &str, expected: fn(&AclError) -> bool) {
    let err = run(role, sql).unwrap_err();
    assert!(expected(&err), "{sql}: {err:?}");
    let err = err.to_string();
    assert!(!err.contains("hrdb") && !err.contains("_tbl"), "refusal names a physical object: {err}");
}

/// The principal's own error() after the function gate (a built-in of system.main: its quoted
/// name, which the shim qualifies in DuckDB's parse); the write check's refusal is emitted
/// qualified (a Permission Error, not error()).
const E: &str = r#""error""#;
const CHECK: &str = r#""system".main.acl_write_refused($acl$acl: a row written by MERGE is outside the principal's slice of c.people$acl$)"#;

#[test]
fn by_source_runs_only_on_visible_target_rows() {
    // the finding: every hidden row was "not matched by source" and ran the clause
    rewrites_to(
        "r",
        "MERGE INTO people USING (SELECT 1) s ON true WHEN NOT MATCHED BY SOURCE AND error(ssn) IS NULL THEN DELETE",
        &format!(
            r#"MERGE INTO "hrdb"."main"."people_tbl" AS "people" USING (SELECT true AS "__acl_src", * FROM (SELECT 1) s) AS s ON ("people".tenant = 'acme') AND CASE WHEN ("people".tenant = 'acme') THEN (true) ELSE false END WHEN NOT MATCHED BY SOURCE AND CASE WHEN "people".rowid IS NOT NULL AND ("people".tenant = 'acme') THEN ({E}(ssn) IS NULL) ELSE false END THEN DELETE"#
        ),
    );
    // an unconditional BY SOURCE clause gets the slice as its condition
    contains(
        "r",
        "MERGE INTO people t USING (SELECT 1) s ON true WHEN NOT MATCHED BY SOURCE THEN UPDATE SET tenant = 'acme'",
        &[r#"WHEN NOT MATCHED BY SOURCE AND "t".rowid IS NOT NULL AND ("t".tenant = 'acme') THEN UPDATE SET tenant = CASE WHEN "t".rowid IS NOT NULL AND ("t".tenant = 'acme') THEN (CASE WHEN (('acme') = 'acme') THEN ('acme') ELSE "#],
    );
}

#[test]
fn every_clause_sees_only_its_category() {
    let sql = "MERGE INTO people t USING other s ON t.id = s.id \
               WHEN MATCHED AND s.name = 'x' THEN UPDATE SET tenant = s.tenant \
               WHEN MATCHED THEN DELETE \
               WHEN NOT MATCHED AND s.id > 5 THEN INSERT (id, tenant) VALUES (s.id, s.tenant) \
               WHEN NOT MATCHED THEN DO NOTHING \
               WHEN NOT MATCHED BY SOURCE AND t.name = 'y' THEN UPDATE SET name = t.name \
               WHEN NOT MATCHED BY SOURCE THEN DELETE";
    let matched = r#"s."__acl_src" IS NOT NULL AND "t".rowid IS NOT NULL"#;
    let by_source = r#""t".rowid IS NOT NULL AND ("t".tenant = 'acme')"#;
    contains(
        "r",
        sql,
        &[
            // the source carries the marker, first
            r#"USING (SELECT true AS "__acl_src", * FROM "hrdb"."main"."other_tbl" s) AS s"#,
            // DuckDB evaluates a MATCHED / NOT MATCHED condition only on its category's rows
            &format!("WHEN MATCHED AND s.name = 'x' THEN UPDATE SET tenant = CASE WHEN CASE WHEN {matched} THEN (s.name = 'x') ELSE false END THEN (CASE WHEN ((s.tenant) = 'acme') THEN (s.tenant) ELSE {CHECK} END) END"),
            // an unconditional WHEN MATCHED clause runs nothing of the principal's on any row
            "END WHEN MATCHED THEN DELETE WHEN NOT MATCHED AND",
            r#"WHEN NOT MATCHED AND s.id > 5 THEN INSERT (id, tenant) VALUES (CASE WHEN CASE WHEN s."__acl_src" IS NOT NULL THEN (s.id > 5) ELSE false END THEN (CASE WHEN ((s.tenant) = 'acme') THEN (s.id)"#,
            // an unconditional clause after a conditional one: DuckDB offers it only its category
            r#"WHEN NOT MATCHED THEN DO NOTHING"#,
            &format!("WHEN NOT MATCHED BY SOURCE AND CASE WHEN {by_source} THEN (t.name = 'y') ELSE false END THEN UPDATE SET name = CASE WHEN CASE WHEN {by_source} THEN (t.name = 'y') ELSE false END THEN (t.name) END"),
            // the last clause takes only what the one before left
            &format!("WHEN NOT MATCHED BY SOURCE AND {by_source} THEN DELETE"),
        ],
    );
}

#[test]
fn a_check_fires_only_where_its_clause_writes() {
    // no BY SOURCE: conditions stay as written; checked values are guarded by their clause
    rewrites_to(
        "r",
        "MERGE INTO people t USING other s ON t.id = s.id WHEN MATCHED AND s.id = 1 THEN DELETE WHEN MATCHED THEN UPDATE SET tenant = s.tenant WHEN NOT MATCHED THEN INSERT (id, tenant) VALUES (s.id, 'acme')",
        &format!(
            r#"MERGE INTO "hrdb"."main"."people_tbl" t USING "hrdb"."main"."other_tbl" s ON ("t".tenant = 'acme') AND CASE WHEN ("t".tenant = 'acme') THEN (t.id) END = s.id AND CASE WHEN ("t".tenant = 'acme') THEN (t.id = s.id) ELSE false END WHEN MATCHED AND s.id = 1 THEN DELETE WHEN MATCHED THEN UPDATE SET tenant = CASE WHEN CASE WHEN "t".rowid IS NOT NULL THEN (CASE WHEN s.id = 1 THEN false ELSE true END) ELSE false END THEN (CASE WHEN ((s.tenant) = 'acme') THEN (s.tenant) ELSE {CHECK} END) END WHEN NOT MATCHED THEN INSERT (id, tenant) VALUES (CASE WHEN (('acme') = 'acme') THEN (s.id) ELSE {CHECK} END, CASE WHEN (('acme') = 'acme') THEN ('acme') ELSE {CHECK} END)"#
        ),
    );
    // an unchecked value without BY SOURCE is left alone
    contains(
        "r",
        "MERGE INTO people t USING other s ON t.id = s.id WHEN MATCHED THEN UPDATE SET name = s.name WHEN NOT MATCHED THEN DO NOTHING",
        &["WHEN MATCHED THEN UPDATE SET name = s.name WHEN NOT MATCHED THEN DO NOTHING"],
    );
}

#[test]
fn join_conditions_stay_hash_join_keys() {
    // `<target>.a = <other>.b` is repeated with the target side guarded: a key DuckDB can hash on
    rewrites_to(
        "r",
        "UPDATE people p SET name = o.name FROM other o WHERE o.id = p.id AND p.name <> o.name",
        r#"UPDATE "hrdb"."main"."people_tbl" p SET name = o.name FROM "hrdb"."main"."other_tbl" o WHERE ("p".tenant = 'acme') AND CASE WHEN ("p".tenant = 'acme') THEN (p.id) END = o.id AND CASE WHEN ("p".tenant = 'acme') THEN (o.id = p.id AND p.name <> o.name) ELSE false END"#,
    );
    contains(
        "r",
        "DELETE FROM people USING other o WHERE (people.id = o.id AND o.name = people.name)",
        &[r#"WHERE ("people".tenant = 'acme') AND CASE WHEN ("people".tenant = 'acme') THEN (people.id) END = o.id AND CASE WHEN ("people".tenant = 'acme') THEN (people.name) END = o.name AND CASE"#],
    );
    // not keys: a side that is not a qualified column of the other relation, or an OR
    for sql in [
        "DELETE FROM people USING other o WHERE people.id = o.id + 1",
        "DELETE FROM people USING other o WHERE id = o.id",
        "DELETE FROM people p USING other o WHERE p.id = p.id",
        "DELETE FROM people p USING other o WHERE p.id = people_tbl.id",
        "DELETE FROM people USING other o WHERE people.id = o.id OR o.id = 1",
    ] {
        let out = run("r", sql).unwrap();
        assert!(!out.contains(" END = "), "{sql}\n=> {out}");
    }
}

#[test]
fn merge_sources_keep_their_names() {
    for (source, wrapped) in [
        ("other", r#"(SELECT true AS "__acl_src", * FROM "hrdb"."main"."other_tbl" AS "other") AS other"#),
        ("(SELECT 1 AS id)", r#"(SELECT true AS "__acl_src", * FROM (SELECT 1 AS id)) AS "__acl_source""#),
        ("(VALUES (1)) v(id)", r#"(SELECT true AS "__acl_src", * FROM (VALUES (1)) v (id)) AS v"#),
    ] {
        contains("r", &format!("MERGE INTO people t USING {source} ON true WHEN NOT MATCHED BY SOURCE THEN DELETE"), &[wrapped]);
    }
    refused(
        "r",
        "MERGE INTO people t USING (other a JOIN other b ON a.id = b.id) ON true WHEN NOT MATCHED BY SOURCE THEN DELETE",
        |e| matches!(e, AclError::Unsupported(Unsupported::MergeSource)),
    );
}

#[test]
fn merge_refuses_what_it_cannot_confine() {
    let r = |sql: &str, expected: fn(&AclError) -> bool| refused("r", sql, expected);
    r("MERGE INTO people t USING other s ON t.id = (SELECT max(id) FROM other) WHEN MATCHED THEN DELETE", |e| matches!(e, AclError::SlicedWrite(SlicedWrite::SubqueryInMergeOn { .. })));
    r(
        "MERGE INTO people t USING other s ON t.id = s.id WHEN MATCHED AND EXISTS (SELECT 1) THEN DELETE WHEN NOT MATCHED BY SOURCE THEN DELETE",
        |e| matches!(e, AclError::SlicedWrite(SlicedWrite::SubqueryInBySourceClause { .. })),
    );
    r(
        "MERGE INTO people t USING other s ON t.id = s.id WHEN NOT MATCHED BY SOURCE THEN UPDATE SET name = (SELECT 'x')",
        |e| matches!(e, AclError::SlicedWrite(SlicedWrite::SubqueryInBySourceClause { .. })),
    );
    r("MERGE INTO people t USING other s ON t.id = s.id WHEN MATCHED THEN UPDATE SET *", |e| matches!(e, AclError::SlicedWrite(SlicedWrite::MergeClause { form: MergeForm::UpdateSetStar, .. })));
    r("MERGE INTO people t USING other s ON t.id = s.id WHEN NOT MATCHED THEN INSERT *", |e| matches!(e, AclError::SlicedWrite(SlicedWrite::MergeClause { form: MergeForm::InsertStar, .. })));
    r("MERGE INTO people t USING other s ON t.id = s.id WHEN NOT MATCHED THEN INSERT VALUES (s.id, 'acme', 'n', 's')", |e| matches!(e, AclError::SlicedWrite(SlicedWrite::MustListColumns { .. })));
    r("MERGE INTO people t USING other s ON t.id = s.id WHEN NOT MATCHED THEN INSERT (id) VALUES (s.id)", |e| matches!(e, AclError::SlicedWrite(SlicedWrite::MustSetColumn { column, .. }) if column == "tenant"));
    r(
        "MERGE INTO people t USING other s ON t.id = s.id WHEN MATCHED THEN DELETE WHEN MATCHED AND s.id = 1 THEN DELETE",
        |e| matches!(e, AclError::Unsupported(Unsupported::UnreachableMergeClause { category: "WHEN MATCHED" })),
    );
    // without BY SOURCE no hidden row is in the join: subqueries in clauses are fine
    contains("r", "MERGE INTO people t USING other s ON t.id = s.id WHEN MATCHED AND EXISTS (SELECT 1) THEN DELETE", &["EXISTS (SELECT 1)"]);
    // MERGE … RETURNING needs select and is confined like the rest
    contains("r", "MERGE INTO people t USING other s ON t.id = s.id WHEN MATCHED THEN DELETE RETURNING merge_action, *", &["RETURNING merge_action, *"]);
}

#[test]
fn hidden_columns_stay_hidden_in_every_write_position() {
    let r = |sql: &str, expected: fn(&AclError) -> bool| refused("r2", sql, expected);
    let ssn: fn(&AclError) -> bool = |e| matches!(e, AclError::NotGranted(NotGranted::Column { column, object }) if column == "ssn" && object == "c.people");
    let star: fn(&AclError) -> bool = |e| matches!(e, AclError::SlicedWrite(SlicedWrite::Star { .. }));
    r("UPDATE people SET name = name RETURNING COLUMNS(*)", star);
    r("UPDATE people SET name = name RETURNING COLUMNS('ss.*')", star);
    r("UPDATE people SET name = name RETURNING struct_pack(COLUMNS(*))", star);
    r("UPDATE people SET name = name RETURNING *", |e| matches!(e, AclError::SlicedWrite(SlicedWrite::ReturningStar { .. })));
    r("DELETE FROM people RETURNING people.*", |e| matches!(e, AclError::SlicedWrite(SlicedWrite::ReturningStar { .. })));
    r("UPDATE people SET name = (SELECT people.* EXCLUDE (id, tenant, name)) WHERE id = 3", star);
    r("UPDATE people SET name = name WHERE '111' IN (SELECT people.* EXCLUDE (id, tenant, name)) RETURNING id", star);
    r("UPDATE people SET name = (SELECT * EXCLUDE (id))", star);
    r("UPDATE people p SET name = (SELECT max(q.x) FROM (SELECT ssn AS x) q)", ssn);
    // an unqualified name in a subquery may resolve outward to the target: it must be granted
    r("UPDATE people p SET name = (SELECT max(x) FROM (SELECT o.name AS x FROM other o) q)", |e| matches!(e, AclError::NotGranted(NotGranted::Column { column, .. }) if column == "x"));
    r("UPDATE people SET name = (SELECT o.name FROM other o WHERE o.id = ssn)", ssn);
    r("UPDATE people p SET name = p.ssn", ssn);
    r("UPDATE people p SET name = people.ssn", ssn);
    r("UPDATE people p SET name = p::VARCHAR", |e| matches!(e, AclError::NotGranted(NotGranted::Column { column, .. }) if column == "p"));
    r("UPDATE people SET name = to_json(people)::VARCHAR", |e| matches!(e, AclError::NotGranted(NotGranted::Column { column, .. }) if column == "people"));
    r("UPDATE people SET name = ssn -> '$'", ssn);
    r("UPDATE people SET name = list_transform([1], lambda x: ssn)[1]", ssn);
    // a lambda parameter named like the target: DuckDB binds `people.ssn` to the table
    r("UPDATE people SET name = list_transform([1], lambda people: people.ssn)[1]", ssn);
    r("UPDATE people p SET name = list_transform([1], lambda p: p.ssn)[1]", ssn);
    r("INSERT INTO people (id, tenant, name) VALUES (7, 'acme', 'z') RETURNING hrdb.main.people_tbl.ssn", ssn);
    r("INSERT INTO people (id, tenant, name) VALUES (7, 'acme', 'z') RETURNING main.people_tbl.ssn", ssn);
    r("INSERT INTO people (id, tenant, name) VALUES (7, 'acme', 'z') RETURNING people_tbl.ssn", ssn);
    // the whole row under its physical name: refused like any name that is not a granted column
    let e = run("r2", "INSERT INTO people (id, tenant, name) VALUES (7, 'acme', 'z') RETURNING people_tbl").unwrap_err();
    assert_eq!(e.to_string(), run("r2", "INSERT INTO people (id, tenant, name) VALUES (7, 'acme', 'z') RETURNING people_tb").unwrap_err().to_string().replace("people_tb", "people_tbl"));
    r("INSERT INTO people (id, tenant, name) VALUES (7, 'acme', 'z') ON CONFLICT (ssn) DO NOTHING", ssn);
    r("DELETE FROM people WHERE x.ssn = '1'", |e| matches!(e, AclError::SlicedWrite(SlicedWrite::ForeignQualifier { column, .. }) if column == "ssn"));
    r("DELETE FROM people RETURNING struct_pack(people.*)", star);
    r("MERGE INTO people t USING other s ON t.ssn = s.name WHEN MATCHED THEN DELETE", ssn);
    r("MERGE INTO people t USING other s ON t.id = s.id WHEN MATCHED THEN UPDATE SET name = t.ssn", ssn);
    r("MERGE INTO people t USING other s ON t.id = s.id WHEN NOT MATCHED BY SOURCE AND ssn IS NULL THEN DELETE", ssn);
    r("MERGE INTO people t USING other s ON t.id = s.id WHEN MATCHED THEN DELETE RETURNING COLUMNS(*)", star);
    r("MERGE INTO people t USING other s ON t.id = s.id WHEN MATCHED THEN UPDATE SET ssn = 'x'", |e| matches!(e, AclError::ReadOnly(ReadOnly::Column { column, .. }) if column == "ssn"));
}

#[test]
fn granted_columns_and_other_tables_stay_writable() {
    let ok = |sql: &str| {
        run("r2", sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    };
    ok("UPDATE people SET name = upper(name) WHERE id = 1 RETURNING id, tenant, name, people.name");
    ok("UPDATE people p SET name = o.name FROM other o WHERE o.id = p.id RETURNING p.id");
    ok("UPDATE people SET name = (SELECT max(o.name) FROM other o WHERE o.id = people.id)");
    ok("UPDATE people SET name = (SELECT count(*) FROM other)::VARCHAR");
    ok("UPDATE people SET name = (SELECT string_agg(x.name, ',') FROM (SELECT * FROM other) x)");
    ok("UPDATE people SET name = list_transform([name], lambda x: x || '!')[1]");
    ok("UPDATE people SET name = list_transform([{'f': name}], lambda x: x.f)[1]");
    ok("UPDATE people SET name = list_transform([{'ssn': name}], lambda people: (people).ssn)[1]");
    ok("UPDATE people SET name = list_transform(['x'], lambda ssn: ssn)[1]");
    ok("DELETE FROM people WHERE id IN (SELECT o.id FROM other o) RETURNING id");
    ok("DELETE FROM people USING other o WHERE o.id = people.id");
    ok("INSERT INTO people (id, tenant, name) VALUES (7, 'acme', 'z') RETURNING id, people_tbl.name");
    ok("INSERT INTO people (id, tenant, name) SELECT o.id, 'acme', o.name FROM other o ON CONFLICT (id) DO NOTHING");
    ok("MERGE INTO people t USING other s ON t.id = s.id WHEN MATCHED THEN UPDATE SET name = s.name WHEN NOT MATCHED THEN INSERT (id, tenant, name) VALUES (s.id, s.tenant, s.ssn) RETURNING merge_action, t.id");
    // WHEN NOT MATCHED is bound over the source alone: its names cannot reach the target
    ok("MERGE INTO people t USING other s ON t.id = s.id WHEN NOT MATCHED AND ssn IS NULL THEN INSERT (id, tenant, name) VALUES (id, tenant, ssn)");
}

#[test]
fn the_predicates_functions_are_expected_by_the_second_check() {
    let p = policy();
    let principal = Principal::role("r3");
    let view = View::new(&p, &principal).unwrap();
    let (sql, allowed) = statement_allowed(&view, &FnGate::new(&p, &principal), "DELETE FROM people WHERE id = 1").unwrap();
    assert!(sql.contains(r#"lower("people".tenant) = 'acme'"#), "{sql}");
    assert!(allowed.outside.functions.iter().any(|f| f == &vec!["lower".to_string()]), "{:?}", allowed.outside.functions);
}

/// Positional references and pattern-filtered stars (read from DuckDB's print, spec 016) count or
/// match the physical table's columns inside a write: refused on a column-restricted target,
/// allowed over a subquery's own FROM (a slice there exposes only the granted columns).
#[test]
fn positions_and_star_patterns_never_reach_a_hidden_column_in_a_write() {
    let p = policy();
    let run = |role: &str, sql: &str| {
        let principal = Principal::role(role);
        let view = View::new(&p, &principal)?;
        crate::rewrite::statement_with_host(&view, &FnGate::new(&p, &principal), sql, &crate::rewrite::parse::Echo)
    };
    let positional = |e: &AclError| matches!(e, AclError::SlicedWrite(SlicedWrite::Positional { .. }));
    let star = |e: &AclError| matches!(e, AclError::SlicedWrite(SlicedWrite::Star { .. }));
    for (sql, check) in [
        ("UPDATE people SET name = #4", &positional as &dyn Fn(&AclError) -> bool),
        ("UPDATE people SET name = 'x' WHERE #4 IS NOT NULL", &positional),
        ("DELETE FROM people WHERE #4 = 'ssn-1'", &positional),
        ("UPDATE people SET name = 'x' RETURNING #4", &positional),
        ("UPDATE people SET name = to_json((* ~~ 'ss%'))", &star),
        ("DELETE FROM people WHERE struct_pack((* ~~ 'ss%')) IS NOT NULL", &star),
    ] {
        let e = run("r2", sql).unwrap_err();
        assert!(check(&e), "{sql}: {e:?}");
    }
    // inside a subquery with its own FROM, `#n` counts that FROM's columns: the slice's
    let ok = run("r2", "UPDATE people SET name = (SELECT max(#3) FROM people)").unwrap();
    assert!(ok.contains("max(#3)") && !ok.contains("ssn"), "{ok}");
    // an unrestricted target has nothing to hide
    run("r", "UPDATE people SET name = #3").unwrap();
}

/// `s.people` over the same table, where role `r4`'s grant supplies the tenant (issue 34, item 2).
fn run_supplied(sql: &str) -> crate::error::Result<String> {
    let mut p = policy();
    for s in [
        "CREATE VIRTUAL CATALOG s",
        "CREATE VIRTUAL TABLE s.people AS hrdb.main.people_tbl",
        "CREATE ROLE r4 CLAIMS (tenant = 'acme')",
        "GRANT CATALOG s TO ROLE r4 WITH (writer) MAIN RLS (tenant = acl_claim('tenant')) COLUMNS (id, name, tenant = acl_claim('tenant'))",
    ] {
        let cmd = crate::admin::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"));
        crate::admin::apply(&mut p, &cmd).unwrap_or_else(|e| panic!("{s}: {e}"));
    }
    let principal = Principal::role("r4");
    let view = View::new(&p, &principal)?;
    statement(&view, &FnGate::new(&p, &principal), sql)
}

#[test]
fn a_supplied_column_gets_the_grants_value_on_insert() {
    const CHECK: &str = r#""system".main.acl_write_refused($acl$acl: a row written by INSERT is outside the principal's slice of s.people$acl$)"#;
    // absent: appended; the check reads the supplied value
    assert_eq!(
        run_supplied("INSERT INTO people (id, name) VALUES (1, 'a')").unwrap(),
        format!(r#"INSERT INTO "hrdb"."main"."people_tbl" (id, name, "tenant") SELECT "__acl_new"."id", "__acl_new"."name", ('acme') AS "tenant" FROM (VALUES (1, 'a')) AS "__acl_new" ("id", "name") WHERE CASE WHEN (('acme') = 'acme') THEN true ELSE {CHECK} END"#)
    );
    // listed: the principal's value is dropped in place
    assert_eq!(
        run_supplied("INSERT INTO people (tenant, id) SELECT 'globex', 2").unwrap(),
        format!(r#"INSERT INTO "hrdb"."main"."people_tbl" (tenant, id) SELECT ('acme') AS "tenant", "__acl_new"."id" FROM (SELECT 'globex', 2) AS "__acl_new" ("tenant", "id") WHERE CASE WHEN (('acme') = 'acme') THEN true ELSE {CHECK} END"#)
    );
    // MERGE … INSERT: per row, in place or appended
    let out = run_supplied("MERGE INTO people t USING (SELECT 3 AS id) s ON t.id = s.id WHEN NOT MATCHED THEN INSERT (id, tenant) VALUES (s.id, 'globex')").unwrap();
    let merge_check = r#""system".main.acl_write_refused($acl$acl: a row written by MERGE is outside the principal's slice of s.people$acl$)"#;
    assert!(
        out.ends_with(&format!("WHEN NOT MATCHED THEN INSERT (id, tenant) VALUES (CASE WHEN ((('acme')) = 'acme') THEN (s.id) ELSE {merge_check} END, CASE WHEN ((('acme')) = 'acme') THEN (('acme')) ELSE {merge_check} END)")),
        "{out}"
    );
    let out = run_supplied("MERGE INTO people t USING (SELECT 3 AS id) s ON t.id = s.id WHEN NOT MATCHED THEN INSERT (id) VALUES (s.id)").unwrap();
    assert!(out.contains(r#"INSERT (id, "tenant") VALUES ("#) && out.contains("('acme')"), "{out}");
}

#[test]
fn a_supplied_column_is_neither_set_nor_read_by_a_write() {
    let not_writable = |e: &AclError| matches!(e, AclError::ReadOnly(ReadOnly::Column { column, .. }) if column == "tenant");
    for sql in [
        "UPDATE people SET tenant = 'globex'",
        "UPDATE people SET name = 'x', tenant = 'globex' WHERE id = 1",
        "MERGE INTO people t USING (SELECT 1 AS id) s ON t.id = s.id WHEN MATCHED THEN UPDATE SET tenant = 'globex'",
    ] {
        let err = run_supplied(sql).unwrap_err();
        assert!(not_writable(&err), "{sql}: {err:?}");
    }
    for sql in [
        "DELETE FROM people WHERE tenant = 'acme'",
        "DELETE FROM people RETURNING tenant",
        "UPDATE people SET name = tenant",
        "INSERT INTO people (id) VALUES (1) RETURNING tenant",
    ] {
        let err = run_supplied(sql).unwrap_err();
        assert!(matches!(err, AclError::NotGranted(NotGranted::Column { .. })), "{sql}: {err:?}");
    }
    for sql in ["INSERT INTO people VALUES (1, 'a', 'globex')", "INSERT INTO people DEFAULT VALUES"] {
        let err = run_supplied(sql).unwrap_err();
        assert!(matches!(err, AclError::SlicedWrite(SlicedWrite::MustListColumns { .. })), "{sql}: {err:?}");
    }
}
