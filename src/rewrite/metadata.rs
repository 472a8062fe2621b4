//! Rule: metadata under a principal (specs/005, "Metadata"). `information_schema.tables|columns|
//! schemata`, `duckdb_tables|columns|schemas|databases|views()`, `SHOW TABLES`, `SHOW ALL TABLES`
//! and `SHOW DATABASES` are answered from the principal's virtual catalog.
//!
//! Each reference becomes a subquery over `system.main.acl_meta('<kind>', '<principal>')` (a table
//! function the extension registers) shaped exactly like DuckDB's own relation: same column names
//! and types, physical-only fields (oids, sql text, sizes) NULL. The subquery is the policy's own
//! SQL, so it is recorded as trusted: the function gate and the resolver leave it alone, and the
//! principal, who cannot call `acl_*` itself, reaches the listing only this way. At bind time
//! `acl_meta` re-derives the principal's view from the current policy (`listing_rows`) and binds
//! each object's exposed query in the caller's context for its column types.
use crate::sqltext::WalkMut as _;
use super::Decision;
use crate::authz::{ObjectType, Principal, View};
use crate::error::{AclError, BadCall, Result, Unsupported};
use crate::policy::{norm, Policy, RelationKind};
use crate::sqltext::ident;
use sqlparser::ast::{
    Ident, ObjectNamePart, Query, ShowStatementOptions, Statement, TableAlias, TableFactor, VisitorMut,
};
use sqlparser::dialect::DuckDbDialect;
use sqlparser::parser::Parser;
use std::ops::ControlFlow;

mod cache;
mod keywords;
mod show;
pub use cache::MetaCache;

/// The listing table function's name as emitted.
pub const META_FN: &str = r#""system"."main"."acl_meta""#;

/// The base shapes `acl_meta` returns (every column VARCHAR; the relations below cast).
pub const KINDS: [(&str, &[&str]); 4] = [
    ("databases", &["database_name", "comment"]),
    ("schemas", &["database_name", "schema_name", "comment"]),
    (
        "tables",
        &[
            "database_name",
            "schema_name",
            "table_name",
            "table_type",
            "comment",
            "column_count",
            "insertable",
            "has_primary_key",
            "sql",
        ],
    ),
    (
        "columns",
        &[
            "database_name",
            "schema_name",
            "table_name",
            "column_name",
            "column_index",
            "data_type",
            "numeric_precision",
            "numeric_precision_radix",
            "numeric_scale",
            "comment",
            "is_nullable",
            "primary_key",
        ],
    ),
];

