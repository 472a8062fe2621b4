//! SQL in, SQL out. A batch under a principal is parsed statement by statement (sqlparser,
//! DuckDB dialect) and each statement goes through the rules in order:
//!
//! 1. `gate`        — only statement types with a rule run (`explain` adds its check at the end);
//!    `types`       — only DuckDB's built-in types may be named (casts, literals, columns);
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
mod printable;
mod relations;
mod room;
mod shapes;
mod slices;
mod types;
mod validate;
mod views;
mod virtual_fns;
mod writes;

pub use shapes::{Shape, ShapeCache};
pub use cache::{BatchCache, BatchEntry, Cached, HostParse, RewriteCache, SliceCache};
pub use defence::{check as defence_check, Allowed, RefKind};
pub use errors::{translate as translate_error, Slot as ErrorSlot};
pub use functions::{never_callable, FnGate};
pub use metadata::{listing_rows, metadata_kind, MetaCache, MetaRows};
pub use room::{too_large, Room};
pub use views::{guard as view_guard, GuardArgs};
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
    /// `(slot, physical spelling, virtual name)`: how DuckDB's own errors about this statement
    /// name what the rewrite placed, and what the principal is shown instead (see `errors`).
    pub names: Vec<(errors::Slot, String, String)>,
    /// The virtual catalogs the statement touches (EXPLAIN needs `explain` on each).
    pub catalogs: Vec<String>,
    /// What the rules may still add before the batch passes `acl_max_rewrite_bytes`.
    pub room: Room,
}

/// `acl_max_rewrite_bytes` as a length.
fn max_len(settings: &Settings) -> usize {
    usize::try_from(settings.max_rewrite_bytes).unwrap_or(usize::MAX)
}

/// Whether a principal's rewritten batch of `len` bytes may run under `settings` (a cached or
/// reused rewrite is judged again: the setting is per connection and may have been lowered).
pub fn fits(len: usize, settings: &Settings) -> bool {
    len <= max_len(settings)
}

impl Decision {
    /// Records a piece of policy SQL about to be inserted; returns its region index.
    pub fn region(&mut self, r: defence::Region) -> usize {
        self.regions.push(Arc::new(r));
        self.regions.len() - 1
    }

    /// Records how DuckDB may print a placed physical table, its schema and its database in an
    /// error, and the principal's name for each (`errors`). A key whose catalog is `(hidden)`
    /// (a table no rule gave a name of the principal's) reads `(hidden)` in every slot.
    pub fn map_object(&mut self, phys: &PhysName, key: &crate::policy::ObjKey) {
        use errors::Slot;
        let hidden = key.catalog.starts_with('(');
        let shown = |s: String| if hidden { "(hidden)".to_string() } else { s };
        self.names.push((Slot::Table, phys.name.clone(), shown(key.name.clone())));
        self.names.push((Slot::Qualified, format!("{}.{}.{}", phys.db, phys.schema, phys.name), shown(key.to_string())));
        self.names.push((Slot::Qualified, format!("{}.{}", phys.schema, phys.name), shown(format!("{}.{}", key.schema, key.name))));
        self.names.push((Slot::Schema, format!("{}.{}", phys.db, phys.schema), shown(format!("{}.{}", key.catalog, key.schema))));
        self.names.push((Slot::Schema, phys.schema.clone(), shown(key.schema.clone())));
        self.names.push((Slot::Catalog, phys.db.clone(), shown(key.catalog.clone())));
        if !hidden {
            self.catalogs.push(key.catalog.clone());
        }
    }
}

