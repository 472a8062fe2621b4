//! Parser for the management statements, on top of sqlparser's tokenizer and parser helpers
//! (DuckDB dialect), so quoting, comments and string escapes behave exactly as in DuckDB.
use super::{Command, CreateMode, ObjectWord};
use crate::error::{AclError, Invalid, Management, Result, Syntax};
use crate::policy::functions::{Access, FnKind};
use crate::policy::{norm, Caps, ObjKey, PhysName, Slice, DEFAULT_SCHEMA};
use sqlparser::ast::Ident;
use sqlparser::dialect::DuckDbDialect;
use sqlparser::keywords::Keyword;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::Token;


/// Parse exactly one management statement (one trailing `;` is tolerated).
pub fn parse(sql: &str) -> Result<Command> {
    let dialect = DuckDbDialect {};
    let parser = Parser::new(&dialect).try_with_sql(sql).map_err(|e| {
        // Tokenizer messages are short and name a position, not the input.
        let mut m = e
            .to_string()
            .replace("sql parser error: ", "")
            .to_lowercase();
        truncate(&mut m, 120);
        AclError::from(Management::Tokenizer(m))
    })?;
    let mut p = P { p: parser };
    let cmd = p.statement()?;
    let _ = p.p.consume_token(&Token::SemiColon);
    if p.p.peek_token_ref().token != Token::EOF {
        return p.err("end of statement");
    }
    Ok(cmd)
}

pub(super) struct P<'a> {
    pub(super) p: Parser<'a>,
}

/// Unquoted words that end a name in our grammar; refusing them as names turns
/// `GRANT CATALOG TO ROLE r` into "expected a catalog name, found TO" instead of a confusing
/// error one token later.
const STOP_WORDS: [Keyword; 6] = [
    Keyword::TO,
    Keyword::FROM,
    Keyword::AS,
    Keyword::WITH,
    Keyword::COMMENT,
    Keyword::CASCADE,
];

impl<'a> P<'a> {
    pub(super) fn err<T>(&self, expected: &str) -> Result<T> {
        let found = describe(&self.p.peek_token_ref().token);
        Err(Management::Expected { expected: expected.to_string(), found }.into())
    }

    fn unsupported<T>(&self, what: &str) -> Result<T> {
        Err(Syntax::NotYet { what: what.to_string() }.into())
    }

    pub(super) fn kw(&mut self, k: Keyword) -> bool {
        self.p.parse_keyword(k)
    }

    pub(super) fn expect_kw(&mut self, k: Keyword, what: &str) -> Result<()> {
        if self.p.expect_keyword(k).is_err() {
            return self.err(what);
        }
        Ok(())
    }

    /// For words sqlparser has no `Keyword` for: an unquoted word, case-insensitive.
    pub(super) fn peek_word(&self, word: &str) -> bool {
        matches!(&self.p.peek_token_ref().token,
            Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(word))
    }

    /// Refuse a clause of the wider surface (RLS, COLUMNS, …) that this version lacks, rather
    /// than calling it trailing garbage.
    fn refuse_clauses(&self, words: &[&str], ctx: &str) -> Result<()> {
        match words.iter().find(|w| self.peek_word(w)) {
            Some(w) => self.unsupported(&format!("{} in {ctx}", w.to_uppercase())),
            None => Ok(()),
        }
    }

    fn statement(&mut self) -> Result<Command> {
        if self.kw(Keyword::CREATE) {
            self.create()
        } else if self.kw(Keyword::DROP) {
            self.drop()
        } else if self.kw(Keyword::GRANT) {
            self.grant()
        } else if self.kw(Keyword::REVOKE) {
            self.revoke()
        } else if self.kw(Keyword::DENY) {
            self.function_grant(Some(Access::Deny))
        } else if self.kw(Keyword::ALTER) {
            self.alter_function_category()
        } else if self.peek_word("map") || self.peek_word("unmap") {
            self.map_claim()
        } else {
            self.err("CREATE, DROP, GRANT or REVOKE")
        }
    }

