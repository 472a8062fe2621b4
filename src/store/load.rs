//! The store's rows back into a policy (`load`), the inverse of `rows`. A record that does not
//! read (bad JSON, an unknown capability or kind, a grant to a role the store does not hold, a
//! second record under one key) refuses the whole store: a node never enforces half a policy.
use super::layout::{self, Table, TABLES};
use super::rows::{unmapped_text, ColumnJson, DeclaredJson, Tables};
use super::Row;
use crate::admin::sources;
use crate::error::{AclError, Result, StoreError};
use crate::policy::categories::{never_callable, Shipped};
use crate::policy::functions::{
    Access, Class, FnBody, FnCategory, FnKey, FnKind, FnName, FnTarget, FunctionPolicy, HostFunctions, VirtualFunction,
};
use crate::policy::{
    AdminScope, Cardinality, Caps, Catalog, CatalogGrant, Column, Declared, EnumTypes, Issuer, ObjKey, ObjectGrant, PhysName, Policy, Reference,
    Relation, RelationKind, Role, Slice, Unmapped, VirtualSchema,
};
use sqlparser::dialect::DuckDbDialect;
use sqlparser::parser::Parser;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// Reads one table's rows, naming the table in every error.
struct Reader<'a> {
    location: &'a str,
    table: &'static Table,
}

impl Reader<'_> {
    fn bad(&self, why: impl Into<String>) -> AclError {
        StoreError::Corrupt { location: self.location.to_string(), table: self.table.name, why: why.into() }.into()
    }

    /// Cell `i` of `row`, which must be set.
    fn text<'r>(&self, row: &'r Row, i: usize) -> Result<&'r str> {
        row.get(i).and_then(|c| c.as_deref()).ok_or_else(|| self.bad(format!("{} is NULL", self.table.columns[i].0)))
    }

    fn opt(&self, row: &Row, i: usize) -> Option<String> {
        row.get(i).cloned().flatten()
    }

    fn json<T: serde::de::DeserializeOwned>(&self, row: &Row, i: usize) -> Result<Option<T>> {
        match row.get(i).and_then(|c| c.as_deref()) {
            None => Ok(None),
            Some(s) => serde_json::from_str(s).map(Some).map_err(|e| self.bad(format!("{}: {e}", self.table.columns[i].0))),
        }
    }

    fn json_set<T: serde::de::DeserializeOwned>(&self, row: &Row, i: usize) -> Result<T> {
        self.json(row, i)?.ok_or_else(|| self.bad(format!("{} is NULL", self.table.columns[i].0)))
    }

    fn caps(&self, row: &Row, i: usize) -> Result<Option<Caps>> {
        let Some(names) = self.json::<Vec<String>>(row, i)? else { return Ok(None) };
        let mut caps = Caps::NONE;
        for n in names {
            caps = caps.union(Caps::parse_one(&n).map_err(|_| self.bad(format!("unknown capability {n:?}")))?);
        }
        Ok(Some(caps))
    }

    fn bool(&self, row: &Row, i: usize) -> Result<bool> {
        match self.text(row, i)? {
            "true" | "t" => Ok(true),
            "false" | "f" => Ok(false),
            other => Err(self.bad(format!("{}: not a boolean: {other:?}", self.table.columns[i].0))),
        }
    }

    fn slice(&self, row: &Row, rls: usize, columns: usize) -> Result<Slice> {
        let columns = self.json::<Vec<ColumnJson>>(row, columns)?.map(|cs| {
            cs.into_iter().map(|ColumnJson { name, expr }| Column { name, expr }).collect()
        });
        let slice = Slice { rls: self.opt(row, rls), columns };
        // Checked again as at GRANT / CREATE: no subquery in a predicate or a mask.
        crate::admin::check_stored_slice(&slice).map_err(|e| self.bad(e.to_string()))?;
        Ok(slice)
    }

    fn kind(&self, row: &Row, i: usize) -> Result<FnKind> {
        match self.text(row, i)? {
            "scalar" => Ok(FnKind::Scalar),
            "table" => Ok(FnKind::Table),
            other => Err(self.bad(format!("unknown function kind {other:?}"))),
        }
    }

    fn fn_name(&self, row: &Row, db: usize) -> Result<FnName> {
        let name = self.text(row, db + 2)?.to_string();
        let qualifier = match (self.opt(row, db), self.opt(row, db + 1)) {
            (Some(d), Some(s)) => Some((d, s)),
            (None, None) => None,
            _ => return Err(self.bad("a function is named by db and schema together, or by name alone")),
        };
        Ok(FnName { qualifier, name })
    }

    /// Refuses a second record under one key.
    fn unique<K: Ord>(&self, seen: &mut BTreeSet<K>, key: K, shown: impl FnOnce() -> String) -> Result<()> {
        if seen.insert(key) {
            Ok(())
        } else {
            Err(self.bad(format!("two records for {}", shown())))
        }
    }
}

