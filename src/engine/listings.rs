//! The operator listings (`acl_status()`, `acl_roles()`, …; spec 006): what the node holds, for
//! the gateway's operators. Each record kind is listed with the store's own row mapping
//! (`store::rows`), so a listing shows exactly the rows a store holds for it, with the same column
//! names. Native only: `acl_*` is in the never set, so no principal can call one.
use super::State;
use crate::policy::functions::{Class, FnKey, FnKind, SYSTEM_DB};
use crate::policy::Policy;
use crate::store::layout::{self, Table, Ty};
use crate::store::Row;
use super::column_listings as cols;

pub struct Listing {
    pub name: &'static str,
    pub columns: &'static [(&'static str, Ty)],
    pub rows: fn(&State) -> Vec<Row>,
}

/// The rows the store would hold in `table` for the current policy.
fn table_rows(state: &State, table: &Table) -> Vec<Row> {
    crate::store::rows(&state.policy()).of(table).iter().cloned().collect()
}

/// A listing of one store table, columns and rows as the store has them.
macro_rules! table_listing {
    ($name:literal, $table:expr) => {
        Listing { name: $name, columns: $table.columns, rows: |s| table_rows(s, &$table) }
    };
}

pub const LISTINGS: &[Listing] = &[
    Listing { name: "acl_status", columns: STATUS_COLUMNS, rows: status_rows },
    table_listing!("acl_catalogs", layout::CATALOGS),
    table_listing!("acl_catalog_sources", layout::CATALOG_SOURCES),
    table_listing!("acl_relations", layout::OBJECTS),
    table_listing!("acl_schemas", layout::SCHEMAS),
    table_listing!("acl_references", layout::REFERENCES),
    table_listing!("acl_roles", layout::ROLES),
    table_listing!("acl_role_claims", layout::ROLE_CLAIMS),
    table_listing!("acl_grants", layout::CATALOG_GRANTS),
    table_listing!("acl_object_grants", layout::OBJECT_GRANTS),
    table_listing!("acl_schema_grants", layout::SCHEMA_GRANTS),
    Listing { name: "acl_effective_grants", columns: EFFECTIVE_COLUMNS, rows: |s| effective_rows(&s.policy()) },
    table_listing!("acl_admins", layout::ADMINS),
    table_listing!("acl_resource_groups", layout::RESOURCE_GROUPS),
    table_listing!("acl_resource_group_grants", layout::RESOURCE_GROUP_GRANTS),
    Listing { name: "acl_issuers", columns: ISSUER_COLUMNS, rows: issuer_rows },
    table_listing!("acl_role_mappings", layout::CLAIM_MAPS),
    table_listing!("acl_function_grants", layout::FUNCTION_GRANTS),
    table_listing!("acl_functions", layout::VIRTUAL_FUNCTIONS),
    Listing { name: "acl_function_categories", columns: CATEGORY_COLUMNS, rows: |s| function_categories(&s.policy()) },
    Listing { name: "acl_sessions", columns: SESSION_COLUMNS, rows: session_rows },
    // the reference system's column listings (issue 34)
    Listing { name: "acl_relation_columns", columns: cols::RELATION_COLUMNS, rows: |s| cols::relation_rows(&s.policy()) },
    Listing { name: "acl_object_columns", columns: cols::RELATION_COLUMNS, rows: |s| cols::relation_rows(&s.policy()) },
    Listing { name: "acl_grant_columns", columns: cols::GRANT_COLUMNS, rows: |s| cols::grant_rows(&s.policy()) },
    Listing { name: "acl_reference_columns", columns: cols::REFERENCE_COLUMNS, rows: |s| cols::reference_rows(&s.policy()) },
    Listing {
        name: "acl_function_gate",
        columns: cols::GATE_COLUMNS,
        rows: |s| cols::gate_rows(table_rows(s, &layout::FUNCTION_GRANTS)),
    },
];

/// `acl_sessions()` (spec 017): one row per live session. `id` is the operator's name for it
/// (`acl_session_kill(id)`); the handle is never listed. `groups`: the resource groups it was
/// opened under (its roles' at open).
const SESSION_COLUMNS: &[(&str, Ty)] = &[
    ("id", Ty::Int),
    ("subject", Ty::Text),
    ("roles", Ty::Text),
    ("door", Ty::Text),
    ("opened", Ty::Time),
    ("last_used", Ty::Time),
    ("idle_seconds", Ty::Int),
    ("expires_at", Ty::Time),
    ("groups", Ty::Text),
    ("issuer", Ty::Text),
];

