//! Policy SQL in the rewritten statement: the subquery that stands for a sliced object (built by
//! `authz::slices`) or a metadata listing, inserted as a region (spec 011); the templates the
//! wrappers are cloned from.
use sqlparser::ast::{Ident, Query, TableAlias, TableFactor};
use sqlparser::dialect::DuckDbDialect;
use sqlparser::parser::Parser;

/// Inserts a piece of policy SQL (a sliced object's or view's subquery, a metadata listing) as
/// a region (spec 011): what it names is read from it alone and recorded as region j, the
/// rules after this one leave it alone (`trusted`: by the alias), and it comes back wrapped as
/// `SELECT * FROM (<sql>) AS "__acl_p<j>"`, so DuckDB's parse shows where it starts and ends
/// while the caller keeps its own alias on the outer derived table.
pub(super) fn region_subquery(decision: &mut super::Decision, sql: Box<Query>) -> Box<Query> {
    let region = super::defence::Region::of(&*sql);
    wrapped(decision, sql, region)
}

/// A metadata listing as a region: the extension's own SQL (it calls `acl_meta`), which the second
/// check does not judge as policy SQL.
pub(super) fn listing_subquery(decision: &mut super::Decision, sql: Box<Query>) -> Box<Query> {
    let region = super::defence::Region::of(&*sql).ours();
    wrapped(decision, sql, region)
}

fn wrapped(decision: &mut super::Decision, sql: Box<Query>, region: super::defence::Region) -> Box<Query> {
    let j = decision.region(region);
    static WRAPPER: std::sync::OnceLock<Query> = std::sync::OnceLock::new();
    let mut q = Box::new(template(&WRAPPER, "SELECT * FROM (SELECT 1) AS x").clone());
    if let sqlparser::ast::SetExpr::Select(s) = q.body.as_mut() {
        s.from[0].relation = TableFactor::Derived {
            lateral: false,
            subquery: sql,
            alias: Some(region_alias(j)),
            sample: None,
        };
    }
    q
}

/// A sliced object's or virtual view's subquery as region j without another layer: its own
/// FROM item (the inner layer `"__acl_l<i>"`, `"__acl_u<i>"` or `"__acl_v"`, a name nothing in the
/// slice refers to) takes the name `"__acl_p<j>"`, and DuckDB's parse shows the region as the
/// subquery whose FROM item carries it (cpp/walk.cpp). A wrapper layer costs DuckDB a bind of
/// its own on every execution (spec 011, "Cost"); any other shape falls back to one.
pub(super) fn region_slice(decision: &mut super::Decision, mut sql: Box<Query>) -> Box<Query> {
    let from_alias = match sql.body.as_mut() {
        sqlparser::ast::SetExpr::Select(s) if sql.with.is_none() && s.from.len() == 1 && s.from[0].joins.is_empty() => {
            match &mut s.from[0].relation {
                TableFactor::Table { alias: Some(a), args: None, .. } | TableFactor::Derived { alias: Some(a), .. } => Some(a),
                _ => None,
            }
        }
        _ => None,
    };
    let Some(alias) = from_alias else { return region_subquery(decision, sql) };
    let j = decision.regions.len();
    *alias = region_alias(j);
    let region = super::defence::Region::of(&*sql);
    decision.region(region);
    sql
}

/// `AS "__acl_p<j>"`.
pub(super) fn region_alias(j: usize) -> TableAlias {
    TableAlias { explicit: true, name: Ident::with_quote('"', super::defence::region_alias(j)), columns: vec![], at: None }
}

/// A fixed query parsed once per process (`cell` is the caller's static), for building the
/// wrappers around policy SQL: cloned and filled in, cheaper than parsing each time.
pub(super) fn template(cell: &'static std::sync::OnceLock<Query>, sql: &str) -> &'static Query {
    cell.get_or_init(|| {
        *Parser::new(&DuckDbDialect {})
            .try_with_sql(sql)
            .and_then(|mut p| p.parse_query())
            .expect("a fixed template parses")
    })
}
