//! Management statements (`ACL ADMIN`, and a principal's `ACL ROLE "r" ACL …`; spec 001
//! "Management", spec 007 "Administration scopes"): checked when the batch is parsed, applied
//! when DuckDB executes the `acl_exec`/`acl_exec_as` call the batch becomes, and judged again
//! then. Each text is parsed once (`Commands`): DuckDB may run a prepared management statement
//! again later, and the batch and its `acl_exec` parse the same text.
use super::{Output, State};
use crate::admin::scope::{self, Held};
use crate::admin::{Command, Expansion};
use crate::authz::Principal;
use crate::bounded::Bounded;
use crate::error::{AclError, LacksScope, Result, Scope, StatementNotPermitted};
use crate::policy::Policy;
use crate::prefix::Prefix;
use crate::rewrite::Settings;
use std::sync::Arc;

/// Who runs a management batch: anonymous `ACL ADMIN` (`None`), or a principal after its prefix
/// (`ACL ROLE "r" ACL …`), as the prefix said and as it was judged when the batch was parsed.
pub type RunAs<'a> = Option<Runner<'a>>;

/// A principal running a management batch: its prefix, the principal it was judged to be, and
/// (under `ACL SESSION`) the session's operator id, which the batch's call names instead of the
/// handle (`acl_exec_as('session', '<id>', …)`).
#[derive(Clone, Copy)]
pub struct Runner<'a> {
    pub prefix: &'a Prefix,
    pub principal: &'a Principal,
    pub session: u64,
}

/// A management batch: each statement is parsed now (syntax errors now, not at execution),
/// judged against the runner's scope (spec 007), and the statements that validate the policy SQL
/// of each are computed against the policy as the batch's earlier statements leave it (a dry run
/// on a copy); the whole batch becomes one `acl_exec` (anonymous) or `acl_exec_as` (a principal)
/// call, which judges it again and applies it in one transaction. Nothing is checked by the
/// second check: management statements are not rewritten SQL.
pub fn batch(state: &State, policy: &Policy, settings: &Settings, statements: &[&str], who: RunAs<'_>) -> Result<Output> {
    // The policy is applied when acl_exec runs and is not rolled back with a transaction (nor
    // does the policy store join one): refused inside an explicit transaction, here and again
    // when acl_exec runs (a statement prepared before).
    if settings.in_transaction {
        return Err(AclError::from(StatementNotPermitted::ManagementInTransaction));
    }
    match who {
        None => anonymous_allowed(state, settings)?,
        Some(r) => drop(Held::of_existing(policy, &r.principal.roles)?),
    }
    for (i, s) in statements.iter().enumerate() {
        let at = |e: AclError| e.at(i, statements.len(), s);
        if !crate::admin::is_management(s) {
            return Err(at(AclError::from(match who {
                None => StatementNotPermitted::AdminTakesManagementOnly,
                Some(_) => StatementNotPermitted::PrincipalTakesManagementOnly,
            })));
        }
        let cmd = state.commands.parse(s).map_err(at)?;
        if let Command::CheckCatalog { catalog } = &*cmd {
            // Rows of its own: alone in its batch, as its own table function.
            if statements.len() != 1 {
                return Err(StatementNotPermitted::CheckAlone.into());
            }
            if let Some(r) = who {
                scope::check(&Held::of(policy, &r.principal.roles), &r.principal.label, &cmd)?;
            }
            return Ok(Output { sql: check_call(catalog, who)?, ..management_output(policy, 1) });
        }
    }
    let mut sql = validations(state, policy, statements, who)?;
    sql.push(admin_call(statements, who)?);
    Ok(Output { sql: sql.join(";\n"), ..management_output(policy, sql.len()) })
}

