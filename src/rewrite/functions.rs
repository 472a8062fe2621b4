//! Rule: the function gate (surface §6, spec 004). Every function the principal calls — in an
//! expression or in FROM — is resolved to a key `(db, schema, name, scalar|table)`, admitted by
//! the function policy, and emitted by its key (`range(3)` → `"system"."main"."range"(3)`; a plain
//! call of a built-in of `system.main` by its quoted name, `"lower"(x)`, which the shim qualifies
//! in DuckDB's parse), so a macro named like a built-in in the search path cannot capture the
//! call. Calls of virtual functions are replaced by markers here and expanded after `relations`
//! (see `virtual_fns`).
use crate::sqltext::{Walk as _, WalkMut as _};
use super::Decision;
use crate::authz::{Granted, Principal, Used, View};
use crate::error::{AclError, BadCall, FunctionNotPermitted, LacksCapability, On, Result, Unsupported};
use crate::policy::categories::{is_syntax, sql_value_function};
use crate::policy::functions::{Admission, FnKey, FnKind, FunctionPolicy, VirtualFunction};
use crate::policy::{norm, Caps, ObjKey, Policy, DEFAULT_SCHEMA};
use crate::sqltext::{quoted, quoted_name};
use sqlparser::ast::{
    AccessExpr, Expr, FunctionArg, FunctionArgExpr, FunctionArguments, Ident, ObjectName,
    ObjectNamePart, Query, SelectItem, SetExpr, Statement, TableFactor, Visitor, VisitorMut,
};
use std::ops::ControlFlow;

mod forms;
use forms::{lateral_call, method_chain, syntax_call};

/// One principal's view of the function policy, built once per batch.
pub struct FnGate<'p> {
    fns: &'p FunctionPolicy,
    roles: Vec<&'p str>,
    /// The principal's MAIN catalog, when it has exactly one (unqualified virtual functions).
    main: Option<&'p str>,
}

impl<'p> FnGate<'p> {
    pub fn new(policy: &'p Policy, principal: &'p Principal) -> FnGate<'p> {
        let roles: Vec<&str> = principal.roles.iter().map(String::as_str).collect();
        let mut mains = roles
            .iter()
            .filter_map(|r| policy.roles.get(*r))
            .flat_map(|r| r.catalog_grants.iter())
            .filter(|(_, g)| g.main)
            .map(|(c, _)| c.as_str());
        let first = mains.next();
        let main = first.filter(|f| mains.all(|m| m == *f));
        FnGate { fns: &policy.functions, roles, main }
    }

    /// Refuses unless `key` is admitted; `shown` is the name as the principal wrote it.
    pub fn admit(&self, key: &FnKey, shown: &str) -> Result<()> {
        match self.fns.admit(self.roles.iter().copied(), key) {
            Admission::Admitted => Ok(()),
            // One message for every case: a principal learns nothing about categories or denies.
            _ => Err(not_permitted(shown)),
        }
    }

    fn virtual_fn(&self, c: &str, s: &str, n: &str, kind: FnKind) -> Option<(ObjKey, &'p VirtualFunction)> {
        let vf = self.fns.virtuals.get(&(c.to_string(), s.to_string(), n.to_string(), kind))?;
        Some((ObjKey { catalog: c.into(), schema: s.into(), name: n.into() }, vf))
    }
}

fn not_permitted(shown: &str) -> AclError {
    FunctionNotPermitted::Named { name: shown.to_string() }.into()
}

/// A virtual function call waiting for expansion (after `relations`).
pub(super) struct VirtualCall {
    pub key: ObjKey,
    pub kind: FnKind,
    pub function: VirtualFunction,
}

pub(super) const MARKER: &str = "__acl_vfn";

