//! Policy SQL is input (spec 007, "Policy SQL is input"): every piece of SQL that enters the
//! policy is judged by `policy::policy_sql`'s rules, whoever wrote it, in this order:
//!
//! 1. `check_batch`  — a management batch, when it is parsed and again when it runs: the pieces the
//!                     batch changed (`changed`: the policy before against after), each judged as
//!                     its author's — anonymous `ACL ADMIN` and passthrough as an operator's, global
//!                     manage as such, catalog manage against what is listed for the catalog;
//! 2. `check_policy` — a whole policy read from a store (load, reload, another node's change),
//!                     as an operator's: the store is whoever edits it;
//! 3. at use, the second check applies the same rules to what DuckDB parsed inside each region
//!    (`rewrite::defence`), independently of both.
//!
//! A piece is a physical target (a virtual table's, a virtual schema's), a virtual view's query, an
//! RLS predicate, a mask or computed column, a virtual function's body or alias. This module
//! walks their SQL (sqlparser's reading of what is stored) and asks the rules about each call and
//! each name; the first refusal names the piece by its virtual object.
use super::scope::Held;
use crate::error::{AclError, Forbidden, PolicySql, Result};
use crate::policy::functions::{FnBody, FnKind, VirtualFunction};
use crate::policy::policy_sql::{Author, Rules, Source};
use crate::policy::{AdminScope, Catalog, ObjKey, Policy, Relation, RelationKind, Slice, DEFAULT_SCHEMA};
use crate::sqltext::Walk as _;
use sqlparser::ast::{
    Expr, FunctionArguments, ObjectName, ObjectNamePart, Query, SetExpr, SetOperator, TableFactor, Value, Visitor,
};
use std::collections::BTreeSet;
use std::ops::ControlFlow;

/// Who runs a management batch: `None` is anonymous `ACL ADMIN`.
pub fn author(held: Option<&Held>, _catalog: &str) -> Author {
    match held.and_then(|h| h.admin) {
        None if held.is_none() => Author::Operator,
        Some(AdminScope::Passthrough) => Author::Operator,
        Some(AdminScope::Manage) => Author::GlobalManage,
        None => Author::CatalogManage,
    }
}

/// Step 1: every piece `after` holds that `before` did not hold as it is, judged as written by
/// `held` (`None`: anonymous `ACL ADMIN`).
pub fn check_batch(before: &Policy, after: &Policy, held: Option<&Held>) -> Result<()> {
    each_piece(after, Some(before), &|catalog| author(held, catalog))
}

/// Step 2: a whole policy, as an operator's.
pub fn check_policy(policy: &Policy) -> Result<()> {
    each_piece(policy, None, &|_| Author::Operator)
}

/// Every failure of a whole policy, one line each (the store's refusal lists them all).
pub fn findings(policy: &Policy) -> Vec<String> {
    pieces_refused(policy).into_iter().map(|(_, e)| e).collect()
}

/// Every failure of a whole policy with the catalog it belongs to (`acl_check_catalog`'s
/// `policy_sql` rows), each as its message without the `acl: ` prefix.
pub fn pieces_refused(policy: &Policy) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let _ = walk_pieces(policy, None, &|_| Author::Operator, &mut |catalog, e| {
        let e = e.to_string();
        out.push((catalog.to_string(), e.strip_prefix("acl: ").map_or(e.clone(), str::to_string)));
        Ok(())
    });
    out
}

fn each_piece(after: &Policy, before: Option<&Policy>, author: &dyn Fn(&str) -> Author) -> Result<()> {
    walk_pieces(after, before, author, &mut |_, e| Err(e))
}

