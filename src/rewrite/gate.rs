//! Rule: the statement gate. Under a principal only the statement types that have a rewrite
//! rule run; everything else is refused by name.
use crate::error::{Result, StatementNotPermitted, Unsupported};
use sqlparser::ast::{DescribeAlias, ObjectType, Statement};

/// What the gate decided for a statement.
pub(super) enum Gate {
    /// Rewrite it (SELECT, INSERT, UPDATE, DELETE, MERGE).
    Rewrite,
    /// Transaction control: runs as written, it names no object.
    AsIs,
    /// EXPLAIN [ANALYZE] of a statement that is rewritten: also needs `explain` (see `explain`).
    Explain,
}

/// Statements EXPLAIN may show the plan of.
fn explainable(stmt: &Statement) -> bool {
    matches!(stmt, Statement::Query(_) | Statement::Insert(_) | Statement::Update(_) | Statement::Delete(_) | Statement::Merge(_))
}

pub(super) fn check(stmt: &mut Statement) -> Result<Gate> {
    // `DESCRIBE t` is answered as `DESCRIBE SELECT * FROM t`, so it shows exactly what the
    // principal would read: virtual names, masked types, hidden columns absent.
    if let Statement::ExplainTable { describe_alias: DescribeAlias::Describe | DescribeAlias::Desc, table_name, hive_format: None, .. } = stmt {
        *stmt = super::parse_one(&format!("DESCRIBE SELECT * FROM {table_name}"))?;
    }
    // `SHOW t` is DuckDB's `DESCRIBE t` (the SHOW forms of the metadata listings aside).
    let listing = super::metadata::is_show(stmt);
    if let Statement::ShowVariable { variable } = stmt {
        if !listing && !variable.is_empty() {
            let name = variable.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(".");
            *stmt = super::parse_one(&format!("DESCRIBE SELECT * FROM {name}"))?;
        }
    }
    match stmt {
        Statement::Explain { describe_alias: DescribeAlias::Describe | DescribeAlias::Desc, statement, .. }
            if matches!(statement.as_ref(), Statement::Query(_)) =>
        {
            Ok(Gate::Rewrite)
        }
        // SHOW TABLES / SHOW ALL TABLES / SHOW DATABASES: answered from the listing (`metadata`)
        s if super::metadata::is_show(s) => Ok(Gate::Rewrite),
        Statement::Explain { describe_alias: DescribeAlias::Explain, statement, verbose, query_plan, estimate, format, options, .. }
            if explainable(statement) =>
        {
            if *verbose || *query_plan || *estimate || format.is_some() || options.is_some() {
                return Err(Unsupported::Explain.into());
            }
            Ok(Gate::Explain)
        }
        // CREATE/DROP TABLE|VIEW: the `ddl` rule places the name and checks the form.
        Statement::CreateTable(_) | Statement::CreateView(_) => Ok(Gate::Rewrite),
        Statement::Drop { object_type: ObjectType::Table | ObjectType::View, .. } => Ok(Gate::Rewrite),
        Statement::Query(_)
        | Statement::Insert(_)
        | Statement::Update(_)
        | Statement::Delete(_)
        | Statement::Merge(_) => Ok(Gate::Rewrite),
        Statement::StartTransaction { .. } | Statement::Commit { .. } | Statement::Rollback { savepoint: None, .. } => {
            Ok(Gate::AsIs)
        }
        other => Err(StatementNotPermitted::Kind { kind: kind(other) }.into()),
    }
}

/// A short, upper-case name of the statement's type for messages (never any of its text).
pub(super) fn kind(stmt: &Statement) -> String {
    let text = stmt.to_string();
    let mut words = text.split_whitespace().map(|w| w.to_ascii_uppercase());
    let first = words.next().unwrap_or_default();
    let first: String = first.chars().take_while(|c| c.is_ascii_alphabetic()).collect();
    if matches!(first.as_str(), "CREATE" | "DROP" | "ALTER") {
        let what = words
            .find(|w| !matches!(w.as_str(), "OR" | "REPLACE" | "TEMP" | "TEMPORARY" | "UNIQUE" | "IF" | "NOT" | "EXISTS"))
            .unwrap_or_default();
        let what: String = what.chars().take_while(|c| c.is_ascii_alphabetic()).collect();
        format!("{first} {what}").trim().to_string()
    } else if first.is_empty() {
        "UNKNOWN".into()
    } else {
        first
    }
}