/// The validation statements of a management batch (`admin::validate`), each computed against the
/// policy as the batch's earlier statements leave it (a dry run on a copy), after the runner's
/// scope and the store guard were judged for each statement and the policy SQL the batch brings
/// was judged as its author's (spec 007, "Policy SQL is input"). Shared by `batch` and `call`.
fn validations(state: &State, policy: &Policy, statements: &[&str], who: RunAs<'_>) -> Result<Vec<String>> {
    let store = state.store();
    let mut sql = Vec::with_capacity(statements.len() + 1);
    // The policy after the statements so far; `None` until a statement changed it, and after
    // one failed (then the batch fails when it runs, and nothing after it needs checking).
    let mut dry: Option<Policy> = None;
    let mut checking = true;
    let held = who.map(|r| Held::of(policy, &r.principal.roles));
    for (i, s) in statements.iter().enumerate() {
        let at = |e: AclError| e.at(i, statements.len(), s);
        let cmd = state.commands.parse(s).map_err(at)?;
        if let Some(store) = &store {
            crate::store::guard::check_command(store.location(), &store.describe(), &cmd).map_err(at)?;
        }
        if !checking {
            continue;
        }
        let now = dry.as_ref().unwrap_or(policy);
        if let Some(r) = who {
            scope::check(&Held::of(now, &r.principal.roles), &r.principal.label, &cmd).map_err(at)?;
        }
        let checks = crate::admin::validate::checks(now, &cmd).map_err(at)?;
        let next = dry.get_or_insert_with(|| policy.clone());
        // A validation statement binds the command's policy SQL as the gateway's: it is emitted
        // only for a command that applies, once the SQL it brings was judged (spec 007, "Policy
        // SQL is input"). The check of the whole batch below does not see a piece a later
        // statement replaces or drops, nor one of a statement that fails to apply.
        let before = (!checks.is_empty()).then(|| next.clone());
        // An expansion is listed here as it will be when it runs, so the statements after it
        // are validated against its objects; a listing that fails stops the checks (the batch
        // fails when it runs).
        checking = match listed(state, next, &cmd) {
            Ok(filled) => crate::admin::apply(next, filled.as_ref().unwrap_or(&cmd)).is_ok(),
            Err(_) => false,
        };
        if let Some(before) = before.filter(|_| checking) {
            if !state.faults.unchecked_policy_sql {
                crate::admin::policy_sql::check_batch(&before, next, held.as_ref()).map_err(at)?;
            }
            sql.extend(checks);
        }
    }
    // The policy SQL the batch brings, judged as its author's before any validation statement
    // runs it (spec 007, "Policy SQL is input"); judged again when the batch runs.
    if let Some(after) = dry.as_ref().filter(|_| !state.faults.unchecked_policy_sql) {
        crate::admin::policy_sql::check_batch(policy, after, held.as_ref())?;
    }
    Ok(sql)
}

/// A management batch's output of `n` statements (its SQL filled in by the caller).
fn management_output(policy: &Policy, n: usize) -> Output {
    Output {
        sql: String::new(),
        statements: n,
        // A blob with no names: the shim treats the batch's statements as ours, so its validation
        // statements bind with replacement scans off (a three-part name of no attached database
        // must not read a file as the gateway) and DuckDB's errors about them name nothing
        // physical (spec 007, "Policy SQL is input").
        names: crate::rewrite::names_blob(std::iter::empty()),
        checks: vec![None; n],
        version: policy.version,
        expires: 0,
        session: 0,
        reuse: None,
        principal: String::new(),
        native: false,
    }
}

/// `CHECK VIRTUAL CATALOG c` as the table function that answers it: `acl_check_catalog_of` for
/// the gateway, `acl_check_catalog_as` for a principal (judged again when it runs).
fn check_call(catalog: &str, who: RunAs<'_>) -> Result<String> {
    let c = crate::sqltext::literal(catalog);
    Ok(match who {
        None => format!("SELECT * FROM acl_check_catalog_of({c})"),
        Some(r) => format!("SELECT * FROM acl_check_catalog_as({}, {c})", runner_args(r)?),
    })
}

/// The prefix a management call names (`runner_args` wrote it): `'role', 'r'`, `'token',
/// '<jwt>'`, or `'session', '<id>'` — the session's handle, found by its id, then judged as every
/// statement of the session is (live, not idle, its token's `exp` under `every_use`).
pub fn runner_prefix(state: &State, kind: Option<&str>, who: String) -> Result<Prefix> {
    match kind {
        Some("role") => Ok(Prefix::Role(who)),
        Some("token") => Ok(Prefix::Token(who)),
        Some("session") => {
            let id = who.parse::<u64>().map_err(|_| AclError::SessionRefused { reason: crate::error::SessionReason::Unknown })?;
            Ok(Prefix::Session(state.sessions.handle_of(id)?.expose().to_string()))
        }
        // Nothing else is written by a batch: refused, never anonymous.
        _ => Err(AclError::internal("a management call names no principal")),
    }
}

