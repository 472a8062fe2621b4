//! The CTEs of a piece of policy SQL, renamed to names of ours before it goes into a statement
//! (spec 011, "regions"): every CTE it defines and every one-part table name that spells one,
//! wherever it stands, becomes `"__acl_k_<name>"`. DuckDB then binds such a name to the CTE where
//! the CTE is in scope and to nothing elsewhere (no catalog object has a name of ours), so which
//! CTE a name binds to no longer depends on a scoping rule being right: a name written out of its
//! CTE's scope, a recursive CTE's own anchor or `TABLE name` beside a CTE of that name fails to
//! bind instead of reaching the catalog's table of that name.
use super::WalkMut as _;
use sqlparser::ast::{Ident, ObjectNamePart, Query, SetExpr, TableAlias, TableFactor, VisitMut, VisitorMut};
use std::ops::ControlFlow;

/// The prefix a renamed CTE takes.
pub const CTE_PREFIX: &str = "__acl_k_";

/// Renames the CTEs `sql` defines (and every one-part table name spelling one) to ours.
pub fn rename_ctes<T: VisitMut + ?Sized>(sql: &mut T) {
    struct Defined(Vec<String>);
    impl VisitorMut for Defined {
        type Break = ();
        fn pre_visit_query(&mut self, q: &mut Query) -> ControlFlow<()> {
            if let Some(with) = &q.with {
                self.0.extend(with.cte_tables.iter().map(|c| c.alias.name.value.to_ascii_lowercase()));
            }
            ControlFlow::Continue(())
        }
    }
    let mut defined = Defined(Vec::new());
    let _ = sql.walk_mut(&mut defined);
    if defined.0.is_empty() {
        return;
    }
    let _ = sql.walk_mut(&mut Rename { names: defined.0 });
}

struct Rename {
    names: Vec<String>,
}

impl Rename {
    fn rename(&self, i: &mut Ident) {
        if self.names.iter().any(|n| n.eq_ignore_ascii_case(&i.value)) {
            *i = Ident::with_quote('"', format!("{CTE_PREFIX}{}", i.value.to_ascii_lowercase()));
        }
    }

    /// `TABLE name` in a query's body, and in each branch of its set operations.
    fn set_expr(&self, e: &mut SetExpr) {
        match e {
            SetExpr::Table(t) if t.schema_name.is_none() => {
                if let Some(name) = &mut t.table_name {
                    self.rename(name);
                }
            }
            SetExpr::SetOperation { left, right, .. } => {
                self.set_expr(left);
                self.set_expr(right);
            }
            _ => {}
        }
    }
}

impl VisitorMut for Rename {
    type Break = ();

    fn pre_visit_query(&mut self, q: &mut Query) -> ControlFlow<()> {
        if let Some(with) = &mut q.with {
            for cte in &mut with.cte_tables {
                self.rename(&mut cte.alias.name);
            }
        }
        self.set_expr(&mut q.body);
        ControlFlow::Continue(())
    }

    fn pre_visit_table_factor(&mut self, tf: &mut TableFactor) -> ControlFlow<()> {
        if let TableFactor::Table { name, args: None, alias, .. } = tf {
            if let [ObjectNamePart::Identifier(i)] = name.0.as_mut_slice() {
                let written = i.clone();
                self.rename(i);
                // `x.col` keeps naming the CTE: a renamed reference without an alias takes its
                // written name as one.
                if alias.is_none() && *i != written {
                    *alias = Some(TableAlias { explicit: true, name: written, columns: vec![], at: None });
                }
            }
        }
        ControlFlow::Continue(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn renamed(sql: &str) -> String {
        let mut q = sqlparser::parser::Parser::new(&sqlparser::dialect::DuckDbDialect {})
            .try_with_sql(sql)
            .and_then(|mut p| p.parse_query())
            .unwrap();
        rename_ctes(&mut *q);
        q.to_string()
    }

    #[test]
    fn every_definition_and_one_part_name_of_a_cte_is_ours_wherever_it_stands() {
        assert_eq!(renamed("SELECT * FROM phys.main.t"), "SELECT * FROM phys.main.t");
        assert_eq!(
            renamed("WITH x AS (SELECT 1) SELECT * FROM x, phys.main.x, (TABLE X) AS t"),
            r#"WITH "__acl_k_x" AS (SELECT 1) SELECT * FROM "__acl_k_x" AS x, phys.main.x, (TABLE "__acl_k_x") AS t"#
        );
        // Out of its scope too (DuckDB then finds no such table), and a recursive anchor.
        assert_eq!(
            renamed("SELECT * FROM (WITH s AS (SELECT 1) SELECT * FROM s) AS a, s"),
            r#"SELECT * FROM (WITH "__acl_k_s" AS (SELECT 1) SELECT * FROM "__acl_k_s" AS s) AS a, "__acl_k_s" AS s"#
        );
        assert_eq!(
            renamed("WITH RECURSIVE r AS (SELECT k FROM r) SELECT k FROM r"),
            r#"WITH RECURSIVE "__acl_k_r" AS (SELECT k FROM "__acl_k_r" AS r) SELECT k FROM "__acl_k_r" AS r"#
        );
        // A qualifier keeps naming the CTE; an alias written stays.
        assert_eq!(
            renamed("WITH x AS (SELECT 1 AS a) SELECT x.a, y.a FROM x, x AS y"),
            r#"WITH "__acl_k_x" AS (SELECT 1 AS a) SELECT x.a, y.a FROM "__acl_k_x" AS x, "__acl_k_x" AS y"#
        );
    }
}
