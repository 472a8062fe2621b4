use super::*;

/// The blob of a statement that placed `secretdb.main.payroll_2024` as `hr.main.pay` (and also
/// maps `orders` to itself, and a table without a principal's name).
fn blob() -> String {
    let mut d = crate::rewrite::Decision::default();
    let key = |c: &str, s: &str, n: &str| crate::policy::ObjKey { catalog: c.into(), schema: s.into(), name: n.into() };
    let phys = |d: &str, s: &str, n: &str| crate::policy::PhysName { db: d.into(), schema: s.into(), name: n.into() };
    d.map_object(&phys("secretdb", "main", "payroll_2024"), &key("hr", "main", "pay"));
    d.map_object(&phys("shopdb", "sales_raw", "orders"), &key("shop", "main", "orders"));
    d.map_object(&phys("secretdb", "main", "payroll_2024"), &key("hr", "main", "second_name_ignored"));
    d.map_object(&phys("vaultdb", "main", "vault_tbl"), &key("(hidden)", "(hidden)", "(hidden)"));
    names_blob(&d.names)
}

#[track_caller]
fn t(kind: &str, message: &str, expected: &str) {
    assert_eq!(translate(&blob(), kind, message), expected, "{kind}: {message}");
}

/// The message is the same whatever the principal's guess: shown byte for byte.
#[track_caller]
fn untouched(kind: &str, message: &str) {
    assert_eq!(translate(&blob(), kind, message), message, "{kind}: {message}");
}

#[test]
fn the_blob_starts_with_its_header_and_keeps_the_first_mapping() {
    let b = blob();
    assert!(b.starts_with(HEADER), "{b}");
    assert!(b.contains("T\tpayroll_2024\tpay\n"), "{b}");
    assert!(!b.contains("second_name_ignored"), "{b}");
    assert!(b.contains("T\tvault_tbl\t(hidden)\n"), "{b}");
    assert_eq!(names_blob(&Vec::new()), HEADER, "a principal's statement without names still has a blob");
}

#[test]
fn placed_objects_are_shown_by_the_principals_names() {
    t("Binder", "table \"payroll_2024\" has 3 columns but 4 values were supplied", "table \"pay\" has 3 columns but 4 values were supplied");
    t("Binder", "Table \"PAYROLL_2024\" does not have a column with name \"nosuch\"", "Table \"pay\" does not have a column with name \"nosuch\"");
    t("Binder", "Catalog \"secretdb\" does not exist!", "Catalog \"hr\" does not exist!");
    t("Catalog", "Table with name payroll_2024 does not exist!", "Table with name pay does not exist!");
    t(
        "Catalog",
        "Table with name \"secretdb.main.payroll_2024\" does not exist because schema \"secretdb.main\" does not exist.",
        "Table with name \"hr.pay\" does not exist because schema \"hr.main\" does not exist.",
    );
    t(
        "Catalog",
        "Table with name \"sales_raw.orders\" does not exist because schema \"sales_raw\" does not exist.",
        "Table with name \"main.orders\" does not exist because schema \"main\" does not exist.",
    );
    t("Catalog", "Schema with name shopdb does not exist!", "Schema with name shop does not exist!");
    t("Catalog", "Table with name \"payroll_2024\" already exists!", "Table with name \"pay\" already exists!");
    t("Catalog", "Existing object \"payroll_2024\" is of type Table, trying to drop type View", "Existing object \"pay\" is of type Table, trying to drop type View");
    t("Catalog", "payroll_2024 is not an table", "pay is not an table");
    t("Constraint", "NOT NULL constraint failed: payroll_2024.salary", "NOT NULL constraint failed: pay.salary");
    t(
        "Constraint",
        "CHECK constraint failed on table \"payroll_2024\" with expression CHECK((salary < 1000))",
        "CHECK constraint failed on table \"pay\" with expression CHECK((salary < 1000))",
    );
    t(
        "Invalid Input",
        "Cannot execute statement of type \"INSERT\" on database \"secretdb\" which is attached in read-only mode!",
        "Cannot execute statement of type \"INSERT\" on database \"hr\" which is attached in read-only mode!",
    );
}