/// A runner as the first two arguments of `acl_exec_as`/`acl_check_catalog_as`: `'role', 'r'`,
/// `'token', '<jwt>'`, or `'session', '<id>'` — never a session's handle, which must not reach
/// any text DuckDB keeps (a prepared statement's, the query log's).
fn runner_args(r: Runner<'_>) -> Result<String> {
    Ok(match r.prefix {
        Prefix::Role(role) => format!("'role', {}", crate::sqltext::literal(role)),
        Prefix::Token(jwt) => format!("'token', {}", crate::sqltext::literal(jwt)),
        Prefix::Session(_) if r.session != 0 => format!("'session', '{}'", r.session),
        Prefix::Admin | Prefix::Session(_) => return Err(AclError::internal("a management batch under this prefix")),
    })
}

/// `acl_check_catalog([catalog])` (`who` `None`: the gateway's native call) and a principal's
/// `CHECK VIRTUAL CATALOG c` (`acl_check_catalog_as`): the principal is judged again, and must
/// hold manage on the catalog (spec 007, "Drift"). `host` reads the physical catalog in the
/// caller's transaction.
pub fn check_catalog(
    state: &State,
    catalog: Option<&str>,
    who: Option<&Prefix>,
    settings: &Settings,
    host: &mut dyn crate::admin::check::Host,
) -> Result<Vec<crate::admin::check::Finding>> {
    let policy = state.policy();
    if let Some(prefix) = who {
        let principal = super::principal::of(state, &policy, prefix, settings)?.principal;
        let catalog = catalog.ok_or(AclError::internal("acl_check_catalog_as names no catalog"))?;
        let cmd = Command::CheckCatalog { catalog: crate::policy::norm(catalog) };
        scope::check(&Held::of_existing(&policy, &principal.roles)?, &principal.label, &cmd)?;
    }
    crate::admin::check::check(&policy, catalog.map(crate::policy::norm).as_deref(), host)
}

/// `ACL ROLE "r" ACL NATIVE <sql>`: the statements as written, for a principal holding
/// passthrough. They are not rewritten and not checked a second time (there is nothing to check
/// them against), but they hold only under the policy they were judged under (and the token's
/// `exp`): a prepared copy is refused once the policy changed, passthrough revoked included.
pub fn native(policy: &Policy, principal: &Principal, statements: &[&str]) -> Result<Output> {
    scope::check_native(&Held::of_existing(policy, &principal.roles)?, &principal.label)?;
    Ok(native_output(policy, statements))
}

/// The statements as written, run as DuckDB's own under `policy`'s version.
fn native_output(policy: &Policy, statements: &[&str]) -> Output {
    Output {
        sql: statements.join(";\n"),
        statements: statements.len(),
        names: String::new(),
        checks: vec![None; statements.len()],
        version: policy.version,
        expires: 0,
        session: 0,
        reuse: None,
        principal: String::new(),
        native: true,
    }
}

/// Anonymous `ACL ADMIN <DuckDB's own SQL>` and `ACL ADMIN ACL NATIVE <sql>` (the reference
/// system's forms; spec 007): the statements as written, under the same gate as anonymous
/// management. Such a batch is the gateway's, as unprefixed SQL is; with a policy store and the
/// gate closed it is refused like any anonymous administration.
pub fn native_anonymous(state: &State, policy: &Policy, settings: &Settings, statements: &[&str]) -> Result<Output> {
    anonymous_allowed(state, settings)?;
    Ok(native_output(policy, statements))
}

/// Anonymous `ACL ADMIN` (and the gateway's own `acl_exec`): always in memory mode; with a
/// policy store in use only while `acl_allow_anonymous_admin` is on.
fn anonymous_allowed(state: &State, settings: &Settings) -> Result<()> {
    if state.store().is_none() || settings.anonymous_admin {
        return Ok(());
    }
    Err(LacksScope { principal: "anonymous ACL ADMIN".into(), needs: Scope::AnonymousAdmin, statement: "a policy store is in use" }.into())
}