enum Target<'p> {
    /// A built-in from the host's list (no allocation to name it).
    Host(&'p FnKey),
    /// A key as the principal qualified it.
    Key(FnKey),
    Virtual(ObjKey, &'p VirtualFunction),
}

/// Runs the gate over `stmt`; returns the virtual calls to expand.
pub(super) fn apply(
    stmt: &mut Statement,
    view: &View<'_>,
    gate: &FnGate<'_>,
    decision: &mut Decision,
    faults: crate::faults::Faults,
) -> Result<Vec<VirtualCall>> {
    let mut g = Gate { view, gate, decision, calls: Vec::new(), trusted: Default::default(), fault_unqualified: faults.unqualified_functions };
    if let ControlFlow::Break(e) = stmt.walk_mut(&mut g) {
        return Err(e);
    }
    Ok(g.calls)
}

struct Gate<'a, 'v, 'p> {
    view: &'a View<'v>,
    gate: &'a FnGate<'p>,
    decision: &'a mut Decision,
    calls: Vec<VirtualCall>,
    /// Inside a subquery the policy supplied (a metadata listing): not the principal's SQL.
    trusted: super::trusted::Trusted,
    /// Test-only fault: admit but do not qualify (spec 011).
    fault_unqualified: bool,
}

fn idents(name: &ObjectName) -> Result<Vec<&Ident>> {
    name.0
        .iter()
        .map(|p| match p {
            ObjectNamePart::Identifier(i) => Ok(i),
            _ => Err(Unsupported::FunctionName.into()),
        })
        .collect()
}

pub(super) fn qualified(key: &FnKey, name: &str) -> ObjectName {
    quoted_name(&[&key.db, &key.schema, name])
}

