//! Rule: the type gate (spec 004). DuckDB 2.0 looks every type name up in the catalog, through
//! the search path, like a table: a type someone created (`CREATE TYPE secret_mood AS ENUM
//! (…)`, in the default database or any attached one) would answer `enum_range(NULL::secret_mood)`
//! with its labels, and DuckDB's "Did you mean" names it. Under a principal only DuckDB's
//! built-in types may be named (the host's list, read at load); they cannot be shadowed in
//! DuckDB 2.0, so such a name binds the built-in wherever it is looked up. A qualified type name
//! reaches into some database's catalog and is refused. Runs on the principal's statement only
//! (before any policy SQL is inserted): every cast (`::`, CAST, TRY_CAST), typed literal, nested
//! type (LIST/ARRAY/STRUCT/MAP/UNION elements), CREATE TABLE column and lambda parameter type,
//! and the string arguments some functions read type names from (`make_type`, `from_json`, …).
use crate::sqltext::Walk as _;
use crate::error::{AclError, Result, TypeNotPermitted};
use crate::policy::functions::HostFunctions;
use sqlparser::ast::{
    ArrayElemTypeDef, DataType, Expr, FunctionArg, FunctionArgExpr, FunctionArgumentClause, FunctionArguments, MapBracketKind,
    ObjectNamePart, Statement,
    StructBracketKind, TableFactor, TypeModifier, Visitor,
};
use std::ops::ControlFlow;

/// Multi-word spellings DuckDB's grammar turns into a built-in itself (`DOUBLE PRECISION` →
/// DOUBLE, `CHARACTER VARYING` → VARCHAR, …; see its `CharacterType`, `DoubleType`, `TimeType`,
/// `BitType` rules). Single words are checked against the host's list.
const GRAMMAR_FORMS: &[&str] = &[
    "character",
    "character varying",
    "char varying",
    "national character",
    "national character varying",
    "national char",
    "national char varying",
    "nchar",
    "nchar varying",
    "double precision",
    "bit varying",
    "time with time zone",
    "time without time zone",
    "timestamp with time zone",
    "timestamp without time zone",
];

pub(super) fn check(stmt: &Statement, host: &HostFunctions) -> Result<()> {
    let mut g = Gate { host };
    match stmt.walk(&mut g) {
        ControlFlow::Break(e) => Err(e),
        ControlFlow::Continue(()) => Ok(()),
    }
}

struct Gate<'h> {
    host: &'h HostFunctions,
}

/// One message for every refused type: the name as written (last part only), nothing else.
fn not_permitted(shown: &str) -> AclError {
    TypeNotPermitted::Named { name: shown.to_string() }.into()
}

fn unsupported() -> AclError {
    TypeNotPermitted::Form.into()
}

fn literal_needed(function: &str) -> AclError {
    TypeNotPermitted::NotLiteral { function: function.to_string() }.into()
}

/// The kinds of string arguments that name types.
enum TypeString {
    /// One type name.
    Name,
    /// A JSON structure whose strings are types.
    Json,
    /// A list literal of type strings.
    List,
}

fn string_literal(e: &Expr) -> Option<&str> {
    match e {
        Expr::Value(v) => match &v.value {
            sqlparser::ast::Value::SingleQuotedString(s) | sqlparser::ast::Value::DollarQuotedString(sqlparser::ast::DollarQuotedString { value: s, .. }) => {
                Some(s.as_str())
            }
            _ => None,
        },
        Expr::Nested(inner) => string_literal(inner),
        _ => None,
    }
}

/// The elements of a list literal: `[…]`, or `list_value(…)`, which is how DuckDB's parser
/// reads (and prints) one.
fn list_elements(e: &Expr) -> Option<Vec<&Expr>> {
    match e {
        Expr::Array(a) => Some(a.elem.iter().collect()),
        Expr::Nested(inner) => list_elements(inner),
        Expr::Function(f) if f.name.0.len() == 1 && f.name.to_string().eq_ignore_ascii_case("list_value") => match &f.args {
            FunctionArguments::List(l) if l.duplicate_treatment.is_none() && l.clauses.is_empty() => l
                .args
                .iter()
                .map(|a| match a {
                    FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => Some(e),
                    _ => None,
                })
                .collect(),
            _ => None,
        },
        _ => None,
    }
}

