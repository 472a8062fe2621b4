//! Management statements (`ACL ADMIN`, spec 001 "Management"): checked when the batch is
//! parsed, applied when DuckDB executes the `acl_exec` call each one becomes. Each text is parsed
//! once (`Commands`): DuckDB may run a prepared management statement again later, and the batch
//! and its `acl_exec` parse the same text.
use super::{Output, State};
use crate::admin::Command;
use crate::bounded::Bounded;
use crate::error::{AclError, Result, StatementNotPermitted};
use crate::policy::Policy;
use crate::rewrite::Settings;
use std::sync::Arc;


/// An `ACL ADMIN` batch: each statement is parsed now (syntax errors now, not at execution),
/// preceded by the statements that validate its policy SQL (`rewrite::validate_management`), and
/// becomes an `acl_exec` call. Nothing is checked by the second check: the gateway's own.
pub fn batch(state: &State, policy: &Policy, settings: &Settings, statements: &[&str]) -> Result<Output> {
    // The policy is applied when acl_exec runs and is not rolled back with a transaction
    // (nor will the policy store of later issues join one): refused inside an explicit
    // transaction, here and again when acl_exec runs (a statement prepared before).
    if settings.in_transaction {
        return Err(AclError::from(StatementNotPermitted::ManagementInTransaction));
    }
    let mut sql = Vec::with_capacity(statements.len());
    // Each statement is checked against the policy as the statements before it in the batch
    // leave it (a GRANT on a table the batch creates, an ALTER of a view it creates): a copy
    // they are applied to here, only when there is a statement after them.
    let mut projected: Option<Policy> = None;
    for (i, s) in statements.iter().enumerate() {
        if !crate::admin::is_management(s) {
            return Err(AclError::from(StatementNotPermitted::AdminTakesManagementOnly));
        }
        let cmd = state.commands.parse(s)?;
        let now = projected.as_ref().unwrap_or(policy);
        sql.extend(crate::admin::validate::checks(now, &cmd)?);
        sql.push(admin_call(s));
        if i + 1 < statements.len() {
            // A statement that fails here fails when it runs too, and DuckDB runs nothing after
            // it: what the copy then holds checks nothing that runs.
            let _ = crate::admin::apply(projected.get_or_insert_with(|| policy.clone()), &cmd);
        }
    }
    Ok(Output {
        sql: sql.join(";\n"),
        statements: sql.len(),
        names: String::new(),
        checks: vec![None; sql.len()],
        version: policy.version,
        expires: 0,
        reuse: None,
        principal: String::new(),
    })
}

/// Management statements run when DuckDB executes the batch (in order with the rest of it),
/// through the extension's `acl_exec` table function.
fn admin_call(stmt: &str) -> String {
    format!("SELECT * FROM acl_exec('{}')", stmt.replace('\'', "''"))
}

/// `acl_exec`: runs one management statement (already split from its batch) against a copy of
/// the policy and publishes the copy only if it succeeded. `in_transaction`: an explicit
/// transaction is open where it runs (or that cannot be known), checked when it runs, not when
/// it was bound: a statement prepared outside a transaction may execute inside one.
pub fn execute(state: &State, sql: &str, in_transaction: bool) -> Result<String> {
    if in_transaction {
        return Err(AclError::from(StatementNotPermitted::ManagementInTransaction));
    }
    let cmd = state.commands.parse(sql)?;
    state.update(|policy| crate::admin::apply(policy, &cmd))
}

/// Past this many commands, or these many bytes, the cache starts over (spec 012, "Memory").
const MAX_COMMANDS: usize = 1_024;
const COMMANDS_BYTES: usize = 2 << 20;
/// A command's heap per byte of its text, as an upper bound: its strings are at most the text,
/// and a list of one-letter names (`f,`) costs a `String` header (24 bytes) per two bytes.
const COMMAND_PER_BYTE: usize = 16;

/// Parsed management statements by their text. A parse is of the text alone (`admin::parse`
/// reads nothing else: no policy, no file, no clock), so a hit is exactly what parsing again
/// would give; everything that depends on the policy (validation, existence, keys files) is
/// judged when the command is applied. Refusals are not kept.
pub struct Commands {
    entries: Bounded<String, Arc<Command>>,
}

impl Default for Commands {
    fn default() -> Commands {
        Commands { entries: Bounded::new(COMMANDS_BYTES, MAX_COMMANDS) }
    }
}

impl Commands {
    pub fn parse(&self, sql: &str) -> Result<Arc<Command>> {
        if let Some(hit) = self.entries.get(sql) {
            return Ok(Arc::clone(&hit));
        }
        let cmd = Arc::new(crate::admin::parse(sql)?);
        let size = sql.len() * (1 + COMMAND_PER_BYTE) + std::mem::size_of::<Command>();
        self.entries.insert(sql.to_string(), Arc::clone(&cmd), size);
        Ok(cmd)
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}