impl<'p> Gate<'_, '_, 'p> {
    /// Resolves a called name: a built-in first for unqualified names (never a macro someone
    /// created), then a virtual function the principal may use, then a key as written.
    fn resolve(&self, parts: &[String], lookup: &str, kind: FnKind) -> Result<Target<'p>> {
        let host: &'p crate::policy::functions::HostFunctions = &self.gate.fns.host;
        let shown = parts.last().map(String::as_str).unwrap_or("");
        let found = match parts {
            [_] => host
                .resolve(lookup, kind)
                .map(|f| Target::Host(&f.key))
                .or_else(|| self.visible_virtual(self.gate.main?, DEFAULT_SCHEMA, lookup, kind)),
            [a, _] => self
                .visible_virtual(a, DEFAULT_SCHEMA, lookup, kind)
                .or_else(|| self.visible_virtual(self.gate.main?, a, lookup, kind))
                .or_else(|| host.resolve_in(a, lookup, kind).map(|f| Target::Host(&f.key))),
            [c, s, _] => self.visible_virtual(c, s, lookup, kind).or_else(|| {
                Some(Target::Key(FnKey { db: c.clone(), schema: s.clone(), name: lookup.to_string(), kind }))
            }),
            _ => None,
        };
        found.ok_or_else(|| not_permitted(shown))
    }

    /// A virtual function in a catalog the principal sees (others do not exist for it).
    fn visible_virtual(&self, c: &str, s: &str, n: &str, kind: FnKind) -> Option<Target<'p>> {
        if !self.view.sees_catalog(c) {
            return None;
        }
        self.gate.virtual_fn(c, s, n, kind).map(|(k, vf)| Target::Virtual(k, vf))
    }

    /// Checks `select` on a virtual function and records the call; returns its marker name.
    fn virtual_call(&mut self, key: ObjKey, vf: &VirtualFunction, kind: FnKind) -> Result<ObjectName> {
        let caps = self.view.caps(&key).unwrap_or(Caps::NONE);
        if !caps.contains(Caps::SELECT) {
            return Err(LacksCapability {
                principal: self.view.label.to_string(),
                capabilities: Caps::SELECT.names(),
                on: On::Function(key.to_string()),
            }
            .into());
        }
        crate::authz::grants::record(&mut self.decision.granted, &key, Caps::SELECT, self.view.grants(&key, Caps::SELECT));
        let marker = format!("{MARKER}{}", self.calls.len());
        self.calls.push(VirtualCall { key, kind, function: vf.clone() });
        Ok(ObjectName::from(vec![quoted(&marker)]))
    }

    fn scalar(&mut self, f: &mut sqlparser::ast::Function) -> Result<()> {
        let parts: Vec<String> = idents(&f.name)?.iter().map(|i| norm(&i.value)).collect();
        let name = parts.last().cloned().unwrap_or_default();
        if parts.len() == 1 && is_syntax(&name) {
            if let Some(ObjectNamePart::Identifier(i)) = f.name.0.first_mut() {
                i.quote_style = None;
            }
            self.decision.functions.push(parts);
            return Ok(());
        }
        match &f.args {
            FunctionArguments::Subquery(_) if parts.len() == 1 && name == "array" => {
                self.decision.functions.push(parts);
                return Ok(());
            }
            FunctionArguments::Subquery(_) => return Err(Unsupported::FunctionCall.into()),
            FunctionArguments::None => {
                // CURRENT_DATE and friends without parentheses: DuckDB binds a column of that
                // name first, so the word stays as written; the function it may call is gated.
                return match (parts.len(), sql_value_function(&name)) {
                    (1, Some(fname)) => self.value_keyword(&name, fname),
                    _ => Err(Unsupported::FunctionCall.into()),
                };
            }
            FunctionArguments::List(_) => {}
        }
        if !matches!(f.parameters, FunctionArguments::None) {
            return Err(Unsupported::FunctionCall.into());
        }
        let host = &self.gate.fns.host;
        let lookup = parser_alias(&name, f, host);
        if parts.len() > 1 && self.method_call(f, &parts, lookup) {
            return self.scalar(f);
        }
        match self.resolve(&parts, lookup, FnKind::Scalar)? {
            Target::Host(key) => {
                self.admit(key, &name)?;
                self.emit(f, key, &name, lookup);
            }
            Target::Key(key) => {
                self.admit(&key, &name)?;
                self.emit(f, &key, &name, lookup);
            }
            Target::Virtual(key, vf) => {
                if f.over.is_some() || f.filter.is_some() || !f.within_group.is_empty() || f.null_treatment.is_some() {
                    return Err(BadCall::WindowClauses { name: name.to_string() }.into());
                }
                f.name = self.virtual_call(key, vf, FnKind::Scalar)?;
            }
        }
        Ok(())
    }

    /// `x.f(…)` where `x` names no function namespace the principal may call into: DuckDB reads
    /// it as `f(x, …)` on the column `x` (`ColumnQualifier::QualifyFunction`: a qualified name
    /// that finds no function, for a function that exists unqualified), and so does the gate —
    /// the call is then gated as an unqualified `f`, so it means the built-in, never a macro.
    /// Rewrites `f` in place; false when the name is a function's (virtual, or a built-in of that
    /// system schema), or has three parts.
    fn method_call(&self, f: &mut sqlparser::ast::Function, parts: &[String], lookup: &str) -> bool {
        let namespace = match parts {
            [a, _] => {
                self.visible_virtual(a, DEFAULT_SCHEMA, lookup, FnKind::Scalar).is_some()
                    || self.gate.main.is_some_and(|m| self.visible_virtual(m, a, lookup, FnKind::Scalar).is_some())
                    || self.gate.fns.host.resolve_in(a, lookup, FnKind::Scalar).is_some()
            }
            // `a.b.f()` may be a macro's key or a call on the column `a.b`: which one depends on
            // the catalog, which the gate does not see, so it stays a key (admitted or refused).
            _ => true,
        };
        if namespace || self.gate.fns.host.resolve(lookup, FnKind::Scalar).is_none() {
            return false;
        }
        let FunctionArguments::List(list) = &mut f.args else { return false };
        let mut idents: Vec<Ident> = f.name.0.iter().filter_map(|p| p.as_ident().cloned()).collect();
        let Some(method) = idents.pop() else { return false };
        let column = match idents.len() {
            1 => Expr::Identifier(idents.remove(0)),
            _ => Expr::CompoundIdentifier(idents),
        };
        list.args.insert(0, FunctionArg::Unnamed(FunctionArgExpr::Expr(column)));
        f.name = ObjectName::from(vec![method]);
        true
    }

    /// The gate's admission of `key`, recorded once per key with the grants that admitted it.
    fn admit(&mut self, key: &FnKey, shown: &str) -> Result<()> {
        self.gate.admit(key, shown)?;
        if !self.decision.granted.iter().any(|g| matches!(&g.used, Used::Function(k) if k == key)) {
            let by = crate::authz::grants::function_grants(self.gate.fns, self.gate.roles.iter().copied(), key);
            self.decision.granted.push(Granted { used: Used::Function(key.clone()), caps: Caps::SELECT, by });
        }
        Ok(())
    }

    /// Names an admitted call by its key and records it (also under the name DuckDB's parser
    /// maps the spelling to) for the second check. A built-in of `system.main` called as a plain
    /// function is emitted by its quoted name alone (`"lower"(x)`): quoted, DuckDB's parser reads
    /// it as a call of that name and nothing else, and once the second check has found it a
    /// built-in there the shim qualifies it to `system.main` in DuckDB's parse, as it does the
    /// calls the parser makes of syntax (spec 004, "Emission"). DuckDB parses the qualified text
    /// at a cost (23 000 instructions a call, spec 012). A window function (DuckDB's parse holds
    /// a window expression, which the shim does not qualify) or `WITHIN GROUP` (read under
    /// another name) stays qualified in the text.
    fn emit(&mut self, f: &mut sqlparser::ast::Function, key: &FnKey, name: &str, lookup: &str) {
        if self.fault_unqualified {
            return;
        }
        if key.db == "system" && key.schema == "main" && f.over.is_none() && f.within_group.is_empty() {
            f.name = ObjectName::from(vec![quoted(name)]);
            self.decision.functions.push(vec![name.to_string()]);
            if lookup != name {
                self.decision.functions.push(vec![lookup.to_string()]);
            }
            return;
        }
        f.name = qualified(key, name);
        self.decision.functions.push(vec![key.db.clone(), key.schema.clone(), name.to_string()]);
        if lookup != name {
            self.decision.functions.push(vec![key.db.clone(), key.schema.clone(), lookup.to_string()]);
        }
    }

    /// A bare SQL value keyword (`current_user`, `user`, …): refused unless its function is admitted.
    fn value_keyword(&self, word: &str, fname: &str) -> Result<()> {
        match self.gate.fns.host.resolve(fname, FnKind::Scalar) {
            Some(f) if self.gate.admit(&f.key, word).is_ok() => Ok(()),
            _ => Err(FunctionNotPermitted::BareWord { word: word.to_string() }.into()),
        }
    }

    /// `current_database()`, `current_catalog()`, `current_schema()`, `current_schemas(x)` (called
    /// with parentheses, unqualified or as `[system.]main|pg_catalog.f`): the principal's own catalog
    /// as a literal, never the physical one. Bare words stay gated as value keywords (a column may carry the name).
    fn catalog_function(&self, expr: &Expr) -> Option<Expr> {
        let Expr::Function(f) = expr else { return None };
        let parts: Vec<String> = idents(&f.name).ok()?.iter().map(|i| norm(&i.value)).collect();
        let name = match parts.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
            [n] | ["main" | "pg_catalog", n] | ["system", "main" | "pg_catalog", n] => n.to_string(),
            _ => return None,
        };
        let FunctionArguments::List(l) = &f.args else { return None };
        if f.over.is_some() || f.filter.is_some() || !l.clauses.is_empty() {
            return None;
        }
        let lit = |s: &str| Expr::value(sqlparser::ast::Value::SingleQuotedString(s.to_string()));
        match (name.as_str(), l.args.len()) {
            ("current_database" | "current_catalog", 0) => {
                Some(self.view.main_name().map_or(Expr::value(sqlparser::ast::Value::Null), lit))
            }
            ("current_schema", 0) => Some(lit(DEFAULT_SCHEMA)),
            ("current_schemas", 1) => Some(Expr::Array(sqlparser::ast::Array { elem: vec![lit(DEFAULT_SCHEMA)], named: false })),
            _ => None,
        }
    }

    fn table_function(&mut self, tf: &mut TableFactor) -> Result<()> {
        lateral_call(tf);
        if super::metadata::is_metadata(tf) {
            return Ok(()); // answered from the listing by the next rule, never the host's function
        }
        let TableFactor::Table { name, args: Some(args), .. } = tf else { return Ok(()) };
        if args.settings.is_some() {
            return Err(Unsupported::TableFunctionCall.into());
        }
        let parts: Vec<String> = idents(name)?.iter().map(|i| norm(&i.value)).collect();
        let shown = parts.last().cloned().unwrap_or_default();
        *name = match self.resolve(&parts, &shown, FnKind::Table)? {
            Target::Host(key) => {
                self.admit(key, &shown)?;
                qualified(key, &shown)
            }
            Target::Key(key) => {
                self.admit(&key, &shown)?;
                qualified(&key, &shown)
            }
            Target::Virtual(key, vf) => self.virtual_call(key, vf, FnKind::Table)?,
        };
        self.decision.table_functions.push(name.clone());
        Ok(())
    }
}

