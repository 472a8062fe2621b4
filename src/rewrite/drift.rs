//! Drift (issue 31, finding 4; spec 020, "Drift"): the owner of a physical table drops, renames or
//! retypes what a virtual object maps (`COLUMNS (ssn = ssn_raw)` after `DROP COLUMN ssn_raw`), and
//! DuckDB's error about every statement on the object names the physical column and suggests the
//! table's others. Nothing is checked while statements succeed: only when DuckDB refuses a
//! principal's statement with a binder or catalog error does the shim hand back the statement's
//! blob, and each policy object the statement used (`errors::lines::ObjectLine`) has its policy
//! SQL — the object as that principal reads it, every layer, claims NULL — bound again in the
//! caller's transaction. The first that no longer binds replaces DuckDB's error with
//! `acl: virtual table c.docs no longer matches its source; ask an administrator`.
//!
//! What the answer depends on: the objects the statement named (which the principal may name) and
//! whether their policy SQL binds — never on text of the principal's, so it is no oracle for
//! physical names.
use super::errors::lines;
use crate::authz::{Principal, View};
use crate::error::{AclError, Drifted};
use crate::policy::{Policy, RelationKind};

/// Adds an `O` line for each listed object the statement uses (from the grant record, which the
/// rules keep anyway: nothing is added to the statement path's hot functions). Names in a virtual
/// schema's alias and virtual functions have no policy SQL of their own and get none.
pub(super) fn record(view: &View<'_>, granted: &[crate::authz::Granted], names: &mut Vec<(super::errors::Slot, String, String)>) {
    for g in granted {
        if let crate::authz::Used::Object(key) = &g.used {
            if view.policy.relation(key).is_some() && view.policy.virtual_schema(&key.catalog, &key.schema).is_none() {
                names.push(lines::object_entry(key, g.caps, &view.principal.roles));
            }
        }
    }
}

/// The drift refusal for a statement DuckDB refused, if a policy object it used (`blob`) no longer
/// binds (`binds(sql)`: DuckDB binds the SELECT in the caller's context).
pub fn refusal(policy: &Policy, blob: &str, binds: &mut dyn FnMut(&str) -> bool) -> Option<AclError> {
    for line in lines::objects(blob) {
        let principal = Principal { roles: line.roles.clone(), label: String::new(), claims: Default::default() };
        let Some(sqls) = exposed(policy, &principal, &line) else { continue };
        if sqls.iter().any(|sql| !binds(sql)) {
            let kind = match policy.relation(&line.key).map(|r| &r.kind) {
                Some(RelationKind::View(_)) => "view",
                _ => "table",
            };
            return Some(Drifted { kind, object: line.key.to_string() }.into());
        }
    }
    None
}