fn session_rows(state: &State) -> Vec<Row> {
    let micros = |ms: i64| Some(ms.saturating_mul(1000).to_string());
    let (policy, settings) = (state.policy(), crate::rewrite::Settings::default());
    // A session whose issuer no longer vouches for its token ends here, as at its next statement.
    let vouched = |l: &crate::engine::sessions::Listed| {
        crate::engine::session_vouch::vouched(&state.sessions, &state.tokens, &policy, &l.session, &settings).is_ok()
    };
    state
        .sessions
        .list(crate::rewrite::DEFAULT_CLOCK_SKEW)
        .into_iter()
        .filter(vouched)
        .map(|l| {
            let s = &l.session;
            vec![
                Some(s.id.to_string()),
                s.subject.clone(),
                Some(s.principal.roles.join(",")),
                Some(s.door.clone()),
                micros(s.opened_ms),
                micros(s.last_used_ms()),
                Some(l.idle_seconds.to_string()),
                micros(s.exp.saturating_mul(1000)),
                Some(s.groups.join(",")),
                Some(s.issuer.clone()),
            ]
        })
        .collect()
}

const STATUS_COLUMNS: &[(&str, Ty)] = &[
    ("mode", Ty::Text),
    ("store_kind", Ty::Text),
    ("store_location", Ty::Text),
    ("policy_version", Ty::Int),
    ("store_policy_version", Ty::Int),
    ("store_changed_since_load", Ty::Bool),
    ("last_refresh", Ty::Time),
    ("store_healthy", Ty::Bool),
    ("store_error", Ty::Text),
    ("catalogs", Ty::Int),
    ("objects", Ty::Int),
    ("schemas", Ty::Int),
    ("roles", Ty::Int),
    ("catalog_grants", Ty::Int),
    ("object_grants", Ty::Int),
    ("schema_grants", Ty::Int),
    ("issuers", Ty::Int),
    ("function_categories", Ty::Int),
    ("virtual_functions", Ty::Int),
    ("process_instances", Ty::Int),
    ("shape_parse_copies", Ty::Int),
    ("shape_parse_fallbacks", Ty::Int),
];

fn status_rows(state: &State) -> Vec<Row> {
    let cells = super::source::status(state);
    debug_assert!(cells.iter().map(|(n, _)| *n).eq(STATUS_COLUMNS.iter().map(|(n, _)| *n)));
    vec![cells.into_iter().map(|(_, v)| v).collect()]
}

/// The issuers' rows without their keys (a PEM or JWKS is public, an `hmac:` secret is not; no
/// key material is listed at all): where the keys came from and what kind they are.
const ISSUER_COLUMNS: &[(&str, Ty)] = &[
    ("iss", Ty::Text),
    ("key_source", Ty::Text),
    ("key_kind", Ty::Text),
    ("keys_file", Ty::Text),
    ("audiences", Ty::Text),
    ("algs", Ty::Text),
    ("role_claim", Ty::Text),
    ("claim_map", Ty::Text),
    ("unmapped", Ty::Text),
];

fn issuer_rows(state: &State) -> Vec<Row> {
    table_rows(state, &layout::ISSUERS)
        .into_iter()
        .map(|mut r| {
            let keys = r[1].take().unwrap_or_default();
            // A file issuer's keys are the file's as last read (the policy holds none): NULL
            // until a read gave keys.
            let kind = match &r[2] {
                None => Some(crate::auth::keys::kind_of(&keys)),
                Some(_) => r[0].as_deref().and_then(|iss| state.tokens.files.key_kind(iss)),
            };
            let source = if r[2].is_some() { "file" } else { "inline" };
            let mut out = vec![r[0].take(), Some(source.into()), kind.map(str::to_string)];
            out.extend(r.drain(2..));
            out
        })
        .collect()
}

const CATEGORY_COLUMNS: &[(&str, Ty)] = &[
    ("database_name", Ty::Text),
    ("schema_name", Ty::Text),
    ("function_name", Ty::Text),
    ("function_kind", Ty::Text),
    ("category", Ty::Text),
];

