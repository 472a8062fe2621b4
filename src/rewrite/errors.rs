//! DuckDB's own errors about a principal's statement (spec 002, "What a principal sees of
//! DuckDB's own errors"). Every such error comes back through the shim with the names the
//! decision placed and DuckDB's exception type, and is reported:
//!
//! - without DuckDB's `LINE n:` excerpt (it quotes the rewritten text) and, for binder and
//!   catalog errors, without its suggestions (`Did you mean …`, `Candidate bindings: …`, which
//!   list names from every attached database);
//! - with the object names in exactly the message templates whose slots can hold nothing but an
//!   object DuckDB resolved from a name the rewrite placed there (`table "X" has 3 columns but …`,
//!   `NOT NULL constraint failed: X.col`, `Catalog "X" does not exist!`, …) replaced by the
//!   principal's name for it — or by `(hidden)` when the decision has none (a table inside a
//!   virtual function's body, another table DuckDB names);
//! - with every ENUM type DuckDB prints (`ENUM('a', 'b')`, in conversion and binder errors) shown
//!   as `ENUM(…)`: its labels include those only hidden rows carry (spec 021);
//! - and otherwise byte for byte as DuckDB wrote it.
//!
//! Never rewriting text by whether it *looks like* a physical name is the point: the principal
//! writes values, aliases, qualifiers and column names into its own errors (`error('…')`, a bad
//! cast of `'guess'`, `SELECT guess.x FROM pay`), and any rewriting that depends on whether such a
//! word is a physical name is an oracle for guessing physical names (issue 10, finding 10).

/// What kind of object a template slot names; each slot is translated only by its own mapping.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Slot {
    /// A table or view name alone (`payroll_2024`).
    Table,
    /// A table qualified as DuckDB prints it: `db.schema.name` or `schema.name`.
    Qualified,
    /// A schema, as DuckDB prints it: `db.schema` or `schema`.
    Schema,
    /// A database (DuckDB's catalog).
    Catalog,
    /// Not a name: a policy object the statement used (`lines::object_entry`, the drift check).
    Object,
    /// Not a name: a column-restricted write target and the columns the principal sees
    /// (`lines::write_entry`, constraint messages).
    Writes,
}

impl Slot {
    fn code(self) -> char {
        match self {
            Slot::Table => 'T',
            Slot::Qualified => 'Q',
            Slot::Schema => 'S',
            Slot::Catalog => 'C',
            Slot::Object => 'O',
            Slot::Writes => 'W',
        }
    }
}

/// First line of every principal batch's blob: the shim remembers (and translates the errors of)
/// exactly the statements whose blob is not empty, so a statement that names no table is covered
/// too. Management batches carry the header alone (their validation statements bind with
/// replacement scans off, their errors name nothing physical); `ACL NATIVE` statements none.
const HEADER: &str = "acl names\n";

/// One line per name: `<slot>\t<physical>\t<virtual>`. The first mapping recorded for a slot and
/// a spelling (ASCII case-insensitive, as DuckDB folds names) wins, including one that maps a
/// name to itself.
pub fn names_blob<'a>(names: impl IntoIterator<Item = &'a (Slot, String, String)>) -> String {
    // Borrowed, not cloned: a batch's names stay in its statements' cached decisions.
    let mut names: Vec<&(Slot, String, String)> = names.into_iter().collect();
    // Stable: among equal keys the first recorded stays first, and `dedup_by` keeps it.
    names.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| fold(&a.1).cmp(fold(&b.1))));
    names.dedup_by(|later, first| later.0 == first.0 && later.1.eq_ignore_ascii_case(&first.1));
    let mut out = String::with_capacity(HEADER.len() + names.iter().map(|(_, p, v)| p.len() + v.len() + 4).sum::<usize>());
    out.push_str(HEADER);
    for (slot, p, v) in names {
        if p.contains(['\t', '\n']) || v.contains(['\t', '\n']) {
            continue; // cannot be represented: such a slot reads as `(hidden)`
        }
        out.push(slot.code());
        out.push('\t');
        out.push_str(p);
        out.push('\t');
        out.push_str(v);
        out.push('\n');
    }
    out
}

fn fold(s: &str) -> impl Iterator<Item = u8> + '_ {
    s.bytes().map(|c| c.to_ascii_lowercase())
}