/// The policy `tables` hold, carrying the instance's `host` function list. `location` names the
/// store in errors.
pub fn load(tables: &Tables, host: Arc<HostFunctions>, location: &str) -> Result<Policy> {
    if tables.0.len() != TABLES.len() {
        return Err(AclError::internal("the store's rows do not match its layout"));
    }
    let r = |table: &'static Table| Reader { location, table };
    let mut p = Policy {
        functions: FunctionPolicy { host, categories: BTreeMap::new(), all_roles: BTreeMap::new(), ..FunctionPolicy::default() },
        ..Policy::default()
    };

    let rd = r(&layout::CATALOGS);
    for row in tables.of(&layout::CATALOGS) {
        let name = rd.text(row, 0)?.to_string();
        let cat = Catalog { comment: rd.opt(row, 1), ..Catalog::default() };
        if p.catalogs.insert(name.clone(), cat).is_some() {
            return Err(rd.bad(format!("two records for catalog {name}")));
        }
    }
    let rd = r(&layout::CATALOG_SOURCES);
    for row in tables.of(&layout::CATALOG_SOURCES) {
        let catalog = rd.text(row, 0)?;
        let source = crate::policy::policy_sql::Source { db: rd.text(row, 1)?.to_string(), schema: rd.opt(row, 2), name: rd.opt(row, 3) };
        if source.schema.is_none() && source.name.is_some() {
            return Err(rd.bad(format!("a source of catalog {catalog} names a table without its schema")));
        }
        let cat = p.catalogs.get_mut(catalog).ok_or_else(|| rd.bad(format!("catalog {catalog} does not exist")))?;
        if !cat.sources.insert(source) {
            return Err(rd.bad(format!("two records for a source of catalog {catalog}")));
        }
    }
    let rd = r(&layout::OBJECTS);
    for row in tables.of(&layout::OBJECTS) {
        let (catalog, schema, name) = (rd.text(row, 0)?, rd.text(row, 1)?.to_string(), rd.text(row, 2)?.to_string());
        let kind = match rd.text(row, 3)? {
            "table" => {
                let phys = PhysName { db: rd.text(row, 4)?.to_string(), schema: rd.text(row, 5)?.to_string(), name: rd.text(row, 6)?.to_string() };
                sources::check_table(&phys.db, &phys.schema, &phys.name).map_err(|e| rd.bad(e.to_string()))?;
                RelationKind::Table(phys)
            }
            "view" => {
                let q = rd.text(row, 7)?;
                let parsed = parse(&rd, q, |p| p.parse_query())?;
                sources::check_query(&*parsed).map_err(|e| rd.bad(e.to_string()))?;
                RelationKind::View(q.to_string())
            }
            other => return Err(rd.bad(format!("unknown object kind {other:?}"))),
        };
        let declared = match rd.json::<DeclaredJson>(row, 11)? {
            None => Declared::default(),
            Some(DeclaredJson { types, not_null, primary_key, column_comments, enums }) => Declared {
                types,
                not_null: not_null.into_iter().collect(),
                primary_key,
                column_comments: column_comments.into_iter().collect(),
                enums: match enums {
                    None => None,
                    Some(e) => Some(EnumTypes::parse(&e).ok_or_else(|| rd.bad(format!("unknown ENUM exposure {e:?}")))?),
                },
            },
        };
        let rel = Relation { kind, slice: rd.slice(row, 8, 9)?, comment: rd.opt(row, 10), declared };
        let cat = p.catalogs.get_mut(catalog).ok_or_else(|| rd.bad(format!("catalog {catalog} does not exist")))?;
        if cat.objects.insert((schema.clone(), name.clone()), rel).is_some() {
            return Err(rd.bad(format!("two records for {catalog}.{schema}.{name}")));
        }
    }
    let rd = r(&layout::SCHEMAS);
    for row in tables.of(&layout::SCHEMAS) {
        let (catalog, schema) = (rd.text(row, 0)?, rd.text(row, 1)?.to_string());
        let vs = VirtualSchema { db: rd.text(row, 2)?.to_string(), schema: rd.text(row, 3)?.to_string(), comment: rd.opt(row, 4) };
        sources::check_schema(&vs.db, &vs.schema).map_err(|e| rd.bad(e.to_string()))?;
        let cat = p.catalogs.get_mut(catalog).ok_or_else(|| rd.bad(format!("catalog {catalog} does not exist")))?;
        let kinds = match rd.text(row, 5)? {
            // An expanded schema's objects are listed ones.
            "expansion" => &mut cat.expansions,
            "alias" if cat.objects.keys().any(|(s, _)| *s == schema) => {
                return Err(rd.bad(format!("schema {catalog}.{schema} holds listed objects too")));
            }
            "alias" => &mut cat.schemas,
            other => return Err(rd.bad(format!("unknown schema kind {other}"))),
        };
        if kinds.insert(schema.clone(), vs).is_some() {
            return Err(rd.bad(format!("two records for {catalog}.{schema}")));
        }
    }
    references(tables, &mut p, &r)?;
    roles(tables, &mut p, &r)?;
    resource_groups(tables, &mut p, &r)?;
    issuers(tables, &mut p, &r)?;
    functions(tables, &mut p, &r)?;
    Ok(p)
}

