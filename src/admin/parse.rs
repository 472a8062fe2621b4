//! Parser for the management statements, on top of sqlparser's tokenizer and parser helpers
//! (DuckDB dialect), so quoting, comments and string escapes behave exactly as in DuckDB.
use super::{Command, CreateMode};
use crate::error::{AclError, Invalid, Management, Result, Syntax};
use crate::policy::functions::{Access, FnKind};
use crate::policy::{norm, ObjKey, PhysName, DEFAULT_SCHEMA};
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

    pub(super) fn unsupported<T>(&self, what: &str) -> Result<T> {
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
    pub(super) fn refuse_clauses(&self, words: &[&str], ctx: &str) -> Result<()> {
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
            self.alter()
        } else if self.kw(Keyword::ADD) {
            self.add()
        } else if self.kw(Keyword::COMMENT) {
            self.comment_on()
        } else if self.peek_word("map") || self.peek_word("unmap") {
            self.map_claim()
        } else if self.kw(Keyword::CHECK) {
            self.expect_kw(Keyword::VIRTUAL, "VIRTUAL CATALOG after CHECK")?;
            self.expect_kw(Keyword::CATALOG, "CATALOG after CHECK VIRTUAL")?;
            Ok(Command::CheckCatalog { catalog: self.one_part("a catalog name")? })
        } else {
            self.err("CREATE, DROP, ALTER, GRANT or REVOKE")
        }
    }

    fn alter(&mut self) -> Result<Command> {
        if self.kw(Keyword::VIRTUAL) {
            return self.alter_virtual();
        }
        if self.kw(Keyword::ROLE) {
            return self.alter_role();
        }
        if self.word("issuer") {
            return self.alter_issuer();
        }
        if self.kw(Keyword::GRANT) {
            return self.alter_grant();
        }
        if self.p.peek_keyword(Keyword::FUNCTION) {
            return self.alter_function_category();
        }
        if self.resource() {
            return self.alter_resource_group();
        }
        self.err("VIRTUAL, ROLE, ISSUER, GRANT or FUNCTION CATEGORY")
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
                return self.create_virtual_table(mode);
            }
            if self.kw(Keyword::VIEW) {
                let mode = self.create_mode(or_replace)?;
                return self.create_virtual_view(mode);
            }
            if self.word("reference") {
                let mode = self.create_mode(or_replace)?;
                return self.create_reference(mode);
            }
            return self.refuse_kinds("CREATE VIRTUAL", "CATALOG, SCHEMA, TABLE, VIEW, TABLE FUNCTION, SCALAR or REFERENCE");
        }
        if self.kw(Keyword::ROLE) {
            return self.create_role_statement(or_replace);
        }
        if self.word("issuer") {
            return self.create_issuer(or_replace);
        }
        if self.p.peek_keyword(Keyword::FUNCTION) {
            return self.create_function_category(or_replace);
        }
        if self.resource() {
            return self.create_resource_group(or_replace);
        }
        self.err("VIRTUAL, ROLE, ISSUER or FUNCTION CATEGORY")
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
                let cascade = self.kw(Keyword::CASCADE);
                return Ok(Command::DropSchema { catalog, schema, if_exists, cascade });
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
            if self.word("reference") {
                let if_exists = self.if_exists();
                let key = self.virtual_name()?;
                return Ok(Command::DropReference { key, if_exists });
            }
            return self.refuse_kinds("DROP VIRTUAL", "CATALOG, SCHEMA, TABLE, VIEW, TABLE FUNCTION, SCALAR or REFERENCE");
        }
        if self.kw(Keyword::ROLE) {
            let if_exists = self.if_exists();
            let name = self.one_part("a role name")?;
            return Ok(Command::DropRole { name, if_exists });
        }
        if self.word("issuer") {
            return self.drop_issuer();
        }
        if self.resource() {
            return self.drop_resource_group();
        }
        if self.p.peek_keyword(Keyword::FUNCTION) {
            return self.drop_function_category();
        }
        if self.word("map") {
            return self.drop_map();
        }
        // The reference system's `DROP RELATION c.n` (a table or a view) and `DROP REFERENCE`.
        if self.word("relation") {
            let if_exists = self.if_exists();
            let key = self.virtual_name()?;
            return Ok(Command::DropTable { key, if_exists });
        }
        if self.word("reference") {
            let if_exists = self.if_exists();
            let key = self.virtual_name()?;
            return Ok(Command::DropReference { key, if_exists });
        }
        self.err("VIRTUAL, RELATION, ROLE, ISSUER, MAP or FUNCTION CATEGORY")
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

    /// Consumes an unquoted word (case-insensitive) if it is next.
    pub(super) fn word(&mut self, w: &str) -> bool {
        let yes = self.peek_word(w);
        if yes {
            self.p.next_token();
        }
        yes
    }

    pub(super) fn once<T>(&self, slot: &Option<T>, clause: &'static str) -> Result<()> {
        match slot {
            Some(_) => Err(Management::Twice { clause }.into()),
            None => Ok(()),
        }
    }

    /// A string literal (quoting as in DuckDB).
    pub(super) fn string(&mut self, what: &str) -> Result<String> {
        let s = match &self.p.peek_token_ref().token {
            Token::SingleQuotedString(s) | Token::EscapedStringLiteral(s) => s.clone(),
            Token::DollarQuotedString(d) => d.value.clone(),
            _ => return self.err(what),
        };
        self.p.next_token();
        Ok(s)
    }

    pub(super) fn open(&mut self, after: &str) -> Result<()> {
        if !self.p.consume_token(&Token::LParen) {
            return self.err(&format!("'(' after {after}"));
        }
        Ok(())
    }

    /// After an item of a parenthesised list: `true` if another item follows.
    pub(super) fn more(&mut self) -> Result<bool> {
        if self.p.consume_token(&Token::Comma) {
            return Ok(true);
        }
        if self.p.consume_token(&Token::RParen) {
            return Ok(false);
        }
        self.err("',' or ')'")
    }

    /// A string literal if one is next (the legacy quoted forms of lists).
    pub(super) fn maybe_string(&mut self) -> Option<String> {
        let s = match &self.p.peek_token_ref().token {
            Token::SingleQuotedString(s) | Token::EscapedStringLiteral(s) => s.clone(),
            Token::DollarQuotedString(d) => d.value.clone(),
            _ => return None,
        };
        self.p.next_token();
        Some(s)
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

    /// `CREATE [OR REPLACE] VIRTUAL SCHEMA [IF NOT EXISTS] c.s AS|FROM db.schema [COMMENT '…']`:
    /// `AS` a live alias, `FROM` an expansion into one listed object per table and view.
    fn create_virtual_schema(&mut self, or_replace: bool) -> Result<Command> {
        let mode = self.create_mode(or_replace)?;
        let (catalog, schema) = self.schema_name()?;
        let expand = self.kw(Keyword::FROM);
        if !expand {
            self.expect_kw(Keyword::AS, "AS or FROM")?;
        }
        let target = self.phys_schema()?;
        let comment = self.comment()?;
        if expand {
            let how = super::Expansion::Create { source: target, comment, mode };
            return Ok(Command::ExpandSchema { catalog, schema, how, objects: None });
        }
        Ok(Command::CreateSchema { catalog, schema, target, comment, mode })
    }

    /// `db.schema`, spelling kept, checked as a physical source.
    pub(super) fn phys_schema(&mut self) -> Result<(String, String)> {
        let mut parts = self.name("a physical schema name")?;
        if parts.len() != 2 {
            return Err(Invalid::Rule("the physical schema must be db.schema").into());
        }
        let phys_schema = parts.pop().map(|i| i.value).unwrap_or_default();
        let db = parts.pop().map(|i| i.value).unwrap_or_default();
        super::sources::check_schema(&db, &phys_schema)?;
        Ok((db, phys_schema))
    }

    /// `c.s`, normalised.
    pub(super) fn schema_name(&mut self) -> Result<(String, String)> {
        let parts = self.name("a virtual schema name")?;
        match parts.as_slice() {
            [c, s] => Ok((norm(&c.value), norm(&s.value))),
            _ => Err(Invalid::Rule("a virtual schema name must be catalog.schema").into()),
        }
    }

    /// `db.schema.table`, spelling kept: DuckDB resolves it, and it is quoted when emitted.
    pub(super) fn phys_name(&mut self) -> Result<PhysName> {
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
