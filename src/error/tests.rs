//! The exact text of each kind of error (the SQL and Python tests match on these messages), and
//! the class the shim reports it under.
use super::*;

#[track_caller]
fn says(e: impl Into<AclError>, text: &str, class: Class) {
    let e = e.into();
    assert_eq!(e.to_string(), text);
    assert_eq!(e.class(), class, "{text}");
}

fn caps(c: &[&'static str]) -> Vec<&'static str> {
    c.to_vec()
}

#[test]
fn lacking_a_capability() {
    let lacks = |c: &[&'static str], on: On| LacksCapability { principal: "role \"analyst\"".into(), capabilities: caps(c), on };
    says(lacks(&["insert", "delete"], On::Object("sales.orders".into())), "acl: role \"analyst\" lacks insert, delete on sales.orders", Class::Refused);
    says(lacks(&["explain"], On::Anything), "acl: role \"analyst\" lacks explain", Class::Refused);
    says(lacks(&["explain"], On::Catalog("hr".into())), "acl: role \"analyst\" lacks explain on hr", Class::Refused);
    says(lacks(&["temp"], On::TempTables), "acl: role \"analyst\" lacks temp (temporary tables)", Class::Refused);
    says(lacks(&["create"], On::Schema("sales.lab".into())), "acl: role \"analyst\" lacks create on schema sales.lab", Class::Refused);
    says(lacks(&["select"], On::Function("sales.f".into())), "acl: role \"analyst\" lacks select on sales.f", Class::Refused);
    says(
        AclError::NoSingleRole { principal: "token".into(), capabilities: caps(&["select", "update"]), object: "sales.orders".into() },
        "acl: no single role of token holds select, update on sales.orders",
        Class::Refused,
    );
}

#[test]
fn names_that_are_not_granted_or_not_resolved() {
    says(NotGranted::Table { name: "payroll".into() }, "acl: table \"payroll\" does not exist or is not granted", Class::Refused);
    says(
        NotGranted::Catalog { granted: vec![] },
        "acl: a table reference names a catalog that does not exist or is not granted (granted catalogs: none)",
        Class::Refused,
    );
    says(
        NotGranted::Catalog { granted: vec!["hr".into(), "sales".into()] },
        "acl: a table reference names a catalog that does not exist or is not granted (granted catalogs: hr, sales)",
        Class::Refused,
    );
    says(NotGranted::Role { name: "ghost".into() }, "acl: role \"ghost\" does not exist", Class::Refused);
    says(
        Unresolved::NoMainCatalog { name: "t".into(), principal: "role \"r\"".into() },
        "acl: unqualified table \"t\": role \"r\" has no MAIN catalog, qualify it as catalog.table",
        Class::Refused,
    );
}

#[test]
fn functions_statements_types() {
    says(FunctionNotPermitted::Named { name: "read_csv".into() }, "acl: function \"read_csv\" is not permitted", Class::Refused);
    says(
        BadCall::ArgumentCount { function: "sales.f".into(), expected: 1 },
        "acl: virtual function sales.f takes 1 argument",
        Class::Refused,
    );
    says(
        BadCall::ArgumentCount { function: "sales.f".into(), expected: 2 },
        "acl: virtual function sales.f takes 2 arguments",
        Class::Refused,
    );
    says(StatementNotPermitted::Kind { kind: "ATTACH".into() }, "acl: statement type ATTACH is not permitted", Class::Refused);
    says(
        StatementNotPermitted::ManagementInTransaction,
        "acl: management statements run in their own transaction; COMMIT or ROLLBACK first",
        Class::Refused,
    );
    says(
        TypeNotPermitted::Named { name: "my_enum".into() },
        "acl: type \"my_enum\" is not permitted (only DuckDB's built-in types can be named)",
        Class::Refused,
    );
}

#[test]
fn tokens() {
    let all = [
        (TokenReason::Malformed, "malformed"),
        (TokenReason::CriticalHeader, "unsupported critical header"),
        (TokenReason::UnknownIssuer, "unknown issuer"),
        (TokenReason::IssuerKeysUnusable, "the issuer's keys are unusable"),
        (TokenReason::AlgorithmNotAllowed, "algorithm not allowed"),
        (TokenReason::UnknownKey, "unknown key id"),
        (TokenReason::BadSignature, "bad signature"),
        (TokenReason::WrongAudience, "wrong audience"),
        (TokenReason::NoExpiry, "it has no exp claim"),
        (TokenReason::Expired, "expired"),
        (TokenReason::NotYetValid, "not yet valid"),
        (TokenReason::NoRole, "no role is mapped for this token"),
        (TokenReason::KeysStale, "the issuer's keys are stale"),
        (TokenReason::KeysNotRead, "the issuer's keys file has not been read yet"),
        (TokenReason::KeysUnreadable, "the issuer's keys file could not be read or holds no usable keys"),
    ];
    for (reason, text) in all {
        says(AclError::token(reason), &format!("acl: token rejected: {text}"), Class::Refused);
    }
}

#[test]
fn writes_forms_views_size() {
    says(ReadOnly::View { object: "sales.v".into() }, "acl: sales.v is a view and read-only", Class::Refused);
    says(
        SlicedWrite::MergeClause { object: "sales.orders".into(), form: MergeForm::InsertStar },
        "acl: INSERT * and INSERT ROW is not supported on sales.orders (it has a row or column policy); write INSERT (col, …) VALUES (s.col, …)",
        Class::Refused,
    );
    says(
        SlicedWrite::SubqueryInBySourceClause { object: "sales.orders".into() },
        "acl: a subquery in a WHEN clause of a MERGE with WHEN NOT MATCHED BY SOURCE is not supported on sales.orders \
         (it has a row policy); compute it in the USING source, or write a separate UPDATE or DELETE",
        Class::Refused,
    );
    says(Unsupported::CteTarget { verb: "UPDATE" }, "acl: the target of UPDATE must be a table, not a CTE", Class::Refused);
    says(
        Unsupported::Unprintable { what: "a quoted name" },
        "acl: a quoted name holding a quote after a backslash or two quotes in a row is not supported",
        Class::Refused,
    );
    says(
        Unsupported::ListingInView,
        "acl: a view cannot read a metadata listing (information_schema, duckdb_*(), SHOW): a listing describes every view \
         in it; copy the rows with CREATE TABLE … AS SELECT",
        Class::Refused,
    );
    says(
        Nesting::ListingInListing,
        "acl: a metadata listing cannot be read while another listing describes the objects it is in",
        Class::Refused,
    );
    says(Nesting::GuardInGuard, "acl: a view's guard was reached again while it judged the view", Class::Refused);
    says(Nesting::Stack, "acl: views are nested too deeply for this thread's stack", Class::Refused);
    says(
        AclError::StaleView { view: "lab.v".into(), why: Stale::TokenExpired },
        "acl: view lab.v was created under a token that has expired; create it again",
        Class::Refused,
    );
    says(
        AclError::RolesNotCombinable { uses: Uncombinable::HiddenColumn("ssn".into()) },
        "acl: the grants of several roles on one object cannot be combined: a grant's expression uses column \"ssn\", which an earlier grant hides; use one role",
        Class::Refused,
    );
    says(TooLarge::AfterPolicy, "acl: the statement is too large after the policy is applied", Class::Refused);
}

#[test]
fn syntax_invalid_internal() {
    says(Syntax::Statement { at: Some("Line: 1, Column: 8".into()) }, "acl: could not parse the statement (Line: 1, Column: 8)", Class::Syntax);
    says(Syntax::Statement { at: None }, "acl: could not parse the statement", Class::Syntax);
    says(
        Management::Expected { expected: "a role name".into(), found: "TO".into() },
        "acl: could not parse management statement: expected a role name, found TO",
        Class::Syntax,
    );
    says(Management::Bare, "acl: could not parse management statement", Class::Syntax);
    says(Management::Twice { clause: "ALGS" }, "acl: could not parse management statement: ALGS given twice", Class::Syntax);
    says(Invalid::Missing { noun: Noun::TableFunction, name: "sales.f".into() }, "acl: virtual table function \"sales.f\" does not exist", Class::Invalid);
    says(Invalid::Exists { noun: Noun::Role, name: "analyst".into() }, "acl: role \"analyst\" already exists", Class::Invalid);
    says(Invalid::Shipped { name: "base".into(), dropped: true }, "acl: function category \"base\" is shipped and cannot be dropped", Class::Invalid);
    says(Duplicate::Column("id".into()), "acl: column \"id\" is listed twice", Class::Invalid);
    says(Duplicate::Capability("select".into()), "acl: capability \"select\" is given twice", Class::Invalid);
    says(
        Invalid::StillGranted { name: "sales".into(), roles: vec!["a".into(), "b".into()] },
        "acl: virtual catalog \"sales\" is still granted to role \"a\", role \"b\" (revoke the grants or use CASCADE)",
        Class::Invalid,
    );
    says(Invalid::CapsJson, "acl: CAPS must be a JSON object of capability names to true or false, e.g. CAPS '{\"select\": true}'", Class::Invalid);
    says(
        Invalid::CapsName { word: "reader".into() },
        "acl: CAPS: \"reader\" is not a capability (known: select, insert, update, delete, merge, create, drop, temp, explain, secrets, lineage, manage)",
        Class::Invalid,
    );
    says(Invalid::ClaimsList, "acl: CLAIMS '…' must be name=value pairs separated by commas", Class::Invalid);
    says(Invalid::ViewColumns { view: "sales.v".into() }, "acl: the query of virtual view \"sales.v\" does not give its declared columns", Class::Invalid);
    says(Invalid::NotAColumn { column: "id".into(), object: "sales.t".into() }, "acl: \"id\" is not a column of sales.t", Class::Invalid);
    says(Invalid::Missing { noun: Noun::Reference, name: "sales.r".into() }, "acl: virtual reference \"sales.r\" does not exist", Class::Invalid);
    says(
        Invalid::Issuer { iss: "https://idp".into(), problem: Box::new(Invalid::Keys(KeyProblem::ShortSecret { min: 32 })) },
        "acl: issuer \"https://idp\": an hmac: secret must be at least 32 bytes",
        Class::Invalid,
    );
    says(
        Invalid::Issuer { iss: "https://idp".into(), problem: Box::new(Invalid::SecretWithheld) },
        "acl: issuer \"https://idp\": its shared secret was withheld by acl_export(); put the secret in place of the KEYS placeholder, or export with acl_export(secrets := true)",
        Class::Invalid,
    );
    says(AclError::internal("a view's guard did not parse"), "acl: internal error: a view's guard did not parse", Class::Internal);
    says(
        AclError::SecondCheck { found: "a table" },
        "acl: internal error: the second check found a table outside the decision; the statement was refused",
        Class::Internal,
    );
}

#[test]
fn administration_scopes() {
    let lacks = |needs: Scope, statement: &'static str| LacksScope { principal: "role \"ops\"".into(), needs, statement };
    says(lacks(Scope::CatalogManage("hr".into()), "CREATE VIRTUAL TABLE"), "acl: role \"ops\" lacks manage on hr (CREATE VIRTUAL TABLE)", Class::Refused);
    says(lacks(Scope::GlobalManage, "GRANT CATALOG"), "acl: role \"ops\" lacks global manage (GRANT CATALOG)", Class::Refused);
    says(lacks(Scope::Passthrough, "ACL NATIVE"), "acl: role \"ops\" lacks passthrough (ACL NATIVE)", Class::Refused);
    says(
        LacksScope { principal: "anonymous ACL ADMIN".into(), needs: Scope::AnonymousAdmin, statement: "a policy store is in use" },
        "acl: anonymous ACL ADMIN lacks acl_allow_anonymous_admin (a policy store is in use)",
        Class::Refused,
    );
    says(
        SelfGrant::Role { principal: "role \"ops\"".into(), role: "ops".into() },
        "acl: role \"ops\" may not change what role \"ops\" is granted: it holds that role",
        Class::Refused,
    );
    says(SelfGrant::AllRoles { principal: "role \"ops\"".into() }, "acl: role \"ops\" may not grant or deny to ALL ROLES: they include its own", Class::Refused);
    says(
        SelfGrant::Gains { principal: "token of \"ann\"".into(), role: "hr".into() },
        "acl: token of \"ann\" would hold role \"hr\" after this batch: no scope grants itself more",
        Class::Refused,
    );
    says(
        StatementNotPermitted::PrincipalTakesManagementOnly,
        "acl: ACL after a prefix takes only management statements (or NATIVE <sql>)",
        Class::Refused,
    );
}

/// Issue 31: the drift refusal names the virtual object only; the CHECK oracle's refusal names the
/// verb and the virtual object; the check runs alone.
#[test]
fn drift_and_hidden_columns() {
    says(
        Drifted { kind: "table", object: "c.docs".into() },
        "acl: virtual table c.docs no longer matches its source; ask an administrator",
        Class::Refused,
    );
    says(Drifted { kind: "view", object: "c.eu.v".into() }, "acl: virtual view c.eu.v no longer matches its source; ask an administrator", Class::Refused);
    says(
        SlicedWrite::HiddenCheck { verb: "MERGE", object: "hr.pay".into() },
        "acl: MERGE on hr.pay is refused: a CHECK constraint of its table relates a column you may write to a column hidden from you",
        Class::Refused,
    );
    says(StatementNotPermitted::CheckAlone, "acl: CHECK VIRTUAL CATALOG runs alone in its batch", Class::Refused);
}

/// A batch's error names the statement (number and first words) only in a batch of several, keeps
/// the inner error's class, and is located once.
#[test]
fn a_batch_error_is_located_at_its_statement() {
    let inner = AclError::from(StatementNotPermitted::CheckAlone);
    assert_eq!(inner.clone().at(0, 1, "CHECK VIRTUAL CATALOG c"), inner);
    let at = inner.clone().at(1, 3, "GRANT   CATALOG nope TO ROLE a WITH (select)");
    assert_eq!(at.to_string(), format!("{inner} (statement 2 of the batch: GRANT CATALOG nope TO …)"));
    assert_eq!((at.class(), at.unlocated()), (inner.class(), &inner));
    assert_eq!(at.clone().at(2, 3, "x"), at);
    let long = inner.clone().at(0, 2, &"x".repeat(50));
    assert!(long.to_string().ends_with(&format!("{} …)", "x".repeat(40))), "{long}");
}