/// A piece of a message template.
#[derive(Clone, Copy)]
enum Piece {
    Lit(&'static str),
    /// An object slot, translated by its mapping (`(hidden)` when it has none).
    Obj(Slot),
    /// A slot whose content may be an alias the principal wrote or a physical name: always
    /// `(hidden)`, so what is shown never depends on which it was.
    Hidden,
    /// Anything else (numbers, column names, values, expressions): left as DuckDB wrote it.
    Any,
    /// A column of the table in the slot before it: `(a column hidden from you)` when the
    /// principal's grant on that write target does not show it (`hidden`).
    Col,
    /// A CHECK constraint of the table in the slot before it (`CHECK(<expr>)`, maybe followed by
    /// DuckDB's ` (Error: …)`): withheld when it reads a column the principal does not see.
    Check,
    /// An index key as DuckDB prints it (`col: value, …`): withheld when a column-restricted
    /// target's key names a column the principal does not see.
    Key,
    /// The values of a whole key or row without column names: withheld on a column-restricted
    /// target (which columns they are cannot be told).
    Values,
    /// A foreign key's `col: value` pairs: DuckDB names the columns of the *other* table's index
    /// (the referenced table's on an insert, the referencing one's on a delete), a table the
    /// principal may not see at all, with the target's values (a hidden default among them):
    /// always withheld.
    ForeignKey,
}

use Piece::{Any, Check, Col, ForeignKey, Hidden, Key, Lit, Obj, Values};

/// `(DuckDB exception type, template)`, one per message that prints an object a rewritten
/// statement names; read from DuckDB v2.0.0's sources (binder, catalog, storage) and checked
/// against its messages (test/sql/refusals/translated_errors.test). A template matches the whole
/// message (after the excerpt and suggestions are dropped) and only under its exception type,
/// so text the principal wrote — which DuckDB only ever puts in `Any` slots or in messages of
/// other types (`error()` raises Invalid Input) — can never fill an object slot.
const TEMPLATES: &[(&str, &[Piece])] = &[
    // INSERT target (bind_insert.cpp, table_catalog_entry.cpp)
    ("Binder", &[Lit("table "), Obj(Slot::Table), Lit(" has "), Any, Lit(" columns but "), Any, Lit(" values were supplied")]),
    ("Binder", &[Lit("Table "), Obj(Slot::Table), Lit(" does not have a column with name "), Any]),
    ("Binder", &[Lit("View "), Obj(Slot::Table), Lit(" does not have a column with name "), Any]),
    // `FROM t AS x(a, b, …)`: a base table prints its own name, a CTE the principal's alias
    ("Binder", &[Lit("table "), Hidden, Lit(" has "), Any, Lit(" columns available but "), Any, Lit(" columns specified")]),
    ("Binder", &[Lit("Catalog "), Obj(Slot::Catalog), Lit(" does not exist!")]),
    // catalog lookups of placed names (catalog.cpp, catalog_exception.cpp)
    ("Catalog", &[Lit("Table with name "), Obj(Slot::Table), Lit(" does not exist!")]),
    ("Catalog", &[Lit("View with name "), Obj(Slot::Table), Lit(" does not exist!")]),
    (
        "Catalog",
        &[Lit("Table with name "), Obj(Slot::Qualified), Lit(" does not exist because schema "), Obj(Slot::Schema), Lit(" does not exist.")],
    ),
    ("Catalog", &[Lit("Schema with name "), Obj(Slot::Schema), Lit(" does not exist!")]),
    ("Catalog", &[Lit("Catalog with name "), Obj(Slot::Catalog), Lit(" does not exist!")]),
    ("Catalog", &[Lit("Table with name "), Obj(Slot::Table), Lit(" already exists!")]),
    ("Catalog", &[Lit("View with name "), Obj(Slot::Table), Lit(" already exists!")]),
    ("Catalog", &[Lit("Existing object "), Obj(Slot::Table), Lit(" is of type "), Any]),
    ("Catalog", &[Lit("Could not drop the table because this table is main key table of the table "), Obj(Slot::Table)]),
    ("Catalog", &[Lit("table "), Obj(Slot::Table), Lit(" does not have a column named "), Any]),
    ("Catalog", &[Obj(Slot::Table), Lit(" is not an "), Any]),
    ("Parser", &[Lit("table "), Obj(Slot::Table), Lit(" has more than one primary key")]),
    // storage (data_table.cpp, row_group_collection.cpp)
    ("Constraint", &[Lit("NOT NULL constraint failed: "), Obj(Slot::Table), Lit("."), Col]),
    ("Constraint", &[Lit("CHECK constraint failed on table "), Obj(Slot::Table), Lit(" with expression "), Check]),
    // index keys (art.cpp, bound_index.cpp): the fixed ends anchor the key, whatever its values hold
    ("Constraint", &[Lit("Duplicate key \""), Key, Lit("\" violates primary key constraint.")]),
    ("Constraint", &[Lit("Duplicate key \""), Key, Lit("\" violates unique constraint.")]),
    ("Constraint", &[Lit("Violates foreign key constraint because key \""), ForeignKey, Lit("\" does not exist in the referenced table")]),
    (
        "Constraint",
        &[
            Lit("Violates foreign key constraint because key \""),
            ForeignKey,
            Lit("\" is still referenced by a foreign key in a different table. If this is an unexpected constraint \
                 violation, please refer to our foreign key limitations in the documentation"),
        ],
    ),
    ("Constraint", &[Lit("PRIMARY KEY or UNIQUE constraint violation: duplicate key \""), Values, Lit("\"")]),
    ("TransactionContext", &[Lit("Catalog write-write conflict on create with "), Hidden]),
    (
        "Invalid Input",
        &[Lit("Cannot execute statement of type "), Any, Lit(" on database "), Obj(Slot::Catalog), Lit(" which is attached in read-only mode!")],
    ),
];

/// The message of a DuckDB error (`kind`: `Exception::ExceptionTypeToString`) about a
/// principal's statement, as the principal sees it.
pub fn translate(blob: &str, kind: &str, message: &str) -> String {
    let mut message = strip_excerpt(message);
    if matches!(kind, "Binder" | "Catalog") {
        message = strip_suggestions(message);
    }
    for (k, template) in TEMPLATES {
        if *k != kind {
            continue;
        }
        let mut slots = Vec::new();
        if matches(template, message, &mut slots) {
            return without_labels(&render(blob, template, &slots));
        }
    }
    // A constraint message no template reads may name any column of the target: on a
    // column-restricted one it is withheld (fail closed).
    if kind == "Constraint" && lines::any_restricted(blob) {
        return hidden::WITHHELD.to_string();
    }
    without_labels(message)
}

/// Every `ENUM('…', …)` (DuckDB's print of an ENUM type: labels quoted as SQL strings, joined by
/// `, `) as `ENUM(…)`. One that does not close is cut to the end of the message. Depends on the
/// text's shape alone, so it tells nothing about any name or label.
fn without_labels(message: &str) -> String {
    const OPEN: &str = "ENUM('";
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(at) = rest.find(OPEN) {
        out.push_str(&rest[..at]);
        out.push_str("ENUM(…)");
        rest = match labels_end(&rest[at + OPEN.len() - 1..]) {
            Some(end) => &rest[at + OPEN.len() - 1 + end..],
            None => "",
        };
    }
    out.push_str(rest);
    out
}

/// In `'a', 'b''c')…`, the position just past the `)` that closes the list of labels.
fn labels_end(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    let mut i = 0;
    loop {
        if b.get(i) != Some(&b'\'') {
            return None;
        }
        i += 1;
        loop {
            match b.get(i)? {
                b'\'' if b.get(i + 1) == Some(&b'\'') => i += 2,
                b'\'' => break,
                _ => i += 1,
            }
        }
        i += 1;
        match (b.get(i), b.get(i + 1)) {
            (Some(b')'), _) => return Some(i + 1),
            (Some(b','), Some(b' ')) => i += 2,
            _ => return None,
        }
    }
}

/// Drops DuckDB's excerpt of the statement, which it appends last (`QueryErrorContext::Format`):
/// `\n\nLINE <n>: <text>\n<spaces><carets>`.
fn strip_excerpt(message: &str) -> &str {
    let Some(at) = message.rfind("\n\nLINE ") else { return message };
    let tail = &message[at + 7..];
    let digits = tail.bytes().take_while(u8::is_ascii_digit).count();
    let well_formed = digits > 0
        && tail[digits..].starts_with(": ")
        && tail.rsplit_once('\n').is_some_and(|(text, carets)| {
            !text.is_empty() && carets.trim_start_matches(' ').starts_with('^') && carets.trim_start_matches([' ', '^']).is_empty()
        });
    if well_formed {
        &message[..at]
    } else {
        message
    }
}

/// Drops DuckDB's suggestions, which it appends on lines of their own: `Did you mean "x"?`
/// (catalog), `Did you mean: "x"`, `Candidate bindings: …`, `Candidate tables: …` (binder).
fn strip_suggestions(message: &str) -> &str {
    const MARKERS: [&str; 3] = ["\nDid you mean", "\nCandidate bindings", "\nCandidate tables"];
    let cut = MARKERS.iter().filter_map(|m| message.find(m)).min();
    match cut {
        Some(i) => message[..i].trim_end_matches('\n'),
        None => message,
    }
}

/// Does `message` match `template` whole? Fills `slots` with the text of each non-literal piece.
fn matches<'m>(template: &[Piece], message: &'m str, slots: &mut Vec<&'m str>) -> bool {
    match template.split_first() {
        None => message.is_empty(),
        Some((Lit(l), rest)) => message.strip_prefix(l).is_some_and(|m| matches(rest, m, slots)),
        Some((piece, rest)) => {
            // Shortest slot first: an object slot comes before any text the principal wrote, so
            // the first way the rest matches puts DuckDB's object in it. An object slot is one
            // line, and a complete quoted identifier when it starts with a quote.
            let mut ends: Vec<usize> = message.char_indices().map(|(i, _)| i).skip(1).collect();
            ends.push(message.len());
            for end in ends {
                let text = &message[..end];
                if matches!(piece, Obj(_)) && (text.contains('\n') || (text.starts_with('"') && unquote(text).is_none())) {
                    continue;
                }
                slots.push(text);
                if matches(rest, &message[end..], slots) {
                    return true;
                }
                slots.pop();
            }
            false
        }
    }
}