/// Management statements run when DuckDB executes the batch (after its validation statements),
/// through the extension's `acl_exec` table function (`acl_exec_as` for a principal, which names
/// it): one statement as text, several as a list, all applied in one transaction.
fn admin_call(statements: &[&str], who: RunAs<'_>) -> Result<String> {
    let quoted = |s: &&str| crate::sqltext::literal(s);
    let list = match statements {
        [one] => quoted(one),
        // `[…]` is DuckDB's `list_value(…)`, looked up on the search path: a macro of that name
        // would take the batch. The built-in, qualified, cannot be shadowed.
        many => format!("\"system\".main.list_value({})", many.iter().map(quoted).collect::<Vec<_>>().join(", ")),
    };
    Ok(match who {
        None => format!("SELECT * FROM acl_exec({list})"),
        Some(r) => format!("SELECT * FROM acl_exec_as({}, {list})", runner_args(r)?),
    })
}

/// An expansion with the names of its source's tables and views, listed from the host when it
/// runs (`None` for every other command). The source is the one the policy holds at this point
/// of the batch (a `SET PHYS` before a `REFRESH` counts).
fn listed(state: &State, p: &Policy, cmd: &Command) -> Result<Option<Command>> {
    if let Some(sourced) = sourced(state, p, cmd)? {
        return Ok(Some(sourced));
    }
    let Command::ExpandSchema { catalog, schema, how, objects: None } = cmd else { return Ok(None) };
    let source = match how {
        Expansion::Create { source, .. } => Some(source.clone()),
        Expansion::Refresh { .. } => p.catalogs.get(catalog).and_then(|c| c.expansions.get(schema)).map(|vs| (vs.db.clone(), vs.schema.clone())),
    };
    let objects = match source {
        Some((db, phys)) => {
            let host = state.host_db.get().ok_or(AclError::internal("the instance's database is not known"))?;
            host.physical_objects(&db, &phys)?
        }
        // Nothing to list: applying says why (no such schema, or an alias).
        None => Vec::new(),
    };
    Ok(Some(Command::ExpandSchema { catalog: catalog.clone(), schema: schema.clone(), how: how.clone(), objects: Some(objects) }))
}

/// A virtual table's physical source, read when the statement is written (never without the
/// instance's database, as in unit tests): a source that does not exist is refused now rather
/// than at a principal's first statement, and a bare `NULL` mask of a physical column takes the
/// column's type (`ssn = NULL` is shown as the VARCHAR it masks, not as DuckDB's type "NULL").
fn sourced(state: &State, p: &Policy, cmd: &Command) -> Result<Option<Command>> {
    use crate::admin::TableSet;
    use crate::policy::{PhysName, RelationKind};
    let (target, columns): (&PhysName, Option<&Vec<crate::policy::Column>>) = match cmd {
        Command::CreateTable { target, slice, .. } => (target, slice.columns.as_ref()),
        Command::AlterTable { set: TableSet::Phys(target), .. } => (target, None),
        Command::AlterTable { key, set: TableSet::Columns { columns: Some(cols), .. } } => {
            let Some(RelationKind::Table(target)) = p.relation(key).map(|r| &r.kind) else { return Ok(None) };
            (target, Some(cols))
        }
        _ => return Ok(None),
    };
    let Some(host) = state.host_db.get() else { return Ok(None) };
    let Some(physical) = host.physical_columns(target)? else {
        return Err(crate::error::Invalid::NoSuchSource { name: format!("{}.{}.{}", target.db, target.schema, target.name) }.into());
    };
    let Some(columns) = columns.filter(|cols| cols.iter().any(bare_null)) else { return Ok(None) };
    let typed: Vec<crate::policy::Column> = columns
        .iter()
        .map(|c| {
            let ty = physical.iter().find(|(n, _)| crate::policy::norm(n) == c.name).map(|(_, t)| t.as_str());
            match ty.filter(|t| bare_null(c) && plain_type(t)) {
                Some(t) => crate::policy::Column { name: c.name.clone(), expr: Some(format!("CAST(NULL AS {t})")) },
                None => c.clone(),
            }
        })
        .collect();
    let mut out = cmd.clone();
    match &mut out {
        Command::CreateTable { slice, .. } => slice.columns = Some(typed),
        Command::AlterTable { set: TableSet::Columns { columns, .. }, .. } => *columns = Some(typed),
        _ => return Ok(None),
    }
    Ok(Some(out))
}

