//! Which physical objects an operator may map into a virtual catalog (issue 10, finding 9).
//!
//! `temp` holds each connection's temporary objects — every principal's own temp tables among
//! them — and `system` holds DuckDB's catalog views and functions, unfiltered. A virtual schema,
//! table, view or function body over either would hand whoever is granted it what no grant can
//! slice, so both are refused, as is any name of the extension's own (`__acl…`: principals'
//! temporary tables, renamed CTEs, markers). Checked when the statement is parsed, so an invalid
//! source never reaches the policy.
use crate::sqltext::Walk as _;
use crate::error::{AclError, Invalid, Result};
use sqlparser::ast::{ObjectName, ObjectNamePart, TableFactor, Visit, Visitor};
use std::ops::ControlFlow;

use crate::policy::policy_sql::{internal, reserved_db};

fn refused(what: &str) -> AclError {
    Invalid::PhysicalSource { name: what.to_string() }.into()
}

/// A physical schema `db.schema` (CREATE VIRTUAL SCHEMA).
pub fn check_schema(db: &str, schema: &str) -> Result<()> {
    if reserved_db(db) || internal(db) || internal(schema) {
        return Err(refused(&format!("{db}.{schema}")));
    }
    Ok(())
}

/// A physical table `db.schema.name` (CREATE VIRTUAL TABLE).
pub fn check_table(db: &str, schema: &str, name: &str) -> Result<()> {
    if reserved_db(db) || internal(db) || internal(schema) || internal(name) {
        return Err(refused(&format!("{db}.{schema}.{name}")));
    }
    Ok(())
}

/// Every table a view query or function body reads. A two-part name may be `db.table` or
/// `schema.table`, so its first part is checked as a database too; any part that is one of our
/// own names is refused.
pub fn check_query<T: Visit>(body: &T) -> Result<()> {
    struct Tables(Option<AclError>);
    impl Visitor for Tables {
        type Break = ();
        fn pre_visit_table_factor(&mut self, tf: &TableFactor) -> ControlFlow<()> {
            if let TableFactor::Table { name, args: None, .. } = tf {
                if let Err(e) = check_name(name) {
                    self.0 = Some(e);
                    return ControlFlow::Break(());
                }
            }
            ControlFlow::Continue(())
        }
    }
    let mut t = Tables(None);
    let _ = body.walk(&mut t);
    t.0.map_or(Ok(()), Err)
}

fn check_name(name: &ObjectName) -> Result<()> {
    let parts: Vec<&str> = name
        .0
        .iter()
        .map(|p| match p {
            ObjectNamePart::Identifier(i) => i.value.as_str(),
            _ => "",
        })
        .collect();
    let shown = parts.join(".");
    if parts.iter().any(|p| internal(p)) || (parts.len() >= 2 && reserved_db(parts[0])) {
        return Err(refused(&shown));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(sql: &str) -> Box<sqlparser::ast::Query> {
        sqlparser::parser::Parser::new(&sqlparser::dialect::DuckDbDialect {})
            .try_with_sql(sql)
            .unwrap()
            .parse_query()
            .unwrap()
    }

    #[test]
    fn temp_system_and_internal_names_are_refused() {
        assert!(check_schema("temp", "main").is_err());
        assert!(check_schema("SYSTEM", "main").is_err());
        assert!(check_schema("phys", "main").is_ok());
        assert!(check_table("Temp", "main", "t").is_err());
        assert!(check_table("phys", "main", "__acl_0123_t").is_err());
        assert!(check_table("phys", "main", "t").is_ok());
        for bad in [
            "SELECT * FROM temp.main.t",
            "SELECT * FROM system.main.duckdb_tables",
            "SELECT * FROM temp.t",
            "SELECT * FROM phys.main.x JOIN (SELECT * FROM \"__acl_x\") y ON true",
            "SELECT (SELECT 1 FROM system.information_schema.tables) FROM phys.main.x",
        ] {
            assert!(check_query(&*query(bad)).is_err(), "{bad}");
        }
        for ok in ["SELECT * FROM phys.main.x", "SELECT * FROM range(3)", "WITH c AS (SELECT 1) SELECT * FROM c"] {
            assert!(check_query(&*query(ok)).is_ok(), "{ok}");
        }
    }
}
