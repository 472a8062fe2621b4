//! SQL in, SQL out. A batch under a principal is parsed statement by statement (sqlparser,
//! DuckDB dialect) and each statement goes through the rules in order:
//!
//! 1. `gate`        — only statement types with a rule run (`explain` adds its check at the end);
//! 2. `functions`   — every function call admitted by the function policy and qualified to its key;
//! 3. `metadata`    — information_schema, duckdb_*() and SHOW answered from the virtual catalog;
//! 4. `relations`   — every table name resolved through the virtual catalog, capabilities checked
//!                    (`ddl` places what CREATE/DROP name: a virtual schema or the principal's temp);
//! 5. `virtual_fns` — calls of virtual functions replaced by their (trusted) bodies;
//!
//! then `post_check` confirms that nothing physical outside the decision survived, and the
//! decision's `Allowed` set goes to the shim, which compares it with DuckDB's own parse
//! (`defence`, spec 011).
mod cache;
mod ddl;
mod defence;
mod errors;
mod explain;
mod functions;
mod gate;
mod metadata;
mod post_check;
mod relations;
mod shapes;
mod slices;
mod validate;
mod virtual_fns;
mod writes;

pub use shapes::{Shape, ShapeCache};
pub use cache::{BatchCache, BatchEntry, Cached, HostParse, RewriteCache, SliceCache};
pub use defence::{check as defence_check, kind as defence_kind, Allowed};
pub use errors::translate as translate_error;
pub use functions::{never_callable, FnGate};
pub use metadata::{listing_rows, metadata_kind, MetaCache, MetaRows};
pub use virtual_fns::normalise_body;

/// `"db"."schema"."name"` for a function key (what every admitted call is emitted as).
pub fn qualified_name(key: &crate::policy::functions::FnKey, name: &str) -> sqlparser::ast::ObjectName {
    functions::qualified(key, name)
}

use crate::authz::{Principal, View};
use crate::error::{AclError, Result};
use crate::policy::{PhysName, Policy};
use crate::prefix::{Batch, Prefix};
use sqlparser::ast::Statement;
use sqlparser::dialect::DuckDbDialect;
use sqlparser::parser::{Parser, ParserError};
use std::sync::Arc;

/// What the rules allowed one statement to touch.
#[derive(Debug, Default)]
pub struct Decision {
    pub physical: Vec<PhysName>,
    /// The renamed CTEs the statement defines.
    pub ctes: Vec<String>,
    /// Addresses of the subqueries the policy supplied (a sliced object, a virtual view): SQL the
    /// operator wrote over physical names, inserted whole and not resolved again.
    pub trusted: Vec<usize>,
    /// Table functions the function gate admitted (qualified names), or a virtual function's
    /// marker until it is expanded; `relations` and `post_check` accept exactly these.
    pub table_functions: Vec<sqlparser::ast::ObjectName>,
    /// Scalar/aggregate/window calls as emitted (name parts): the gate's qualified keys, the
    /// syntax names it leaves bare, and calls inside policy SQL as written (`defence`).
    pub functions: Vec<Vec<String>>,
    /// The policy SQL inserted into the statement, region j as the derived table `"__acl_p<j>"`:
    /// what each piece names, read from that SQL alone (`defence::Region::of`).
    pub regions: Vec<Arc<defence::Region>>,
    /// `(physical spelling, virtual name)`: how DuckDB's own errors about this statement are
    /// translated back into the principal's names (see `errors`).
    pub names: Vec<(String, String)>,
    /// The virtual catalogs the statement touches (EXPLAIN needs `explain` on each).
    pub catalogs: Vec<String>,
}

impl Decision {
    /// Records a piece of policy SQL about to be inserted; returns its region index.
    pub fn region(&mut self, r: defence::Region) -> usize {
        self.regions.push(Arc::new(r));
        self.regions.len() - 1
    }

