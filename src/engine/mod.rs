//! The statement path, in the order it runs (spec 001, "The pipeline"). The shim hands every
//! text DuckDB parses that may start with `ACL` to `rewrite`, with DuckDB's tokenizer as a
//! callback, and gets back one `Outcome`:
//!
//! 1. `kept::lookup`     — a batch seen before under the same policy (and a token still valid for
//!                         the same principal): its rewrite, without tokenizing;
//! 2. `tokens::lex`      — sqlparser's tokens, or DuckDB's (`Tokenize::tokens`) for a text
//!                         sqlparser cannot tokenize; the rest runs on a stack region sized for
//!                         the text (`stack::run_with`), and a text too long for any is refused;
//! 3. `prefix::split`    — the prefix and the statements it covers, or not ours;
//! 4. `shapes`           — the same statement with other numbers, rewritten before (spec 012);
//! 5. `batch`            — by prefix: `admin::batch` (management), or `principal::of` (who) and
//!                         `rewrite::principal_batch` (per statement: the decision, the rules and
//!                         the post-check; spec 001, 002, 004, 005);
//! 6. `keep`             — what is kept for the next time (a batch cache entry, a learned shape);
//!
//! then the shim parses the rewritten text with DuckDB's parser and runs the second check on it
//! (`ffi::acl_rs_check`, spec 011). Management statements run later, when DuckDB executes the
//! batch's `acl_exec` calls (`admin::execute`).
pub mod admin;
mod column_listings;
mod kept;
mod principal;
pub use principal::whoami;
mod shapes;
pub mod listings;
pub mod nesting;
pub mod sessions;
mod session_graves;
pub mod session_vouch;
pub mod source;
mod state;
mod tokens;
#[cfg(feature = "extension")]
pub mod watch;

pub use admin::Commands;
pub use kept::{BatchCache, BatchEntry, HostParse};
pub use principal::{owner, Credential};
pub use shapes::{Shape, ShapeCache, ShapeParse, ShapeUse, Substitution};
pub use state::{live_states, HostDb, State, Writer};

use crate::error::{AclError, Result};
use crate::policy::Policy;
use crate::prefix::{self, Batch, Mode, Prefix, Token};
use crate::rewrite::{self, Allowed, Settings};
use std::sync::Arc;

/// DuckDB's tokenizer, which the shim passes in, for a text sqlparser cannot tokenize (`tokens`).
/// And DuckDB's parser, for the statements (or the select items) the rewrite reads through
/// DuckDB's print of them (spec 016); without one, sqlparser reads them alone.
pub trait Tokenize {
    /// DuckDB's tokens of `query`, in order.
    fn tokens(&self, query: &str) -> Result<Vec<Token>>;
    /// sqlparser's tokens of a batch (`tokens::lex`; the module says why they may stand in for DuckDB's);
    /// `None` for a text sqlparser cannot tokenize, which then gets DuckDB's.
    fn own_tokens(&self, query: &str) -> Option<tokens::Lexed> {
        tokens::lex(query)
    }
    /// DuckDB's print of its parse of `sql` (`rewrite::Host::print`).
    fn print(&self, _sql: &str) -> Result<Option<rewrite::Printed>> {
        Ok(None)
    }
}

impl<F: Fn(&str) -> Result<Vec<Token>>> Tokenize for F {
    fn tokens(&self, query: &str) -> Result<Vec<Token>> {
        self(query)
    }
}

/// The rewrite's view of the shim: DuckDB's print and tokens.
struct Host<'t>(&'t dyn Tokenize);

impl rewrite::Host for Host<'_> {
    fn print(&self, sql: &str) -> Result<Option<rewrite::Printed>> {
        self.0.print(sql)
    }
    fn tokens(&self, sql: &str) -> Result<Vec<Token>> {
        self.0.tokens(sql)
    }
}

/// What becomes of one text DuckDB was about to parse.
#[derive(Debug)]
pub enum Outcome {
    /// Not an `ACL …` batch: DuckDB parses it unchanged.
    NotOurs,
    Rewritten(Rewritten),
    Refused(AclError),
}

