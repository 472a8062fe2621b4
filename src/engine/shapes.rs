//! Statement shapes (spec 012): a statement that differs from one rewritten before only in its
//! plain numeric literals (`WHERE id = 42` → `= 43`) reuses that rewrite with its own numbers
//! put back, instead of going through sqlparser and the rules again.
//!
//! A shape is learned only when it provably does not depend on its numbers: the statement is
//! rewritten a second time with every literal replaced by a sentinel, each sentinel must appear
//! exactly once in that output, and putting the real literals back where the sentinels are must
//! give exactly the real rewrite (the same text, the same names, the same allowed set). Only
//! literals that are plain ASCII digits take part (their text is printed back unchanged); only
//! single statements under `ACL ROLE`/`ACL TOKEN`/`ACL SESSION`; never a statement naming `acl_arg`, the one
//! rule that reads a number. Each concrete statement is still parsed by DuckDB and compared
//! with the decision by the second check (spec 011).
use super::{Output, Reuse};
use crate::bounded::{texts, Bounded};
use crate::prefix::{Batch, Prefix, Token, TokenKind};
use std::ops::Range;
use std::sync::Arc;

/// Past this many shapes, or these many bytes, a map starts over (as the other caches do).
const MAX_SHAPES: usize = 4_096;
const SHAPES_BYTES: usize = 4 << 20;
const SEEN_BYTES: usize = 1 << 20;
/// Marks a literal in a shape's key; a query containing it has no shape.
const HOLE: char = '\0';
/// Sentinels are this plus the literal's index: 19 digits, which a policy's own SQL would have
/// to contain verbatim to collide (and then the uniqueness test refuses the shape).
const SENTINEL_BASE: u64 = 7_777_777_777_000_000_000;

/// A literal that takes part in a shape: plain digits, at most 19 of them (a sentinel's length).
/// A longer number is another kind of literal for the leak-proof guard (spec 002: it can make
/// DuckDB cast a DECIMAL column to a type its values overflow), so it stays in the key.
fn is_shape_number(text: &str) -> bool {
    !text.is_empty() && text.len() <= 19 && text.bytes().all(|b| b.is_ascii_digit())
}

/// The literals of one query and its key (the query with each literal replaced by `HOLE`).
pub struct Shape<'q> {
    key: String,
    literals: Vec<Range<usize>>,
    query: &'q str,
}

impl<'q> Shape<'q> {
    /// The shape of a one-statement principal batch with at least one plain numeric literal.
    pub fn of(query: &'q str, tokens: &[Token], batch: &Batch<'_>) -> Option<Shape<'q>> {
        // Management and native batches are never reused: each is judged (and run) afresh.
        if !matches!(batch.prefix, Prefix::Role(_) | Prefix::Token(_) | Prefix::Session(_))
            || batch.mode != crate::prefix::Mode::Sql
            || batch.statements.len() != 1
        {
            return None;
        }
        if query.contains(HOLE) || query.len() > super::kept::MAX_BATCH_BYTES {
            return None;
        }
        let body = batch.statements[0];
        let body_start = (body.as_ptr() as usize).checked_sub(query.as_ptr() as usize)?;
        let mut literals = Vec::new();
        for (i, t) in tokens.iter().enumerate() {
            let text = crate::prefix::token_text(query, tokens, i);
            if matches!(t.kind, TokenKind::Identifier | TokenKind::Keyword) && text.eq_ignore_ascii_case("acl_arg") {
                return None;
            }
            if t.kind == TokenKind::Numeric && t.start >= body_start && is_shape_number(text) {
                literals.push(t.start..t.start + text.len());
            }
        }
        if literals.is_empty() {
            return None;
        }
        let mut key = String::with_capacity(query.len());
        let mut at = 0;
        for r in &literals {
            key.push_str(&query[at..r.start]);
            key.push(HOLE);
            at = r.end;
        }
        key.push_str(&query[at..]);
        Some(Shape { key, literals, query })
    }

    fn literal(&self, i: usize) -> &'q str {
        &self.query[self.literals[i].clone()]
    }

    /// The query with literal `i` replaced by sentinel `i`, and the tokens moved to match.
    pub fn sentinel_query(&self, tokens: &[Token]) -> (String, Vec<Token>) {
        let mut text = String::with_capacity(self.query.len() + 20 * self.literals.len());
        let mut shifted = Vec::with_capacity(tokens.len());
        let (mut at, mut next) = (0, 0);
        for t in tokens {
            while next < self.literals.len() && self.literals[next].start < t.start {
                next += 1;
            }
            if next < self.literals.len() && self.literals[next].start == t.start {
                text.push_str(&self.query[at..t.start]);
                shifted.push(Token { start: text.len(), kind: t.kind });
                text.push_str(&(SENTINEL_BASE + next as u64).to_string());
                at = self.literals[next].end;
            } else {
                text.push_str(&self.query[at..t.start]);
                shifted.push(Token { start: text.len(), kind: t.kind });
                at = t.start;
            }
        }
        text.push_str(&self.query[at..]);
        (text, shifted)
    }
}