/// Walks the pieces of `after` (those that differ from `before`'s, when given), handing each
/// refusal, with the piece's catalog, to `found` (which stops the walk by returning it).
fn walk_pieces<'p>(
    after: &'p Policy,
    before: Option<&Policy>,
    author: &dyn Fn(&str) -> Author,
    found: &mut dyn FnMut(&str, AclError) -> Result<()>,
) -> Result<()> {
    let empty = BTreeSet::new();
    let rules = |catalog: &'p str| {
        let who = author(catalog);
        let listed = match who {
            Author::CatalogManage => Some((catalog, after.catalogs.get(catalog).map_or(&empty, |c| &c.sources))),
            _ => None,
        };
        Rules { host: &after.functions.host, author: who, home: after.home.as_ref(), listed }
    };
    for (name, cat) in &after.catalogs {
        let old = before.map(|b| b.catalogs.get(name));
        let r = rules(name);
        for ((schema, object), rel) in &cat.objects {
            if old.is_some_and(|o| o.and_then(|o| o.objects.get(&(schema.clone(), object.clone()))) == Some(rel)) {
                continue;
            }
            let key = ObjKey { catalog: name.clone(), schema: schema.clone(), name: object.clone() };
            relation(&r, &key, rel).or_else(|e| found(name, e))?;
        }
        schemas(&r, name, cat, old.flatten()).or_else(|e| found(name, e))?;
    }
    for (role_name, role) in after.roles.iter() {
        let old = before.map(|b| b.roles.get(role_name));
        for (catalog, g) in &role.catalog_grants {
            if old.is_some_and(|o| o.and_then(|o| o.catalog_grants.get(catalog)).map(|g| &g.slice) == Some(&g.slice)) {
                continue;
            }
            let place = format!("role \"{role_name}\"'s grant on catalog {catalog}");
            slice(&rules(catalog), &place, &g.slice).or_else(|e| found(catalog, e))?;
        }
        for (key, g) in &role.object_grants {
            if old.is_some_and(|o| o.and_then(|o| o.object_grants.get(key)).map(|g| &g.slice) == Some(&g.slice)) {
                continue;
            }
            let place = format!("role \"{role_name}\"'s grant on {key}");
            slice(&rules(&key.catalog), &place, &g.slice).or_else(|e| found(&key.catalog, e))?;
        }
    }
    for (vkey, f) in &after.functions.virtuals {
        if before.is_some_and(|b| b.functions.virtuals.get(vkey) == Some(f)) {
            continue;
        }
        let (catalog, schema, name, kind) = vkey;
        let key = ObjKey { catalog: catalog.clone(), schema: schema.clone(), name: name.clone() };
        function(&rules(catalog), &key, *kind, f).or_else(|e| found(catalog, e))?;
    }
    Ok(())
}

fn schemas(r: &Rules<'_>, catalog: &str, cat: &Catalog, old: Option<&Catalog>) -> Result<()> {
    for (kind, list, was) in [
        ("target", &cat.schemas, old.map(|o| &o.schemas)),
        ("source", &cat.expansions, old.map(|o| &o.expansions)),
    ] {
        for (schema, vs) in list {
            if was.is_some_and(|w| w.get(schema) == Some(vs)) {
                continue;
            }
            r.schema(&vs.db, &vs.schema).map_err(|why| refused(format!("the {kind} of virtual schema {catalog}.{schema}"), why))?;
        }
    }
    Ok(())
}

fn refused(place: String, why: Forbidden) -> AclError {
    PolicySql { place, why }.into()
}

fn relation(r: &Rules<'_>, key: &ObjKey, rel: &Relation) -> Result<()> {
    let (noun, source) = match &rel.kind {
        RelationKind::Table(phys) => {
            r.table(&[&phys.db, &phys.schema, &phys.name]).map_err(|why| refused(format!("the source of virtual table {key}"), why))?;
            ("virtual table", None)
        }
        RelationKind::View(q) => ("virtual view", Some(q)),
    };
    if let Some(q) = source {
        let place = format!("the query of virtual view {key}");
        let q = parse_query(q).map_err(|_| refused(place.clone(), Forbidden::Construct { what: "a query that does not parse" }))?;
        Judge::new(r, &place, false).query(&q)?;
    }
    slice(r, &format!("{noun} {key}"), &rel.slice)
}

