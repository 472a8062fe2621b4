//! A virtual function's body as management checks it at CREATE, and the names reserved for the
//! rewrite's own markers and helpers. Which functions a body may never call is the policy's
//! (`policy::categories::never_callable`), passed in by the caller.
use crate::sqltext::{Walk as _, WalkMut as _};
use super::acl_arg_index;
use crate::error::{AclError, Invalid, Result, Unsupported};
use sqlparser::ast::{Expr, Function, Ident, ObjectName, ObjectNamePart, Query, TableFactor, Visit, VisitMut, Visitor, VisitorMut};
use std::ops::ControlFlow;

/// A name the principal's statement or a body may not use: ours (markers, regions, helpers).
pub(crate) fn reserved(name: &str) -> bool {
    name.get(..5).is_some_and(|p| p.eq_ignore_ascii_case("__acl"))
}

/// Refuses any identifier starting with `__acl` (table or column alias, CTE name, column or
/// function name, …): no marker or helper name of ours can be forged or captured.
pub fn check_reserved<T: Visit + ?Sized>(sql: &T) -> Result<()> {
    check_reserved_except(sql, &|_| false)
}

/// `check_reserved`, allowing the names `ours` says the reader put in itself (the markers of
/// clauses cut out of DuckDB's print, which no principal's text can hold).
pub fn check_reserved_except<T: Visit + ?Sized>(sql: &T, ours: &dyn Fn(&str) -> bool) -> Result<()> {
    struct Idents<'a> {
        ours: &'a dyn Fn(&str) -> bool,
    }
    impl Visitor for Idents<'_> {
        type Break = ();
        fn pre_visit_ident(&mut self, i: &Ident) -> ControlFlow<()> {
            if reserved(&i.value) && !(self.ours)(&i.value) {
                return ControlFlow::Break(());
            }
            ControlFlow::Continue(())
        }
    }
    match sql.walk(&mut Idents { ours }) {
        ControlFlow::Break(()) => Err(Unsupported::ReservedName.into()),
        ControlFlow::Continue(()) => Ok(()),
    }
}

/// Used by management: checks a body and normalises its table names so the post-check can
/// match them (three quoted parts, or a quoted CTE of the body). Returns the highest `acl_arg`.
/// A body may not use a reserved name (`__acl…`): it could forge a region or capture a helper,
/// nor call a function `never` holds (other than the placeholders).
pub fn normalise_body<T: VisitMut + Visit>(body: &mut T, never: fn(&str) -> bool) -> Result<usize> {
    check_reserved(body).map_err(|_| AclError::from(Invalid::Rule("a virtual function body may not use names starting with \"__acl\"")))?;
    struct Norm {
        ctes: Vec<String>,
        /// The next relation is a table function's name, not a table.
        function_name: bool,
        max_arg: usize,
        err: Option<AclError>,
        never: fn(&str) -> bool,
    }
    impl VisitorMut for Norm {
        type Break = ();
        fn pre_visit_query(&mut self, q: &mut Query) -> ControlFlow<()> {
            if let Some(with) = &mut q.with {
                for cte in &mut with.cte_tables {
                    self.ctes.push(cte.alias.name.value.to_lowercase());
                    cte.alias.name = Ident::with_quote('"', cte.alias.name.value.to_lowercase());
                }
            }
            ControlFlow::Continue(())
        }
        fn pre_visit_expr(&mut self, e: &mut Expr) -> ControlFlow<()> {
            if let Expr::Function(f) = e {
                if let Some(n) = acl_arg_index(f) {
                    self.max_arg = self.max_arg.max(n);
                } else if let Some(bad) = never_in_body(f, self.never) {
                    self.err = Some(Invalid::NotInVirtualFunction { name: bad.to_string() }.into());
                    return ControlFlow::Break(());
                }
            }
            ControlFlow::Continue(())
        }
        fn pre_visit_table_factor(&mut self, tf: &mut TableFactor) -> ControlFlow<()> {
            self.function_name = false;
            if let TableFactor::Table { name, args: Some(_), .. } = tf {
                self.function_name = true;
                if let Some(ObjectNamePart::Identifier(i)) = name.0.last() {
                    if (self.never)(&i.value) {
                        self.err = Some(Invalid::NotInVirtualFunction { name: i.value.to_lowercase() }.into());
                        return ControlFlow::Break(());
                    }
                }
            }
            ControlFlow::Continue(())
        }
        fn pre_visit_relation(&mut self, name: &mut ObjectName) -> ControlFlow<()> {
            if std::mem::take(&mut self.function_name) {
                return ControlFlow::Continue(());
            }
            let parts: Vec<Ident> = name
                .0
                .iter()
                .filter_map(|p| match p {
                    ObjectNamePart::Identifier(i) => Some(i.clone()),
                    _ => None,
                })
                .collect();
            match parts.as_slice() {
                [one] if self.ctes.contains(&one.value.to_lowercase()) => {
                    *name = ObjectName::from(vec![Ident::with_quote('"', one.value.to_lowercase())]);
                }
                [_, _, _] if parts.len() == name.0.len() => {
                    *name = ObjectName::from(parts.iter().map(|i| Ident::with_quote('"', &i.value)).collect::<Vec<_>>());
                }
                _ => {
                    self.err = Some(
                        Invalid::Rule("a virtual function body must name its tables as db.schema.table (or a CTE of the body)").into(),
                    );
                    return ControlFlow::Break(());
                }
            }
            ControlFlow::Continue(())
        }
    }
    let mut n = Norm { ctes: Vec::new(), function_name: false, max_arg: 0, err: None, never };
    let _ = body.walk_mut(&mut n);
    match n.err {
        Some(e) => Err(e),
        None => Ok(n.max_arg),
    }
}

/// A never-callable function in a body (other than the placeholders): an operator may expose a
/// reader through a virtual function, but not a way to run SQL text.
fn never_in_body(f: &Function, never: fn(&str) -> bool) -> Option<String> {
    let last = match f.name.0.last() {
        Some(ObjectNamePart::Identifier(i)) => i.value.to_lowercase(),
        _ => return None,
    };
    let allowed = last == "acl_arg" || last == "acl_claim";
    (!allowed && never(&last)).then_some(last)
}
