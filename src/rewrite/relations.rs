//! Rule: resolve every table reference through the principal's virtual catalog.
//!
//! Each name becomes the fully qualified physical object (aliased back to its virtual name) or a
//! CTE reference, and each use is checked: the target of a DML statement needs the verb's
//! capability, every other reference needs `select`.
//!
//! CTEs are renamed to names only this statement defines (`__acl_cte<N>_<name>`), so a scoping
//! mistake here can only make a reference fail to bind; it can never let a bare name fall
//! through to a physical table.
use crate::sqltext::WalkMut as _;
use super::ddl::{self, Placed};
use super::writes::{self, WriteSlice};
use super::Decision;
use crate::authz::View;
use crate::error::{AclError, FunctionNotPermitted, ReadOnly, Result, SlicedWrite, StatementNotPermitted, Unsupported};
use crate::policy::{norm, Caps, PhysName, RelationKind};
use crate::sqltext::{quoted, quoted_name};
use sqlparser::ast::{
    DescribeAlias,
    Expr, FromTable, ObjectName, ObjectNamePart, OnConflictAction, OnInsert, OutputClause, Query, SetExpr, SqliteOnConflict,
    Statement, TableAlias, TableFactor, TableObject, TableWithJoins, VisitorMut,
};
use std::collections::HashSet;
use std::ops::ControlFlow;

/// `view_body`: `stmt` is the body of a view; `persistent_view`: of one that outlives the
/// connection (see `views`).
pub(super) fn apply_in(
    stmt: &mut Statement,
    view: &View<'_>,
    decision: &mut Decision,
    persistent_view: bool,
    view_body: bool,
    faults: crate::faults::Faults,
) -> Result<()> {
    // Every layer keeps its full guard: which guards DuckDB may drop is decided on the bound plan
    // (cpp/pushdown.cpp; spec 002, "Guard and leak-proof pushdown"), where types, aliases, struct
    // fields and constant folding are known. The text-level analysis took them for guesses (issue 32).
    let _ = (view_body, persistent_view, stmt as &Statement);
    let mut r = Resolver {
        view,
        decision,
        frames: Vec::new(),
        handled: HashSet::new(),
        next_cte: 0,
        trusted: super::trusted::Trusted::new(faults),
        persistent_view,
        // A view's body stays as written (DuckDB keeps its parse, and the second check wants a
        // shared slice on the statement's top, spec 011): only statements share slices.
        shared: (!view_body && super::slices::can_share(stmt)).then(Vec::new),
    };
    if let ControlFlow::Break(e) = stmt.walk_mut(&mut r) {
        return Err(e);
    }
    match r.shared {
        Some(shared) => super::slices::share(stmt, &shared, faults.shared_cte_nested),
        None => Ok(()),
    }
}

struct Cte {
    name: String,
    renamed: String,
    query: *const Query,
}

/// One query level: the CTEs its WITH defines, and which CTE body is being walked.
struct Frame {
    query: *const Query,
    ctes: Vec<Cte>,
    recursive: bool,
    in_cte: Option<usize>,
}

struct Resolver<'v, 'p, 'd> {
    view: &'v View<'p>,
    decision: &'d mut Decision,
    frames: Vec<Frame>,
    /// Relation names this rule already rewrote (by address), so the generic relation hook
    /// can tell a handled name from one no rule looked at.
    handled: HashSet<usize>,
    next_cte: usize,
    /// Inside a subquery the policy itself supplied (`trusted`: known by its reserved alias).
    trusted: super::trusted::Trusted,
    /// Walking the body of a view that outlives the connection: it must not read a temporary
    /// table (other principals reading the view would read this principal's temporary table).
    persistent_view: bool,
    /// The sliced objects read so far, when the statement can carry a WITH (`slices::share`).
    shared: Option<Vec<super::slices::Shared>>,
}

fn addr<T>(t: &T) -> usize {
    t as *const T as usize
}

pub(super) fn parts(name: &ObjectName) -> Result<Vec<String>> {
    name.0
        .iter()
        .map(|p| match p {
            ObjectNamePart::Identifier(i) => Ok(norm(&i.value)),
            _ => Err(Unsupported::TableName.into()),
        })
        .collect()
}