fn slice(r: &Rules<'_>, owner: &str, s: &Slice) -> Result<()> {
    if let Some(rls) = &s.rls {
        expr_text(r, &format!("the RLS of {owner}"), rls)?;
    }
    for c in s.columns.iter().flatten() {
        if let Some(e) = &c.expr {
            expr_text(r, &format!("column \"{}\" of {owner}", c.name), e)?;
        }
    }
    Ok(())
}

fn expr_text(r: &Rules<'_>, place: &str, text: &str) -> Result<()> {
    let unreadable = || refused(place.to_string(), Forbidden::Construct { what: "an expression that does not parse" });
    let dialect = sqlparser::dialect::DuckDbDialect {};
    let mut p = sqlparser::parser::Parser::new(&dialect).try_with_sql(text).map_err(|_| unreadable())?;
    let e = p.parse_expr().map_err(|_| unreadable())?;
    if p.peek_token_ref().token != sqlparser::tokenizer::Token::EOF {
        return Err(unreadable());
    }
    Judge::new(r, place, false).expr(&e)
}

fn parse_query(q: &str) -> std::result::Result<Box<Query>, ()> {
    let dialect = sqlparser::dialect::DuckDbDialect {};
    let mut p = sqlparser::parser::Parser::new(&dialect).try_with_sql(q).map_err(|_| ())?;
    let query = p.parse_query().map_err(|_| ())?;
    let _ = p.consume_token(&sqlparser::tokenizer::Token::SemiColon);
    if p.peek_token_ref().token != sqlparser::tokenizer::Token::EOF {
        return Err(());
    }
    Ok(query)
}

fn function(r: &Rules<'_>, key: &ObjKey, kind: FnKind, f: &VirtualFunction) -> Result<()> {
    let noun = match kind {
        FnKind::Scalar => "virtual scalar",
        FnKind::Table => "virtual table function",
    };
    let shown = if key.schema == DEFAULT_SCHEMA { format!("{}.{}", key.catalog, key.name) } else { key.to_string() };
    let place = format!("the body of {noun} {shown}");
    match &*f.body {
        FnBody::Expr(e) => Judge::new(r, &place, true).expr(e),
        FnBody::Query(q) => Judge::new(r, &place, true).query(q),
        FnBody::Alias(target) => {
            let parts = idents(target).ok_or_else(|| refused(place.clone(), Forbidden::Construct { what: "a function name that is not an identifier" }))?;
            r.function(&parts, kind).map_err(|why| refused(format!("the alias {noun} {shown}"), why))
        }
    }
}

/// The parts of a name when every part is an identifier (not a string: `FROM 'file.csv'`).
fn idents(name: &ObjectName) -> Option<Vec<&str>> {
    name.0
        .iter()
        .map(|p| match p {
            ObjectNamePart::Identifier(i) if i.quote_style != Some('\'') => Some(i.value.as_str()),
            _ => None,
        })
        .collect()
}

/// One piece's SQL against the rules.
struct Judge<'r> {
    rules: &'r Rules<'r>,
    place: &'r str,
    /// A virtual function's body: `acl_arg(n)` is its own placeholder.
    body: bool,
}