/// A base listing's name and columns.
pub fn metadata_kind(kind: &str) -> Option<(&'static str, &'static [&'static str])> {
    KINDS.iter().find(|(k, _)| *k == kind).copied()
}

/// One relation a principal may name, as SQL over `{databases}`, `{schemas}`, `{tables}`,
/// `{columns}` (the `acl_meta` calls). Column lists and types follow DuckDB v2.0.0.
fn relation_sql(name: &str) -> Option<&'static str> {
    Some(match name {
        "duckdb_databases" => "SELECT database_name, NULL::BIGINT AS database_oid, NULL::VARCHAR AS path, comment, \
            NULL::MAP(VARCHAR, VARCHAR) AS tags, false AS internal, 'duckdb' AS type, false AS readonly, \
            false AS encrypted, NULL::VARCHAR AS cipher, NULL::MAP(VARCHAR, VARCHAR) AS options FROM {databases}",
        "duckdb_schemas" => "SELECT NULL::BIGINT AS oid, database_name, NULL::BIGINT AS database_oid, schema_name, \
            comment, NULL::MAP(VARCHAR, VARCHAR) AS tags, false AS internal, NULL::VARCHAR AS sql, \
            NULL::VARCHAR AS parent_schema, NULL::BIGINT AS parent_schema_oid FROM {schemas}",
        "duckdb_tables" => "SELECT database_name, NULL::BIGINT AS database_oid, schema_name, NULL::BIGINT AS schema_oid, \
            table_name, NULL::BIGINT AS table_oid, comment, NULL::MAP(VARCHAR, VARCHAR) AS tags, false AS internal, \
            false AS temporary, has_primary_key::BOOLEAN AS has_primary_key, NULL::BIGINT AS estimated_size, \
            column_count::BIGINT AS column_count, 0::BIGINT AS index_count, 0::BIGINT AS check_constraint_count, \
            sql FROM {tables} WHERE table_type = 'BASE TABLE'",
        "duckdb_views" => "SELECT database_name, NULL::BIGINT AS database_oid, schema_name, NULL::BIGINT AS schema_oid, \
            table_name AS view_name, NULL::BIGINT AS view_oid, comment, NULL::MAP(VARCHAR, VARCHAR) AS tags, \
            false AS internal, false AS temporary, column_count::BIGINT AS column_count, NULL::VARCHAR AS sql, \
            column_count IS NOT NULL AS is_bound FROM {tables} WHERE table_type = 'VIEW'",
        "duckdb_columns" => "SELECT database_name, NULL::BIGINT AS database_oid, schema_name, NULL::BIGINT AS schema_oid, \
            table_name, NULL::BIGINT AS table_oid, column_name, column_index::INTEGER AS column_index, \
            comment, false AS internal, NULL::VARCHAR AS column_default, is_nullable::BOOLEAN AS is_nullable, \
            data_type, NULL::BIGINT AS data_type_id, NULL::INTEGER AS character_maximum_length, \
            numeric_precision::INTEGER AS numeric_precision, numeric_precision_radix::INTEGER AS numeric_precision_radix, \
            numeric_scale::INTEGER AS numeric_scale, NULL::MAP(VARCHAR, VARCHAR) AS tags, false AS is_generated, \
            NULL::VARCHAR AS generation_expression FROM {columns}",
        "schemata" => "SELECT database_name AS catalog_name, schema_name, 'duckdb' AS schema_owner, \
            NULL::VARCHAR AS default_character_set_catalog, NULL::VARCHAR AS default_character_set_schema, \
            NULL::VARCHAR AS default_character_set_name, NULL::VARCHAR AS sql_path FROM {schemas}",
        "tables" => "SELECT database_name AS table_catalog, schema_name AS table_schema, table_name, table_type, \
            NULL::VARCHAR AS self_referencing_column_name, NULL::VARCHAR AS reference_generation, \
            NULL::VARCHAR AS user_defined_type_catalog, NULL::VARCHAR AS user_defined_type_schema, \
            NULL::VARCHAR AS user_defined_type_name, insertable AS is_insertable_into, 'NO' AS is_typed, \
            NULL::VARCHAR AS commit_action, comment AS \"TABLE_COMMENT\" FROM {tables}",
        "columns" => "SELECT database_name AS table_catalog, schema_name AS table_schema, table_name, column_name, \
            column_index::INTEGER AS ordinal_position, NULL::VARCHAR AS column_default, \
            CASE WHEN is_nullable::BOOLEAN THEN 'YES' ELSE 'NO' END AS is_nullable, data_type, \
            NULL::INTEGER AS character_maximum_length, NULL::INTEGER AS character_octet_length, \
            numeric_precision::INTEGER AS numeric_precision, numeric_precision_radix::INTEGER AS numeric_precision_radix, \
            numeric_scale::INTEGER AS numeric_scale, NULL::INTEGER AS datetime_precision, NULL::VARCHAR AS interval_type, \
            NULL::INTEGER AS interval_precision, NULL::VARCHAR AS character_set_catalog, NULL::VARCHAR AS character_set_schema, \
            NULL::VARCHAR AS character_set_name, NULL::VARCHAR AS collation_catalog, NULL::VARCHAR AS collation_schema, \
            NULL::VARCHAR AS collation_name, NULL::VARCHAR AS domain_catalog, NULL::VARCHAR AS domain_schema, \
            NULL::VARCHAR AS domain_name, NULL::VARCHAR AS udt_catalog, NULL::VARCHAR AS udt_schema, NULL::VARCHAR AS udt_name, \
            NULL::VARCHAR AS scope_catalog, NULL::VARCHAR AS scope_schema, NULL::VARCHAR AS scope_name, \
            NULL::BIGINT AS maximum_cardinality, NULL::VARCHAR AS dtd_identifier, NULL::BOOLEAN AS is_self_referencing, \
            NULL::BOOLEAN AS is_identity, NULL::VARCHAR AS identity_generation, NULL::VARCHAR AS identity_start, \
            NULL::VARCHAR AS identity_increment, NULL::VARCHAR AS identity_maximum, NULL::VARCHAR AS identity_minimum, \
            NULL::BOOLEAN AS identity_cycle, 'NEVER' AS is_generated, NULL::VARCHAR AS generation_expression, \
            NULL::BOOLEAN AS is_updatable, comment AS \"COLUMN_COMMENT\" FROM {columns}",
        // SHOW forms (DuckDB's output columns)
        "show tables" => "SELECT table_name AS name FROM {tables} WHERE database_name IS NOT DISTINCT FROM {main} \
            AND schema_name = 'main' ORDER BY name",
        "show all tables" => "SELECT t.database_name AS database, t.schema_name AS schema, t.table_name AS name, \
            \"system\".\"main\".\"list\"(c.column_name ORDER BY c.column_index::INTEGER) FILTER (WHERE c.column_name IS NOT NULL) AS column_names, \
            \"system\".\"main\".\"list\"(c.data_type ORDER BY c.column_index::INTEGER) FILTER (WHERE c.column_name IS NOT NULL) AS column_types, \
            false AS temporary FROM {tables} AS t LEFT JOIN {columns} AS c ON c.database_name = t.database_name \
            AND c.schema_name = t.schema_name AND c.table_name = t.table_name GROUP BY t.database_name, t.schema_name, \
            t.table_name ORDER BY t.database_name, t.schema_name, t.table_name",
        "show databases" => "SELECT database_name FROM {databases} ORDER BY database_name",
        other => return show::sql(other),
    })
}

