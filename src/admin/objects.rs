//! Parsing virtual tables and views in every spelling (surface §2, shared/reference-surface.md):
//! `CREATE … VIRTUAL TABLE|VIEW`, the legacy upserts `ADD TABLE <phys> AS c.n …` and `ADD VIEW`
//! (= `CREATE OR REPLACE`), `ADD TABLE FUNCTION|SCALAR … MACRO '…'`, and `ALTER VIRTUAL
//! CATALOG|TABLE|VIEW … SET …`. Declared facts (`col NOT NULL`, `PRIMARY KEY (…)`, a view's
//! `(col TYPE, …)`) are kept in `policy::Declared` and never enforced; so is `TYPES (enums = …)`,
//! which is (spec 021).
use super::parse::P;
use super::slice::{self, Seen};
use super::{Command, CommentOn, CreateMode, ObjectWord, TableSet};
use crate::error::{AclError, Duplicate, Invalid, Management, Result};
use crate::policy::functions::FnKind;
use crate::policy::policy_sql::Source;
use crate::policy::{norm, Declared, EnumTypes, ObjKey, PhysName, Slice};
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::Token;

impl P<'_> {
    /// After `CREATE [OR REPLACE] VIRTUAL TABLE [IF NOT EXISTS]`: `c.n AS <phys> …`.
    pub(super) fn create_virtual_table(&mut self, mode: CreateMode) -> Result<Command> {
        let key = self.virtual_name()?;
        self.expect_kw(Keyword::AS, "AS")?;
        let target = self.phys_name()?;
        self.table_clauses(key, target, mode)
    }

    /// `[COLUMNS …] [RLS …] [PRIMARY KEY (…)] [COMMENT '…']`, in any order, each at most once.
    fn table_clauses(&mut self, key: ObjKey, target: PhysName, mode: CreateMode) -> Result<Command> {
        let mut slice = Slice::default();
        let mut declared = Declared::default();
        let mut seen = Seen::default();
        let mut comment = None;
        loop {
            if slice::clauses(&mut self.p, &mut slice, Some(&mut declared.not_null), &mut seen)? {
                continue;
            }
            if self.p.peek_keyword(Keyword::PRIMARY) {
                if !declared.primary_key.is_empty() {
                    return Err(Management::Twice { clause: "PRIMARY KEY" }.into());
                }
                declared.primary_key = self.primary_key()?;
            } else if self.p.peek_keyword(Keyword::COMMENT) {
                if comment.is_some() {
                    return Err(Management::Twice { clause: "COMMENT" }.into());
                }
                comment = self.comment()?;
            } else if self.word("types") {
                if declared.enums.is_some() {
                    return Err(Management::Twice { clause: "TYPES" }.into());
                }
                declared.enums = self.types()?;
            } else {
                break;
            }
        }
        check_declared(&key, slice.columns.as_ref().map(|c| c.iter().map(|c| c.name.as_str()).collect()), &declared)?;
        Ok(Command::CreateTable { key, target, comment, mode, slice, declared })
    }

    /// After `TYPES`: `(enums = sliced | varchar | keep | default)` (a word or a string): how
    /// the object's ENUM columns are shown (spec 021); `default` (`None`) follows
    /// the instance's `acl_enum_types`.
    pub(super) fn types(&mut self) -> Result<Option<EnumTypes>> {
        self.open("TYPES")?;
        if !self.word("enums") {
            return self.err("enums after TYPES (");
        }
        if !self.p.consume_token(&Token::Eq) {
            return self.err("'=' after enums");
        }
        let word = match self.maybe_string() {
            Some(s) => s,
            None => match &self.p.peek_token_ref().token {
                Token::Word(w) => {
                    let v = w.value.clone();
                    self.p.next_token();
                    v
                }
                _ => return self.err("sliced, varchar, keep or default after enums ="),
            },
        };
        let enums = match EnumTypes::parse(word.trim()) {
            Some(e) => Some(e),
            None if word.trim().eq_ignore_ascii_case("default") => None,
            None => return Err(Invalid::Rule("TYPES (enums = …) takes sliced, varchar, keep or default").into()),
        };
        if !self.p.consume_token(&Token::RParen) {
            return self.err("')' after TYPES (enums = …");
        }
        Ok(enums)
    }

    /// `PRIMARY KEY (a, …)` (or the quoted `'a,…'`), names lower-case.
    fn primary_key(&mut self) -> Result<Vec<String>> {
        self.expect_kw(Keyword::PRIMARY, "PRIMARY")?;
        self.expect_kw(Keyword::KEY, "KEY after PRIMARY")?;
        let names = match self.maybe_string() {
            Some(text) => text.split(',').map(|n| norm(n.trim())).collect::<Vec<_>>(),
            None => {
                self.open("PRIMARY KEY")?;
                let mut v = vec![self.one_part("a column name")?];
                while self.more()? {
                    v.push(self.one_part("a column name")?);
                }
                v
            }
        };
        let mut out: Vec<String> = Vec::new();
        for n in names {
            if n.is_empty() {
                return Err(Management::EmptyName.into());
            }
            if out.contains(&n) {
                return Err(Duplicate::Column(n).into());
            }
            out.push(n);
        }
        Ok(out)
    }

    /// After `CREATE [OR REPLACE] VIRTUAL VIEW [IF NOT EXISTS]` (or `ADD VIEW`):
    /// `c.v [(col TYPE [NOT NULL], …)] [PRIMARY KEY (…)] [COMMENT '…'] AS <select> | '<select>' [COMMENT '…']`.
    pub(super) fn create_virtual_view(&mut self, mode: CreateMode) -> Result<Command> {
        let key = self.virtual_name()?;
        let mut declared = Declared::default();
        if self.p.consume_token(&Token::LParen) {
            declared.types = Some(self.view_columns(&mut declared)?);
        }
        if self.p.peek_keyword(Keyword::PRIMARY) {
            declared.primary_key = self.primary_key()?;
        }
        if self.word("types") {
            declared.enums = self.types()?;
        }
        let mut comment = self.comment()?;
        self.expect_kw(Keyword::AS, "AS")?;
        let query = self.view_query()?;
        if comment.is_none() {
            comment = self.comment()?;
        }
        check_declared(&key, declared.types.as_ref().map(|t| t.iter().map(|(n, _)| n.as_str()).collect()), &declared)?;
        Ok(Command::CreateView { key, query, comment, mode, declared })
    }

    /// `col TYPE [NOT NULL | NULL], …)` — the parenthesis is already consumed.
    fn view_columns(&mut self, declared: &mut Declared) -> Result<Vec<(String, String)>> {
        let mut out: Vec<(String, String)> = Vec::new();
        loop {
            let name = self.one_part("a column name")?;
            let ty = self
                .p
                .parse_data_type()
                .map_err(|_| AclError::from(Management::Missing { expected: format!("a type after {name}") }))?;
            if self.p.parse_keywords(&[Keyword::NOT, Keyword::NULL]) {
                declared.not_null.insert(name.clone());
            } else {
                let _ = self.kw(Keyword::NULL);
            }
            if out.iter().any(|(n, _)| *n == name) {
                return Err(Duplicate::Column(name).into());
            }
            out.push((name, ty.to_string()));
            if !self.more()? {
                return Ok(out);
            }
        }
    }

    /// A view's query: as SQL, or the legacy quoted text (parsed the same way). Its sources are
    /// checked (no temp/system/`__acl` names).
    fn view_query(&mut self) -> Result<String> {
        if let Some(text) = self.maybe_string() {
            return quoted_query(&text);
        }
        let q = self.p.parse_query().map_err(|_| missing_query())?;
        super::sources::check_query(&*q)?;
        Ok(q.to_string())
    }

    /// `(db | db.schema | db.schema.table, …)` after `SET SOURCES`; `()` is none. Each is
    /// checked as a physical source (not `temp`, `system` or ours).
    fn sources(&mut self) -> Result<Vec<Source>> {
        self.open("SOURCES")?;
        let mut out: Vec<Source> = Vec::new();
        if self.p.consume_token(&Token::RParen) {
            return Ok(out);
        }
        loop {
            let parts: Vec<String> = self.name("a physical database, schema or table")?.into_iter().map(|i| i.value).collect();
            let source = match parts.as_slice() {
                [db] => Source { db: db.clone(), schema: None, name: None },
                [db, schema] => Source { db: db.clone(), schema: Some(schema.clone()), name: None },
                [db, schema, name] => Source { db: db.clone(), schema: Some(schema.clone()), name: Some(name.clone()) },
                _ => return Err(Invalid::Rule("a source is db, db.schema or db.schema.table").into()),
            };
            super::sources::check_table(&source.db, source.schema.as_deref().unwrap_or(""), source.name.as_deref().unwrap_or(""))?;
            if out.contains(&source) {
                return Err(Duplicate::Source(source.to_string()).into());
            }
            out.push(source);
            if !self.more()? {
                return Ok(out);
            }
        }
    }

    /// After `ADD`: the legacy upserts.
    pub(super) fn add(&mut self) -> Result<Command> {
        if self.kw(Keyword::SCALAR) {
            return self.create_virtual_function(true, FnKind::Scalar);
        }
        if self.kw(Keyword::TABLE) {
            if self.kw(Keyword::FUNCTION) {
                return self.create_virtual_function(true, FnKind::Table);
            }
            // `ADD TABLE <phys> AS c.n …`
            let target = self.phys_name()?;
            self.expect_kw(Keyword::AS, "AS")?;
            let key = self.virtual_name()?;
            return self.table_clauses(key, target, CreateMode::OrReplace);
        }
        if self.kw(Keyword::VIEW) {
            // `ADD VIEW '<select>' AS c.n` (as ADD TABLE puts the source first) …
            if let Some(text) = self.maybe_string() {
                self.expect_kw(Keyword::AS, "AS")?;
                let key = self.virtual_name()?;
                let query = quoted_query(&text)?;
                let comment = self.comment()?;
                return Ok(Command::CreateView { key, query, comment, mode: CreateMode::OrReplace, declared: Declared::default() });
            }
            // … or `ADD VIEW c.n [(…)] AS <select>`, as CREATE writes it.
            return self.create_virtual_view(CreateMode::OrReplace);
        }
        if self.kw(Keyword::SCHEMA) {
            // `ADD SCHEMA <db.schema> AS c.s [COMMENT '…']`: `CREATE OR REPLACE VIRTUAL SCHEMA … AS`.
            let target = self.phys_schema()?;
            self.expect_kw(Keyword::AS, "AS")?;
            let (catalog, schema) = self.schema_name()?;
            let comment = self.comment()?;
            return Ok(Command::CreateSchema { catalog, schema, target, comment, mode: CreateMode::OrReplace });
        }
        self.err("TABLE, VIEW, SCHEMA, TABLE FUNCTION or SCALAR after ADD")
    }

    /// After `ALTER VIRTUAL`.
    pub(super) fn alter_virtual(&mut self) -> Result<Command> {
        if self.kw(Keyword::CATALOG) {
            let name = self.one_part("a catalog name")?;
            self.expect_kw(Keyword::SET, "SET")?;
            if self.word("sources") {
                return Ok(Command::SetSources { catalog: name, sources: self.sources()? });
            }
            let text = self.set_comment()?;
            return Ok(Command::Comment { on: CommentOn::Catalog(name), text });
        }
        if self.kw(Keyword::SCHEMA) {
            let (catalog, schema) = self.schema_name()?;
            if self.word("refresh") {
                let prune = self.word("prune");
                let how = super::Expansion::Refresh { prune };
                return Ok(Command::ExpandSchema { catalog, schema, how, objects: None });
            }
            self.expect_kw(Keyword::SET, "SET PHYS or REFRESH")?;
            if self.p.peek_keyword(Keyword::COMMENT) {
                let text = self.set_comment()?;
                return Ok(Command::Comment { on: CommentOn::Schema(catalog, schema), text });
            }
            if !self.word("phys") {
                return self.err("PHYS or COMMENT after SET");
            }
            let target = self.phys_schema()?;
            return Ok(Command::AlterSchemaPhys { catalog, schema, target });
        }
        if self.kw(Keyword::TABLE) {
            let key = self.virtual_name()?;
            if self.kw(Keyword::DROP) {
                self.expect_kw(Keyword::PRIMARY, "PRIMARY KEY after DROP")?;
                self.expect_kw(Keyword::KEY, "KEY after PRIMARY")?;
                return Ok(Command::AlterTable { key, set: TableSet::PrimaryKey(Vec::new()) });
            }
            self.expect_kw(Keyword::SET, "SET or DROP")?;
            let set = if self.word("phys") {
                TableSet::Phys(self.phys_name()?)
            } else if self.word("columns") {
                let c = slice::columns(&mut self.p)?;
                TableSet::Columns { columns: c.columns, not_null: c.not_null }
            } else if self.word("rls") {
                TableSet::Rls(slice::rls(&mut self.p)?)
            } else if self.p.peek_keyword(Keyword::PRIMARY) {
                TableSet::PrimaryKey(self.primary_key()?)
            } else if self.p.peek_keyword(Keyword::COMMENT) {
                let text = self.set_comment()?;
                return Ok(Command::Comment { on: CommentOn::Object { key, word: ObjectWord::Table }, text });
            } else if self.word("types") {
                return Ok(Command::AlterTypes { key, word: ObjectWord::Table, enums: self.types()? });
            } else {
                return self.err("PHYS, COLUMNS, RLS, PRIMARY KEY, TYPES or COMMENT after SET");
            };
            return Ok(Command::AlterTable { key, set });
        }
        if self.kw(Keyword::VIEW) {
            let key = self.virtual_name()?;
            self.expect_kw(Keyword::SET, "SET")?;
            if self.p.peek_keyword(Keyword::COMMENT) {
                let text = self.set_comment()?;
                return Ok(Command::Comment { on: CommentOn::Object { key, word: ObjectWord::View }, text });
            }
            if self.word("types") {
                return Ok(Command::AlterTypes { key, word: ObjectWord::View, enums: self.types()? });
            }
            self.expect_kw(Keyword::AS, "AS, TYPES or COMMENT after SET")?;
            let query = self.view_query()?;
            return Ok(Command::AlterView { key, query });
        }
        self.err("CATALOG, SCHEMA, TABLE or VIEW")
    }

    /// `COMMENT '…'` after SET (`COMMENT NULL` clears it).
    fn set_comment(&mut self) -> Result<Option<String>> {
        if self.p.parse_keywords(&[Keyword::COMMENT, Keyword::NULL]) {
            return Ok(None);
        }
        match self.comment()? {
            Some(c) => Ok(Some(c)),
            None => self.err("COMMENT"),
        }
    }

    /// After `COMMENT`: `ON VIRTUAL CATALOG|SCHEMA|TABLE|VIEW|TABLE FUNCTION|SCALAR <name>
    /// [COLUMN x] IS '…' | NULL`.
    pub(super) fn comment_on(&mut self) -> Result<Command> {
        self.expect_kw(Keyword::ON, "ON")?;
        self.expect_kw(Keyword::VIRTUAL, "VIRTUAL")?;
        let on = if self.kw(Keyword::CATALOG) {
            CommentOn::Catalog(self.one_part("a catalog name")?)
        } else if self.kw(Keyword::SCHEMA) {
            let (c, s) = self.schema_name()?;
            CommentOn::Schema(c, s)
        } else if self.kw(Keyword::SCALAR) {
            CommentOn::Function { key: self.virtual_name()?, kind: FnKind::Scalar }
        } else if self.kw(Keyword::TABLE) {
            if self.kw(Keyword::FUNCTION) {
                CommentOn::Function { key: self.virtual_name()?, kind: FnKind::Table }
            } else {
                self.object_comment(ObjectWord::Table)?
            }
        } else if self.kw(Keyword::VIEW) {
            self.object_comment(ObjectWord::View)?
        } else {
            return self.err("CATALOG, SCHEMA, TABLE, VIEW, TABLE FUNCTION or SCALAR");
        };
        self.expect_kw(Keyword::IS, "IS")?;
        let text = if self.kw(Keyword::NULL) { None } else { Some(self.string("a string or NULL after IS")?) };
        Ok(Command::Comment { on, text })
    }

    fn object_comment(&mut self, word: ObjectWord) -> Result<CommentOn> {
        let key = self.virtual_name()?;
        if self.kw(Keyword::COLUMN) {
            let column = self.one_part("a column name")?;
            return Ok(CommentOn::Column { key, word, column });
        }
        Ok(CommentOn::Object { key, word })
    }
}