impl<'r> Judge<'r> {
    fn new(rules: &'r Rules<'r>, place: &'r str, body: bool) -> Judge<'r> {
        Judge { rules, place, body }
    }

    fn query(&self, q: &Query) -> Result<()> {
        self.run(|v| q.walk(v))
    }

    fn expr(&self, e: &Expr) -> Result<()> {
        self.run(|v| e.walk(v))
    }

    fn run(&self, walk: impl FnOnce(&mut dyn Visitor<Break = Forbidden>) -> ControlFlow<Forbidden>) -> Result<()> {
        let mut v = Names { judge: self, scopes: Vec::new(), cte_bodies: Vec::new(), self_refs: Vec::new() };
        match walk(&mut v) {
            ControlFlow::Break(why) => Err(refused(self.place.to_string(), why)),
            ControlFlow::Continue(()) => Ok(()),
        }
    }
}

/// The walk: CTE names in scope as DuckDB binds them (a CTE's body sees the CTEs before it; a
/// RECURSIVE one sees itself only in the last branch of its top-level UNION, as DuckDB's
/// transformer makes a recursive CTE of that shape alone: anywhere else, and in a body of any
/// other shape, its own name is the catalog's — `WITH RECURSIVE duckdb_tables AS (SELECT * FROM
/// duckdb_tables)` lists the tables; the query's body sees them all), every table, every call.
struct Names<'j, 'r> {
    judge: &'j Judge<'r>,
    /// CTE names visible in each enclosing query's body, innermost last.
    scopes: Vec<Vec<String>>,
    /// A CTE's body (by address) and the names visible inside it.
    cte_bodies: Vec<(*const Query, Vec<String>)>,
    /// The FROM items (by address) that name a recursive CTE from its recursive branch.
    self_refs: Vec<*const TableFactor>,
}

impl Names<'_, '_> {
    fn visible(&self, name: &str) -> bool {
        self.scopes.last().is_some_and(|s| s.iter().any(|c| c.eq_ignore_ascii_case(name)))
    }

    fn call(&self, name: &ObjectName, kind: FnKind) -> ControlFlow<Forbidden> {
        let Some(parts) = idents(name) else { return ControlFlow::Break(Forbidden::Construct { what: "a function name that is not an identifier" }) };
        if let [one] = parts.as_slice() {
            if crate::policy::categories::is_syntax(one) {
                return ControlFlow::Continue(());
            }
        }
        match self.judge.rules.function(&parts, kind) {
            Ok(()) => ControlFlow::Continue(()),
            Err(why) => ControlFlow::Break(why),
        }
    }
}

impl Visitor for Names<'_, '_> {
    type Break = Forbidden;

    fn pre_visit_query(&mut self, q: &Query) -> ControlFlow<Forbidden> {
        let here = q as *const Query;
        let base = match self.cte_bodies.iter().position(|(p, _)| *p == here) {
            Some(i) => self.cte_bodies.swap_remove(i).1,
            None => self.scopes.last().cloned().unwrap_or_default(),
        };
        let mut body = base.clone();
        if let Some(with) = &q.with {
            let mut before = base;
            for cte in &with.cte_tables {
                if with.recursive {
                    self.self_refs.extend(recursive_refs(&cte.query, &cte.alias.name.value));
                }
                self.cte_bodies.push((&*cte.query as *const Query, before.clone()));
                before.push(cte.alias.name.value.clone());
            }
            body = before;
        }
        self.scopes.push(body);
        // `TABLE name` is a table sqlparser keeps outside every FROM item (the visitor never
        // meets it): DuckDB reads it as `SELECT * FROM name`.
        if table_form(&q.body) {
            return ControlFlow::Break(Forbidden::Construct { what: "TABLE <name> (write SELECT * FROM database.schema.table)" });
        }
        ControlFlow::Continue(())
    }

    fn post_visit_query(&mut self, _: &Query) -> ControlFlow<Forbidden> {
        self.scopes.pop();
        ControlFlow::Continue(())
    }

    fn pre_visit_table_factor(&mut self, tf: &TableFactor) -> ControlFlow<Forbidden> {
        match tf {
            TableFactor::Table { name, args: None, .. } => {
                let Some(parts) = idents(name) else {
                    return ControlFlow::Break(Forbidden::Unqualified { name: name.to_string() });
                };
                if let [one] = parts.as_slice() {
                    if self.visible(one) || self.self_refs.contains(&(tf as *const TableFactor)) {
                        return ControlFlow::Continue(());
                    }
                }
                match self.judge.rules.table(&parts) {
                    Ok(()) => ControlFlow::Continue(()),
                    Err(why) => ControlFlow::Break(why),
                }
            }
            TableFactor::Table { name, args: Some(_), .. } | TableFactor::Function { name, .. } => self.call(name, FnKind::Table),
            TableFactor::Derived { .. }
            | TableFactor::NestedJoin { .. }
            | TableFactor::UNNEST { .. }
            | TableFactor::Pivot { .. }
            | TableFactor::Unpivot { .. } => ControlFlow::Continue(()),
            _ => ControlFlow::Break(Forbidden::Construct { what: "a table form that policy SQL has no use for" }),
        }
    }