/// How the rewritten SQL names this principal to `acl_meta` (a JSON string literal's content).
pub fn principal_arg(p: &Principal) -> String {
    p.to_json()
}

/// The principal `principal_arg` encoded.
pub fn principal_from_arg(arg: &str) -> Result<Principal> {
    Principal::from_json(arg).ok_or_else(|| AclError::internal("a malformed metadata listing argument"))
}

fn sql_string(s: &str) -> String {
    crate::sqltext::literal(s)
}

/// The SQL that stands for metadata relation `name` under `view`, after taking its length from
/// `room` (its printed form is never shorter than the text: `a_relation_prints_no_shorter`).
fn relation_query(view: &View<'_>, name: &'static str, room: &mut super::Room) -> Result<Box<Query>> {
    relation_query_where(view, name, "true", room)
}

/// `relation_query` of a relation whose rows a condition selects (`{filter}`: SQL over the base
/// listing's columns whose names are literals, `show`), put in last so nothing in it is replaced.
fn relation_query_where(view: &View<'_>, name: &'static str, filter: &str, room: &mut super::Room) -> Result<Box<Query>> {
    let template = relation_sql(name).ok_or_else(|| AclError::internal("unknown metadata relation"))?;
    let arg = sql_string(&principal_arg(view.principal));
    let main = view.main_name().map_or("NULL".to_string(), sql_string);
    let sql = fill(template, |hole| match hole {
        "main" => Some(main.clone()),
        "filter" => Some(filter.to_string()),
        kind => metadata_kind(kind).map(|(k, _)| format!("{META_FN}('{k}', {arg})")),
    })?;
    room.take_for_listing(name, sql.len())?;
    Parser::new(&DuckDbDialect {})
        .try_with_sql(&sql)
        .and_then(|mut p| p.parse_query())
        .map_err(|_| AclError::internal("a metadata relation did not parse"))
}