/// A learned shape: the rewrite cut at the literals, and what else the rewrite produced.
#[derive(Debug)]
pub struct ShapeEntry {
    /// DuckDB's parse of one instance's rewrite, once the shim has parsed and checked it: a later
    /// instance copies it with its own numbers put into the constants (`ShapeUse::substitutions`).
    parsed: std::sync::OnceLock<ShapeParse>,
    version: u64,
    /// The key holds the prefix (a token's text, a session's handle): the same credential.
    credential: super::Credential,
    who: String,
    /// `pieces[0] lit[holes[0]] pieces[1] … pieces[n]`.
    pieces: Vec<String>,
    holes: Vec<usize>,
    statements: usize,
    names: String,
    checks: Vec<Option<Arc<crate::rewrite::Allowed>>>,
    principal: String,
    /// `Output::expires` (the shape's key holds the token, so it is the same token's `exp`).
    expires: i64,
    /// `Output::session` (the key holds the handle: the same session).
    session: u64,
}

/// DuckDB's parse of the rewrite of one instance of a shape, and that instance's literals.
#[derive(Debug)]
pub struct ShapeParse {
    host: super::HostParse,
    /// By literal index, as in `Shape::literal`.
    literals: Vec<String>,
    /// The rewrite it is the parse of.
    sql: String,
}

/// One instance of a learned shape on its way to the shim: the entry and the instance's
/// literals, by literal index.
#[derive(Debug)]
pub struct ShapeUse {
    entry: Arc<ShapeEntry>,
    literals: Vec<String>,
}

/// Where one literal stands in the kept parse's rewrite and in this instance's, and its two texts.
#[derive(Debug, PartialEq, Eq)]
pub struct Substitution<'a> {
    pub old_at: usize,
    pub old: &'a str,
    pub new_at: usize,
    pub new: &'a str,
}

impl ShapeUse {
    fn new(entry: Arc<ShapeEntry>, shape: &Shape<'_>) -> ShapeUse {
        let literals = (0..shape.literals.len()).map(|i| shape.literal(i).to_string()).collect();
        ShapeUse { entry, literals }
    }

    /// The kept parse of the shape, if the shim has handed one over.
    pub fn parsed(&self) -> Option<&ShapeParse> {
        self.entry.parsed.get()
    }

    /// Whether the shim should hand over its parse of this instance.
    pub fn parse_wanted(&self) -> bool {
        self.entry.parsed.get().is_none()
    }

    /// Keeps the shim's parse of this instance's rewrite (after the second check passed on it);
    /// a parse already kept stays, and this one is freed.
    pub fn keep_parse(&self, host: super::HostParse) {
        let sql = self.entry.render(&self.literals);
        let _ = self.entry.parsed.set(ShapeParse { host, literals: self.literals.clone(), sql });
    }