fn references<'a>(tables: &Tables, p: &mut Policy, r: &dyn Fn(&'static Table) -> Reader<'a>) -> Result<()> {
    let rd = r(&layout::REFERENCES);
    for row in tables.of(&layout::REFERENCES) {
        let (catalog, schema, name) = (rd.text(row, 0)?.to_string(), rd.text(row, 1)?.to_string(), rd.text(row, 2)?.to_string());
        let end = |s: usize| -> Result<ObjKey> {
            Ok(ObjKey { catalog: catalog.clone(), schema: rd.text(row, s)?.to_string(), name: rd.text(row, s + 1)?.to_string() })
        };
        let (from, to) = (end(3)?, end(5)?);
        let cat = p.catalogs.get_mut(&catalog).ok_or_else(|| rd.bad(format!("catalog {catalog} does not exist")))?;
        for k in [&from, &to] {
            if !cat.objects.contains_key(&(k.schema.clone(), k.name.clone())) {
                return Err(rd.bad(format!("object {k} does not exist")));
            }
        }
        let cardinality = match rd.opt(row, 8) {
            None => None,
            Some(c) => Some(Cardinality::ALL.into_iter().find(|x| x.sql() == c).ok_or_else(|| rd.bad(format!("unknown cardinality {c:?}")))?),
        };
        let reference =
            Reference { from, to, on: rd.json_set(row, 7)?, cardinality, optional: rd.bool(row, 9)?, comment: rd.opt(row, 10) };
        if cat.references.insert((schema.clone(), name.clone()), reference).is_some() {
            return Err(rd.bad(format!("two records for {catalog}.{schema}.{name}")));
        }
    }
    Ok(())
}

