//! `acl_export()` (spec 023, "acl_export"): the whole policy as `ACL ADMIN` statements that
//! recreate it in a fresh policy, one statement each, in an order a replay accepts (resource
//! groups, catalogs and their sources, schemas, objects, virtual functions, references, roles,
//! grants, function categories and grants, issuers, claim maps).
//!
//! Every struct is taken apart field by field without `..`, as `store::rows` does: a field added
//! to the policy does not compile here until it is exported (`store::export_tests` checks that the
//! rows of a replayed export are the rows of the policy). Every name is written double-quoted and
//! every text single-quoted (`sqltext::ident`, `sqltext::literal`); predicates, masks, view
//! queries and function bodies are the stored SQL text, which management printed itself.
use crate::policy::functions::{Access, FnBody, FnCategory, FnName, FnTarget, FunctionPolicy, VirtualFunction};
use crate::policy::policy_sql::Source;
use crate::policy::{
    Caps, Catalog, CatalogGrant, Column, Declared, Issuer, ObjKey, ObjectGrant, Policy, Reference, Relation, RelationKind, ResourceGroup,
    Role, Slice, Unmapped, VirtualSchema,
};
use crate::sqltext::{ident, literal};

/// What a withheld secret is replaced by: `CREATE ISSUER` refuses it by name (`check_issuer`),
/// and as an `hmac:` secret it is too short to verify anything anyway.
pub const WITHHELD_SECRET: &str = "hmac:<withheld by acl_export>";

/// The comment line above an issuer whose secret is withheld (no text of the policy in it, so no
/// name can end the comment early).
pub const WITHHELD_NOTE: &str =
    "-- acl_export: this issuer's shared secret is withheld; put it in place of the KEYS placeholder, or export with acl_export(secrets := true)";

/// The policy as statements, in replay order. `secrets`: include shared (HMAC) secrets.
pub fn export(policy: &Policy, secrets: bool) -> Vec<String> {
    // `version`, `home` and `enum_types` are the node's, never policy (as in `store::rows`).
    let Policy { version: _, catalogs, roles, issuers, claim_roles, functions, home: _, enum_types: _, resource_groups } = policy;
    let mut out = Vec::new();
    for (name, g) in resource_groups {
        out.push(resource_group(name, g));
    }
    for (name, cat) in catalogs {
        catalog(name, cat, &mut out);
    }
    virtual_functions(functions, &mut out);
    for (name, cat) in catalogs {
        for ((schema, rname), r) in &cat.references {
            out.push(reference(name, schema, rname, r));
        }
    }
    for (name, role) in roles {
        role_statements(name, role, &mut out);
    }
    for (name, role) in roles {
        grants(name, role, &mut out);
    }
    function_statements(functions, &mut out);
    for (iss, issuer) in issuers {
        out.push(issuer_statement(iss, issuer, secrets));
    }
    for ((iss, value), roles) in claim_roles {
        for role in roles {
            out.push(format!("MAP CLAIM {} FROM ISSUER {} TO ROLE {}", literal(value), literal(iss), ident(role)));
        }
    }
    out
}

/// The whole script, as `ACL ADMIN` runs it: the statements joined by `;` and a line break.
pub fn script(statements: &[String]) -> String {
    format!("ACL ADMIN {}", statements.join(";\n"))
}

fn resource_group(name: &str, g: &ResourceGroup) -> String {
    let ResourceGroup { max_sessions, max_result_rows, max_stream_bytes } = g;
    let limits: Vec<String> = ResourceGroup::LIMITS
        .iter()
        .zip([max_sessions, max_result_rows, max_stream_bytes])
        .filter_map(|(n, v)| v.map(|v| format!("{n} = {v}")))
        .collect();
    let mut s = format!("CREATE RESOURCE GROUP {}", ident(name));
    if !limits.is_empty() {
        s += &format!(" ({})", limits.join(", "));
    }
    s
}

fn comment(c: &Option<String>) -> String {
    c.as_ref().map(|c| format!(" COMMENT {}", literal(c))).unwrap_or_default()
}

fn names(parts: &[&str]) -> String {
    parts.iter().map(|p| ident(p)).collect::<Vec<_>>().join(".")
}