impl Gate<'_> {
    fn data_type(&self, t: &DataType) -> Result<()> {
        match t {
            DataType::Custom(name, modifiers) => {
                let shown = match name.0.last() {
                    Some(ObjectNamePart::Identifier(i)) => i.value.as_str(),
                    _ => return Err(unsupported()),
                };
                match name.0.as_slice() {
                    [ObjectNamePart::Identifier(i)] if self.host.is_builtin_type(&i.value) => {}
                    _ => return Err(not_permitted(shown)),
                }
                // sqlparser keeps `MAP(INT, secret_mood)` as a name with word modifiers, which
                // DuckDB reads as element types: every word must be a built-in type too.
                modifiers.iter().try_for_each(|m| match m {
                    TypeModifier::Identifier(i) => self.leaf(&i.value),
                    TypeModifier::Number(..) | TypeModifier::String(_) => Ok(()),
                })
            }
            DataType::Array(ArrayElemTypeDef::SquareBracket(inner, _)) => self.data_type(inner),
            DataType::Map(k, v, MapBracketKind::Parentheses) => {
                self.data_type(k)?;
                self.data_type(v)
            }
            DataType::Struct(fields, StructBracketKind::Parentheses) => {
                fields.iter().try_for_each(|f| self.data_type(&f.field_type))
            }
            DataType::Union(fields) => fields.iter().try_for_each(|f| self.data_type(&f.field_type)),
            DataType::Collate(inner, _) => self.data_type(inner),
            DataType::Enum(_, None) => self.leaf("enum"),
            // Containers in other dialects' spellings, and forms DuckDB has no use for.
            DataType::Array(_)
            | DataType::Map(..)
            | DataType::Struct(..)
            | DataType::Tuple(_)
            | DataType::Nested(_)
            | DataType::Object(_)
            | DataType::Nullable(_)
            | DataType::LowCardinality(_)
            | DataType::Zerofill(_)
            | DataType::Enum(..)
            | DataType::Set(_)
            | DataType::Table(_)
            | DataType::Trigger
            | DataType::AnyType
            | DataType::Unspecified => Err(unsupported()),
            // A keyword type: what sqlparser prints is what DuckDB's grammar reads.
            leaf => {
                let printed = leaf.to_string().to_ascii_lowercase();
                let base = printed.split(['(', '[']).next().unwrap_or("").trim();
                // `TIMESTAMP(3) WITH TIME ZONE`: the modifier sits inside the spelling.
                let rest = printed.split_once(')').map(|(_, r)| r.trim()).unwrap_or("");
                let spelled = if rest.is_empty() { base.to_string() } else { format!("{base} {rest}") };
                if base.starts_with("interval") {
                    return self.leaf("interval");
                }
                if GRAMMAR_FORMS.contains(&spelled.as_str()) || GRAMMAR_FORMS.contains(&base) {
                    return Ok(());
                }
                self.leaf(base)
            }
        }
    }

    /// Functions that look a type up by a name in a string at bind time, through the same search
    /// path (`TransformStringToLogicalType`): `make_type('t')` (base), the JSON structure of
    /// `from_json`/`json_transform` (json), the signature of `to_aggregate_state` (base). Such an
    /// argument must be a string literal naming built-in types only (a constant expression would
    /// fold to any name).
    fn type_strings(&self, f: &sqlparser::ast::Function, args: &[FunctionArg]) -> Result<()> {
        let name = match f.name.0.last() {
            Some(ObjectNamePart::Identifier(i)) => i.value.to_ascii_lowercase(),
            _ => return Ok(()),
        };
        let (position, kind) = match name.as_str() {
            "make_type" => (0, TypeString::Name),
            "from_json" | "from_json_strict" | "json_transform" | "json_transform_strict" => (1, TypeString::Json),
            "to_aggregate_state" => (2, TypeString::List),
            _ => return Ok(()),
        };
        let Some(arg) = args.get(position) else { return Ok(()) };
        let expr = match arg {
            FunctionArg::Unnamed(FunctionArgExpr::Expr(e))
            | FunctionArg::Named { arg: FunctionArgExpr::Expr(e), .. }
            | FunctionArg::ExprNamed { arg: FunctionArgExpr::Expr(e), .. } => e,
            _ => return Err(literal_needed(&name)),
        };
        match kind {
            TypeString::Name => self.type_name_string(string_literal(expr).ok_or_else(|| literal_needed(&name))?),
            TypeString::Json => {
                let text = string_literal(expr).ok_or_else(|| literal_needed(&name))?;
                match serde_json::from_str::<serde_json::Value>(text) {
                    Ok(structure) => self.json_structure(&structure),
                    Err(_) => Ok(()), // not JSON: DuckDB refuses it without looking anything up
                }
            }
            TypeString::List => list_elements(expr).ok_or_else(|| literal_needed(&name))?.into_iter().try_for_each(|e| {
                match string_literal(e) {
                    Some(t) => self.type_string(t),
                    // `make_type('…')` is checked as a call of its own
                    None if matches!(e, Expr::Function(_)) => Ok(()),
                    None => Err(literal_needed(&name)),
                }
            }),
        }
    }

    /// `make_type`'s name: one built-in type name (DuckDB reads a qualified one too).
    fn type_name_string(&self, text: &str) -> Result<()> {
        self.leaf(text.trim())
    }

    /// A type in DuckDB's syntax, as a string (`'INTEGER[]'`, `'STRUCT(a VARCHAR)'`).
    fn type_string(&self, text: &str) -> Result<()> {
        let parsed = sqlparser::parser::Parser::new(&sqlparser::dialect::DuckDbDialect {})
            .try_with_sql(text)
            .and_then(|mut p| {
                let t = p.parse_data_type()?;
                p.expect_token(&sqlparser::tokenizer::Token::EOF)?;
                Ok(t)
            });
        match parsed {
            Ok(t) => self.data_type(&t),
            Err(_) => Err(not_permitted(text)),
        }
    }

    /// A JSON structure: every string in it is a type.
    fn json_structure(&self, v: &serde_json::Value) -> Result<()> {
        match v {
            serde_json::Value::String(t) => self.type_string(t),
            serde_json::Value::Array(items) => items.iter().try_for_each(|i| self.json_structure(i)),
            serde_json::Value::Object(fields) => fields.values().try_for_each(|f| self.json_structure(f)),
            _ => Ok(()),
        }
    }

    fn leaf(&self, name: &str) -> Result<()> {
        if self.host.is_builtin_type(name) {
            Ok(())
        } else {
            Err(not_permitted(name))
        }
    }
}