/// `template` with each `{hole}` replaced by `value(hole)`, in one pass over the template: what is
/// put in is never read for holes again. (The principal's argument carries a token's claims,
/// whose text is the issuer's users': a claim `{columns}` replaced a second time would put quotes
/// inside the argument's literal.)
fn fill(template: &str, value: impl Fn(&str) -> Option<String>) -> Result<String> {
    let mut out = String::with_capacity(template.len() + 256);
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let close = rest[open..].find('}').ok_or_else(|| AclError::internal("a metadata relation has an open hole"))? + open;
        out.push_str(&value(&rest[open + 1..close]).ok_or_else(|| AclError::internal("a metadata relation has an unknown hole"))?);
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// The SHOW and PRAGMA statements answered from the listing (`show::form`), as a SELECT.
pub(super) fn is_show(stmt: &Statement) -> bool {
    show::form(stmt).is_some()
}

/// `SHOW TABLES`, `SHOW ALL TABLES`, `SHOW DATABASES` (plain forms).
fn show_kind(stmt: &Statement) -> Option<&'static str> {
    let plain = |o: &ShowStatementOptions| {
        o.show_in.is_none() && o.starts_with.is_none() && o.limit.is_none() && o.limit_from.is_none() && o.filter_position.is_none()
    };
    match stmt {
        Statement::ShowTables { terse: false, history: false, extended: false, full: false, external: false, show_options }
            if plain(show_options) =>
        {
            Some("show tables")
        }
        Statement::ShowDatabases { terse: false, history: false, show_options } if plain(show_options) => {
            Some("show databases")
        }
        Statement::ShowVariable { variable } if variable.len() == 2 => {
            let w: Vec<String> = variable.iter().map(|i| norm(&i.value)).collect();
            (w == ["all", "tables"]).then_some("show all tables")
        }
        _ => None,
    }
}

/// `view_body`: `stmt` is the body of a view, where a listing is refused (`Unsupported::ListingInView`).
pub(super) fn apply(stmt: &mut Statement, view: &View<'_>, decision: &mut Decision, view_body: bool) -> Result<()> {
    if let Some(form) = show::form(stmt) {
        let inner = match form {
            show::Form::Listing(kind) => relation_query(view, kind, &mut decision.room)?,
            show::Form::Where(kind, filter) => {
                let filter = filter.condition(view)?;
                relation_query_where(view, kind, &filter, &mut decision.room)?
            }
        };
        super::supplied::map_supplied(decision, &inner);
        // `SELECT * FROM (<listing>) AS "__acl_p<j>"`: the listing is policy SQL (a region).
        *stmt = Statement::Query(super::slices::listing_subquery(decision, inner));
        return Ok(());
    }
    let ctes = cte_names(stmt);
    let mut m = Meta { view, decision, trusted: Default::default(), view_body, ctes };
    match stmt.walk_mut(&mut m) {
        ControlFlow::Break(e) => Err(e),
        ControlFlow::Continue(()) => Ok(()),
    }
}

fn alias_as(name: &str) -> TableAlias {
    TableAlias { explicit: true, name: Ident::with_quote('"', name), columns: vec![], at: None }
}

struct Meta<'a, 'v> {
    view: &'a View<'v>,
    decision: &'a mut Decision,
    trusted: super::trusted::Trusted,
    /// A view's body: a listing there would be stored, and every listing of the catalog the view
    /// is in would describe the view, whose listing describes the catalog again.
    view_body: bool,
    /// Every CTE name of the statement: a bare `duckdb_tables` that names one is the CTE.
    ctes: std::collections::HashSet<String>,
}

/// The names of every CTE anywhere in `stmt` (folded).
fn cte_names(stmt: &Statement) -> std::collections::HashSet<String> {
    struct Names(std::collections::HashSet<String>);
    impl sqlparser::ast::Visitor for Names {
        type Break = ();
        fn pre_visit_query(&mut self, q: &Query) -> ControlFlow<()> {
            for cte in q.with.iter().flat_map(|w| &w.cte_tables) {
                self.0.insert(norm(&cte.alias.name.value));
            }
            ControlFlow::Continue(())
        }
    }
    let mut names = Names(Default::default());
    let _ = sqlparser::ast::Visit::visit(stmt, &mut names);
    names.0
}

/// Does this FROM item name a metadata relation (answered here, whatever its arguments)?
pub(super) fn is_metadata(tf: &TableFactor) -> bool {
    !matches!(metadata_name(tf), Ok(None))
}

/// The metadata relation a FROM item names, if it names one (in a form answered here).
pub(super) fn listing_name(tf: &TableFactor) -> Option<&'static str> {
    metadata_name(tf).ok().flatten()
}