/// A batch as DuckDB is to run it, and what the shim's second check and bookkeeping need.
#[derive(Debug)]
pub struct Rewritten {
    pub sql: String,
    /// `rewrite::translate_error`'s names: how DuckDB's errors about the batch are shown.
    pub names: String,
    /// How many statements `sql` holds (the shim checks DuckDB agrees).
    pub statements: usize,
    /// Per statement: what DuckDB's parse of it may name (`None`: management, not checked).
    pub checks: Vec<Option<Arc<Allowed>>>,
    /// The policy version the batch was decided under.
    pub version: u64,
    /// Unix seconds after which the statements must not run (a token's `exp`); 0: no limit.
    pub expires: i64,
    /// The session the statements run under (its operator id; 0: none): they run only while it
    /// is live.
    pub session: u64,
    /// Who owns a transaction the batch begins (`owner`); empty for `ACL ADMIN`.
    pub principal: String,
    /// `ACL NATIVE`: the statements are unchecked (`checks` all `None`) but hold only under the
    /// policy version (and `expires`) they were judged under.
    pub native: bool,
    /// The batch cache's entry for this batch, which keeps DuckDB's parse of it once the shim
    /// has parsed and checked it.
    pub kept: Option<Arc<BatchEntry>>,
    /// `kept` is a batch met before (a batch-cache hit): only then is DuckDB's parse of it worth
    /// keeping (copying a parse costs about a fifth of making one; most texts never come back).
    pub repeat: bool,
    /// The learned shape this batch is an instance of: its kept parse, copied with this
    /// instance's numbers, stands in for DuckDB's parse (spec 012, "Kept parse per shape").
    pub shape: Option<ShapeUse>,
}

/// Nothing longer is rewritten at all.
const MAX_TOKENS: usize = 500_000;

/// The statement path: `query` (which `prefix::maybe_ours` let through) under the caller's
/// `settings`.
pub fn rewrite(state: &State, query: &str, settings: &Settings, tokenize: &dyn Tokenize) -> Outcome {
    if let Some(entry) = kept::lookup(state, query, settings) {
        return Outcome::Rewritten(Rewritten::again(entry));
    }
    let mut lexed = tokenize.own_tokens(query);
    let tokens = match lexed.as_mut().map(|l| std::mem::take(&mut l.tokens)).map_or_else(|| tokenize.tokens(query), Ok) {
        Ok(tokens) => tokens,
        Err(e) => return Outcome::Refused(e),
    };
    if tokens.len() > MAX_TOKENS || !crate::stack::fits(tokens.len()) {
        return Outcome::Refused(AclError::from(crate::error::TooLarge::Statement));
    }
    // Every tree of the rewrite lives on a stack region sized for the text (`stack`): sqlparser
    // does not probe for room.
    crate::stack::run_with(crate::stack::statement_need(tokens.len()), || fresh(state, query, &tokens, lexed, settings, tokenize))
        .unwrap_or_else(|_| Outcome::Refused(no_room()))
}

/// A batch not in the batch cache, from its tokens on (and sqlparser's, when it made them).
fn fresh(state: &State, query: &str, tokens: &[Token], lexed: Option<tokens::Lexed>, settings: &Settings, tokenize: &dyn Tokenize) -> Outcome {
    let result = (|| -> Result<Option<Rewritten>> {
        let Some(batch) = prefix::split(query, tokens)? else { return Ok(None) };
        let policy = state.policy();
        let shape = Shape::of(query, tokens, &batch);
        let reused = shape.as_ref().and_then(|s| state.shapes.apply(&policy, &state.tokens, &state.sessions, settings, s));
        let (output, used) = match reused {
            Some((output, used)) => (output, Some(used)),
            None => {
                let sql_tokens = lexed.map(|mut l| l.per_statement(query, &batch.statements)).unwrap_or_default();
                let output = batch_with(state, &policy, settings, &batch, sql_tokens, tokenize)?;
                let used = shape
                    .as_ref()
                    .filter(|s| state.shapes.met_before(s))
                    .and_then(|shape| learn_shape(state, &policy, settings, shape, tokens, &output, tokenize));
                (output, used)
            }
        };
        let mut rewritten = keep(state, query, &policy, output);
        rewritten.shape = used;
        Ok(Some(rewritten))
    })();
    match result {
        Ok(None) => Outcome::NotOurs,
        Ok(Some(rewritten)) => Outcome::Rewritten(rewritten),
        Err(e) => Outcome::Refused(e),
    }
}

/// One batch under its prefix: management statements, or a principal's statements through the
/// rules.
pub fn batch(state: &State, policy: &Policy, settings: &Settings, batch: &Batch<'_>, tokenize: &dyn Tokenize) -> Result<Output> {
    batch_with(state, policy, settings, batch, Vec::new(), tokenize)
}

