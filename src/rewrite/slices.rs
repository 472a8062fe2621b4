//! Policy SQL in the rewritten statement: the subquery that stands for a sliced object (built by
//! `authz::slices`) or a metadata listing, inserted as a region (spec 011); a slice the statement
//! names more than once, moved into one CTE (`share`, spec 019); the
//! templates the wrappers are cloned from.
use crate::error::{AclError, Result};
use crate::sqltext::WalkMut as _;
use sqlparser::ast::{Ident, ObjectName, Query, SetExpr, Statement, TableAlias, TableFactor, TableSampleKind, VisitorMut, With};
use sqlparser::dialect::DuckDbDialect;
use sqlparser::parser::Parser;
use std::ops::ControlFlow;

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

/// A sliced object a statement reads, kept while `relations` walks a statement that can carry a
/// WITH of its own (`can_share`): the region its first reference was inserted as, and whether the
/// statement names it again (then every reference names one CTE, `share`).
pub(super) struct Shared {
    pub key: crate::policy::ObjKey,
    pub region: usize,
    pub again: bool,
}

/// The CTE that holds region j's slice once a statement names its object more than once.
pub(super) fn cte_name(j: usize) -> String {
    super::defence::slice_cte(j)
}

/// Whether `stmt` can carry a WITH at its top, which every part of it sees: a query (also
/// `WITH … INSERT|UPDATE|DELETE|MERGE` as written), a write (it is put under one, `share`),
/// EXPLAIN of one, CREATE TABLE … AS. Not DESCRIBE: DuckDB parses `DESCRIBE <query>` as a SELECT
/// over the query, whose WITH is then not on the statement's top, where the second check wants
/// it (spec 011); describing runs nothing, so its copies cost only their parse. A view's body is
/// rewritten as a query of its own (`views`); nothing else the gate admits names a table.
pub(super) fn can_share(stmt: &Statement) -> bool {
    use sqlparser::ast::DescribeAlias;
    match stmt {
        Statement::Query(_) | Statement::Insert(_) | Statement::Update(_) | Statement::Delete(_) | Statement::Merge(_) => true,
        Statement::Explain { describe_alias: DescribeAlias::Explain, statement, .. } => can_share(statement),
        Statement::CreateTable(ct) => ct.query.is_some(),
        _ => false,
    }
}

/// A later reference to a shared slice: `"__acl_s<j>" AS <the principal's alias>`, with the
/// principal's sample.
pub(super) fn reference(j: usize, alias: Option<TableAlias>, sample: Option<TableSampleKind>) -> TableFactor {
    static REF: std::sync::OnceLock<Query> = std::sync::OnceLock::new();
    let mut tf = match template(&REF, "SELECT * FROM \"x\"").body.as_ref() {
        SetExpr::Select(s) => s.from[0].relation.clone(),
        _ => unreachable!("a fixed template"),
    };
    if let TableFactor::Table { name, alias: a, sample: s, .. } = &mut tf {
        *name = ObjectName::from(vec![crate::sqltext::quoted(&cte_name(j))]);
        *a = alias;
        *s = sample;
    }
    tf
}

