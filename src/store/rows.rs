//! A policy as the store's rows (`rows`), one set per table of `layout::TABLES`. Every struct is
//! taken apart field by field, without `..`: a field added to the policy does not compile here
//! until it has a column (and `load` reads it back; `tests::round_trip` checks both).
use super::layout::{self, Table, TABLES};
use super::Row;
use crate::policy::functions::{Access, FnBody, FnCategory, FnKind, FnName, FnTarget, FunctionPolicy, VirtualFunction};
use crate::policy::{
    Caps, Catalog, CatalogGrant, Column, Declared, Issuer, ObjKey, ObjectGrant, Policy, Reference, Relation, RelationKind, Role,
    Slice, Unmapped, VirtualSchema,
};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// The rows of every table, in `TABLES` order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tables(pub Vec<BTreeSet<Row>>);

impl Tables {
    pub fn empty() -> Tables {
        Tables(vec![BTreeSet::new(); TABLES.len()])
    }

    pub fn of(&self, table: &Table) -> &BTreeSet<Row> {
        &self.0[layout::index(table)]
    }

    fn push(&mut self, table: &Table, row: Row) {
        debug_assert_eq!(row.len(), table.width(), "{}", table.name);
        self.0[layout::index(table)].insert(row);
    }

    pub fn len(&self) -> usize {
        self.0.iter().map(BTreeSet::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// One COLUMNS item as JSON: `{"name": "ssn", "expr": "NULL"}`, `expr` absent for a plain column.
#[derive(Serialize, Deserialize)]
pub(super) struct ColumnJson {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expr: Option<String>,
}

/// What is declared of an object's columns, as JSON (`Declared`, field for field).
#[derive(Serialize, Deserialize)]
pub(super) struct DeclaredJson {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub types: Option<Vec<(String, String)>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_null: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub primary_key: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub column_comments: Vec<(String, String)>,
    /// `TYPES (enums = …)`: `"keep"` or `"varchar"`; absent: the instance's `acl_enum_types`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enums: Option<String>,
}

/// NULL when nothing is declared.
fn declared_json(d: &Declared) -> Option<String> {
    let Declared { types, not_null, primary_key, column_comments, enums } = d;
    if d.is_empty() {
        return None;
    }
    json(&DeclaredJson {
        types: types.clone(),
        not_null: not_null.iter().cloned().collect(),
        primary_key: primary_key.clone(),
        column_comments: column_comments.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        enums: enums.map(|e| e.name().to_string()),
    })
}

pub(super) fn unmapped_text(u: Unmapped) -> &'static str {
    match u {
        Unmapped::Count => "count",
        Unmapped::Ignore => "ignore",
    }
}

fn t(s: &str) -> Option<String> {
    Some(s.to_string())
}

fn json<T: Serialize + ?Sized>(v: &T) -> Option<String> {
    Some(serde_json::to_string(v).expect("plain data serialises"))
}

pub(super) fn caps_json(c: Caps) -> Option<String> {
    json(&c.names())
}

pub(super) fn bool_text(b: bool) -> Option<String> {
    t(if b { "true" } else { "false" })
}

fn columns_json(cols: &Option<Vec<Column>>) -> Option<String> {
    cols.as_ref().map(|cols| {
        let items: Vec<ColumnJson> = cols
            .iter()
            .map(|c| {
                let Column { name, expr } = c;
                ColumnJson { name: name.clone(), expr: expr.clone() }
            })
            .collect();
        serde_json::to_string(&items).expect("plain data serialises")
    })
}

/// `(rls, columns)` cells of a slice.
fn slice_cells(s: &Slice) -> [Option<String>; 2] {
    let Slice { rls, columns } = s;
    [rls.clone(), columns_json(columns)]
}

pub(super) fn kind_text(k: FnKind) -> &'static str {
    k.sql()
}

/// `(db, schema, name)` cells of a function name (`db`/`schema` NULL: a built-in by name).
fn fn_name_cells(n: &FnName) -> [Option<String>; 3] {
    let FnName { qualifier, name } = n;
    match qualifier {
        Some((db, schema)) => [t(db), t(schema), t(name)],
        None => [None, None, t(name)],
    }
}

/// The rows of `policy` (the host's function list is the instance's, never stored).
pub fn rows(policy: &Policy) -> Tables {
    let mut out = Tables::empty();
    // `version` counts publishes on this node; the store keeps its own (`meta`).
    // `home` is where this store is, not policy.
    // `enum_types` is the instance's setting, never stored (each object's own is, in `declared`).
    let Policy { version: _, catalogs, roles, issuers, claim_roles, functions, home: _, enum_types: _, resource_groups } = policy;

    for (name, g) in resource_groups {
        let crate::policy::ResourceGroup { max_sessions, max_result_rows, max_stream_bytes } = g;
        let n = |v: &Option<u64>| v.map(|v| v.to_string());
        out.push(&layout::RESOURCE_GROUPS, vec![t(name), n(max_sessions), n(max_result_rows), n(max_stream_bytes)]);
    }
    for (name, cat) in catalogs {
        let Catalog { comment, objects, schemas, expansions, references, sources } = cat;
        out.push(&layout::CATALOGS, vec![t(name), comment.clone()]);
        for crate::policy::policy_sql::Source { db, schema, name: object } in sources {
            out.push(&layout::CATALOG_SOURCES, vec![t(name), t(db), schema.clone(), object.clone()]);
        }
        for ((schema, oname), rel) in objects {
            let Relation { kind, comment, slice, declared } = rel;
            let [rls, columns] = slice_cells(slice);
            let (kind, db, s, n, query) = match kind {
                RelationKind::Table(p) => {
                    let crate::policy::PhysName { db, schema, name } = p;
                    ("table", t(db), t(schema), t(name), None)
                }
                RelationKind::View(q) => ("view", None, None, None, t(q)),
            };
            out.push(
                &layout::OBJECTS,
                vec![t(name), t(schema), t(oname), t(kind), db, s, n, query, rls, columns, comment.clone(), declared_json(declared)],
            );
        }
        let kinds = schemas.iter().map(|s| (s, "alias")).chain(expansions.iter().map(|s| (s, "expansion")));
        for ((schema, vs), kind) in kinds {
            let VirtualSchema { db, schema: phys, comment } = vs;
            out.push(&layout::SCHEMAS, vec![t(name), t(schema), t(db), t(phys), comment.clone(), t(kind)]);
        }
        for ((schema, rname), r) in references {
            let Reference { from, to, on, cardinality, optional, comment } = r;
            // Both ends are objects of this catalog (`admin::references`).
            let ObjKey { catalog: _, schema: fs, name: fname } = from;
            let ObjKey { catalog: _, schema: ts, name: tname } = to;
            out.push(
                &layout::REFERENCES,
                vec![
                    t(name),
                    t(schema),
                    t(rname),
                    t(fs),
                    t(fname),
                    t(ts),
                    t(tname),
                    json(on),
                    cardinality.map(|c| c.sql().to_string()),
                    bool_text(*optional),
                    comment.clone(),
                ],
            );
        }
    }
    for (name, role) in roles {
        let Role { catalog_grants, object_grants, schema_grants, schema_grant_comments, claims, admin, resource_groups } = role;
        out.push(&layout::ROLES, vec![t(name)]);
        for g in resource_groups {
            out.push(&layout::RESOURCE_GROUP_GRANTS, vec![t(name), t(g)]);
        }
        if let Some(scope) = admin {
            out.push(&layout::ADMINS, vec![t(name), t(scope.name())]);
        }
        for (claim, value) in claims {
            out.push(&layout::ROLE_CLAIMS, vec![t(name), t(claim), t(value)]);
        }
        for (catalog, g) in catalog_grants {
            let CatalogGrant { caps, main, slice } = g;
            let [rls, columns] = slice_cells(slice);
            out.push(&layout::CATALOG_GRANTS, vec![t(name), t(catalog), caps_json(*caps), bool_text(*main), rls, columns]);
        }
        for (key, g) in object_grants {
            let ObjectGrant { caps, slice } = g;
            let [rls, columns] = slice_cells(slice);
            let caps = caps.and_then(caps_json);
            out.push(&layout::OBJECT_GRANTS, vec![t(name), t(&key.catalog), t(&key.schema), t(&key.name), caps, rls, columns]);
        }
        for (key, caps) in schema_grants {
            let comment = schema_grant_comments.get(key).cloned();
            out.push(&layout::SCHEMA_GRANTS, vec![t(name), t(&key.0), t(&key.1), caps_json(*caps), comment]);
        }
    }
    for (iss, issuer) in issuers {
        let Issuer { iss: _, keys, audiences, algs, role_claim, claim_map, keys_file, unmapped } = issuer;
        out.push(
            &layout::ISSUERS,
            vec![
                t(iss),
                t(keys),
                keys_file.clone(),
                json(audiences),
                json(algs),
                t(role_claim),
                json(claim_map),
                t(unmapped_text(*unmapped)),
            ],
        );
    }
    for ((iss, value), roles) in claim_roles {
        for role in roles {
            out.push(&layout::CLAIM_MAPS, vec![t(iss), t(value), t(role)]);
        }
    }
    function_rows(functions, &mut out);
    out
}

fn function_rows(f: &FunctionPolicy, out: &mut Tables) {
    let FunctionPolicy { host: _, categories, all_roles, role_grants, virtuals } = f;
    for (name, c) in categories {
        let FnCategory { shipped, added, dropped } = c;
        out.push(&layout::FUNCTION_CATEGORIES, vec![t(name), shipped.map(|s| s.name().to_string())]);
        for (member, set) in [("added", added), ("dropped", dropped)] {
            for n in set {
                let [db, schema, fname] = fn_name_cells(n);
                out.push(&layout::FUNCTION_MEMBERS, vec![t(name), db, schema, fname, t(member)]);
            }
        }
    }
    let grants = all_roles.iter().map(|g| (None, g)).chain(
        role_grants.iter().flat_map(|(role, gs)| gs.iter().map(move |g| (Some(role.clone()), g))),
    );
    for (role, (target, access)) in grants {
        let (kind, [db, schema, name]) = match target {
            FnTarget::Category(c) => ("category", [None, None, t(c)]),
            FnTarget::Function(n) => ("function", fn_name_cells(n)),
        };
        let access = match access {
            Access::Grant => "grant",
            Access::Deny => "deny",
        };
        out.push(&layout::FUNCTION_GRANTS, vec![role, t(kind), db, schema, name, t(access)]);
    }
    for ((catalog, schema, name, kind), vf) in virtuals {
        let VirtualFunction { params, body, sql, comment } = vf;
        let params = params.as_ref().map(|ps| {
            let pairs: Vec<(&str, String)> = ps.iter().map(|(n, ty)| (n.as_str(), ty.to_string())).collect();
            serde_json::to_string(&pairs).expect("plain data serialises")
        });
        let (body_kind, text) = match &**body {
            FnBody::Expr(e) => ("expr", e.to_string()),
            FnBody::Query(q) => ("query", q.to_string()),
            FnBody::Alias(n) => ("alias", n.to_string()),
        };
        out.push(
            &layout::VIRTUAL_FUNCTIONS,
            vec![t(catalog), t(schema), t(name), t(kind_text(*kind)), params, t(body_kind), Some(text), t(sql), comment.clone()],
        );
    }
}