fn roles<'a>(tables: &Tables, p: &mut Policy, r: &dyn Fn(&'static Table) -> Reader<'a>) -> Result<()> {
    let rd = r(&layout::ROLES);
    for row in tables.of(&layout::ROLES) {
        let name = rd.text(row, 0)?.to_string();
        if p.roles.insert(name.clone(), Role::default()).is_some() {
            return Err(rd.bad(format!("two records for role {name}")));
        }
    }
    let role = |p: &mut Policy, rd: &Reader<'_>, name: &str| -> Result<()> {
        if p.roles.contains_key(name) {
            Ok(())
        } else {
            Err(rd.bad(format!("role {name} does not exist")))
        }
    };
    let rd = r(&layout::ROLE_CLAIMS);
    for row in tables.of(&layout::ROLE_CLAIMS) {
        let name = rd.text(row, 0)?;
        role(p, &rd, name)?;
        let (claim, value) = (rd.text(row, 1)?.to_string(), rd.text(row, 2)?.to_string());
        let r = p.roles.get_mut(name).expect("checked");
        if r.claims.insert(claim.clone(), value).is_some() {
            return Err(rd.bad(format!("two records for claim {claim} of role {name}")));
        }
    }
    let rd = r(&layout::CATALOG_GRANTS);
    for row in tables.of(&layout::CATALOG_GRANTS) {
        let (name, catalog) = (rd.text(row, 0)?, rd.text(row, 1)?.to_string());
        role(p, &rd, name)?;
        if !p.catalogs.contains_key(&catalog) {
            return Err(rd.bad(format!("catalog {catalog} does not exist")));
        }
        let caps = rd.caps(row, 2)?.ok_or_else(|| rd.bad("caps is NULL"))?;
        let g = CatalogGrant { caps, main: rd.bool(row, 3)?, slice: rd.slice(row, 4, 5)? };
        if p.roles.get_mut(name).expect("checked").catalog_grants.insert(catalog.clone(), g).is_some() {
            return Err(rd.bad(format!("two records for role {name} on {catalog}")));
        }
    }
    let rd = r(&layout::OBJECT_GRANTS);
    for row in tables.of(&layout::OBJECT_GRANTS) {
        let name = rd.text(row, 0)?;
        role(p, &rd, name)?;
        let key = ObjKey { catalog: rd.text(row, 1)?.to_string(), schema: rd.text(row, 2)?.to_string(), name: rd.text(row, 3)?.to_string() };
        if !p.catalogs.contains_key(&key.catalog) {
            return Err(rd.bad(format!("catalog {} does not exist", key.catalog)));
        }
        let g = ObjectGrant { caps: rd.caps(row, 4)?, slice: rd.slice(row, 5, 6)? };
        let shown = key.to_string();
        if p.roles.get_mut(name).expect("checked").object_grants.insert(key, g).is_some() {
            return Err(rd.bad(format!("two records for role {name} on {shown}")));
        }
    }
    let rd = r(&layout::SCHEMA_GRANTS);
    for row in tables.of(&layout::SCHEMA_GRANTS) {
        let name = rd.text(row, 0)?;
        role(p, &rd, name)?;
        let (catalog, schema) = (rd.text(row, 1)?.to_string(), rd.text(row, 2)?.to_string());
        if !p.grantable_schema(&catalog, &schema) {
            return Err(rd.bad(format!("virtual schema {catalog}.{schema} does not exist")));
        }
        let caps = rd.caps(row, 3)?.ok_or_else(|| rd.bad("caps is NULL"))?;
        let comment = rd.opt(row, 4);
        let r = p.roles.get_mut(name).expect("checked");
        if r.schema_grants.insert((catalog.clone(), schema.clone()), caps).is_some() {
            return Err(rd.bad(format!("two records for role {name} on {catalog}.{schema}")));
        }
        if let Some(c) = comment {
            r.schema_grant_comments.insert((catalog.clone(), schema.clone()), c);
        }
    }
    let rd = r(&layout::ADMINS);
    for row in tables.of(&layout::ADMINS) {
        let name = rd.text(row, 0)?;
        role(p, &rd, name)?;
        let word = rd.text(row, 1)?;
        // Exactly the words `rows` writes: a scope it cannot read is not guessed at.
        let scope = AdminScope::ALL
            .into_iter()
            .find(|s| s.name() == word)
            .ok_or_else(|| rd.bad(format!("unknown administration scope {word:?}")))?;
        if p.roles.get_mut(name).expect("checked").admin.replace(scope).is_some() {
            return Err(rd.bad(format!("two records for role {name}")));
        }
    }
    Ok(())
}

