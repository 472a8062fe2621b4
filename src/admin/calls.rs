//! The reference system's function API (shared/reference-surface.md, "The function API";
//! spec 007): `acl_grant_catalog(role, vcat, caps, …)` and the other management functions are
//! thin wrappers. Each call becomes the text of the management statement(s) it is the twin of,
//! and those run through `acl_exec`'s path (`engine::admin::call`), so one parser and one set of
//! checks (the anonymous-admin gate, sources, policy SQL, the store guard) judge both spellings.
//!
//! Every argument is untrusted text: names are parsed as names and re-quoted, strings are
//! quoted as literals, and a fragment that stands inside the statement's own parentheses (a
//! parameter list, `ON (…)` pairs) may not leave them, end the statement or start a comment.
//! Each built statement is then parsed alone (`parse` refuses anything after its end).
use crate::error::{AclError, Invalid, Result};
use crate::policy::functions::FnKind;
use crate::sqltext::{ident, literal};
use sqlparser::dialect::DuckDbDialect;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::{Token, Tokenizer, Whitespace};

/// A function of the API: its name, its parameters in order, and how many are required (the
/// rest may be left off or NULL). `cpp/api.cpp` declares the same list as macros. Parameters
/// the reference names with an SQL keyword are renamed (`from_object`, `to_object`,
/// `column_name`, `into_schema`): a macro parameter cannot be called `from`.
pub struct Signature {
    pub name: &'static str,
    pub params: &'static [&'static str],
    pub required: usize,
}

const fn sig(name: &'static str, params: &'static [&'static str], required: usize) -> Signature {
    Signature { name, params, required }
}

/// Every function of the API built here, in the reference's order.
pub const API: &[Signature] = &[
    sig("acl_create_catalog", &["vcat", "comment", "mode"], 1),
    sig("acl_alter_catalog", &["vcat", "comment"], 2),
    sig("acl_drop_catalog", &["vcat", "cascade", "mode"], 1),
    sig("acl_add_relation", &["vcat", "vname", "phys", "columns", "rls", "comment", "mode"], 5),
    sig("acl_add_view", &["vcat", "vname", "sql", "returns", "comment", "mode"], 3),
    sig("acl_alter_relation", &["vcat", "vname", "field", "value"], 4),
    sig("acl_drop_relation", &["vcat", "vname", "mode"], 2),
    sig("acl_add_schema_alias", &["vcat", "path", "phys", "comment", "mode"], 3),
    sig("acl_expand_schema", &["vcat", "path", "phys", "comment", "mode"], 3),
    sig("acl_alter_schema_alias", &["vcat", "path", "phys"], 3),
    sig("acl_refresh_schema_objects", &["vcat", "path", "prune"], 2),
    sig("acl_drop_schema_alias", &["vcat", "path", "mode", "cascade"], 2),
    sig("acl_add_table_function", &["vcat", "vname", "template", "params", "returns", "comment", "mode"], 3),
    sig("acl_add_table_function_alias", &["vcat", "vname", "target", "params", "returns", "comment", "mode"], 3),
    sig("acl_add_scalar", &["vcat", "vname", "template", "params", "returns", "comment", "mode"], 3),
    sig("acl_add_scalar_alias", &["vcat", "vname", "target", "params", "returns", "comment", "mode"], 3),
    sig("acl_drop_function", &["vcat", "vname", "kind", "mode"], 3),
    sig(
        "acl_add_reference",
        &["vcat", "name", "from_object", "to_object", "to_kind", "args", "pairs", "expr", "cardinality", "optional", "join_method", "comment", "mode"],
        4,
    ),
    sig("acl_drop_reference", &["vcat", "name", "mode"], 2),
    sig("acl_comment", &["vcat", "vname", "kind", "column_name", "comment"], 5),
    sig("acl_grant_catalog", &["role", "vcat", "caps", "main", "rls", "columns"], 3),
    sig("acl_alter_grant", &["role", "vcat", "field", "value"], 4),
    sig("acl_revoke_catalog", &["role", "vcat"], 2),
    sig("acl_grant_schema", &["role", "vcat", "path", "caps", "comment", "into_schema", "virtual_only"], 4),
    sig("acl_revoke_schema", &["role", "vcat", "path"], 3),
    sig("acl_grant_object", &["role", "vcat", "vname", "caps", "rls", "columns"], 4),
    sig("acl_grant_admin", &["role", "scope"], 2),
    sig("acl_revoke_admin", &["role"], 1),
    sig("acl_define_role", &["role", "claims", "mode"], 2),
    sig("acl_alter_role", &["role", "claims"], 2),
    sig("acl_drop_role", &["role", "mode"], 1),
    sig("acl_define_issuer", &["issuer", "keys", "audiences", "algs", "role_claim", "claim_map", "jwks_uri"], 6),
    sig("acl_alter_issuer", &["issuer", "field", "value"], 3),
    sig("acl_drop_issuer", &["issuer", "mode"], 1),
    sig("acl_map_role", &["issuer", "source", "external", "role"], 4),
    sig("acl_drop_role_mapping", &["issuer", "source", "external", "role"], 4),
    sig("acl_deny_function", &["name"], 1),
    sig("acl_allow_function", &["name"], 1),
];

/// Required arguments that may be NULL all the same (then omitted).
const NULLABLE: [&str; 6] = ["caps", "keys", "audiences", "algs", "role_claim", "claim_map"];

/// The arguments of one call, read by parameter name.
struct Args<'a> {
    sig: &'a Signature,
    values: &'a [Option<String>],
}