/// `acl_effective_grants()`: per role and object, the capabilities a principal holding only that
/// role has there (the most specific grant's, spec 001 "Capabilities") and which grant decided
/// them; a virtual schema's row (name NULL) holds for every name in it. Not a store table: it is
/// what the grants of `acl_grants()`, `acl_schema_grants()` and `acl_object_grants()` amount to.
const EFFECTIVE_COLUMNS: &[(&str, Ty)] = &[
    ("role", Ty::Text),
    ("catalog", Ty::Text),
    ("schema", Ty::Text),
    ("name", Ty::Text),
    ("caps", Ty::Text),
    ("decided_by", Ty::Text),
];

fn effective_rows(policy: &Policy) -> Vec<Row> {
    use crate::authz::GrantKind;
    crate::authz::grants::effective(policy)
        .into_iter()
        .map(|e| {
            let by = match e.by {
                GrantKind::Object => "object",
                GrantKind::Schema => "schema",
                _ => "catalog",
            };
            let caps = serde_json::to_string(&e.caps.names()).ok();
            let name = e.object.then_some(e.key.name);
            vec![Some(e.role.to_string()), Some(e.key.catalog), Some(e.key.schema), name, caps, Some(by.to_string())]
        })
        .collect()
}

/// `acl_function_categories()`: every host key with each category that holds it now (`never`
/// for the never set, NULL when no category does), pragmas as `never`, and functions operators
/// added by name.
pub fn function_categories(policy: &Policy) -> Vec<Row> {
    let f = &policy.functions;
    let mut rows: Vec<Row> = Vec::new();
    let row = |k: &FnKey, kind: &str, cat: Option<&str>| -> Row {
        vec![Some(k.db.clone()), Some(k.schema.clone()), Some(k.name.clone()), Some(kind.into()), cat.map(String::from)]
    };
    for h in f.host.all() {
        if h.class == Class::Never {
            rows.push(row(&h.key, h.key.kind.sql(), Some("never")));
            continue;
        }
        let cats = f.categories_of(&h.key);
        if cats.is_empty() {
            rows.push(row(&h.key, h.key.kind.sql(), None));
        }
        for c in cats {
            rows.push(row(&h.key, h.key.kind.sql(), Some(c)));
        }
    }
    for (db, schema, name) in &f.host.pragmas {
        let k = FnKey { db: db.clone(), schema: schema.clone(), name: name.clone(), kind: FnKind::Scalar };
        rows.push(row(&k, "pragma", Some("never")));
    }
    // Functions named db.schema.name that the host list does not hold (a user macro).
    for (cname, c) in &f.categories {
        for n in &c.added {
            let Some((db, schema)) = &n.qualifier else { continue };
            if db == SYSTEM_DB {
                continue;
            }
            for kind in [FnKind::Scalar, FnKind::Table] {
                let k = FnKey { db: db.clone(), schema: schema.clone(), name: n.name.clone(), kind };
                if f.host.get(&k).is_none() {
                    rows.push(row(&k, kind.sql(), Some(cname)));
                }
            }
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listings_are_the_stores_rows_and_hold_no_key_material() {
        let s = State::new();
        super::super::admin::execute_all(&s,
            &[
                "CREATE ROLE r",
                "CREATE ISSUER 'https://idp' KEYS 'hmac:a-shared-secret-of-at-least-32-bytes!' ROLE CLAIM 'groups'",
                "GRANT ADMIN manage TO ROLE r",
            ], &super::super::admin::anonymous(false), None)
        .unwrap();
        let find = |n: &str| LISTINGS.iter().find(|l| l.name == n).unwrap();
        assert_eq!((find("acl_roles").rows)(&s), vec![vec![Some("r".to_string())]]);
        let issuers = (find("acl_issuers").rows)(&s);
        assert_eq!(issuers.len(), 1);
        assert_eq!(issuers[0].len(), ISSUER_COLUMNS.len());
        assert!(issuers[0].iter().flatten().all(|c| !c.contains("shared-secret")), "{issuers:?}");
        assert_eq!(issuers[0][1].as_deref(), Some("inline"));
        assert_eq!(issuers[0][2].as_deref(), Some("hmac"));
        for l in LISTINGS {
            assert!(l.name.starts_with("acl_") && crate::policy::categories::never_callable(l.name), "{}", l.name);
            for row in (l.rows)(&s) {
                assert_eq!(row.len(), l.columns.len(), "{}", l.name);
            }
        }
        assert_eq!((find("acl_admins").rows)(&s), vec![vec![Some("r".to_string()), Some("manage".to_string())]]);
        let status = (find("acl_status").rows)(&s);
        assert_eq!(status[0][0].as_deref(), Some("memory"));
    }
}
