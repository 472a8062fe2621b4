//! The second line of defence (spec 011). `post_check` trusts sqlparser's reading of the
//! rewritten text; DuckDB runs its own reading. After DuckDB parses a rewritten statement, the
//! shim lists what DuckDB's parse names — the statement type, every table, insert target, CTE
//! definition, function, operator, table function and column reference — each with the region
//! it sits in (policy SQL is inserted as derived tables aliased `"__acl_p<j>"`, see `region`),
//! and `check` compares the list with what the rules allowed (`Allowed`, built from the
//! statement's `Decision`): outside every region only what the principal's own names resolved to,
//! inside region j only what region j's policy SQL names. Anything else aborts the statement with
//! an internal error that names nothing.
mod region;
pub mod spellings;

pub use region::{alias as region_alias, index_of as region_index, slice_cte, Names, Region, ARGS};
use super::Decision;
use crate::error::{AclError, Result};
use crate::policy::categories::never_callable;
use crate::policy::functions::{FnKind, HostFunctions};
use crate::policy::policy_sql::{call_in_region, table_anywhere, Home};
use std::sync::Arc;

/// What DuckDB's parse of one rewritten statement may name. Built once per rewrite (cached with
/// it); compared case-insensitively, as DuckDB binds names.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Allowed {
    /// DuckDB's name for the statement type (`StatementTypeToString`).
    pub statement: &'static str,
    /// Outside every region: the physical tables the principal's own names resolved to, its
    /// (renamed) CTEs, the functions as the gate emitted them (qualified keys, the syntax names it
    /// leaves bare, a virtual scalar's in-place body and alias target, `error` of a write check)
    /// and the table functions the gate admitted.
    pub outside: Names,
    /// Region j: what the policy SQL inserted as `"__acl_p<j>"` names (`Region::of`).
    pub regions: Vec<Arc<Region>>,
    /// The statement depends on the policy (a prepared copy is refused after a policy change);
    /// transaction control does not.
    pub versioned: bool,
    /// Which grant allowed each use (the decision's record, kept with the rewrite for explain
    /// and audit); not part of the check.
    pub granted: Vec<crate::authz::Granted>,
}

/// What the shim reports, one entry per name (cpp/walk.cpp; `AclRefKind` in cpp/acl_ffi.hpp,
/// generated from this enum). The shim hands it over as a byte: read it with `from_u8`.
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RefKind {
    Statement = 0,
    Table = 1,
    InsertTarget = 2,
    Function = 3,
    Operator = 4,
    TableFunction = 5,
    CteDef = 6,
    /// Something the shim does not model (a PIVOT, a SHOW of a table, …).
    Other = 7,
    /// A column reference (its name parts); `#n` for a positional reference.
    Column = 8,
    /// A derived table aliased `__acl_p…`, or whose own FROM item is (a sliced object; also a
    /// CTE's body, reported right after its `CteDef`), opens a region: the name is that alias, the
    /// region the one it sits in (the walk reports them only outside every region). The walk
    /// numbers regions 1, 2, … in the order it reports these.
    Region = 9,
}

impl RefKind {
    /// The kind of a byte from the shim; one no kind has is `Other`, which `check` refuses.
    pub fn from_u8(v: u8) -> RefKind {
        match v {
            0 => RefKind::Statement,
            1 => RefKind::Table,
            2 => RefKind::InsertTarget,
            3 => RefKind::Function,
            4 => RefKind::Operator,
            5 => RefKind::TableFunction,
            6 => RefKind::CteDef,
            8 => RefKind::Column,
            9 => RefKind::Region,
            _ => RefKind::Other,
        }
    }
}