    /// Records the spellings of a physical table under which DuckDB may report it.
    pub fn map_object(&mut self, phys: &PhysName, key: &crate::policy::ObjKey) {
        let q = |s: &str| format!("\"{}\"", s.replace('"', "\"\""));
        let display = key.to_string();
        self.names.push((format!("{}.{}.{}", q(&phys.db), q(&phys.schema), q(&phys.name)), display.clone()));
        self.names.push((format!("{}.{}.{}", phys.db, phys.schema, phys.name), display));
        self.names.push((format!("{}.{}", phys.schema, phys.name), key.name.clone()));
        self.names.push((phys.name.clone(), key.name.clone()));
        self.names.push((phys.db.clone(), key.catalog.clone()));
        if phys.schema != key.schema && phys.schema != crate::policy::DEFAULT_SCHEMA {
            self.names.push((phys.schema.clone(), key.schema.clone()));
        }
        if !key.catalog.starts_with('(') {
            self.catalogs.push(key.catalog.clone());
        }
    }
}

/// The rewritten batch and how many statements it holds (the shim checks DuckDB agrees).
#[derive(Debug, PartialEq, Eq)]
pub struct Output {
    pub sql: String,
    pub statements: usize,
    /// `errors::names_blob` of every statement's decision.
    pub names: String,
    /// Per statement: what DuckDB's parse of it may name (`None`: not checked — management
    /// statements, which are the gateway's own).
    pub checks: Vec<Option<std::sync::Arc<Allowed>>>,
    /// The policy version the batch was decided under.
    pub version: u64,
    /// Under a principal: what a `BatchCache` entry for this batch must record.
    pub reuse: Option<Reuse>,
}

/// How a rewritten batch may be reused (see `BatchCache`).
#[derive(Debug, PartialEq, Eq, Clone)]
pub struct Reuse {
    pub token: Option<String>,
    pub who: String,
}

/// Everything a rewrite depends on besides the policy: the principal's roles and claims.
pub fn who(principal: &Principal) -> String {
    format!("{:?}{:?}", principal.roles, principal.claims)
}

/// The cached rewrite of `query` (a whole batch, prefix included), if one holds now.
pub fn batch_cached(
    policy: &Policy,
    tokens: &crate::auth::TokenCache,
    batches: &BatchCache,
    settings: &Settings,
    query: &str,
) -> Option<Arc<BatchEntry>> {
    let entry = batches.get(query)?;
    still_holds(policy, tokens, settings, entry.version, entry.token.as_deref(), &entry.who).then_some(entry)
}

/// Does a rewrite decided under `version` for `who` (from `token`, if any) hold now: the same
/// policy version, and a token that is still valid and still denotes the same roles and claims?
pub(crate) fn still_holds(
    policy: &Policy,
    tokens: &crate::auth::TokenCache,
    settings: &Settings,
    version: u64,
    token: Option<&str>,
    who_then: &str,
) -> bool {
    if version != policy.version {
        return false;
    }
    let Some(jwt) = token else { return true };
    let Ok(now) = now_unix() else { return false };
    match tokens.principal(policy, jwt, now, settings.clock_skew) {
        Ok(principal) => who(&principal) == who_then,
        Err(_) => false,
    }
}

fn now_unix() -> Result<i64> {
    Ok(std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_err(|_| AclError::internal("the system clock is before 1970"))?
        .as_secs() as i64)
}

/// Nesting deeper than this is refused by the parser rather than risking the stack.
const RECURSION_LIMIT: usize = 64;

/// The DuckDB settings a decision depends on, read by the shim from the caller's context.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    /// `acl_jwt_clock_skew`, seconds.
    pub clock_skew: u64,
    /// `acl_max_rewrite_bytes`: a rewritten batch longer than this is refused.
    pub max_rewrite_bytes: u64,
    /// An explicit transaction is open on the caller's connection.
    pub in_transaction: bool,
    /// Test-only faults (always off in a release build).
    pub faults: crate::faults::Faults,
}

/// `acl_jwt_clock_skew`'s default, seconds.
pub const DEFAULT_CLOCK_SKEW: u64 = 60;
/// `acl_max_rewrite_bytes`'s default.
pub const DEFAULT_MAX_REWRITE_BYTES: u64 = 1 << 20;

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            clock_skew: DEFAULT_CLOCK_SKEW,
            max_rewrite_bytes: DEFAULT_MAX_REWRITE_BYTES,
            in_transaction: false,
            faults: Default::default(),
        }
    }
}

