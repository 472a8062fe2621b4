//! Parse tests of the reference system's forms (shared/reference-surface.md, "Management
//! statements"): every alternative spelling gives the same `Command` as its modern twin, and each
//! form's errors.
use super::*;
use crate::error::{AclError, Duplicate, Invalid, Management, Syntax};
use crate::policy::functions::FnKind;
use crate::policy::{Cardinality, Column};

fn p(sql: &str) -> Command {
    parse(sql).unwrap_or_else(|e| panic!("{sql}: {e}"))
}

/// Both spellings parse, into one command.
#[track_caller]
fn same(a: &str, b: &str) -> Command {
    let (x, y) = (p(a), p(b));
    assert_eq!(x, y, "{a}  vs  {b}");
    x
}

fn err(sql: &str) -> AclError {
    parse(sql).expect_err(sql)
}

fn key(c: &str, n: &str) -> ObjKey {
    ObjKey { catalog: c.into(), schema: "main".into(), name: n.into() }
}

#[test]
fn caps_json_is_with() {
    same("GRANT CATALOG c TO ROLE r CAPS '{\"select\": true, \"insert\": true}' MAIN", "GRANT CATALOG c TO ROLE r WITH (select, insert) MAIN");
    same("GRANT CATALOG c TO ROLE r MAIN CAPS '{\"select\": true, \"explain\": true, \"delete\": false}'", "GRANT CATALOG c TO ROLE r WITH (select, explain) MAIN");
    same("GRANT TABLE c.t TO ROLE r CAPS '{\"select\": true}' RLS (a = 1)", "GRANT TABLE c.t TO ROLE r WITH (select) RLS (a = 1)");
    same("GRANT OBJECT c.t TO ROLE r CAPS $${\"update\": true}$$", "GRANT OBJECT c.t TO ROLE r WITH (update)");
    same("GRANT SCHEMA c.s TO ROLE r CAPS '{\"create\": true}'", "GRANT SCHEMA c.s TO ROLE r WITH (create)");
    // the explicit empty set, unlike no clause at all
    let Command::GrantObject { caps, .. } = p("GRANT VIEW c.v TO ROLE r CAPS '{}'") else { panic!() };
    assert_eq!(caps, Some(Caps::NONE));
    let Command::GrantObject { caps, .. } = p("GRANT VIEW c.v TO ROLE r CAPS '{\"manage\": false}'") else { panic!() };
    assert_eq!(caps, Some(Caps::NONE));
    let Command::GrantObject { caps, .. } = p("GRANT VIEW c.v TO ROLE r") else { panic!() };
    assert_eq!(caps, None);
    let Command::GrantCatalog { caps, .. } = p("GRANT CATALOG c TO ROLE r CAPS '{}'") else { panic!() };
    assert_eq!(caps, Caps::NONE);
}

#[test]
fn caps_json_errors() {
    assert_eq!(err("GRANT TABLE c.t TO ROLE r CAPS '{\"manage\": true}'"), Invalid::CatalogOnly { capability: "manage".into() }.into());
    assert_eq!(err("GRANT SCHEMA c.s TO ROLE r CAPS '{\"temp\": true}'"), Invalid::CatalogOnly { capability: "temp".into() }.into());
    assert_eq!(err("GRANT CATALOG c TO ROLE r CAPS '{\"sel\": true}'"), Invalid::CapsName { word: "sel".into() }.into());
    assert_eq!(err("GRANT CATALOG c TO ROLE r CAPS '{\"writer\": true}'"), Invalid::CapsName { word: "writer".into() }.into());
    assert_eq!(err("GRANT CATALOG c TO ROLE r CAPS 'select'"), Invalid::CapsJson.into());
    assert_eq!(err("GRANT CATALOG c TO ROLE r CAPS '{\"select\": 1}'"), Invalid::CapsJson.into());
    assert_eq!(err("GRANT CATALOG c TO ROLE r CAPS '{\"select\": true, \"select\": true}'"), Duplicate::Capability("select".into()).into());
    assert_eq!(err("GRANT CATALOG c TO ROLE r WITH (select) CAPS '{}'"), Management::Twice { clause: "WITH or CAPS" }.into());
    assert!(matches!(err("GRANT CATALOG c TO ROLE r CAPS (select)"), AclError::Syntax(_)));
}