#[test]
fn objects_without_a_principals_name_are_hidden() {
    t("Constraint", "NOT NULL constraint failed: vault_tbl.x", "NOT NULL constraint failed: (hidden).x");
    t("Constraint", "NOT NULL constraint failed: \"Other Table\".x", "NOT NULL constraint failed: \"(hidden)\".x");
    t(
        "Catalog",
        "Could not drop the table because this table is main key table of the table \"child_tbl\"",
        "Could not drop the table because this table is main key table of the table \"(hidden)\"",
    );
    t("Binder", "table \"payroll_2024\" has 4 columns available but 5 columns specified", "table (hidden) has 4 columns available but 5 columns specified");
    t("Binder", "table my_cte has 1 columns available but 2 columns specified", "table (hidden) has 1 columns available but 2 columns specified");
    t(
        "TransactionContext",
        "Catalog write-write conflict on create with \"\"Schema\\0main\\0Table\\0main\\0t\"\"",
        "Catalog write-write conflict on create with (hidden)",
    );
}

#[test]
fn the_excerpt_is_dropped_only_where_duckdb_put_it() {
    t(
        "Conversion",
        "Could not convert string 'x-1' to INT32\n\nLINE 1: /* acl:policy-version=5 */ SELECT CAST(ssn AS INT) FROM \"secretdb\"...\n                                          ^^^^",
        "Could not convert string 'x-1' to INT32",
    );
    t("Binder", "Referenced column \"nosuch\" not found in FROM clause!\n\nLINE 2: x\n        ^", "Referenced column \"nosuch\" not found in FROM clause!");
    // a value of the principal's that merely contains "LINE" is the principal's
    untouched("Invalid Input", "payroll_2024\n\nLINE 1: not an excerpt");
    untouched("Conversion", "Could not convert string 'a\n\nLINE 9: b' to INT32");
}

#[test]
fn suggestions_are_dropped_from_binder_and_catalog_errors() {
    t("Catalog", "Table with name payroll_2024 does not exist!\nDid you mean \"otherdb.salaries\"?", "Table with name pay does not exist!");
    t(
        "Catalog",
        "Aggregate Function with name payroll_cal does not exist!\nDid you mean \"phys.payroll_calc\"?",
        "Aggregate Function with name payroll_cal does not exist!",
    );
    t(
        "Binder",
        "Table \"payroll_2024\" does not have a column with name \"nosuch\"\n\nDid you mean: \"salary\"",
        "Table \"pay\" does not have a column with name \"nosuch\"",
    );
    t(
        "Binder",
        "Referenced column \"nosuch\" not found in FROM clause!\nCandidate bindings: \"payroll_2024.id\"",
        "Referenced column \"nosuch\" not found in FROM clause!",
    );
    t("Binder", "Referenced table \"x\" not found!\nCandidate tables: \"pay\"", "Referenced table \"x\" not found!");
    // other errors carry values, which are the principal's own
    untouched("Invalid Input", "boom\nDid you mean \"payroll_2024\"?");
}