    /// Per hole, in text order: where its literal stands in the kept parse's rewrite and in this
    /// instance's, with both texts. The rewrites differ in nothing else (`ShapeCache::learn`).
    pub fn substitutions<'a>(&'a self, kept: &'a ShapeParse) -> Vec<Substitution<'a>> {
        let e = &self.entry;
        let (mut old_at, mut new_at) = (0, 0);
        let mut out = Vec::with_capacity(e.holes.len());
        for (i, &h) in e.holes.iter().enumerate() {
            old_at += e.pieces[i].len();
            new_at += e.pieces[i].len();
            let (old, new) = (kept.literals[h].as_str(), self.literals[h].as_str());
            out.push(Substitution { old_at, old, new_at, new });
            old_at += old.len();
            new_at += new.len();
        }
        out
    }
}

impl ShapeParse {
    pub fn ptr(&self) -> *const std::ffi::c_void {
        self.host.ptr()
    }
    pub fn sql(&self) -> &str {
        &self.sql
    }
}

impl ShapeEntry {
    /// The length of `render(literals)`.
    fn rendered_len(&self, literals: &[String]) -> usize {
        self.pieces.iter().map(String::len).sum::<usize>() + self.holes.iter().map(|&h| literals[h].len()).sum::<usize>()
    }

    /// The rewrite with `literals` (by literal index) in the holes.
    fn render(&self, literals: &[String]) -> String {
        let mut sql = String::with_capacity(self.rendered_len(literals));
        for (i, piece) in self.pieces.iter().enumerate() {
            sql.push_str(piece);
            if let Some(&h) = self.holes.get(i) {
                sql.push_str(&literals[h]);
            }
        }
        sql
    }
}

/// How often the shim copied a kept shape parse (`acl_status().shape_parse_copies`), and how
/// often it had one but parsed instead (`shape_parse_fallbacks`: a hole its walk did not find once).
#[derive(Default)]
pub struct ShapeStats {
    pub copies: std::sync::atomic::AtomicU64,
    pub fallbacks: std::sync::atomic::AtomicU64,
}

pub struct ShapeCache {
    pub stats: ShapeStats,
    entries: Bounded<String, Arc<ShapeEntry>>,
    /// Keys met once: learning costs a second rewrite, so a shape is learned the second time it
    /// is met (a statement whose shape never comes back pays only this entry).
    seen: Bounded<String, ()>,
}

impl Default for ShapeCache {
    fn default() -> ShapeCache {
        ShapeCache {
            stats: ShapeStats::default(),
            entries: Bounded::new(SHAPES_BYTES, MAX_SHAPES),
            seen: Bounded::new(SEEN_BYTES, MAX_SHAPES),
        }
    }
}

impl ShapeCache {
    pub fn clear(&self) {
        self.entries.clear();
        self.seen.clear();
    }

    /// Records `shape` as met; true if it had been met before (time to learn it).
    pub fn met_before(&self, shape: &Shape<'_>) -> bool {
        if self.seen.contains_key(&shape.key) {
            return true;
        }
        self.seen.insert(shape.key.clone(), (), shape.key.len());
        false
    }

    /// The rewrite of `shape` from a learned shape, if one holds now (same policy version; a
    /// token judged again and still the same principal), and the shape's entry for the shim
    /// (its kept parse).
    pub fn apply(
        &self,
        policy: &crate::policy::Policy,
        tokens: &crate::auth::TokenCache,
        sessions: &super::sessions::Sessions,
        settings: &crate::rewrite::Settings,
        shape: &Shape<'_>,
    ) -> Option<(Output, ShapeUse)> {
        let entry = Arc::clone(&*self.entries.get(&shape.key)?);
        if !super::principal::still_holds(policy, tokens, sessions, settings, entry.version, &entry.credential, &entry.who) {
            return None;
        }
        let used = ShapeUse::new(entry, shape);
        let entry = &used.entry;
        if !crate::rewrite::fits(entry.rendered_len(&used.literals), settings) {
            return None; // the full path refuses it
        }
        let out = Output {
            sql: entry.render(&used.literals),
            statements: entry.statements,
            names: entry.names.clone(),
            checks: entry.checks.clone(),
            version: entry.version,
            expires: entry.expires,
            session: entry.session,
            reuse: Some(Reuse { credential: entry.credential.clone(), who: entry.who.clone() }),
            principal: entry.principal.clone(),
            native: false,
        };
        Some((out, used))
    }

