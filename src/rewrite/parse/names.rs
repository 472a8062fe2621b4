//! DuckDB's names of the select items a statement names by their text, without DuckDB reading the
//! whole statement (spec 016, "Names of the items alone"; spec 012 measured the whole-statement
//! print at about three DuckDB parses of a never-seen statement).
//!
//! Each such item (in every query of the statement, and RETURNING) is printed by sqlparser, the
//! prints are handed to DuckDB as one `SELECT item, item, …`, and the alias DuckDB's print gives
//! each (`Host::print` aliases every item it names by its text) becomes the item's alias. The
//! statement itself stays as sqlparser read it. An item's name is its expression's `ToString()`
//! alone, so reading it out of its statement does not change it. Only items built from the
//! forms in `plain` take this route (their print by sqlparser is, to DuckDB, the text the
//! principal wrote: `EXTRACT(epoch …)` is not, sqlparser prints `EPOCH`); any other item, and
//! anything DuckDB does not give back one aliased item for, is left to the whole-statement print.
//!
//! The names are labels: every expression still goes through every rule as the principal wrote
//! it, and the second check reads DuckDB's parse of the rewrite.
use super::{item_needs_name, parse, Host, Reading};
use crate::bounded::Bounded;
use crate::error::Result;
use sqlparser::ast::{Expr, Ident, Query, SelectItem, SetExpr, Statement, VisitorMut};
use std::ops::ControlFlow;

/// Gives every item of `stmt` that DuckDB names by its text DuckDB's name as its alias. `Ok(false)`:
/// not done (nothing changed), the whole-statement print is needed.
pub fn name_items(stmt: &mut Statement, host: &dyn Host) -> Result<bool> {
    let mut texts = Vec::new();
    let mut simple = true;
    for_each_item(stmt, &mut |item| {
        if let SelectItem::UnnamedExpr(e) = item {
            simple = simple && plain(e);
            if simple {
                texts.push(e.to_string());
            }
        }
    });
    if !simple || texts.is_empty() {
        return Ok(false);
    }
    let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
    let Some(names) = host.item_names(&texts)? else { return Ok(false) };
    if names.len() != texts.len() {
        return Ok(false);
    }
    let mut names = names.into_iter();
    for_each_item(stmt, &mut |item| {
        if let SelectItem::UnnamedExpr(e) = item {
            let alias = names.next().expect("one name per item");
            let expr = std::mem::replace(e, Expr::value(sqlparser::ast::Value::Null));
            *item = SelectItem::ExprWithAlias { expr, alias };
        }
    });
    Ok(true)
}

/// DuckDB's names of `texts` (select items), in order, or `None` if its print does not give
/// exactly one aliased item per text.
pub fn duckdb_names<H: Host + ?Sized>(texts: &[&str], host: &H) -> Result<Option<Vec<Ident>>> {
    let sql = format!("SELECT {}", texts.join(", "));
    let printed = match host.print(&sql) {
        Ok(Some(p)) if p.statements == 1 => p,
        // no host, or DuckDB reads the items otherwise (or not at all): the whole statement's print
        _ => return Ok(None),
    };
    let Ok(Statement::Query(q)) = parse(&printed.sql, Reading::Printed) else { return Ok(None) };
    let SetExpr::Select(select) = *q.body else { return Ok(None) };
    if select.projection.len() != texts.len() {
        return Ok(None);
    }
    let mut names = Vec::with_capacity(texts.len());
    for item in select.projection {
        match item {
            SelectItem::ExprWithAlias { alias, .. } => names.push(alias),
            _ => return Ok(None),
        }
    }
    Ok(Some(names))
}

/// Calls `f` with every select and RETURNING item that `item_needs_name`, in one fixed order.
pub(super) fn for_each_item(stmt: &mut Statement, f: &mut dyn FnMut(&mut SelectItem)) {
    struct Walk<'f>(&'f mut dyn FnMut(&mut SelectItem));
    impl VisitorMut for Walk<'_> {
        type Break = ();
        fn pre_visit_query(&mut self, q: &mut Query) -> ControlFlow<()> {
            body(&mut q.body, self.0);
            ControlFlow::Continue(())
        }
        fn pre_visit_statement(&mut self, s: &mut Statement) -> ControlFlow<()> {
            let returning = match s {
                Statement::Insert(i) => i.returning.as_mut(),
                Statement::Update(u) => u.returning.as_mut(),
                Statement::Delete(d) => d.returning.as_mut(),
                _ => None,
            };
            for item in returning.into_iter().flatten() {
                visit(item, self.0);
            }
            ControlFlow::Continue(())
        }
    }
    fn body(b: &mut SetExpr, f: &mut dyn FnMut(&mut SelectItem)) {
        match b {
            SetExpr::Select(s) => s.projection.iter_mut().for_each(|item| visit(item, f)),
            SetExpr::SetOperation { left, right, .. } => {
                body(left, f);
                body(right, f);
            }
            _ => {}
        }
    }
    fn visit(item: &mut SelectItem, f: &mut dyn FnMut(&mut SelectItem)) {
        if item_needs_name(item) {
            f(item);
        }
    }
    let _ = crate::sqltext::WalkMut::walk_mut(stmt, &mut Walk(f));
}

