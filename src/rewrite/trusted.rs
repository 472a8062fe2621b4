//! Skipping the policy's own SQL. A subquery the policy supplied (a sliced object, a metadata
//! listing, a virtual view or function body, a view's guard) is operator-written SQL over
//! physical names, inserted whole; the rules after the one that inserted it, and the post-check,
//! leave it and everything inside it alone. Every visitor tracks that the same way, here.
//!
//! Policy SQL is recognised by its shape, not by where it sits in memory: every insertion carries
//! a reserved name (`sqltext::check_reserved` refuses `__acl…` in a principal's text, so the
//! principal cannot forge one):
//! - a query whose only FROM item is aliased `"__acl_p<j>"` (a slice whose own FROM item took the
//!   region's name, or the `SELECT * FROM (<policy sql>) AS "__acl_p<j>"` wrapper);
//! - the subquery of a derived table aliased `"__acl_p<j>"` (a virtual function's body beside
//!   the VALUES list of the principal's arguments, which is not policy SQL and is walked);
//! - a view's guard `SELECT … FROM "system"."main"."acl_view_guard"(…) AS "__acl_g", (<body>) …`
//!   (its body was rewritten by the rules before the guard was put around it).
use super::defence::region_index;
use sqlparser::ast::{Expr, ObjectNamePart, Query, SetExpr, TableFactor};

/// How deep a visitor is inside policy SQL (0: in the principal's own SQL).
#[derive(Default)]
pub(super) struct Trusted {
    depth: usize,
    /// Test-only fault `vfn_args_unresolved` (spec 011): a virtual function call's arguments
    /// (and, once expanded, the `"__acl_args"` VALUES list) are skipped as if they were policy SQL.
    skip_args: bool,
}

impl Trusted {
    pub fn new(faults: crate::faults::Faults) -> Trusted {
        Trusted { depth: 0, skip_args: faults.vfn_args_unresolved }
    }

    /// From `pre_visit_query`: whether `q` is policy SQL or inside it (the visitor skips it).
    pub fn enter(&mut self, q: &Query) -> bool {
        if self.depth > 0 || is_policy_query(q) {
            self.depth += 1;
            return true;
        }
        false
    }

    /// From `post_visit_query`: whether the query being left was policy SQL or inside it.
    pub fn leave(&mut self) -> bool {
        if self.depth > 0 {
            self.depth -= 1;
            return true;
        }
        false
    }

    /// From `pre_visit_table_factor`, before the visitor looks at (or replaces) `tf`.
    pub fn enter_factor(&mut self, tf: &TableFactor) {
        if self.depth > 0 || is_policy_factor(tf, self.skip_args) {
            self.depth += 1;
        }
    }

    /// From `post_visit_table_factor` (the factor may have been replaced since `enter_factor`:
    /// nothing here looks at it again).
    pub fn leave_factor(&mut self) {
        self.leave();
    }

    /// From `pre_visit_expr`: only the test fault makes an expression policy SQL.
    pub fn enter_expr(&mut self, e: &Expr) {
        if self.depth > 0 || (self.skip_args && is_marker_call(e)) {
            self.depth += 1;
        }
    }

    /// From `post_visit_expr`.
    pub fn leave_expr(&mut self) {
        self.leave();
    }

    /// Whether the visitor is inside policy SQL now (every other hook skips there).
    pub fn inside(&self) -> bool {
        self.depth > 0
    }
}

fn quoted_value(alias: &Option<sqlparser::ast::TableAlias>) -> Option<&str> {
    let a = alias.as_ref()?;
    (a.name.quote_style == Some('"')).then_some(a.name.value.as_str())
}

fn factor_alias(tf: &TableFactor) -> Option<&str> {
    match tf {
        TableFactor::Table { alias, .. } | TableFactor::Derived { alias, .. } => quoted_value(alias),
        _ => None,
    }
}

fn is_region_alias(alias: Option<&str>) -> bool {
    alias.is_some_and(|a| region_index(a).is_some())
}

fn is_policy_query(q: &Query) -> bool {
    let SetExpr::Select(s) = q.body.as_ref() else { return false };
    match s.from.as_slice() {
        [only] => only.joins.is_empty() && is_region_alias(factor_alias(&only.relation)),
        [guard, _body] => is_view_guard(&guard.relation),
        _ => false,
    }
}

fn is_view_guard(tf: &TableFactor) -> bool {
    let TableFactor::Table { name, args: Some(_), alias, .. } = tf else { return false };
    let parts = name.0.iter().map(|p| match p {
        ObjectNamePart::Identifier(i) if i.quote_style == Some('"') => Some(i.value.as_str()),
        _ => None,
    });
    quoted_value(alias) == Some(super::views::GUARD_ALIAS) && parts.eq(super::views::GUARD_FN.iter().map(|s| Some(*s)))
}

fn is_policy_factor(tf: &TableFactor, skip_args: bool) -> bool {
    match tf {
        TableFactor::Derived { .. } => {
            let alias = factor_alias(tf);
            is_region_alias(alias) || (skip_args && alias == Some(super::defence::ARGS))
        }
        // The fault only: a virtual table function's call, arguments and all.
        TableFactor::Table { name, args: Some(_), .. } => skip_args && super::virtual_fns::marker_index(name).is_some(),
        _ => false,
    }
}

