//! Views a principal creates (spec 005): never more than a name for a query judged under the
//! policy in force when the view is *used*.
//!
//! DuckDB stores a view's parse and binds it at every use, where our parser hook does not run.
//! So the view stores its body rewritten *and* a guard next to it:
//!
//! ```sql
//! CREATE VIEW … AS SELECT "__acl_q".*
//!     FROM "system"."main"."acl_view_guard"('<name>', '<definer>', '<body>', <persistent>, '<digest>') AS "__acl_g",
//!          (<rewritten body>) AS "__acl_q"
//! ```
//!
//! The texts travel hex-encoded: a literal of `[0-9a-f]` reads the same to every parser, whatever
//! the principal wrote. The guard stands before the body, so nothing the body's text does to the
//! rest of its line can take the guard out of the view.
//!
//! `acl_view_guard` (src/ffi/view_guard.rs) is a table function whose *bind* runs whenever DuckDB
//! binds the view — at creation and at every use, by any principal or by the gateway itself —
//! before anything runs. It rewrites the principal's original body again under the definer with
//! the current policy (the rewrite cache makes a repeat cheap) and refuses unless the result is the
//! text the view was created with: the text carries every physical name, slice, mask and claim the
//! decision used, so the same text is the same decision, and any change that touches the view
//! (narrowing, revoking, a dropped role, changed claims) refuses it, while an unrelated policy
//! change does not. A token principal's view is also refused after the token's `exp`.
use super::{Decision, FnGate};
use crate::authz::{Principal, View};
use crate::error::{AclError, Result, Stale, Unsupported};
use crate::policy::Policy;
use sqlparser::ast::{CreateView, Ident, ObjectName, Query, SetExpr, Statement, TableFactor};
use sqlparser::dialect::DuckDbDialect;
use sqlparser::parser::Parser;

/// The guard as the rewrite emits it (qualified, so no macro can stand in for it).
pub const GUARD_FN: [&str; 3] = ["system", "main", "acl_view_guard"];
const QUERY_ALIAS: &str = "__acl_q";
pub(super) const GUARD_ALIAS: &str = "__acl_g";

/// What the guard's arguments say, decoded (the rewrite wrote them; a principal cannot call the
/// guard).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GuardArgs {
    /// The view's name as the principal wrote it (for messages).
    pub name: String,
    /// `definer_arg`: who created the view.
    pub definer: String,
    /// The body as the principal wrote it (sqlparser's printing of it).
    pub body: String,
    /// The view outlives the connection (it must not read a temporary table).
    pub persistent: bool,
    /// SHA-256 (hex) of the body's rewrite when the view was created.
    pub digest: String,
}

/// Rewrites `CREATE VIEW`'s body under `view` and puts it behind the guard. The new query is the
/// rules' own SQL (the later rules know the guard by its shape, `trusted`), and what the body's rewrite names joins the
/// decision (the second check compares DuckDB's parse with it).
pub(super) fn prepare(
    view: &View<'_>,
    fns: &FnGate<'_>,
    cv: &mut CreateView,
    temporary: bool,
    decision: &mut Decision,
    faults: crate::faults::Faults,
) -> Result<()> {
    let args = GuardArgs {
        name: cv.name.to_string(),
        definer: definer_arg(view.principal, view.expires),
        body: cv.query.to_string(),
        persistent: !temporary,
        digest: String::new(),
    };
    let (query, sql, body) = rewrite_body(view, fns, &args.body, args.persistent, faults)?;
    // The body was judged with room of its own: it takes its printed size from the statement's.
    decision.room.take(sql.len())?;
    let args = GuardArgs { digest: digest(&sql), ..args };
    let q = crate::sqltext::ident;
    let template = format!(
        "SELECT {qa}.* FROM {guard}('{name}', '{definer}', '{text}', {persistent}, '{digest}') AS {ga}, (SELECT 1) AS {qa}",
        qa = q(QUERY_ALIAS),
        ga = q(GUARD_ALIAS),
        guard = GUARD_FN.map(q).join("."),
        name = hex(&args.name),
        definer = hex(&args.definer),
        text = hex(&args.body),
        persistent = args.persistent,
        digest = args.digest,
    );
    let mut wrapper = Parser::new(&DuckDbDialect {})
        .try_with_sql(&template)
        .and_then(|mut p| p.parse_query())
        .map_err(|_| AclError::internal("a view's guard did not parse"))?;
    // The body's own tree goes in place of the placeholder: it is printed once, from the tree the
    // digest was taken of, never parsed again from its text.
    let placeholder = match wrapper.body.as_mut() {
        SetExpr::Select(select) => match select.from.as_mut_slice() {
            [_, second] => match &mut second.relation {
                TableFactor::Derived { subquery, .. } => Some(subquery),
                _ => None,
            },
            _ => None,
        },
        _ => None,
    };
    *placeholder.ok_or_else(|| AclError::internal("a view's guard has an unexpected shape"))? = query;
    *cv.query = *wrapper;
    // The whole wrapper is policy SQL (`trusted` knows the guard's shape); every field joins the
    // decision (destructured, so a new field of `Decision` must be decided here).
    let Decision { physical, ctes, table_functions, functions, regions, names, catalogs, room: _, granted } = body;
    // The body's regions are numbered from 0 in its own text: they keep their numbers only while
    // the view statement itself has none (the guard is a table function, not a region).
    if !decision.regions.is_empty() {
        return Err(AclError::internal("a view's body met regions of its own statement"));
    }
    decision.regions.extend(regions);
    decision.physical.extend(physical);
    decision.ctes.extend(ctes);
    decision.table_functions.extend(table_functions);
    decision.functions.extend(functions);
    decision.names.extend(names);
    decision.granted.extend(granted);
    decision.catalogs.extend(catalogs);
    decision.table_functions.push(ObjectName::from(GUARD_FN.map(Ident::new).to_vec()));
    Ok(())
}