#[test]
fn quoted_claims_are_the_parenthesised_ones() {
    same("CREATE ROLE r CLAIMS 'tenant=acme, tier=1'", "CREATE ROLE r CLAIMS (tenant = 'acme', tier = 1)");
    same("CREATE OR REPLACE ROLE r CLAIMS 'Region=eu'", "CREATE OR REPLACE ROLE r CLAIMS (region = 'eu')");
    same("CREATE ROLE r CLAIMS ''", "CREATE ROLE r");
    let alter = same("ALTER ROLE R SET CLAIMS 'tenant=globex'", "ALTER ROLE r SET CLAIMS (tenant = 'globex')");
    assert_eq!(alter, Command::AlterRoleClaims { name: "r".into(), claims: [("tenant".to_string(), "globex".to_string())].into() });
    assert_eq!(p("ALTER ROLE r SET CLAIMS ''"), Command::AlterRoleClaims { name: "r".into(), claims: Default::default() });
    assert_eq!(err("CREATE ROLE r CLAIMS 'tenant'"), Invalid::ClaimsList.into());
    assert_eq!(err("ALTER ROLE r SET CLAIMS 'a=1,a=2'"), Duplicate::Claim("a".into()).into());
    assert!(matches!(err("ALTER ROLE r SET tenant = 'x'"), AclError::Syntax(_)));
    assert!(matches!(err("ALTER ROLE r CLAIMS 'a=1'"), AclError::Syntax(_)));
}

#[test]
fn quoted_columns_and_rls_are_the_parenthesised_ones() {
    same(
        "CREATE VIRTUAL TABLE c.t AS p.s.t COLUMNS 'id, client = customer, ssn = NULL, email = left(email, 2)' RLS 'tenant = acl_claim(''t'')'",
        "CREATE VIRTUAL TABLE c.t AS p.s.t COLUMNS (id, client = customer, ssn = NULL, email = left(email, 2)) RLS (tenant = acl_claim('t'))",
    );
    same("GRANT CATALOG c TO ROLE r RLS 'a > 1' COLUMNS 'a'", "GRANT CATALOG c TO ROLE r RLS (a > 1) COLUMNS (a)");
    same("GRANT TABLE c.t TO ROLE r COLUMNS 'a,b'", "GRANT TABLE c.t TO ROLE r COLUMNS (a, b)");
    // an empty quoted clause says "none"
    same("CREATE VIRTUAL TABLE c.t AS p.s.t COLUMNS '' RLS ' '", "CREATE VIRTUAL TABLE c.t AS p.s.t");
    // the quoted text is validated as the parenthesised one is
    let subquery = Invalid::Rule("policy expressions may not contain subqueries").into();
    assert_eq!(err("CREATE VIRTUAL TABLE c.t AS p.s.t RLS 'a IN (SELECT 1)'"), subquery);
    assert_eq!(err("GRANT CATALOG c TO ROLE r COLUMNS 'a = (SELECT 1)'"), subquery);
    assert!(matches!(err("GRANT CATALOG c TO ROLE r RLS 'acl_claim(x) = 1'"), AclError::Invalid(Invalid::Rule(_))));
    assert_eq!(err("GRANT CATALOG c TO ROLE r COLUMNS 'a, a'"), Duplicate::Column("a".into()).into());
    // nothing escapes the quoted clause
    for bad in ["a = 1) OR (true", "a = 1; DROP TABLE x", "a = 1 COLUMNS (b)"] {
        assert!(matches!(err(&format!("GRANT CATALOG c TO ROLE r RLS '{bad}'")), AclError::Syntax(Syntax::Management(_))), "{bad}");
    }
    assert!(matches!(err("GRANT CATALOG c TO ROLE r COLUMNS 'a) RLS (true'"), AclError::Syntax(_)));
    assert_eq!(err("GRANT CATALOG c TO ROLE r RLS 'a' RLS 'b'"), Management::Twice { clause: "RLS" }.into());
    assert_eq!(err("GRANT CATALOG c TO ROLE r RLS '' RLS 'b'"), Management::Twice { clause: "RLS" }.into());
}

