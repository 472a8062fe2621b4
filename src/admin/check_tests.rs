use super::*;

/// A physical catalog that lost some names: a table is missing when its name is in `gone`, and
/// SQL does not bind when it mentions a gone name (DuckDB's binder, roughly).
struct Fake {
    gone: Vec<&'static str>,
    columns: Vec<&'static str>,
}

impl Host for Fake {
    fn columns(&mut self, t: &PhysName) -> Option<Vec<String>> {
        (!self.gone.contains(&t.name.as_str())).then(|| self.columns.iter().map(|c| c.to_string()).collect())
    }
    fn schema_exists(&mut self, _: &str, schema: &str) -> bool {
        !self.gone.contains(&schema)
    }
    fn bind(&mut self, sql: &str) -> std::result::Result<(), String> {
        match self.gone.iter().find(|g| sql.contains(*g)) {
            Some(g) => Err(format!("Referenced column \"{g}\" not found in FROM clause!\nCandidate bindings: \"x\"")),
            None => Ok(()),
        }
    }
}

fn policy(script: &str) -> Policy {
    let mut p = Policy::default();
    // The built-ins the scripts call (policy SQL calling anything else is a finding of its own).
    let r = crate::policy::categories::HostRow::builtin;
    p.functions.host = std::sync::Arc::new(crate::policy::categories::categorise(&[r("upper", "scalar"), r("lower", "scalar")]));
    for s in script.split(';').map(str::trim).filter(|s| !s.is_empty()) {
        crate::admin::apply(&mut p, &crate::admin::parse(s).unwrap()).unwrap();
    }
    p
}

/// The drift findings (the claims nothing sets are `admin::claims`'s own tests).
fn rows(p: &Policy, catalog: Option<&str>, fake: &mut Fake) -> Vec<(String, String, String, String)> {
    check(p, catalog, fake).unwrap().into_iter().filter(|f| f.kind != "claim").map(|f| (f.object, f.finding, f.detail, f.repair)).collect()
}

fn s(x: &str) -> String {
    x.to_string()
}

#[test]
fn a_dropped_column_of_a_slice_is_found_with_a_repair_that_drops_it() {
    let p = policy(
        "CREATE VIRTUAL CATALOG c; CREATE VIRTUAL TABLE c.docs AS phys.main.docs_raw COLUMNS (id NOT NULL, tenant, ssn = ssn_raw) RLS (tenant = acl_claim('t'))",
    );
    let mut fake = Fake { gone: vec!["ssn_raw"], columns: vec!["id", "tenant"] };
    assert_eq!(
        rows(&p, None, &mut fake),
        vec![(s("c.docs"), s("column \"ssn\" no longer binds over its source"), s("no column \"ssn_raw\""), s("ALTER VIRTUAL TABLE c.docs SET COLUMNS (id NOT NULL, tenant)"))]
    );
    // the finding's row has the extensible shape
    let f = &check(&p, Some("c"), &mut fake).unwrap()[0];
    assert_eq!(f.row().len(), COLUMNS.len());
    assert_eq!((f.kind, f.object_type), ("drift", "table"));
}

#[test]
fn a_row_policy_that_no_longer_binds_is_repaired_closed() {
    let p = policy("CREATE VIRTUAL CATALOG c; CREATE VIRTUAL TABLE c.docs AS phys.main.docs_raw RLS (tenant = acl_claim('t'))");
    let mut fake = Fake { gone: vec!["tenant"], columns: vec!["id"] };
    assert_eq!(
        rows(&p, Some("c"), &mut fake),
        vec![(s("c.docs"), s("its row policy no longer binds over its source"), s("no column \"tenant\""), s("ALTER VIRTUAL TABLE c.docs SET RLS (false)"))]
    );
}

#[test]
fn a_missing_source_a_broken_view_and_a_missing_schema() {
    let p = policy(
        "CREATE VIRTUAL CATALOG c; CREATE VIRTUAL TABLE c.gone AS phys.main.gone_tbl;
         CREATE VIRTUAL VIEW c.v AS SELECT a FROM phys.main.gone_view_src;
         CREATE VIRTUAL SCHEMA c.live AS phys.gone_schema;
         CREATE VIRTUAL CATALOG other; CREATE VIRTUAL TABLE other.t AS phys.main.gone_tbl",
    );
    let mut fake = Fake { gone: vec!["gone_tbl", "gone_view_src", "gone_schema"], columns: vec!["a"] };
    let found = rows(&p, Some("c"), &mut fake);
    assert_eq!(found.len(), 3, "{found:?}");
    assert_eq!(found[0], (s("c.live"), s("its source schema no longer exists"), s("schema phys.gone_schema does not exist"), s("DROP VIRTUAL SCHEMA c.live")));
    assert_eq!(found[1], (s("c.gone"), s("its source table no longer exists"), s("table phys.main.gone_tbl does not exist"), s("DROP VIRTUAL TABLE c.gone")));
    assert_eq!(found[2].0, "c.v");
    assert_eq!(found[2].1, "its query no longer binds over its sources");
    assert_eq!(found[2].2, "Referenced column \"gone_view_src\" not found in FROM clause!", "first line only");
    assert_eq!(found[2].3, "DROP VIRTUAL VIEW c.v");
    // every catalog when none is named
    assert_eq!(rows(&p, None, &mut fake).len(), 4);
    assert!(check(&p, Some("nosuch"), &mut fake).unwrap_err().to_string().contains("virtual catalog \"nosuch\" does not exist"));
}