    fn create(&mut self) -> Result<Command> {
        let or_replace = self.p.parse_keywords(&[Keyword::OR, Keyword::REPLACE]);
        if self.kw(Keyword::VIRTUAL) {
            if self.kw(Keyword::CATALOG) {
                let mode = self.create_mode(or_replace)?;
                let name = self.one_part("a catalog name")?;
                let comment = self.comment()?;
                return Ok(Command::CreateCatalog {
                    name,
                    comment,
                    mode,
                });
            }
            if self.kw(Keyword::SCHEMA) {
                return self.create_virtual_schema(or_replace);
            }
            if self.kw(Keyword::SCALAR) {
                return self.create_virtual_function(or_replace, FnKind::Scalar);
            }
            if self.kw(Keyword::TABLE) {
                if self.kw(Keyword::FUNCTION) {
                    return self.create_virtual_function(or_replace, FnKind::Table);
                }
                let mode = self.create_mode(or_replace)?;
                let key = self.virtual_name()?;
                self.expect_kw(Keyword::AS, "AS")?;
                let target = self.phys_name()?;
                let mut slice = Slice::default();
                super::slice::clauses(&mut self.p, &mut slice)?;
                let comment = self.comment()?;
                super::slice::clauses(&mut self.p, &mut slice)?;
                return Ok(Command::CreateTable {
                    key,
                    target,
                    comment,
                    mode,
                    slice,
                });
            }
            if self.kw(Keyword::VIEW) {
                let mode = self.create_mode(or_replace)?;
                let key = self.virtual_name()?;
                self.expect_kw(Keyword::AS, "AS")?;
                let query = self
                    .p
                    .parse_query()
                    .map_err(|_| AclError::from(Management::Missing { expected: "a query after AS".into() }))?;
                super::sources::check_query(&*query)?;
                let comment = self.comment()?;
                return Ok(Command::CreateView { key, query: query.to_string(), comment, mode });
            }
            return self.refuse_kinds("CREATE VIRTUAL", "CATALOG, TABLE or VIEW");
        }
        if self.kw(Keyword::ROLE) {
            let mode = self.create_mode(or_replace)?;
            let name = self.one_part("a role name")?;
            if let Some(claims) = self.role_claims()? {
                return Ok(Command::CreateRoleWithClaims { name, mode, claims });
            }
            return Ok(Command::CreateRole { name, mode });
        }
        if self.word("issuer") {
            return self.create_issuer(or_replace);
        }
        if self.p.peek_keyword(Keyword::FUNCTION) {
            return self.create_function_category(or_replace);
        }
        self.err("VIRTUAL or ROLE")
    }

    fn drop(&mut self) -> Result<Command> {
        if self.kw(Keyword::VIRTUAL) {
            if self.kw(Keyword::CATALOG) {
                let if_exists = self.if_exists();
                let name = self.one_part("a catalog name")?;
                let cascade = self.kw(Keyword::CASCADE);
                return Ok(Command::DropCatalog {
                    name,
                    if_exists,
                    cascade,
                });
            }
            if self.kw(Keyword::SCHEMA) {
                let if_exists = self.if_exists();
                let (catalog, schema) = self.schema_name()?;
                return Ok(Command::DropSchema { catalog, schema, if_exists });
            }
            if self.kw(Keyword::SCALAR) {
                return self.drop_virtual_function(FnKind::Scalar);
            }
            if self.kw(Keyword::TABLE) {
                if self.kw(Keyword::FUNCTION) {
                    return self.drop_virtual_function(FnKind::Table);
                }
                let if_exists = self.if_exists();
                let key = self.virtual_name()?;
                return Ok(Command::DropTable { key, if_exists });
            }
            if self.kw(Keyword::VIEW) {
                let if_exists = self.if_exists();
                let key = self.virtual_name()?;
                return Ok(Command::DropView { key, if_exists });
            }
            return self.refuse_kinds("DROP VIRTUAL", "CATALOG, TABLE or VIEW");
        }
        if self.kw(Keyword::ROLE) {
            let if_exists = self.if_exists();
            let name = self.one_part("a role name")?;
            return Ok(Command::DropRole { name, if_exists });
        }
        if self.word("issuer") {
            return self.drop_issuer();
        }
        if self.p.peek_keyword(Keyword::FUNCTION) {
            return self.drop_function_category();
        }
        self.err("VIRTUAL or ROLE")
    }

    /// The virtual object kinds of the surface that are not implemented yet.
    fn refuse_kinds<T>(&mut self, ctx: &str, expected: &str) -> Result<T> {
        for (k, w) in [
            (Keyword::VIEW, "VIEW"),
            (Keyword::SCALAR, "SCALAR"),
            (Keyword::FUNCTION, "FUNCTION"),
        ] {
            if self.p.peek_keyword(k) {
                return self.unsupported(&format!("{ctx} {w}"));
            }
        }
        self.err(expected)
    }