/// `"a""b"` → `a"b`; `None` unless the whole text is one quoted identifier.
fn unquote(text: &str) -> Option<String> {
    let inner = text.strip_prefix('"')?.strip_suffix('"')?;
    if inner.replace("\"\"", "").contains('"') {
        return None;
    }
    Some(inner.replace("\"\"", "\""))
}

fn render(blob: &str, template: &[Piece], slots: &[&str]) -> String {
    let mut out = String::new();
    let mut slot = slots.iter();
    // The physical table of the last object slot, as DuckDB printed it (for `Col` and `Check`).
    let mut table = "";
    for piece in template {
        match piece {
            Lit(l) => out.push_str(l),
            Any => out.push_str(slot.next().copied().unwrap_or("")),
            Col => {
                let col = slot.next().copied().unwrap_or("");
                out.push_str(if hidden::column_shown(blob, table, col) { col } else { hidden::COLUMN });
            }
            Check => {
                let check = slot.next().copied().unwrap_or("");
                out.push_str(if hidden::check_shown(blob, table, check) { check } else { hidden::OVER_HIDDEN });
            }
            Key => {
                let key = slot.next().copied().unwrap_or("");
                out.push_str(if hidden::key_shown(blob, key) { key } else { hidden::OVER_HIDDEN });
            }
            Values => {
                let values = slot.next().copied().unwrap_or("");
                out.push_str(if lines::any_restricted(blob) { hidden::VALUES } else { values });
            }
            ForeignKey => {
                slot.next();
                out.push_str(hidden::FOREIGN_KEY);
            }
            Hidden => {
                slot.next();
                out.push_str("(hidden)");
            }
            Obj(kind) => {
                let text = slot.next().copied().unwrap_or("");
                table = text;
                let (name, quoted) = match unquote(text) {
                    Some(n) => (n, true),
                    None => (text.to_string(), false),
                };
                let shown = lookup(blob, *kind, &name).unwrap_or("(hidden)");
                if quoted {
                    crate::sqltext::push_ident(&mut out, shown);
                } else {
                    out.push_str(shown);
                }
            }
        }
    }
    out
}

/// The principal's name for a placed object (a schema slot may also print a database).
fn lookup<'b>(blob: &'b str, kind: Slot, name: &str) -> Option<&'b str> {
    let find = |code: char| {
        blob.lines().filter_map(|l| l.strip_prefix(code)?.strip_prefix('\t')?.split_once('\t')).find(|(p, _)| p.eq_ignore_ascii_case(name))
    };
    let found = match kind {
        Slot::Schema => find('S').or_else(|| find('C')),
        k => find(k.code()),
    };
    found.map(|(_, v)| v)
}

pub mod hidden;
pub mod lines;

#[cfg(test)]
mod tests;
