//! SQL in, SQL out. A batch under a principal is parsed statement by statement (sqlparser,
//! DuckDB dialect) and each statement goes through the rules in order (2–5 are `rules::RULES`,
//! run by `rules::run`; policy SQL they insert is skipped by the later ones through `trusted`):
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
mod drift;
mod errors;
mod explain;
mod functions;
mod gate;
mod metadata;
pub mod parse;
mod post_check;
mod printable;
mod relations;
mod supplied;
mod room;
mod rules;
mod slices;
mod trusted;
mod types;
mod views;
mod virtual_fns;
mod writes;

pub use cache::{allowed_bytes, Cached, RewriteCache};
pub use defence::{check as defence_check, reparsed as defence_reparsed, spellings, Allowed, RefKind};
pub use drift::refusal as drift_refusal;
pub use errors::{hidden::refused_update as hidden_check_refusal, names_blob, translate as translate_error, Slot as ErrorSlot};
pub use functions::FnGate;
pub use metadata::{listing_rows, metadata_kind, MetaCache, MetaRows};
pub use parse::{Host, NoHost, Printed, Tokens};
pub use room::{too_large, Room};
pub use views::{guard as view_guard, GuardArgs};

use crate::authz::{Principal, View};
use crate::error::Result;
use crate::policy::{PhysName, Policy};
use sqlparser::ast::Statement;
use std::sync::Arc;

/// What the rules allowed one statement to touch.
#[derive(Debug, Default)]
pub struct Decision {
    pub physical: Vec<PhysName>,
    /// The renamed CTEs the statement defines.
    pub ctes: Vec<String>,
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
    /// For every object and function the statement uses, the grants that allowed it (`authz::grants`).
    pub granted: Vec<crate::authz::Granted>,
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
        let shown = |parts: &[&str]| if hidden { "(hidden)".to_string() } else { parts.join(".") };
        // built without the formatter: this runs for every object of every never-seen statement
        self.names.reserve(6);
        self.names.push((Slot::Table, phys.name.clone(), shown(&[&key.name])));
        // as `ObjKey`'s Display: the default schema is left out
        let full: &[&str] = if key.schema == crate::policy::DEFAULT_SCHEMA { &[&key.catalog, &key.name] } else { &[&key.catalog, &key.schema, &key.name] };
        self.names.push((Slot::Qualified, [&phys.db[..], &phys.schema, &phys.name].join("."), shown(full)));
        self.names.push((Slot::Qualified, [&phys.schema[..], &phys.name].join("."), shown(&[&key.schema, &key.name])));
        self.names.push((Slot::Schema, [&phys.db[..], &phys.schema].join("."), shown(&[&key.catalog, &key.schema])));
        self.names.push((Slot::Schema, phys.schema.clone(), shown(&[&key.schema])));
        self.names.push((Slot::Catalog, phys.db.clone(), shown(&[&key.catalog])));
        if !hidden {
            self.catalogs.push(key.catalog.clone());
        }
    }
}

/// Everything a rewrite depends on besides the policy: the principal's roles and claims.
pub fn who(principal: &Principal) -> String {
    format!("{:?}{:?}", principal.roles, principal.claims)
}

/// The DuckDB settings a decision depends on, read by the shim from the caller's context.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    /// `acl_jwt_clock_skew`, seconds.
    pub clock_skew: u64,
    /// `acl_max_rewrite_bytes`: a rewritten batch longer than this is refused.
    pub max_rewrite_bytes: u64,
    /// An explicit transaction is open on the caller's connection.
    pub in_transaction: bool,
    /// `acl_jwks_refresh_interval` and `acl_jwks_max_stale`: how keys read from a file are kept.
    pub key_times: crate::auth::KeyTimes,
    /// `acl_allow_anonymous_admin` (GLOBAL): while a policy store is in use, anonymous `ACL
    /// ADMIN` (and the gateway's own `acl_exec`) may change the policy only while it is on.
    pub anonymous_admin: bool,
    /// `allow_parser_override_extension` is `DEFAULT`: no prefix is read, so `acl_use_db` (which
    /// turns anonymous admin off and expects principals to be judged) refuses (spec 006).
    pub parser_override_off: bool,
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
            key_times: crate::auth::KeyTimes { refresh_secs: crate::auth::DEFAULT_REFRESH_SECS, max_stale_secs: crate::auth::DEFAULT_MAX_STALE_SECS },
            anonymous_admin: false,
            parser_override_off: false,
            faults: Default::default(),
        }
    }
}