/// Finding 10: whatever the principal writes into its own error reads back the same, whether or
/// not it is a physical name of the statement.
#[test]
fn no_error_family_is_an_oracle_for_guessed_names() {
    for guess in ["payroll_2024", "secretdb", "main", "sales_raw", "shopdb", "vault_tbl", "PAYROLL_2024", "people_tbl_2024", "c"] {
        for (kind, message) in [
            // conversion of a value
            ("Conversion", format!("Could not convert string 'guess: {guess}' to INT32")),
            ("Conversion", format!("Could not convert string '{guess}' to INT32")),
            // error('…'), and a value of the principal's that looks like a template
            ("Invalid Input", guess.to_string()),
            ("Invalid Input", format!("table \"{guess}\" has 3 columns but 4 values were supplied")),
            ("Invalid Input", format!("NOT NULL constraint failed: {guess}.x")),
            ("Invalid Input", format!("Catalog \"{guess}\" does not exist!")),
            // binder errors naming what the principal wrote: qualifiers, aliases, columns
            ("Binder", format!("Referenced table \"{guess}\" not found!")),
            ("Binder", format!("Referenced column \"{guess}\" not found in FROM clause!")),
            ("Binder", format!("Table \"{guess}\" does not have a column named \"x\"")),
            ("Binder", format!("Ambiguous reference to table \"{guess}\" (duplicate alias \"{guess}\", explicitly alias one of the tables using \"AS my_alias\")")),
            ("Binder", format!("Referenced update column {guess} not found in table!")),
            ("Binder", format!("Duplicate column name \"{guess}\" in INSERT")),
            // a column the principal named in a template with an object slot
            ("Binder", format!("Table \"pay_x\" does not have a column with name \"{guess}\"")),
            // constraint errors carrying the principal's values
            ("Constraint", format!("Duplicate key \"id: {guess}\" violates primary key constraint.")),
            // (a foreign key's pairs are always withheld: the same for every guess)
            ("Constraint", format!("Violates foreign key constraint because key \"id: {guess}\" does not exist in the referenced table")),
            // out of range, division
            ("Out of Range", format!("Overflow in multiplication of INT32 ({guess})")),
            ("Catalog", format!("Scalar Function with name {guess} does not exist!")),
            ("Catalog", format!("Type with name {guess} does not exist!")),
        ] {
            let out = translate(&blob(), kind, &message);
            if message.starts_with("Violates foreign key") {
                let withheld = "Violates foreign key constraint because key \"(withheld: it names another table's columns)\" does not exist in the referenced table";
                assert_eq!(out, withheld);
            } else if message.starts_with("Table \"pay_x\"") {
                // the object slot holds a table DuckDB named (not this statement's): hidden, and
                // the principal's column stays as written
                assert_eq!(out, format!("Table \"(hidden)\" does not have a column with name \"{guess}\""));
            } else {
                assert_eq!(out, message, "{kind}: a guess was rewritten");
            }
        }
    }
}

/// The blob of a statement writing `secretdb.main.emp_tbl` as `hr.emp` through a grant that shows
/// only `id`, `name` and `bonus` (issue 31, finding 6).
fn restricted_blob() -> String {
    let mut d = crate::rewrite::Decision::default();
    let phys = crate::policy::PhysName { db: "secretdb".into(), schema: "main".into(), name: "emp_tbl".into() };
    d.map_object(&phys, &crate::policy::ObjKey { catalog: "hr".into(), schema: "main".into(), name: "emp".into() });
    let visible: std::collections::BTreeSet<String> = ["id", "name", "bonus"].iter().map(|s| s.to_string()).collect();
    d.names.push(lines::write_entry(&phys, &visible));
    names_blob(&d.names)
}

#[track_caller]
fn r(kind: &str, message: &str, expected: &str) {
    assert_eq!(translate(&restricted_blob(), kind, message), expected, "{kind}: {message}");
}

