//! `CREATE [OR REPLACE] VIRTUAL REFERENCE [IF NOT EXISTS] c.r FROM a TO b ON (x = y, …)
//! [CARDINALITY …] [OPTIONAL] [COMMENT '…']` and `DROP VIRTUAL REFERENCE [IF EXISTS] c.r`: a
//! hint for clients about how two virtual objects of one catalog join. It grants nothing and no
//! principal's statement reads it; its objects must exist and its columns must bind against them
//! as a principal reads them (`validate`).
use super::apply::{missing, SKIPPED_EXISTS};
use super::parse::P;
use super::{Command, CreateMode};
use crate::error::{AclError, Invalid, Noun, Result};
use crate::policy::{Cardinality, ObjKey, Policy, Reference, DEFAULT_SCHEMA};
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::Token;

impl P<'_> {
    /// After `CREATE [OR REPLACE] VIRTUAL REFERENCE [IF NOT EXISTS]`.
    pub(super) fn create_reference(&mut self, mode: CreateMode) -> Result<Command> {
        let key = self.virtual_name()?;
        self.expect_kw(Keyword::FROM, "FROM")?;
        let from = self.object_in(&key.catalog)?;
        self.expect_kw(Keyword::TO, "TO")?;
        let to = self.object_in(&key.catalog)?;
        self.expect_kw(Keyword::ON, "ON")?;
        self.open("ON")?;
        let mut on = Vec::new();
        loop {
            let a = self.column_ref()?;
            if !self.p.consume_token(&Token::Eq) {
                return self.err("'='");
            }
            let b = self.column_ref()?;
            on.push((a, b));
            if !self.more()? {
                break;
            }
        }
        let (mut cardinality, mut optional, mut comment) = (None, false, None);
        loop {
            if self.word("cardinality") {
                self.once(&cardinality, "CARDINALITY")?;
                cardinality = Some(self.cardinality()?);
            } else if self.word("optional") {
                optional = true;
            } else if self.p.peek_keyword(Keyword::COMMENT) {
                self.once(&comment, "COMMENT")?;
                comment = self.comment()?;
            } else {
                break;
            }
        }
        let reference = Reference { from, to, on, cardinality, optional, comment };
        Ok(Command::CreateReference { key, reference, mode })
    }

    /// An object of `catalog`: `n`, `s.n`, `catalog.n` or `catalog.s.n`.
    fn object_in(&mut self, catalog: &str) -> Result<ObjKey> {
        let parts: Vec<String> = self.name("a virtual object name")?.iter().map(|i| crate::policy::norm(&i.value)).collect();
        let key = |schema: &str, name: &str| ObjKey { catalog: catalog.into(), schema: schema.into(), name: name.into() };
        match parts.as_slice() {
            [n] => Ok(key(DEFAULT_SCHEMA, n)),
            [c, n] if c == catalog => Ok(key(DEFAULT_SCHEMA, n)),
            [s, n] => Ok(key(s, n)),
            [c, s, n] if c == catalog => Ok(key(s, n)),
            _ => Err(Invalid::Rule("a virtual reference joins two objects of its own catalog").into()),
        }
    }

    /// `x` or `a.x` (the qualifier is only read past: the side says which object).
    fn column_ref(&mut self) -> Result<String> {
        let parts = self.name("a column name")?;
        Ok(parts.last().map(|i| crate::policy::norm(&i.value)).unwrap_or_default())
    }

    /// `ONE_TO_MANY` (any case, as a word or a string) or `'1:n'`.
    fn cardinality(&mut self) -> Result<Cardinality> {
        let word = match &self.p.peek_token_ref().token {
            Token::Word(w) => w.value.clone(),
            Token::SingleQuotedString(s) => s.clone(),
            _ => return self.err("a cardinality"),
        };
        self.p.next_token();
        let w = word.to_ascii_lowercase().replace(['-', ' '], "_");
        Cardinality::ALL
            .into_iter()
            .find(|c| c.sql().eq_ignore_ascii_case(&w) || c.short() == w || (w == "m:n" && c.short() == "n:m"))
            .ok_or_else(|| Invalid::Cardinality { word }.into())
    }
}

fn shown(key: &ObjKey) -> String {
    key.to_string()
}

pub(super) fn create_reference(p: &mut Policy, key: &ObjKey, r: &Reference, mode: CreateMode) -> Result<String> {
    let status = format!("CREATE VIRTUAL REFERENCE {}", shown(key));
    for end in [&r.from, &r.to] {
        if p.relation(end).is_none() {
            return Err(Invalid::Missing { noun: Noun::Object, name: end.to_string() }.into());
        }
    }
    // A side that lists its columns is checked here; the others by binding (`validate`).
    for (end, c) in r.on.iter().flat_map(|(a, b)| [(&r.from, a), (&r.to, b)]) {
        if p.relation(end).and_then(|rel| super::alter::lists_column(rel, c)) == Some(false) {
            return Err(Invalid::NotAColumn { column: c.clone(), object: end.to_string() }.into());
        }
    }
    let cat = p
        .catalogs
        .get_mut(&key.catalog)
        .ok_or_else(|| AclError::from(Invalid::Missing { noun: Noun::Catalog, name: key.catalog.clone() }))?;
    let slot = (key.schema.clone(), key.name.clone());
    let exists = cat.references.contains_key(&slot);
    match (exists, mode) {
        (true, CreateMode::Create) => Err(Invalid::Exists { noun: Noun::Reference, name: key.to_string() }.into()),
        (true, CreateMode::IfNotExists) => Ok(status + SKIPPED_EXISTS),
        _ => {
            cat.references.insert(slot, r.clone());
            Ok(if exists { status + " (replaced)" } else { status })
        }
    }
}

pub(super) fn drop_reference(p: &mut Policy, key: &ObjKey, if_exists: bool) -> Result<String> {
    let status = format!("DROP VIRTUAL REFERENCE {}", shown(key));
    let removed = p.catalogs.get_mut(&key.catalog).and_then(|c| c.references.remove(&(key.schema.clone(), key.name.clone())));
    if removed.is_none() {
        return missing(if_exists, status, || Invalid::Missing { noun: Noun::Reference, name: key.to_string() }.into());
    }
    Ok(status)
}

/// A dropped object takes the references that join it along (they would point at nothing).
pub(super) fn forget_object(p: &mut Policy, key: &ObjKey) {
    if let Some(c) = p.catalogs.get_mut(&key.catalog) {
        c.references.retain(|_, r| r.from != *key && r.to != *key);
    }
}
