//! What one piece of policy SQL names (spec 011, "regions"). Every piece of SQL the policy
//! supplies — a sliced object's or virtual view's subquery, a virtual function's body, a metadata
//! listing — is inserted as a derived table aliased `"__acl_p<j>"` (a *region*), and its allowed
//! set is read here from that SQL alone: never from what a rule met while walking the
//! principal's statement. Inside region j DuckDB's parse may then name only what region j's SQL
//! names, and use each column name at most as often as that SQL does, so a principal's
//! expression that ends up inside policy SQL is caught by name and by count.
use crate::sqltext::Walk as _;
use super::parts;
use crate::policy::PhysName;
use crate::sqltext::{acl_arg_index, is_acl_claim};
use sqlparser::ast::{Expr, ObjectNamePart, Query, TableFactor, Visit, Visitor};
use std::ops::ControlFlow;

/// The alias that opens region j in the rewritten text.
pub const PREFIX: &str = "__acl_p";

/// The alias of the derived table that carries a virtual function's arguments, and the name its
/// placeholders take: `acl_arg(n)` becomes `"__acl_args"."a<n>"` (spec 004).
pub const ARGS: &str = "__acl_args";

/// `"__acl_p<j>"` as an identifier value.
pub fn alias(j: usize) -> String {
    format!("{PREFIX}{j}")
}

/// The CTE a slice named more than once in a statement is moved into (`"__acl_s<j>"`, j its
/// region; spec 019).
pub const SLICE_CTE: &str = "__acl_s";

/// `"__acl_s<j>"` as an identifier value.
pub fn slice_cte(j: usize) -> String {
    format!("{SLICE_CTE}{j}")
}

/// The region whose slice a CTE name holds (`__acl_s<j>`, any case), if it is one.
pub fn slice_cte_index(name: &str) -> Option<usize> {
    numbered(name, SLICE_CTE)
}

/// The region index an alias opens (`__acl_p<j>`, any case), if it is one.
pub fn index_of(alias: &str) -> Option<usize> {
    numbered(alias, PREFIX)
}