#[test]
fn not_null_and_primary_key_on_virtual_tables() {
    let cmd = same(
        "CREATE VIRTUAL TABLE c.t AS p.s.t COLUMNS (id NOT NULL, name NULL, n = id * 2) PRIMARY KEY (id) COMMENT 'x'",
        "CREATE VIRTUAL TABLE c.t AS p.s.t COMMENT 'x' PRIMARY KEY 'id' COLUMNS 'id NOT NULL, name, n = id * 2'",
    );
    let Command::CreateTable { slice, declared, .. } = cmd else { panic!() };
    let names: Vec<&str> = slice.columns.as_ref().unwrap().iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["id", "name", "n"]);
    assert_eq!(declared.not_null.iter().collect::<Vec<_>>(), ["id"]);
    assert_eq!(declared.primary_key, ["id"]);
    // a RENAME-form table may declare a key (checked by binding, `validate`)
    let Command::CreateTable { slice, declared, .. } = p("CREATE VIRTUAL TABLE c.t AS p.s.t PRIMARY KEY (A, b)") else { panic!() };
    assert!(slice.is_empty());
    assert_eq!(declared.primary_key, ["a", "b"]);
    assert_eq!(err("CREATE VIRTUAL TABLE c.t AS p.s.t COLUMNS (a) PRIMARY KEY (b)"), Invalid::NotAColumn { column: "b".into(), object: "c.t".into() }.into());
    assert_eq!(err("CREATE VIRTUAL TABLE c.t AS p.s.t PRIMARY KEY (a, a)"), Duplicate::Column("a".into()).into());
    assert_eq!(err("CREATE VIRTUAL TABLE c.t AS p.s.t PRIMARY KEY (a) PRIMARY KEY (a)"), Management::Twice { clause: "PRIMARY KEY" }.into());
    // declarations belong to the object, not to a grant
    for g in ["GRANT CATALOG c TO ROLE r COLUMNS (a NOT NULL)", "GRANT TABLE c.t TO ROLE r COLUMNS 'a NOT NULL'", "ALTER GRANT CATALOG c TO ROLE r SET COLUMNS (a NOT NULL)"] {
        assert!(matches!(err(g), AclError::Invalid(Invalid::Rule(_))), "{g}");
    }
}

