//! DuckDB's own errors about a statement we rewrote (binder errors, constraint and conversion
//! errors) may name the physical objects we put in its place. The shim hands such an error back
//! with the names the decision used, and it is reported with each physical name replaced by the
//! virtual name the principal wrote; DuckDB's `LINE 1: …` excerpt of the rewritten text is never
//! shown (the shim rebuilds the error from its raw message).

/// One line per name: `<physical>\t<virtual>`; longer physical spellings first, so a qualified
/// name is replaced whole before its table part. The first mapping recorded for a spelling wins
/// (the sort is stable), including one that maps a name to itself.
pub fn names_blob(pairs: &mut Vec<(String, String)>) -> String {
    // Longest first; ASCII case-folded order (names fold ASCII-only, as DuckDB's do), so the
    // spellings `dedup_by` treats as one are adjacent.
    pairs.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then_with(|| {
        a.0.bytes().map(|c| c.to_ascii_lowercase()).cmp(b.0.bytes().map(|c| c.to_ascii_lowercase()))
    }));
    pairs.dedup_by(|later, first| later.0.eq_ignore_ascii_case(&first.0));
    let mut out = String::new();
    for (p, v) in pairs.iter() {
        if p.contains(['\t', '\n']) || v.contains(['\t', '\n']) {
            continue; // cannot be represented; the catch-all below covers such names
        }
        out.push_str(p);
        out.push('\t');
        out.push_str(v);
        out.push('\n');
    }
    out
}

/// The message with every physical name of `blob` replaced (case-insensitively, as a whole
/// identifier) by its virtual name.
pub fn translate(blob: &str, message: &str) -> String {
    // DuckDB's excerpt of the statement (`LINE 1: …` and its caret line) quotes the rewritten text:
    // the physical names and the policy's own expressions. It is dropped.
    let message = match message.find("\nLINE ") {
        Some(i) => message[..i].trim_end(),
        None => message,
    };
    // DuckDB suggests similar names from every attached database ("Did you mean "db.t"?"): about
    // a name we placed, such a suggestion would list physical objects. Dropped.
    let mut out: String = message
        .split('\n')
        .filter_map(|line| match line.find("Did you mean") {
            Some(i) => Some(line[..i].trim_end()).filter(|l| !l.is_empty()),
            None => Some(line),
        })
        .collect::<Vec<_>>()
        .join("\n");
    for (physical, virtual_name) in blob.lines().filter_map(|l| l.split_once('\t')) {
        if !physical.is_empty() && !physical.eq_ignore_ascii_case(virtual_name) {
            out = replace_identifier(&out, physical, virtual_name);
        }
    }
    out
}

fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

/// Replaces whole-identifier, ASCII-case-insensitive occurrences of `needle`.
fn replace_identifier(hay: &str, needle: &str, with: &str) -> String {
    let h = hay.as_bytes();
    let n = needle.as_bytes();
    let mut out = String::with_capacity(hay.len());
    let mut i = 0;
    let mut copied = 0;
    while i + n.len() <= h.len() {
        let boundary_before = i == 0 || !is_ident_byte(h[i - 1]) || !is_ident_byte(n[0]);
        let end = i + n.len();
        let boundary_after = end == h.len() || !is_ident_byte(h[end]) || !is_ident_byte(n[n.len() - 1]);
        if boundary_before && boundary_after && h[i..end].eq_ignore_ascii_case(n) && hay.is_char_boundary(i) {
            out.push_str(&hay[copied..i]);
            out.push_str(with);
            i = end;
            copied = end;
        } else {
            i += 1;
        }
    }
    out.push_str(&hay[copied..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blob() -> String {
        names_blob(&mut vec![
            ("payroll_2024".into(), "pay".into()),
            ("secretdb.main.payroll_2024".into(), "hr.pay".into()),
            ("\"secretdb\".\"main\".\"payroll_2024\"".into(), "hr.pay".into()),
            ("secretdb".into(), "hr".into()),
            ("orders".into(), "orders".into()),
            ("orders".into(), "(hidden)".into()),
        ])
    }

    #[test]
    fn physical_names_become_virtual() {
        assert_eq!(
            translate(&blob(), "table \"payroll_2024\" has 2 columns but 3 values were supplied"),
            "table \"pay\" has 2 columns but 3 values were supplied"
        );
        assert_eq!(translate(&blob(), "Table with name SECRETDB.main.PAYROLL_2024 does not exist"), "Table with name hr.pay does not exist");
        assert_eq!(translate(&blob(), "NOT NULL constraint failed: payroll_2024.salary"), "NOT NULL constraint failed: pay.salary");
        assert_eq!(translate(&blob(), "Catalog \"secretdb\" does not exist!"), "Catalog \"hr\" does not exist!");
    }

    #[test]
    fn the_statement_excerpt_is_dropped() {
        assert_eq!(
            translate(&blob(), "Conversion Error: bad cast of column ssn\n\nLINE 1: SELECT * FROM (SELECT CAST(ssn AS INT) FROM \"secretdb\"...\n      ^^^"),
            "Conversion Error: bad cast of column ssn"
        );
    }

    #[test]
    fn suggestions_are_dropped() {
        assert_eq!(
            translate(&blob(), "Catalog Error: Table with name payroll_2024 does not exist!\nDid you mean \"otherdb.salaries\"?"),
            "Catalog Error: Table with name pay does not exist!"
        );
        assert_eq!(translate(&blob(), "no such table x! Did you mean \"y\"?"), "no such table x!");
    }

    #[test]
    fn only_whole_identifiers_are_replaced() {
        assert_eq!(translate(&blob(), "payroll_2024x and xpayroll_2024"), "payroll_2024x and xpayroll_2024");
        assert_eq!(translate(&blob(), "orders are fine"), "orders are fine");
    }
}