/// The name DuckDB's parser really looks up for a call in some forms (`count(*)` is `count_star`,
/// `first … OVER` is `first_value`, `percentile_cont … WITHIN GROUP` is `quantile_cont`), as DuckDB's
/// parser told at load (`HostFunctions::parsed_as`). The call is still emitted as written (DuckDB
/// maps it again).
fn parser_alias<'n>(name: &'n str, f: &sqlparser::ast::Function, host: &'n crate::policy::functions::HostFunctions) -> &'n str {
    use crate::policy::functions::CallForm;
    let no_args = match &f.args {
        FunctionArguments::List(l) => {
            l.args.is_empty()
                || (l.args.len() == 1
                    && l.duplicate_treatment.is_none()
                    && matches!(l.args[0], FunctionArg::Unnamed(FunctionArgExpr::Wildcard)))
        }
        _ => false,
    };
    let form = if !f.within_group.is_empty() {
        CallForm::WithinGroup
    } else if f.over.is_some() {
        CallForm::Over
    } else if no_args {
        CallForm::NoArguments
    } else {
        return name;
    };
    host.parsed_as(form, name).unwrap_or(name)
}

impl VisitorMut for Gate<'_, '_, '_> {
    type Break = AclError;

    fn pre_visit_query(&mut self, q: &mut Query) -> ControlFlow<AclError> {
        if self.trusted.enter(q) {
            return ControlFlow::Continue(());
        }
        name_projection(&mut q.body);
        ControlFlow::Continue(())
    }

    fn post_visit_query(&mut self, _: &mut Query) -> ControlFlow<AclError> {
        self.trusted.leave();
        ControlFlow::Continue(())
    }

    fn pre_visit_table_factor(&mut self, tf: &mut TableFactor) -> ControlFlow<AclError> {
        self.trusted.enter_factor(tf);
        if self.trusted.inside() {
            return ControlFlow::Continue(());
        }
        flow(self.table_function(tf))
    }

    fn post_visit_table_factor(&mut self, _: &mut TableFactor) -> ControlFlow<AclError> {
        self.trusted.leave_factor();
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, expr: &mut Expr) -> ControlFlow<AclError> {
        if self.trusted.inside() {
            return ControlFlow::Continue(());
        }
        if let Some(value) = self.catalog_function(expr) {
            *expr = value;
            return ControlFlow::Continue(());
        }
        let r = match expr {
            Expr::Function(f) => self.scalar(f),
            Expr::Identifier(id) => match sql_value_function(&id.value) {
                Some(fname) => self.value_keyword(&norm(&id.value), fname),
                None => Ok(()),
            },
            // `(expr).f()`, `'abc'.upper()`, `x.lower().length()`: DuckDB calls f(expr); so
            // does the gate, through the unqualified name (a built-in, never a macro).
            Expr::CompoundFieldAccess { access_chain, .. }
                if access_chain.iter().any(|a| matches!(a, AccessExpr::Dot(Expr::Function(_)))) =>
            {
                match method_chain(expr) {
                    Some(call) => {
                        *expr = call;
                        return self.pre_visit_expr(expr);
                    }
                    None => Err(Unsupported::MethodCall.into()),
                }
            }
            // CEIL, FLOOR, SUBSTR and SUBSTRING are syntax to sqlparser and calls to DuckDB:
            // gated and qualified as the calls they are.
            Expr::Ceil { .. } | Expr::Floor { .. } | Expr::Substring { .. } => match syntax_call(expr) {
                Some(call) => {
                    *expr = call;
                    return self.pre_visit_expr(expr);
                }
                None => Ok(()),
            },
            _ => Ok(()),
        };
        flow(r)
    }
}

