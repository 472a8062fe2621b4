//! One copy of sqlparser's tree walk for all our visitors (spec 012, "One walk's code").
//!
//! sqlparser's `visit` is generic over the visitor, so each of our visitor types got its own copy
//! of the walk over every node type: a never-seen statement ran a dozen copies once each, and
//! fetching their code cost more than running it. `Walk::walk`/`WalkMut::walk_mut` hand sqlparser a `Dyn`
//! visitor instead, which calls ours through a vtable: one copy of the walk per break type (`()`
//! or `AclError`), shared by every visitor. The hooks are forwarded one for one, so a visitor
//! behaves exactly as when handed to `visit` directly.
use sqlparser::ast::{
    Expr, GroupByExpr, Ident, ObjectName, OrderBy, OrderByExpr, Query, Select, Statement, TableFactor, ValueWithSpan, Visit,
    VisitMut, Visitor, VisitorMut,
};
use std::ops::ControlFlow;

/// `node.walk(&mut visitor)`: sqlparser's `visit`, through the shared copy (see the module).
pub trait Walk: Visit {
    fn walk<B>(&self, visitor: &mut dyn Visitor<Break = B>) -> ControlFlow<B> {
        self.visit(&mut Dyn(visitor))
    }
}

/// `node.walk_mut(&mut visitor)`: sqlparser's `visit` of a visitor that may change the tree.
pub trait WalkMut: VisitMut {
    fn walk_mut<B>(&mut self, visitor: &mut dyn VisitorMut<Break = B>) -> ControlFlow<B> {
        self.visit(&mut DynMut(visitor))
    }
}

impl<T: Visit + ?Sized> Walk for T {}
impl<T: VisitMut + ?Sized> WalkMut for T {}

struct Dyn<'v, B>(&'v mut dyn Visitor<Break = B>);
struct DynMut<'v, B>(&'v mut dyn VisitorMut<Break = B>);

macro_rules! forward {
    ($($pre:ident $post:ident: $ty:ty;)*) => {
        impl<B> Visitor for Dyn<'_, B> {
            type Break = B;
            $(
                fn $pre(&mut self, n: &$ty) -> ControlFlow<B> { self.0.$pre(n) }
                fn $post(&mut self, n: &$ty) -> ControlFlow<B> { self.0.$post(n) }
            )*
        }
        impl<B> VisitorMut for DynMut<'_, B> {
            type Break = B;
            $(
                fn $pre(&mut self, n: &mut $ty) -> ControlFlow<B> { self.0.$pre(n) }
                fn $post(&mut self, n: &mut $ty) -> ControlFlow<B> { self.0.$post(n) }
            )*
        }
    };
}

/// Every hook pair of sqlparser 0.64's `Visitor` and `VisitorMut`, handed to `$m` (the
/// forwarding here, the logging visitor of the tests).
macro_rules! with_hooks {
    ($m:ident) => {
        $m! {
            pre_visit_query post_visit_query: Query;
            pre_visit_select post_visit_select: Select;
            pre_visit_relation post_visit_relation: ObjectName;
            pre_visit_table_factor post_visit_table_factor: TableFactor;
            pre_visit_expr post_visit_expr: Expr;
            pre_visit_statement post_visit_statement: Statement;
            pre_visit_value post_visit_value: ValueWithSpan;
            pre_visit_ident post_visit_ident: Ident;
            pre_visit_order_by post_visit_order_by: OrderBy;
            pre_visit_order_by_expr post_visit_order_by_expr: OrderByExpr;
            pre_visit_group_by post_visit_group_by: GroupByExpr;
        }
    };
}

with_hooks!(forward);

#[cfg(test)]
mod tests {
    use super::*;
    use sqlparser::dialect::DuckDbDialect;
    use sqlparser::parser::Parser;

    /// Records every hook, by name and the node's print.
    #[derive(Default)]
    struct Log(Vec<String>);

    macro_rules! logging {
        ($($pre:ident $post:ident: $ty:ty;)*) => {
            impl Visitor for Log {
                type Break = ();
                $(
                    fn $pre(&mut self, n: &$ty) -> ControlFlow<()> { self.0.push(format!("{} {n}", stringify!($pre))); ControlFlow::Continue(()) }
                    fn $post(&mut self, n: &$ty) -> ControlFlow<()> { self.0.push(format!("{} {n}", stringify!($post))); ControlFlow::Continue(()) }
                )*
            }
            impl VisitorMut for Log {
                type Break = ();
                $(
                    fn $pre(&mut self, n: &mut $ty) -> ControlFlow<()> { self.0.push(format!("{} {n}", stringify!($pre))); ControlFlow::Continue(()) }
                    fn $post(&mut self, n: &mut $ty) -> ControlFlow<()> { self.0.push(format!("{} {n}", stringify!($post))); ControlFlow::Continue(()) }
                )*
            }
        };
    }

    with_hooks!(logging);

    /// Through the shared copy a visitor sees every hook sqlparser's own `visit` gives it, in the
    /// same order; a hook left out of `with_hooks!` is never logged, which the list below catches.
    #[test]
    fn walk_calls_every_hook_visit_calls() {
        let sql = "WITH w AS (SELECT 1 AS x) SELECT a.b, upper(c), 'v', 2 FROM t AS a JOIN w ON a.x = w.x \
                   WHERE a.y IN (SELECT z FROM u) GROUP BY a.b, c ORDER BY 1 DESC LIMIT 3";
        let stmt = Parser::parse_sql(&DuckDbDialect {}, sql).unwrap().remove(0);
        let (mut direct, mut shared) = (Log::default(), Log::default());
        let _ = Visit::visit(&stmt, &mut direct);
        let _ = stmt.walk(&mut shared);
        assert_eq!(direct.0, shared.0);
        for hook in ["query", "select", "relation", "table_factor", "expr", "statement", "value", "ident", "order_by",
                     "order_by_expr", "group_by"] {
            assert!(shared.0.iter().any(|l| l.starts_with(&format!("pre_visit_{hook} "))), "{hook} never called");
        }
        let (mut a, mut b) = (stmt.clone(), stmt);
        let (mut direct, mut shared) = (Log::default(), Log::default());
        let _ = VisitMut::visit(&mut a, &mut direct);
        let _ = b.walk_mut(&mut shared);
        assert_eq!(direct.0, shared.0);
    }
}
