//! The ENUM cast (spec 021): an ENUM type lists every label, also those only
//! hidden rows carry, so where `policy::EnumTypes` says so a principal reads each column through
//! `"system".main.acl_enum_varchar(…)` (cpp/enums.cpp). DuckDB folds it at bind time to the value
//! itself when its type holds no ENUM (the plan is the one without it), else to a cast to the same
//! type with VARCHAR in place of every ENUM, nested ones included.
use sqlparser::ast::{Expr, FunctionArg, FunctionArgExpr, FunctionArguments, Ident, Query, SelectItem, SetExpr};

/// The cast's name as the rules emit it (and as the second check expects it).
pub const ENUM_FN: [&str; 3] = ["system", "main", "acl_enum_varchar"];

/// Every column of a query's input, each through the cast, under its own name.
pub const ENUM_COLUMNS: &str = "\"system\".main.acl_enum_varchar(COLUMNS(*))";

/// `"system".main.acl_enum_varchar(<e>)`.
pub fn cast(e: Expr) -> Expr {
    static TEMPLATE: std::sync::OnceLock<Expr> = std::sync::OnceLock::new();
    let mut call = TEMPLATE
        .get_or_init(|| {
            let [db, schema, name] = ENUM_FN;
            sqlparser::parser::Parser::new(&sqlparser::dialect::DuckDbDialect {})
                .try_with_sql(&format!("\"{db}\".{schema}.{name}(x)"))
                .and_then(|mut p| p.parse_expr())
                .expect("a fixed template parses")
        })
        .clone();
    if let Expr::Function(f) = &mut call {
        if let FunctionArguments::List(list) = &mut f.args {
            list.args = vec![FunctionArg::Unnamed(FunctionArgExpr::Expr(e))];
        }
    }
    call
}

/// `COLUMNS(*)`.
fn all_columns() -> Expr {
    static TEMPLATE: std::sync::OnceLock<Expr> = std::sync::OnceLock::new();
    TEMPLATE
        .get_or_init(|| {
            sqlparser::parser::Parser::new(&sqlparser::dialect::DuckDbDialect {})
                .try_with_sql("COLUMNS(*)")
                .and_then(|mut p| p.parse_expr())
                .expect("a fixed template parses")
        })
        .clone()
}

/// Puts the cast into the projection of `q` (the outermost layer of a slice, above its filter)
/// where that adds one call whatever the number of columns: `*` → `acl_enum_varchar(COLUMNS(*))`,
/// the guard `CASE WHEN … THEN COLUMNS(*) END` (named by the columns it expands to) →
/// `acl_enum_varchar(CASE …)`. False, with `q` unchanged, for any other projection — a column list
/// (one call per column would multiply the text of an object named many times, spec 012
/// "Memory"), a star with EXCLUDE or REPLACE: the caller reads `q` through a layer of its own.
pub fn fold(q: &mut Query) -> bool {
    let SetExpr::Select(s) = q.body.as_mut() else { return false };
    let item = match s.projection.as_slice() {
        [SelectItem::Wildcard(o)] if o == &Default::default() => SelectItem::UnnamedExpr(cast(all_columns())),
        [SelectItem::UnnamedExpr(e @ Expr::Case { .. })] if expands_columns(e) => SelectItem::UnnamedExpr(cast(e.clone())),
        _ => return false,
    };
    s.projection = vec![item];
    true
}

/// Whether `e` holds `COLUMNS(*)` (the guard of a layer), so DuckDB names what it expands to by
/// the columns.
fn expands_columns(e: &Expr) -> bool {
    let mut found = false;
    let _ = crate::sqltext::Walk::walk(e, &mut Finder(&mut found));
    found
}

struct Finder<'f>(&'f mut bool);

impl sqlparser::ast::Visitor for Finder<'_> {
    type Break = ();
    fn pre_visit_expr(&mut self, e: &Expr) -> std::ops::ControlFlow<()> {
        if let Expr::Function(f) = e {
            if matches!(f.name.0.as_slice(), [sqlparser::ast::ObjectNamePart::Identifier(Ident { value, .. })] if value.eq_ignore_ascii_case("columns"))
            {
                *self.0 = true;
            }
        }
        std::ops::ControlFlow::Continue(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folded(sql: &str) -> Option<String> {
        let mut q = sqlparser::parser::Parser::new(&sqlparser::dialect::DuckDbDialect {})
            .try_with_sql(sql)
            .and_then(|mut p| p.parse_query())
            .unwrap();
        fold(&mut q).then(|| q.to_string())
    }

    #[test]
    fn the_cast_goes_into_the_outermost_projection_keeping_each_name() {
        let f = "\"system\".main.acl_enum_varchar";
        assert_eq!(folded("SELECT * FROM t AS l WHERE p").unwrap(), format!("SELECT {f}(COLUMNS(*)) FROM t AS l WHERE p"));
        assert_eq!(
            folded("SELECT CASE WHEN p THEN COLUMNS(*) END FROM t WHERE p").unwrap(),
            format!("SELECT {f}(CASE WHEN p THEN COLUMNS(*) END) FROM t WHERE p")
        );
        // a column list, the union's open layer: a layer of their own instead
        assert_eq!(folded("SELECT \"a\", \"b\" AS \"x\", CASE WHEN p THEN (m) END AS \"m\" FROM t"), None);
        assert_eq!(folded("SELECT * EXCLUDE (\"__acl_open\") FROM t"), None);
        assert_eq!(folded("SELECT 1 + 1 FROM t"), None);
        assert_eq!(folded("SELECT 1 UNION SELECT 2"), None);
    }
}