/// Which metadata relation a FROM item names, if any.
fn metadata_name(tf: &TableFactor) -> Result<Option<&'static str>> {
    let TableFactor::Table { name, args, .. } = tf else { return Ok(None) };
    // Compared in place (ASCII case-insensitively, as `norm` folds): this runs for every FROM
    // item of every never-seen statement, and allocates nothing for the common answer, none.
    let mut parts: [&str; 3] = [""; 3];
    if name.0.len() > parts.len() {
        return Ok(None);
    }
    for (slot, part) in parts.iter_mut().zip(&name.0) {
        // A part that is not an identifier matches no metadata relation.
        let ObjectNamePart::Identifier(i) = part else { return Ok(None) };
        *slot = &i.value;
    }
    let p = &parts[..name.0.len()];
    let is = |s: &str, word: &str| s.eq_ignore_ascii_case(word);
    let among = |s: &str, words: &[&'static str]| words.iter().copied().find(|w| is(s, w));
    use super::parse::cuts::{SHOW_ALL_TABLES, SHOW_DATABASES, SHOW_TABLES};
    const SCHEMA_VIEWS: &[&str] = &["tables", "columns", "schemata"];
    const FUNCTIONS: &[&str] = &["duckdb_tables", "duckdb_columns", "duckdb_schemas", "duckdb_databases", "duckdb_views"];
    let found = match (p, args.is_some()) {
        ([s, t], false) if is(s, "information_schema") => among(t, SCHEMA_VIEWS),
        ([c, s, t], false) if is(c, "system") && is(s, "information_schema") => among(t, SCHEMA_VIEWS),
        // `(SHOW TABLES)` and friends as FROM items (the parser's stand-ins; spec 016)
        ([n], false) if is(n, SHOW_TABLES) => Some("show tables"),
        ([n], false) if is(n, SHOW_ALL_TABLES) => Some("show all tables"),
        ([n], false) if is(n, SHOW_DATABASES) => Some("show databases"),
        // with or without parentheses (`FROM duckdb_tables`), as DuckDB takes them
        ([f], _) => among(f, FUNCTIONS),
        ([s, f], _) if is(s, "main") => among(f, FUNCTIONS),
        ([c, s, f], _) if is(c, "system") && is(s, "main") => among(f, FUNCTIONS),
        _ => None,
    };
    if found.is_some() {
        if let TableFactor::Table { args: Some(a), .. } = tf {
            if !a.args.is_empty() || a.settings.is_some() {
                return Err(BadCall::TakesNoArguments { name: norm(p[p.len() - 1]) }.into());
            }
        }
    }
    Ok(found)
}

impl Meta<'_, '_> {
    fn table_factor(&mut self, tf: &mut TableFactor) -> Result<()> {
        let Some(name) = metadata_name(tf)? else { return Ok(()) };
        // Without parentheses the name is a table's first: a CTE or a virtual object of that
        // name is what it names (`relations` resolves it), as DuckDB prefers a table.
        if let TableFactor::Table { name: written, args: None, .. } = tf {
            if name.starts_with("duckdb_") {
                let parts: Vec<String> =
                    written.0.iter().filter_map(|p| if let ObjectNamePart::Identifier(i) = p { Some(norm(&i.value)) } else { None }).collect();
                let cte = parts.len() == 1 && self.ctes.contains(&parts[0]);
                if cte || self.view.lookup(&parts).ok().flatten().is_some() {
                    return Ok(());
                }
            }
        }
        if self.view_body {
            return Err(Unsupported::ListingInView.into());
        }
        let TableFactor::Table { alias, .. } = tf else { return Ok(()) };
        let alias = alias.take().unwrap_or_else(|| alias_as(name));
        let subquery = relation_query(self.view, name, &mut self.decision.room)?;
        super::supplied::map_supplied(self.decision, &subquery);
        let subquery = super::slices::listing_subquery(self.decision, subquery);
        *tf = TableFactor::Derived { lateral: false, subquery, alias: Some(alias), sample: None };
        Ok(())
    }
}

impl VisitorMut for Meta<'_, '_> {
    type Break = AclError;

    fn pre_visit_query(&mut self, q: &mut Query) -> ControlFlow<AclError> {
        self.trusted.enter(q);
        ControlFlow::Continue(())
    }

    fn post_visit_query(&mut self, _: &mut Query) -> ControlFlow<AclError> {
        self.trusted.leave();
        ControlFlow::Continue(())
    }

    fn pre_visit_table_factor(&mut self, tf: &mut TableFactor) -> ControlFlow<AclError> {
        self.trusted.enter_factor(tf);
        if self.trusted.inside() {
            return ControlFlow::Continue(());
        }
        match self.table_factor(tf) {
            Ok(()) => ControlFlow::Continue(()),
            Err(e) => ControlFlow::Break(e),
        }
    }