impl Visitor for Gate<'_> {
    type Break = AclError;

    fn pre_visit_expr(&mut self, expr: &Expr) -> ControlFlow<AclError> {
        let r = match expr {
            Expr::Cast { data_type, .. } => self.data_type(data_type),
            Expr::TypedString(ts) => self.data_type(&ts.data_type),
            Expr::Convert { data_type: Some(t), .. } => self.data_type(t),
            Expr::Struct { fields, .. } => fields.iter().try_for_each(|f| self.data_type(&f.field_type)),
            Expr::Lambda(l) => l.params.iter().filter_map(|p| p.data_type.as_ref()).try_for_each(|t| self.data_type(t)),
            Expr::Function(f) => match &f.args {
                FunctionArguments::List(l) => l
                    .clauses
                    .iter()
                    .try_for_each(|c| match c {
                        FunctionArgumentClause::JsonReturningClause(r) => self.data_type(&r.data_type),
                        _ => Ok(()),
                    })
                    .and_then(|()| self.type_strings(f, &l.args)),
                _ => Ok(()),
            },
            _ => Ok(()),
        };
        match r {
            Ok(()) => ControlFlow::Continue(()),
            Err(e) => ControlFlow::Break(e),
        }
    }

    fn pre_visit_statement(&mut self, stmt: &Statement) -> ControlFlow<AclError> {
        let r = match stmt {
            Statement::CreateTable(ct) => ct.columns.iter().try_for_each(|c| self.data_type(&c.data_type)),
            Statement::CreateView(cv) => {
                cv.columns.iter().filter_map(|c| c.data_type.as_ref()).try_for_each(|t| self.data_type(t))
            }
            _ => Ok(()),
        };
        match r {
            Ok(()) => ControlFlow::Continue(()),
            Err(e) => ControlFlow::Break(e),
        }
    }

    fn pre_visit_table_factor(&mut self, tf: &TableFactor) -> ControlFlow<AclError> {
        // FROM items that declare column types (JSON_TABLE, OPENJSON, XMLTABLE) are refused by
        // `relations` too; here so that no type in them is ever left unchecked.
        match tf {
            TableFactor::JsonTable { .. } | TableFactor::OpenJsonTable { .. } | TableFactor::XmlTable { .. } => {
                ControlFlow::Break(unsupported())
            }
            _ => ControlFlow::Continue(()),
        }
    }
}