/// The rewritten batch and how many statements it holds (the shim checks DuckDB agrees).
#[derive(Debug, PartialEq, Eq)]
pub struct Output {
    pub sql: String,
    pub statements: usize,
    /// `errors::names_blob` of every statement's decision (empty for a management batch).
    pub names: String,
    /// Per statement: what DuckDB's parse of it may name (`None`: not checked — management
    /// statements, which are the gateway's own).
    pub checks: Vec<Option<std::sync::Arc<Allowed>>>,
    /// The policy version the batch was decided under.
    pub version: u64,
    /// Unix seconds after which the batch's statements must not run (the `exp` of the token it
    /// was decided under; the shim applies `acl_jwt_clock_skew`); 0: no such limit.
    pub expires: i64,
    /// Under a principal: what a `BatchCache` entry for this batch must record.
    pub reuse: Option<Reuse>,
    /// Who owns a transaction this batch begins (`owner`); empty for `ACL ADMIN`.
    pub principal: String,
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
    if !fits(entry.output.sql.len(), settings) {
        return None; // the full path refuses it
    }
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
    let mut principal = String::new();
    let mut expires = 0;
    match &batch.prefix {
        Prefix::Admin => {
            // The policy is applied when acl_exec runs and is not rolled back with a transaction
            // (nor will the policy store of later issues join one): refused inside an explicit
            // transaction, here and again when acl_exec runs (a statement prepared before).
            if settings.in_transaction {
                return Err(AclError::refused(MANAGEMENT_IN_TRANSACTION));
            }
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
            let p = Principal::role(role);
            statements += principal_batch(policy, cache, &p, None, batch, settings, &mut sql, &mut names, &mut checks)?;
            reuse = Some(Reuse { token: None, who: who(&p) });
            principal = owner(&batch.prefix);
        }
        Prefix::Token(jwt) => {
            let (p, exp) = tokens.verified(policy, jwt, now_unix()?, settings.clock_skew)?;
            statements += principal_batch(policy, cache, &p, Some(exp), batch, settings, &mut sql, &mut names, &mut checks)?;
            reuse = Some(Reuse { token: Some(jwt.clone()), who: who(&p) });
            principal = owner(&batch.prefix);
            // 0 means "no limit": a token that expired at the epoch still expires.
            expires = if exp == 0 { -1 } else { exp };
        }
        Prefix::Session(_) => return Err(AclError::refused("ACL SESSION is not supported yet")),
    }
    // A principal's batch always has a blob (its errors are all translated); management has none.
    let names = if reuse.is_some() { errors::names_blob(&mut names) } else { String::new() };
    Ok(Output { sql, statements, names, checks, version: policy.version, expires, reuse, principal })
}

/// The refusal of a management statement inside an explicit transaction (also `acl_exec`'s).
pub const MANAGEMENT_IN_TRANSACTION: &str = "management statements run in their own transaction; COMMIT or ROLLBACK first";

/// The identity a transaction belongs to (spec 001, "Transactions"): the role for `ACL ROLE`
/// (folded as role names are), the issuer and subject for `ACL TOKEN` (a refreshed token of the
/// same subject is the same principal; a token without a subject is a principal of its own).
/// The shim carries it in each statement's text, so it is a digest: 32 lower-case hex digits
/// (128 bits of SHA-256) that never contain `*/`. Empty for `ACL ADMIN`.
pub fn owner(prefix: &Prefix) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    match prefix {
        Prefix::Role(role) => {
            h.update(b"role\0");
            h.update(crate::policy::norm(role).as_bytes());
        }
        Prefix::Token(jwt) => {
            // Only called once the token verified: these are the claims its signature covers.
            let claims: serde_json::Value = jsonwebtoken::dangerous::insecure_decode_claims(jwt).unwrap_or_default();
            let text = |k: &str| claims.get(k).and_then(serde_json::Value::as_str).map(str::to_owned);
            h.update(b"token\0");
            h.update(text("iss").unwrap_or_default().as_bytes());
            match text("sub") {
                Some(sub) => {
                    h.update(b"\0sub\0");
                    h.update(sub.as_bytes());
                }
                None => {
                    h.update(b"\0jwt\0");
                    h.update(jwt.as_bytes());
                }
            }
        }
        Prefix::Admin | Prefix::Session(_) => return String::new(),
    }
    h.finalize()[..16].iter().map(|b| format!("{b:02x}")).collect()
}