#[test]
fn views_declare_columns_and_take_a_quoted_query() {
    let cmd = same(
        "CREATE VIRTUAL VIEW c.v (id INTEGER NOT NULL, Name VARCHAR) PRIMARY KEY (id) COMMENT 'v' AS SELECT id, name FROM p.s.t",
        "CREATE VIRTUAL VIEW c.v (id INTEGER NOT NULL, name VARCHAR) PRIMARY KEY (id) AS 'SELECT id, name FROM p.s.t' COMMENT 'v'",
    );
    let Command::CreateView { declared, query, .. } = cmd else { panic!() };
    assert_eq!(query, "SELECT id, name FROM p.s.t");
    assert_eq!(declared.types, Some(vec![("id".into(), "INTEGER".into()), ("name".into(), "VARCHAR".into())]));
    assert_eq!(declared.not_null.iter().collect::<Vec<_>>(), ["id"]);
    same("CREATE VIRTUAL VIEW c.v AS 'SELECT 1;'", "CREATE VIRTUAL VIEW c.v AS SELECT 1");
    assert_eq!(err("CREATE VIRTUAL VIEW c.v (a INT) PRIMARY KEY (b) AS SELECT 1 AS a"), Invalid::NotAColumn { column: "b".into(), object: "c.v".into() }.into());
    assert_eq!(err("CREATE VIRTUAL VIEW c.v (a INT, A INT) AS SELECT 1, 2"), Duplicate::Column("a".into()).into());
    assert!(matches!(err("CREATE VIRTUAL VIEW c.v AS 'SELECT 1; SELECT 2'"), AclError::Syntax(_)));
    assert!(matches!(err("CREATE VIRTUAL VIEW c.v (a) AS SELECT 1"), AclError::Syntax(_)));
    // the quoted query's sources are checked as the unquoted one's
    for src in ["temp.main.x", "system.main.duckdb_tables", "p.s.__acl_x"] {
        assert!(matches!(err(&format!("CREATE VIRTUAL VIEW c.v AS 'SELECT * FROM {src}'")), AclError::Invalid(Invalid::PhysicalSource { .. })), "{src}");
        assert!(matches!(err(&format!("ADD VIEW 'SELECT * FROM {src}' AS c.v")), AclError::Invalid(Invalid::PhysicalSource { .. })), "{src}");
    }
}

#[test]
fn add_forms_are_create_or_replace() {
    same(
        "ADD TABLE p.s.orders AS c.orders COLUMNS 'id,amount' RLS 'amount > 0'",
        "CREATE OR REPLACE VIRTUAL TABLE c.orders AS p.s.orders COLUMNS (id, amount) RLS (amount > 0)",
    );
    same("add table P.S.T as C.T", "CREATE OR REPLACE VIRTUAL TABLE c.t AS P.S.T");
    same("ADD VIEW c.v AS SELECT 1 AS a", "CREATE OR REPLACE VIRTUAL VIEW c.v AS SELECT 1 AS a");
    same("ADD VIEW 'SELECT 1 AS a' AS c.v", "CREATE OR REPLACE VIRTUAL VIEW c.v AS SELECT 1 AS a");
    same("ADD VIEW c.v (a INTEGER) AS 'SELECT 1 AS a'", "CREATE OR REPLACE VIRTUAL VIEW c.v (a INTEGER) AS SELECT 1 AS a");
    same("ADD SCALAR c.f(x INT) MACRO 'acl_arg(1) + 1'", "CREATE OR REPLACE VIRTUAL SCALAR c.f(x INT) AS acl_arg(1) + 1");
    same(
        "ADD TABLE FUNCTION c.f(n INT) MACRO 'SELECT * FROM range(acl_arg(1))'",
        "CREATE OR REPLACE VIRTUAL TABLE FUNCTION c.f(n INT) AS SELECT * FROM range(acl_arg(1))",
    );
    same("ADD SCALAR c.g ALIAS lower", "CREATE OR REPLACE VIRTUAL SCALAR c.g ALIAS OF lower");
    // an upsert has no IF NOT EXISTS
    assert_eq!(err("ADD SCALAR IF NOT EXISTS c.g ALIAS OF lower"), Management::ReplaceAndIfNotExists.into());
    // the legacy bodies are checked as the modern ones
    assert!(matches!(err("ADD TABLE temp.main.x AS c.t"), AclError::Invalid(Invalid::PhysicalSource { .. })));
    assert!(matches!(err("ADD TABLE FUNCTION c.f(n INT) MACRO 'SELECT * FROM system.main.duckdb_tables'"), AclError::Invalid(Invalid::PhysicalSource { .. })));
    assert!(matches!(err("ADD TABLE FUNCTION c.f(n INT) MACRO 'SELECT * FROM temp.main.t'"), AclError::Invalid(Invalid::PhysicalSource { .. })));
    assert_eq!(err("ADD SCALAR c.f(x INT) MACRO 'acl_arg(2)'"), Invalid::ArgumentPastParameters { arg: 2, params: 1 }.into());
    assert!(matches!(err("ADD SCALAR c.f(x INT) MACRO 'acl_arg(1) +'"), AclError::Syntax(_)));
    assert!(matches!(err("ADD SCALAR c.f(x INT) MACRO 'acl_arg(1) FROM x'"), AclError::Syntax(_)));
    assert!(matches!(err("ADD SCALAR c.f(x INT) MACRO 'query(''SELECT 1'')'"), AclError::Invalid(_)));
    assert!(matches!(err("ADD SCHEMA c.s"), AclError::Syntax(_)));
}