impl Allowed {
    /// The allowed set of a statement the rules rewrote.
    pub(super) fn rewritten(statement: &'static str, d: &Decision) -> Allowed {
        Allowed {
            statement,
            outside: Names {
                tables: d.physical.clone(),
                ctes: d.ctes.clone(),
                functions: d.functions.clone(),
                table_functions: d.table_functions.iter().map(parts).collect(),
            },
            regions: d.regions.clone(),
            granted: Vec::new(), // moved in by the caller (`statement_with_names`)
            versioned: true,
        }
    }

    /// Transaction control, run as written.
    pub(super) fn as_is() -> Allowed {
        Allowed { statement: "TRANSACTION", ..Allowed::default() }
    }
}

/// The parts of a name as sqlparser holds them (identifier values, without quotes).
pub(super) fn parts(name: &sqlparser::ast::ObjectName) -> Vec<String> {
    name.0
        .iter()
        .map(|p| match p {
            sqlparser::ast::ObjectNamePart::Identifier(i) => i.value.clone(),
            other => other.to_string(),
        })
        .collect()
}

fn same(a: &str, b: &str) -> bool {
    a.eq_ignore_ascii_case(b)
}

fn same_path(a: &[String], b: &[&str]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same(x, y))
}

fn outside(found: &'static str) -> AclError {
    AclError::SecondCheck { found }
}

/// Compares one statement as DuckDB parsed it — `(kind, region, name parts)` in the walk's
/// order, region 0 being outside every region — with `allowed`. `host`: the instance's built-ins.
/// Once the check passes, the shim qualifies every one-part call to `system.main` (spec 004), so
/// such a name must be a built-in there: otherwise DuckDB would fall back to reading
/// `system.main.f()` as a method call `f(system.main)` and look `f` up through the search path,
/// where only a macro could answer.
///
/// Inside a region of policy SQL (`Region::authored`) the policy-SQL rules apply besides
/// (`policy::policy_sql`, spec 007): no call of the never set, a listing, a fact about the node or
/// a knob, under any spelling DuckDB's parse holds; no table in `temp`, `system`, of ours or of
/// the policy store (`home`) — whatever the region's SQL says, so a piece of policy SQL that
/// got past the checks when it was written or loaded is still refused when used. Outside every
/// region no call of the never set passes but the view guard the rules emit.
pub fn check<'a, P: AsRef<[&'a str]>>(
    allowed: &Allowed,
    host: &HostFunctions,
    home: Option<&Home>,
    parsed: impl IntoIterator<Item = (RefKind, u32, P)>,
) -> Result<()> {
    let parsed: Vec<(RefKind, u32, P)> = parsed.into_iter().collect();
    let table_fns = table_functions(&parsed);
    let mut saw_statement = false;
    // The walk's region k (1-based) is decided region `opened[k - 1]`.
    let mut opened: Vec<usize> = Vec::new();
    // Per decided region: how many more uses of each column identifier its SQL allows.
    let mut budget: Vec<Vec<u32>> =
        allowed.regions.iter().map(|r| r.columns.iter().map(|(_, n)| *n).collect()).collect();
    // A slice named more than once stands in a CTE `__acl_s<j>` whose body is region j (spec 002,
    // "One slice per statement"): its definition must be followed by that region's marker.
    let mut slice_cte: Option<usize> = None;
    let mut in_its_cte = vec![false; allowed.regions.len()];
    for (k, region, path) in &parsed {
        let (k, region, path) = (*k, *region, path.as_ref());
        if let Some(j) = slice_cte.take() {
            let its_region = k == RefKind::Region && region == 0 && matches!(path, [a] if region::index_of(a) == Some(j));
            if !its_region || j >= in_its_cte.len() {
                return Err(outside("policy SQL missing"));
            }
            in_its_cte[j] = true;
        }
        let here = match region {
            0 => None,
            r => Some(*opened.get(r as usize - 1).ok_or_else(|| outside("a construct"))?),
        };
        let names = match here {
            None => &allowed.outside,
            Some(j) => &allowed.regions[j].names,
        };
        let authored = here.is_some_and(|j| allowed.regions[j].authored);
        let ok = match k {
            RefKind::Statement => {
                saw_statement = true;
                here.is_none() && matches!(path, [s] if same(s, allowed.statement))
            }
            // Regions do not nest, and each decided region appears exactly once.
            RefKind::Region => match (here, path) {
                (None, [a]) => match region::index_of(a) {
                    Some(j) if j < allowed.regions.len() && !opened.contains(&j) => {
                        opened.push(j);
                        true
                    }
                    _ => false,
                },
                _ => false,
            },
            RefKind::Column => match here {
                None => true, // the principal's own expressions, bound in its own scope
                Some(j) => spend(&allowed.regions[j], &mut budget[j], path),
            },
            RefKind::Table => match path {
                [cte] => names.ctes.iter().any(|c| same(c, cte)),
                [db, schema, name] => {
                    allowed_table(names, db, schema, name) && (!authored || table_anywhere(db, schema, name, home).is_ok())
                }
                _ => false,
            },
            RefKind::InsertTarget => {
                here.is_none() && matches!(path, [db, schema, name] if allowed_table(names, db, schema, name))
            }
            RefKind::CteDef => match path {
                [c] if names.ctes.iter().any(|a| same(a, c)) => {
                    slice_cte = region::slice_cte_index(c);
                    true
                }
                _ => false,
            },
            RefKind::Function | RefKind::Operator => {
                allowed_function(host, names, path)
                    && builtin_if_bare(host, path, &table_fns)
                    && policy_call(host, here.is_some(), authored, path)
            }
            RefKind::TableFunction => {
                names.table_functions.iter().any(|f| same_path(f, path)) && policy_call(host, here.is_some(), authored, path)
            }
            RefKind::Other => false,
        };
        if !ok {
            return Err(outside(match k {
                RefKind::Statement => "a statement type",
                RefKind::Table | RefKind::InsertTarget | RefKind::CteDef => "a table",
                RefKind::Function | RefKind::Operator | RefKind::TableFunction => "a function",
                RefKind::Column => "a column",
                _ => "a construct",
            }));
        }
    }
    if !saw_statement {
        return Err(outside("no statement type"));
    }
    if opened.len() != allowed.regions.len() || slice_cte.is_some() {
        return Err(outside("policy SQL missing"));
    }
    // Every slice CTE the rules created is defined (with its region), else its references would
    // be looked up in the catalog.
    let defined = |c: &String| region::slice_cte_index(c).is_none_or(|j| in_its_cte.get(j) == Some(&true));
    if !allowed.outside.ctes.iter().all(defined) {
        return Err(outside("policy SQL missing"));
    }
    Ok(())
}