#[test]
fn hidden_columns_are_never_named_in_constraint_messages() {
    r("Constraint", "NOT NULL constraint failed: emp_tbl.salary_band", "NOT NULL constraint failed: emp.(a column hidden from you)");
    r("Constraint", "NOT NULL constraint failed: emp_tbl.\"Salary Band\"", "NOT NULL constraint failed: emp.(a column hidden from you)");
    r("Constraint", "NOT NULL constraint failed: emp_tbl.name", "NOT NULL constraint failed: emp.name");
    r("Constraint", "NOT NULL constraint failed: emp_tbl.\"NAME\"", "NOT NULL constraint failed: emp.\"NAME\"");
    r(
        "Constraint",
        "CHECK constraint failed on table emp_tbl with expression CHECK((bonus <= salary))",
        "CHECK constraint failed on table emp with expression (over a column hidden from you)",
    );
    r(
        "Constraint",
        "CHECK constraint failed on table emp_tbl with expression CHECK((bonus >= 0))",
        "CHECK constraint failed on table emp with expression CHECK((bonus >= 0))",
    );
    r(
        "Constraint",
        "CHECK constraint failed on table emp_tbl with expression CHECK((CAST(ssn AS INTEGER) > 0)) (Error: Could not convert string '123-45' to INT32)",
        "CHECK constraint failed on table emp with expression (over a column hidden from you)",
    );
    r(
        "Constraint",
        "CHECK constraint failed on table emp_tbl with expression CHECK((name <> ')x(')) (Unknown Error)",
        "CHECK constraint failed on table emp with expression CHECK((name <> ')x(')) (Unknown Error)",
    );
    // an expression that does not read back is withheld
    r("Constraint", "CHECK constraint failed on table emp_tbl with expression CHECK((bonus >", "CHECK constraint failed on table emp with expression (over a column hidden from you)");
    r("Constraint", "Duplicate key \"id: 1\" violates primary key constraint.", "Duplicate key \"id: 1\" violates primary key constraint.");
    r(
        "Constraint",
        "Duplicate key \"name: ann, code: k-secret\" violates unique constraint.",
        "Duplicate key \"(over a column hidden from you)\" violates unique constraint.",
    );
    // a foreign key's pairs name the other table's index columns (here the parent's `id`, a
    // name the target shows too) with the target's values (a hidden default): always withheld
    r(
        "Constraint",
        "Violates foreign key constraint because key \"id: 9\" does not exist in the referenced table",
        "Violates foreign key constraint because key \"(withheld: it names another table's columns)\" does not exist in the referenced table",
    );
    t(
        "Constraint",
        "Violates foreign key constraint because key \"secret_pk: 5\" is still referenced by a foreign key in a different table. If this is an unexpected constraint violation, please refer to our foreign key limitations in the documentation",
        "Violates foreign key constraint because key \"(withheld: it names another table's columns)\" is still referenced by a foreign key in a different table. If this is an unexpected constraint violation, please refer to our foreign key limitations in the documentation",
    );
    r(
        "Constraint",
        "PRIMARY KEY or UNIQUE constraint violation: duplicate key \"ann, k-secret\"",
        "PRIMARY KEY or UNIQUE constraint violation: duplicate key \"(withheld: the target has a column hidden from you)\"",
    );
    r("Constraint", "Incorrect value for generated column 'g INTEGER AS (salary * 2)' : Overflow", hidden::WITHHELD);
}

/// A key's values are the principal's own: a value that forges a `col: value` piece is withheld,
/// the same whether the forged name is a hidden column, a name that is nowhere or a shown one —
/// and a real hidden piece can never hide inside a shown value.
#[test]
fn key_text_depends_only_on_the_principals_own_values() {
    for forged in ["code", "salary", "no_such_col"] {
        r(
            "Constraint",
            &format!("Duplicate key \"name: x, {forged}: y\" violates unique constraint."),
            "Duplicate key \"(over a column hidden from you)\" violates unique constraint.",
        );
    }
    // a forged piece over a column the principal sees reads as DuckDB wrote it: what it sees
    r("Constraint", "Duplicate key \"name: x, id: y\" violates unique constraint.", "Duplicate key \"name: x, id: y\" violates unique constraint.");
    // a quote in the value cannot end the key early: the key is anchored at DuckDB's fixed end
    r(
        "Constraint",
        "Duplicate key \"name: a\" violates unique constraint., code: k-secret\" violates unique constraint.",
        "Duplicate key \"(over a column hidden from you)\" violates unique constraint.",
    );
    r("Constraint", "Duplicate key \"name: a: b\" violates unique constraint.", "Duplicate key \"(over a column hidden from you)\" violates unique constraint.");
    r("Constraint", "Duplicate key \"name: , id: 3\" violates unique constraint.", "Duplicate key \"name: , id: 3\" violates unique constraint.");
}

#[test]
fn statements_without_a_column_restricted_target_are_unchanged() {
    // the blob of the earlier tests has no `W` line: DuckDB's text stands
    t("Constraint", "NOT NULL constraint failed: payroll_2024.salary_band", "NOT NULL constraint failed: pay.salary_band");
    t("Constraint", "Duplicate key \"name: ann, code: k\" violates unique constraint.", "Duplicate key \"name: ann, code: k\" violates unique constraint.");
    t("Constraint", "Incorrect value for generated column 'g INTEGER AS (a * 2)' : Overflow", "Incorrect value for generated column 'g INTEGER AS (a * 2)' : Overflow");
    // a malformed `W` line counts as a target whose every column is hidden
    let blob = format!("{}W\tnot-three-parts\tid\n", blob());
    assert_eq!(translate(&blob, "Constraint", "Duplicate key \"id: 1\" violates primary key constraint."), "Duplicate key \"(over a column hidden from you)\" violates primary key constraint.");
}