/// Resource groups and their grants (schema version 4); read after the roles.
fn resource_groups<'a>(tables: &Tables, p: &mut Policy, r: &dyn Fn(&'static Table) -> Reader<'a>) -> Result<()> {
    let rd = r(&layout::RESOURCE_GROUPS);
    for row in tables.of(&layout::RESOURCE_GROUPS) {
        let name = rd.text(row, 0)?.to_string();
        let limit = |i: usize| -> Result<Option<u64>> {
            match rd.opt(row, i) {
                None => Ok(None),
                Some(v) => match v.parse::<u64>() {
                    Ok(0) | Err(_) => Err(rd.bad(format!("{}: not a limit: {v:?}", layout::RESOURCE_GROUPS.columns[i].0))),
                    Ok(v) => Ok(Some(v)),
                },
            }
        };
        let g = crate::policy::ResourceGroup { max_sessions: limit(1)?, max_result_rows: limit(2)?, max_stream_bytes: limit(3)? };
        if p.resource_groups.insert(name.clone(), g).is_some() {
            return Err(rd.bad(format!("two records for resource group {name}")));
        }
    }
    let rd = r(&layout::RESOURCE_GROUP_GRANTS);
    for row in tables.of(&layout::RESOURCE_GROUP_GRANTS) {
        let (role, group) = (rd.text(row, 0)?, rd.text(row, 1)?);
        if !p.resource_groups.contains_key(group) {
            return Err(rd.bad(format!("resource group {group} does not exist")));
        }
        let r = p.roles.get_mut(role).ok_or_else(|| rd.bad(format!("role {role} does not exist")))?;
        if !r.resource_groups.insert(group.to_string()) {
            return Err(rd.bad(format!("two records for role {role} in {group}")));
        }
    }
    Ok(())
}

fn issuers<'a>(tables: &Tables, p: &mut Policy, r: &dyn Fn(&'static Table) -> Reader<'a>) -> Result<()> {
    let rd = r(&layout::ISSUERS);
    for row in tables.of(&layout::ISSUERS) {
        let iss = rd.text(row, 0)?.to_string();
        let (stored, keys_file) = (rd.text(row, 1)?, rd.opt(row, 2));
        let issuer = Issuer {
            iss: iss.clone(),
            // A file issuer's keys are never taken from the store (an older node wrote the text
            // it read there): the node reads the file when it publishes this policy.
            keys: if keys_file.is_some() { String::new() } else { stored.to_string() },
            keys_file,
            audiences: rd.json_set(row, 3)?,
            algs: rd.json_set(row, 4)?,
            role_claim: rd.text(row, 5)?.to_string(),
            claim_map: rd.json_set(row, 6)?,
            unmapped: match rd.text(row, 7)? {
                u if u == unmapped_text(Unmapped::Count) => Unmapped::Count,
                u if u == unmapped_text(Unmapped::Ignore) => Unmapped::Ignore,
                other => return Err(rd.bad(format!("unknown unmapped rule {other:?}"))),
            },
        };
        // Every check CREATE ISSUER makes (the keys' rules included: a hand-edited row with a
        // key management would refuse refuses the whole store).
        crate::admin::check_stored_issuer(&issuer, None).map_err(|e| rd.bad(e.to_string()))?;
        if p.issuers.insert(iss.clone(), issuer).is_some() {
            return Err(rd.bad(format!("two records for issuer {iss}")));
        }
    }
    let rd = r(&layout::CLAIM_MAPS);
    let mut seen = BTreeSet::new();
    for row in tables.of(&layout::CLAIM_MAPS) {
        let (iss, value, role) = (rd.text(row, 0)?.to_string(), rd.text(row, 1)?.to_string(), rd.text(row, 2)?.to_string());
        if !p.issuers.contains_key(&iss) {
            return Err(rd.bad(format!("issuer {iss} does not exist")));
        }
        if !p.roles.contains_key(&role) {
            return Err(rd.bad(format!("role {role} does not exist")));
        }
        rd.unique(&mut seen, (iss.clone(), value.clone(), role.clone()), || format!("{value} of {iss} to {role}"))?;
        let roles = p.claim_roles.entry((iss, value)).or_default();
        roles.push(role);
        roles.sort();
    }
    Ok(())
}