/// The object as the principal reads it for each capability it used, under the current policy;
/// `None` when it no longer resolves (the policy changed since: the statement's own error stands).
fn exposed(policy: &Policy, principal: &Principal, line: &lines::ObjectLine) -> Option<Vec<String>> {
    let view = View::new(policy, principal).ok()?;
    let parts = [line.key.catalog.clone(), line.key.schema.clone(), line.key.name.clone()];
    let resolved = view.lookup(&parts).ok()??;
    if !matches!(resolved.relation, std::borrow::Cow::Borrowed(_)) {
        return None; // a name in a virtual schema's alias: no policy SQL
    }
    // Each capability the statement used apart: the grant record merges them per object, and a
    // role that holds only some of them still gives the layers of those.
    let mut out = Vec::new();
    for cap in line.caps.names() {
        let Ok(cap) = crate::policy::Caps::parse_one(cap) else { continue };
        if let Ok(layers) = view.layers(&resolved, cap) {
            out.extend(crate::authz::slices::exposed(&view, &resolved.relation.kind, &layers).ok());
        }
    }
    out.dedup();
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rewrite::errors::{lines::object_entry, names_blob};

    fn policy(script: &str) -> Policy {
        let mut p = Policy::default();
        for s in script.split(';').map(str::trim).filter(|s| !s.is_empty()) {
            crate::admin::apply(&mut p, &crate::admin::parse(s).unwrap()).unwrap();
        }
        p
    }

    fn blob(p: &Policy, keys: &[(&str, &str, &str)], roles: &[&str]) -> String {
        let roles: Vec<String> = roles.iter().map(|r| r.to_string()).collect();
        let names: Vec<_> = keys
            .iter()
            .map(|(c, s, n)| {
                let key = crate::policy::ObjKey { catalog: c.to_string(), schema: s.to_string(), name: n.to_string() };
                assert!(p.relation(&key).is_some());
                object_entry(&key, crate::policy::Caps::SELECT, &roles)
            })
            .collect();
        names_blob(&names)
    }

    #[test]
    fn an_object_whose_policy_sql_no_longer_binds_is_named_by_its_virtual_name() {
        let p = policy(
            "CREATE VIRTUAL CATALOG c; CREATE VIRTUAL TABLE c.docs AS phys.main.docs_raw COLUMNS (id, ssn = ssn_raw);
             CREATE VIRTUAL VIEW c.v AS SELECT 1 AS x FROM phys.main.other;
             CREATE ROLE r; GRANT CATALOG c TO ROLE r",
        );
        let b = blob(&p, &[("c", "main", "docs")], &["r"]);
        // the SQL bound is the object as the role reads it: the physical column is in it
        let mut seen = Vec::new();
        let e = refusal(&p, &b, &mut |sql| {
            seen.push(sql.to_string());
            !sql.contains("ssn_raw")
        });
        assert_eq!(e.unwrap().to_string(), "acl: virtual table c.docs no longer matches its source; ask an administrator");
        assert!(seen.len() == 1 && seen[0].contains("\"phys\".\"main\".\"docs_raw\""), "{seen:?}");
        // still binds: DuckDB's (translated) error stands
        assert!(refusal(&p, &b, &mut |_| true).is_none());
        let v = blob(&p, &[("c", "main", "v")], &["r"]);
        assert_eq!(refusal(&p, &v, &mut |_| false).unwrap().to_string(), "acl: virtual view c.v no longer matches its source; ask an administrator");
    }

    /// The rewrite records one `O` line per listed object and capability, from the grant record;
    /// a name in a virtual schema's alias gets none.
    #[test]
    fn a_statement_records_the_policy_objects_it_uses() {
        let p = policy(
            "CREATE VIRTUAL CATALOG c; CREATE VIRTUAL TABLE c.docs AS phys.main.docs_raw COLUMNS (id, ssn = ssn_raw);
             CREATE VIRTUAL TABLE c.plain AS phys.main.plain_raw; CREATE VIRTUAL SCHEMA c.live AS phys.lake;
             CREATE ROLE r; GRANT CATALOG c TO ROLE r WITH (select, update) MAIN; GRANT SCHEMA c.live TO ROLE r WITH (select)",
        );
        let principal = Principal::role("r");
        let view = View::new(&p, &principal).unwrap();
        let fns = crate::rewrite::FnGate::new(&p, &principal);
        let objects = |sql: &str| {
            let mut names = Vec::new();
            let host = crate::rewrite::NoHost;
            super::super::statement_with_names(&view, &fns, sql, None, &mut names, Default::default(), usize::MAX, &host).unwrap();
            lines::objects(&names_blob(&names)).into_iter().map(|l| (l.key.to_string(), l.caps.to_string(), l.roles)).collect::<Vec<_>>()
        };
        let r = vec!["r".to_string()];
        assert_eq!(
            objects("SELECT d.id FROM docs d JOIN plain p ON p.id = d.id JOIN live.events e ON e.id = d.id"),
            vec![("c.docs".to_string(), "select".to_string(), r.clone()), ("c.plain".to_string(), "select".to_string(), r.clone())]
        );
        assert_eq!(objects("UPDATE plain SET id = 2 WHERE id IN (SELECT id FROM plain)"), vec![("c.plain".to_string(), "select, update".to_string(), r)]);
    }

    #[test]
    fn objects_the_policy_no_longer_gives_the_principal_are_not_checked() {
        let p = policy("CREATE VIRTUAL CATALOG c; CREATE VIRTUAL TABLE c.docs AS phys.main.docs_raw; CREATE ROLE r; GRANT CATALOG c TO ROLE r");
        let b = blob(&p, &[("c", "main", "docs")], &["r"]);
        let revoked = policy("CREATE VIRTUAL CATALOG c; CREATE VIRTUAL TABLE c.docs AS phys.main.docs_raw; CREATE ROLE r");
        assert!(refusal(&revoked, &b, &mut |_| false).is_none());
        // a blob without object lines (a statement on no policy object) checks nothing
        assert!(refusal(&p, &names_blob(&Vec::new()), &mut |_| false).is_none());
    }
}
