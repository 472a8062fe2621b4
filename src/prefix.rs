//! The `ACL …` prefix and the `;` batch it covers.
//!
//! Statement boundaries come from the batch's tokens: sqlparser's (`engine::tokens`, which says
//! why that is safe), or DuckDB's own for a text sqlparser cannot tokenize.
use crate::error::{AclError, Result, Syntax};

/// DuckDB's `SimplifiedTokenType`, in its declaration order (`AclTokenKind` in cpp/acl_ffi.hpp,
/// generated from this enum; the shim maps DuckDB's type to it by name and hands it over as a
/// byte, read with `from_u8`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum TokenKind {
    Identifier = 0,
    Numeric = 1,
    String = 2,
    Operator = 3,
    Keyword = 4,
    Comment = 5,
    Error = 6,
}

impl TokenKind {
    pub fn from_u8(v: u8) -> TokenKind {
        match v {
            0 => TokenKind::Identifier,
            1 => TokenKind::Numeric,
            2 => TokenKind::String,
            3 => TokenKind::Operator,
            4 => TokenKind::Keyword,
            5 => TokenKind::Comment,
            _ => TokenKind::Error,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Token {
    pub start: usize,
    pub kind: TokenKind,
}

/// Who a batch runs as.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Prefix {
    /// `ACL ROLE "<role>"`: the gateway resolved the role.
    Role(String),
    /// `ACL TOKEN '<jwt>'`.
    Token(String),
    /// `ACL SESSION '<handle>'`.
    Session(String),
    /// `ACL ADMIN`: the gateway's own management statements.
    Admin,
}

/// What the statements after a principal's prefix are (`ACL ADMIN` is always management).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// The principal's SQL, rewritten.
    Sql,
    /// `ACL ROLE "r" ACL <management statements>`: run under the principal's admin scope.
    Management,
    /// `ACL ROLE "r" ACL NATIVE <sql>`: passed to DuckDB as written (passthrough only); `ACL
    /// ADMIN ACL NATIVE <sql>` the same under the anonymous admin gate.
    Native,
}

#[derive(Debug, PartialEq, Eq)]
pub struct Batch<'q> {
    pub prefix: Prefix,
    pub mode: Mode,
    /// Each statement's text, without its `;`; empty statements are dropped.
    pub statements: Vec<&'q str>,
}

/// The cheap test run on every query DuckDB parses: could this text start with `ACL`?
/// Leading comments send it to the exact, token-based check.
pub fn maybe_ours(query: &[u8]) -> bool {
    let rest = match query.iter().position(|b| !b.is_ascii_whitespace()) {
        Some(i) => &query[i..],
        None => return false,
    };
    if rest.starts_with(b"--") || rest.starts_with(b"/*") {
        return true;
    }
    rest.len() >= 3
        && rest[..3].eq_ignore_ascii_case(b"acl")
        && rest.get(3).is_none_or(|b| !(b.is_ascii_alphanumeric() || *b == b'_' || *b >= 0x80))
}

/// Splits `query` into the prefix and its statements, or `None` when the text is not ours
/// (its first real token is not `ACL`), in which case DuckDB parses it unchanged.
pub fn split<'q>(query: &'q str, tokens: &[Token]) -> Result<Option<Batch<'q>>> {
    let text = |i: usize| token_text(query, tokens, i);
    let mut words = tokens.iter().enumerate().filter(|(_, t)| t.kind != TokenKind::Comment);
    let Some((first_idx, first)) = words.next() else { return Ok(None) };
    if !text(first_idx).eq_ignore_ascii_case("acl") || first.kind == TokenKind::String {
        return Ok(None);
    }
    let (kind_idx, _) = words.next().ok_or_else(missing_kind)?;
    let kind = text(kind_idx).to_ascii_uppercase();
    let (prefix, mut body_from) = match kind.as_str() {
        "ADMIN" => (Prefix::Admin, kind_idx + 1),
        "ROLE" | "TOKEN" | "SESSION" => {
            let (arg_idx, arg_tok) = words.next().ok_or_else(|| missing_arg(&kind))?;
            let arg = text(arg_idx);
            let value = match (kind.as_str(), arg_tok.kind) {
                ("ROLE", TokenKind::Identifier | TokenKind::Keyword) => unquote_ident(arg),
                ("TOKEN" | "SESSION", TokenKind::String) => unquote_string(arg)?,
                ("ROLE", TokenKind::String) => match unquote_string(arg) {
                    Ok(name) => return Err(Syntax::PrefixRoleString(name.replace('"', "\"\"")).into()),
                    Err(_) => return Err(missing_arg(&kind)),
                },
                _ => return Err(missing_arg(&kind)),
            };
            let prefix = match kind.as_str() {
                "ROLE" => Prefix::Role(value),
                "TOKEN" => Prefix::Token(value),
                _ => Prefix::Session(value),
            };
            (prefix, arg_idx + 1)
        }
        _ => return Err(missing_kind()),
    };
    let mut mode = if prefix == Prefix::Admin { Mode::Management } else { Mode::Sql };
    // After a principal's prefix, `ACL` (a word, not a string or a quoted name) starts
    // management for the whole batch, and `ACL NATIVE` native SQL; after `ACL ADMIN`, `ACL
    // NATIVE` is native SQL too (the reference system's spelling; `ACL ADMIN <plain SQL>` is).
    let word = |i: usize| tokens[i].kind != TokenKind::String && !text(i).starts_with('"');
    if prefix == Prefix::Admin {
        let mut rest = tokens.iter().enumerate().skip(body_from).filter(|(_, t)| t.kind != TokenKind::Comment);
        let acl = rest.next().filter(|(i, _)| word(*i) && text(*i).eq_ignore_ascii_case("acl"));
        let native = rest.next().filter(|(i, _)| word(*i) && text(*i).eq_ignore_ascii_case("native"));
        if let (Some(_), Some((native, _))) = (acl, native) {
            mode = Mode::Native;
            body_from = native + 1;
        }
    } else {
        let mut rest = tokens.iter().enumerate().skip(body_from).filter(|(_, t)| t.kind != TokenKind::Comment);
        if let Some((acl, _)) = rest.next().filter(|(i, _)| word(*i) && text(*i).eq_ignore_ascii_case("acl")) {
            mode = Mode::Management;
            body_from = acl + 1;
            if let Some((native, _)) = rest.next().filter(|(i, _)| word(*i) && text(*i).eq_ignore_ascii_case("native")) {
                mode = Mode::Native;
                body_from = native + 1;
            }
        }
    }
    let statements = split_statements(query, tokens, body_from);
    if statements.is_empty() {
        return Err(Syntax::NothingAfterPrefix.into());
    }
    Ok(Some(Batch { prefix, mode, statements }))
}