/// Our own text coming back to the parser (a relation re-parses its statement's query, which
/// carries the policy tag): DuckDB's parse of it holds the parser's one-part calls again, which the
/// shim qualifies to `system.main` as it did the first time (the tree was qualified, the text
/// never is). Each must be a built-in there, as `check` required the first time.
pub fn reparsed<'a, P: AsRef<[&'a str]>>(host: &HostFunctions, parsed: impl IntoIterator<Item = (RefKind, u32, P)>) -> Result<()> {
    let parsed: Vec<(RefKind, u32, P)> = parsed.into_iter().collect();
    let table_fns = table_functions(&parsed);
    for (k, _, path) in &parsed {
        if matches!(k, RefKind::Function | RefKind::Operator) && !builtin_if_bare(host, path.as_ref(), &table_fns) {
            return Err(AclError::Reparsed { found: "any other call (db.schema.f)" });
        }
        // A construct the walk does not model may hold calls it did not list (and so the shim
        // would not qualify): refused, as the second check refuses it.
        if *k == RefKind::Other {
            return Err(outside("a construct"));
        }
    }
    Ok(())
}

/// The one-part names called as table functions (such a call is also listed as a function: a
/// bare one must be a table built-in).
fn table_functions<'a, P: AsRef<[&'a str]>>(parsed: &[(RefKind, u32, P)]) -> Vec<&'a str> {
    parsed
        .iter()
        .filter(|(k, _, _)| *k == RefKind::TableFunction)
        .filter_map(|(_, _, p)| match p.as_ref() {
            [one] => Some(*one),
            _ => None,
        })
        .collect()
}