/// `<prefix><digits>` (the prefix in any case) → the number.
fn numbered(name: &str, prefix: &str) -> Option<usize> {
    let head = name.get(..prefix.len())?;
    let digits = &name[prefix.len()..];
    if !head.eq_ignore_ascii_case(prefix) || digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// Names a part of a statement may use (the principal's, outside every region; or one region's).
#[derive(Debug, Default, PartialEq, Eq, Clone)]
pub struct Names {
    /// Physical tables.
    pub tables: Vec<PhysName>,
    /// CTE names (defined and referenced).
    pub ctes: Vec<String>,
    /// Scalar, aggregate and window functions (name parts as written or emitted).
    pub functions: Vec<Vec<String>>,
    pub table_functions: Vec<Vec<String>>,
}

/// One region's allowed set: the names its policy SQL uses, and how often it uses each
/// identifier as (part of) a column reference.
#[derive(Debug, Default, PartialEq, Eq, Clone)]
pub struct Region {
    pub names: Names,
    /// `(identifier, count)`, ASCII-lower-case and sorted by identifier.
    pub columns: Vec<(String, u32)>,
    /// SQL an administrator wrote (a slice, a view, a function body): the second check applies
    /// the policy-SQL rules inside it too (spec 007, "Policy SQL is input"). False only for the
    /// extension's own listings, which call `acl_meta`.
    pub authored: bool,
}

impl Region {
    /// Reads a piece of policy SQL as stored (placeholders and claims still in it):
    /// `acl_arg(n)` counts as the column `"__acl_args"."a<n>"` it becomes, `acl_claim('k')` as the
    /// literal it becomes. sqlparser may count more identifiers as columns than DuckDB's parse
    /// holds (a lambda's parameters count, as DuckDB lists them as column references too), which
    /// only makes the budget larger than the policy SQL's own use — never smaller than DuckDB's.
    pub fn of<T: Visit + ?Sized>(sql: &T) -> Region {
        let mut r = Reader { names: Names::default(), columns: Vec::new() };
        let _ = sql.walk(&mut r);
        let mut columns = r.columns;
        columns.sort_unstable();
        let mut counted: Vec<(String, u32)> = Vec::new();
        for c in columns {
            match counted.last_mut() {
                Some((last, n)) if *last == c => *n += 1,
                _ => counted.push((c, 1)),
            }
        }
        Region { names: r.names, columns: counted, authored: true }
    }

    /// A region of the extension's own SQL (a metadata listing), not policy SQL.
    pub fn ours(self) -> Region {
        Region { authored: false, ..self }
    }

    /// The position of identifier `name` in `columns` (case-insensitive).
    pub(super) fn column(&self, name: &str) -> Option<usize> {
        self.columns.binary_search_by(|(c, _)| cmp_lower(c, name)).ok()
    }
}

/// Compares an already lower-case `a` with `b` as if `b` were ASCII-lower-cased.
fn cmp_lower(a: &str, b: &str) -> std::cmp::Ordering {
    a.bytes().cmp(b.bytes().map(|c| c.to_ascii_lowercase()))
}

struct Reader {
    names: Names,
    columns: Vec<String>,
}

impl Reader {
    fn column(&mut self, part: &str) {
        self.columns.push(part.to_ascii_lowercase());
    }
}

impl Visitor for Reader {
    type Break = ();

    fn pre_visit_query(&mut self, q: &Query) -> ControlFlow<()> {
        if let Some(with) = &q.with {
            self.names.ctes.extend(with.cte_tables.iter().map(|c| c.alias.name.value.clone()));
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_table_factor(&mut self, tf: &TableFactor) -> ControlFlow<()> {
        if let TableFactor::Table { name, args, .. } = tf {
            match (args, name.0.as_slice()) {
                (Some(_), _) => self.names.table_functions.push(parts(name)),
                (None, [ObjectNamePart::Identifier(d), ObjectNamePart::Identifier(s), ObjectNamePart::Identifier(t)]) => {
                    self.names.tables.push(PhysName { db: d.value.clone(), schema: s.value.clone(), name: t.value.clone() })
                }
                _ => {}
            }
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, e: &Expr) -> ControlFlow<()> {
        match e {
            Expr::Function(f) => {
                if let Some(n) = acl_arg_index(f) {
                    self.column(ARGS);
                    self.column(&format!("a{n}"));
                } else if !is_acl_claim(f) {
                    self.names.functions.push(parts(&f.name));
                }
            }
            Expr::Identifier(i) => self.column(&i.value),
            Expr::CompoundIdentifier(ids) => ids.iter().for_each(|i| self.column(&i.value)),
            Expr::Lambda(l) => l.params.iter().for_each(|p| self.column(&p.name.value)),
            _ => {}
        }
        ControlFlow::Continue(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(sql: &str) -> Box<Query> {
        sqlparser::parser::Parser::new(&sqlparser::dialect::DuckDbDialect {})
            .try_with_sql(sql)
            .and_then(|mut p| p.parse_query())
            .unwrap()
    }

    #[test]
    fn a_body_is_read_with_its_placeholders_as_the_columns_they_become() {
        let r = Region::of(&*query(
            "WITH x AS (SELECT 1) SELECT id, Name, p.id FROM \"phys\".\"main\".\"people\" AS p, read_csv('f') \
             WHERE id = acl_arg(1) AND tenant = acl_claim('tenant') AND list_any(l, lambda v: v > 1)",
        ));
        assert_eq!(r.names.tables, vec![PhysName { db: "phys".into(), schema: "main".into(), name: "people".into() }]);
        assert_eq!(r.names.ctes, vec!["x".to_string()]);
        assert_eq!(r.names.table_functions, vec![vec!["read_csv".to_string()]]);
        assert_eq!(r.names.functions, vec![vec!["list_any".to_string()]]);
        let cols: Vec<(&str, u32)> = r.columns.iter().map(|(c, n)| (c.as_str(), *n)).collect();
        assert_eq!(
            cols,
            [("__acl_args", 1), ("a1", 1), ("id", 3), ("l", 1), ("name", 1), ("p", 1), ("tenant", 1), ("v", 2)]
        );
        assert_eq!(r.column("NAME"), Some(4));
        assert_eq!(r.column("ssn"), None);
    }

    #[test]
    fn region_aliases() {
        assert_eq!(index_of("__acl_p0"), Some(0));
        assert_eq!(index_of("__ACL_P12"), Some(12));
        for a in ["__acl_p", "__acl_px", "__acl_args", "__acl_l0", "people", "__acl_p-1", ""] {
            assert_eq!(index_of(a), None, "{a}");
        }
        assert_eq!(alias(3), "__acl_p3");
    }
}