#[cfg(test)]
/// DuckDB 2.0's `duckdb_types()` names of the system database (lower-case, distinct).
pub(crate) const BUILTIN_TYPES: &[&str] = &[
    "json", "array", "bigint", "bignum", "binary", "bit", "bitstring", "blob", "bool", "boolean", "bpchar", "bytea", "char",
    "date", "datetime", "dec", "decimal", "double", "enum", "float", "float4", "float8", "geometry", "guid", "hugeint",
    "int", "int1", "int128", "int16", "int2", "int32", "int4", "int64", "int8", "integer", "integral", "interval", "list",
    "logical", "long", "map", "null", "numeric", "nvarchar", "oid", "real", "row", "short", "signed", "smallint", "string",
    "struct", "text", "time", "time with time zone", "time_ns", "timestamp", "timestamp with time zone", "timestamp_ms",
    "timestamp_ns", "timestamp_s", "timestamp_us", "timestamptz", "timestamptz_ns", "timetz", "tinyint", "tuple", "type",
    "ubigint", "uhugeint", "uint128", "uint16", "uint32", "uint64", "uint8", "uinteger", "union", "usmallint", "utinyint",
    "uuid", "varbinary", "varchar", "variant", "varint",
];

#[cfg(test)]
mod tests {
    use super::*;


    fn run(sql: &str) -> Result<()> {
        let host = HostFunctions::default().with_types(BUILTIN_TYPES.iter().copied());
        check(&super::super::parse_one(sql).unwrap_or_else(|e| panic!("{sql}: {e}")), &host)
    }