fn flow(r: Result<()>) -> ControlFlow<AclError> {
    match r {
        Ok(()) => ControlFlow::Continue(()),
        Err(e) => ControlFlow::Break(e),
    }
}

/// Output columns keep the names the principal's text gives them: an unnamed select item that
/// calls a function is aliased with its own text, so qualification does not show in column names.
fn name_projection(body: &mut SetExpr) {
    match body {
        SetExpr::Select(s) => {
            for item in &mut s.projection {
                if let SelectItem::UnnamedExpr(e) = item {
                    if wants_alias(e) {
                        let alias = quoted(&e.to_string());
                        let expr = std::mem::replace(e, Expr::value(sqlparser::ast::Value::Null));
                        *item = SelectItem::ExprWithAlias { expr, alias };
                    }
                }
            }
        }
        SetExpr::SetOperation { left, right, .. } => {
            name_projection(left);
            name_projection(right);
        }
        _ => {}
    }
}

/// Does this expression call a function that will be qualified, and produce exactly one column?
fn wants_alias(e: &Expr) -> bool {
    struct Scan {
        calls: bool,
        multi: bool,
    }
    impl Visitor for Scan {
        type Break = ();
        fn pre_visit_expr(&mut self, e: &Expr) -> ControlFlow<()> {
            match e {
                Expr::Function(f) => {
                    let last = match f.name.0.last() {
                        Some(ObjectNamePart::Identifier(i)) => i.value.to_ascii_lowercase(),
                        _ => String::new(),
                    };
                    let star_arg = match &f.args {
                        FunctionArguments::List(l) => l.args.iter().any(|a| {
                            matches!(
                                a,
                                FunctionArg::Unnamed(FunctionArgExpr::Wildcard | FunctionArgExpr::QualifiedWildcard(_))
                            )
                        }),
                        _ => false,
                    };
                    // `regexp_full_match(*, 'a.*')` is DuckDB's `* SIMILAR TO 'a.*'`: columns
                    if star_arg && last != "count" {
                        self.multi = true;
                    } else if matches!(last.as_str(), "columns" | "unpack" | "unnest" | "unlist") {
                        self.multi = true;
                    } else if !is_syntax(&last) && !matches!(f.args, FunctionArguments::None) {
                        self.calls = true;
                    }
                }
                Expr::Wildcard(_) | Expr::QualifiedWildcard(..) => self.multi = true,
                _ => {}
            }
            ControlFlow::Continue(())
        }
    }
    let mut s = Scan { calls: false, multi: false };
    let _ = e.walk(&mut s);
    s.calls && !s.multi
}