fn bare_null(c: &crate::policy::Column) -> bool {
    c.expr.as_deref().is_some_and(|e| e.trim().eq_ignore_ascii_case("null"))
}

/// A type name DuckDB prints for a built-in type (`VARCHAR`, `DECIMAL(18,3)`, `INTEGER[]`):
/// words, digits, commas, parentheses and brackets only. An ENUM lists its labels (its column is
/// shown as VARCHAR, spec 021) and a named type may not resolve for a principal: both keep NULL.
fn plain_type(t: &str) -> bool {
    !t.is_empty()
        && !t.to_ascii_uppercase().contains("ENUM")
        && t.chars().all(|ch| ch.is_ascii_alphanumeric() || matches!(ch, '_' | '(' | ')' | ',' | ' ' | '[' | ']'))
}

/// `acl_exec` with one statement, anonymous (tests and callers of the old form).
#[cfg(test)]
pub fn execute(state: &State, sql: &str, in_transaction: bool) -> Result<String> {
    let mut out = execute_all(state, &[sql], &anonymous(in_transaction), None)?;
    Ok(out.pop().unwrap_or_default())
}

/// Settings under which anonymous admin may run whatever the mode (the tests' gateway).
#[cfg(test)]
pub fn anonymous(in_transaction: bool) -> Settings {
    Settings { in_transaction, anonymous_admin: true, ..Settings::default() }
}

/// `acl_exec`/`acl_exec_as`: the statements of one batch (already split), applied in order to
/// one copy of the policy; with a store in use the difference is written and committed in one
/// store transaction first (`store::Store::commit`). The copy is published only after all of it
/// succeeded (and was committed); any failure leaves the previous policy in force. Returns each
/// statement's status. `settings` are those of the context it runs in, read when it runs, not
/// when it was bound: a statement prepared outside a transaction may execute inside one, and a
/// setting may have changed.
///
/// Under a principal (`who`) everything is judged again, against the policy the batch is applied
/// to: the principal (a token verified again), each command's scope and self-grant as the batch
/// evolves, and, after the last, that the principal holds no role it did not hold before.
pub fn execute_all<S: AsRef<str>>(state: &State, statements: &[S], settings: &Settings, who: Option<&Prefix>) -> Result<Vec<String>> {
    if settings.in_transaction {
        return Err(AclError::from(StatementNotPermitted::ManagementInTransaction));
    }
    let n = statements.len();
    let at = |i: usize, e: AclError| e.at(i, n, statements[i].as_ref());
    let cmds = statements.iter().enumerate().map(|(i, s)| state.commands.parse(s.as_ref()).map_err(|e| at(i, e))).collect::<Result<Vec<_>>>()?;
    let w = state.writer();
    let current = w.current();
    let runner = match who {
        None => {
            anonymous_allowed(state, settings)?;
            None
        }
        Some(prefix) => {
            let who = super::principal::of(state, &current, prefix, settings)?;
            Held::of_existing(&current, &who.principal.roles)?;
            Some((prefix, who))
        }
    };
    let store = state.store();
    let mut change = |p: &mut Policy| -> Result<Vec<String>> {
        let before = runner.as_ref().map(|(prefix, who)| roles_now(p, prefix, &who.principal));
        // What its credential maps to before the batch: what the batch may not widen.
        let mapped = runner.as_ref().map(|(prefix, who)| mapped_now(p, prefix, who));
        let held = before.as_ref().map(|roles| Held::of(p, roles));
        let base = p.clone();
        let mut out = Vec::with_capacity(cmds.len());
        for (i, cmd) in cmds.iter().enumerate() {
            let one = |p: &mut Policy| -> Result<String> {
                if let (Some((_, who)), Some(before)) = (&runner, &before) {
                    scope::check(&Held::of(p, before), &who.principal.label, cmd)?;
                }
                if let Some(store) = &store {
                    crate::store::guard::check_command(store.location(), &store.describe(), cmd)?;
                }
                let filled = listed(state, p, cmd)?;
                crate::admin::apply(p, filled.as_ref().unwrap_or(cmd))
            };
            out.push(one(p).map_err(|e| at(i, e))?);
        }
        if !state.faults.unchecked_policy_sql {
            crate::admin::policy_sql::check_batch(&base, p, held.as_ref())?;
        }
        if let (Some((prefix, who)), Some(mapped)) = (&runner, &mapped) {
            scope::check_gains(&who.principal.label, mapped, &mapped_now(p, prefix, who))?;
        }
        Ok(out)
    };
    let Some(store) = store.clone() else {
        let mut next = Policy::clone(&current);
        let mut out = change(&mut next)?;
        warn_unset_claims(&current, &next, &mut out);
        w.publish(next);
        return Ok(out);
    };
    let loaded = state.store_status().policy_version;
    match store.commit(loaded, &current, &mut change) {
        Ok(done) => {
            let mut out = done.out;
            warn_unset_claims(&current, &done.policy, &mut out);
            w.publish(done.policy);
            state.note_store(Ok(done.version));
            Ok(out)
        }
        Err(e) => {
            if matches!(e, AclError::Store(_)) {
                state.note_store(Err(&e));
            }
            Err(e)
        }
    }
}