fn physical_name(p: &PhysName) -> ObjectName {
    quoted_name(&[&p.db, &p.schema, &p.name])
}

fn alias_as(name: &str) -> TableAlias {
    TableAlias { explicit: true, name: quoted(name), columns: vec![], at: None }
}

impl Resolver<'_, '_, '_> {
    /// The renamed CTE a one-part name denotes here, if any (innermost scope first).
    fn cte(&self, parts: &[String]) -> Option<String> {
        let [name] = parts else { return None };
        for f in self.frames.iter().rev() {
            // Inside a CTE's body: the earlier CTEs, and under RECURSIVE the CTE itself (a forward
            // reference is the catalog's name, as DuckDB binds it).
            let visible = match f.in_cte {
                Some(i) if f.recursive => i + 1,
                Some(i) => i,
                None => f.ctes.len(),
            };
            if let Some(c) = f.ctes[..visible].iter().find(|c| &c.name == name) {
                return Some(c.renamed.clone());
            }
        }
        None
    }

    /// Resolves the single table a DML statement writes, checks `needed`, rewrites it in place;
    /// returns the virtual name and the write check its grants' slices demand. A target whose ENUM
    /// columns are shown as VARCHAR has the statement's own expressions read it that way
    /// (`writes::enums`): call `enums` before the write check adds the policy's predicates.
    fn target(&mut self, name: &mut ObjectName, needed: Caps, verb: &'static str) -> Result<(String, Option<WriteSlice>, Option<String>)> {
        let p = parts(name)?;
        if self.cte(&p).is_some() {
            return Err(Unsupported::CteTarget { verb }.into());
        }
        if let Some(t) = ddl::temp_table(self.view, &p)? {
            let shown = t.key.name.clone();
            self.place(name, t);
            return Ok((shown, None, None)); // the principal's own: every capability, no slice
        }
        let resolved = self.view.resolve(&p)?;
        self.view.require(&resolved, needed)?;
        crate::authz::grants::record(&mut self.decision.granted, &resolved.key, needed, self.view.grants(&resolved.key, needed));
        let RelationKind::Table(phys) = &resolved.relation.kind else {
            return Err(ReadOnly::View { object: resolved.key.to_string() }.into());
        };
        let write = writes::for_target(self.view, &resolved, phys, &self.view.layers(&resolved, needed)?)?;
        if let Some(visible) = write.as_ref().and_then(|w| w.visible()) {
            // Constraint messages never name a column the principal does not see (`errors::hidden`).
            self.decision.names.push(super::errors::lines::write_entry(phys, visible));
        }
        if let Some(w) = &write {
            // The write check calls acl_write_refused() and inlines the predicate (writes/).
            self.decision.functions.push(writes::REFUSED_FN.map(String::from).to_vec());
            self.decision.functions.extend(w.policy_functions());
        }
        *name = physical_name(phys);
        self.handled.insert(addr(name));
        self.decision.physical.push(phys.clone());
        self.decision.map_object(phys, &resolved.key);
        // `Some(object)`: its ENUM columns are shown as VARCHAR (spec 021).
        let varchar = self.view.policy.enums_of(&resolved.relation).varchar(write.is_some()).then(|| resolved.key.to_string());
        if varchar.is_some() {
            self.decision.functions.push(crate::authz::enums::ENUM_FN.map(String::from).to_vec());
        }
        Ok((resolved.key.name, write, varchar))
    }

    /// Rewrites `name` to where it was placed and records it in the decision.
    fn place(&mut self, name: &mut ObjectName, p: Placed) {
        *name = physical_name(&p.phys);
        self.handled.insert(addr(name));
        self.decision.map_object(&p.phys, &p.key);
        self.decision.physical.push(p.phys);
    }

    /// A target in FROM position (UPDATE, DELETE, MERGE); returns the alias it is known by.
    fn target_factor(&mut self, tf: &mut TableFactor, needed: Caps, verb: &'static str) -> Result<(String, Option<WriteSlice>, Option<String>)> {
        match tf {
            TableFactor::Table { name, alias, args: None, .. } => {
                let (virtual_name, write, varchar) = self.target(name, needed, verb)?;
                let alias = alias.get_or_insert_with(|| alias_as(&virtual_name));
                Ok((alias.name.value.clone(), write, varchar))
            }
            _ => Err(Unsupported::NotATableTarget { verb }.into()),
        }
    }

    fn single_target<'a>(&self, from: &'a mut [TableWithJoins], verb: &'static str) -> Result<&'a mut TableFactor> {
        match from {
            [t] if t.joins.is_empty() => Ok(&mut t.relation),
            _ => Err(Unsupported::OneTarget { verb }.into()),
        }
    }

    fn statement(&mut self, stmt: &mut Statement) -> Result<()> {
        match stmt {
            Statement::Query(_) => Ok(()),
            // DESCRIBE <query>: the gate admitted only this form
            Statement::Explain { describe_alias: DescribeAlias::Describe | DescribeAlias::Desc, analyze: false, statement, .. }
                if matches!(statement.as_ref(), Statement::Query(_)) =>
            {
                Ok(())
            }
            // EXPLAIN [ANALYZE] <statement>: the gate admitted only plain forms of rewritten ones
            Statement::Explain { describe_alias: DescribeAlias::Explain, statement, .. }
                if matches!(statement.as_ref(), Statement::Query(_) | Statement::Insert(_) | Statement::Update(_) | Statement::Delete(_) | Statement::Merge(_)) =>
            {
                Ok(())
            }
            Statement::CreateTable(ct) => {
                let placed = ddl::create_table(self.view, ct)?;
                self.place(&mut ct.name, placed);
                Ok(())
            }
            // The body was rewritten on its own and put behind the view guard (`views`): the
            // query here is trusted and not walked again; only the name is placed.
            Statement::CreateView(cv) => {
                let placed = ddl::create_view(self.view, cv)?;
                self.persistent_view = !cv.temporary; // (in case a body is ever walked here)
                self.place(&mut cv.name, placed);
                Ok(())
            }
            Statement::Drop { object_type, names, cascade, purge, temporary, table, .. } => {
                let plain = !*cascade && !*purge && !*temporary && table.is_none();
                let placed = ddl::drop(self.view, object_type, names, plain)?;
                for (name, p) in names.iter_mut().zip(placed) {
                    self.place(name, p);
                }
                Ok(())
            }
            Statement::Insert(ins) => {
                let mut needed = Caps::INSERT;
                if let Some(OnInsert::OnConflict(c)) = &ins.on {
                    if matches!(c.action, OnConflictAction::DoUpdate(_)) {
                        needed = needed.union(Caps::UPDATE);
                    }
                } else if ins.on.is_some() {
                    return Err(Unsupported::Insert.into());
                }
                match ins.or {
                    None | Some(SqliteOnConflict::Ignore) => {}
                    Some(SqliteOnConflict::Replace) => needed = needed.union(Caps::UPDATE),
                    Some(_) => return Err(Unsupported::Insert.into()),
                }
                if ins.returning.is_some() {
                    needed = needed.union(Caps::SELECT);
                }
                if ins.output.is_some() || ins.partitioned.is_some() || ins.overwrite {
                    return Err(Unsupported::Insert.into());
                }
                let TableObject::TableName(name) = &mut ins.table else {
                    return Err(Unsupported::NotATableTarget { verb: "INSERT" }.into());
                };
                // The target's own qualifiers, put in DuckDB's terms (only when there can be one).
                let qualified = ins.returning.is_some() || ins.columns.iter().any(|c| c.0.len() > 1);
                let written = if qualified { parts(name)? } else { Vec::new() };
                let key = qualified.then(|| self.view.lookup(&written).ok().flatten().map(|r| r.key)).flatten();
                let (shown, write, varchar) = self.target(name, needed, "INSERT")?;
                if qualified {
                    let target = writes::qualified::Target { written: &written, shown: &shown, key: key.as_ref() };
                    writes::qualified::columns(&mut ins.columns, &target)?;
                    if let (Some(items), Some(ObjectNamePart::Identifier(placed))) = (&mut ins.returning, name.0.last()) {
                        writes::qualified::returning(items, &target, placed);
                    }
                }
                if let Some(object) = varchar {
                    let restricted = write.as_ref().is_some_and(|w| w.column_restricted());
                    writes::enums::insert(ins, &object, restricted)?;
                }
                if let Some(w) = write {
                    if needed.contains(Caps::UPDATE) {
                        return Err(SlicedWrite::Upsert.into());
                    }
                    w.insert(ins)?;
                }
                Ok(())
            }
            Statement::Update(up) => {
                let mut needed = Caps::UPDATE;
                if up.returning.is_some() {
                    needed = needed.union(Caps::SELECT);
                }
                if up.output.is_some() || up.or.is_some() || up.limit.is_some() || !up.order_by.is_empty() {
                    return Err(Unsupported::Update.into());
                }
                let tf = self.single_target(std::slice::from_mut(&mut up.table), "UPDATE")?;
                let (alias, write, varchar) = self.target_factor(tf, needed, "UPDATE")?;
                if let Some(object) = varchar {
                    let restricted = write.as_ref().is_some_and(|w| w.column_restricted());
                    writes::enums::update(up, &object, restricted)?;
                }
                if let Some(w) = write {
                    w.update(up, &alias)?;
                }
                Ok(())
            }
            Statement::Delete(del) => {
                let mut needed = Caps::DELETE;
                if del.returning.is_some() {
                    needed = needed.union(Caps::SELECT);
                }
                if !del.tables.is_empty() || del.output.is_some() || del.limit.is_some() || !del.order_by.is_empty() {
                    return Err(Unsupported::Delete.into());
                }
                let from = match &mut del.from {
                    FromTable::WithFromKeyword(v) | FromTable::WithoutKeyword(v) => v,
                };
                let tf = self.single_target(from, "DELETE")?;
                let (alias, write, varchar) = self.target_factor(tf, needed, "DELETE")?;
                if let Some(object) = varchar {
                    let restricted = write.as_ref().is_some_and(|w| w.column_restricted());
                    writes::enums::delete(del, &object, restricted)?;
                }
                if let Some(w) = write {
                    w.delete(del, &alias)?;
                }
                Ok(())
            }
            Statement::Merge(m) => {
                let mut needed = Caps::MERGE;
                match &m.output {
                    None => {}
                    Some(OutputClause::Returning { .. }) => needed = needed.union(Caps::SELECT),
                    Some(_) => return Err(Unsupported::MergeOutput.into()),
                }
                let (alias, write, varchar) = self.target_factor(&mut m.table, needed, "MERGE")?;
                if let Some(object) = varchar {
                    let restricted = write.as_ref().is_some_and(|w| w.column_restricted());
                    writes::enums::merge(m, &object, restricted)?;
                }
                if let Some(w) = write {
                    w.merge(m, &alias)?;
                }
                Ok(())
            }
            other => Err(StatementNotPermitted::KindHere { kind: super::gate::kind(other) }.into()),
        }
    }

    fn enter_query(&mut self, q: &mut Query) -> Result<()> {
        let here = addr(q) as *const Query;
        if let Some(top) = self.frames.last_mut() {
            if let Some(i) = top.ctes.iter().position(|c| c.query == here) {
                top.in_cte = Some(i);
            }
        }
        let mut frame = Frame { query: here, ctes: Vec::new(), recursive: false, in_cte: None };
        if let Some(with) = &mut q.with {
            frame.recursive = with.recursive;
            for cte in &mut with.cte_tables {
                if cte.from.is_some() {
                    return Err(Unsupported::Cte.into());
                }
                let name = norm(&cte.alias.name.value);
                if frame.ctes.iter().any(|c| c.name == name) {
                    return Err(Unsupported::CteTwice { name }.into());
                }
                self.next_cte += 1;
                let renamed = format!("__acl_cte{}_{}", self.next_cte, name);
                cte.alias.name = quoted(&renamed);
                self.decision.ctes.push(renamed.clone());
                frame.ctes.push(Cte { name, renamed, query: addr(&*cte.query) as *const Query });
            }
        }
        if !q.pipe_operators.is_empty() {
            return Err(Unsupported::Pipe.into());
        }
        check_set_expr(&q.body)?;
        self.frames.push(frame);
        Ok(())
    }

    fn leave_query(&mut self, q: &mut Query) {
        let here = addr(q) as *const Query;
        if self.frames.last().is_some_and(|f| f.query == here) {
            self.frames.pop();
        }
        if let Some(top) = self.frames.last_mut() {
            if top.in_cte.is_some_and(|i| top.ctes[i].query == here) {
                top.in_cte = None;
            }
        }
    }

    fn table_factor(&mut self, tf: &mut TableFactor) -> Result<()> {
        let sliced = match tf {
            TableFactor::Table { name, alias, args, .. } => {
                if args.is_some() {
                    // A table function: the function gate already admitted and qualified it.
                    if !self.decision.table_functions.contains(name) {
                        return Err(FunctionNotPermitted::TableFunction.into());
                    }
                    self.handled.insert(addr(name));
                    return Ok(());
                }
                if self.handled.contains(&addr(name)) {
                    return Ok(()); // a DML target or a slice's own table, already decided
                }
                let p = parts(name)?;
                if let Some(renamed) = self.cte(&p) {
                    *name = ObjectName::from(vec![quoted(&renamed)]);
                    self.handled.insert(addr(name));
                    if alias.is_none() {
                        *alias = Some(alias_as(&p[0]));
                    }
                    return Ok(());
                }
                if let Some(t) = ddl::temp_table(self.view, &p)? {
                    if self.persistent_view {
                        return Err(Unsupported::PersistentViewOfTemp.into());
                    }
                    if alias.is_none() {
                        *alias = Some(alias_as(&t.key.name));
                    }
                    self.place(name, t);
                    return Ok(());
                }
                let resolved = self.view.resolve(&p)?;
                self.view.require(&resolved, Caps::SELECT)?;
                let layers = self.view.layers(&resolved, Caps::SELECT)?;
                let by = self.view.grants(&resolved.key, Caps::SELECT);
                crate::authz::grants::record(&mut self.decision.granted, &resolved.key, Caps::SELECT, by);
                let alias = alias.take().unwrap_or_else(|| alias_as(&resolved.key.name));
                // ENUMs shown as VARCHAR read even an unsliced table through the cast (spec 002).
                let sliced = !layers.is_empty() || matches!(resolved.relation.kind, RelationKind::View(_));
                let varchar = self.view.policy.enums_of(&resolved.relation).varchar(sliced);
                if let (RelationKind::Table(phys), true) = (&resolved.relation.kind, layers.is_empty() && !varchar) {
                    *name = physical_name(phys);
                    self.handled.insert(addr(name));
                    self.decision.physical.push(phys.clone());
                    self.decision.map_object(phys, &resolved.key);
                    if let TableFactor::Table { alias: a, .. } = tf {
                        *a = Some(alias);
                    }
                    return Ok(());
                }
                if let Some(s) = self.shared.as_mut().and_then(|v| v.iter_mut().find(|s| s.key == resolved.key)) {
                    // Named again: one CTE stands for the slice (`slices::share`).
                    if !s.again {
                        s.again = true;
                        self.decision.ctes.push(super::slices::cte_name(s.region));
                    }
                    let sample = match tf {
                        TableFactor::Table { sample, .. } => sample.take(),
                        _ => None,
                    };
                    *tf = super::slices::reference(s.region, Some(alias), sample);
                    if let TableFactor::Table { name, .. } = tf {
                        self.handled.insert(addr(name));
                    }
                    return Ok(());
                }
                let build = || crate::authz::slices::subquery_as(self.view, &resolved.relation.kind, &layers, varchar);
                let subquery = match self.view.slice_cache {
                    Some((cache, who)) => {
                        let room = &mut self.decision.room;
                        cache.get_or(self.view.policy.version, who, &resolved.key, |n| room.take(n), build)?
                    }
                    None => {
                        let q = build()?;
                        self.decision.room.take(q.to_string().len())?; // spec 012, "Memory"
                        q
                    }
                };
                // Errors about the tables inside are reported under the object's virtual name.
                super::supplied::map_to(self.decision, &subquery, &resolved.key);
                (subquery, alias, resolved.key)
            }
            // PIVOT and UNPIVOT name their input as a FROM item of their own (visited next) and
            // otherwise only its columns
            TableFactor::Derived { .. }
            | TableFactor::NestedJoin { .. }
            | TableFactor::UNNEST { .. }
            | TableFactor::Pivot { .. }
            | TableFactor::Unpivot { .. } => return Ok(()),
            _ => return Err(Unsupported::FromItem.into()),
        };
        let (subquery, alias, key) = sliced;
        // A sample of the object samples what the principal reads of it.
        let sample = match tf {
            TableFactor::Table { sample, .. } => sample.take(),
            _ => None,
        };
        // The visitor walks into the new subquery next: it is the policy's own SQL (the object's
        // source and its slices), so it is inserted as a region (trusted, not resolved again;
        // the second check holds it to what it names itself) under the principal's alias.
        let subquery = super::slices::region_slice(self.decision, subquery);
        if let Some(shared) = &mut self.shared {
            shared.push(super::slices::Shared { key, region: self.decision.regions.len() - 1, again: false });
        }
        *tf = TableFactor::Derived { lateral: false, subquery, alias: Some(alias), sample };
        Ok(())
    }
}