fn is_marker_call(e: &Expr) -> bool {
    matches!(e, Expr::Function(f) if super::virtual_fns::marker_index(&f.name).is_some())
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlparser::ast::{Visit, Visitor};
    use std::ops::ControlFlow;

    /// The tables a visitor using `Trusted` walks (outside policy SQL), in order.
    fn walked(sql: &str, faults: crate::faults::Faults) -> Vec<String> {
        struct Walk {
            t: Trusted,
            seen: Vec<String>,
        }
        impl Visitor for Walk {
            type Break = ();
            fn pre_visit_query(&mut self, q: &Query) -> ControlFlow<()> {
                self.t.enter(q);
                ControlFlow::Continue(())
            }
            fn post_visit_query(&mut self, _: &Query) -> ControlFlow<()> {
                self.t.leave();
                ControlFlow::Continue(())
            }
            fn pre_visit_table_factor(&mut self, tf: &TableFactor) -> ControlFlow<()> {
                self.t.enter_factor(tf);
                ControlFlow::Continue(())
            }
            fn post_visit_table_factor(&mut self, _: &TableFactor) -> ControlFlow<()> {
                self.t.leave_factor();
                ControlFlow::Continue(())
            }
            fn pre_visit_expr(&mut self, e: &Expr) -> ControlFlow<()> {
                self.t.enter_expr(e);
                ControlFlow::Continue(())
            }
            fn post_visit_expr(&mut self, _: &Expr) -> ControlFlow<()> {
                self.t.leave_expr();
                ControlFlow::Continue(())
            }
            fn pre_visit_relation(&mut self, name: &sqlparser::ast::ObjectName) -> ControlFlow<()> {
                if !self.t.inside() {
                    self.seen.push(name.to_string());
                }
                ControlFlow::Continue(())
            }
        }
        let stmt = sqlparser::parser::Parser::parse_sql(&sqlparser::dialect::DuckDbDialect {}, sql).unwrap().remove(0);
        let mut w = Walk { t: Trusted::new(faults), seen: Vec::new() };
        let _ = stmt.visit(&mut w);
        assert_eq!(w.t.depth, 0, "enter and leave pair up");
        w.seen
    }

    fn plain(sql: &str) -> Vec<String> {
        walked(sql, Default::default())
    }

    #[test]
    fn a_slice_whose_from_item_carries_the_region_alias_is_skipped() {
        assert_eq!(plain(r#"SELECT * FROM (SELECT a FROM "d"."s"."t" AS "__acl_p0" WHERE b > 1) AS x, mine"#), ["mine"]);
    }

    #[test]
    fn the_region_wrapper_and_everything_in_it_is_skipped() {
        assert_eq!(plain(r#"SELECT * FROM (SELECT * FROM (SELECT * FROM "d"."s"."t" JOIN u ON true) AS "__acl_p3") AS x WHERE x.a IN (SELECT a FROM mine)"#), ["mine"]);
    }

    #[test]
    fn a_virtual_functions_arguments_are_walked_and_its_body_is_not() {
        let sql = r#"SELECT * FROM (SELECT "__acl_p0".* FROM (VALUES ((SELECT max(a) FROM mine))) AS "__acl_args"("a1"), LATERAL (SELECT * FROM "d"."s"."t") AS "__acl_p0") AS f"#;
        assert_eq!(plain(sql), ["mine"]);
        // Under the test fault the arguments are skipped too (what the second check must catch).
        let faults = crate::faults::Faults { vfn_args_unresolved: true, ..Default::default() };
        assert!(walked(sql, faults).is_empty());
    }

    #[test]
    fn a_view_guard_is_skipped_only_in_its_exact_shape() {
        let guard = r#"SELECT "__acl_q".* FROM "system"."main"."acl_view_guard"('a', 'b') AS "__acl_g", (SELECT * FROM "d"."s"."t") AS "__acl_q""#;
        assert!(plain(guard).is_empty());
        // Another function under the guard's alias is not a guard.
        let other = r#"SELECT * FROM "system"."main"."read_csv"('f') AS "__acl_g", (SELECT * FROM t) AS q"#;
        assert_eq!(plain(other), ["\"system\".\"main\".\"read_csv\"", "t"]);
    }

    #[test]
    fn unquoted_or_lookalike_aliases_are_not_policy_sql() {
        // The principal's text can carry neither (check_reserved), but the shape test alone
        // must not accept them either: only the quoted reserved spelling marks policy SQL.
        assert_eq!(plain("SELECT * FROM t AS __acl_p0"), ["t"]);
        assert_eq!(plain(r#"SELECT * FROM t AS "__acl_px""#), ["t"]);
        assert_eq!(plain(r#"SELECT * FROM t AS "__acl_p0", u"#), ["t", "u"]);
        assert_eq!(plain(r#"SELECT * FROM t AS "__acl_p0" JOIN u ON true"#), ["t", "u"]);
    }
}