#[test]
fn alter_virtual_objects() {
    let t = key("c", "t");
    assert_eq!(
        p("ALTER VIRTUAL TABLE c.t SET PHYS p.s.u"),
        Command::AlterTable { key: t.clone(), set: TableSet::Phys(PhysName { db: "p".into(), schema: "s".into(), name: "u".into() }) }
    );
    let cols = Some(vec![Column { name: "a".into(), expr: None }, Column { name: "b".into(), expr: Some("upper(b)".into()) }]);
    let set = same("ALTER VIRTUAL TABLE c.t SET COLUMNS 'a NOT NULL, b = upper(b)'", "ALTER VIRTUAL TABLE c.t SET COLUMNS (a NOT NULL, b = upper(b))");
    assert_eq!(set, Command::AlterTable { key: t.clone(), set: TableSet::Columns { columns: cols, not_null: ["a".to_string()].into() } });
    same("ALTER VIRTUAL TABLE c.t SET RLS 'a = 1'", "ALTER VIRTUAL TABLE c.t SET RLS (a = 1)");
    assert_eq!(p("ALTER VIRTUAL TABLE c.t SET RLS ''"), Command::AlterTable { key: t.clone(), set: TableSet::Rls(None) });
    assert_eq!(p("ALTER VIRTUAL TABLE c.t SET PRIMARY KEY (a)"), Command::AlterTable { key: t.clone(), set: TableSet::PrimaryKey(vec!["a".into()]) });
    assert_eq!(p("ALTER VIRTUAL TABLE c.t DROP PRIMARY KEY"), Command::AlterTable { key: t.clone(), set: TableSet::PrimaryKey(vec![]) });
    assert!(matches!(err("ALTER VIRTUAL TABLE c.t SET PHYS temp.main.x"), AclError::Invalid(Invalid::PhysicalSource { .. })));
    assert!(matches!(err("ALTER VIRTUAL TABLE c.t SET RLS 'a IN (SELECT 1)'"), AclError::Invalid(_)));
    assert!(matches!(err("ALTER VIRTUAL TABLE c.t SET RLS (a) COLUMNS (a)"), AclError::Syntax(_)));
    let v = same("ALTER VIRTUAL VIEW c.v SET AS 'SELECT 1 AS a'", "ALTER VIRTUAL VIEW c.v SET AS SELECT 1 AS a");
    assert_eq!(v, Command::AlterView { key: key("c", "v"), query: "SELECT 1 AS a".into() });
    assert!(matches!(err("ALTER VIRTUAL VIEW c.v SET AS 'SELECT * FROM temp.main.t'"), AclError::Invalid(Invalid::PhysicalSource { .. })));
    let c = same("ALTER VIRTUAL CATALOG Sales SET COMMENT 'x'", "COMMENT ON VIRTUAL CATALOG sales IS 'x'");
    assert_eq!(c, Command::Comment { on: CommentOn::Catalog("sales".into()), text: Some("x".into()) });
    same("ALTER VIRTUAL TABLE c.t SET COMMENT NULL", "COMMENT ON VIRTUAL TABLE c.t IS NULL");
    same("ALTER VIRTUAL VIEW c.v SET COMMENT 'y'", "COMMENT ON VIRTUAL VIEW c.v IS 'y'");
    // expansion schemas: the parse leaves the listing to the engine
    let c = p("CREATE OR REPLACE VIRTUAL SCHEMA C.S FROM Lake.Raw COMMENT 'x'");
    let how = Expansion::Create { source: ("Lake".into(), "Raw".into()), comment: Some("x".into()), mode: CreateMode::OrReplace };
    assert_eq!(c, Command::ExpandSchema { catalog: "c".into(), schema: "s".into(), how, objects: None });
    let r = p("ALTER VIRTUAL SCHEMA c.s REFRESH PRUNE");
    assert_eq!(r, Command::ExpandSchema { catalog: "c".into(), schema: "s".into(), how: Expansion::Refresh { prune: true }, objects: None });
    assert!(matches!(p("ALTER VIRTUAL SCHEMA c.s REFRESH"), Command::ExpandSchema { how: Expansion::Refresh { prune: false }, .. }));
    let s = p("ALTER VIRTUAL SCHEMA c.s SET PHYS p.t");
    assert_eq!(s, Command::AlterSchemaPhys { catalog: "c".into(), schema: "s".into(), target: ("p".into(), "t".into()) });
    same("ALTER VIRTUAL SCHEMA c.s SET COMMENT 'z'", "COMMENT ON VIRTUAL SCHEMA c.s IS 'z'");
    for s in ["CREATE VIRTUAL SCHEMA c.s FROM temp.main", "ALTER VIRTUAL SCHEMA c.s SET PHYS system.main"] {
        assert!(matches!(err(s), AclError::Invalid(Invalid::PhysicalSource { .. })), "{s}");
    }
    for s in ["CREATE VIRTUAL SCHEMA c.s FROM p", "ALTER VIRTUAL SCHEMA c.s REFRESH ALL", "ALTER VIRTUAL SCHEMA c.s SET RLS 'x'", "ALTER VIRTUAL SCHEMA c.s"] {
        assert!(err(s).to_string().starts_with("acl:"), "{s}");
        assert!(is_management(s), "{s}");
    }
}