fn catalog(name: &str, cat: &Catalog, out: &mut Vec<String>) {
    let Catalog { comment: c, objects, schemas, expansions, references: _, sources } = cat;
    out.push(format!("CREATE VIRTUAL CATALOG {}{}", ident(name), comment(c)));
    if !sources.is_empty() {
        let list: Vec<String> = sources
            .iter()
            .map(|s| {
                let Source { db, schema, name } = s;
                let parts: Vec<&str> = [Some(db.as_str()), schema.as_deref(), name.as_deref()].into_iter().flatten().collect();
                names(&parts)
            })
            .collect();
        out.push(format!("ALTER VIRTUAL CATALOG {} SET SOURCES ({})", ident(name), list.join(", ")));
    }
    for (schema, vs) in schemas {
        out.push(virtual_schema(name, schema, vs, "AS"));
    }
    // An expansion lists its source when replayed; each object is then written whole over the
    // one the listing made (`OR REPLACE`).
    for (schema, vs) in expansions {
        out.push(virtual_schema(name, schema, vs, "FROM"));
    }
    for ((schema, oname), rel) in objects {
        let key = ObjKey { catalog: name.to_string(), schema: schema.clone(), name: oname.clone() };
        object(&key, rel, expansions.contains_key(schema), out);
    }
}

fn virtual_schema(catalog: &str, schema: &str, vs: &VirtualSchema, word: &str) -> String {
    let VirtualSchema { db, schema: phys, comment: c } = vs;
    format!("CREATE VIRTUAL SCHEMA {} {word} {}{}", names(&[catalog, schema]), names(&[db, phys]), comment(c))
}

fn key_sql(k: &ObjKey) -> String {
    names(&[&k.catalog, &k.schema, &k.name])
}

/// `RLS (…)` and `COLUMNS (…)` of a slice; `not_null`: the columns declared NOT NULL.
fn slice_sql(s: &Slice, not_null: &std::collections::BTreeSet<String>) -> String {
    let Slice { rls, columns } = s;
    let mut out = String::new();
    if let Some(cols) = columns {
        let items: Vec<String> = cols
            .iter()
            .map(|c| {
                let Column { name, expr } = c;
                match expr {
                    Some(e) => format!("{} = {e}", ident(name)),
                    None if not_null.contains(name) => format!("{} NOT NULL", ident(name)),
                    None => ident(name),
                }
            })
            .collect();
        out += &format!(" COLUMNS ({})", items.join(", "));
    }
    if let Some(r) = rls {
        out += &format!(" RLS ({r})");
    }
    out
}

fn column_list(cols: &[String]) -> String {
    cols.iter().map(|c| ident(c)).collect::<Vec<_>>().join(", ")
}

fn object(key: &ObjKey, rel: &Relation, expanded: bool, out: &mut Vec<String>) {
    let Relation { kind, comment: c, slice, declared } = rel;
    let Declared { types, not_null, primary_key, column_comments, enums } = declared;
    let replace = if expanded { "OR REPLACE " } else { "" };
    let pk = if primary_key.is_empty() { String::new() } else { format!(" PRIMARY KEY ({})", column_list(primary_key)) };
    let types_clause = enums.map(|e| format!(" TYPES (enums = {})", e.name())).unwrap_or_default();
    let word = match kind {
        RelationKind::Table(p) => {
            let crate::policy::PhysName { db, schema, name } = p;
            out.push(format!(
                "CREATE {replace}VIRTUAL TABLE {} AS {}{}{pk}{types_clause}{}",
                key_sql(key),
                names(&[db, schema, name]),
                slice_sql(slice, not_null),
                comment(c)
            ));
            "TABLE"
        }
        RelationKind::View(q) => {
            // A view's slice is always empty (its query is its slice); its declared columns carry
            // its NOT NULL items.
            let cols = types.as_ref().map(|t| {
                let items: Vec<String> = t
                    .iter()
                    .map(|(n, ty)| format!("{} {ty}{}", ident(n), if not_null.contains(n) { " NOT NULL" } else { "" }))
                    .collect();
                format!(" ({})", items.join(", "))
            });
            debug_assert!(slice.is_empty(), "a view's query is its slice");
            out.push(format!(
                "CREATE {replace}VIRTUAL VIEW {}{}{pk}{types_clause}{} AS {q}",
                key_sql(key),
                cols.unwrap_or_default(),
                comment(c),
            ));
            "VIEW"
        }
    };
    // Declared column types belong to views: nothing writes them on a table.
    debug_assert!(types.is_none() || word == "VIEW", "a table with declared types");
    for (col, text) in column_comments {
        out.push(format!("COMMENT ON VIRTUAL {word} {} COLUMN {} IS {}", key_sql(key), ident(col), literal(text)));
    }
}

fn reference(catalog: &str, schema: &str, name: &str, r: &Reference) -> String {
    let Reference { from, to, on, cardinality, optional, comment: c } = r;
    let on: Vec<String> = on.iter().map(|(a, b)| format!("{} = {}", ident(a), ident(b))).collect();
    let mut s = format!(
        "CREATE VIRTUAL REFERENCE {} FROM {} TO {} ON ({})",
        names(&[catalog, schema, name]),
        key_sql(from),
        key_sql(to),
        on.join(", ")
    );
    if let Some(card) = cardinality {
        s += &format!(" CARDINALITY {}", card.sql());
    }
    if *optional {
        s += " OPTIONAL";
    }
    s + &comment(c)
}

