//! Claims a policy reads that nothing can set (spec 003, "Claims"): `acl_claim('k')` in a slice
//! (an object's or a grant's RLS or a mask) while no issuer's `CLAIM MAP` yields `k` and no
//! role's `CLAIMS` defaults it is NULL for every principal: a token reads nothing, silently. A
//! management batch that brings one answers with a warning row; `acl_check_catalog` lists them.
use crate::policy::{ObjKey, Policy, Slice};
use crate::sqltext::Walk as _;
use sqlparser::ast::{Expr, Visitor};
use std::collections::BTreeSet;
use std::ops::ControlFlow;

/// One claim nothing sets: where it is read (a virtual object, or a role's grant), and the key.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Unset {
    /// The catalog the slice belongs to.
    pub catalog: String,
    /// `c.[s.]n`, or `the grant of role r on c[.[s.]n]`.
    pub place: String,
    pub key: String,
}

impl Unset {
    /// The warning row a batch answers with.
    pub fn warning(&self) -> String {
        format!(
            "warning: {} reads acl_claim('{}'), which no issuer's CLAIM MAP yields and no role's CLAIMS defaults: \
             it is NULL for every principal (add CLAIM MAP ('<token claim>' => {}) to the issuer, or CLAIMS ({} = '…') to a role)",
            self.place, self.key, self.key, self.key
        )
    }
}

/// Every `acl_claim` key of `p`'s slices that nothing sets.
pub fn unset(p: &Policy) -> BTreeSet<Unset> {
    let mut set: BTreeSet<&str> = BTreeSet::new();
    for issuer in p.issuers.values() {
        set.extend(issuer.claim_map.iter().map(|(_, name)| name.as_str()));
    }
    for role in p.roles.values() {
        set.extend(role.claims.keys().map(String::as_str));
    }
    let set: BTreeSet<String> = set.into_iter().map(crate::policy::norm).collect();
    let mut out = BTreeSet::new();
    let mut note = |catalog: &str, place: String, slice: &Slice| {
        for key in read(slice) {
            if !set.contains(&crate::policy::norm(&key)) {
                out.insert(Unset { catalog: catalog.to_string(), place: place.clone(), key });
            }
        }
    };
    for (c, catalog) in &p.catalogs {
        for ((s, n), rel) in &catalog.objects {
            let key = ObjKey { catalog: c.clone(), schema: s.clone(), name: n.clone() };
            note(c, key.to_string(), &rel.slice);
        }
    }
    for (r, role) in p.roles.iter() {
        for (c, g) in &role.catalog_grants {
            note(c, format!("the grant of role {r} on {c}"), &g.slice);
        }
        for (key, g) in &role.object_grants {
            note(&key.catalog, format!("the grant of role {r} on {key}"), &g.slice);
        }
    }
    out
}

/// The claim keys a slice reads (a text that does not parse reads none: it is refused elsewhere).
fn read(slice: &Slice) -> Vec<String> {
    let mut keys = Vec::new();
    let exprs = slice.rls.iter().chain(slice.columns.iter().flatten().filter_map(|c| c.expr.as_ref()));
    for text in exprs {
        if !text.to_ascii_lowercase().contains("acl_claim") {
            continue;
        }
        let dialect = sqlparser::dialect::DuckDbDialect {};
        let Ok(e) = sqlparser::parser::Parser::new(&dialect).try_with_sql(text).and_then(|mut p| p.parse_expr()) else { continue };
        let _ = e.walk(&mut Keys(&mut keys));
    }
    keys
}

struct Keys<'a>(&'a mut Vec<String>);

impl Visitor for Keys<'_> {
    type Break = ();
    fn pre_visit_expr(&mut self, e: &Expr) -> ControlFlow<()> {
        if let Expr::Function(f) = e {
            if crate::sqltext::is_acl_claim(f) {
                if let Some(k) = crate::sqltext::claim_name(f) {
                    self.0.push(k);
                }
            }
        }
        ControlFlow::Continue(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claim_nothing_sets_is_found_and_one_a_role_or_issuer_sets_is_not() {
        let mut p = Policy::default();
        let run = |p: &mut Policy, sql: &str| {
            crate::admin::apply(p, &crate::admin::parse(sql).expect(sql)).unwrap_or_else(|e| panic!("{sql}: {e}"));
        };
        for sql in [
            "CREATE VIRTUAL CATALOG c",
            "CREATE VIRTUAL TABLE c.t AS db.main.t RLS (tenant = acl_claim('tenant'))",
            "CREATE ROLE r",
            "GRANT TABLE c.t TO ROLE r RLS (region = acl_claim('Region')) COLUMNS (id, ssn = CASE WHEN acl_claim('hr') = 'y' THEN ssn END)",
        ] {
            run(&mut p, sql);
        }
        let keys = |p: &Policy| unset(p).into_iter().map(|u| (u.place, u.key)).collect::<Vec<_>>();
        let s = |a: &str, b: &str| (a.to_string(), b.to_string());
        assert_eq!(
            keys(&p),
            vec![s("c.t", "tenant"), s("the grant of role r on c.t", "hr"), s("the grant of role r on c.t", "region")]
        );
        run(&mut p, "CREATE ROLE d CLAIMS (region = 'eu', hr = 'n')");
        assert_eq!(keys(&p), vec![s("c.t", "tenant")]);
        run(&mut p, "CREATE ISSUER 'https://idp' KEYS 'hmac:a-shared-secret-of-at-least-32-bytes!' CLAIM MAP ('org.tenant' => tenant)");
        assert!(keys(&p).is_empty());
    }
}