#[test]
fn comments_on_every_kind() {
    assert_eq!(p("COMMENT ON VIRTUAL SCHEMA c.s IS 'x'"), Command::Comment { on: CommentOn::Schema("c".into(), "s".into()), text: Some("x".into()) });
    assert_eq!(
        p("COMMENT ON VIRTUAL TABLE c.t COLUMN Id IS 'the key'"),
        Command::Comment { on: CommentOn::Column { key: key("c", "t"), word: ObjectWord::Table, column: "id".into() }, text: Some("the key".into()) }
    );
    assert_eq!(
        p("COMMENT ON VIRTUAL TABLE FUNCTION c.f IS 'x'"),
        Command::Comment { on: CommentOn::Function { key: key("c", "f"), kind: FnKind::Table }, text: Some("x".into()) }
    );
    assert_eq!(
        p("COMMENT ON VIRTUAL SCALAR c.f IS NULL"),
        Command::Comment { on: CommentOn::Function { key: key("c", "f"), kind: FnKind::Scalar }, text: None }
    );
    assert!(matches!(err("COMMENT ON VIRTUAL TABLE c.t 'x'"), AclError::Syntax(_)));
    assert!(matches!(err("COMMENT ON VIRTUAL ROLE r IS 'x'"), AclError::Syntax(_)));
    assert!(!is_management("COMMENT ON TABLE t IS 'x'"));
}