fn missing_kind() -> AclError {
    Syntax::PrefixKind.into()
}

fn missing_arg(kind: &str) -> AclError {
    match kind {
        "ROLE" => Syntax::PrefixRole.into(),
        "TOKEN" => Syntax::PrefixToken.into(),
        _ => Syntax::PrefixSession.into(),
    }
}

fn token_end(query: &str, tokens: &[Token], i: usize) -> usize {
    tokens.get(i + 1).map_or(query.len(), |t| t.start).min(query.len())
}

/// Token `i`'s text (up to the next token, trailing blanks trimmed).
pub(crate) fn token_text<'q>(query: &'q str, tokens: &[Token], i: usize) -> &'q str {
    let start = tokens[i].start.min(query.len());
    query.get(start..token_end(query, tokens, i)).unwrap_or("").trim_end()
}

/// The statements from token `from` on, cut at every `;` operator token.
fn split_statements<'q>(query: &'q str, tokens: &[Token], from: usize) -> Vec<&'q str> {
    let mut out = Vec::new();
    let Some(first) = tokens.get(from) else { return out };
    let mut seg_start = first.start;
    let mut has_code = false;
    for (i, t) in tokens.iter().enumerate().skip(from) {
        let is_semicolon = t.kind == TokenKind::Operator && query.as_bytes().get(t.start) == Some(&b';');
        if is_semicolon {
            if has_code {
                out.push(query[seg_start..t.start].trim());
            }
            seg_start = token_end(query, tokens, i).min(t.start + 1);
            has_code = false;
        } else if t.kind != TokenKind::Comment {
            has_code = true;
        }
    }
    if has_code {
        out.push(query[seg_start.min(query.len())..].trim());
    }
    out
}

/// `"a""b"` → `a"b`; a bare identifier is taken as written.
fn unquote_ident(s: &str) -> String {
    match s.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
        Some(inner) => inner.replace("\"\"", "\""),
        None => s.to_string(),
    }
}

fn unquote_string(s: &str) -> Result<String> {
    s.strip_prefix('\'')
        .and_then(|r| r.strip_suffix('\''))
        .map(|inner| inner.replace("''", "'"))
        .ok_or_else(|| Syntax::PlainString.into())
}