#[test]
fn the_check_oracle_is_refused_for_checks_relating_shown_and_hidden_columns() {
    let restricted = restricted_blob();
    let refuse = |checks: Vec<&str>| {
        let checks: Vec<String> = checks.into_iter().map(str::to_string).collect();
        hidden::refused_update(&restricted, "UPDATE", &mut |t| {
            assert_eq!((t.db.as_str(), t.schema.as_str(), t.name.as_str()), ("secretdb", "main", "emp_tbl"));
            Some(checks.clone())
        })
        .map(|e| e.to_string())
    };
    assert_eq!(
        refuse(vec!["(bonus >= 0)", "(bonus <= salary)"]).as_deref(),
        Some("acl: UPDATE on hr.emp is refused: a CHECK constraint of its table relates a column you may write to a column hidden from you")
    );
    assert_eq!(refuse(vec!["(bonus >= 0)", "(salary > 0)"]), None, "shown alone, hidden alone: no oracle");
    assert!(refuse(vec!["(bonus >"]).is_some(), "an expression that does not read back is refused");
    assert!(hidden::refused_update(&restricted, "MERGE", &mut |_| None).is_some(), "a table that cannot be read is refused");
    assert_eq!(hidden::refused_update(&blob(), "UPDATE", &mut |_| panic!("no W line: nothing to read")), None);
}

#[test]
fn blob_lines_round_trip_any_name() {
    use crate::policy::{Caps, ObjKey, PhysName};
    let key = ObjKey { catalog: "c.x".into(), schema: "s,%".into(), name: "t\tn+1".into() };
    let roles = vec!["a,b".to_string(), "r".to_string()];
    let phys = PhysName { db: "d.b".into(), schema: "s".into(), name: "t\nn".into() };
    let visible: std::collections::BTreeSet<String> = ["a.b", "c,d"].iter().map(|s| s.to_string()).collect();
    let b = names_blob(&vec![lines::object_entry(&key, Caps::SELECT.union(Caps::UPDATE), &roles), lines::write_entry(&phys, &visible)]);
    assert_eq!(lines::objects(&b), vec![lines::ObjectLine { key, caps: Caps::SELECT.union(Caps::UPDATE), roles }]);
    assert_eq!(lines::restricted(&b), vec![lines::Restricted { table: phys, visible }]);
    assert!(lines::any_restricted(&b));
    assert!(!lines::any_restricted(&blob()));
}

/// An ENUM type lists every label, also those only hidden rows carry (spec 021):
/// DuckDB prints it in conversion errors (a write of a value that is no label) and binder errors.
#[test]
fn enum_labels_are_never_shown() {
    t(
        "Conversion",
        "Could not convert string 'nope' to ENUM('happy', 'sad', 'secret')\n\nLINE 1: UPDATE x SET lvl = 'nope'\n                           ^^^^^^",
        "Could not convert string 'nope' to ENUM(…)",
    );
    t(
        "Binder",
        "No function matches the given name and argument types '+(ENUM('a', 'it''s, ok)'), INTEGER_LITERAL)'. You might need to add explicit type casts.",
        "No function matches the given name and argument types '+(ENUM(…), INTEGER_LITERAL)'. You might need to add explicit type casts.",
    );
    t("Binder", "STRUCT(a ENUM('x'), b ENUM('y', 'z'))[] vs ENUM('q')", "STRUCT(a ENUM(…), b ENUM(…))[] vs ENUM(…)");
    // one that does not close (a message cut short) loses everything after it
    t("Conversion", "to ENUM('a', 'b", "to ENUM(…)");
    t("Conversion", "to ENUM('a' 'b') and more", "to ENUM(…)");
    // not an ENUM's print: left alone
    untouched("Binder", "Referenced column \"ENUM\" not found, ENUM() and ENUM(x)");
}