    #[test]
    fn builtin_types_pass_in_every_spelling() {
        for sql in [
            "SELECT 1::INT, CAST(1 AS BIGINT), TRY_CAST('1' AS INTEGER), '1'::int8, '1'::hugeint, '1'::uhugeint",
            "SELECT 'a'::VARCHAR(10), 'a'::TEXT, 'a'::STRING, 'a'::CHAR, 'a'::CHARACTER VARYING, 'a'::CHARACTER",
            "SELECT 1::DOUBLE, 1::DOUBLE PRECISION, 1::REAL, 1::FLOAT, 1::FLOAT4, 1::FLOAT8, 1::DECIMAL(10, 2), 1::NUMERIC(3)",
            "SELECT 1::BOOLEAN, 1::BOOL, DATE '2020-01-01', TIMESTAMP '2020-01-01', TIME '01:02:03', INTERVAL '1' DAY",
            "SELECT NULL::TIMESTAMP WITH TIME ZONE, NULL::TIMESTAMPTZ, NULL::TIME WITH TIME ZONE, NULL::TIMESTAMP_NS",
            "SELECT NULL::UUID, NULL::BLOB, NULL::BYTEA, NULL::JSON, NULL::BIT, NULL::INTERVAL, NULL::VARINT",
            "SELECT NULL::INT[], NULL::INT[3], NULL::VARCHAR[][], NULL::STRUCT(a INT, b VARCHAR[]), NULL::MAP(INT, DOUBLE)",
            "SELECT NULL::UNION(a INT, b VARCHAR), (NULL::VARCHAR) COLLATE NOCASE, NULL::\"int\", NULL::ENUM('a', 'b')",
            "CREATE TEMP TABLE t (a INT, b VARCHAR, c STRUCT(x INT)[], d DECIMAL(3, 1) DEFAULT CAST(1 AS DECIMAL(3, 1)))",
            "SELECT 1::TINYINT, 1::UTINYINT, 1::SMALLINT, 1::USMALLINT, 1::UINTEGER, 1::UBIGINT, 1::INT2, 1::INT4",
        ] {
            run(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
        }
    }

    #[test]
    fn user_types_are_refused_wherever_they_stand() {
        for (sql, shown) in [
            ("SELECT NULL::secret_mood", "secret_mood"),
            ("SELECT enum_range(NULL::secret_mood)", "secret_mood"),
            ("SELECT CAST(1 AS secret_mood)", "secret_mood"),
            ("SELECT TRY_CAST(1 AS secret_mood)", "secret_mood"),
            ("SELECT NULL::physdb.main.secret_kind", "secret_kind"),
            ("SELECT NULL::main.secret_kind", "secret_kind"),
            ("SELECT NULL::system.main.int", "int"),
            ("SELECT NULL::secret_mood[]", "secret_mood"),
            ("SELECT NULL::secret_mood[2]", "secret_mood"),
            ("SELECT NULL::STRUCT(a secret_mood)", "secret_mood"),
            ("SELECT NULL::MAP(INT, secret_mood)", "secret_mood"),
            ("SELECT NULL::MAP(secret_mood, INT)", "secret_mood"),
            ("SELECT NULL::LIST(secret_mood)", "secret_mood"),
            ("SELECT NULL::UNION(a INT, b secret_mood)", "secret_mood"),
            ("SELECT NULL::STRUCT(a STRUCT(b secret_mood[]))", "secret_mood"),
            ("SELECT NULL::\"double precision\"", "double precision"),
            ("SELECT NULL::regclass", "regclass"),
            ("SELECT x FROM t WHERE CAST(x AS secret_mood) IS NULL", "secret_mood"),
            ("SELECT (SELECT 1::secret_mood)", "secret_mood"),
            ("CREATE TEMP TABLE t (a secret_mood)", "secret_mood"),
            ("CREATE TEMP TABLE t (a STRUCT(b secret_mood))", "secret_mood"),
            ("CREATE TEMP TABLE t (a INT DEFAULT CAST(1 AS secret_mood))", "secret_mood"),
            ("INSERT INTO t VALUES (1::secret_mood)", "secret_mood"),
            ("UPDATE t SET a = 1::secret_mood", "secret_mood"),
            ("SELECT list_transform([1], lambda x: x::secret_mood)", "secret_mood"),
        ] {
            let e = run(sql).expect_err(sql);
            assert!(matches!(&e, AclError::TypeNotPermitted(TypeNotPermitted::Named { name }) if name == shown), "{sql}: {e:?}");
            let e = e.to_string();
            assert!(!e.contains("physdb") && !e.contains("main"), "{sql}: {e}");
        }
    }

    #[test]
    fn typed_literals_of_user_types_are_refused() {
        // DuckDB reads `secret_mood 'x'` as a typed literal of any type name.
        // sqlparser does not read it as one (it is a syntax refusal), nor with a qualified name.
        for sql in ["SELECT secret_mood 'x'", "SELECT physdb.main.secret_kind 'k1'"] {
            let e = super::super::parse_one(sql).map(|s| check(&s, &HostFunctions::default())).unwrap_err().to_string();
            assert!(e.starts_with("acl: "), "{sql}: {e}");
        }
        // Built-in typed literals pass.
        run("SELECT INTEGER '1', DATE '2020-01-01', TIMESTAMPTZ '2020-01-01', INTERVAL '1 day'").unwrap();
    }

    #[test]
    fn type_names_in_strings_are_gated_too() {
        for (sql, part) in [
            ("SELECT make_type('secret_mood')::VARCHAR", Some("secret_mood")),
            ("SELECT make_type('memory.main.secret_mood')", Some("memory.main.secret_mood")),
            ("SELECT make_type('secret' || '_mood')", None),
            ("SELECT from_json('1', '\"secret_mood\"')", Some("secret_mood")),
            ("SELECT enum_range(from_json('1', '{\"a\": \"secret_mood\"}').a)", Some("secret_mood")),
            ("SELECT json_transform('1', '{\"a\": [\"STRUCT(b secret_mood)\"]}')", Some("secret_mood")),
            ("SELECT json_transform_strict('1', '\"physdb.main.secret_kind\"')", Some("secret_kind")),
            ("SELECT from_json_strict('1', s) FROM t", None),
            ("SELECT to_aggregate_state(NULL, 'max', ['secret_mood'])", Some("secret_mood")),
            ("SELECT to_aggregate_state(NULL, 'max', sig) FROM t", None),
            ("SELECT to_aggregate_state(NULL, 'max', [make_type('secret_mood')])", Some("secret_mood")),
            ("SELECT system.main.make_type('secret_mood')", Some("secret_mood")),
        ] {
            // `Some(name)`: that type is refused; `None`: the argument must be a literal.
            let e = run(sql).expect_err(sql);
            let ok = match part {
                Some(shown) => matches!(&e, AclError::TypeNotPermitted(TypeNotPermitted::Named { name }) if name == shown),
                None => matches!(&e, AclError::TypeNotPermitted(TypeNotPermitted::NotLiteral { .. })),
            };
            assert!(ok, "{sql}: {e:?}");
        }
        for sql in [
            "SELECT make_type('INTEGER'), make_type('decimal', 10, 2)",
            "SELECT from_json('{\"a\": 1}', '{\"a\": \"INTEGER\", \"b\": [\"VARCHAR\"], \"c\": \"STRUCT(x DOUBLE)[]\"}')",
            "SELECT json_transform('[1]', '[\"BIGINT\"]'), from_json('1', 'not json')",
            "SELECT to_aggregate_state(NULL, 'max', ['INTEGER', make_type('VARCHAR')])",
        ] {
            run(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
        }
    }

    #[test]
    fn an_empty_host_list_refuses_every_type() {
        assert!(check(&super::super::parse_one("SELECT 1::INT").unwrap(), &HostFunctions::default()).is_err());
    }
}