fn caps_sql(c: Caps) -> String {
    if c.is_empty() {
        " CAPS '{}'".to_string()
    } else {
        format!(" WITH ({})", c.names().join(", "))
    }
}

/// The role, its default claims, its administration scope and its resource groups.
fn role_statements(name: &str, role: &Role, out: &mut Vec<String>) {
    let Role { catalog_grants: _, object_grants: _, schema_grants: _, schema_grant_comments: _, claims, admin, resource_groups } = role;
    let mut s = format!("CREATE ROLE {}", ident(name));
    if !claims.is_empty() {
        let items: Vec<String> = claims.iter().map(|(k, v)| format!("{} = {}", ident(k), literal(v))).collect();
        s += &format!(" CLAIMS ({})", items.join(", "));
    }
    out.push(s);
    if let Some(scope) = admin {
        out.push(format!("GRANT ADMIN {} TO ROLE {}", scope.name(), ident(name)));
    }
    for g in resource_groups {
        out.push(format!("GRANT RESOURCE GROUP {} TO ROLE {}", ident(g), ident(name)));
    }
}

/// The role's catalog, schema and object grants.
fn grants(name: &str, role: &Role, out: &mut Vec<String>) {
    let Role { catalog_grants, object_grants, schema_grants, schema_grant_comments, claims: _, admin: _, resource_groups: _ } = role;
    let none = std::collections::BTreeSet::new();
    for (catalog, g) in catalog_grants {
        let CatalogGrant { caps, main, slice } = g;
        out.push(format!(
            "GRANT CATALOG {} TO ROLE {}{}{}{}",
            ident(catalog),
            ident(name),
            caps_sql(*caps),
            if *main { " MAIN" } else { "" },
            slice_sql(slice, &none)
        ));
    }
    for ((catalog, schema), caps) in schema_grants {
        let comment = schema_grant_comments.get(&(catalog.clone(), schema.clone()));
        let comment = comment.map(|c| format!(" COMMENT {}", literal(c))).unwrap_or_default();
        out.push(format!("GRANT SCHEMA {} TO ROLE {}{}{comment}", names(&[catalog, schema]), ident(name), caps_sql(*caps)));
    }
    for (key, g) in object_grants {
        let ObjectGrant { caps, slice } = g;
        let caps = caps.map(caps_sql).unwrap_or_default();
        out.push(format!("GRANT OBJECT {} TO ROLE {}{caps}{}", key_sql(key), ident(name), slice_sql(slice, &none)));
    }
}

fn fn_name(n: &FnName) -> String {
    let FnName { qualifier, name } = n;
    match qualifier {
        Some((db, schema)) => names(&[db, schema, name]),
        None => ident(name),
    }
}

fn target_sql(t: &FnTarget) -> String {
    match t {
        FnTarget::Category(c) => format!("CATEGORY {}", ident(c)),
        FnTarget::Function(n) => fn_name(n),
    }
}

fn access_sql(a: &Access) -> &'static str {
    match a {
        Access::Grant => "GRANT",
        Access::Deny => "DENY",
    }
}

/// Function categories and function grants, as changes to a fresh policy's (which has every
/// shipped category and grants some of them to all roles).
fn function_statements(f: &FunctionPolicy, out: &mut Vec<String>) {
    let FunctionPolicy { host: _, categories, all_roles, role_grants, virtuals: _ } = f;
    for (name, c) in categories {
        let FnCategory { shipped, added, dropped } = c;
        if shipped.is_none() {
            out.push(format!("CREATE FUNCTION CATEGORY {}", ident(name)));
        }
        for (verb, set) in [("ADD", added), ("DROP", dropped)] {
            if !set.is_empty() {
                let list: Vec<String> = set.iter().map(fn_name).collect();
                out.push(format!("ALTER FUNCTION CATEGORY {} {verb} ({})", ident(name), list.join(", ")));
            }
        }
    }
    let fresh = FunctionPolicy::default().all_roles;
    for target in fresh.keys().filter(|t| !all_roles.contains_key(t)) {
        out.push(format!("REVOKE FUNCTION {} FROM ALL ROLES", target_sql(target)));
    }
    for (target, access) in all_roles.iter().filter(|(t, a)| fresh.get(t) != Some(a)) {
        out.push(format!("{} FUNCTION {} TO ALL ROLES", access_sql(access), target_sql(target)));
    }
    for (role, gs) in role_grants {
        for (target, access) in gs {
            out.push(format!("{} FUNCTION {} TO ROLE {}", access_sql(access), target_sql(target), ident(role)));
        }
    }
}