#[test]
fn alter_grant_forms() {
    let on = GrantOn::Catalog("c".into());
    assert_eq!(
        same("ALTER GRANT CATALOG c TO ROLE r SET CAPS '{\"select\": true}'", "ALTER GRANT CATALOG c TO ROLE r SET WITH (select)"),
        Command::AlterGrant { on: on.clone(), role: "r".into(), set: GrantSet::Caps(Caps::SELECT) }
    );
    same("ALTER GRANT CATALOG c TO ROLE r SET RLS 'a = 1'", "ALTER GRANT CATALOG c TO ROLE r SET RLS (a = 1)");
    same("ALTER GRANT CATALOG c TO ROLE r SET COLUMNS 'a, b'", "ALTER GRANT CATALOG c TO ROLE r SET COLUMNS (a, b)");
    assert_eq!(p("ALTER GRANT CATALOG c TO ROLE r SET MAIN true"), Command::AlterGrant { on: on.clone(), role: "r".into(), set: GrantSet::Main(true) });
    assert_eq!(p("ALTER GRANT CATALOG c TO ROLE r SET MAIN 'false'"), Command::AlterGrant { on, role: "r".into(), set: GrantSet::Main(false) });
    let obj = GrantOn::Object { key: key("c", "t"), word: ObjectWord::Table };
    assert_eq!(p("ALTER GRANT TABLE c.t TO ROLE r SET CAPS '{}'"), Command::AlterGrant { on: obj, role: "r".into(), set: GrantSet::Caps(Caps::NONE) });
    assert_eq!(err("ALTER GRANT TABLE c.t TO ROLE r SET MAIN true"), Management::MainOutsideCatalogGrant.into());
    assert_eq!(err("ALTER GRANT VIEW c.v TO ROLE r SET CAPS '{\"explain\": true}'"), Invalid::CatalogOnly { capability: "explain".into() }.into());
    assert!(matches!(err("ALTER GRANT CATALOG c TO ROLE r SET MAIN maybe"), AclError::Syntax(_)));
    assert!(matches!(err("ALTER GRANT CATALOG c TO ROLE r SET RLS (a) MAIN true"), AclError::Syntax(_)));
    assert!(matches!(err("ALTER GRANT SCHEMA c.s TO ROLE r SET CAPS '{}'"), AclError::Syntax(_)));
}

#[test]
fn references() {
    let cmd = p("CREATE VIRTUAL REFERENCE c.r FROM orders TO c.crm.customers ON (customer_id = id, orders.region = customers.region) CARDINALITY MANY_TO_ONE OPTIONAL");
    let Command::CreateReference { key: k, reference: r, mode } = cmd else { panic!() };
    assert_eq!((k, mode), (key("c", "r"), CreateMode::Create));
    assert_eq!(r.from, key("c", "orders"));
    assert_eq!(r.to, ObjKey { catalog: "c".into(), schema: "crm".into(), name: "customers".into() });
    assert_eq!(r.on, [("customer_id".to_string(), "id".to_string()), ("region".into(), "region".into())]);
    assert_eq!((r.cardinality, r.optional), (Some(Cardinality::ManyToOne), true));
    for (w, c) in [("'1:n'", Cardinality::OneToMany), ("one_to_one", Cardinality::OneToOne), ("'m:n'", Cardinality::ManyToMany), ("'N:1'", Cardinality::ManyToOne)] {
        let Command::CreateReference { reference, .. } = p(&format!("CREATE OR REPLACE VIRTUAL REFERENCE c.r FROM a TO b ON (x = y) CARDINALITY {w}")) else { panic!() };
        assert_eq!(reference.cardinality, Some(c), "{w}");
    }
    assert_eq!(err("CREATE VIRTUAL REFERENCE c.r FROM a TO b ON (x = y) CARDINALITY lots"), Invalid::Cardinality { word: "lots".into() }.into());
    assert!(matches!(err("CREATE VIRTUAL REFERENCE c.r FROM a TO other.s.b ON (x = y)"), AclError::Invalid(Invalid::Rule(_))));
    assert!(matches!(err("CREATE VIRTUAL REFERENCE c.r FROM a TO b"), AclError::Syntax(_)));
    assert!(matches!(err("CREATE VIRTUAL REFERENCE c.r FROM a TO b ON (x = y) CARDINALITY '1:1' CARDINALITY '1:1'"), AclError::Syntax(_)));
    assert_eq!(p("DROP VIRTUAL REFERENCE IF EXISTS c.r"), Command::DropReference { key: key("c", "r"), if_exists: true });
}