pub fn batch(
    policy: &Policy,
    tokens: &crate::auth::TokenCache,
    cache: &RewriteCache,
    settings: &Settings,
    batch: &Batch<'_>,
) -> Result<Output> {
    let mut sql = String::new();
    let mut names = Vec::new();
    let mut statements = 0;
    let mut reuse = None;
    let mut checks = Vec::new();
    match &batch.prefix {
        Prefix::Admin => {
            for s in &batch.statements {
                if !crate::admin::is_management(s) {
                    return Err(AclError::refused("ACL ADMIN takes only management statements"));
                }
                let cmd = crate::admin::parse(s)?; // syntax errors now, not at execution
                for check in validate::checks(policy, &cmd)? {
                    push(&mut sql, &check);
                    statements += 1;
                    checks.push(None);
                }
                push(&mut sql, &admin_call(s));
                statements += 1;
                checks.push(None);
            }
        }
        Prefix::Role(role) => {
            let principal = Principal::role(role);
            statements += principal_batch(policy, cache, &principal, batch, settings, &mut sql, &mut names, &mut checks)?;
            reuse = Some(Reuse { token: None, who: who(&principal) });
        }
        Prefix::Token(jwt) => {
            let principal = tokens.principal(policy, jwt, now_unix()?, settings.clock_skew)?;
            statements += principal_batch(policy, cache, &principal, batch, settings, &mut sql, &mut names, &mut checks)?;
            reuse = Some(Reuse { token: Some(jwt.clone()), who: who(&principal) });
        }
        Prefix::Session(_) => return Err(AclError::refused("ACL SESSION is not supported yet")),
    }
    Ok(Output { sql, statements, names: errors::names_blob(&mut names), checks, version: policy.version, reuse })
}

/// The statements of a batch under one principal, each from the cache or rewritten once.
fn principal_batch(
    policy: &Policy,
    cache: &RewriteCache,
    principal: &Principal,
    batch: &Batch<'_>,
    settings: &Settings,
    sql: &mut String,
    names: &mut Vec<(String, String)>,
    checks: &mut Vec<Option<std::sync::Arc<Allowed>>>,
) -> Result<usize> {
    let who = who(principal);
    let mut decided: Option<(View<'_>, FnGate<'_>)> = None;
    for s in &batch.statements {
        let done = cache.get_or(policy.version, &who, s, || {
            if decided.is_none() {
                let view = View::new(policy, principal)?.with_slice_cache(&cache.slices, &who);
                decided = Some((view, FnGate::new(policy, principal)));
            }
            let (view, fns) = decided.as_ref().expect("set above");
            let mut mine = Vec::new();
            let (sql, allowed) = statement_with_names(view, fns, s, &mut mine, settings.faults)?;
            Ok(Cached { sql, names: mine, allowed: std::sync::Arc::new(allowed) })
        })?;
        push(sql, &done.sql);
        names.extend(done.names.iter().cloned());
        checks.push(Some(done.allowed.clone()));
    }
    Ok(batch.statements.len())
}

fn push(out: &mut String, stmt: &str) {
    if !out.is_empty() {
        out.push_str(";\n");
    }
    out.push_str(stmt);
}

/// Management statements run when DuckDB executes the batch (in order with the rest of it),
/// through the extension's `acl_exec` table function.
fn admin_call(stmt: &str) -> String {
    format!("SELECT * FROM acl_exec('{}')", stmt.replace('\'', "''"))
}

/// Rewrites one statement under `view`, with `fns` (the same principal's function policy).
pub fn statement(view: &View<'_>, fns: &FnGate<'_>, sql: &str) -> Result<String> {
    statement_with_names(view, fns, sql, &mut Vec::new(), Default::default()).map(|(s, _)| s)
}

