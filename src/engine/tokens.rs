//! A batch's tokens from sqlparser's tokenizer (spec 001, "The prefix and the batch"; spec 012,
//! "Issue 14: one tokenizer, …"): the prefix, the `;` boundaries and a shape's numbers, without asking DuckDB's
//! tokenizer, which cost a quarter of a never-seen statement's rewrite.
//!
//! Why sqlparser's boundaries are safe: DuckDB never reads the principal's text. Each statement is
//! read by sqlparser (with the same dialect as here) and DuckDB runs only our print of it; the
//! shim checks that DuckDB reads exactly as many statements in that print as the batch has. A
//! text whose boundaries DuckDB would draw elsewhere is at worst read as sqlparser reads it, or
//! refused. `ACL … NATIVE` texts are DuckDB's, and the same count check refuses them if DuckDB
//! splits them otherwise. A text sqlparser cannot tokenize goes to DuckDB's tokenizer as before.
use crate::prefix::{Token, TokenKind};
use crate::rewrite::parse::{AclDialect, Reading, Tokens};
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token as Sql, TokenWithSpan, Tokenizer, Whitespace};

/// A batch as sqlparser's tokenizer read it: the split's tokens, and sqlparser's own, which each
/// statement's parse takes instead of tokenizing its text again.
pub struct Lexed {
    /// Without blanks, with byte offsets (`prefix::split`, `Shape::of`).
    pub tokens: Vec<Token>,
    spanned: Vec<TokenWithSpan>,
    /// The byte offset of each of `spanned`.
    starts: Vec<usize>,
}

impl Lexed {
    /// sqlparser's tokens of each of `statements` (slices of `query`, in order), moved out.
    pub fn per_statement(&mut self, query: &str, statements: &[&str]) -> Vec<Option<Tokens>> {
        let mut spanned = std::mem::take(&mut self.spanned);
        let starts = std::mem::take(&mut self.starts);
        // each statement's tokens are the run whose offsets fall inside its text
        // a statement that is not a slice of `query` (never, from `prefix::split`) is parsed from
        // its own text: tokens of another text must never stand for it
        let runs: Option<Vec<(usize, usize)>> = statements
            .iter()
            .map(|s| {
                let start = (s.as_ptr() as usize).checked_sub(query.as_ptr() as usize)?;
                let end = start.checked_add(s.len()).filter(|&end| end <= query.len())?;
                Some((starts.partition_point(|&at| at < start), starts.partition_point(|&at| at < end)))
            })
            .collect();
        let Some(runs) = runs else { return statements.iter().map(|_| None).collect() };
        let mut out: Vec<Option<Tokens>> = Vec::with_capacity(runs.len());
        // from the last run back, so that the earlier runs stay where they are
        for &(lo, hi) in runs.iter().rev() {
            let hi = hi.min(spanned.len());
            let lo = lo.min(hi);
            let run: Tokens = if runs.len() == 1 {
                // the common batch: one statement, its tokens moved down in place
                spanned.truncate(hi);
                spanned.drain(..lo);
                std::mem::take(&mut spanned)
            } else {
                let run = spanned.drain(lo..hi).collect();
                spanned.truncate(lo);
                run
            };
            out.push(Some(run));
        }
        out.reverse();
        out
    }
}

