//! Policy expressions are validated when written: before `acl_exec` applies a management
//! statement that carries COLUMNS/RLS (or a virtual view's query), the batch runs
//! `SELECT * FROM (<the object as a principal would read it>) LIMIT 0` for every object the
//! statement affects. If a predicate or mask does not bind against the object, DuckDB refuses
//! that statement and `acl_exec` never runs: the policy is unchanged. Claims are NULL here.
//!
//! What else can only be known by binding is checked the same way, by statements that raise
//! `error('acl: …')` (nothing is read back into Rust): a view's declared `(col TYPE, …)` against
//! the types its query gives, and declared column names (PRIMARY KEY, a reference's ON, a column
//! comment) against the columns the object shows. An `ALTER` is checked as the statement it
//! amounts to (`alter::resolve`), against the policy as the statements before it in its batch
//! leave it.
use super::{Command, CommentOn};
use crate::authz::{Layer, Principal, View};
use crate::error::{Invalid, Result};
use crate::policy::{ObjKey, Policy, Relation, RelationKind, Slice};
use crate::sqltext::{ident, literal};
use std::borrow::Cow;

/// The checking statements to run before `cmd` (none for most commands).
pub fn checks(policy: &Policy, cmd: &Command) -> Result<Vec<String>> {
    // `policy` is as the batch's earlier statements leave it (`engine::admin::batch`); an ALTER
    // of something it does not hold is refused when it is applied.
    let Ok(cmd) = super::resolve(policy, cmd) else { return Ok(Vec::new()) };
    let nobody = Principal { roles: Vec::new(), label: "the validation".into(), claims: Default::default() };
    let view = View::new(policy, &nobody)?;
    let shape = |kind: &RelationKind, layers: Vec<Cow<'_, Slice>>| -> Result<String> {
        let layers: Vec<Layer<'_>> = layers.into_iter().map(Layer::Slice).collect();
        crate::authz::slices::subquery(&view, kind, &layers).map(|q| q.to_string())
    };
    // Bound by `acl_validate` (src/ffi/validate.rs), whose error names `what`, not the SQL.
    let binds = |what: String, q: &str| {
        let sql = format!("SELECT * FROM ({q}) AS \"__acl_check\" LIMIT 0");
        format!("SELECT * FROM \"system\".main.acl_validate({}, {})", literal(&what), literal(&sql))
    };
    let mut out = Vec::new();
    match &*cmd {
        Command::CreateTable { key, target, slice, declared, .. } => {
            let kind = RelationKind::Table(target.clone());
            let q = shape(&kind, own_slice(slice))?;
            if !slice.is_empty() {
                out.push(binds(format!("RLS or COLUMNS of {key}"), &q));
            }
            if slice.columns.is_none() {
                out.extend(declared.primary_key.iter().map(|c| column_exists(&q, c, key)));
            }
        }
        Command::CreateView { key, query, declared, .. } => {
            let q = shape(&RelationKind::View(query.clone()), Vec::new())?;
            out.push(binds(format!("the query of virtual view {key}"), &q));
            match &declared.types {
                Some(types) => out.push(types_match(&q, key, types)),
                None => out.extend(declared.primary_key.iter().map(|c| column_exists(&q, c, key))),
            }
        }
        Command::GrantCatalog { catalog, slice, .. } if !slice.is_empty() => {
            for ((s, n), rel) in policy.catalogs.get(catalog).into_iter().flat_map(|c| c.objects.iter()) {
                let on = ObjKey { catalog: catalog.clone(), schema: s.clone(), name: n.clone() };
                let what = format!("RLS or COLUMNS of the grant on catalog {catalog}, on {on}");
                out.push(binds(what, &shape(&rel.kind, own(rel).into_iter().chain([Cow::Borrowed(slice)]).collect())?));
            }
        }
        Command::GrantObject { key, role, slice, .. } if !slice.is_empty() => {
            if let Some(rel) = policy.relation(key) {
                let catalog_grant = policy
                    .roles
                    .get(role)
                    .and_then(|r| r.catalog_grants.get(&key.catalog))
                    .map(|g| &g.slice)
                    .filter(|s| !s.is_empty())
                    .map(Cow::Borrowed);
                let layers = own(rel).into_iter().chain(catalog_grant).chain([Cow::Borrowed(slice)]).collect();
                out.push(binds(format!("RLS or COLUMNS of the grant of {key} to role {role}"), &shape(&rel.kind, layers)?));
            }
        }
        Command::CreateReference { reference: r, .. } => {
            for (end, column) in r.on.iter().flat_map(|(a, b)| [(&r.from, a), (&r.to, b)]) {
                if let Some(rel) = policy.relation(end).filter(|rel| !lists(rel)) {
                    out.push(column_exists(&shape(&rel.kind, own(rel).into_iter().collect())?, column, end));
                }
            }
        }
        Command::Comment { on: CommentOn::Column { key, column, .. }, .. } => {
            if let Some(rel) = policy.relation(key).filter(|rel| !lists(rel)) {
                out.push(column_exists(&shape(&rel.kind, own(rel).into_iter().collect())?, column, key));
            }
        }
        _ => {}
    }
    Ok(out)
}

/// The object's own slice as a layer, if it has one.
fn own(r: &Relation) -> Option<Cow<'_, Slice>> {
    Some(&r.slice).filter(|s| !s.is_empty()).map(Cow::Borrowed)
}

fn own_slice(s: &Slice) -> Vec<Cow<'_, Slice>> {
    Some(s).filter(|s| !s.is_empty()).map(Cow::Borrowed).into_iter().collect()
}

/// Does the object list its columns (COLUMNS, or a view's declared ones)? Then no binding is
/// needed: `apply` refuses a name it does not list.
fn lists(rel: &Relation) -> bool {
    super::alter::lists_column(rel, "").is_some()
}

/// Raises `acl: "<column>" is not a column of <object>` unless the object's shape `q` has it.
fn column_exists(q: &str, column: &str, object: &ObjKey) -> String {
    let message = crate::error::AclError::from(Invalid::NotAColumn { column: column.to_string(), object: object.to_string() });
    format!(
        "SELECT CASE WHEN count(*) = 0 THEN \"system\".\"main\".\"error\"({}) END FROM (DESCRIBE SELECT * FROM ({q}) AS \"__acl_check\") \
         WHERE lower(column_name) = {}",
        literal(&message.to_string()),
        literal(column),
    )
}

/// Raises `acl: the query of virtual view … does not give its declared columns: …` unless the
/// view's query `q` gives exactly the declared names and types, in order. The types are compared
/// as DuckDB prints them: the row of `q` as a struct against a struct of the declared columns
/// (names case-insensitive, as identifiers are). Nothing is scanned (`LIMIT 0`).
fn types_match(q: &str, view: &ObjKey, types: &[(String, String)]) -> String {
    let message = crate::error::AclError::from(Invalid::ViewColumns { view: view.to_string() }).to_string();
    let fields: Vec<String> = types.iter().map(|(n, t)| format!("{} {t}", ident(n))).collect();
    let declared = format!("typeof(NULL::STRUCT({}))", fields.join(", "));
    let got = "typeof(any_value(\"__acl_check\"))";
    format!(
        "SELECT CASE WHEN lower({got}) IS DISTINCT FROM lower({declared}) THEN \"system\".\"main\".\"error\"({} || ': declared ' \
         || {declared} || ', the query gives ' || {got}) END FROM (SELECT * FROM ({q}) AS \"__acl_q\" LIMIT 0) AS \"__acl_check\"",
        literal(&message),
    )
}