/// The statements of a batch under one principal (from a token with `exp`, if any), each from the
/// cache or rewritten once.
#[allow(clippy::too_many_arguments)]
fn principal_batch(
    policy: &Policy,
    cache: &RewriteCache,
    principal: &Principal,
    exp: Option<i64>,
    batch: &Batch<'_>,
    settings: &Settings,
    sql: &mut String,
    names: &mut Vec<(errors::Slot, String, String)>,
    checks: &mut Vec<Option<std::sync::Arc<Allowed>>>,
) -> Result<usize> {
    let who = who(principal);
    let limit = max_len(settings);
    let mut decided: Option<(View<'_>, FnGate<'_>)> = None;
    for s in &batch.statements {
        // The separator `push` adds before every statement but the first.
        let room = limit.saturating_sub(sql.len() + if sql.is_empty() { 0 } else { 2 });
        let mut rewrite = || -> Result<Cached> {
            if decided.is_none() {
                let view = View::new(policy, principal)?.with_slice_cache(&cache.slices, &who).with_expiry(exp);
                decided = Some((view, FnGate::new(policy, principal)));
            }
            let (view, fns) = decided.as_ref().expect("set above");
            let mut mine = Vec::new();
            let (sql, allowed) = statement_with_names(view, fns, s, &mut mine, settings.faults, room)?;
            Ok(Cached { sql, names: mine, allowed: std::sync::Arc::new(allowed) })
        };
        let mut fresh = false;
        let mut done = cache.get_or(policy.version, &who, s, || {
            fresh = true;
            rewrite()
        })?;
        // A created view carries its definer (label, token `exp`), which the cache's key does
        // not: a CREATE is never taken from the cache.
        if !fresh && done.allowed.statement == "CREATE" {
            done = Arc::new(rewrite()?);
        }
        push(sql, &done.sql);
        if sql.len() > limit {
            return Err(too_large()); // a cached statement, or the final print of a fresh one
        }
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
    statement_with_names(view, fns, sql, &mut Vec::new(), Default::default(), usize::MAX).map(|(s, _)| s)
}

/// `statement`, also returning what DuckDB's parse of the result may name.
pub fn statement_allowed(view: &View<'_>, fns: &FnGate<'_>, sql: &str) -> Result<(String, Allowed)> {
    statement_with_names(view, fns, sql, &mut Vec::new(), Default::default(), usize::MAX)
}

/// `statement`, also collecting the names its errors are translated with.
fn statement_with_names(
    view: &View<'_>,
    fns: &FnGate<'_>,
    sql: &str,
    names: &mut Vec<(errors::Slot, String, String)>,
    faults: crate::faults::Faults,
    room: usize,
) -> Result<(String, Allowed)> {
    let mut stmt = parse_one(sql)?;
    // Names of our own (markers, regions, helpers) cannot come from the principal: checked on its
    // text alone, before any rule puts ours in.
    virtual_fns::check_reserved(&stmt)?;
    let gate = gate::check(&mut stmt)?;
    if let gate::Gate::AsIs = gate {
        printable::make_printable(&mut stmt)?;
        return Ok((stmt.to_string(), Allowed::as_is()));
    }
    types::check(&stmt, &view.policy.functions.host)?;
    let kind = duckdb_statement_type(&stmt);
    let mut decision = Decision { room: Room::ahead_of(&stmt, room), ..Decision::default() };
    if let Statement::CreateView(cv) = &mut stmt {
        // The body is judged on its own and stands behind the view guard (`views`).
        let temporary = ddl::view_is_temporary(view, cv)?;
        views::prepare(view, fns, cv, temporary, &mut decision, faults)?;
    }
    rules(view, fns, &mut stmt, &mut decision, faults, false)?;
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
    printable::make_printable(&mut stmt)?;
    Ok((stmt.to_string(), allowed))
}

/// The rules in order over one statement (`persistent_view`: it is the body of a view that
/// outlives the connection).
fn rules(
    view: &View<'_>,
    fns: &FnGate<'_>,
    stmt: &mut Statement,
    decision: &mut Decision,
    faults: crate::faults::Faults,
    persistent_view: bool,
) -> Result<()> {
    let calls = functions::apply(stmt, view, fns, decision, faults)?;
    decision.catalogs.extend(calls.iter().map(|c| c.key.catalog.clone()));
    metadata::apply(stmt, view, decision)?;
    if !faults.skip_relations {
        relations::apply_in(stmt, view, decision, persistent_view)?;
    }
    virtual_fns::expand(stmt, view, &calls, decision, faults)?;
    if !faults.skip_relations {
        post_check::check(stmt, decision)?;
    }
    Ok(())
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
#[cfg(test)]
mod txn_tests;
#[cfg(test)]
mod view_tests;
