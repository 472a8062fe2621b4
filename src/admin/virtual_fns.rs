//! Parsing virtual function definitions in every spelling (surface §2, shared/reference-surface.md):
//!
//! ```text
//! CREATE [OR REPLACE] VIRTUAL TABLE FUNCTION|SCALAR [IF NOT EXISTS] c.[s.]f[(p TYPE, …)]
//!     [RETURNS [TABLE] (col TYPE, …) | RETURNS TYPE] [COMMENT '…']
//!     AS <body> | MACRO '<body>' | MACRO <body> | ALIAS [OF] fn | ALIAS [OF] '<fn>'  [COMMENT '…']
//! ADD TABLE FUNCTION|SCALAR …   -- the legacy upsert, the same clauses
//! ```
//! Without a parameter list, `AS db.s.fn` (a bare function name) is an alias of that function,
//! and a body's arity is the highest `acl_arg(n)` it uses (its arguments untyped, spec 007).
use super::parse::P;
use super::functions::FnCommand;
use super::Command;
use crate::error::{AclError, Invalid, Management, Result};
use crate::policy::categories::never_callable;
use crate::policy::functions::{FnBody, FnKind, FnName, VirtualFunction};
use crate::policy::norm;
use sqlparser::ast::{CastKind, DataType, Expr, ObjectName, Query, SetExpr, TableFactor};
use sqlparser::keywords::Keyword;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::Token;
use std::sync::Arc;

/// A declared result: `RETURNS TYPE` (scalar) or `RETURNS [TABLE] (col TYPE, …)`.
enum Returns {
    Scalar(DataType),
    Table(Vec<(String, DataType)>),
}

