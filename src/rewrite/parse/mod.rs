//! Reading a principal's statement (spec 016, "The parser route"). sqlparser reads it as written
//! first, with our dialect (`dialect`). DuckDB's own reading is asked for (`Host`, the shim) when
//! that fails, or when a select item is named by its text (DuckDB names `count(*)` `count_star()`,
//! and the rewrite changes the text of calls): DuckDB prints its parse back with every such item
//! aliased by the name DuckDB gives it, clauses that name nothing are cut out of that print
//! (`cuts`), and sqlparser reads the result with the dialect's `Printed` reading. What neither
//! reading understands is refused.
pub mod cuts;
pub mod dialect;
mod names;

pub use names::{CachedNames, NamesCache};

pub use cuts::Cuts;
pub use dialect::{AclDialect, Reading};

use crate::error::{AclError, Result, Syntax};
use crate::prefix::Token;
use sqlparser::ast::{Expr, SelectItem, Statement};
use sqlparser::parser::{Parser, ParserError};

/// DuckDB's own reading of a text, through the shim. Unit tests run without it (`NoHost`): every
/// statement is then read by sqlparser alone, as before this existed.
pub trait Host {
    /// DuckDB's parse of `sql`, printed back (`ToString()`), each select and RETURNING item that
    /// DuckDB names by its text aliased with that name. `Ok(None)`: no host to ask.
    fn print(&self, sql: &str) -> Result<Option<Printed>>;
    /// DuckDB's tokens of `sql`.
    fn tokens(&self, sql: &str) -> Result<Vec<Token>>;
    /// DuckDB's names of select items (sqlparser's prints of them, in order), or `None` when its
    /// print of them does not give one aliased item each (`names`).
    fn item_names(&self, texts: &[&str]) -> Result<Option<Vec<sqlparser::ast::Ident>>> {
        names::duckdb_names(texts, self)
    }
}

/// DuckDB's print of a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Printed {
    pub sql: String,
    /// How many statements DuckDB read.
    pub statements: usize,
}

/// No DuckDB at hand (unit tests, and the checks of policy SQL).
pub struct NoHost;

impl Host for NoHost {
    fn print(&self, _: &str) -> Result<Option<Printed>> {
        Ok(None)
    }
    fn tokens(&self, _: &str) -> Result<Vec<Token>> {
        Err(AclError::internal("no tokenizer"))
    }
}

/// A host whose print of a text is the text itself (tests: a text already in DuckDB's printed form).
#[cfg(test)]
pub struct Echo;

#[cfg(test)]
impl Host for Echo {
    fn print(&self, sql: &str) -> Result<Option<Printed>> {
        Ok(Some(Printed { sql: sql.to_string(), statements: 1 }))
    }
    fn tokens(&self, sql: &str) -> Result<Vec<Token>> {
        Ok(cuts::tests::tokenize(sql))
    }
}

/// sqlparser's tokens of one statement, made with the batch's (`engine::tokens`), in the
/// `Original` reading's dialect.
pub type Tokens = Vec<sqlparser::tokenizer::TokenWithSpan>;

/// Nesting deeper than this is refused by the parser rather than risking the stack.
const RECURSION_LIMIT: usize = 64;

/// A statement as sqlparser read it, and what was cut out of its text to let it (`restore` puts
/// it back into the rewrite's output).
pub struct Read {
    pub stmt: Statement,
    pub cuts: Cuts,
}

/// Reads one statement of the principal's: as written when sqlparser can and no item needs
/// DuckDB's name, otherwise DuckDB's print of it.
pub fn read(sql: &str, tokens: Option<Tokens>, host: &dyn Host) -> Result<Read> {
    if sql.contains('\0') {
        // DuckDB's parser reads C strings: what follows a NUL would not be the text we read.
        return Err(Syntax::Statement { at: None }.into());
    }
    let mut first = match tokens {
        // the batch's tokens; a refusal is read again from the text, for a position in it
        Some(tokens) => parse_tokens(tokens).or_else(|_| parse(sql, Reading::Original)),
        None => parse(sql, Reading::Original),
    };
    let needed = first.as_mut().is_ok_and(names_needed);
    match &mut first {
        Ok(_) if !needed => return first.map(|stmt| Read { stmt, cuts: Cuts::default() }),
        // as deep in DuckDB's print: refused before DuckDB is asked to build it
        Err(AclError::Syntax(Syntax::TooDeep)) => return first.map(|stmt| Read { stmt, cuts: Cuts::default() }),
        // Control characters: DuckDB's reader and ours may disagree on where a token ends, so
        // DuckDB is not asked (refused if sqlparser cannot read it).
        _ if sql.chars().any(|c| c.is_control() && !matches!(c, '\t' | '\n' | '\r')) => {
            return first.map(|stmt| Read { stmt, cuts: Cuts::default() })
        }
        Ok(stmt) => {
            // read as written; DuckDB names the items that need its names (`names`)
            if names::name_items(stmt, host)? {
                return first.map(|stmt| Read { stmt, cuts: Cuts::default() });
            }
        }
        _ => {}
    }
    let printed = match host.print(sql) {
        Ok(Some(p)) => p,
        Ok(None) => return first.map(|stmt| Read { stmt, cuts: Cuts::default() }),
        // DuckDB could not read it either: its own message (about the principal's text) says why.
        Err(e) => return Err(e),
    };
    if printed.statements != 1 {
        // A PIVOT without an IN list becomes a CREATE TYPE of the pivot's values first.
        return Err(crate::error::Unsupported::DynamicPivot.into());
    }
    let text = statement_form(&printed.sql);
    let (text, cuts) = match cuts::may_cut(&text) {
        true => match cuts::cut(&text, &host.tokens(&text)?)? {
            Some((t, c)) => (t, c),
            None => (text, Cuts::default()),
        },
        false => (text, Cuts::default()),
    };
    match parse(&text, Reading::Printed) {
        Ok(stmt) => Ok(Read { stmt, cuts }),
        // DuckDB's print that sqlparser cannot read: as written, without DuckDB's names, if that
        // read at all.
        Err(e) => first.map(|stmt| Read { stmt, cuts: Cuts::default() }).map_err(|_| e),
    }
}