    fn grant(&mut self) -> Result<Command> {
        if self.p.peek_keyword(Keyword::FUNCTION) {
            return self.function_grant(Some(Access::Grant));
        }
        if self.kw(Keyword::CATALOG) {
            let catalog = self.one_part("a catalog name")?;
            let role = self.role_after(Keyword::TO, "TO")?;
            let (mut caps, mut main) = (None, false);
            let mut slice = Slice::default();
            loop {
                if super::slice::clauses(&mut self.p, &mut slice)? {
                    continue;
                }
                if self.kw(Keyword::WITH) {
                    if caps.is_some() {
                        return Err(Management::Twice { clause: "WITH" }.into());
                    }
                    caps = Some(
                        self.caps_list()?
                            .into_iter()
                            .fold(Caps::NONE, |a, (_, c)| a.union(c)),
                    );
                } else if self.kw(Keyword::MAIN) {
                    if main {
                        return Err(Management::Twice { clause: "MAIN" }.into());
                    }
                    main = true;
                } else {
                    self.refuse_clauses(&["expires"], "GRANT CATALOG")?;
                    break;
                }
            }
            // A grant that names no capability holds the five data capabilities (§3).
            let caps = caps.unwrap_or(Caps::DATA);
            return Ok(Command::GrantCatalog {
                catalog,
                role,
                caps,
                main,
                slice,
            });
        }
        if self.kw(Keyword::SCHEMA) {
            return self.grant_schema();
        }
        if let Some(word) = self.object_word() {
            let key = self.virtual_name()?;
            let role = self.role_after(Keyword::TO, "TO")?;
            let mut caps = None;
            let mut slice = Slice::default();
            loop {
                if super::slice::clauses(&mut self.p, &mut slice)? {
                    continue;
                }
                if self.kw(Keyword::WITH) {
                    if caps.is_some() {
                        return Err(Management::Twice { clause: "WITH" }.into());
                    }
                    let list = self.caps_list()?;
                    // Explicit-only capabilities live on catalog grants; an object grant refines
                    // data access only. Checked here, where the word the operator typed is known.
                    if let Some((w, _)) = list.iter().find(|(_, c)| c.data() != *c) {
                        return Err(Invalid::CatalogOnly { capability: w.to_string() }.into());
                    }
                    caps = Some(list.into_iter().fold(Caps::NONE, |a, (_, c)| a.union(c)));
                } else if self.p.peek_keyword(Keyword::MAIN) {
                    return Err(Management::MainOutsideCatalogGrant.into());
                } else {
                    self.refuse_clauses(&["expires"], &format!("GRANT {}", word.sql()))?;
                    break;
                }
            }
            return Ok(Command::GrantObject {
                key,
                role,
                caps,
                word,
                slice,
            });
        }
        self.refuse_targets("GRANT")
    }

    fn revoke(&mut self) -> Result<Command> {
        if self.p.peek_keyword(Keyword::FUNCTION) {
            return self.function_grant(None);
        }
        if self.kw(Keyword::CATALOG) {
            let catalog = self.one_part("a catalog name")?;
            let role = self.role_after(Keyword::FROM, "FROM")?;
            return Ok(Command::RevokeCatalog { catalog, role });
        }
        if self.kw(Keyword::SCHEMA) {
            let (catalog, schema) = self.schema_name()?;
            let role = self.role_after(Keyword::FROM, "FROM")?;
            return Ok(Command::RevokeSchema { catalog, schema, role });
        }
        if let Some(word) = self.object_word() {
            let key = self.virtual_name()?;
            let role = self.role_after(Keyword::FROM, "FROM")?;
            return Ok(Command::RevokeObject { key, role, word });
        }
        self.refuse_targets("REVOKE")
    }

    fn object_word(&mut self) -> Option<ObjectWord> {
        match self
            .p
            .parse_one_of_keywords(&[Keyword::TABLE, Keyword::VIEW, Keyword::OBJECT])
        {
            Some(Keyword::TABLE) => Some(ObjectWord::Table),
            Some(Keyword::VIEW) => Some(ObjectWord::View),
            Some(Keyword::OBJECT) => Some(ObjectWord::Object),
            _ => None,
        }
    }