/// `statement`, also returning what DuckDB's parse of the result may name.
pub fn statement_allowed(view: &View<'_>, fns: &FnGate<'_>, sql: &str) -> Result<(String, Allowed)> {
    statement_with_names(view, fns, sql, &mut Vec::new(), Default::default())
}

/// `statement`, also collecting the names its errors are translated with.
fn statement_with_names(
    view: &View<'_>,
    fns: &FnGate<'_>,
    sql: &str,
    names: &mut Vec<(String, String)>,
    faults: crate::faults::Faults,
) -> Result<(String, Allowed)> {
    let mut stmt = parse_one(sql)?;
    let gate = gate::check(&mut stmt)?;
    if let gate::Gate::AsIs = gate {
        return Ok((stmt.to_string(), Allowed::as_is()));
    }
    let kind = duckdb_statement_type(&stmt);
    let mut decision = Decision::default();
    let calls = functions::apply(&mut stmt, view, fns, &mut decision, faults)?;
    decision.catalogs.extend(calls.iter().map(|c| c.key.catalog.clone()));
    metadata::apply(&mut stmt, view, &mut decision)?;
    if !faults.skip_relations {
        relations::apply(&mut stmt, view, &mut decision)?;
    }
    virtual_fns::expand(&mut stmt, view, &calls, &mut decision, faults)?;
    if !faults.skip_relations {
        post_check::check(&stmt, &decision)?;
    }
    if let gate::Gate::Explain = gate {
        explain::require(view, &decision)?;
    }
    let allowed = Allowed::rewritten(kind, &decision);
    // Physical tables no rule mapped to a name of the principal's (a virtual function's body)
    // are reported as "(hidden)".
    let hidden = crate::policy::ObjKey { catalog: "(hidden)".into(), schema: "(hidden)".into(), name: "(hidden)".into() };
    for p in std::mem::take(&mut decision.physical) {
        decision.map_object(&p, &hidden);
    }
    names.append(&mut decision.names);
    Ok((stmt.to_string(), allowed))
}

/// DuckDB's statement type for what the gate admitted (`DESCRIBE <query>` is a SELECT there).
fn duckdb_statement_type(stmt: &Statement) -> &'static str {
    use sqlparser::ast::SetExpr;
    let body = match stmt {
        Statement::Query(q) => Some(q.body.as_ref()),
        _ => None,
    };
    match (stmt, body) {
        (Statement::Explain { describe_alias: sqlparser::ast::DescribeAlias::Explain, .. }, _) => "EXPLAIN",
        (Statement::CreateTable(_) | Statement::CreateView(_), _) => "CREATE",
        (Statement::Drop { .. }, _) => "DROP",
        (Statement::Insert(_), _) | (_, Some(SetExpr::Insert(_))) => "INSERT",
        (Statement::Update(_), _) | (_, Some(SetExpr::Update(_))) => "UPDATE",
        (Statement::Delete(_), _) | (_, Some(SetExpr::Delete(_))) => "DELETE",
        (Statement::Merge(_), _) | (_, Some(SetExpr::Merge(_))) => "MERGE_INTO",
        _ => "SELECT",
    }
}

fn parse_one(sql: &str) -> Result<Statement> {
    let mut stmts = Parser::new(&DuckDbDialect {})
        .with_recursion_limit(RECURSION_LIMIT)
        .try_with_sql(sql)
        .and_then(|mut p| p.parse_statements())
        .map_err(parse_error)?;
    match stmts.len() {
        1 => Ok(stmts.pop().expect("one statement")),
        _ => Err(AclError::syntax("could not parse the statement as a single statement")),
    }
}

/// sqlparser's messages quote the input; keep only where it failed.
fn parse_error(e: ParserError) -> AclError {
    let msg = e.to_string();
    let at = msg.rfind(" at Line: ").map(|i| &msg[i + 1..]);
    match (e, at) {
        (ParserError::RecursionLimitExceeded, _) => AclError::syntax("the statement is nested too deeply"),
        (_, Some(at)) => AclError::syntax(format!("could not parse the statement ({at})")),
        _ => AclError::syntax("could not parse the statement"),
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod fn_tests;
#[cfg(test)]
mod gate_tests;