impl P<'_> {
    /// After `CREATE [OR REPLACE] VIRTUAL` and `TABLE FUNCTION` or `SCALAR` (or `ADD`).
    pub(super) fn create_virtual_function(&mut self, or_replace: bool, kind: FnKind) -> Result<Command> {
        let mode = self.create_mode(or_replace)?;
        let key = self.virtual_name()?;
        let params = if self.p.consume_token(&Token::LParen) { Some(self.params()?) } else { None };
        let returns = self.returns(kind)?;
        let mut comment = self.comment()?;
        // `AS <body>`, or the legacy `MACRO '<body>'` / `MACRO <body>` (the same body).
        let quoted = if self.kw(Keyword::AS) || self.word("macro") {
            Some(self.maybe_string())
        } else {
            None
        };
        let (body, text, params) = if let Some(quoted) = quoted {
            // Without a parameter list, `AS db.s.fn` names the function it stands for.
            if params.is_none() && quoted.is_none() {
                if let Some(target) = self.bare_alias()? {
                    refuse_returns(&returns)?;
                    let text = format!("ALIAS OF {target}");
                    (FnBody::Alias(fn_object_name(&target)), text, None)
                } else {
                    self.template(kind, quoted, params)?
                }
            } else {
                self.template(kind, quoted, params)?
            }
        } else if self.word("alias") {
            // `ALIAS OF fn`; the legacy form writes `ALIAS fn`, quoted or not.
            let _ = self.kw(Keyword::OF);
            refuse_returns(&returns)?;
            let target = match self.maybe_string() {
                Some(text) => quoted_function_name(&text)?,
                None => self.function_name()?,
            };
            (FnBody::Alias(fn_object_name(&target)), format!("ALIAS OF {target}"), params)
        } else {
            return self.err("AS, MACRO or ALIAS OF");
        };
        if comment.is_none() {
            comment = self.comment()?;
        }
        let (body, shown) = match returns {
            None => (body, String::new()),
            Some(r) => declare(body, r)?,
        };
        let sig = params.as_ref().filter(|ps| ps.iter().all(|(_, t)| *t != DataType::Unspecified)).map(|ps| {
            let list: Vec<String> = ps.iter().map(|(n, t)| format!("{n} {t}")).collect();
            format!("({})", list.join(", "))
        });
        let sql = format!("{}{}{shown} {text}", key, sig.unwrap_or_default());
        let function = VirtualFunction { params, body: Arc::new(body), sql, comment };
        Ok(Command::Function(FnCommand::CreateVirtual { key, kind, function, mode }))
    }

    /// `RETURNS TYPE` (a scalar) or `RETURNS [TABLE] (col TYPE, …)` (a table function), if next.
    fn returns(&mut self, kind: FnKind) -> Result<Option<Returns>> {
        if !self.word("returns") {
            return Ok(None);
        }
        if kind == FnKind::Scalar {
            let t = self.p.parse_data_type().map_err(|_| self.syntax_err("a type after RETURNS"))?;
            return Ok(Some(Returns::Scalar(t)));
        }
        let _ = self.kw(Keyword::TABLE);
        self.open("RETURNS")?;
        let cols = self.params()?;
        if cols.is_empty() {
            return Err(Management::Missing { expected: "a column after RETURNS TABLE (".into() }.into());
        }
        Ok(Some(Returns::Table(cols)))
    }

    /// Without a parameter list: a bare function name after AS (`db.s.fn`, or one word for a
    /// built-in) followed by the end or COMMENT is an alias, not a body.
    fn bare_alias(&mut self) -> Result<Option<FnName>> {
        let is_name = match &self.p.peek_token_ref().token {
            Token::Word(w) => {
                w.quote_style.is_some()
                    || !matches!(w.keyword, Keyword::SELECT | Keyword::WITH | Keyword::VALUES | Keyword::FROM | Keyword::TABLE)
            }
            _ => false,
        };
        if !is_name {
            return Ok(None);
        }
        // Look ahead on a copy: the name must be all there is.
        let mut i = 0;
        loop {
            match &self.p.peek_nth_token_ref(i).token {
                Token::Word(_) => i += 1,
                _ => return Ok(None),
            }
            match &self.p.peek_nth_token_ref(i).token {
                Token::Period => i += 1,
                Token::EOF | Token::SemiColon => break,
                Token::Word(w) if w.keyword == Keyword::COMMENT && w.quote_style.is_none() => break,
                _ => return Ok(None),
            }
        }
        self.function_name().map(Some)
    }

    /// `AS|MACRO <body>` or `MACRO '<body>'` (`quoted`): the body, its text, and the parameters
    /// (without a declared list, as many untyped ones as the body's highest `acl_arg(n)`).
    fn template(
        &mut self,
        kind: FnKind,
        quoted: Option<String>,
        params: Option<Vec<(String, DataType)>>,
    ) -> Result<(FnBody, String, Option<Vec<(String, DataType)>>)> {
        let what = match kind {
            FnKind::Table => "a query after AS",
            FnKind::Scalar => "an expression after AS",
        };
        let parsed = match &quoted {
            None => body(&mut self.p, kind),
            Some(text) => {
                let dialect = sqlparser::dialect::DuckDbDialect {};
                let mut inner = Parser::new(&dialect)
                    .try_with_sql(text)
                    .map_err(|_| AclError::from(Management::Missing { expected: what.into() }))?;
                let b = body(&mut inner, kind);
                if b.is_ok() && inner.peek_token_ref().token != Token::EOF {
                    return Err(Management::Missing { expected: "the end of the MACRO template".into() }.into());
                }
                b
            }
        };
        let (body, max_arg) = match parsed {
            Ok(b) => b,
            Err(Some(e)) => return Err(e),
            Err(None) if quoted.is_none() => return Err(self.syntax_err(what)),
            Err(None) => return Err(Management::Missing { expected: what.into() }.into()),
        };
        let params = match params {
            Some(ps) if max_arg > ps.len() => {
                return Err(Invalid::ArgumentPastParameters { arg: max_arg, params: ps.len() }.into())
            }
            Some(ps) => ps,
            // The arity is the body's: `acl_arg(1)` … `acl_arg(n)`, passed as given (no cast).
            None => (1..=max_arg).map(|i| (format!("arg{i}"), DataType::Unspecified)).collect(),
        };
        let text = match &body {
            FnBody::Query(q) => q.to_string(),
            FnBody::Expr(e) => e.to_string(),
            FnBody::Alias(n) => n.to_string(),
        };
        Ok((body, format!("AS {text}"), Some(params)))
    }

    /// `p TYPE, …)` — the opening parenthesis is already consumed.
    pub(super) fn params(&mut self) -> Result<Vec<(String, DataType)>> {
        let mut out: Vec<(String, DataType)> = Vec::new();
        if self.p.consume_token(&Token::RParen) {
            return Ok(out);
        }
        loop {
            let name = self.p.parse_identifier().map_err(|_| self.syntax_err("a parameter name"))?;
            let t = self.p.parse_data_type().map_err(|_| self.syntax_err("a parameter type"))?;
            let name = norm(&name.value);
            if out.iter().any(|(n, _)| *n == name) {
                return Err(crate::error::Duplicate::Parameter(name).into());
            }
            out.push((name, t));
            if !self.p.consume_token(&Token::Comma) {
                break;
            }
        }
        if !self.p.consume_token(&Token::RParen) {
            return self.err("',' or ')' in the parameter list");
        }
        Ok(out)
    }
}

fn refuse_returns(r: &Option<Returns>) -> Result<()> {
    match r {
        Some(_) => Err(Invalid::Rule("RETURNS declares the result of an AS body; an ALIAS returns what its function returns").into()),
        None => Ok(()),
    }
}

