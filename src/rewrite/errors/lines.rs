//! The blob's lines that are not names (spec 002, "What a principal sees of DuckDB's own
//! errors"): one `O` line per policy object a statement used, for the drift check, and one `W`
//! line per column-restricted write target with the columns the principal may see, for
//! constraint messages. Both are made when the statement is decided (kept with the decision in
//! the cache), so a batch's blob costs one short line more per such object and nothing else.
use super::Slot;
use crate::policy::{Caps, ObjKey, PhysName};
use std::collections::BTreeSet;

/// Escapes the characters the lines use as separators (`%`, tab, newline, `.`, `,`, `+`), so any
/// name survives the round trip.
pub fn enc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '%' => out.push_str("%25"),
            '\t' => out.push_str("%09"),
            '\n' => out.push_str("%0A"),
            '\r' => out.push_str("%0D"),
            '.' => out.push_str("%2E"),
            ',' => out.push_str("%2C"),
            '+' => out.push_str("%2B"),
            c => out.push(c),
        }
    }
    out
}

/// `enc`'s inverse; `None` for text `enc` cannot have written.
pub fn dec(s: &str) -> Option<String> {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('%') {
        out.push_str(&rest[..i]);
        let code = rest.get(i + 1..i + 3)?;
        out.push(match code {
            "25" => '%',
            "09" => '\t',
            "0A" => '\n',
            "0D" => '\r',
            "2E" => '.',
            "2C" => ',',
            "2B" => '+',
            _ => return None,
        });
        rest = &rest[i + 3..];
    }
    out.push_str(rest);
    Some(out)
}

fn dotted(parts: [&str; 3]) -> String {
    parts.iter().map(|p| enc(p)).collect::<Vec<_>>().join(".")
}

fn undotted(s: &str) -> Option<[String; 3]> {
    let mut it = s.split('.');
    let parts = [dec(it.next()?)?, dec(it.next()?)?, dec(it.next()?)?];
    it.next().is_none().then_some(parts)
}

/// A policy object a statement used, the capability it used it for and the principal's roles
/// (a grant's slice is part of what must still bind: `rewrite::drift`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectLine {
    pub key: ObjKey,
    pub caps: Caps,
    pub roles: Vec<String>,
}

/// The blob entry of `ObjectLine`: `O\t<catalog>.<schema>.<name>+<cap>+…\t<role>,…`.
pub fn object_entry(key: &ObjKey, caps: Caps, roles: &[String]) -> (Slot, String, String) {
    let mut first = dotted([&key.catalog, &key.schema, &key.name]);
    for name in caps.names() {
        first.push('+');
        first.push_str(name);
    }
    (Slot::Object, first, roles.iter().map(|r| enc(r)).collect::<Vec<_>>().join(","))
}

/// Every `O` line of a blob, in the blob's order (a line that does not read is skipped).
pub fn objects(blob: &str) -> Vec<ObjectLine> {
    let read = |line: &str| -> Option<ObjectLine> {
        let (first, roles) = line.strip_prefix("O\t")?.split_once('\t')?;
        let mut parts = first.split('+');
        let [catalog, schema, name] = undotted(parts.next()?)?;
        let mut caps = Caps::NONE;
        for c in parts {
            caps = caps.union(Caps::parse_one(c).ok()?);
        }
        let roles = if roles.is_empty() { Vec::new() } else { roles.split(',').map(dec).collect::<Option<Vec<_>>>()? };
        Some(ObjectLine { key: ObjKey { catalog, schema, name }, caps, roles })
    };
    blob.lines().filter_map(read).collect()
}

/// The blob entry of a column-restricted write target: `W\t<db>.<schema>.<table>\t<col>,…`
/// (the columns the principal sees, lower-case).
pub fn write_entry(phys: &PhysName, visible: &BTreeSet<String>) -> (Slot, String, String) {
    let cols = visible.iter().map(|c| enc(c)).collect::<Vec<_>>().join(",");
    (Slot::Writes, dotted([&phys.db, &phys.schema, &phys.name]), cols)
}

/// A column-restricted write target: its physical table and the columns the principal sees.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Restricted {
    pub table: PhysName,
    pub visible: BTreeSet<String>,
}

/// Every `W` line of a blob. One that does not read (never written so) counts as a target whose
/// every column is hidden (fail closed).
pub fn restricted(blob: &str) -> Vec<Restricted> {
    let read = |line: &str| -> Option<Restricted> {
        let (table, cols) = line.split_once('\t')?;
        let [db, schema, name] = undotted(table)?;
        let visible = if cols.is_empty() { BTreeSet::new() } else { cols.split(',').map(dec).collect::<Option<_>>()? };
        Some(Restricted { table: PhysName { db, schema, name }, visible })
    };
    let unknown = || Restricted { table: PhysName { db: String::new(), schema: String::new(), name: String::new() }, visible: BTreeSet::new() };
    blob.lines().filter_map(|l| l.strip_prefix("W\t")).map(|l| read(l).unwrap_or_else(unknown)).collect()
}

/// Whether any `W` line is in the blob (cheaper than reading them).
pub fn any_restricted(blob: &str) -> bool {
    blob.starts_with("W\t") || blob.contains("\nW\t")
}
