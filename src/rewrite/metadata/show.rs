//! The SHOW and PRAGMA statements a principal's listing answers (spec 005, "SHOW and PRAGMA"):
//! `SHOW TABLES [FROM <catalog> | <schema> | <catalog>.<schema>]`, `SHOW ALL TABLES`, `SHOW
//! DATABASES`, `SHOW SCHEMAS`, `PRAGMA show_tables`, `PRAGMA show_tables_expanded`, `PRAGMA
//! show_databases` and `PRAGMA table_info('<table>')`, each in DuckDB v2.0.0's shape. Any other
//! form (another PRAGMA, `SHOW … LIKE`, `SHOW TERSE …`) is no listing and stays refused by the
//! statement gate. A name in them is placed like a table reference; what the principal cannot
//! see is refused with the refusal an unknown name gets, so nothing tells a hidden object from a
//! missing one.
use crate::authz::View;
use crate::error::{NotGranted, Result};
use crate::policy::{norm, Declared};
use crate::sqltext::literal;
use sqlparser::ast::{ObjectName, ObjectNamePart, ShowStatementInClause, ShowStatementOptions, Statement, Value};
use sqlparser::dialect::DuckDbDialect;
use sqlparser::parser::Parser;
use std::fmt::Write as _;

/// The relations of the SHOW and PRAGMA forms beyond `metadata::relation_sql`'s own: SQL over
/// the base listings, `{filter}` a condition `Filter::condition` writes.
pub(super) fn sql(name: &str) -> Option<&'static str> {
    Some(match name {
        "show schemas" => "SELECT database_name, schema_name, (database_name IS NOT DISTINCT FROM {main} \
            AND schema_name = 'main') AS \"current\" FROM {schemas} ORDER BY ALL",
        "show tables from" => "SELECT table_name AS name FROM {tables} WHERE {filter} ORDER BY name",
        "pragma table_info" => "SELECT (column_index::INTEGER - 1)::INTEGER AS cid, column_name AS \"name\", \
            data_type AS \"type\", NOT is_nullable::BOOLEAN AS \"notnull\", NULL::VARCHAR AS dflt_value, \
            primary_key::BOOLEAN AS pk FROM {columns} WHERE {filter} ORDER BY column_index::INTEGER",
        _ => return None,
    })
}