    fn pre_visit_expr(&mut self, e: &Expr) -> ControlFlow<Forbidden> {
        match e {
            Expr::Function(f) if crate::sqltext::is_acl_claim(f) => ControlFlow::Continue(()),
            Expr::Function(f) if crate::sqltext::acl_arg_index(f).is_some() => {
                if self.judge.body {
                    ControlFlow::Continue(())
                } else {
                    ControlFlow::Break(Forbidden::Never { name: "acl_arg".into() })
                }
            }
            Expr::Function(f) => match (&f.args, idents(&f.name).as_deref()) {
                // CURRENT_DATE and friends without parentheses call a function unless a column of
                // that name is in scope: gated as the call.
                (FunctionArguments::None, Some([word])) => value_keyword(self, word),
                _ => self.call(&f.name, FnKind::Scalar),
            },
            Expr::Identifier(id) => value_keyword(self, &id.value),
            Expr::Value(v) if matches!(v.value, Value::Placeholder(_)) => {
                ControlFlow::Break(Forbidden::Construct { what: "a parameter" })
            }
            _ => ControlFlow::Continue(()),
        }
    }
}

/// Whether a query body is, or has a set operation branch that is, `TABLE name`.
fn table_form(body: &SetExpr) -> bool {
    match body {
        SetExpr::Table(_) => true,
        SetExpr::SetOperation { left, right, .. } => table_form(left) || table_form(right),
        _ => false,
    }
}

/// The FROM items of a recursive CTE's body that name the CTE itself and that DuckDB binds to it:
/// those of the last branch of a top-level UNION, outside any subquery of theirs (DuckDB's
/// recursive node; a subquery's reference is refused as a catalog name would be, which is only
/// stricter). Nothing in a body of any other shape: there the name is the catalog's.
fn recursive_refs(body: &Query, name: &str) -> Vec<*const TableFactor> {
    struct Refs<'n> {
        name: &'n str,
        depth: usize,
        found: Vec<*const TableFactor>,
    }
    impl Visitor for Refs<'_> {
        type Break = ();
        fn pre_visit_query(&mut self, _: &Query) -> ControlFlow<()> {
            self.depth += 1;
            ControlFlow::Continue(())
        }
        fn post_visit_query(&mut self, _: &Query) -> ControlFlow<()> {
            self.depth -= 1;
            ControlFlow::Continue(())
        }
        fn pre_visit_table_factor(&mut self, tf: &TableFactor) -> ControlFlow<()> {
            if let TableFactor::Table { name, args: None, .. } = tf {
                if self.depth == 0 && matches!(idents(name).as_deref(), Some([one]) if one.eq_ignore_ascii_case(self.name)) {
                    self.found.push(tf as *const TableFactor);
                }
            }
            ControlFlow::Continue(())
        }
    }
    let SetExpr::SetOperation { op: SetOperator::Union, right, .. } = body.body.as_ref() else { return Vec::new() };
    let mut r = Refs { name, depth: 0, found: Vec::new() };
    let _ = right.walk(&mut r);
    r.found
}

fn value_keyword(v: &Names<'_, '_>, word: &str) -> ControlFlow<Forbidden> {
    match crate::policy::categories::sql_value_function(word) {
        Some(f) => match v.judge.rules.function(&[f], FnKind::Scalar) {
            Ok(()) => ControlFlow::Continue(()),
            Err(why) => ControlFlow::Break(why),
        },
        None => ControlFlow::Continue(()),
    }
}

#[cfg(test)]
#[path = "policy_sql_tests.rs"]
mod tests;

/// Sources as the store and listings print them.
pub fn sources_text(sources: &BTreeSet<Source>) -> String {
    sources.iter().map(Source::to_string).collect::<Vec<_>>().join(", ")
}