#[test]
fn map_group_and_drop_map() {
    same("MAP GROUP 'admins' FROM ISSUER 'i' TO ROLE r", "MAP CLAIM 'admins' FROM ISSUER 'i' TO ROLE r");
    let u = same("DROP MAP GROUP 'admins' FROM ISSUER 'i'", "UNMAP CLAIM 'admins' FROM ISSUER 'i'");
    assert_eq!(u, Command::UnmapClaim { iss: "i".into(), value: "admins".into(), role: None });
    same("DROP MAP CLAIM 'admins' FROM ISSUER 'i'", "UNMAP CLAIM 'admins' FROM ISSUER 'i'");
    assert!(matches!(err("UNMAP GROUP 'a' FROM ISSUER 'i'"), AclError::Syntax(_)));
    assert!(matches!(err("DROP MAP 'a' FROM ISSUER 'i'"), AclError::Syntax(_)));
}

#[test]
fn alter_issuer_and_unmapped() {
    let set = |s: IssuerSet| Command::AlterIssuer { iss: "i".into(), set: s };
    assert_eq!(same("ALTER ISSUER 'i' SET AUDIENCES ('a', 'b')", "ALTER ISSUER 'i' SET AUDIENCES 'a, b'"), set(IssuerSet::Audiences(vec!["a".into(), "b".into()])));
    assert_eq!(same("ALTER ISSUER 'i' SET ALGS (RS256)", "ALTER ISSUER 'i' SET ALGS 'RS256'"), set(IssuerSet::Algs(vec!["RS256".into()])));
    assert_eq!(p("ALTER ISSUER 'i' SET ROLE CLAIM 'groups'"), set(IssuerSet::RoleClaim("groups".into())));
    assert_eq!(p("ALTER ISSUER 'i' SET KEYS FROM '/k.jwks'"), set(IssuerSet::Keys(KeySource::File("/k.jwks".into()))));
    assert_eq!(p("ALTER ISSUER 'i' SET KEYS 'k'"), set(IssuerSet::Keys(KeySource::Inline("k".into()))));
    assert_eq!(p("ALTER ISSUER 'i' SET CLAIM MAP ('org' => tenant)"), set(IssuerSet::ClaimMap(vec![("org".into(), "tenant".into())])));
    assert_eq!(p("ALTER ISSUER 'i' SET UNMAPPED IGNORE"), set(IssuerSet::Unmapped(Unmapped::Ignore)));
    assert_eq!(p("ALTER ISSUER 'i' SET UNMAPPED COUNT"), set(IssuerSet::Unmapped(Unmapped::Count)));
    assert!(matches!(err("ALTER ISSUER 'i' SET UNMAPPED"), AclError::Syntax(_)));
    assert!(matches!(err("ALTER ISSUER 'i' SET AUDIENCES ('a') ALGS (RS256)"), AclError::Syntax(_)));
    assert!(matches!(err("ALTER ISSUER 'i' SET KEYS FROM 'https://idp/jwks'"), AclError::Invalid(Invalid::Rule(_))));
    let Command::CreateIssuer { spec, .. } = p("CREATE ISSUER 'i' KEYS 'k' UNMAPPED IGNORE ROLE CLAIM 'g'") else { panic!() };
    assert_eq!((spec.unmapped, spec.role_claim.as_deref()), (Unmapped::Ignore, Some("g")));
    let Command::CreateIssuer { spec, .. } = p("CREATE ISSUER 'i' KEYS 'k'") else { panic!() };
    assert_eq!(spec.unmapped, Unmapped::Count);
    assert_eq!(err("CREATE ISSUER 'i' KEYS 'k' UNMAPPED IGNORE UNMAPPED COUNT"), Management::Twice { clause: "UNMAPPED" }.into());
    assert_eq!(err("CREATE ISSUER 'i' KEYS 'k' KEYS 'j'"), Management::Twice { clause: "KEYS" }.into());
}