/// One column reference inside a region: each of its identifiers must be one the region's SQL
/// still has a use of.
fn spend(region: &Region, budget: &mut [u32], path: &[&str]) -> bool {
    path.iter().all(|part| match region.column(part) {
        Some(i) if budget[i] > 0 => {
            budget[i] -= 1;
            true
        }
        _ => false,
    })
}

/// A call DuckDB's parse holds: one its parser makes of syntax (learned from it at load,
/// `spellings`), or one the rules emitted — under its written name, or under the name DuckDB's
/// parser gives a call written so (`count(*)` is `count_star`, also learned).
fn allowed_function(host: &HostFunctions, names: &Names, path: &[&str]) -> bool {
    if let [name] = path {
        if host.synthesised(name) {
            return true;
        }
    }
    let listed = |path: &[&str]| names.functions.iter().chain(&names.table_functions).any(|f| same_path(f, path));
    if listed(path) {
        return true;
    }
    let Some((last, rest)) = path.split_last() else { return false };
    host.written_as(last).any(|written| {
        let mut alias: Vec<&str> = rest.to_vec();
        alias.push(written);
        listed(&alias)
    })
}

/// The policy-SQL rules for a call: inside policy SQL those of `policy_sql::call_in_region` (the
/// leak-proof probe and the ENUM cast the slices put there are ours, spec 002); outside every
/// region, nothing of the never set but the view guard and the ENUM cast around a write target's
/// columns (the rules listed it, `allowed_function`); inside a listing of ours, what its SQL names.
fn policy_call(host: &HostFunctions, in_region: bool, authored: bool, path: &[&str]) -> bool {
    match (in_region, authored) {
        (true, true) => call_in_region(host, path) || probe(path),
        (true, false) => true,
        (false, _) => {
            !path.last().is_some_and(|n| never_callable(n))
                || same_path_str(path, &super::views::GUARD_FN)
                || same_path_str(path, &crate::authz::enums::ENUM_FN)
                || same_path_str(path, &super::writes::REFUSED_FN)
        }
    }
}

/// `"system".main.acl_enum_varchar(…)`: the ENUM cast inside a slice.
fn probe(path: &[&str]) -> bool {
    matches!(path, [db, schema, n] if same(db, "system") && same(schema, "main")
        && crate::authz::slices::PROBE_FNS.iter().any(|p| same(p, n)))
}

fn same_path_str(a: &[&str], b: &[&str]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same(x, y))
}

/// Names the binder resolves by name before any catalog lookup; the shim leaves them unqualified.
pub const BOUND_BY_NAME: [&str; 2] = ["unnest", "unlist"];

/// A one-part call is a built-in in `system.main` (or bound by name); qualified calls pass as is.
fn builtin_if_bare(host: &HostFunctions, path: &[&str], table_fns: &[&str]) -> bool {
    match path {
        [name] => {
            let lower = name.to_ascii_lowercase();
            let in_main = |kind| host.resolve_in("main", &lower, kind).is_some();
            BOUND_BY_NAME.contains(&lower.as_str())
                || in_main(FnKind::Scalar)
                || (table_fns.iter().any(|t| t.eq_ignore_ascii_case(name)) && in_main(FnKind::Table))
        }
        _ => true,
    }
}

fn allowed_table(names: &Names, db: &str, schema: &str, name: &str) -> bool {
    names.tables.iter().any(|t| same(&t.db, db) && same(&t.schema, schema) && same(&t.name, name))
}

#[cfg(test)]
mod tests;
