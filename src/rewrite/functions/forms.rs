//! Calls that sqlparser's tree holds as something else, turned into the calls DuckDB makes of them
//! before the gate admits and qualifies them (spec 016): method calls, CEIL/FLOOR/SUBSTR(ING),
//! `LATERAL f(…)` in FROM.
use sqlparser::ast::{AccessExpr, Expr, FunctionArg, FunctionArgExpr, FunctionArguments, Ident, ObjectName, TableFactor};

/// `LATERAL f(…) AS a` (sqlparser's `TableFactor::Function`) is DuckDB's `f(…) AS a`: a table
/// function in FROM sees the items before it without the keyword.
pub(super) fn lateral_call(tf: &mut TableFactor) {
    let TableFactor::Function { lateral: true, name, args, alias, with_ordinality: false } = tf else { return };
    *tf = TableFactor::Table {
        name: std::mem::replace(name, ObjectName::from(Vec::<Ident>::new())),
        alias: alias.take(),
        args: Some(sqlparser::ast::TableFunctionArgs { args: std::mem::take(args), settings: None }),
        with_hints: vec![],
        version: None,
        with_ordinality: false,
        partitions: vec![],
        json_path: None,
        sample: None,
        index_directives: vec![],
        inheritance: None,
    };
}

/// `root.f(a).g(b)` as `g(f(root, a), b)`; field accesses and subscripts between the calls stay
/// accesses of what precedes them. `None` for a call with another form of arguments.
pub(super) fn method_chain(expr: &Expr) -> Option<Expr> {
    let Expr::CompoundFieldAccess { root, access_chain } = expr else { return None };
    let mut current = (**root).clone();
    let mut pending: Vec<AccessExpr> = Vec::new();
    for access in access_chain {
        match access {
            AccessExpr::Dot(Expr::Function(f)) if f.name.0.len() == 1 => {
                let FunctionArguments::List(list) = &f.args else { return None };
                if !pending.is_empty() {
                    current = Expr::CompoundFieldAccess { root: Box::new(current), access_chain: std::mem::take(&mut pending) };
                }
                let mut call = f.clone();
                let mut list = list.clone();
                list.args.insert(0, FunctionArg::Unnamed(FunctionArgExpr::Expr(current)));
                call.args = FunctionArguments::List(list);
                current = Expr::Function(call);
            }
            AccessExpr::Dot(Expr::Function(_)) => return None,
            other => pending.push(other.clone()),
        }
    }
    if !pending.is_empty() {
        current = Expr::CompoundFieldAccess { root: Box::new(current), access_chain: pending };
    }
    Some(current)
}

/// `CEIL(x)`, `FLOOR(x[, s])`, `SUBSTR(x, a, b)`, `SUBSTRING(x FROM a FOR b)` as the calls DuckDB
/// makes of them (`ceil`, `floor`, `substr`, `substring`). `None` for a form DuckDB has no call
/// for (`CEIL(x TO DAY)`).
pub(super) fn syntax_call(expr: &Expr) -> Option<Expr> {
    use sqlparser::ast::{CeilFloorKind, DateTimeField};
    #[allow(clippy::type_complexity)]
    let call = |name: &str, args: Vec<Expr>| {
        Expr::Function(sqlparser::ast::Function {
            name: ObjectName::from(vec![Ident::new(name)]),
            uses_odbc_syntax: false,
            parameters: FunctionArguments::None,
            args: FunctionArguments::List(sqlparser::ast::FunctionArgumentList {
                duplicate_treatment: None,
                args: args.into_iter().map(|a| FunctionArg::Unnamed(FunctionArgExpr::Expr(a))).collect(),
                clauses: vec![],
            }),
            filter: None,
            null_treatment: None,
            over: None,
            within_group: vec![],
        })
    };
    let ceil_floor = |x: &Expr, field: &CeilFloorKind| match field {
        CeilFloorKind::DateTimeField(DateTimeField::NoDateTime) => Some(vec![x.clone()]),
        CeilFloorKind::Scale(v) => Some(vec![x.clone(), Expr::Value(v.clone())]),
        CeilFloorKind::DateTimeField(_) => None,
    };
    let (name, args) = match expr {
        Expr::Ceil { expr, field } => ("ceil", ceil_floor(expr, field)?),
        Expr::Floor { expr, field } => ("floor", ceil_floor(expr, field)?),
        Expr::Substring { expr, substring_from, substring_for, shorthand, .. } => {
            let mut args = vec![(**expr).clone()];
            match (substring_from, substring_for) {
                (Some(a), Some(b)) => args.extend([(**a).clone(), (**b).clone()]),
                (Some(a), None) => args.push((**a).clone()),
                (None, Some(b)) => args.extend([Expr::value(sqlparser::ast::Value::Number("1".into(), false)), (**b).clone()]),
                (None, None) => {}
            }
            (if *shorthand { "substr" } else { "substring" }, args)
        }
        _ => return None,
    };
    Some(call(name, args))
}