#[test]
fn grants_that_name_a_dropped_column_are_found_per_role() {
    let p = policy(
        "CREATE VIRTUAL CATALOG c; CREATE VIRTUAL TABLE c.docs AS phys.main.docs_raw;
         CREATE ROLE a; GRANT CATALOG c TO ROLE a RLS (tenant = acl_claim('t'));
         CREATE ROLE \"B r\"; GRANT CATALOG c TO ROLE \"B r\"; GRANT TABLE c.docs TO ROLE \"B r\" COLUMNS (id, tenant)",
    );
    let mut fake = Fake { gone: vec!["tenant"], columns: vec!["id"] };
    let found = rows(&p, None, &mut fake);
    assert_eq!(
        found,
        vec![
            (
                s("c.docs"),
                s("the grant of catalog c to role \"a\": its row policy no longer binds over c.docs"),
                s("no column \"tenant\""),
                s("ALTER GRANT CATALOG c TO ROLE a SET RLS (false)")
            ),
            (
                s("c.docs"),
                s("the grant of c.docs to role \"b r\": column \"tenant\" no longer binds over c.docs"),
                s("no column \"tenant\""),
                s("ALTER GRANT TABLE c.docs TO ROLE \"b r\" SET COLUMNS (id)")
            ),
        ]
    );
}

#[test]
fn nothing_is_found_while_everything_binds() {
    let p = policy("CREATE VIRTUAL CATALOG c; CREATE VIRTUAL TABLE c.docs AS phys.main.docs_raw COLUMNS (id, x = upper(name)) RLS (id > 0)");
    assert!(rows(&p, None, &mut Fake { gone: vec![], columns: vec!["id", "name"] }).is_empty());
}

#[test]
fn repair_statements_quote_what_needs_it() {
    assert_eq!(sql_name("docs"), "docs");
    assert_eq!(sql_name("select"), "\"select\"");
    assert_eq!(sql_name("My T"), "\"My T\"");
    assert_eq!(key_sql(&ObjKey { catalog: "c".into(), schema: "eu".into(), name: "t".into() }), "c.eu.t");
}

/// Each ALTER is validated with the rest of the slice in place: a broken predicate and a broken
/// column of one slice get one statement that repairs both; a list with nothing left holds nothing.
#[test]
fn a_slice_broken_twice_gets_one_repair_that_never_widens() {
    let p = policy(
        "CREATE VIRTUAL CATALOG c; CREATE VIRTUAL TABLE c.docs AS phys.main.Docs_Raw COLUMNS (id NOT NULL, tenant, ssn = ssn_raw) RLS (tenant_raw = acl_claim('t')) PRIMARY KEY (id) COMMENT 'the docs';
         CREATE VIRTUAL TABLE c.open AS phys.main.open_raw;
         CREATE ROLE r; GRANT CATALOG c TO ROLE r WITH (select, insert) MAIN COLUMNS (id, ssn_raw) RLS (ssn_raw = 'x');
         CREATE ROLE o; GRANT CATALOG c TO ROLE o WITH (select); GRANT TABLE c.open TO ROLE o COLUMNS (ssn_raw);
         CREATE ROLE b; GRANT CATALOG c TO ROLE b WITH (select); GRANT TABLE c.open TO ROLE b COLUMNS (id, ssn_raw) RLS (ssn_raw = 'y')",
    );
    let mut fake = Fake { gone: vec!["ssn_raw", "tenant_raw"], columns: vec!["id", "tenant"] };
    let found: Vec<_> = check(&p, None, &mut fake).unwrap().into_iter().filter(|f| f.kind != "claim").collect();
    let repairs = |object: &str, what: &str| -> Vec<String> {
        found.iter().filter(|f| f.object == object && f.finding.contains(what)).map(|f| f.repair.clone()).collect()
    };
    let own = "CREATE OR REPLACE VIRTUAL TABLE c.docs AS phys.main.\"Docs_Raw\" COLUMNS (id NOT NULL, tenant) RLS (false) PRIMARY KEY (id) COMMENT 'the docs'";
    assert_eq!(repairs("c.docs", "no longer binds over its source"), vec![own, own]);
    // c.docs's grants are not judged over its broken own slice; c.open's are
    assert_eq!(repairs("c.open", "catalog c to role \"r\""), vec!["GRANT CATALOG c TO ROLE r WITH (select, insert) MAIN COLUMNS (id) RLS (false)"; 2]);
    assert_eq!(repairs("c.open", "c.open to role \"o\""), vec!["GRANT TABLE c.open TO ROLE o CAPS '{}'"]);
    assert_eq!(repairs("c.open", "c.open to role \"b\""), vec!["GRANT TABLE c.open TO ROLE b COLUMNS (id) RLS (false)"; 2]);
    assert_eq!(found.len(), 7, "{found:#?}");
}