/// A stand-in for DuckDB's tokenizer, good enough for the unit tests (the SQL tests use the
/// real one): quoted strings and names (doubled quotes inside), `--` comments, digit runs as
/// numbers, words, and every other character as an operator.
#[cfg(test)]
pub(crate) fn test_tokens(q: &str) -> Vec<Token> {
    let b = q.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        let kind = if c == b'\'' || c == b'"' {
            i += 1;
            while i < b.len() {
                if b[i] == c && b.get(i + 1) == Some(&c) {
                    i += 2;
                } else if b[i] == c {
                    i += 1;
                    break;
                } else {
                    i += 1;
                }
            }
            if c == b'\'' { TokenKind::String } else { TokenKind::Identifier }
        } else if q[i..].starts_with("--") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            TokenKind::Comment
        } else if c.is_ascii_digit() {
            while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'.') {
                i += 1;
            }
            TokenKind::Numeric
        } else if c.is_ascii_alphabetic() || c == b'_' || c >= 0x80 {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] >= 0x80) {
                i += 1;
            }
            TokenKind::Identifier
        } else {
            i += 1;
            TokenKind::Operator
        };
        out.push(Token { start, kind });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(q: &str) -> Vec<Token> {
        test_tokens(q)
    }

    fn split_str(q: &str) -> Result<Option<Batch<'_>>> {
        split(q, &toks(q))
    }

    #[test]
    fn a_token_kind_byte_reads_back_and_an_unknown_one_is_an_error_token() {
        use TokenKind::*;
        for k in [Identifier, Numeric, String, Operator, Keyword, Comment, Error] {
            assert_eq!(TokenKind::from_u8(k as u8), k);
        }
        for b in 7..=u8::MAX {
            assert_eq!(TokenKind::from_u8(b), Error);
        }
    }

    #[test]
    fn fast_check() {
        assert!(maybe_ours(b"  acl ROLE"));
        assert!(maybe_ours(b"ACL"));
        assert!(maybe_ours(b"-- c\nACL"));
        assert!(!maybe_ours(b"aclx"));
        assert!(!maybe_ours(b"SELECT 1"));
        assert!(!maybe_ours(b""));
    }

    #[test]
    fn role_prefix_and_batch() {
        let b = split_str("ACL ROLE \"ana\"\"lyst\" SELECT 1; SELECT ';' ;; SELECT 2").unwrap().unwrap();
        assert_eq!(b.prefix, Prefix::Role("ana\"lyst".into()));
        assert_eq!(b.statements, vec!["SELECT 1", "SELECT ';'", "SELECT 2"]);
    }

    #[test]
    fn admin_and_comments() {
        let b = split_str("-- hi\nacl admin CREATE ROLE r; -- only a comment\n").unwrap().unwrap();
        assert_eq!(b.prefix, Prefix::Admin);
        assert_eq!(b.statements, vec!["CREATE ROLE r"]);
    }

    #[test]
    fn management_and_native_after_a_principal() {
        let b = split_str("ACL ROLE r acl GRANT CATALOG c TO ROLE s; DROP ROLE t").unwrap().unwrap();
        assert_eq!((b.prefix, b.mode), (Prefix::Role("r".into()), Mode::Management));
        assert_eq!(b.statements, vec!["GRANT CATALOG c TO ROLE s", "DROP ROLE t"]);
        let b = split_str("ACL TOKEN 'x' -- c\n ACL Native SELECT 1; SELECT 2").unwrap().unwrap();
        assert_eq!((b.prefix, b.mode), (Prefix::Token("x".into()), Mode::Native));
        assert_eq!(b.statements, vec!["SELECT 1", "SELECT 2"]);
        // NATIVE alone after ACL is a management statement named NATIVE (refused later).
        let b = split_str("ACL ROLE r ACL NATIVE").unwrap_err();
        assert_eq!(b, Syntax::NothingAfterPrefix.into());
        assert!(split_str("ACL ROLE r ACL").is_err());
        // Only the word: a string or a quoted name is the principal's SQL (which does not parse).
        for q in ["ACL ROLE r 'acl' GRANT", "ACL ROLE r \"acl\" GRANT", "ACL ROLE r SELECT 1; ACL GRANT"] {
            assert_eq!(split_str(q).unwrap().unwrap().mode, Mode::Sql, "{q}");
        }
        // ACL ADMIN is management, but ACL NATIVE after it is native SQL (issue 34, item 3);
        // ACL alone after it is not a mode.
        let b = split_str("ACL ADMIN ACL NATIVE SELECT 1; SELECT 2").unwrap().unwrap();
        assert_eq!((b.prefix, b.mode, b.statements), (Prefix::Admin, Mode::Native, vec!["SELECT 1", "SELECT 2"]));
        let b = split_str("ACL ADMIN ACL GRANT CATALOG c TO ROLE r").unwrap().unwrap();
        assert_eq!((b.mode, b.statements), (Mode::Management, vec!["ACL GRANT CATALOG c TO ROLE r"]));
        let b = split_str("ACL ADMIN 'acl' NATIVE SELECT 1").unwrap().unwrap();
        assert_eq!(b.mode, Mode::Management);
    }

    #[test]
    fn not_ours() {
        assert_eq!(split_str("SELECT 1").unwrap(), None);
        assert_eq!(split_str("'acl' ROLE").unwrap(), None);
    }

    #[test]
    fn malformed_prefixes_are_refused() {
        assert!(split_str("ACL").is_err());
        assert!(split_str("ACL ROLE").is_err());
        assert!(split_str("ACL ROLE 'x' SELECT 1").is_err());
        // A newcomer's single quotes are told to be double ones.
        assert_eq!(split_str("ACL ROLE 'a\"b' SELECT 1").unwrap_err(), Syntax::PrefixRoleString("a\"\"b".into()).into());
        assert!(split_str("ACL TOKEN \"x\" SELECT 1").is_err());
        assert!(split_str("ACL WHATEVER SELECT 1").is_err());
        assert!(split_str("ACL ROLE r ;").is_err());
    }
}