fn missing_query() -> AclError {
    Management::Missing { expected: "a query after AS".into() }.into()
}

/// A quoted query's text, parsed, checked and printed as an unquoted one is.
fn quoted_query(text: &str) -> Result<String> {
    let dialect = sqlparser::dialect::DuckDbDialect {};
    let mut inner = sqlparser::parser::Parser::new(&dialect).try_with_sql(text).map_err(|_| missing_query())?;
    let q = inner.parse_query().map_err(|_| missing_query())?;
    let _ = inner.consume_token(&Token::SemiColon);
    if inner.peek_token_ref().token != Token::EOF {
        return Err(Management::Missing { expected: "the end of the quoted query".into() }.into());
    }
    super::sources::check_query(&*q)?;
    Ok(q.to_string())
}

/// What can be checked without the physical catalog: declared names are columns the object
/// lists (when it lists them); the rest is checked by binding (`validate`).
pub(super) fn check_declared(key: &ObjKey, listed: Option<Vec<&str>>, d: &Declared) -> Result<()> {
    let Some(listed) = listed else { return Ok(()) };
    for c in d.primary_key.iter().chain(&d.not_null) {
        if !listed.contains(&c.as_str()) {
            return Err(Invalid::NotAColumn { column: c.clone(), object: key.to_string() }.into());
        }
    }
    Ok(())
}