/// A SHOW or PRAGMA statement answered from the listing.
pub(super) enum Form {
    /// One of the relations as it is.
    Listing(&'static str),
    /// A relation whose rows a name written in the statement selects.
    Where(&'static str, Filter),
}

/// The name a SHOW or PRAGMA statement names, as written (parts folded).
pub(super) enum Filter {
    /// `SHOW TABLES FROM x`: a schema of the MAIN catalog, else a catalog; `FROM c.s`.
    Schema(Vec<String>),
    /// `PRAGMA table_info('<name>')`: the text names a table or view as a FROM item would.
    Table(String),
}

pub(super) fn form(stmt: &Statement) -> Option<Form> {
    if let Some(kind) = super::show_kind(stmt) {
        return Some(Form::Listing(kind));
    }
    let plain = |o: &ShowStatementOptions| o.starts_with.is_none() && o.limit.is_none() && o.limit_from.is_none() && o.filter_position.is_none();
    match stmt {
        Statement::ShowSchemas { terse: false, history: false, show_options: o } if plain(o) && o.show_in.is_none() => {
            Some(Form::Listing("show schemas"))
        }
        Statement::ShowTables { terse: false, history: false, extended: false, full: false, external: false, show_options: o }
            if plain(o) =>
        {
            let within = o.show_in.as_ref()?;
            if within.clause != ShowStatementInClause::FROM || within.parent_type.is_some() {
                return None;
            }
            Some(Form::Where("show tables from", Filter::Schema(folded(within.parent_name.as_ref()?)?)))
        }
        Statement::Pragma { name, value, is_eq } => {
            let [ObjectNamePart::Identifier(n)] = name.0.as_slice() else { return None };
            match (norm(&n.value).as_str(), value.as_ref().map(|v| &v.value)) {
                ("show_tables", None) => Some(Form::Listing("show tables")),
                ("show_tables_expanded", None) => Some(Form::Listing("show all tables")),
                ("show_databases", None) => Some(Form::Listing("show databases")),
                ("table_info", Some(Value::SingleQuotedString(t) | Value::DoubleQuotedString(t))) => {
                    let _ = is_eq; // `table_info('t')` and `table_info = 't'` alike
                    Some(Form::Where("pragma table_info", Filter::Table(t.clone())))
                }
                _ => None,
            }
        }
        _ => None,
    }
}

fn folded(name: &ObjectName) -> Option<Vec<String>> {
    name.0
        .iter()
        .map(|p| match p {
            ObjectNamePart::Identifier(i) => Some(norm(&i.value)),
            _ => None,
        })
        .collect()
}

impl Filter {
    /// The condition over the base listing's columns that selects what the name denotes.
    pub(super) fn condition(&self, view: &View<'_>) -> Result<String> {
        match self {
            Filter::Schema(parts) => {
                let listing = view.listing();
                let schema = |c: &str, s: &str| listing.schemas.iter().any(|(a, b)| a == c && b == s);
                let catalog = |c: &str| listing.catalogs.iter().any(|(a, _)| a == c);
                let (c, s) = match parts.as_slice() {
                    [x] => match view.main_name() {
                        Some(m) if schema(m, x) => (m.to_string(), Some(x.clone())),
                        _ if catalog(x) => (x.clone(), None),
                        _ => return Err(not_found()),
                    },
                    [c, s] if schema(c, s) => (c.clone(), Some(s.clone())),
                    _ => return Err(not_found()),
                };
                let mut cond = format!("database_name = {}", literal(&c));
                if let Some(s) = s {
                    let _ = write!(cond, " AND schema_name = {}", literal(&s));
                }
                Ok(cond)
            }
            Filter::Table(text) => {
                // The text is a name as DuckDB reads one from the string (`'c.s.t'`, `'"T"'`).
                let name = Parser::new(&DuckDbDialect {})
                    .try_with_sql(text)
                    .and_then(|mut p| {
                        let n = p.parse_object_name(false)?;
                        p.expect_token(&sqlparser::tokenizer::Token::EOF)?;
                        Ok(n)
                    })
                    .ok()
                    .and_then(|n| folded(&n))
                    .ok_or_else(|| view.not_found(&[text.clone()]))?;
                let resolved = view.resolve(&name)?;
                if resolved.caps.is_empty() {
                    return Err(view.not_found(&name));
                }
                let k = &resolved.key;
                Ok(format!(
                    "database_name = {} AND schema_name = {} AND table_name = {}",
                    literal(&k.catalog),
                    literal(&k.schema),
                    literal(&k.name)
                ))
            }
        }
    }
}

fn not_found() -> crate::error::AclError {
    NotGranted::SchemaOrCatalog.into()
}

/// `duckdb_tables().sql` of a table as the principal sees it: its virtual name (schema-qualified
/// outside `main`, as DuckDB prints it), the columns it reads with their types, the declared
/// NOT NULL columns and the declared PRIMARY KEY when every column of it is shown (a key that
/// names a hidden column is left out rather than naming it).
pub(super) fn create_table(schema: &str, name: &str, cols: &[(String, String)], declared: &Declared) -> String {
    use super::keywords::optionally_quoted as q;
    let mut s = String::from("CREATE TABLE ");
    if schema != crate::policy::DEFAULT_SCHEMA {
        let _ = write!(s, "{}.", q(schema));
    }
    s.push_str(&q(name));
    s.push('(');
    for (i, (col, ty)) in cols.iter().enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        let _ = write!(s, "{} {ty}", q(col));
        if declared.not_null.contains(&norm(col)) {
            s.push_str(" NOT NULL");
        }
    }
    let shown = |k: &String| cols.iter().any(|(c, _)| norm(c) == *k);
    if !declared.primary_key.is_empty() && declared.primary_key.iter().all(shown) {
        let key: Vec<String> = declared
            .primary_key
            .iter()
            .map(|k| cols.iter().find(|(c, _)| norm(c) == *k).map_or_else(|| q(k), |(c, _)| q(c)))
            .collect();
        let _ = write!(s, ", PRIMARY KEY({})", key.join(", "));
    }
    s.push_str(");");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn create_table_prints_as_duckdb_does() {
        let cols = vec![("id".to_string(), "INTEGER".to_string()), ("My Col".to_string(), "DECIMAL(10,2)".to_string())];
        let mut d = Declared::default();
        assert_eq!(create_table("main", "orders", &cols, &d), r#"CREATE TABLE orders(id INTEGER, "My Col" DECIMAL(10,2));"#);
        d.not_null.insert("my col".into());
        d.primary_key = vec!["id".into()];
        assert_eq!(
            create_table("eu", "select", &cols, &d),
            r#"CREATE TABLE eu."select"(id INTEGER, "My Col" DECIMAL(10,2) NOT NULL, PRIMARY KEY(id));"#
        );
        // a key over a hidden column is left out
        d.primary_key = vec!["id".into(), "secret".into()];
        assert!(!create_table("main", "t", &cols, &d).contains("secret"));
    }
}