/// Is `e` built only of forms whose sqlparser print DuckDB names as it names the original: names,
/// plain literals, operators, casts, CASE, and calls without window, filter or WITHIN GROUP.
fn plain(e: &Expr) -> bool {
    use sqlparser::ast::{CastKind, FunctionArg, FunctionArgExpr, FunctionArguments, Value};
    let all = |es: &[Expr]| es.iter().all(plain);
    match e {
        Expr::Identifier(_) | Expr::CompoundIdentifier(_) => true,
        Expr::Value(v) => matches!(v.value, Value::Number(..) | Value::SingleQuotedString(_) | Value::Boolean(_) | Value::Null),
        Expr::BinaryOp { left, right, .. } => plain(left) && plain(right),
        Expr::UnaryOp { expr, .. } | Expr::Nested(expr) | Expr::IsNull(expr) | Expr::IsNotNull(expr) => plain(expr),
        Expr::Cast { kind: CastKind::Cast | CastKind::DoubleColon, expr, format: None, .. } => plain(expr),
        Expr::Between { expr, low, high, .. } => plain(expr) && plain(low) && plain(high),
        Expr::In { expr, target: sqlparser::ast::InTarget::List(list), global: false, .. } => plain(expr) && all(list),
        Expr::Like { expr, pattern, escape_char: None, any: false, .. } | Expr::ILike { expr, pattern, escape_char: None, any: false, .. } => {
            plain(expr) && plain(pattern)
        }
        Expr::Case { operand, conditions, else_result, .. } => {
            operand.as_deref().is_none_or(plain)
                && conditions.iter().all(|w| plain(&w.condition) && plain(&w.result))
                && else_result.as_deref().is_none_or(plain)
        }
        Expr::Function(f) => {
            let FunctionArguments::List(list) = &f.args else { return false };
            f.name.0.len() == 1
                && matches!(f.parameters, FunctionArguments::None)
                && f.within_group.is_empty()
                && f.filter.is_none()
                && f.over.is_none()
                && f.null_treatment.is_none()
                && !f.uses_odbc_syntax
                && list.clauses.is_empty()
                && list.args.iter().all(|a| match a {
                    FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => plain(e),
                    FunctionArg::Unnamed(FunctionArgExpr::Wildcard) => true,
                    _ => false,
                })
        }
        _ => false,
    }
}

/// Past these many names, or bytes, the names cache starts over.
const MAX_NAMES: usize = 16_384;
const NAMES_BYTES: usize = 2 << 20;

/// DuckDB's name of an item text, kept per principal (`who`): a name is a function of the text
/// alone, and BI tools repeat their items (`sum(amount)`, `count(*)`) in statements that are
/// otherwise new. Per principal so that how fast a statement is says nothing of what other
/// principals ran.
pub struct NamesCache(Bounded<String, Ident>);

impl Default for NamesCache {
    fn default() -> NamesCache {
        NamesCache(Bounded::new(NAMES_BYTES, MAX_NAMES))
    }
}

/// `host` with `cache` in front of its `item_names`, for one principal.
pub struct CachedNames<'a> {
    pub host: &'a dyn Host,
    pub cache: &'a NamesCache,
    pub who: &'a str,
}

impl Host for CachedNames<'_> {
    fn print(&self, sql: &str) -> Result<Option<super::Printed>> {
        self.host.print(sql)
    }
    fn tokens(&self, sql: &str) -> Result<Vec<crate::prefix::Token>> {
        self.host.tokens(sql)
    }
    fn item_names(&self, texts: &[&str]) -> Result<Option<Vec<Ident>>> {
        let keys: Vec<String> = texts.iter().map(|t| format!("{}\0{t}", self.who)).collect();
        let mut names: Vec<Option<Ident>> = keys.iter().map(|k| self.cache.0.get(k.as_str()).map(|n| n.clone())).collect();
        let missing: Vec<&str> = texts.iter().zip(&names).filter(|(_, n)| n.is_none()).map(|(t, _)| *t).collect();
        if !missing.is_empty() {
            let Some(found) = self.host.item_names(&missing)? else { return Ok(None) };
            if found.len() != missing.len() {
                return Ok(None);
            }
            let mut found = found.into_iter();
            for (k, n) in keys.into_iter().zip(names.iter_mut()) {
                if n.is_none() {
                    let name = found.next().expect("one per missing text");
                    let size = k.len() + name.value.len();
                    *n = Some(name.clone());
                    self.cache.0.insert(k, name, size);
                }
            }
        }
        Ok(names.into_iter().collect())
    }
}
