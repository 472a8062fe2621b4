//! The union of several roles' slices of one object (surface §3: "across several roles of one
//! principal, access is the union").
//!
//! Each role's grant layers (catalog grant, then object grant) are first flattened into one
//! predicate and one column list over the object's own shape, by substituting each layer's
//! column expressions into the next layer's expressions. Then, per row, the principal sees what
//! the first role that admits the row shows: a column's value is
//! `CASE WHEN <role A's predicate> THEN <A's expression> WHEN <B's …> THEN … END`, with the
//! roles that show the column unmasked tried first, and a row is visible when any role's
//! predicate holds. A column only some roles show is NULL on rows only the others admit.
//!
//! Composition is refused (fail closed) when a later layer's expression holds something whose
//! names the substitution cannot follow: a subquery, a lambda or a qualified column.
use crate::sqltext::WalkMut as _;
use crate::error::{AclError, Result, Uncombinable};
use crate::policy::{norm, Column, Slice};
use sqlparser::ast::{Expr, VisitorMut};
use sqlparser::dialect::DuckDbDialect;
use sqlparser::parser::Parser;
use std::ops::ControlFlow;

/// One role's grant layers as a single predicate and column list over the object's own shape.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Flat {
    pub pred: Option<String>,
    /// `None`: every column of the object, unchanged. Expressions are SQL over its columns.
    pub columns: Option<Vec<(String, String)>>,
}

/// What the union of several roles puts on top of the object's own shape.
#[derive(Debug, Clone, PartialEq)]
pub enum UnionLayer {
    /// Every contributing role lists its columns: the union's columns, in first-seen order.
    Listed { rls: String, columns: Vec<(String, String)> },
    /// Some role shows every column (`open` is the OR of those roles' predicates, `TRUE` when
    /// one of them has none): the object's own columns, where the columns other roles list are
    /// replaced by `CASE WHEN open THEN col ELSE <others' expression> END`. Every other column is
    /// NULL on rows only the listing roles admit.
    Open { rls: String, open: String, replace: Vec<(String, String)> },
}

pub(super) fn flatten(layers: &[&Slice]) -> Result<Flat> {
    let mut flat = Flat { pred: None, columns: None };
    for layer in layers {
        let pred = match &layer.rls {
            Some(r) => {
                let r = substitute(r, flat.columns.as_deref())?;
                Some(match flat.pred.take() {
                    // Evaluated only on rows the earlier layer admits, as the stacked form does.
                    Some(p) => format!("CASE WHEN ({p}) THEN ({r}) END"),
                    None => r,
                })
            }
            None => flat.pred.take(),
        };
        let columns = match &layer.columns {
            Some(cols) => Some(
                cols.iter()
                    .map(|c| {
                        let e = c.expr.clone().unwrap_or_else(|| quoted(&c.name));
                        Ok((c.name.clone(), substitute(&e, flat.columns.as_deref())?))
                    })
                    .collect::<Result<Vec<_>>>()?,
            ),
            None => flat.columns.take(),
        };
        flat = Flat { pred, columns };
    }
    Ok(flat)
}

/// The union of two or more roles' flattened slices (at least two, all different).
pub(super) fn union(roles: &[Flat]) -> UnionLayer {
    let pred = |f: &Flat| f.pred.clone().unwrap_or_else(|| "TRUE".into());
    let rls = roles.iter().map(|f| format!("({})", pred(f))).collect::<Vec<_>>().join(" OR ");
    // Per column, the roles that show it: unmasked (the plain column itself) before masked.
    let mut order: Vec<String> = Vec::new();
    let mut branches: Vec<(String, Vec<(bool, String, String)>)> = Vec::new();
    for f in roles.iter().filter(|f| f.columns.is_some()) {
        for (name, expr) in f.columns.as_ref().expect("filtered") {
            let plain = *expr == quoted(name);
            match branches.iter_mut().find(|(n, _)| n == name) {
                Some((_, b)) => b.push((plain, pred(f), expr.clone())),
                None => {
                    order.push(name.clone());
                    branches.push((name.clone(), vec![(plain, pred(f), expr.clone())]));
                }
            }
        }
    }
    let case = |b: &mut Vec<(bool, String, String)>, otherwise: Option<String>| {
        b.sort_by_key(|(plain, _, _)| !*plain); // stable: role order within each group
        let mut s = String::from("CASE");
        for (_, p, e) in b.iter() {
            s.push_str(&format!(" WHEN ({p}) THEN ({e})"));
        }
        if let Some(o) = otherwise {
            s.push_str(&format!(" ELSE ({o})"));
        }
        s.push_str(" END");
        s
    };
    let open: Vec<String> = roles.iter().filter(|f| f.columns.is_none()).map(|f| format!("({})", pred(f))).collect();
    if open.is_empty() {
        let columns = branches.iter_mut().map(|(n, b)| (n.clone(), case(b, None))).collect();
        UnionLayer::Listed { rls, columns }
    } else {
        let replace = branches.iter_mut().map(|(n, b)| (n.clone(), case(b, None))).collect();
        UnionLayer::Open { rls, open: open.join(" OR "), replace }
    }
}

fn quoted(name: &str) -> String {
    crate::sqltext::ident(name)
}

/// `expr` with each column name replaced by that column's expression in `columns` (an earlier
/// layer's output). `None`: the earlier layers keep the object's columns, nothing to replace.
fn substitute(expr: &str, columns: Option<&[(String, String)]>) -> Result<String> {
    let Some(columns) = columns else { return Ok(expr.to_string()) };
    let mut e = parse(expr)?;
    let mut s = Substitute { columns, error: None };
    let _ = e.walk_mut(&mut s);
    match s.error {
        Some(err) => Err(err),
        None => Ok(e.to_string()),
    }
}