    fn post_visit_table_factor(&mut self, _: &mut TableFactor) -> ControlFlow<AclError> {
        self.trusted.leave_factor();
        ControlFlow::Continue(())
    }
}

/// One row of an `acl_meta` listing (every column VARCHAR).
pub type Row = Vec<Option<String>>;

/// Every base listing of one principal, in `KINDS` order.
#[derive(Debug, Default)]
pub struct MetaRows {
    pub databases: Vec<Row>,
    pub schemas: Vec<Row>,
    pub tables: Vec<Row>,
    pub columns: Vec<Row>,
}

impl MetaRows {
    pub fn kind(&self, kind: &str) -> Option<&[Row]> {
        Some(match kind {
            "databases" => &self.databases,
            "schemas" => &self.schemas,
            "tables" => &self.tables,
            "columns" => &self.columns,
            _ => return None,
        })
    }
}

/// The query whose output columns are the object's, as the principal reads it (what `relations`
/// puts in place of `SELECT * FROM <object>`).
pub fn exposed_sql(view: &View<'_>, o: &crate::authz::Listed<'_>) -> Result<Option<String>> {
    let Some(layers) = &o.layers else { return Ok(None) };
    // ENUM columns as the principal reads them (spec 021).
    let sliced = !layers.is_empty() || matches!(o.relation.kind, RelationKind::View(_));
    let varchar = view.policy.enums_of(&o.relation).varchar(sliced);
    Ok(Some(match (&o.relation.kind, layers.is_empty() && !varchar) {
        (RelationKind::Table(p), true) => {
            format!("SELECT * FROM {}.{}.{}", ident(&p.db), ident(&p.schema), ident(&p.name))
        }
        (kind, _) => {
            crate::authz::slices::subquery_as(view, kind, layers, varchar)?.to_string()
        }
    }))
}

/// The columns `(name, type)` of an exposed query, or `None` when it does not bind.
pub type Describe<'a> = dyn FnMut(&str) -> Option<std::sync::Arc<Vec<(String, String)>>> + 'a;
/// The tables and views physical schema `(db, schema)` holds now, or `None` when it cannot be read.
pub type SchemaObjects<'a> = dyn FnMut(&str, &str) -> Option<Vec<(String, ObjectType)>> + 'a;

/// The listing rows of the principal `arg` names, under `policy`. `describe` gives each object's
/// columns (an object whose query does not bind is listed without columns); `schema_objects`
/// enumerates the physical schema behind each virtual schema the listing reaches into.
pub fn listing_rows(
    policy: &Policy,
    arg: &str,
    describe: &mut Describe<'_>,
    schema_objects: &mut SchemaObjects<'_>,
) -> Result<MetaRows> {
    let principal = principal_from_arg(arg)?;
    let view = View::new(policy, &principal)?;
    let listing = view.listing();
    let mut out = MetaRows::default();
    for (c, comment) in &listing.catalogs {
        out.databases.push(vec![Some(c.clone()), comment.clone()]);
    }
    for (c, s) in &listing.schemas {
        let comment = policy.schema_comment(c, s).map(str::to_string);
        out.schemas.push(vec![Some(c.clone()), Some(s.clone()), comment]);
    }
    for o in &listing.objects {
        let exposed = exposed_sql(&view, o)?;
        let cols = exposed.as_deref().and_then(|sql| describe(sql));
        let k = &o.key;
        let names = [k.catalog.as_str(), k.schema.as_str(), k.name.as_str()];
        // An object whose policy SQL no longer binds over its source is listed, marked broken, with
        // no columns (spec 005, "Broken objects"): never DuckDB's error, which names its source.
        let comment = match (&exposed, &cols) {
            (Some(_), None) => Some(broken(o.relation.comment.as_deref())),
            _ => o.relation.comment.clone(),
        };
        out.push(names, o.object_type, comment, cols.as_deref(), o.insertable(), &o.relation.declared);
    }
    // A virtual schema's objects: every table and view its physical schema holds now, under the
    // virtual catalog and schema, RENAME form (physical columns as they are, no comment: the
    // physical object's comment is the operator's, not the policy's).
    for a in &listing.aliases {
        let mut found = schema_objects(&a.target.db, &a.target.schema).unwrap_or_default();
        found.sort_by(|a, b| a.0.cmp(&b.0));
        for (name, object_type) in found {
            // An alias's names have no record of their own: the instance's ENUM exposure, for a
            // table read whole.
            let items = if policy.enum_types.varchar(false) { crate::authz::enums::ENUM_COLUMNS } else { "*" };
            let sql = format!(
                "SELECT {items} FROM {}.{}.{}",
                ident(&a.target.db),
                ident(&a.target.schema),
                ident(&name)
            );
            let cols = describe(&sql);
            let insertable = object_type == ObjectType::Table && a.caps.contains(crate::policy::Caps::INSERT);
            let none = crate::policy::Declared::default();
            let comment = cols.is_none().then(|| broken(None));
            out.push([&a.catalog, &a.schema, &name], object_type, comment, cols.as_deref(), insertable, &none);
        }
    }
    Ok(out)
}