/// A view's body rewritten as a query on its own under `view`: the tree it stores behind the
/// guard, its text and the decision. Creation and the guard both come here, so the same policy
/// gives the same text.
fn rewrite_body(
    view: &View<'_>,
    fns: &FnGate<'_>,
    body: &str,
    persistent: bool,
    faults: crate::faults::Faults,
) -> Result<(Box<Query>, String, Decision)> {
    let mut stmt = super::parse_one(body)?;
    if !matches!(stmt, Statement::Query(_)) {
        return Err(Unsupported::ViewBody.into());
    }
    let mut decision = Decision::default();
    super::rules(view, fns, &mut stmt, &mut decision, faults, persistent, true)?;
    let sql = stmt.to_string();
    match stmt {
        Statement::Query(q) => Ok((q, sql, decision)),
        _ => Err(AclError::internal("a view's body stopped being a query")),
    }
}

/// The guard's judgement when DuckDB binds the view: `Ok` when the definer's rights under
/// `policy` still give the body the text it was created with (and its token, if any, has not
/// expired at `now_unix` with `skew_secs` of tolerance). Every refusal names only the view.
pub fn guard(
    policy: &Policy,
    cache: &super::RewriteCache,
    args: &GuardArgs,
    now_unix: i64,
    skew_secs: u64,
) -> Result<()> {
    let changed = || AclError::StaleView { view: args.name.clone(), why: Stale::RightsChanged };
    let (principal, expires) = definer_from_arg(&args.definer)?;
    if let Some(exp) = expires {
        if exp.saturating_add(i64::try_from(skew_secs).unwrap_or(i64::MAX)) < now_unix {
            return Err(AclError::StaleView { view: args.name.clone(), why: Stale::TokenExpired });
        }
    }
    let who = super::who(&principal);
    // The key cannot be a statement's text (a statement never starts with NUL).
    let key = format!("\u{0}view {} {}", args.persistent, args.body);
    let rewritten = cache.get_or(policy.version, &who, &key, || {
        let view = View::new(policy, &principal)?.with_slice_cache(&cache.slices, &who).with_expiry(expires);
        let fns = FnGate::new(policy, &principal);
        let (_, sql, _) = rewrite_body(&view, &fns, &args.body, args.persistent, Default::default())?;
        Ok(super::Cached { sql, names: Vec::new(), allowed: Default::default() })
    });
    match rewritten {
        Ok(r) if digest(&r.sql) == args.digest => Ok(()),
        // A view stored before listings were refused in views says why it is refused now.
        Err(e @ AclError::Unsupported(Unsupported::ListingInView)) => Err(e),
        _ => Err(changed()),
    }
}

/// How the view names its definer: a role principal by its roles (so their current default
/// claims apply), a token principal by the roles and claims its token gave and the token's `exp`.
/// The label goes along because a metadata listing in the body carries it.
pub(super) fn definer_arg(p: &Principal, expires: Option<i64>) -> String {
    serde_json::to_string(&Definer { principal: p.clone(), exp: expires }).unwrap_or_default()
}

/// A view's definer: the principal and, for a token's, its `exp`.
#[derive(serde::Serialize, serde::Deserialize)]
struct Definer {
    #[serde(flatten)]
    principal: Principal,
    exp: Option<i64>,
}

/// The definer `definer_arg` encoded.
pub fn definer_from_arg(arg: &str) -> Result<(Principal, Option<i64>)> {
    let d: Definer = serde_json::from_str(arg).map_err(|_| AclError::internal("a malformed view guard argument"))?;
    Ok((d.principal, d.exp))
}

/// SHA-256 of `sql`, hex.
fn digest(sql: &str) -> String {
    use sha2::{Digest, Sha256};
    use std::fmt::Write;
    let mut out = String::with_capacity(64);
    for b in Sha256::digest(sql.as_bytes()) {
        let _ = write!(out, "{b:02x}");
    }
    out
}

fn hex(s: &str) -> String {
    use std::fmt::Write;
    let mut out = String::with_capacity(2 * s.len());
    for b in s.bytes() {
        let _ = write!(out, "{b:02x}");
    }
    out
}

fn unhex(s: &str) -> Option<String> {
    if s.len() % 2 != 0 {
        return None;
    }
    let bytes = (0..s.len()).step_by(2).map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok()).collect::<Option<Vec<u8>>>()?;
    String::from_utf8(bytes).ok()
}

impl GuardArgs {
    /// The guard's parameters as the view passes them (`name`, `definer` and `body` hex-encoded).
    pub fn decode(name: &str, definer: &str, body: &str, persistent: bool, digest: &str) -> Result<GuardArgs> {
        let bad = || AclError::internal("a malformed view guard argument");
        Ok(GuardArgs {
            name: unhex(name).ok_or_else(bad)?,
            definer: unhex(definer).ok_or_else(bad)?,
            body: unhex(body).ok_or_else(bad)?,
            persistent,
            digest: digest.to_string(),
        })
    }
}