/// `query` read by sqlparser's tokenizer, or `None` if it cannot tokenize it.
pub fn lex(query: &str) -> Option<Lexed> {
    let dialect = AclDialect { reading: Reading::Original };
    // Room for a short statement's tokens up front (about one per three bytes, whitespace
    // included): growing from empty took five reallocations, each copying the tokens so far.
    let mut spanned = Vec::with_capacity((query.len() / 3 + 8).min(1024));
    Tokenizer::new(&dialect, query).tokenize_with_location_into_buf(&mut spanned).ok()?;
    let mut starts = Vec::with_capacity(spanned.len());
    let mut out = Vec::with_capacity(spanned.len() / 2 + 1);
    // sqlparser locates a token by line and column (in characters, from 1): walk the text once.
    let mut chars = query.char_indices();
    let (mut line, mut col, mut at) = (1u64, 1u64, 0usize);
    for t in &spanned {
        let want = (t.span.start.line, t.span.start.column);
        while (line, col) < want {
            let (i, c) = chars.next()?;
            (line, col) = if c == '\n' { (line + 1, 1) } else { (line, col + 1) };
            at = i + c.len_utf8();
        }
        if (line, col) != want {
            return None;
        }
        starts.push(at);
        let kind = match &t.token {
            Sql::Whitespace(Whitespace::Space | Whitespace::Newline | Whitespace::Tab) | Sql::EOF => continue,
            Sql::Whitespace(_) => TokenKind::Comment,
            Sql::Word(w) if w.quote_style.is_none() && w.keyword != Keyword::NoKeyword => TokenKind::Keyword,
            Sql::Word(_) => TokenKind::Identifier,
            Sql::Number(..) => TokenKind::Numeric,
            Sql::SingleQuotedString(_)
            | Sql::DollarQuotedString(_)
            | Sql::SingleQuotedByteStringLiteral(_)
            | Sql::NationalStringLiteral(_)
            | Sql::EscapedStringLiteral(_)
            | Sql::UnicodeStringLiteral(_)
            | Sql::HexStringLiteral(_) => TokenKind::String,
            // string forms DuckDB does not have: let DuckDB's tokenizer say what they are
            Sql::DoubleQuotedString(_)
            | Sql::TripleSingleQuotedString(_)
            | Sql::TripleDoubleQuotedString(_)
            | Sql::DoubleQuotedByteStringLiteral(_)
            | Sql::TripleSingleQuotedByteStringLiteral(_)
            | Sql::TripleDoubleQuotedByteStringLiteral(_)
            | Sql::SingleQuotedRawStringLiteral(_)
            | Sql::DoubleQuotedRawStringLiteral(_)
            | Sql::TripleSingleQuotedRawStringLiteral(_)
            | Sql::TripleDoubleQuotedRawStringLiteral(_)
            | Sql::QuoteDelimitedStringLiteral(_)
            | Sql::NationalQuoteDelimitedStringLiteral(_)
            | Sql::Char(_) => return None,
            _ => TokenKind::Operator,
        };
        out.push(Token { start: at, kind });
    }
    Some(Lexed { tokens: out, spanned, starts })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prefix::{split, Prefix};

    fn kinds(q: &str) -> Vec<(&str, TokenKind)> {
        let t = lex(q).unwrap().tokens;
        (0..t.len()).map(|i| (crate::prefix::token_text(q, &t, i), t[i].kind)).collect()
    }

    #[test]
    fn offsets_and_kinds() {
        assert_eq!(
            kinds("ACL ROLE \"a b\" SELECT 'x;y', é1 FROM t -- c;\nWHERE id = 42;"),
            vec![
                ("ACL", TokenKind::Identifier),
                ("ROLE", TokenKind::Keyword),
                ("\"a b\"", TokenKind::Identifier),
                ("SELECT", TokenKind::Keyword),
                ("'x;y'", TokenKind::String),
                (",", TokenKind::Operator),
                ("é1", TokenKind::Identifier),
                ("FROM", TokenKind::Keyword),
                ("t", TokenKind::Identifier),
                ("-- c;", TokenKind::Comment),
                ("WHERE", TokenKind::Keyword),
                ("id", TokenKind::Keyword),
                ("=", TokenKind::Operator),
                ("42", TokenKind::Numeric),
                (";", TokenKind::Operator),
            ]
        );
    }

    #[test]
    fn boundaries_inside_strings_and_comments_are_not_boundaries() {
        let q = "ACL ROLE r SELECT $$a;b$$, E'\\';', /* x /* ; */ ; */ 1; SELECT 2";
        let b = split(q, &lex(q).unwrap().tokens).unwrap().unwrap();
        assert_eq!(b.prefix, Prefix::Role("r".into()));
        assert_eq!(b.statements, vec!["SELECT $$a;b$$, E'\\';', /* x /* ; */ ; */ 1", "SELECT 2"]);
    }

    /// Each statement's share of the batch's tokens reads as its text reads.
    #[test]
    fn a_statement_reads_the_same_from_the_batch_tokens() {
        use crate::rewrite::parse::{read, NoHost};
        for q in [
            "ACL ROLE r SELECT a, 'x;y' FROM t WHERE id = 42",
            "ACL ROLE r SELECT 1; /* c */ SELECT $$;$$ -- d\n; UPDATE t SET a = a + 1 WHERE b IN (1, 2)",
            "ACL ROLE \"r\"\n  WITH c AS (SELECT é FROM t) SELECT * FROM c ORDER BY 1 LIMIT 3;",
            "ACL ROLE r SELECT 2 ** 3; SELECT count(*) FROM t",
        ] {
            let mut lexed = lex(q).unwrap();
            let b = split(q, &lexed.tokens).unwrap().unwrap();
            let per = lexed.per_statement(q, &b.statements);
            assert_eq!(per.len(), b.statements.len());
            for (s, t) in b.statements.iter().zip(per) {
                let from_text = read(s, None, &NoHost).map(|r| r.stmt.to_string());
                let from_tokens = read(s, t, &NoHost).map(|r| r.stmt.to_string());
                assert_eq!(from_tokens, from_text, "{s}");
            }
        }
    }

    #[test]
    fn what_sqlparser_cannot_tokenize_is_left_to_duckdb() {
        assert!(lex("ACL ROLE r SELECT 'open").is_none());
        assert!(lex("ACL ROLE r SELECT \"open").is_none());
    }
}
