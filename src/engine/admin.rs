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
/// the statements that validate the policy SQL of each are computed against the policy as the
/// batch's earlier statements leave it (a dry run on a copy), and the whole batch becomes one
/// `acl_exec` call, which applies it in one transaction. Nothing is checked by the second
/// check: the gateway's own.
pub fn batch(state: &State, policy: &Policy, settings: &Settings, statements: &[&str]) -> Result<Output> {
    // The policy is applied when acl_exec runs and is not rolled back with a transaction (nor
    // does the policy store join one): refused inside an explicit transaction, here and again
    // when acl_exec runs (a statement prepared before).
    if settings.in_transaction {
        return Err(AclError::from(StatementNotPermitted::ManagementInTransaction));
    }
    let store = state.store();
    let mut sql = Vec::with_capacity(statements.len() + 1);
    // The policy after the statements so far; `None` until a statement changed it, and after
    // one failed (then the batch fails when it runs, and nothing after it needs checking).
    let mut dry: Option<Policy> = None;
    let mut checking = true;
    for (i, s) in statements.iter().enumerate() {
        if !crate::admin::is_management(s) {
            return Err(AclError::from(StatementNotPermitted::AdminTakesManagementOnly));
        }
        let cmd = state.commands.parse(s)?;
        if let Some(store) = &store {
            crate::store::guard::check_command(store.location(), &store.describe(), &cmd)?;
        }
        if !checking {
            continue;
        }
        sql.extend(crate::admin::validate::checks(dry.as_ref().unwrap_or(policy), &cmd)?);
        if i + 1 < statements.len() {
            let next = dry.get_or_insert_with(|| policy.clone());
            checking = crate::admin::apply(next, &cmd).is_ok();
        }
    }
    sql.push(admin_call(statements));
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

/// Management statements run when DuckDB executes the batch (after its validation statements),
/// through the extension's `acl_exec` table function: one statement as text, several as a list,
/// all applied in one transaction.
fn admin_call(statements: &[&str]) -> String {
    let quoted = |s: &&str| crate::sqltext::literal(s);
    match statements {
        [one] => format!("SELECT * FROM acl_exec({})", quoted(one)),
        // `[…]` is DuckDB's `list_value(…)`, looked up on the search path: a macro of that name
        // would take the batch. The built-in, qualified, cannot be shadowed.
        many => format!(
            "SELECT * FROM acl_exec(\"system\".main.list_value({}))",
            many.iter().map(quoted).collect::<Vec<_>>().join(", ")
        ),
    }
}

/// `acl_exec` with one statement (tests and callers of the old form).
pub fn execute(state: &State, sql: &str, in_transaction: bool) -> Result<String> {
    let mut out = execute_all(state, &[sql], in_transaction)?;
    Ok(out.pop().unwrap_or_default())
}

/// `acl_exec`: the statements of one batch (already split), applied in order to one copy of the
/// policy; with a store in use the difference is written and committed in one store
/// transaction first (`store::Store::commit`). The copy is published only after all of it
/// succeeded (and was committed); any failure leaves the previous policy in force. Returns each
/// statement's status. `in_transaction`: an explicit transaction is open where it runs (or that
/// cannot be known), checked when it runs, not when it was bound: a statement prepared outside a
/// transaction may execute inside one.
pub fn execute_all<S: AsRef<str>>(state: &State, statements: &[S], in_transaction: bool) -> Result<Vec<String>> {
    if in_transaction {
        return Err(AclError::from(StatementNotPermitted::ManagementInTransaction));
    }
    let cmds = statements.iter().map(|s| state.commands.parse(s.as_ref())).collect::<Result<Vec<_>>>()?;
    let w = state.writer();
    let current = w.current();
    let store = state.store();
    let mut change = |p: &mut Policy| -> Result<Vec<String>> {
        let mut out = Vec::with_capacity(cmds.len());
        for cmd in &cmds {
            if let Some(store) = &store {
                crate::store::guard::check_command(store.location(), &store.describe(), cmd)?;
            }
            out.push(crate::admin::apply(p, cmd)?);
        }
        Ok(out)
    };
    let Some(store) = store.clone() else {
        let mut next = Policy::clone(&current);
        let out = change(&mut next)?;
        w.publish(next);
        return Ok(out);
    };
    let loaded = state.store_status().policy_version;
    match store.commit(loaded, &current, &mut change) {
        Ok(done) => {
            w.publish(done.policy);
            state.note_store(Ok(done.version));
            Ok(done.out)
        }
        Err(e) => {
            if matches!(e, AclError::Store(_)) {
                state.note_store(Err(&e));
            }
            Err(e)
        }
    }
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