fn functions<'a>(tables: &Tables, p: &mut Policy, r: &dyn Fn(&'static Table) -> Reader<'a>) -> Result<()> {
    let rd = r(&layout::FUNCTION_CATEGORIES);
    for row in tables.of(&layout::FUNCTION_CATEGORIES) {
        let name = rd.text(row, 0)?.to_string();
        let shipped = match rd.opt(row, 1) {
            None => None,
            Some(s) => Some(
                Shipped::ALL.into_iter().find(|x| x.name() == s).ok_or_else(|| rd.bad(format!("unknown shipped category {s:?}")))?,
            ),
        };
        if p.functions.categories.insert(name.clone(), FnCategory { shipped, ..FnCategory::default() }).is_some() {
            return Err(rd.bad(format!("two records for category {name}")));
        }
    }
    // The shipped categories always exist (they cannot be dropped); a store without one gets it
    // back empty of grants: the store's grants, not the defaults, say who may call it.
    for s in Shipped::ALL {
        p.functions.categories.entry(s.name().to_string()).or_insert(FnCategory { shipped: Some(s), ..FnCategory::default() });
    }
    let rd = r(&layout::FUNCTION_MEMBERS);
    for row in tables.of(&layout::FUNCTION_MEMBERS) {
        let category = rd.text(row, 0)?;
        let n = rd.fn_name(row, 1)?;
        let c = p.functions.categories.get_mut(category).ok_or_else(|| rd.bad(format!("category {category} does not exist")))?;
        let fresh = match rd.text(row, 4)? {
            "added" => c.added.insert(n.clone()) && !c.dropped.contains(&n),
            "dropped" => c.dropped.insert(n.clone()) && !c.added.contains(&n),
            other => return Err(rd.bad(format!("unknown member kind {other:?}"))),
        };
        if !fresh {
            return Err(rd.bad(format!("two records for {n} in {category}")));
        }
    }
    let rd = r(&layout::FUNCTION_GRANTS);
    for row in tables.of(&layout::FUNCTION_GRANTS) {
        let target = match rd.text(row, 1)? {
            "category" => {
                let c = rd.text(row, 4)?.to_string();
                if !p.functions.categories.contains_key(&c) || rd.opt(row, 2).is_some() || rd.opt(row, 3).is_some() {
                    return Err(rd.bad(format!("category {c} does not exist")));
                }
                FnTarget::Category(c)
            }
            "function" => FnTarget::Function(rd.fn_name(row, 2)?),
            other => return Err(rd.bad(format!("unknown grant target {other:?}"))),
        };
        let access = match rd.text(row, 5)? {
            "grant" => Access::Grant,
            "deny" => Access::Deny,
            other => return Err(rd.bad(format!("unknown access {other:?}"))),
        };
        let grants = match rd.opt(row, 0) {
            None => &mut p.functions.all_roles,
            Some(role) if p.roles.contains_key(&role) => p.functions.role_grants.entry(role).or_default(),
            Some(role) => return Err(rd.bad(format!("role {role} does not exist"))),
        };
        if grants.insert(target, access).is_some() {
            return Err(rd.bad("two records for one function grant"));
        }
    }
    let rd = r(&layout::VIRTUAL_FUNCTIONS);
    for row in tables.of(&layout::VIRTUAL_FUNCTIONS) {
        let (catalog, schema, name) = (rd.text(row, 0)?.to_string(), rd.text(row, 1)?.to_string(), rd.text(row, 2)?.to_string());
        if !p.catalogs.contains_key(&catalog) {
            return Err(rd.bad(format!("catalog {catalog} does not exist")));
        }
        let kind = rd.kind(row, 3)?;
        let params = match rd.json::<Vec<(String, String)>>(row, 4)? {
            None => None,
            // An empty type: a parameter of a body without a parameter list (untyped, spec 007).
            Some(ps) => Some(
                ps.into_iter()
                    .map(|(n, ty)| match ty.as_str() {
                        "" => Ok((n, sqlparser::ast::DataType::Unspecified)),
                        _ => Ok((n, parse(&rd, &ty, |p| p.parse_data_type())?)),
                    })
                    .collect::<Result<Vec<_>>>()?,
            ),
        };
        let text = rd.text(row, 6)?;
        // Checked again as at CREATE (a direct edit is the operator's, but a body that could run
        // SQL text would hand that to every principal granted the function).
        let checked = |e: AclError| rd.bad(e.to_string());
        let body = match rd.text(row, 5)? {
            "expr" => {
                let mut e = parse(&rd, text, |p| p.parse_expr())?;
                sources::check_query(&e).map_err(checked)?;
                crate::sqltext::normalise_body(&mut e, never_callable).map_err(checked)?;
                FnBody::Expr(e)
            }
            "query" => {
                let mut q = parse(&rd, text, |p| p.parse_query())?;
                sources::check_query(&*q).map_err(checked)?;
                crate::sqltext::normalise_body(&mut *q, never_callable).map_err(checked)?;
                FnBody::Query(q)
            }
            "alias" => {
                // As `ALIAS OF` left it: a qualified name of a function that is not never-callable.
                let n = parse(&rd, text, |p| p.parse_object_name(false))?;
                let parts: Vec<String> = n.0.iter().map(|x| x.as_ident().map(|i| crate::policy::norm(&i.value)).unwrap_or_default()).collect();
                let [db, schema, fname] = parts.as_slice() else { return Err(rd.bad("an alias names a function by db.schema.name")) };
                let key = FnKey { db: db.clone(), schema: schema.clone(), name: fname.clone(), kind };
                if never_callable(fname) || p.functions.host.get(&key).is_some_and(|h| h.class == Class::Never) {
                    return Err(rd.bad(format!("an alias of {fname}, which is never callable")));
                }
                FnBody::Alias(n)
            }
            other => return Err(rd.bad(format!("unknown body kind {other:?}"))),
        };
        let f = VirtualFunction { params, body: Arc::new(body), sql: rd.text(row, 7)?.to_string(), comment: rd.opt(row, 8) };
        let shown = format!("{catalog}.{schema}.{name}");
        if p.functions.virtuals.insert((catalog, schema, name, kind), f).is_some() {
            return Err(rd.bad(format!("two records for {shown}")));
        }
    }
    Ok(())
}

/// `text` through one sqlparser production, which must take all of it. The body was checked
/// when it was created (`admin`) and is read back as printed then.
fn parse<T>(rd: &Reader<'_>, text: &str, production: impl FnOnce(&mut Parser<'_>) -> std::result::Result<T, sqlparser::parser::ParserError>) -> Result<T> {
    let dialect = DuckDbDialect {};
    let mut p = Parser::new(&dialect).try_with_sql(text).map_err(|_| rd.bad("a body does not tokenize"))?;
    let out = production(&mut p).map_err(|_| rd.bad("a body or type does not parse"))?;
    if p.peek_token_ref().token != sqlparser::tokenizer::Token::EOF {
        return Err(rd.bad("a body or type has text after its end"));
    }
    Ok(out)
}