    /// GRANT/REVOKE targets of the surface that are not implemented yet.
    fn refuse_targets<T>(&mut self, verb: &str) -> Result<T> {
        for (k, w) in [
            (Keyword::ADMIN, "ADMIN"),
            (Keyword::FUNCTION, "FUNCTION"),
            (Keyword::RESOURCE, "RESOURCE GROUP"),
        ] {
            if self.p.peek_keyword(k) {
                return self.unsupported(&format!("{verb} {w}"));
            }
        }
        self.err("CATALOG, TABLE, VIEW or OBJECT")
    }

    /// `TO ROLE r` / `FROM ROLE r`.
    fn role_after(&mut self, k: Keyword, what: &str) -> Result<String> {
        self.expect_kw(k, what)?;
        self.expect_kw(Keyword::ROLE, "ROLE")?;
        self.one_part("a role name")
    }

    /// `(cap, …)` after WITH: each word with what it expands to.
    fn caps_list(&mut self) -> Result<Vec<(String, Caps)>> {
        if !self.p.consume_token(&Token::LParen) {
            return self.err("'(' after WITH");
        }
        // A plain loop, not parse_comma_separated: with DuckDB's trailing-comma support that
        // helper ends the list before a reserved word, so `(select, explain)` would stop early.
        let mut words = Vec::new();
        loop {
            match &self.p.peek_token_ref().token {
                Token::Word(w) => words.push(w.value.clone()),
                _ => return self.err("a capability"),
            }
            self.p.next_token();
            if !self.p.consume_token(&Token::Comma) {
                break;
            }
        }
        if !self.p.consume_token(&Token::RParen) {
            return self.err("',' or ')'");
        }
        words
            .into_iter()
            .map(|w| Caps::parse_one(&w).map(|c| (w.to_lowercase(), c)))
            .collect()
    }

    pub(super) fn create_mode(&mut self, or_replace: bool) -> Result<CreateMode> {
        let if_not_exists = self
            .p
            .parse_keywords(&[Keyword::IF, Keyword::NOT, Keyword::EXISTS]);
        match (or_replace, if_not_exists) {
            (true, true) => Err(Management::ReplaceAndIfNotExists.into()),
            (true, false) => Ok(CreateMode::OrReplace),
            (false, true) => Ok(CreateMode::IfNotExists),
            (false, false) => Ok(CreateMode::Create),
        }
    }

    pub(super) fn if_exists(&mut self) -> bool {
        self.p.parse_keywords(&[Keyword::IF, Keyword::EXISTS])
    }

    /// `[COMMENT '…']`
    pub(super) fn comment(&mut self) -> Result<Option<String>> {
        if !self.kw(Keyword::COMMENT) {
            return Ok(None);
        }
        // Only string literals: parse_literal_string would also take a bare word.
        let text = match &self.p.peek_token_ref().token {
            Token::SingleQuotedString(s) | Token::EscapedStringLiteral(s) => s.clone(),
            Token::DollarQuotedString(d) => d.value.clone(),
            _ => return self.err("a string after COMMENT"),
        };
        self.p.next_token();
        Ok(Some(text))
    }

    /// A dotted name of quoted or unquoted identifiers, spelled as written.
    pub(super) fn name(&mut self, what: &str) -> Result<Vec<Ident>> {
        let mut parts = Vec::new();
        loop {
            let ok = match &self.p.peek_token_ref().token {
                Token::Word(w) => w.quote_style.is_some() || !STOP_WORDS.contains(&w.keyword),
                _ => false,
            };
            if !ok {
                return self.err(what);
            }
            let id = self
                .p
                .parse_identifier()
                .map_err(|_| AclError::internal("identifier"))?;
            if id.value.is_empty() {
                return Err(Management::EmptyName.into());
            }
            parts.push(id);
            if !self.p.consume_token(&Token::Period) {
                return Ok(parts);
            }
        }
    }

    pub(super) fn one_part(&mut self, what: &str) -> Result<String> {
        let parts = self.name(what)?;
        if parts.len() != 1 {
            return Err(Management::SinglePart { what: what.to_string() }.into());
        }
        Ok(norm(&parts[0].value))
    }