/// `CREATE VIRTUAL SCALAR|TABLE FUNCTION`: the body as management printed it into `sql` (after
/// the signature), so the replay stores the same text.
fn virtual_functions(f: &FunctionPolicy, out: &mut Vec<String>) {
    for ((catalog, schema, name, kind), vf) in &f.virtuals {
        let VirtualFunction { params, body, sql, comment: c } = vf;
        // A body without a parameter list takes untyped arguments (its arity is its highest
        // `acl_arg(n)`): written without one, as management wrote it.
        let params = params.as_ref().filter(|ps| ps.iter().all(|(_, t)| *t != sqlparser::ast::DataType::Unspecified));
        let key = ObjKey { catalog: catalog.clone(), schema: schema.clone(), name: name.clone() };
        let sig = params.map(|ps| {
            let list: Vec<String> = ps.iter().map(|(n, t)| format!("{n} {t}")).collect();
            format!("({})", list.join(", "))
        });
        let written = format!("{key}{} ", sig.as_deref().unwrap_or_default());
        let rest = sql.strip_prefix(&written).unwrap_or(sql);
        // The body is `sql`'s; `body` is what it compiled to (an alias with parameters is a call).
        let _: &FnBody = body;
        let rest = match rest.strip_prefix("ALIAS OF ") {
            // The alias's target as written (`name` or `db.schema.name`), quoted part by part.
            Some(target) => format!("ALIAS OF {}", names(&target.split('.').collect::<Vec<_>>())),
            None => rest.to_string(),
        };
        let params = params.map(|ps| {
            let list: Vec<String> = ps.iter().map(|(n, t)| format!("{} {t}", ident(n))).collect();
            format!("({})", list.join(", "))
        });
        let word = match kind {
            crate::policy::functions::FnKind::Scalar => "SCALAR",
            crate::policy::functions::FnKind::Table => "TABLE FUNCTION",
        };
        out.push(format!("CREATE VIRTUAL {word} {}{} {rest}{}", key_sql(&key), params.unwrap_or_default(), comment(c)));
    }
}

/// Whether inline keys hold a shared secret: an `hmac:` secret, or a JWKS with a symmetric
/// (`"kty": "oct"`) key. A JWKS that cannot be read is treated as one (withheld: fail closed).
pub fn holds_secret(keys: &str) -> bool {
    if keys.starts_with(crate::auth::keys::HMAC_PREFIX) {
        return true;
    }
    if !keys.trim_start().starts_with('{') {
        return false;
    }
    let Ok(v) = serde_json::from_str::<serde_json::Value>(keys) else { return true };
    // A JWKS document, or a single JWK.
    let jwks: Vec<&serde_json::Value> = match v.get("keys") {
        Some(serde_json::Value::Array(ks)) => ks.iter().collect(),
        Some(_) => return true,
        None => vec![&v],
    };
    jwks.iter().any(|k| k["kty"].as_str().is_none_or(|t| t.eq_ignore_ascii_case("oct")))
}

fn issuer_statement(iss: &str, issuer: &Issuer, secrets: bool) -> String {
    let Issuer { iss: _, keys, audiences, algs, role_claim, claim_map, keys_file, unmapped } = issuer;
    let withheld = keys_file.is_none() && !secrets && holds_secret(keys);
    let keys = match keys_file {
        Some(path) => format!("KEYS FROM {}", literal(path)),
        None if withheld => format!("KEYS {}", literal(WITHHELD_SECRET)),
        None => format!("KEYS {}", literal(keys)),
    };
    let mut s = format!("CREATE ISSUER {} {keys}", literal(iss));
    if withheld {
        s = format!("{WITHHELD_NOTE}\n{s}");
    }
    if !audiences.is_empty() {
        s += &format!(" AUDIENCES ({})", audiences.iter().map(|a| literal(a)).collect::<Vec<_>>().join(", "));
    }
    if !algs.is_empty() {
        s += &format!(" ALGS ({})", algs.iter().map(|a| ident_or_word(a)).collect::<Vec<_>>().join(", "));
    }
    s += &format!(" ROLE CLAIM {}", literal(role_claim));
    if !claim_map.is_empty() {
        let items: Vec<String> = claim_map.iter().map(|(p, n)| format!("{} => {}", literal(p), ident(n))).collect();
        s += &format!(" CLAIM MAP ({})", items.join(", "));
    }
    s += match unmapped {
        Unmapped::Count => "",
        Unmapped::Ignore => " UNMAPPED IGNORE",
    };
    s
}

/// An algorithm's name (`RS256`) as a word; anything else quoted (as `ALGS ('…')` also reads).
fn ident_or_word(a: &str) -> String {
    if !a.is_empty() && a.chars().all(|c| c.is_ascii_alphanumeric()) {
        a.to_string()
    } else {
        literal(a)
    }
}
