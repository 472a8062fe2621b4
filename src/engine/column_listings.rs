//! The reference system's column listings (issue 34, item 6; spec 006, "Listings"), from the
//! policy alone (nothing is bound): `acl_relation_columns()` and `acl_object_columns()` (the
//! column lists objects declare), `acl_grant_columns()` (the column lists of catalog and object
//! grants), `acl_reference_columns()` (the column pairs of references) and `acl_function_gate()`
//! (the grants and denies to ALL ROLES). An object without a column list has no rows here: its
//! columns are its source's, as `DESCRIBE` shows them under a principal.
use crate::policy::{Column, Declared, Policy};
use crate::store::layout::Ty;
use crate::store::Row;

fn text(s: &str) -> Option<String> {
    Some(s.to_string())
}

pub const RELATION_COLUMNS: &[(&str, Ty)] = &[
    ("catalog", Ty::Text),
    ("schema", Ty::Text),
    ("name", Ty::Text),
    ("kind", Ty::Text),
    ("column_index", Ty::Int),
    ("column_name", Ty::Text),
    ("expression", Ty::Text),
    ("data_type", Ty::Text),
    ("not_null", Ty::Bool),
    ("primary_key", Ty::Bool),
    ("comment", Ty::Text),
];

/// One row per column an object lists: its COLUMNS items (`expression` NULL: the source column of
/// that name, passed through), or a view's declared `(col TYPE, …)`.
pub fn relation_rows(policy: &Policy) -> Vec<Row> {
    let mut out = Vec::new();
    for (c, catalog) in &policy.catalogs {
        for ((s, n), rel) in &catalog.objects {
            let kind = match rel.kind {
                crate::policy::RelationKind::Table(_) => "table",
                crate::policy::RelationKind::View(_) => "view",
            };
            let d = &rel.declared;
            let row = |i: usize, name: &str, expr: Option<String>, ty: Option<String>| -> Row {
                vec![
                    text(c),
                    text(s),
                    text(n),
                    text(kind),
                    Some((i + 1).to_string()),
                    text(name),
                    expr,
                    ty,
                    Some(d.not_null.contains(name).to_string()),
                    Some(d.primary_key.iter().any(|k| k == name).to_string()),
                    d.column_comments.get(name).cloned(),
                ]
            };
            match (&rel.slice.columns, &d.types) {
                (Some(cols), _) => out.extend(cols.iter().enumerate().map(|(i, col)| row(i, &col.name, col.expr.clone(), declared_type(d, &col.name)))),
                (None, Some(types)) => out.extend(types.iter().enumerate().map(|(i, (name, ty))| row(i, &crate::policy::norm(name), None, Some(ty.clone())))),
                (None, None) => {}
            }
        }
    }
    out
}

fn declared_type(d: &Declared, name: &str) -> Option<String> {
    d.types.as_ref()?.iter().find(|(n, _)| crate::policy::norm(n) == name).map(|(_, t)| t.clone())
}

pub const GRANT_COLUMNS: &[(&str, Ty)] = &[
    ("role", Ty::Text),
    ("level", Ty::Text),
    ("catalog", Ty::Text),
    ("schema", Ty::Text),
    ("name", Ty::Text),
    ("column_index", Ty::Int),
    ("column_name", Ty::Text),
    ("expression", Ty::Text),
];

/// One row per column a catalog grant (`level` 'catalog', schema and name NULL) or an object grant
/// (`level` 'object') lists.
pub fn grant_rows(policy: &Policy) -> Vec<Row> {
    let mut out = Vec::new();
    let mut push = |role: &str, level: &str, key: [Option<String>; 3], cols: &[Column]| {
        for (i, col) in cols.iter().enumerate() {
            let [c, s, n] = key.clone();
            out.push(vec![text(role), text(level), c, s, n, Some((i + 1).to_string()), text(&col.name), col.expr.clone()]);
        }
    };
    for (r, role) in policy.roles.iter() {
        for (c, g) in &role.catalog_grants {
            if let Some(cols) = &g.slice.columns {
                push(r, "catalog", [text(c), None, None], cols);
            }
        }
        for (k, g) in &role.object_grants {
            if let Some(cols) = &g.slice.columns {
                push(r, "object", [text(&k.catalog), text(&k.schema), text(&k.name)], cols);
            }
        }
    }
    out
}

pub const REFERENCE_COLUMNS: &[(&str, Ty)] = &[
    ("catalog", Ty::Text),
    ("schema", Ty::Text),
    ("name", Ty::Text),
    ("pair_index", Ty::Int),
    ("from_column", Ty::Text),
    ("to_column", Ty::Text),
];

/// One row per `ON (x = y)` pair of a virtual reference.
pub fn reference_rows(policy: &Policy) -> Vec<Row> {
    let mut out = Vec::new();
    for (c, catalog) in &policy.catalogs {
        for ((s, n), r) in &catalog.references {
            for (i, (from, to)) in r.on.iter().enumerate() {
                out.push(vec![text(c), text(s), text(n), Some((i + 1).to_string()), text(from), text(to)]);
            }
        }
    }
    out
}

pub const GATE_COLUMNS: &[(&str, Ty)] =
    &[("target", Ty::Text), ("db", Ty::Text), ("schema", Ty::Text), ("name", Ty::Text), ("access", Ty::Text)];

/// The function gate's rows for every role (GRANT|DENY FUNCTION [CATEGORY] … TO ALL ROLES), as
/// `acl_function_grants()` holds them with role NULL.
pub fn gate_rows(rows: Vec<Row>) -> Vec<Row> {
    rows.into_iter().filter(|r| r.first().is_some_and(Option::is_none)).map(|r| r.into_iter().skip(1).collect()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn column_lists_of_objects_grants_and_references() {
        let mut p = Policy::default();
        for s in [
            "CREATE VIRTUAL CATALOG c",
            "CREATE VIRTUAL TABLE c.t AS db.s.t COLUMNS (id, amount = NULL, name NOT NULL) PRIMARY KEY (id)",
            "CREATE VIRTUAL TABLE c.u AS db.s.u",
            "CREATE VIRTUAL REFERENCE c.r FROM t TO u ON (id = tid)",
            "CREATE ROLE r",
            "GRANT CATALOG c TO ROLE r COLUMNS (id)",
            "GRANT TABLE c.t TO ROLE r WITH (select) COLUMNS (id, name)",
        ] {
            crate::admin::apply(&mut p, &crate::admin::parse(s).unwrap()).unwrap();
        }
        let rel = relation_rows(&p);
        assert_eq!(rel.len(), 3, "{rel:?}");
        assert_eq!(rel[0][5].as_deref(), Some("id"));
        assert_eq!((rel[0][9].as_deref(), rel[2][8].as_deref()), (Some("true"), Some("true")));
        assert_eq!(rel[1][6].as_deref(), Some("NULL"));
        let grants = grant_rows(&p);
        assert_eq!(grants.iter().filter(|g| g[1].as_deref() == Some("object")).count(), 2);
        assert_eq!(grants.iter().filter(|g| g[1].as_deref() == Some("catalog")).count(), 1);
        assert_eq!(reference_rows(&p), vec![vec![text("c"), text("main"), text("r"), text("1"), text("id"), text("tid")]]);
    }
}