/// `TABLE t` names a table in a string, and `SELECT … INTO` creates one: neither is a relation
/// this rule can see, so both are refused.
fn check_set_expr(body: &SetExpr) -> Result<()> {
    match body {
        SetExpr::Table(_) => Err(Unsupported::TableStatement.into()),
        SetExpr::Select(s) if s.into.is_some() => Err(StatementNotPermitted::SelectInto.into()),
        SetExpr::SetOperation { left, right, .. } => {
            check_set_expr(left)?;
            check_set_expr(right)
        }
        _ => Ok(()),
    }
}

impl VisitorMut for Resolver<'_, '_, '_> {
    type Break = AclError;

    fn pre_visit_statement(&mut self, stmt: &mut Statement) -> ControlFlow<AclError> {
        if self.trusted.inside() {
            return ControlFlow::Continue(());
        }
        to_flow(self.statement(stmt))
    }

    fn pre_visit_query(&mut self, q: &mut Query) -> ControlFlow<AclError> {
        if self.trusted.enter(q) {
            return ControlFlow::Continue(());
        }
        to_flow(self.enter_query(q))
    }

    fn post_visit_query(&mut self, q: &mut Query) -> ControlFlow<AclError> {
        if self.trusted.leave() {
            return ControlFlow::Continue(());
        }
        self.leave_query(q);
        ControlFlow::Continue(())
    }

    fn pre_visit_table_factor(&mut self, tf: &mut TableFactor) -> ControlFlow<AclError> {
        self.trusted.enter_factor(tf);
        if self.trusted.inside() {
            return ControlFlow::Continue(());
        }
        to_flow(self.table_factor(tf))
    }

    fn post_visit_table_factor(&mut self, _: &mut TableFactor) -> ControlFlow<AclError> {
        self.trusted.leave_factor();
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, e: &mut Expr) -> ControlFlow<AclError> {
        self.trusted.enter_expr(e);
        ControlFlow::Continue(())
    }

    fn post_visit_expr(&mut self, _: &mut Expr) -> ControlFlow<AclError> {
        self.trusted.leave_expr();
        ControlFlow::Continue(())
    }

    fn pre_visit_relation(&mut self, name: &mut ObjectName) -> ControlFlow<AclError> {
        if self.trusted.inside() || self.handled.contains(&addr(name)) {
            ControlFlow::Continue(())
        } else {
            // A relation in a position no rule handles: refuse rather than pass it through.
            ControlFlow::Break(Unsupported::TablePosition.into())
        }
    }
}

fn to_flow(r: Result<()>) -> ControlFlow<AclError> {
    match r {
        Ok(()) => ControlFlow::Continue(()),
        Err(e) => ControlFlow::Break(e),
    }
}