/// `RETURNS`: a scalar's body is cast to its type; a table function's columns are named and cast
/// by position (`SELECT CAST("a" AS T) AS "a", … FROM (<body>) AS "returns"("a", …)`), as
/// PostgreSQL coerces a SQL function's result to its declared type. Returns the body and the
/// clause as it is shown.
fn declare(body: FnBody, r: Returns) -> Result<(FnBody, String)> {
    match (body, r) {
        (FnBody::Expr(e), Returns::Scalar(t)) => {
            let shown = format!(" RETURNS {t}");
            let cast = Expr::Cast { kind: CastKind::Cast, expr: Box::new(Expr::Nested(Box::new(e))), data_type: t, format: None };
            Ok((FnBody::Expr(cast), shown))
        }
        (FnBody::Query(q), Returns::Table(cols)) => {
            let list: Vec<String> = cols.iter().map(|(n, t)| format!("{n} {t}")).collect();
            let shown = format!(" RETURNS TABLE ({})", list.join(", "));
            let q_ident = |n: &str| crate::sqltext::ident(n);
            let items: Vec<String> = cols.iter().map(|(n, t)| format!("CAST({} AS {t}) AS {}", q_ident(n), q_ident(n))).collect();
            let names: Vec<String> = cols.iter().map(|(n, _)| q_ident(n)).collect();
            let text = format!("SELECT {} FROM (SELECT 1) AS \"returns\"({})", items.join(", "), names.join(", "));
            let dialect = sqlparser::dialect::DuckDbDialect {};
            let mut outer: Box<Query> = Parser::new(&dialect)
                .try_with_sql(&text)
                .and_then(|mut p| p.parse_query())
                .map_err(|_| AclError::internal("could not build the RETURNS query"))?;
            let SetExpr::Select(s) = outer.body.as_mut() else { return Err(AclError::internal("RETURNS query shape")) };
            let Some(TableFactor::Derived { subquery, .. }) = s.from.first_mut().map(|f| &mut f.relation) else {
                return Err(AclError::internal("RETURNS query shape"));
            };
            *subquery = q;
            Ok((FnBody::Query(outer), shown))
        }
        _ => Err(AclError::internal("RETURNS of the other kind")),
    }
}

/// `ALIAS '<fn>'`: the quoted name, parsed as an unquoted one is, and nothing after it.
fn quoted_function_name(text: &str) -> Result<FnName> {
    let dialect = sqlparser::dialect::DuckDbDialect {};
    let parser = Parser::new(&dialect)
        .try_with_sql(text)
        .map_err(|_| AclError::from(Management::Missing { expected: "a function name in the quoted ALIAS".into() }))?;
    let mut inner = P { p: parser };
    let name = inner.function_name()?;
    if inner.p.peek_token_ref().token != Token::EOF {
        return Err(Management::Missing { expected: "the end of the quoted function name".into() }.into());
    }
    Ok(name)
}

/// A virtual function's body at `p`, with the highest `acl_arg(n)` it uses. `Err(None)`: it
/// did not parse (the caller says what was expected).
fn body(p: &mut Parser<'_>, kind: FnKind) -> std::result::Result<(FnBody, usize), Option<AclError>> {
    match kind {
        FnKind::Table => {
            let mut q = p.parse_query().map_err(|_| None)?;
            super::sources::check_query(&*q).map_err(Some)?;
            let n = crate::sqltext::normalise_body(&mut *q, never_callable).map_err(Some)?;
            Ok((FnBody::Query(q), n))
        }
        FnKind::Scalar => {
            let mut e = p.parse_expr().map_err(|_| None)?;
            super::sources::check_query(&e).map_err(Some)?;
            let n = crate::sqltext::normalise_body(&mut e, never_callable).map_err(Some)?;
            Ok((FnBody::Expr(e), n))
        }
    }
}

/// `ALIAS OF fn` with declared parameters: the call `fn(acl_arg(1), …)` (or `SELECT * FROM
/// fn(…)`), so the arguments are cast like any virtual function's. `target` is already qualified.
pub(super) fn alias_body(target: &ObjectName, kind: FnKind, n: usize) -> Result<FnBody> {
    let args: Vec<String> = (1..=n).map(|i| format!("acl_arg({i})")).collect();
    let call = format!("{target}({})", args.join(", "));
    let dialect = sqlparser::dialect::DuckDbDialect {};
    let parser = Parser::new(&dialect).try_with_sql(&match kind {
        FnKind::Scalar => call,
        FnKind::Table => format!("SELECT * FROM {call}"),
    });
    let body = match kind {
        FnKind::Scalar => parser.and_then(|mut p| p.parse_expr()).map(FnBody::Expr),
        FnKind::Table => parser.and_then(|mut p| p.parse_query()).map(FnBody::Query),
    };
    body.map_err(|_| AclError::internal("could not build the alias call"))
}

fn fn_object_name(n: &FnName) -> ObjectName {
    let q = crate::sqltext::quoted;
    match &n.qualifier {
        None => ObjectName::from(vec![q(&n.name)]),
        Some((d, s)) => ObjectName::from(vec![q(d), q(s), q(&n.name)]),
    }
}