    /// Learns `shape` from `actual` (its real rewrite) and `sentinel` (the rewrite of its
    /// sentinel query), if they prove the rewrite does not depend on the literals; the learned
    /// entry as this instance's use of it.
    pub fn learn(&self, shape: &Shape<'_>, actual: &Output, sentinel: &Output) -> Option<ShapeUse> {
        let reuse = actual.reuse.as_ref()?;
        if sentinel.names != actual.names
            || sentinel.checks != actual.checks
            || sentinel.statements != actual.statements
            || sentinel.version != actual.version
            || sentinel.reuse != actual.reuse
            || sentinel.session != actual.session
            || sentinel.principal != actual.principal
        {
            return None;
        }
        let (pieces, holes) = cut(&sentinel.sql, shape.literals.len())?;
        let mut rebuilt = String::with_capacity(actual.sql.len());
        for (i, piece) in pieces.iter().enumerate() {
            rebuilt.push_str(piece);
            if let Some(&h) = holes.get(i) {
                rebuilt.push_str(shape.literal(h));
            }
        }
        if rebuilt != actual.sql {
            return None;
        }
        let entry = ShapeEntry {
            parsed: Default::default(),
            version: actual.version,
            credential: reuse.credential.clone(),
            who: reuse.who.clone(),
            pieces,
            holes,
            statements: actual.statements,
            names: actual.names.clone(),
            checks: actual.checks.clone(),
            principal: actual.principal.clone(),
            expires: actual.expires,
            session: actual.session,
        };
        let size = shape.key.len()
            + entry.credential.bytes()
            + entry.who.len()
            + texts(&entry.pieces)
            + entry.holes.len() * std::mem::size_of::<usize>()
            + entry.names.len()
            + entry.checks.iter().flatten().map(|a| crate::rewrite::allowed_bytes(a)).sum::<usize>()
            // the kept parse, and the rewrite it came from
            + actual.sql.len() * (1 + super::kept::HOST_PARSE_PER_BYTE);
        let entry = Arc::new(entry);
        self.entries.insert(shape.key.clone(), Arc::clone(&entry), size);
        Some(ShapeUse::new(entry, shape))
    }
}

/// Cuts `sql` at every sentinel `0..n`, each of which must occur exactly once as a whole number.
fn cut(sql: &str, n: usize) -> Option<(Vec<String>, Vec<usize>)> {
    let mut found: Vec<(usize, usize, usize)> = Vec::with_capacity(n); // (start, end, literal)
    for i in 0..n {
        let needle = (SENTINEL_BASE + i as u64).to_string();
        let mut hits = sql.match_indices(&needle).filter(|(at, m)| whole_number(sql, *at, at + m.len()));
        let (at, m) = hits.next()?;
        if hits.next().is_some() {
            return None;
        }
        found.push((at, at + m.len(), i));
    }
    found.sort_unstable();
    let mut pieces = Vec::with_capacity(n + 1);
    let mut holes = Vec::with_capacity(n);
    let mut at = 0;
    for (start, end, i) in found {
        pieces.push(sql[at..start].to_string());
        holes.push(i);
        at = end;
    }
    pieces.push(sql[at..].to_string());
    Some((pieces, holes))
}

/// Not part of a longer word, number or quoted name.
fn whole_number(sql: &str, start: usize, end: usize) -> bool {
    let b = sql.as_bytes();
    let joined = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'.' || c == b'"' || c == b'\'' || c >= 0x80;
    !(start > 0 && joined(b[start - 1])) && !(end < b.len() && joined(b[end]))
}

#[cfg(test)]
mod tests;
