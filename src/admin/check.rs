//! `acl_check_catalog([catalog])` and a catalog manager's `CHECK VIRTUAL CATALOG c` (issue 31,
//! finding 4; spec 007, "Drift"): one row per place where a virtual catalog no longer matches the
//! physical objects it maps — a source that went away, a column, mask or row policy (the object's
//! own or a grant's) that no longer binds over it, a view's query that no longer binds — with what
//! drifted in virtual terms, the physical detail, and a statement that repairs it.
//!
//! Rows have a `kind` (`drift` here) so that other checks of the policy can add rows of their own
//! in the same shape. The repair never widens access: a column that no longer binds is dropped
//! from its list, a row policy that no longer binds becomes `false` (no row until the operator
//! writes a new one), a source that is gone takes its object with it.
use crate::authz::{Layer, Principal, View};
use crate::error::{Invalid, Noun, Result};
use crate::policy::{Column, Declared, ObjKey, PhysName, Policy, Relation, RelationKind, Slice};
use std::borrow::Cow;

/// What the host answers about the physical catalog, in the caller's transaction.
pub trait Host {
    /// The columns of a table (or view), lower-case; `None`: it does not exist.
    fn columns(&mut self, table: &PhysName) -> Option<Vec<String>>;
    /// Whether the physical schema exists.
    fn schema_exists(&mut self, db: &str, schema: &str) -> bool;
    /// Binds one SELECT (never runs it); `Err`: DuckDB's message.
    fn bind(&mut self, sql: &str) -> std::result::Result<(), String>;
}

/// The listing's columns, in order (all VARCHAR).
pub const COLUMNS: [&str; 7] = ["kind", "catalog", "object", "object_type", "finding", "detail", "repair"];

/// One row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// Which check found it: `drift`, or `policy_sql` (policy SQL the rules now refuse).
    pub kind: &'static str,
    pub catalog: String,
    /// The virtual object (or schema) as its key prints.
    pub object: String,
    /// `table`, `view` or `schema`.
    pub object_type: &'static str,
    /// What drifted, in virtual terms.
    pub finding: String,
    /// The physical detail (for operators and the catalog's managers only).
    pub detail: String,
    /// A management statement that makes the object bind again without widening access.
    pub repair: String,
}

impl Finding {
    pub fn row(&self) -> Vec<Option<String>> {
        [self.kind, &self.catalog, &self.object, self.object_type, &self.finding, &self.detail, &self.repair]
            .iter()
            .map(|s| Some(s.to_string()))
            .collect()
    }
}

/// The findings of `catalog` (every catalog when `None`), catalogs and objects in name order.
pub fn check(policy: &Policy, catalog: Option<&str>, host: &mut dyn Host) -> Result<Vec<Finding>> {
    if let Some(c) = catalog {
        if !policy.catalogs.contains_key(c) {
            return Err(Invalid::Missing { noun: Noun::Catalog, name: c.to_string() }.into());
        }
    }
    let nobody = Principal { roles: Vec::new(), label: "the check".into(), claims: Default::default() };
    let view = View::new(policy, &nobody)?;
    let mut out = Vec::new();
    for (name, cat) in policy.catalogs.iter().filter(|(n, _)| catalog.is_none_or(|c| c == n.as_str())) {
        for (schema, vs) in &cat.schemas {
            if !host.schema_exists(&vs.db, &vs.schema) {
                out.push(Finding {
                    kind: "drift",
                    catalog: name.clone(),
                    object: format!("{name}.{schema}"),
                    object_type: "schema",
                    finding: "its source schema no longer exists".into(),
                    detail: format!("schema {}.{} does not exist", vs.db, vs.schema),
                    repair: format!("DROP VIRTUAL SCHEMA {}.{}", sql_name(name), sql_name(schema)),
                });
            }
        }
        for ((schema, object), rel) in &cat.objects {
            let key = ObjKey { catalog: name.clone(), schema: schema.clone(), name: object.clone() };
            let mut c = Checker { policy, view: &view, host: &mut *host, key: &key, rel, out: &mut out };
            c.object();
        }
    }
    // Policy SQL that would be refused if it were written now (a store loaded by an older build
    // is refused whole, so in practice: none; spec 007, "Policy SQL is input").
    for (cat, message) in super::policy_sql::pieces_refused(policy) {
        if catalog.is_none_or(|c| c == cat) {
            out.push(Finding {
                kind: "policy_sql",
                catalog: cat,
                object: String::new(),
                object_type: "policy SQL",
                finding: message,
                detail: String::new(),
                repair: "rewrite or drop it (CREATE OR REPLACE …, ALTER … SET …)".into(),
            });
        }
    }
    // Claims a slice reads that nothing sets: NULL for every principal (spec 003, "Claims").
    for u in super::claims::unset(policy).into_iter().filter(|u| catalog.is_none_or(|c| c == u.catalog)) {
        out.push(Finding {
            kind: "claim",
            catalog: u.catalog.clone(),
            object: u.place.clone(),
            object_type: "claim",
            finding: format!("acl_claim('{}') is NULL for every principal: no issuer's CLAIM MAP yields it and no role's CLAIMS defaults it", u.key),
            detail: String::new(),
            repair: format!("CLAIM MAP ('<token claim>' => {}) on the issuer, or CLAIMS ({} = '…') on a role", u.key, u.key),
        });
    }
    Ok(out)
}