/// A principal's batch as rewritten: the `;`-joined statements, the names its errors are
/// translated with (`errors::names_blob`), and per statement what DuckDB's parse may name.
pub struct Statements {
    pub sql: String,
    pub names: String,
    pub checks: Vec<Option<Arc<Allowed>>>,
    /// `who(principal)`, which the batch was decided for (computed once per batch).
    pub who: String,
}

/// The statements of a batch under one principal (from a token with `exp`, if any), each from the
/// cache or rewritten once: the decision (`View`, `FnGate`, built for the first statement not in
/// the cache), then `statement_with_names` (the rules and the post-check).
pub fn principal_batch(
    policy: &Policy,
    cache: &RewriteCache,
    principal: &Principal,
    exp: Option<i64>,
    statements: &[&str],
    mut tokens: Vec<Option<Tokens>>,
    settings: &Settings,
    host: &dyn Host,
) -> Result<Statements> {
    let (mut sql, mut done_all, mut checks) = (String::new(), Vec::with_capacity(statements.len()), Vec::with_capacity(statements.len()));
    let who = who(principal);
    let host = &parse::CachedNames { host, cache: &cache.names, who: &who };
    let limit = max_len(settings);
    let mut decided: Option<(View<'_>, FnGate<'_>)> = None;
    tokens.resize_with(statements.len(), || None);
    for (s, mut tokens) in statements.iter().zip(tokens) {
        // The separator `push` adds before every statement but the first.
        let room = limit.saturating_sub(sql.len() + if sql.is_empty() { 0 } else { 2 });
        let mut rewrite = || -> Result<Cached> {
            if decided.is_none() {
                let view = View::new(policy, principal)?.with_slice_cache(&cache.slices, &who).with_expiry(exp);
                decided = Some((view, FnGate::new(policy, principal)));
            }
            let (view, fns) = decided.as_ref().expect("set above");
            let mut mine = Vec::new();
            let (sql, allowed) = statement_with_names(view, fns, s, tokens.take(), &mut mine, settings.faults, room, host)?;
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
        push(&mut sql, &done.sql);
        if sql.len() > limit {
            return Err(too_large()); // a cached statement, or the final print of a fresh one
        }
        checks.push(Some(done.allowed.clone()));
        done_all.push(done);
    }
    // A principal's batch always has a blob (its errors are all translated).
    Ok(Statements { sql, names: errors::names_blob(done_all.iter().flat_map(|d| &d.names)), checks, who })
}

fn push(out: &mut String, stmt: &str) {
    if !out.is_empty() {
        out.push_str(";\n");
    }
    out.push_str(stmt);
}

/// Rewrites one statement under `view`, with `fns` (the same principal's function policy).
pub fn statement(view: &View<'_>, fns: &FnGate<'_>, sql: &str) -> Result<String> {
    statement_with_names(view, fns, sql, None, &mut Vec::new(), Default::default(), usize::MAX, &NoHost).map(|(s, _)| s)
}

/// `statement`, with `host` as DuckDB's reader of the text (the fuzzer's and the tests' stand-ins).
pub fn statement_with_host(view: &View<'_>, fns: &FnGate<'_>, sql: &str, host: &dyn Host) -> Result<String> {
    statement_with_names(view, fns, sql, None, &mut Vec::new(), Default::default(), usize::MAX, host).map(|(s, _)| s)
}

/// `statement`, also returning what DuckDB's parse of the result may name.
pub fn statement_allowed(view: &View<'_>, fns: &FnGate<'_>, sql: &str) -> Result<(String, Allowed)> {
    statement_with_names(view, fns, sql, None, &mut Vec::new(), Default::default(), usize::MAX, &NoHost)
}

/// `statement`, also collecting the names its errors are translated with.
fn statement_with_names(
    view: &View<'_>,
    fns: &FnGate<'_>,
    sql: &str,
    tokens: Option<Tokens>,
    names: &mut Vec<(errors::Slot, String, String)>,
    faults: crate::faults::Faults,
    room: usize,
    host: &dyn Host,
) -> Result<(String, Allowed)> {
    let parse::Read { mut stmt, cuts } = parse::read(sql, tokens, host)?;
    // Names of our own (markers, regions, helpers) cannot come from the principal: checked on its
    // text alone, before any rule puts ours in (the markers of what `parse` cut out are ours).
    crate::sqltext::check_reserved_except(&stmt, &|name| cuts.owns(name))?;
    let gate = gate::check(&mut stmt)?;
    if let gate::Gate::AsIs = gate {
        printable::make_printable(&mut stmt)?;
        return Ok((parse::restore(stmt.to_string(), &cuts, host)?, Allowed::as_is()));
    }
    types::check(&stmt, &view.policy.functions.host)?;
    let kind = duckdb_statement_type(&stmt);
    let mut decision = Decision { room: Room::ahead_of(&stmt, room), ..Decision::default() };
    if let Statement::CreateView(cv) = &mut stmt {
        // The body is judged on its own and stands behind the view guard (`views`).
        let temporary = ddl::view_is_temporary(view, cv)?;
        views::prepare(view, fns, cv, temporary, &mut decision, faults)?;
    }
    rules(view, fns, &mut stmt, &mut decision, faults, false, false)?;
    if let gate::Gate::Explain = gate {
        explain::require(view, &decision)?;
    }
    let mut allowed = Allowed::rewritten(kind, &decision);
    drift::record(view, &decision.granted, &mut decision.names);
    allowed.granted = std::mem::take(&mut decision.granted);
    // Physical tables no rule mapped to a name of the principal's (a virtual function's body)
    // are reported as "(hidden)".
    let hidden = crate::policy::ObjKey { catalog: "(hidden)".into(), schema: "(hidden)".into(), name: "(hidden)".into() };
    for p in std::mem::take(&mut decision.physical) {
        decision.map_object(&p, &hidden);
    }
    names.append(&mut decision.names);
    printable::make_printable(&mut stmt)?;
    Ok((parse::restore(stmt.to_string(), &cuts, host)?, allowed))
}

/// The rules in order over one statement (`view_body`: it is the body of a view;
/// `persistent_view`: of one that outlives the connection).
fn rules(
    view: &View<'_>,
    fns: &FnGate<'_>,
    stmt: &mut Statement,
    decision: &mut Decision,
    faults: crate::faults::Faults,
    persistent_view: bool,
    view_body: bool,
) -> Result<()> {
    let mut cx = rules::Context { view, fns, decision, faults, persistent_view, view_body, calls: Vec::new() };
    rules::run(stmt, &mut cx)
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

/// Parses one statement of our own printing (a view's body, a rebuilt DESCRIBE): read as DuckDB's
/// print is read (`parse::Reading::Printed`).
fn parse_one(sql: &str) -> Result<Statement> {
    parse::parse(sql, parse::Reading::Printed)
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod fn_tests;
#[cfg(test)]
mod gate_tests;
#[cfg(test)]
mod view_tests;
#[cfg(test)]
mod grant_tests;
#[cfg(test)]
mod share_tests;
#[cfg(test)]
mod enum_tests;
