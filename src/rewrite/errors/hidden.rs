//! Constraint messages about a column-restricted write target (issue 31, finding 6): DuckDB names
//! the physical table's columns in them (`NOT NULL constraint failed: emp.salary_band`, a CHECK's
//! expression, an index key's `col: value` pairs), hidden ones included. A column the principal's
//! grant does not show is never named, and a key or CHECK that reads one is withheld whole (its
//! values may be the hidden row's: an UPDATE rewrites the whole key).
//!
//! Each decision depends only on DuckDB's fixed parts (the table's column and constraint names)
//! and the principal's own values against the columns it may see — never on whether a guess of
//! the principal's is a hidden column's name.
use super::lines::{self, Restricted};
use crate::policy::norm;

/// A column the principal does not see, in a message's column slot.
pub const COLUMN: &str = "(a column hidden from you)";
/// A CHECK expression or an index key that names such a column.
pub const OVER_HIDDEN: &str = "(over a column hidden from you)";
/// A key's values without their columns, on a column-restricted target.
pub const VALUES: &str = "(withheld: the target has a column hidden from you)";
/// A foreign key's pairs (another table's columns: `Piece::ForeignKey`).
pub const FOREIGN_KEY: &str = "(withheld: it names another table's columns)";
/// Any other constraint message on a column-restricted target.
pub const WITHHELD: &str = "acl: a constraint of the target failed (the details are withheld: it has a column hidden from you)";

/// The visible columns of the restricted target DuckDB printed as `table` (a name, maybe
/// quoted); `None`: the table is not a restricted target of the statement.
fn visible_of<'r>(restricted: &'r [Restricted], table: &str) -> Option<&'r Restricted> {
    let name = super::unquote(table).unwrap_or_else(|| table.to_string());
    restricted.iter().find(|r| r.table.name.eq_ignore_ascii_case(&name))
}

/// `col` (as DuckDB printed it: `SQLIdentifier`, maybe quoted) of `table` may be shown.
pub fn column_shown(blob: &str, table: &str, col: &str) -> bool {
    if !lines::any_restricted(blob) {
        return true;
    }
    let restricted = lines::restricted(blob);
    let Some(r) = visible_of(&restricted, table) else { return true };
    let name = super::unquote(col).unwrap_or_else(|| col.to_string());
    r.visible.contains(&norm(&name))
}

/// `check` (`CHECK(<expr>)`, maybe with ` (Error: …)` or ` (Unknown Error)` after it) of `table`
/// may be shown: every column its expression reads is visible. An expression that does not read
/// back is withheld.
pub fn check_shown(blob: &str, table: &str, check: &str) -> bool {
    if !lines::any_restricted(blob) {
        return true;
    }
    let restricted = lines::restricted(blob);
    let Some(r) = visible_of(&restricted, table) else { return true };
    let Some(expr) = check_expression(check) else { return false };
    match columns_of(expr) {
        Some(cols) => cols.iter().all(|c| r.visible.contains(c)),
        None => false,
    }
}

/// The expression inside `CHECK(…)`, when what follows it is one of DuckDB's suffixes.
fn check_expression(check: &str) -> Option<&str> {
    let inner = check.strip_prefix("CHECK(")?;
    let end = closing_paren(inner)?;
    let rest = &inner[end + 1..];
    let suffix_ok = rest.is_empty() || rest == " (Unknown Error)" || (rest.starts_with(" (Error: ") && rest.ends_with(')'));
    suffix_ok.then_some(&inner[..end])
}

/// The byte index of the `)` that closes an expression (quotes and nesting followed).
fn closing_paren(s: &str) -> Option<usize> {
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    for (i, c) in s.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '(') => depth += 1,
            (None, ')') if depth == 0 => return Some(i),
            (None, ')') => depth -= 1,
            _ => {}
        }
    }
    None
}

fn columns_of(expr: &str) -> Option<Vec<String>> {
    crate::sqltext::columns_read(expr)
}

/// An index key (`col: value, col: value`) may be shown: the statement has no column-restricted
/// target, or the key splits at `, ` into `col: value` pieces whose columns every restricted
/// target shows and whose values hold no `: ` (so no piece of a hidden column can hide inside a
/// value). A principal's own value with `, ` or `: ` in it is withheld too: that depends only on
/// its own text, never on a hidden name.
pub fn key_shown(blob: &str, key: &str) -> bool {
    if !lines::any_restricted(blob) {
        return true;
    }
    let restricted = lines::restricted(blob);
    key.split(", ").all(|piece| match piece.split_once(": ") {
        Some((col, value)) => {
            !value.contains(": ") && restricted.iter().all(|r| r.visible.contains(&norm(col)))
        }
        None => false,
    })
}

/// The CHECK oracle, closed (spec 020, "Constraint messages"): an UPDATE or MERGE (`verb`) of a
/// principal whose column-restricted target's table has a CHECK relating a column the principal
/// sees to one it does not is refused before it runs — each such write's pass or fail would tell
/// the hidden value of the row, guess by guess. `checks_of(table)` gives the table's CHECK
/// expressions as DuckDB prints them (`None`: the table could not be read, refused).
pub fn refused_update(
    blob: &str,
    verb: &'static str,
    checks_of: &mut dyn FnMut(&crate::policy::PhysName) -> Option<Vec<String>>,
) -> Option<crate::error::AclError> {
    if !lines::any_restricted(blob) {
        return None;
    }
    for r in lines::restricted(blob) {
        let relates = match checks_of(&r.table) {
            Some(checks) => checks.iter().any(|c| match columns_of(c) {
                Some(cols) => cols.iter().any(|c| r.visible.contains(c)) && cols.iter().any(|c| !r.visible.contains(c)),
                None => true,
            }),
            None => true,
        };
        if relates {
            let phys = [&r.table.db[..], &r.table.schema, &r.table.name].join(".");
            let object = super::lookup(blob, super::Slot::Qualified, &phys).unwrap_or("(hidden)").to_string();
            return Some(crate::error::SlicedWrite::HiddenCheck { verb, object }.into());
        }
    }
    None
}