/// A write mode (`mode`): omitted, `''` or `upsert` (the legacy ADD), `replace`, `create`, `skip`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Upsert,
    Replace,
    Create,
    Skip,
}

impl<'a> Args<'a> {
    fn bad(&self, argument: &'static str, problem: &'static str) -> AclError {
        Invalid::CallArgument { function: self.sig.name.to_string(), argument, problem }.into()
    }

    fn index(&self, name: &'static str) -> usize {
        self.sig.params.iter().position(|p| *p == name).unwrap_or(usize::MAX)
    }

    /// The argument, `None` when left off or NULL (an error if it is required).
    fn opt(&self, name: &'static str) -> Result<Option<&'a str>> {
        let i = self.index(name);
        match self.values.get(i).and_then(Option::as_deref) {
            // NULL capabilities are "unspecified", as an empty string is; an issuer's NULL
            // fields take their defaults (the reference: NULL algs → RS256, role_claim → roles).
            None if i < self.sig.required && !NULLABLE.contains(&name) => Err(self.bad(param(self.sig, i), "must not be NULL")),
            v => Ok(v),
        }
    }

    /// A required argument.
    fn req(&self, name: &'static str) -> Result<&'a str> {
        Ok(self.opt(name)?.unwrap_or_default())
    }

    /// An optional argument, `None` also when empty.
    fn given(&self, name: &'static str) -> Result<Option<&'a str>> {
        Ok(self.opt(name)?.filter(|s| !s.trim().is_empty()))
    }

    fn flag(&self, name: &'static str) -> Result<bool> {
        match self.given(name)?.map(|s| s.trim().to_ascii_lowercase()) {
            None => Ok(false),
            Some(s) if s == "true" => Ok(true),
            Some(s) if s == "false" => Ok(false),
            Some(_) => Err(self.bad(param(self.sig, self.index(name)), "must be true or false")),
        }
    }

    fn mode(&self) -> Result<Mode> {
        match self.given("mode")?.map(|s| s.trim().to_ascii_lowercase()).as_deref() {
            None | Some("upsert") => Ok(Mode::Upsert),
            Some("replace") => Ok(Mode::Replace),
            Some("create") => Ok(Mode::Create),
            Some("skip") => Ok(Mode::Skip),
            Some(_) => Err(self.bad("mode", "must be '', upsert, replace, create or skip")),
        }
    }

    /// A one-part name (a role, a catalog, a schema path) is the argument's text itself, quoted
    /// as one identifier; a dotted one is parsed as an SQL name (quotes allowed) and re-quoted
    /// part by part.
    fn name(&self, name: &'static str, parts: std::ops::RangeInclusive<usize>) -> Result<String> {
        let text = self.req(name)?;
        let bad = || self.bad(param(self.sig, self.index(name)), "is not a name of the expected form");
        if parts == (1..=1) {
            return if text.is_empty() { Err(bad()) } else { Ok(ident(text)) };
        }
        let dialect = DuckDbDialect {};
        let mut p = Parser::new(&dialect).try_with_sql(text).map_err(|_| bad())?;
        let n = p.parse_object_name(false).map_err(|_| bad())?;
        if p.peek_token_ref().token != Token::EOF || !parts.contains(&n.0.len()) {
            return Err(bad());
        }
        let quoted: Option<Vec<String>> = n.0.iter().map(|x| x.as_ident().filter(|i| !i.value.is_empty()).map(|i| ident(&i.value))).collect();
        Ok(quoted.ok_or_else(bad)?.join("."))
    }

    /// `vcat` and the in-catalog part `vname` (`n` or `s.n`) as `"c"."s"."n"`.
    fn object(&self, vname: &'static str) -> Result<String> {
        Ok(format!("{}.{}", self.name("vcat", 1..=1)?, self.name(vname, 1..=2)?))
    }

    /// `vcat` and a schema `path` as `"c"."p"`.
    fn schema(&self) -> Result<String> {
        Ok(format!("{}.{}", self.name("vcat", 1..=1)?, self.name("path", 1..=1)?))
    }

    fn role(&self) -> Result<String> {
        self.name("role", 1..=1)
    }

    /// A string argument as a literal.
    fn lit(&self, name: &'static str) -> Result<String> {
        Ok(literal(self.req(name)?))
    }

    /// ` <clause> '<value>'` when the argument is given and not empty.
    fn clause(&self, clause: &str, name: &'static str) -> Result<String> {
        Ok(self.given(name)?.map(|v| format!(" {clause} {}", literal(v))).unwrap_or_default())
    }

    /// A fragment that goes inside the statement's own parentheses, checked to stay there.
    fn fragment(&self, name: &'static str) -> Result<Option<&'a str>> {
        let Some(text) = self.given(name)? else { return Ok(None) };
        let bad = || self.bad(param(self.sig, self.index(name)), "may not close the list it stands in, end the statement or hold a comment");
        let tokens = Tokenizer::new(&DuckDbDialect {}, text).tokenize().map_err(|_| bad())?;
        let mut depth = 0i32;
        for t in &tokens {
            match t {
                Token::LParen => depth += 1,
                Token::RParen if depth == 0 => return Err(bad()),
                Token::RParen => depth -= 1,
                Token::SemiColon => return Err(bad()),
                Token::Whitespace(Whitespace::SingleLineComment { .. } | Whitespace::MultiLineComment(_)) => return Err(bad()),
                _ => {}
            }
        }
        if depth != 0 {
            return Err(bad());
        }
        Ok(Some(text))
    }

    /// A type name alone (a scalar's `returns`), printed back as parsed.
    fn data_type(&self, name: &'static str) -> Result<Option<String>> {
        let Some(text) = self.given(name)? else { return Ok(None) };
        let bad = || self.bad(param(self.sig, self.index(name)), "is not a type name");
        let dialect = DuckDbDialect {};
        let mut p = Parser::new(&dialect).try_with_sql(text).map_err(|_| bad())?;
        let t = p.parse_data_type().map_err(|_| bad())?;
        if p.peek_token_ref().token != Token::EOF {
            return Err(bad());
        }
        Ok(Some(t.to_string()))
    }

    /// The `CREATE …` words of a write mode (`ADD` is the same statement as `OR REPLACE`).
    fn create(&self) -> Result<(&'static str, &'static str)> {
        Ok(match self.mode()? {
            Mode::Upsert | Mode::Replace => ("CREATE OR REPLACE", ""),
            Mode::Create => ("CREATE", ""),
            Mode::Skip => ("CREATE", " IF NOT EXISTS"),
        })
    }

    /// `IF EXISTS` of a drop (`mode` skip).
    fn if_exists(&self) -> Result<&'static str> {
        Ok(if self.mode()? == Mode::Skip { " IF EXISTS" } else { "" })
    }
}

fn param(sig: &Signature, i: usize) -> &'static str {
    sig.params.get(i).copied().unwrap_or("?")
}

/// The management statements a call of `function` with `values` (positional; NULL is `None`)
/// stands for, each to be parsed on its own.
pub fn statements(function: &str, values: &[Option<String>]) -> Result<Vec<String>> {
    let sig = API
        .iter()
        .find(|s| s.name == function)
        .ok_or_else(|| AclError::internal("an acl_* function of the API that is not built"))?;
    if values.len() > sig.params.len() {
        return Err(AclError::internal("more arguments than parameters"));
    }
    // A NUL would end the text wherever a C string carries it: refused, never cut short.
    if let Some(i) = values.iter().position(|v| v.as_deref().is_some_and(|t| t.contains('\0'))) {
        let problem = "holds a NUL character";
        return Err(crate::error::Invalid::CallArgument { function: function.to_string(), argument: sig.params[i], problem }.into());
    }
    let a = Args { sig, values };
    Ok(match function {
        "acl_create_catalog" => {
            let c = a.name("vcat", 1..=1)?;
            match a.mode()? {
                // The legacy upsert keeps the catalog's objects (OR REPLACE would drop them):
                // create it if missing, then set the comment.
                Mode::Upsert => {
                    let mut v = vec![format!("CREATE VIRTUAL CATALOG IF NOT EXISTS {c}")];
                    if let Some(comment) = a.given("comment")? {
                        v.push(format!("COMMENT ON VIRTUAL CATALOG {c} IS {}", literal(comment)));
                    }
                    v
                }
                _ => {
                    let (create, ine) = a.create()?;
                    vec![format!("{create} VIRTUAL CATALOG{ine} {c}{}", a.clause("COMMENT", "comment")?)]
                }
            }
        }
        "acl_alter_catalog" => vec![format!("ALTER VIRTUAL CATALOG {} SET COMMENT {}", a.name("vcat", 1..=1)?, a.lit("comment")?)],
        "acl_drop_catalog" => {
            let cascade = if a.flag("cascade")? { " CASCADE" } else { "" };
            vec![format!("DROP VIRTUAL CATALOG{} {}{cascade}", a.if_exists()?, a.name("vcat", 1..=1)?)]
        }
        "acl_add_relation" => {
            let (create, ine) = a.create()?;
            let (columns, rls) = (a.clause("COLUMNS", "columns")?, a.clause("RLS", "rls")?);
            let (target, phys) = (a.object("vname")?, a.name("phys", 3..=3)?);
            vec![format!("{create} VIRTUAL TABLE{ine} {target} AS {phys}{columns}{rls}{}", a.clause("COMMENT", "comment")?)]
        }
        "acl_add_view" => {
            let (create, ine) = a.create()?;
            let returns = a.fragment("returns")?.map(|r| format!(" ({r})")).unwrap_or_default();
            let target = a.object("vname")?;
            vec![format!("{create} VIRTUAL VIEW{ine} {target}{returns}{} AS {}", a.clause("COMMENT", "comment")?, a.lit("sql")?)]
        }
        "acl_alter_relation" => {
            let target = a.object("vname")?;
            let value = a.req("value")?;
            match a.req("field")?.trim().to_ascii_lowercase().as_str() {
                "phys" => {
                    let phys = Args { sig, values: &[None, None, None, Some(value.to_string())] }.name("value", 3..=3)?;
                    vec![format!("ALTER VIRTUAL TABLE {target} SET PHYS {phys}")]
                }
                "columns" => vec![format!("ALTER VIRTUAL TABLE {target} SET COLUMNS {}", literal(value))],
                "rls" => vec![format!("ALTER VIRTUAL TABLE {target} SET RLS {}", literal(value))],
                "view" => vec![format!("ALTER VIRTUAL VIEW {target} SET AS {}", literal(value))],
                _ => return Err(a.bad("field", "must be phys, columns, rls or view")),
            }
        }
        "acl_drop_relation" => vec![format!("DROP RELATION{} {}", a.if_exists()?, a.object("vname")?)],
        "acl_add_schema_alias" | "acl_expand_schema" => {
            let (create, ine) = a.create()?;
            let how = if function == "acl_add_schema_alias" { "AS" } else { "FROM" };
            let (target, phys) = (a.schema()?, a.name("phys", 2..=2)?);
            vec![format!("{create} VIRTUAL SCHEMA{ine} {target} {how} {phys}{}", a.clause("COMMENT", "comment")?)]
        }
        "acl_alter_schema_alias" => vec![format!("ALTER VIRTUAL SCHEMA {} SET PHYS {}", a.schema()?, a.name("phys", 2..=2)?)],
        "acl_refresh_schema_objects" => {
            let prune = if a.flag("prune")? { " PRUNE" } else { "" };
            vec![format!("ALTER VIRTUAL SCHEMA {} REFRESH{prune}", a.schema()?)]
        }
        "acl_drop_schema_alias" => {
            let cascade = if a.flag("cascade")? { " CASCADE" } else { "" };
            vec![format!("DROP VIRTUAL SCHEMA{} {}{cascade}", a.if_exists()?, a.schema()?)]
        }
        "acl_add_table_function" | "acl_add_table_function_alias" | "acl_add_scalar" | "acl_add_scalar_alias" => {
            let kind = if function.contains("scalar") { FnKind::Scalar } else { FnKind::Table };
            let (create, ine) = a.create()?;
            let target = a.object("vname")?;
            let params = a.fragment("params")?.map(|p| format!("({p})")).unwrap_or_default();
            let returns = match kind {
                FnKind::Scalar => a.data_type("returns")?.map(|t| format!(" RETURNS {t}")),
                FnKind::Table => a.fragment("returns")?.map(|r| format!(" RETURNS TABLE ({r})")),
            }
            .unwrap_or_default();
            let what = if kind == FnKind::Scalar { "SCALAR" } else { "TABLE FUNCTION" };
            let body = if function.ends_with("_alias") {
                format!("ALIAS OF {}", literal(a.req("target")?))
            } else {
                format!("MACRO {}", a.lit("template")?)
            };
            let comment = a.clause("COMMENT", "comment")?;
            vec![format!("{create} VIRTUAL {what}{ine} {target}{params}{returns}{comment} {body}")]
        }
        "acl_drop_function" => {
            let what = match a.req("kind")?.trim().to_ascii_lowercase().as_str() {
                "table" => "TABLE FUNCTION",
                "scalar" => "SCALAR",
                _ => return Err(a.bad("kind", "must be table or scalar")),
            };
            vec![format!("DROP VIRTUAL {what}{} {}", a.if_exists()?, a.object("vname")?)]
        }
        "acl_add_reference" => reference(&a)?,
        "acl_drop_reference" => vec![format!("DROP VIRTUAL REFERENCE{} {}", a.if_exists()?, a.object("name")?)],
        "acl_comment" => {
            let text = a.lit("comment")?;
            let on = match a.req("kind")?.trim().to_ascii_lowercase().as_str() {
                "relation" => match a.given("column_name")? {
                    None => format!("TABLE {}", a.object("vname")?),
                    Some(c) => format!("TABLE {} COLUMN {}", a.object("vname")?, ident(c)),
                },
                "schema" => format!("SCHEMA {}.{}", a.name("vcat", 1..=1)?, a.name("vname", 1..=1)?),
                "table" => format!("TABLE FUNCTION {}", a.object("vname")?),
                "scalar" => format!("SCALAR {}", a.object("vname")?),
                _ => return Err(a.bad("kind", "must be relation, schema, table or scalar")),
            };
            vec![format!("COMMENT ON VIRTUAL {on} IS {text}")]
        }
        "acl_grant_catalog" => {
            let main = if a.flag("main")? { " MAIN" } else { "" };
            let (c, r) = (a.name("vcat", 1..=1)?, a.role()?);
            let slice = format!("{}{}", a.clause("RLS", "rls")?, a.clause("COLUMNS", "columns")?);
            vec![format!("GRANT CATALOG {c} TO ROLE {r}{}{main}{slice}", a.clause("CAPS", "caps")?)]
        }
        "acl_alter_grant" => {
            let (c, r) = (a.name("vcat", 1..=1)?, a.role()?);
            let value = a.req("value")?;
            let set = match a.req("field")?.trim().to_ascii_lowercase().as_str() {
                "caps" => format!("CAPS {}", literal(value)),
                "rls" => format!("RLS {}", literal(value)),
                "columns" => format!("COLUMNS {}", literal(value)),
                "main" => format!("MAIN {}", literal(value)),
                _ => return Err(a.bad("field", "must be caps, rls, columns or main")),
            };
            vec![format!("ALTER GRANT CATALOG {c} TO ROLE {r} SET {set}")]
        }
        "acl_revoke_catalog" => vec![format!("REVOKE CATALOG {} FROM ROLE {}", a.name("vcat", 1..=1)?, a.role()?)],
        "acl_grant_schema" => {
            let (s, r) = (a.schema()?, a.role()?);
            let into = match a.given("into_schema")? {
                Some(_) => format!(" INTO {}", a.name("into_schema", 2..=2)?),
                None => String::new(),
            };
            let only = if a.flag("virtual_only")? { " VIRTUAL ONLY" } else { "" };
            vec![format!("GRANT SCHEMA {s} TO ROLE {r}{}{into}{only}{}", a.clause("CAPS", "caps")?, a.clause("COMMENT", "comment")?)]
        }
        "acl_revoke_schema" => vec![format!("REVOKE SCHEMA {} FROM ROLE {}", a.schema()?, a.role()?)],
        "acl_grant_object" => {
            let (o, r) = (a.object("vname")?, a.role()?);
            let slice = format!("{}{}", a.clause("RLS", "rls")?, a.clause("COLUMNS", "columns")?);
            vec![format!("GRANT OBJECT {o} TO ROLE {r}{}{slice}", a.clause("CAPS", "caps")?)]
        }
        "acl_grant_admin" => {
            let scope = match a.req("scope")?.trim().to_ascii_lowercase().as_str() {
                "manage" => "manage",
                "passthrough" => "passthrough",
                _ => return Err(a.bad("scope", "must be manage or passthrough")),
            };
            vec![format!("GRANT ADMIN {scope} TO ROLE {}", a.role()?)]
        }
        "acl_revoke_admin" => vec![format!("REVOKE ADMIN FROM ROLE {}", a.role()?)],
        "acl_define_role" => {
            let r = a.role()?;
            let claims = literal(a.opt("claims")?.unwrap_or_default());
            match a.mode()? {
                // The legacy upsert keeps the role's grants (OR REPLACE would drop them).
                Mode::Upsert => vec![format!("CREATE ROLE IF NOT EXISTS {r}"), format!("ALTER ROLE {r} SET CLAIMS {claims}")],
                _ => {
                    let (create, ine) = a.create()?;
                    vec![format!("{create} ROLE{ine} {r} CLAIMS {claims}")]
                }
            }
        }
        "acl_alter_role" => vec![format!("ALTER ROLE {} SET CLAIMS {}", a.role()?, a.lit("claims")?)],
        "acl_drop_role" => vec![format!("DROP ROLE{} {}", a.if_exists()?, a.role()?)],
        "acl_define_issuer" => {
            let keys = match (a.given("keys")?, a.given("jwks_uri")?) {
                (Some(k), None) => format!("KEYS {}", literal(k)),
                (None, Some(u)) => format!("KEYS FROM {}", literal(u)),
                _ => return Err(a.bad("keys", "and jwks_uri: exactly one must be given")),
            };
            let rest = [("AUDIENCES", "audiences"), ("ALGS", "algs"), ("ROLE CLAIM", "role_claim"), ("CLAIM MAP", "claim_map")]
                .iter()
                .map(|(c, n)| a.clause(c, n))
                .collect::<Result<String>>()?;
            vec![format!("CREATE OR REPLACE ISSUER {} {keys}{rest}", a.lit("issuer")?)]
        }
        "acl_alter_issuer" => {
            let value = literal(a.req("value")?);
            let set = match a.req("field")?.trim().to_ascii_lowercase().as_str() {
                "keys" => format!("KEYS {value}"),
                "jwks_uri" => format!("KEYS FROM {value}"),
                "audiences" => format!("AUDIENCES {value}"),
                "algs" => format!("ALGS {value}"),
                "role_claim" => format!("ROLE CLAIM {value}"),
                "claim_map" => format!("CLAIM MAP {value}"),
                _ => return Err(a.bad("field", "must be keys, jwks_uri, audiences, algs, role_claim or claim_map")),
            };
            vec![format!("ALTER ISSUER {} SET {set}", a.lit("issuer")?)]
        }
        "acl_drop_issuer" => vec![format!("DROP ISSUER{} {}", a.if_exists()?, a.lit("issuer")?)],
        "acl_map_role" | "acl_drop_role_mapping" => {
            let source = match a.req("source")?.trim().to_ascii_lowercase().as_str() {
                "group" => "GROUP",
                "claim-value" | "claim" => "CLAIM",
                _ => return Err(a.bad("source", "must be group or claim-value")),
            };
            let verb = if function == "acl_map_role" { "MAP" } else { "DROP MAP" };
            vec![format!("{verb} {source} {} FROM ISSUER {} TO ROLE {}", a.lit("external")?, a.lit("issuer")?, a.role()?)]
        }
        "acl_deny_function" | "acl_allow_function" => {
            let verb = if function == "acl_deny_function" { "DENY" } else { "GRANT" };
            vec![format!("{verb} FUNCTION {} TO ALL ROLES", a.name("name", 1..=3)?)]
        }
        _ => return Err(AclError::internal("an acl_* function of the API that is not built")),
    })
}

/// `acl_add_reference(vcat, name, from, to, to_kind, args, pairs, expr, cardinality, optional,
/// join_method, comment, mode)`: the ends are objects of the catalog; what this project's
/// references do not have (a function end, an expression, a join method) is refused by name.
fn reference(a: &Args<'_>) -> Result<Vec<String>> {
    if a.given("to_kind")?.is_some_and(|k| !k.trim().eq_ignore_ascii_case("relation")) || a.given("args")?.is_some() {
        return Err(a.bad("to_kind", "must be relation: a reference here joins two virtual objects"));
    }
    if a.given("expr")?.is_some() {
        return Err(a.bad("expr", "is not supported: a reference is ON (x = y, …) pairs"));
    }
    if a.given("join_method")?.is_some() {
        return Err(a.bad("join_method", "is not supported"));
    }
    let Some(pairs) = a.fragment("pairs")? else { return Err(a.bad("pairs", "must be given: x = y, …")) };
    let (create, ine) = a.create()?;
    let key = a.object("name")?;
    let (from, to) = (a.name("from_object", 1..=3)?, a.name("to_object", 1..=3)?);
    let cardinality = a.clause("CARDINALITY", "cardinality")?;
    let optional = if a.flag("optional")? { " OPTIONAL" } else { "" };
    let comment = a.clause("COMMENT", "comment")?;
    Ok(vec![format!("{create} VIRTUAL REFERENCE{ine} {key} FROM {from} TO {to} ON ({pairs}){cardinality}{optional}{comment}")])
}

#[cfg(test)]
#[path = "calls_tests.rs"]
mod tests;