/// Puts what `read` cut out back into the printed rewrite.
pub fn restore(output: String, cuts: &Cuts, host: &dyn Host) -> Result<String> {
    if cuts.is_empty() {
        return Ok(output);
    }
    cuts::restore(&output, &host.tokens(&output)?, cuts)
}

/// DuckDB prints `SUMMARIZE q` and `DESCRIBE q` with the query in parentheses; sqlparser reads a
/// DESCRIBE of a bare query, and a SUMMARIZE only as a FROM item (which the cuts handle).
fn statement_form(printed: &str) -> String {
    let trimmed = printed.trim();
    let upper = |n: usize| trimmed.get(..n).map(str::to_ascii_uppercase);
    if upper(10).as_deref() == Some("SUMMARIZE ") {
        return format!("SELECT * FROM ({trimmed})");
    }
    if upper(10).as_deref() == Some("DESCRIBE (") && trimmed.ends_with(')') {
        return format!("DESCRIBE {}", &trimmed[10..trimmed.len() - 1]);
    }
    if upper(18).as_deref() == Some("EXPLAIN (ANALYZE) ") {
        return format!("EXPLAIN ANALYZE {}", &trimmed[18..]);
    }
    trimmed.to_string()
}

/// Parses exactly one statement with `reading`.
pub fn parse(sql: &str, reading: Reading) -> Result<Statement> {
    let dialect = AclDialect { reading };
    let stmts = Parser::new(&dialect)
        .with_recursion_limit(RECURSION_LIMIT)
        .try_with_sql(sql)
        .and_then(|mut p| p.parse_statements())
        .map_err(parse_error)?;
    one(stmts)
}

/// `parse` in the `Original` reading, of tokens already made.
fn parse_tokens(tokens: Tokens) -> Result<Statement> {
    let dialect = AclDialect { reading: Reading::Original };
    let stmts = Parser::new(&dialect)
        .with_recursion_limit(RECURSION_LIMIT)
        .with_tokens_with_locations(tokens)
        .parse_statements()
        .map_err(parse_error)?;
    one(stmts)
}

fn one(mut stmts: Vec<Statement>) -> Result<Statement> {
    match stmts.len() {
        1 => Ok(stmts.pop().expect("one statement")),
        _ => Err(Syntax::NotOneStatement.into()),
    }
}

/// sqlparser's messages quote the input; keep only where it failed.
fn parse_error(e: ParserError) -> AclError {
    let msg = e.to_string();
    let at = msg.rfind(" at Line: ").map(|i| &msg[i + 1..]);
    match (e, at) {
        (ParserError::RecursionLimitExceeded, _) => Syntax::TooDeep.into(),
        (_, Some(at)) => Syntax::Statement { at: Some(at.to_string()) }.into(),
        _ => Syntax::Statement { at: None }.into(),
    }
}

/// Does any select item (in any query of the statement) take its name from its text in a way
/// the rewrite may change? A column reference is named by its column, a star by its columns, a
/// literal by its value; an aliased item by its alias.
pub fn names_needed(stmt: &mut Statement) -> bool {
    let mut any = false;
    names::for_each_item(stmt, &mut |_| any = true);
    any
}

fn item_needs_name(item: &SelectItem) -> bool {
    match item {
        SelectItem::UnnamedExpr(e) => !matches!(e, Expr::Identifier(_) | Expr::CompoundIdentifier(_) | Expr::Value(_)),
        _ => false,
    }
}

#[cfg(test)]
mod tests;
