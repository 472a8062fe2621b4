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

/// Past this many tokens a statement is rewritten on a thread with a large stack: parsing,
/// walking, printing and dropping a long flat expression (`1+1+…`) recurse once per term.
const BIG_STATEMENT_TOKENS: usize = 4_096;
/// Nothing longer is rewritten at all.
const MAX_TOKENS: usize = 500_000;
/// Reserved, not committed: only a statement that needs it touches it.
const BIG_STACK_BYTES: usize = 1 << 30;

/// Runs `work` on a scoped thread with a `BIG_STACK_BYTES` stack; a panic is caught there.
fn on_big_stack<T: Send>(work: impl FnOnce() -> T + Send) -> std::thread::Result<T> {
    std::thread::scope(|scope| {
        match std::thread::Builder::new()
            .name("acl-rewrite".into())
            .stack_size(BIG_STACK_BYTES)
            .spawn_scoped(scope, || catch_unwind(AssertUnwindSafe(work)))
        {
            Ok(handle) => handle.join().unwrap_or_else(Err),
            Err(e) => Err(Box::new(e.to_string()) as Box<dyn std::any::Any + Send>),
        }
    })
}

/// Rewrites `shape`'s sentinel query and keeps the shape if it proves literal-independent.
fn learn_shape(
    state: &State,
    policy: &crate::policy::Policy,
    settings: &rewrite::Settings,
    shape: &rewrite::Shape<'_>,
    tokens: &[Token],
    actual: &rewrite::Output,
) {
    let (text, shifted) = shape.sentinel_query(tokens);
    let Ok(Some(batch)) = prefix::split(&text, &shifted) else { return };
    if let Ok(sentinel) = rewrite::batch(policy, &state.tokens, &state.rewrites, settings, &batch) {
        state.shapes.learn(shape, actual, &sentinel);
    }
}