/// `batch`, with sqlparser's tokens of each statement when the batch's tokenization made them.
fn batch_with(
    state: &State,
    policy: &Policy,
    settings: &Settings,
    batch: &Batch<'_>,
    sql_tokens: Vec<Option<rewrite::Tokens>>,
    tokenize: &dyn Tokenize,
) -> Result<Output> {
    if let Prefix::Admin = batch.prefix {
        // `ACL ADMIN ACL NATIVE <sql>`, or a batch of DuckDB's own statements only: run as written
        // under the anonymous admin gate (issue 34, item 3); a mixed batch is refused.
        if batch.mode == Mode::Native || !batch.statements.iter().any(|s| crate::admin::is_management(s)) {
            return admin::native_anonymous(state, policy, settings, &batch.statements);
        }
        return admin::batch(state, policy, settings, &batch.statements, None);
    }
    let who = principal::of(state, policy, &batch.prefix, settings)?;
    match batch.mode {
        Mode::Sql => {}
        Mode::Management => {
            let runner = admin::Runner { prefix: &batch.prefix, principal: &who.principal, session: who.credential.session_id() };
            return admin::batch(state, policy, settings, &batch.statements, Some(runner));
        }
        Mode::Native => {
            let mut out = admin::native(policy, &who.principal, &batch.statements)?;
            out.expires = expires(who.token_exp());
            out.session = who.credential.session_id();
            out.principal = principal::owner_of(state, &batch.prefix, &who);
            return Ok(out);
        }
    }
    let host = Host(tokenize);
    let done = rewrite::principal_batch(policy, &state.rewrites, &who.principal, who.exp, &batch.statements, sql_tokens, settings, &host)?;
    let principal = principal::owner_of(state, &batch.prefix, &who);
    Ok(Output {
        sql: done.sql,
        statements: batch.statements.len(),
        names: done.names,
        checks: done.checks,
        version: policy.version,
        expires: expires(who.token_exp()),
        session: who.credential.session_id(),
        reuse: Some(Reuse { credential: who.credential, who: done.who }),
        principal,
        native: false,
    })
}

/// `Output::expires` of a batch decided under a token's `exp`: 0 means "no limit", so a token
/// that expired at the epoch still expires.
fn expires(exp: Option<i64>) -> i64 {
    exp.map_or(0, |exp| if exp == 0 { -1 } else { exp })
}

/// Keeps a principal's batch in the batch cache (management batches are never kept).
fn keep(state: &State, query: &str, policy: &Policy, out: Output) -> Rewritten {
    let kept = out.reuse.as_ref().and_then(|reuse| {
        let entry = BatchEntry {
            version: policy.version,
            credential: reuse.credential.clone(),
            who: reuse.who.clone(),
            output: Output {
                sql: out.sql.clone(),
                statements: out.statements,
                names: out.names.clone(),
                checks: out.checks.clone(),
                version: out.version,
                expires: out.expires,
                session: out.session,
                reuse: None,
                principal: out.principal.clone(),
                native: out.native,
            },
            parsed: Default::default(),
        };
        state.batches.insert(query, entry)
    });
    Rewritten {
        sql: out.sql,
        names: out.names,
        statements: out.statements,
        checks: out.checks,
        version: out.version,
        expires: out.expires,
        session: out.session,
        principal: out.principal,
        native: out.native,
        kept,
        repeat: false,
        shape: None,
    }
}

impl Rewritten {
    /// A batch cache hit, as the shim takes it.
    fn again(entry: Arc<BatchEntry>) -> Rewritten {
        let o = &entry.output;
        Rewritten {
            sql: o.sql.clone(),
            names: o.names.clone(),
            statements: o.statements,
            checks: o.checks.clone(),
            version: o.version,
            expires: o.expires,
            session: o.session,
            principal: o.principal.clone(),
            native: o.native,
            kept: Some(entry),
            repeat: true,
            shape: None,
        }
    }
}

/// Rewrites `shape`'s sentinel query and keeps the shape if it proves literal-independent.
fn learn_shape(
    state: &State,
    policy: &Policy,
    settings: &Settings,
    shape: &Shape<'_>,
    tokens: &[Token],
    actual: &Output,
    tokenize: &dyn Tokenize,
) -> Option<ShapeUse> {
    let (text, shifted) = shape.sentinel_query(tokens);
    let sentinel = prefix::split(&text, &shifted).ok()??;
    let sentinel = batch(state, policy, settings, &sentinel, tokenize).ok()?;
    state.shapes.learn(shape, actual, &sentinel)
}

/// The refusal when the thread's stack region cannot be reserved (`stack::run`).
pub fn no_room() -> AclError {
    AclError::internal("no stack could be reserved for the rewrite; the statement was refused")
}

/// The refusal of a statement whose rewrite panicked.
pub fn failed() -> AclError {
    AclError::internal("the rewrite failed; the statement was refused")
}

/// A batch as rewritten, before it is kept.
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
    /// The session the batch was decided under (operator id; 0: none).
    pub session: u64,
    /// Under a principal: what a `BatchCache` entry for this batch must record.
    pub reuse: Option<Reuse>,
    /// Who owns a transaction this batch begins (`owner`); empty for `ACL ADMIN`.
    pub principal: String,
    /// `ACL NATIVE`: unchecked statements that still carry the policy version (`Rewritten::native`).
    pub native: bool,
}

/// How a rewritten batch may be reused (see `BatchCache`).
#[derive(Debug, PartialEq, Eq, Clone)]
pub struct Reuse {
    pub credential: Credential,
    pub who: String,
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod session_tests;
#[cfg(test)]
mod stack_tests;
#[cfg(test)]
mod txn_tests;
#[cfg(test)]
mod source_tests;
#[cfg(test)]
mod scope_tests;