/// After `relations`: each slice the statement names more than once moves from its first
/// reference (the derived table whose FROM item carries `"__acl_p<j>"`, inserted by
/// `region_slice`) into `WITH "__acl_s<j>" AS NOT MATERIALIZED (<slice>)` at the statement's top,
/// and that reference names the CTE as the later ones already do. DuckDB then parses the slice
/// once however often the statement names it, binds it once and copies its plan per reference
/// before the filters are pushed down (NOT MATERIALIZED: a CTE named twice would otherwise be
/// computed once and scanned, which keeps the principal's filters out of its scan).
/// `nested` (test fault `shared_cte_nested`): the CTE where the first reference stood instead.
pub(super) fn share(stmt: &mut Statement, shared: &[Shared], nested: bool) -> Result<()> {
    let wanted: Vec<usize> = shared.iter().filter(|s| s.again).map(|s| s.region).collect();
    if wanted.is_empty() {
        return Ok(());
    }
    struct Take<'w> {
        wanted: &'w [usize],
        found: Vec<(usize, Box<Query>)>,
        nested: bool,
    }
    impl VisitorMut for Take<'_> {
        type Break = ();
        fn pre_visit_table_factor(&mut self, tf: &mut TableFactor) -> ControlFlow<()> {
            let TableFactor::Derived { lateral: false, subquery, alias, sample } = tf else { return ControlFlow::Continue(()) };
            let Some(j) = region_of(subquery).filter(|j| self.wanted.contains(j) && alias.is_some()) else {
                return ControlFlow::Continue(());
            };
            let (alias, sample) = (alias.take(), sample.take());
            let slice = std::mem::replace(subquery, Box::new(empty()));
            *tf = if self.nested {
                // (the test fault) `(WITH "__acl_s<j>" AS (<slice>) SELECT * FROM "__acl_s<j>") AS alias`
                let mut q = Box::new(template(&STAR, "SELECT * FROM \"x\"").clone());
                if let SetExpr::Select(s) = q.body.as_mut() {
                    s.from[0].relation = reference(j, None, None);
                }
                q.with = Some(With { cte_tables: vec![cte(j, slice)], ..with_template().clone() });
                TableFactor::Derived { lateral: false, subquery: q, alias, sample }
            } else {
                self.found.push((j, slice));
                reference(j, alias, sample)
            };
            ControlFlow::Continue(())
        }
    }
    static STAR: std::sync::OnceLock<Query> = std::sync::OnceLock::new();
    let mut take = Take { wanted: &wanted, found: Vec::with_capacity(wanted.len()), nested };
    let _ = stmt.walk_mut(&mut take);
    if nested {
        return Ok(());
    }
    if take.found.len() != wanted.len() {
        return Err(AclError::internal("a shared slice lost its first reference"));
    }
    take.found.sort_unstable_by_key(|(j, _)| *j);
    let with = with_template();
    let ctes = take.found.into_iter().map(|(j, query)| cte(j, query));
    match top(stmt) {
        Some(q) => match &mut q.with {
            // first: the statement's own CTEs may read them
            Some(w) => drop(w.cte_tables.splice(0..0, ctes)),
            None => q.with = Some(With { cte_tables: ctes.collect(), ..with.clone() }),
        },
        None => return Err(AclError::internal("a shared slice has no statement to stand in")),
    }
    Ok(())
}

/// `WITH "x" AS NOT MATERIALIZED (SELECT 1)`, to clone.
fn with_template() -> &'static With {
    static WITH: std::sync::OnceLock<Query> = std::sync::OnceLock::new();
    template(&WITH, "WITH \"x\" AS NOT MATERIALIZED (SELECT 1) SELECT 1").with.as_ref().expect("a fixed template")
}

/// `"__acl_s<j>" AS NOT MATERIALIZED (<slice>)`.
fn cte(j: usize, slice: Box<Query>) -> sqlparser::ast::Cte {
    let mut cte = with_template().cte_tables[0].clone();
    cte.alias.name = crate::sqltext::quoted(&cte_name(j));
    cte.query = slice;
    cte
}

/// The query at the top of `stmt` that a WITH goes on; a write is put under one first
/// (`WITH … INSERT …`, which DuckDB parses as the same statement).
fn top(stmt: &mut Statement) -> Option<&mut Query> {
    if matches!(stmt, Statement::Insert(_) | Statement::Update(_) | Statement::Delete(_) | Statement::Merge(_)) {
        let mut q = Box::new(empty());
        let write = std::mem::replace(stmt, Statement::Query(Box::new(empty())));
        q.body = Box::new(match write {
            Statement::Insert(_) => SetExpr::Insert(write),
            Statement::Update(_) => SetExpr::Update(write),
            Statement::Delete(_) => SetExpr::Delete(write),
            _ => SetExpr::Merge(write),
        });
        *stmt = Statement::Query(q);
    }
    match stmt {
        Statement::Query(q) => Some(q.as_mut()),
        Statement::Explain { statement, .. } => top(statement.as_mut()),
        Statement::CreateTable(ct) => ct.query.as_deref_mut(),
        _ => None,
    }
}

/// The region a slice's subquery is (its only FROM item aliased `"__acl_p<j>"`), if any.
fn region_of(q: &Query) -> Option<usize> {
    let SetExpr::Select(s) = q.body.as_ref() else { return None };
    let [only] = s.from.as_slice() else { return None };
    match &only.relation {
        TableFactor::Table { alias: Some(a), .. } | TableFactor::Derived { alias: Some(a), .. } if only.joins.is_empty() && a.name.quote_style == Some('"') => {
            super::defence::region_index(&a.name.value)
        }
        _ => None,
    }
}

/// `SELECT 1`, a placeholder while a tree is moved.
fn empty() -> Query {
    static ONE: std::sync::OnceLock<Query> = std::sync::OnceLock::new();
    template(&ONE, "SELECT 1").clone()
}
