//! An INSERT's own spellings of its target's columns (issue 34, item 6). DuckDB binds the
//! target of an INSERT by the name of the table it writes, which after the rewrite is the
//! physical table: `RETURNING orders.id` would name a table DuckDB does not know, and a column
//! list `(a, orders.b)` is not DuckDB syntax at all (sqlparser reads it). So a qualifier that
//! names the target as the principal wrote it (`orders`, `main.orders`, `sales.orders`,
//! `sales.main.orders`, …: a trailing part of the name as written, or the virtual name) is put
//! in DuckDB's terms: the column list's qualifier dropped, RETURNING's replaced by the written
//! table's bare name as placed. Subqueries of RETURNING are left alone: their names are their
//! own FROM items'. A column list qualified by any other name is refused.
use crate::error::{Result, Unsupported};
use crate::policy::norm;
use sqlparser::ast::{Expr, Ident, ObjectName, ObjectNamePart, Query, SelectItem, VisitorMut};
use std::ops::ControlFlow;

/// The names the target goes by in its INSERT: `written` (folded parts of the name as written)
/// and `shown` (the virtual name's last part).
pub(in crate::rewrite) struct Target<'a> {
    pub written: &'a [String],
    pub shown: &'a str,
    /// The virtual object's key, when it is one (not the principal's temporary table).
    pub key: Option<&'a crate::policy::ObjKey>,
}

impl Target<'_> {
    /// Does `prefix` (folded) name the target: a trailing part of the name as written, or the
    /// virtual name as `n`, `s.n`, `c.s.n` (and `c.n` in `main`)?
    fn is(&self, prefix: &[String]) -> bool {
        let virtual_path = |p: &[String]| {
            self.key.is_some_and(|k| match p {
                [s, n] => *n == k.name && (*s == k.schema || (*s == k.catalog && k.schema == crate::policy::DEFAULT_SCHEMA)),
                [c, s, n] => *c == k.catalog && *s == k.schema && *n == k.name,
                _ => false,
            })
        };
        match prefix {
            [] => false,
            [one] => *one == self.shown || self.written.last() == Some(one),
            _ => self.written.ends_with(prefix) || virtual_path(prefix),
        }
    }
}

/// The column list: `t.a` → `a` when `t` names the target; any other qualifier is refused.
pub(in crate::rewrite) fn columns(cols: &mut [ObjectName], target: &Target<'_>) -> Result<()> {
    for c in cols.iter_mut() {
        if c.0.len() < 2 {
            continue;
        }
        let parts: Option<Vec<String>> = c
            .0
            .iter()
            .map(|p| match p {
                ObjectNamePart::Identifier(i) => Some(norm(&i.value)),
                _ => None,
            })
            .collect();
        let column = c.0.last().map(|p| p.to_string()).unwrap_or_default();
        match parts {
            Some(p) if target.is(&p[..p.len() - 1]) => {
                let last = c.0.pop().expect("two parts or more");
                c.0 = vec![last];
            }
            _ => return Err(Unsupported::InsertColumnQualifier { column }.into()),
        }
    }
    Ok(())
}

/// RETURNING: `t.a` → `"<placed>".a` when `t` names the target, outside subqueries.
pub(in crate::rewrite) fn returning(items: &mut [SelectItem], target: &Target<'_>, placed: &Ident) {
    let mut r = Requalify { target, placed, depth: 0 };
    for item in items {
        let _ = crate::sqltext::WalkMut::walk_mut(item, &mut r);
    }
}

struct Requalify<'a, 'b> {
    target: &'a Target<'b>,
    placed: &'a Ident,
    depth: usize,
}

impl VisitorMut for Requalify<'_, '_> {
    type Break = ();

    fn pre_visit_query(&mut self, _: &mut Query) -> ControlFlow<()> {
        self.depth += 1;
        ControlFlow::Continue(())
    }

    fn post_visit_query(&mut self, _: &mut Query) -> ControlFlow<()> {
        self.depth -= 1;
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, e: &mut Expr) -> ControlFlow<()> {
        if self.depth > 0 {
            return ControlFlow::Continue(());
        }
        if let Expr::CompoundIdentifier(ids) = e {
            // the longest prefix that names the target, leaving at least the column
            let folded: Vec<String> = ids.iter().map(|i| norm(&i.value)).collect();
            if let Some(n) = (1..ids.len()).rev().find(|&n| self.target.is(&folded[..n])) {
                ids.splice(..n, [self.placed.clone()]);
            }
        }
        ControlFlow::Continue(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target_of<'a>(written: &'a [String]) -> Target<'a> {
        Target { written, shown: "orders", key: None }
    }

    #[test]
    fn qualifiers_of_the_target_are_put_in_duckdb_terms() {
        let written = vec!["sales".to_string(), "orders".to_string()];
        let t = target_of(&written);
        let stmt = crate::rewrite::parse_one("INSERT INTO sales.orders (id, orders.amount, sales.orders.x) VALUES (1, 2, 3) RETURNING orders.id, sales.orders.amount, (SELECT max(orders.id) FROM orders), other.id").unwrap();
        let sqlparser::ast::Statement::Insert(mut ins) = stmt else { panic!() };
        columns(&mut ins.columns, &t).unwrap();
        assert_eq!(ins.columns.iter().map(|c| c.to_string()).collect::<Vec<_>>(), ["id", "amount", "x"]);
        returning(ins.returning.as_mut().unwrap(), &t, &Ident::with_quote('"', "orders_raw"));
        let printed = ins.returning.unwrap().iter().map(|i| i.to_string()).collect::<Vec<_>>().join(", ");
        assert_eq!(printed, r#""orders_raw".id, "orders_raw".amount, (SELECT max(orders.id) FROM orders), other.id"#);
        let stmt = crate::rewrite::parse_one("INSERT INTO orders (x.a) VALUES (1)").unwrap();
        let sqlparser::ast::Statement::Insert(mut ins) = stmt else { panic!() };
        assert!(columns(&mut ins.columns, &t).is_err());
    }
}