struct Checker<'a, 'p> {
    policy: &'p Policy,
    view: &'a View<'p>,
    host: &'a mut dyn Host,
    key: &'a ObjKey,
    rel: &'p Relation,
    out: &'a mut Vec<Finding>,
}

impl Checker<'_, '_> {
    fn push(&mut self, finding: String, detail: String, repair: String) {
        let object_type = match self.rel.kind {
            RelationKind::Table(_) => "table",
            RelationKind::View(_) => "view",
        };
        self.out.push(Finding {
            kind: "drift",
            catalog: self.key.catalog.clone(),
            object: self.key.to_string(),
            object_type,
            finding,
            detail,
            repair,
        });
    }

    /// Binds the object under `layers`; `Err`: DuckDB's message, first line only.
    fn binds(&mut self, layers: &[Layer<'_>]) -> std::result::Result<(), String> {
        let sql = crate::authz::slices::exposed(self.view, &self.rel.kind, layers).map_err(|e| e.to_string())?;
        let first_line = |m: String| m.lines().next().unwrap_or_default().to_string();
        self.host.bind(&format!("SELECT * FROM ({sql}) AS \"__acl_check\" LIMIT 0")).map_err(first_line)
    }

    fn object(&mut self) {
        let word = match &self.rel.kind {
            RelationKind::Table(_) => "TABLE",
            RelationKind::View(_) => "VIEW",
        };
        let columns = match &self.rel.kind {
            RelationKind::Table(phys) => match self.host.columns(phys) {
                Some(cols) => Some(cols),
                None => {
                    let detail = format!("table {}.{}.{} does not exist", phys.db, phys.schema, phys.name);
                    let repair = format!("DROP VIRTUAL TABLE {}", key_sql(self.key));
                    return self.push("its source table no longer exists".into(), detail, repair);
                }
            },
            RelationKind::View(_) => {
                if let Err(m) = self.binds(&[]) {
                    let repair = format!("DROP VIRTUAL VIEW {}", key_sql(self.key));
                    return self.push("its query no longer binds over its sources".into(), m, repair);
                }
                None
            }
        };
        let own = &self.rel.slice;
        let rls = own.rls.as_ref().and_then(|p| {
            let layer = Layer::Slice(Cow::Owned(Slice { rls: Some(p.clone()), columns: None }));
            self.binds(&[layer]).err().map(|m| missing(p, columns.as_deref()).unwrap_or(m))
        });
        let broken = own.columns.as_ref().map(|cols| self.broken_columns(&[], cols, columns.as_deref())).unwrap_or_default();
        let own_ok = rls.is_none() && broken.is_empty();
        if !own_ok {
            let repair = self.own_repair(word, rls.is_some(), &broken);
            if let Some(detail) = rls {
                self.push("its row policy no longer binds over its source".into(), detail, repair.clone());
            }
            for (col, detail) in broken {
                self.push(format!("column \"{col}\" no longer binds over its source"), detail, repair.clone());
            }
        }
        if own_ok {
            self.grants(columns.as_deref());
        }
    }

    /// The grants' slices on the object, each over the object's own (which binds).
    fn grants(&mut self, physical: Option<&[String]>) {
        // Grant slices name the object's virtual columns; without its own column list those are
        // the source's.
        let names = if self.rel.slice.columns.is_some() { None } else { physical };
        let policy = self.policy;
        for (role, r) in &policy.roles {
            let own = Some(&self.rel.slice).filter(|s| !s.is_empty()).map(|s| Layer::Slice(Cow::Borrowed(s)));
            let own: Vec<Layer<'_>> = own.into_iter().collect();
            let cat = r.catalog_grants.get(&self.key.catalog).filter(|g| !g.slice.is_empty());
            let obj = r.object_grants.get(self.key).filter(|g| !g.slice.is_empty());
            let mut below = own;
            if let Some(g) = cat {
                let grant = Grant::Catalog { catalog: &self.key.catalog, role, caps: g.caps, main: g.main };
                if !self.grant(&below, &g.slice, names, &grant) {
                    continue; // the object grant sits on top of a broken layer
                }
                below.push(Layer::Slice(Cow::Borrowed(&g.slice)));
            }
            if let Some(g) = obj {
                let grant = Grant::Object { key: self.key, role, caps: g.caps };
                self.grant(&below, &g.slice, names, &grant);
            }
        }
    }

    /// One grant's slice over `below`; false when part of it no longer binds.
    fn grant(&mut self, below: &[Layer<'_>], s: &Slice, names: Option<&[String]>, grant: &Grant<'_>) -> bool {
        let rls = s.rls.as_ref().and_then(|p| {
            let mut layers = below.to_vec();
            layers.push(Layer::Slice(Cow::Owned(Slice { rls: Some(p.clone()), columns: None })));
            self.binds(&layers).err().map(|m| missing(p, names).unwrap_or(m))
        });
        let broken = s.columns.as_ref().map(|cols| self.broken_columns(below, cols, names)).unwrap_or_default();
        if rls.is_none() && broken.is_empty() {
            return true;
        }
        let repair = grant.repair(rls.is_some(), s.columns.as_deref(), &broken);
        let what = grant.what();
        if let Some(detail) = rls {
            self.push(format!("{what}: its row policy no longer binds over {}", self.key), detail, repair.clone());
        }
        for (col, detail) in broken {
            self.push(format!("{what}: column \"{col}\" no longer binds over {}", self.key), detail, repair.clone());
        }
        false
    }

    /// The repair of the object's own slice: one statement for all its findings (each ALTER is
    /// validated with the rest of the slice in place, so a broken predicate and a broken column
    /// are repaired together, by the whole object restated).
    fn own_repair(&self, word: &str, rls_broken: bool, broken: &[(String, String)]) -> String {
        let key = key_sql(self.key);
        let kept = self.rel.slice.columns.as_deref().map(|cols| kept(cols, broken));
        match (rls_broken, kept, &self.rel.kind) {
            (_, Some(None), _) => format!("DROP VIRTUAL {word} {key}"),
            (false, Some(Some(list)), _) => format!("ALTER VIRTUAL {word} {key} SET COLUMNS ({})", columns_sql(&list, &self.rel.declared)),
            (true, None, _) => format!("ALTER VIRTUAL {word} {key} SET RLS (false)"),
            (true, Some(Some(list)), RelationKind::Table(phys)) => {
                let d = &self.rel.declared;
                let mut out = format!(
                    "CREATE OR REPLACE VIRTUAL TABLE {key} AS {}.{}.{} COLUMNS ({}) RLS (false)",
                    sql_name(&phys.db),
                    sql_name(&phys.schema),
                    sql_name(&phys.name),
                    columns_sql(&list, d)
                );
                if !d.primary_key.is_empty() && d.primary_key.iter().all(|c| list.iter().any(|k| &k.name == c)) {
                    out.push_str(&format!(" PRIMARY KEY ({})", d.primary_key.iter().map(|c| sql_name(c)).collect::<Vec<_>>().join(", ")));
                }
                if let Some(c) = &self.rel.comment {
                    out.push_str(&format!(" COMMENT {}", crate::sqltext::literal(c)));
                }
                out
            }
            // a view has no slice of its own
            (_, _, _) => format!("DROP VIRTUAL {word} {key}"),
        }
    }

    /// The columns of a list that no longer bind over `below`, each with its detail.
    fn broken_columns(&mut self, below: &[Layer<'_>], cols: &[Column], names: Option<&[String]>) -> Vec<(String, String)> {
        let mut broken = Vec::new();
        for c in cols {
            let mut layers = below.to_vec();
            layers.push(Layer::Slice(Cow::Owned(Slice { rls: None, columns: Some(vec![c.clone()]) })));
            if let Err(m) = self.binds(&layers) {
                let expr = c.expr.clone().unwrap_or_else(|| crate::sqltext::ident(&c.name));
                broken.push((c.name.clone(), missing(&expr, names).unwrap_or(m)));
            }
        }
        broken
    }
}

/// A grant whose slice drifted, and how its repair is written.
enum Grant<'a> {
    Catalog { catalog: &'a str, role: &'a str, caps: crate::policy::Caps, main: bool },
    Object { key: &'a ObjKey, role: &'a str, caps: Option<crate::policy::Caps> },
}

impl Grant<'_> {
    fn what(&self) -> String {
        match self {
            Grant::Catalog { catalog, role, .. } => format!("the grant of catalog {catalog} to role \"{role}\""),
            Grant::Object { key, role, .. } => format!("the grant of {key} to role \"{role}\""),
        }
    }

    /// `TABLE c.t TO ROLE r` / `CATALOG c TO ROLE r`.
    fn on(&self) -> String {
        match self {
            Grant::Catalog { catalog, role, .. } => format!("CATALOG {} TO ROLE {}", sql_name(catalog), sql_name(role)),
            Grant::Object { key, role, .. } => format!("TABLE {} TO ROLE {}", key_sql(key), sql_name(role)),
        }
    }

    /// One statement for all of the grant's findings; never wider than the grant: a predicate
    /// becomes `false`, a column goes; with no column left the grant holds nothing (a catalog
    /// grant is revoked; an object grant becomes `CAPS '{}'`, which takes the object back —
    /// revoking it would leave the catalog grant, which may be wider).
    fn repair(&self, rls_broken: bool, cols: Option<&[Column]>, broken: &[(String, String)]) -> String {
        let on = self.on();
        let kept = cols.map(|c| kept(c, broken));
        match (rls_broken, kept) {
            (_, Some(None)) => match self {
                Grant::Catalog { catalog, role, .. } => format!("REVOKE CATALOG {} FROM ROLE {}", sql_name(catalog), sql_name(role)),
                Grant::Object { .. } => format!("GRANT {on} CAPS '{{}}'"),
            },
            (false, Some(Some(list))) => format!("ALTER GRANT {on} SET COLUMNS ({})", columns_sql(&list, &Declared::default())),
            (true, None) => format!("ALTER GRANT {on} SET RLS (false)"),
            (true, Some(Some(list))) => {
                let caps = match self {
                    Grant::Catalog { caps, main, .. } => format!(" {}{}", caps_sql(*caps), if *main { " MAIN" } else { "" }),
                    Grant::Object { caps: Some(caps), .. } => format!(" {}", caps_sql(*caps)),
                    Grant::Object { caps: None, .. } => String::new(),
                };
                format!("GRANT {on}{caps} COLUMNS ({}) RLS (false)", columns_sql(&list, &Declared::default()))
            }
            (false, None) => String::new(), // nothing drifted (not called)
        }
    }
}

fn caps_sql(caps: crate::policy::Caps) -> String {
    if caps.is_empty() {
        "CAPS '{}'".to_string()
    } else {
        format!("WITH ({})", caps.names().join(", "))
    }
}

/// `has no column "x"` for the columns `expr` reads that `names` (the layer's input) lacks;
/// `None` when it lacks none (a type changed) or they are not known.
fn missing(expr: &str, names: Option<&[String]>) -> Option<String> {
    let names = names?;
    let gone: Vec<String> = crate::sqltext::columns_read(expr)?.into_iter().filter(|c| !names.contains(c)).collect();
    if gone.is_empty() {
        return None;
    }
    let mut gone_unique = gone;
    gone_unique.dedup();
    Some(format!("no column {}", gone_unique.iter().map(|c| format!("\"{c}\"")).collect::<Vec<_>>().join(", ")))
}

/// The list without the broken columns; `None` when nothing is left.
fn kept(cols: &[Column], broken: &[(String, String)]) -> Option<Vec<Column>> {
    let left: Vec<Column> = cols.iter().filter(|c| !broken.iter().any(|(b, _)| *b == c.name)).cloned().collect();
    (!left.is_empty()).then_some(left)
}

/// A COLUMNS list as a statement writes it (`col [NOT NULL]`, `name = expr`).
fn columns_sql(cols: &[Column], declared: &Declared) -> String {
    let items: Vec<String> = cols
        .iter()
        .map(|c| match &c.expr {
            Some(e) => format!("{} = {e}", sql_name(&c.name)),
            None if declared.not_null.contains(&c.name) => format!("{} NOT NULL", sql_name(&c.name)),
            None => sql_name(&c.name),
        })
        .collect();
    items.join(", ")
}

/// A name as a statement writes it: bare when it reads back the same, quoted otherwise (also the
/// words the management grammar or SQL would read as keywords there).
fn sql_name(name: &str) -> String {
    const WORDS: [&str; 20] = [
        "and", "as", "cascade", "columns", "comment", "false", "from", "not", "null", "or", "rls", "role", "select", "set",
        "table", "to", "true", "view", "where", "with",
    ];
    let plain = name.chars().next().is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && !WORDS.contains(&name);
    if plain {
        name.to_string()
    } else {
        crate::sqltext::ident(name)
    }
}

fn key_sql(key: &ObjKey) -> String {
    if key.schema == crate::policy::DEFAULT_SCHEMA {
        format!("{}.{}", sql_name(&key.catalog), sql_name(&key.name))
    } else {
        format!("{}.{}.{}", sql_name(&key.catalog), sql_name(&key.schema), sql_name(&key.name))
    }
}

#[cfg(test)]
#[path = "check_tests.rs"]
mod tests;