/// A warning row for each claim a slice reads that nothing sets, brought by this batch (spec 003,
/// "Claims"): without it a token reads nothing and nobody is told why.
fn warn_unset_claims(before: &Policy, after: &Policy, out: &mut Vec<String>) {
    let known = crate::admin::claims::unset(before);
    out.extend(crate::admin::claims::unset(after).iter().filter(|u| !known.contains(u)).map(|u| u.warning()));
}

/// A call of the reference's function API (`acl_grant_catalog(…)`, …; native only, like every
/// `acl_*`): the management statements it stands for (`admin::calls`), run as the gateway's
/// `acl_exec` runs them — the anonymous-admin gate, one transaction, every check of `apply`.
pub fn call(state: &State, function: &str, values: &[Option<String>], settings: &Settings) -> Result<Vec<String>> {
    let statements = crate::admin::calls::statements(function, values)?;
    if settings.in_transaction {
        return Err(AclError::from(StatementNotPermitted::ManagementInTransaction));
    }
    anonymous_allowed(state, settings)?;
    // What the statement form checks by binding before its acl_exec (a predicate or mask that
    // does not bind, a view that does not give its declared columns), checked here the same way.
    let texts: Vec<&str> = statements.iter().map(String::as_str).collect();
    let checks = validations(state, &state.policy(), &texts, None)?;
    if !checks.is_empty() {
        let host = state.host_db.get().ok_or(AclError::internal("the instance's database is not known"))?;
        host.bind_checks(&checks)?;
    }
    execute_all(state, &statements, settings, None)
}

/// The roles the principal maps to under `p`: the prefix's role, or what the token's role claim
/// maps to now (the batch may have changed its issuer or mappings).
fn roles_now(p: &Policy, prefix: &Prefix, principal: &Principal) -> Vec<String> {
    match prefix {
        Prefix::Token(jwt) => crate::auth::roles_under(p, jwt),
        _ => principal.roles.clone(),
    }
}

/// What the principal's credential maps to under `p`, for `check_gains`: `roles_now`, but for a
/// session what its token maps to now. The session itself keeps the roles it opened with
/// (identity is resolved once), but its token opens new sessions and runs `ACL TOKEN`: a batch
/// that makes the token map to a role it did not is refused through a session as through the
/// token (spec 007, "Administration scopes"; spec 017).
fn mapped_now(p: &Policy, prefix: &Prefix, who: &super::principal::Who) -> Vec<String> {
    match &who.credential {
        super::principal::Credential::Session(s) => crate::auth::roles_under(p, s.token()),
        _ => roles_now(p, prefix, &who.principal),
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
