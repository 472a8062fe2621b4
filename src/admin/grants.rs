//! Parsing GRANT, REVOKE and ALTER GRANT (surface §3; the reference forms of
//! shared/reference-surface.md): capabilities as `WITH (cap, …)` or `CAPS '<json>'`, which give
//! the same `Caps`. `ALTER GRANT … SET` is applied as the GRANT it amounts to (`alter::resolve`).
use super::parse::P;
use super::slice::{self, Seen};
use super::{Command, GrantOn, GrantSet, ObjectWord};
use crate::error::{Invalid, Management, Result};
use crate::policy::functions::Access;
use crate::policy::{AdminScope, Caps, Slice};
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::Token;

impl P<'_> {
    pub(super) fn grant(&mut self) -> Result<Command> {
        if self.p.peek_keyword(Keyword::FUNCTION) {
            return self.function_grant(Some(Access::Grant));
        }
        if self.resource() {
            return self.grant_resource_group(true);
        }
        if self.kw(Keyword::CATALOG) {
            let catalog = self.one_part("a catalog name")?;
            let role = self.role_after(Keyword::TO, "TO")?;
            let (caps, main, slice) = self.grant_clauses(None)?;
            // A grant that names no capability holds the five data capabilities (§3).
            let caps = caps.map_or(Caps::DATA, fold);
            return Ok(Command::GrantCatalog { catalog, role, caps, main, slice });
        }
        if self.kw(Keyword::SCHEMA) {
            return self.grant_schema();
        }
        if self.kw(Keyword::ADMIN) {
            // `GRANT ADMIN manage|passthrough TO ROLE r` (spec 007, "Administration scopes").
            let scope = match &self.p.peek_token_ref().token {
                Token::Word(w) if w.quote_style.is_none() => AdminScope::parse(&w.value),
                _ => None,
            };
            let Some(scope) = scope else { return self.err("manage or passthrough after GRANT ADMIN") };
            self.p.next_token();
            let role = self.role_after(Keyword::TO, "TO")?;
            return Ok(Command::GrantAdmin { role, scope });
        }
        if let Some(word) = self.object_word() {
            let key = self.virtual_name()?;
            let role = self.role_after(Keyword::TO, "TO")?;
            let (caps, _, slice) = self.grant_clauses(Some(word))?;
            let caps = caps.map(object_caps).transpose()?;
            return Ok(Command::GrantObject { key, role, caps, word, slice });
        }
        self.refuse_targets("GRANT")
    }

    /// The clauses after `GRANT CATALOG|TABLE|VIEW|OBJECT … TO ROLE r`, in any order, each at
    /// most once: capabilities, RLS, COLUMNS and (`object: None`, a catalog grant) MAIN.
    fn grant_clauses(&mut self, object: Option<ObjectWord>) -> Result<(Option<Vec<(String, Caps)>>, bool, Slice)> {
        let (mut caps, mut main) = (None, false);
        let mut slice = Slice::default();
        let mut seen = Seen::default();
        loop {
            if slice::clauses(&mut self.p, &mut slice, None, &mut seen)? {
                continue;
            }
            if let Some(list) = self.capabilities()? {
                if caps.is_some() {
                    return Err(Management::Twice { clause: "WITH or CAPS" }.into());
                }
                caps = Some(list);
            } else if self.p.peek_keyword(Keyword::MAIN) {
                if object.is_some() {
                    return Err(Management::MainOutsideCatalogGrant.into());
                }
                if main {
                    return Err(Management::Twice { clause: "MAIN" }.into());
                }
                self.p.next_token();
                main = true;
            } else {
                let ctx = object.map_or("GRANT CATALOG".to_string(), |w| format!("GRANT {}", w.sql()));
                self.refuse_clauses(&["expires"], &ctx)?;
                return Ok((caps, main, slice));
            }
        }
    }

    /// After `ALTER GRANT`: `CATALOG c | TABLE|VIEW|OBJECT c.n TO ROLE r SET CAPS '…' | WITH (…) |
    /// RLS … | COLUMNS … | MAIN true|false`. One SET per statement.
    pub(super) fn alter_grant(&mut self) -> Result<Command> {
        let on = if self.kw(Keyword::CATALOG) {
            GrantOn::Catalog(self.one_part("a catalog name")?)
        } else if let Some(word) = self.object_word() {
            GrantOn::Object { key: self.virtual_name()?, word }
        } else {
            return self.err("CATALOG, TABLE, VIEW or OBJECT");
        };
        let role = self.role_after(Keyword::TO, "TO")?;
        self.expect_kw(Keyword::SET, "SET")?;
        let catalog = matches!(on, GrantOn::Catalog(_));
        let set = if let Some(list) = self.capabilities()? {
            GrantSet::Caps(if catalog { fold(list) } else { object_caps(list)? })
        } else if self.word("rls") {
            GrantSet::Rls(slice::rls(&mut self.p)?)
        } else if self.word("columns") {
            let c = slice::columns(&mut self.p)?;
            if !c.not_null.is_empty() {
                return Err(Invalid::Rule("NOT NULL is declared on a virtual table's COLUMNS, not on a grant").into());
            }
            GrantSet::Columns(c.columns)
        } else if self.p.peek_keyword(Keyword::MAIN) {
            if !catalog {
                return Err(Management::MainOutsideCatalogGrant.into());
            }
            self.p.next_token();
            GrantSet::Main(self.boolean()?)
        } else {
            return self.err("CAPS, WITH, RLS, COLUMNS or MAIN after SET");
        };
        Ok(Command::AlterGrant { on, role, set })
    }

    /// `true` or `false` (bare or quoted).
    fn boolean(&mut self) -> Result<bool> {
        let v = match &self.p.peek_token_ref().token {
            Token::Word(w) if w.keyword == Keyword::TRUE => true,
            Token::Word(w) if w.keyword == Keyword::FALSE => false,
            Token::SingleQuotedString(s) if s.eq_ignore_ascii_case("true") => true,
            Token::SingleQuotedString(s) if s.eq_ignore_ascii_case("false") => false,
            _ => return self.err("true or false"),
        };
        self.p.next_token();
        Ok(v)
    }

    pub(super) fn revoke(&mut self) -> Result<Command> {
        if self.p.peek_keyword(Keyword::FUNCTION) {
            return self.function_grant(None);
        }
        if self.resource() {
            return self.grant_resource_group(false);
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
        if self.kw(Keyword::ADMIN) {
            // A role holds one scope: REVOKE ADMIN names none.
            let role = self.role_after(Keyword::FROM, "FROM")?;
            return Ok(Command::RevokeAdmin { role });
        }
        if let Some(word) = self.object_word() {
            let key = self.virtual_name()?;
            let role = self.role_after(Keyword::FROM, "FROM")?;
            return Ok(Command::RevokeObject { key, role, word });
        }
        self.refuse_targets("REVOKE")
    }

    pub(super) fn object_word(&mut self) -> Option<ObjectWord> {
        match self.p.parse_one_of_keywords(&[Keyword::TABLE, Keyword::VIEW, Keyword::OBJECT]) {
            Some(Keyword::TABLE) => Some(ObjectWord::Table),
            Some(Keyword::VIEW) => Some(ObjectWord::View),
            Some(Keyword::OBJECT) => Some(ObjectWord::Object),
            _ => None,
        }
    }

    /// GRANT/REVOKE targets of the surface that are not implemented yet.
    fn refuse_targets<T>(&mut self, verb: &str) -> Result<T> {
        for (k, w) in [(Keyword::FUNCTION, "FUNCTION")] {
            if self.p.peek_keyword(k) {
                return self.unsupported(&format!("{verb} {w}"));
            }
        }
        self.err("CATALOG, TABLE, VIEW or OBJECT")
    }

    /// `TO ROLE r` / `FROM ROLE r`.
    pub(super) fn role_after(&mut self, k: Keyword, what: &str) -> Result<String> {
        self.expect_kw(k, what)?;
        self.expect_kw(Keyword::ROLE, "ROLE")?;
        self.one_part("a role name")
    }

    /// `WITH (cap, …)` or `CAPS '<json>'`, if one is next: each capability with the word it was
    /// written as. `CAPS '{}'` is the explicit empty list.
    fn capabilities(&mut self) -> Result<Option<Vec<(String, Caps)>>> {
        if self.kw(Keyword::WITH) {
            return self.caps_list().map(Some);
        }
        if self.word("caps") {
            let text = self.string("a JSON object after CAPS")?;
            return super::lists::caps_json(&text).map(Some);
        }
        Ok(None)
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
        words.into_iter().map(|w| Caps::parse_one(&w).map(|c| (w.to_lowercase(), c))).collect()
    }

    /// `GRANT SCHEMA c.s TO ROLE r [WITH (caps) | CAPS '…'] [INTO db.schema | VIRTUAL ONLY]
    /// [COMMENT '…']` (the clauses in any order, each once): data caps, create and drop.
    fn grant_schema(&mut self) -> Result<Command> {
        let (catalog, schema) = self.schema_name()?;
        let role = self.role_after(Keyword::TO, "TO")?;
        let (mut caps, mut into, mut comment, mut virtual_only) = (None, None, None, false);
        loop {
            if let Some(list) = self.capabilities()? {
                if caps.is_some() {
                    return Err(Management::Twice { clause: "WITH or CAPS" }.into());
                }
                let allowed = Caps::DATA.union(Caps::CREATE).union(Caps::DROP);
                if let Some((w, _)) = list.iter().find(|(_, c)| !allowed.contains(*c)) {
                    return Err(Invalid::CatalogOnly { capability: w.to_string() }.into());
                }
                caps = Some(fold(list));
            } else if self.p.peek_keyword(Keyword::INTO) {
                self.p.next_token();
                self.once(&into, "INTO")?;
                into = Some(self.phys_schema()?);
            } else if self.p.peek_keyword(Keyword::VIRTUAL) {
                self.p.next_token();
                if !self.word("only") {
                    return self.err("ONLY after VIRTUAL");
                }
                if virtual_only {
                    return Err(Management::Twice { clause: "VIRTUAL ONLY" }.into());
                }
                virtual_only = true;
            } else if self.p.peek_keyword(Keyword::COMMENT) {
                self.once(&comment, "COMMENT")?;
                comment = self.comment()?;
            } else {
                self.refuse_clauses(&["rls", "columns", "expires"], "GRANT SCHEMA")?;
                break;
            }
        }
        let mut caps = caps.unwrap_or(Caps::DATA);
        if virtual_only {
            // The role registers what exists: nothing physical is created or dropped for it.
            if into.is_some() {
                return Err(Invalid::Rule("INTO and VIRTUAL ONLY exclude each other: VIRTUAL ONLY creates nothing").into());
            }
            if caps.minus(Caps::CREATE.union(Caps::DROP)) != caps {
                return Err(Invalid::Rule("VIRTUAL ONLY grants no create or drop: nothing physical is created or dropped").into());
            }
            caps = caps.minus(Caps::CREATE.union(Caps::DROP));
        }
        Ok(Command::GrantSchema { catalog, schema, role, caps, into, comment })
    }
}

fn fold(list: Vec<(String, Caps)>) -> Caps {
    list.into_iter().fold(Caps::NONE, |a, (_, c)| a.union(c))
}

/// An object grant's capabilities: explicit-only ones live on catalog grants; an object grant
/// refines data access only. Checked here, where the word the operator typed is known.
fn object_caps(list: Vec<(String, Caps)>) -> Result<Caps> {
    if let Some((w, _)) = list.iter().find(|(_, c)| c.data() != *c) {
        return Err(Invalid::CatalogOnly { capability: w.to_string() }.into());
    }
    Ok(fold(list))
}