fn parse(sql: &str) -> Result<Expr> {
    Parser::new(&DuckDbDialect {})
        .try_with_sql(sql)
        .and_then(|mut p| p.parse_expr())
        .map_err(|_| AclError::internal("a policy expression did not parse"))
}

struct Substitute<'c> {
    columns: &'c [(String, String)],
    error: Option<AclError>,
}

impl VisitorMut for Substitute<'_> {
    type Break = ();

    // Any query or table name inside (a subquery, `IN (SELECT …)`, `IN tbl`) has its own scope.
    fn pre_visit_query(&mut self, _: &mut sqlparser::ast::Query) -> ControlFlow<()> {
        self.error = Some(refuse(Uncombinable::Subquery));
        ControlFlow::Break(())
    }

    fn pre_visit_relation(&mut self, _: &mut sqlparser::ast::ObjectName) -> ControlFlow<()> {
        self.error = Some(refuse(Uncombinable::Subquery));
        ControlFlow::Break(())
    }

    fn post_visit_expr(&mut self, e: &mut Expr) -> ControlFlow<()> {
        match e {
            Expr::Identifier(id) => {
                let name = norm(&id.value);
                match self.columns.iter().find(|(n, _)| *n == name) {
                    Some((_, sub)) => match parse(sub) {
                        Ok(sub) => *e = Expr::Nested(Box::new(sub)),
                        Err(err) => self.error = Some(err),
                    },
                    // A column the earlier layer hides: the stacked form would not bind it either.
                    None => self.error = Some(refuse(Uncombinable::HiddenColumn(name))),
                }
            }
            Expr::CompoundIdentifier(_) => self.error = Some(refuse(Uncombinable::QualifiedColumn)),
            Expr::Lambda(_) => self.error = Some(refuse(Uncombinable::Lambda)),
            _ => {}
        }
        if self.error.is_some() {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    }
}

fn refuse(uses: Uncombinable) -> AclError {
    AclError::RolesNotCombinable { uses }
}

/// A `Column` list from a flattened one (the `Listed` union as an ordinary layer).
pub(super) fn as_columns(columns: &[(String, String)]) -> Vec<Column> {
    columns.iter().map(|(n, e)| Column { name: n.clone(), expr: Some(e.clone()) }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slice(rls: Option<&str>, cols: Option<&[(&str, Option<&str>)]>) -> Slice {
        Slice {
            rls: rls.map(str::to_string),
            columns: cols.map(|c| c.iter().map(|(n, e)| Column { name: n.to_string(), expr: e.map(str::to_string) }).collect()),
        }
    }

    #[test]
    fn flattening_substitutes_earlier_columns() {
        let cat = slice(Some("region = 'eu'"), Some(&[("id", None), ("mail", Some("lower(email)"))]));
        let obj = slice(Some("mail LIKE '%@x'"), Some(&[("id", None), ("m2", Some("left(mail, 2)"))]));
        let f = flatten(&[&cat, &obj]).unwrap();
        assert_eq!(f.pred.as_deref(), Some("CASE WHEN (region = 'eu') THEN ((lower(email)) LIKE '%@x') END"));
        assert_eq!(
            f.columns.unwrap(),
            vec![("id".to_string(), "(\"id\")".to_string()), ("m2".to_string(), "left((lower(email)), 2)".to_string())]
        );
    }

    #[test]
    fn flattening_refuses_what_it_cannot_follow() {
        let cat = slice(None, Some(&[("id", None)]));
        for bad in ["ssn = 'x'", "t.id = 1", "id IN (SELECT 1)", "EXISTS (SELECT 1)", "list_filter([id], x -> x > 1) = [1]"] {
            let obj = slice(Some(bad), None);
            let e = flatten(&[&cat, &obj]).unwrap_err();
            assert!(matches!(e, AclError::RolesNotCombinable { .. }), "{bad}: {e:?}");
        }
    }

    #[test]
    fn union_prefers_unmasked_and_ors_rows() {
        let a = Flat { pred: Some("r = 'a'".into()), columns: Some(vec![("id".into(), "\"id\"".into()), ("ssn".into(), "NULL".into())]) };
        let b = Flat { pred: Some("r = 'b'".into()), columns: Some(vec![("ssn".into(), "\"ssn\"".into()), ("x".into(), "1".into())]) };
        let UnionLayer::Listed { rls, columns } = union(&[a, b]) else { panic!() };
        assert_eq!(rls, "(r = 'a') OR (r = 'b')");
        assert_eq!(columns[0], ("id".into(), "CASE WHEN (r = 'a') THEN (\"id\") END".into()));
        assert_eq!(columns[1], ("ssn".into(), "CASE WHEN (r = 'b') THEN (\"ssn\") WHEN (r = 'a') THEN (NULL) END".into()));
        assert_eq!(columns[2], ("x".into(), "CASE WHEN (r = 'b') THEN (1) END".into()));
    }

    #[test]
    fn a_role_with_every_column_opens_the_shape() {
        let a = Flat { pred: None, columns: None };
        let b = Flat { pred: Some("r = 'b'".into()), columns: Some(vec![("ssn".into(), "NULL".into())]) };
        let UnionLayer::Open { rls, open, replace } = union(&[a, b]) else { panic!() };
        assert_eq!(rls, "(TRUE) OR (r = 'b')");
        assert_eq!(open, "(TRUE)");
        assert_eq!(replace, vec![("ssn".into(), "CASE WHEN (r = 'b') THEN (NULL) END".into())]);
    }
}
