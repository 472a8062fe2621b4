//! Policy expressions are validated when written: before `acl_exec` applies a management
//! statement that carries COLUMNS/RLS (or a virtual view's query), the batch runs
//! `SELECT * FROM (<the object as a principal would read it>) LIMIT 0` for every object the
//! statement affects. If a predicate or mask does not bind against the object, DuckDB refuses
//! that statement and `acl_exec` never runs: the policy is unchanged. Claims are NULL here.
use super::slices;
use crate::admin::Command;
use crate::authz::{Layer, Principal, View};
use crate::error::Result;
use crate::policy::{Policy, Relation, RelationKind, Slice};
use std::borrow::Cow;

/// The checking statements to run before `cmd` (none for most commands).
pub fn checks(policy: &Policy, cmd: &Command) -> Result<Vec<String>> {
    let nobody = Principal { roles: Vec::new(), label: "the validation".into(), claims: Default::default() };
    let view = View::new(policy, &nobody)?;
    let check = |kind: &RelationKind, layers: Vec<Cow<'_, Slice>>| -> Result<String> {
        let layers: Vec<Layer<'_>> = layers.into_iter().map(Layer::Slice).collect();
        let q = slices::subquery(&view, kind, &layers)?;
        Ok(format!("SELECT * FROM ({q}) AS \"__acl_check\" LIMIT 0"))
    };
    let mut out = Vec::new();
    match cmd {
        Command::CreateTable { target, slice, .. } if !slice.is_empty() => {
            out.push(check(&RelationKind::Table(target.clone()), vec![Cow::Borrowed(slice)])?);
        }
        Command::CreateView { query, .. } => out.push(check(&RelationKind::View(query.clone()), Vec::new())?),
        Command::GrantCatalog { catalog, slice, .. } if !slice.is_empty() => {
            for rel in policy.catalogs.get(catalog).into_iter().flat_map(|c| c.objects.values()) {
                out.push(check(&rel.kind, own(rel).into_iter().chain([Cow::Borrowed(slice)]).collect())?);
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
                out.push(check(&rel.kind, layers)?);
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