    /// `c.t` (schema `main`) or `c.s.t`, normalised.
    pub(super) fn virtual_name(&mut self) -> Result<ObjKey> {
        let parts = self.name("a virtual table name")?;
        let v: Vec<String> = parts.iter().map(|i| norm(&i.value)).collect();
        match v.as_slice() {
            [c, t] => Ok(ObjKey {
                catalog: c.clone(),
                schema: DEFAULT_SCHEMA.into(),
                name: t.clone(),
            }),
            [c, s, t] => Ok(ObjKey {
                catalog: c.clone(),
                schema: s.clone(),
                name: t.clone(),
            }),
            _ => Err(Invalid::Rule("a virtual table name must be catalog.table or catalog.schema.table").into()),
        }
    }

    /// `CREATE [OR REPLACE] VIRTUAL SCHEMA [IF NOT EXISTS] c.s AS db.schema [COMMENT '…']`
    fn create_virtual_schema(&mut self, or_replace: bool) -> Result<Command> {
        let mode = self.create_mode(or_replace)?;
        let (catalog, schema) = self.schema_name()?;
        self.expect_kw(Keyword::AS, "AS")?;
        let mut parts = self.name("a physical schema name")?;
        if parts.len() != 2 {
            return Err(Invalid::Rule("the physical schema must be db.schema").into());
        }
        let phys_schema = parts.pop().map(|i| i.value).unwrap_or_default();
        let db = parts.pop().map(|i| i.value).unwrap_or_default();
        super::sources::check_schema(&db, &phys_schema)?;
        let comment = self.comment()?;
        Ok(Command::CreateSchema { catalog, schema, target: (db, phys_schema), comment, mode })
    }

    /// `GRANT SCHEMA c.s TO ROLE r [WITH (caps)]`: data caps, create and drop.
    fn grant_schema(&mut self) -> Result<Command> {
        let (catalog, schema) = self.schema_name()?;
        let role = self.role_after(Keyword::TO, "TO")?;
        let mut caps = Caps::DATA;
        if self.kw(Keyword::WITH) {
            let list = self.caps_list()?;
            let allowed = Caps::DATA.union(Caps::CREATE).union(Caps::DROP);
            if let Some((w, _)) = list.iter().find(|(_, c)| !allowed.contains(*c)) {
                return Err(Invalid::CatalogOnly { capability: w.to_string() }.into());
            }
            caps = list.into_iter().fold(Caps::NONE, |a, (_, c)| a.union(c));
        } else {
            self.refuse_clauses(&["rls", "columns", "expires"], "GRANT SCHEMA")?;
        }
        Ok(Command::GrantSchema { catalog, schema, role, caps })
    }

    /// `c.s`, normalised.
    fn schema_name(&mut self) -> Result<(String, String)> {
        let parts = self.name("a virtual schema name")?;
        match parts.as_slice() {
            [c, s] => Ok((norm(&c.value), norm(&s.value))),
            _ => Err(Invalid::Rule("a virtual schema name must be catalog.schema").into()),
        }
    }

    /// `db.schema.table`, spelling kept: DuckDB resolves it, and it is quoted when emitted.
    fn phys_name(&mut self) -> Result<PhysName> {
        let mut parts = self.name("a physical name")?;
        if parts.len() != 3 {
            return Err(Invalid::Rule("the physical name must be db.schema.table").into());
        }
        let name = parts.pop().map(|i| i.value).unwrap_or_default();
        let schema = parts.pop().map(|i| i.value).unwrap_or_default();
        let db = parts.pop().map(|i| i.value).unwrap_or_default();
        super::sources::check_table(&db, &schema, &name)?;
        Ok(PhysName { db, schema, name })
    }
}

/// A token for an error message, briefly: messages must not echo long input.
fn describe(t: &Token) -> String {
    let mut s = match t {
        Token::EOF => return "end of statement".into(),
        Token::Word(w) if w.quote_style.is_some() => format!("\"{}\"", w.value),
        Token::Word(w) => w.value.clone(),
        Token::Number(..) => return "a number".into(),
        Token::SingleQuotedString(_)
        | Token::DoubleQuotedString(_)
        | Token::EscapedStringLiteral(_)
        | Token::DollarQuotedString(_)
        | Token::NationalStringLiteral(_)
        | Token::HexStringLiteral(_) => return "a string".into(),
        other => format!("'{other}'"),
    };
    truncate(&mut s, 40);
    s
}

fn truncate(s: &mut String, max: usize) {
    if s.chars().count() > max {
        *s = s.chars().take(max).collect::<String>() + "…";
    }
}

#[cfg(test)]
#[path = "parse_tests.rs"]
mod tests;