/// What the comment of a broken object says (before the operator's comment, if it has one).
pub const BROKEN: &str = "broken: no longer matches its source; ask an administrator";

fn broken(comment: Option<&str>) -> String {
    match comment {
        Some(c) => format!("{BROKEN} ({c})"),
        None => BROKEN.to_string(),
    }
}

impl MetaRows {
    /// One object's `tables` row and its `columns` rows. What the operator declared (PRIMARY
    /// KEY, NOT NULL, column comments) is shown as declared, never checked against the data.
    fn push(
        &mut self,
        [catalog, schema, name]: [&str; 3],
        object_type: ObjectType,
        comment: Option<String>,
        cols: Option<&Vec<(String, String)>>,
        insertable: bool,
        declared: &crate::policy::Declared,
    ) {
        let table_type = match object_type {
            ObjectType::Table => "BASE TABLE",
            ObjectType::View => "VIEW",
        };
        let names = || [Some(catalog.to_string()), Some(schema.to_string()), Some(name.to_string())];
        let mut row = names().to_vec();
        let sql = match (object_type, cols) {
            (ObjectType::Table, Some(cols)) => Some(show::create_table(schema, name, cols, declared)),
            _ => None,
        };
        row.extend([
            Some(table_type.into()),
            comment,
            cols.map(|c| c.len().to_string()),
            Some(if insertable { "YES" } else { "NO" }.into()),
            Some((!declared.primary_key.is_empty()).to_string()),
            sql,
        ]);
        self.tables.push(row);
        for (i, (column, ty)) in cols.into_iter().flatten().enumerate() {
            let (precision, radix, scale) = numeric(ty);
            let folded = norm(column);
            let comment = declared.column_comments.get(&folded).cloned();
            // A primary key's columns are NOT NULL, as DuckDB lists them.
            let nullable = !declared.not_null.contains(&folded) && !declared.primary_key.contains(&folded);
            let mut row = names().to_vec();
            row.extend([Some(column.clone()), Some((i + 1).to_string()), Some(ty.clone()), precision, radix, scale]);
            let key = declared.primary_key.contains(&folded);
            row.extend([comment, Some(nullable.to_string()), Some(key.to_string())]);
            self.columns.push(row);
        }
    }
}

/// `numeric_precision`, `_radix`, `_scale` as DuckDB reports them for a type.
fn numeric(ty: &str) -> (Option<String>, Option<String>, Option<String>) {
    let bits = match ty {
        "TINYINT" | "UTINYINT" => Some(8),
        "SMALLINT" | "USMALLINT" => Some(16),
        "INTEGER" | "UINTEGER" => Some(32),
        "BIGINT" | "UBIGINT" => Some(64),
        "HUGEINT" | "UHUGEINT" => Some(128),
        "FLOAT" => Some(24),
        "DOUBLE" => Some(53),
        _ => None,
    };
    if let Some(b) = bits {
        return (Some(b.to_string()), Some("2".into()), Some("0".into()));
    }
    if let Some(ps) = ty.strip_prefix("DECIMAL(").and_then(|r| r.strip_suffix(')')) {
        if let Some((p, s)) = ps.split_once(',') {
            return (Some(p.trim().into()), Some("10".into()), Some(s.trim().into()));
        }
    }
    (None, None, None)
}

#[cfg(test)]
mod tests;
