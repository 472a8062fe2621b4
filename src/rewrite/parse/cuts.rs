//! Clauses that name nothing, cut out of DuckDB's printed text before sqlparser reads it and put
//! back once the rewrite is printed (spec 016, "Cut-outs"). sqlparser has no node for them, and
//! none of them can name a table, a function or a column outside the query they belong to:
//!
//! | printed by DuckDB | stands in the tree as | put back as |
//! | --- | --- | --- |
//! | `… USING SAMPLE 10.0% (System, 42)` (a query's sample) | `QUALIFY "m"` / `… AND "m"` | the clause |
//! | `t AS x TABLESAMPLE Reservoir(50.0 PERCENT)REPEATABLE (7)` | `TABLESAMPLE ("m")` | the clause |
//! | `OVER (… ROWS … EXCLUDE CURRENT ROW)` | `OVER (PARTITION BY "m", …)` | `EXCLUDE …` before the `)` |
//! | `a ASOF LEFT JOIN b ON c` / `USING (k)` | `a LEFT JOIN b ON "m" AND c` / `USING ("m", k)` | `ASOF` before the join |
//! | `a POSITIONAL JOIN b` | `a JOIN b ON "m"` | `POSITIONAL JOIN b`, without the ON |
//! | `r (n) USING KEY (n) AS (…)` | `r (n, "m") AS (…)` | `USING KEY (n)` after the column list |
//! | `PIVOT (… IN (…) GROUP BY "year")` | `IN (…, "m")` | `GROUP BY …` after the `IN` list |
//! | `(DESCRIBE (q))`, `(SUMMARIZE (q))` | `(SELECT * FROM (q) AS "m")` | `(DESCRIBE (q'))` with the rewritten q |
//! | `(DESCRIBE "tables")` etc. (`SHOW TABLES` as a FROM item) | the metadata listing's name | nothing: answered from the virtual catalog |
//!
//! The markers are `"__acl_cut<k>"`: no principal can write a name starting `__acl` (a printed text
//! holding one is never cut, and `check_reserved` refuses it), so each marker in the output is ours.
//! What is cut is kept as DuckDB's tokens of its own print (numbers, keywords, the names of the
//! query's own columns): the text that is put back is what DuckDB printed, never the principal's.
//! Each marker must come back exactly once, in its expected surroundings; otherwise the statement
//! is refused (a rule lost or moved it).
use crate::error::{AclError, Result};
use crate::prefix::{Token, TokenKind};

/// A marker's name for cut `k`.
pub fn marker(k: usize) -> String {
    format!("__acl_cut{k}")
}

/// Is `name` a cut's marker? (No principal's name can be: `check_reserved` allows only the
/// markers of the statement's own cuts.) A marker names nothing the rules should judge.
pub fn is_marker(name: &str) -> bool {
    name.strip_prefix("__acl_cut").is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// The names of the metadata listings a `SHOW …` FROM item becomes (`metadata` answers them).
pub const SHOW_TABLES: &str = "__acl_show_tables";
pub const SHOW_ALL_TABLES: &str = "__acl_show_all_tables";
pub const SHOW_DATABASES: &str = "__acl_show_databases";

#[derive(Debug, Clone, PartialEq, Eq)]
enum Kind {
    /// A query's `USING SAMPLE …` (the text after `USING SAMPLE`).
    Sample(String),
    /// A table's `TABLESAMPLE …` (the text after `TABLESAMPLE`).
    TableSample(String),
    /// A window frame's `EXCLUDE …` (the whole clause).
    Exclude(String),
    /// `ASOF` before a join.
    Asof,
    /// `POSITIONAL` before a join (which has no condition).
    Positional,
    /// A recursive CTE's `USING KEY (…)` (the whole clause).
    UsingKey(String),
    /// A PIVOT's `GROUP BY …` (the whole clause).
    PivotGroup(String),
    /// `DESCRIBE` or `SUMMARIZE` of a query in FROM.
    Describe(&'static str),
}

/// What was cut out of one statement.
#[derive(Debug, Default, Clone)]
pub struct Cuts {
    kinds: Vec<Kind>,
}

impl Cuts {
    pub fn is_empty(&self) -> bool {
        self.kinds.is_empty()
    }

    /// The identifiers this statement's cuts put in the text (which `check_reserved` allows).
    pub fn owns(&self, ident: &str) -> bool {
        let lower = ident.to_ascii_lowercase();
        if [SHOW_TABLES, SHOW_ALL_TABLES, SHOW_DATABASES].contains(&lower.as_str()) {
            return true;
        }
        lower.strip_prefix("__acl_cut").and_then(|n| n.parse::<usize>().ok()).is_some_and(|k| k < self.kinds.len() && marker(k) == lower)
    }
}

/// One token of a text: where it is and what it says.
#[derive(Clone, Copy)]
struct Tok<'t> {
    start: usize,
    end: usize,
    text: &'t str,
    kind: TokenKind,
}

fn toks<'t>(text: &'t str, tokens: &[Token]) -> Vec<Tok<'t>> {
    let mut out = Vec::with_capacity(tokens.len());
    for (i, t) in tokens.iter().enumerate() {
        if t.kind == TokenKind::Comment {
            continue;
        }
        let start = t.start.min(text.len());
        let next = tokens.get(i + 1).map_or(text.len(), |n| n.start).min(text.len());
        let raw = text.get(start..next).unwrap_or("");
        let word = raw.trim_end();
        out.push(Tok { start, end: start + word.len(), text: word, kind: t.kind });
    }
    out
}

fn is(t: &Tok<'_>, word: &str) -> bool {
    t.text.eq_ignore_ascii_case(word)
}

/// The index of the token closing the parenthesis opened at `open`.
fn closing(t: &[Tok<'_>], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, tok) in t.iter().enumerate().skip(open) {
        match tok.text {
            "(" => depth += 1,
            ")" => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// The index of the token opening the parenthesis closed at `close`.
fn opening(t: &[Tok<'_>], close: usize) -> Option<usize> {
    let mut depth = 0usize;
    for i in (0..=close).rev() {
        match t[i].text {
            ")" => depth += 1,
            "(" => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// An edit of the text: replace `start..end` with `with`.
struct Edit {
    start: usize,
    end: usize,
    with: String,
}

fn apply(text: &str, mut edits: Vec<Edit>) -> Result<String> {
    edits.sort_by_key(|e| (e.start, e.end));
    let mut out = String::with_capacity(text.len() + 32 * edits.len());
    let mut at = 0;
    for e in edits {
        if e.start < at || e.end < e.start || e.end > text.len() {
            return Err(AclError::internal("two cut-outs overlap"));
        }
        out.push_str(&text[at..e.start]);
        out.push_str(&e.with);
        at = e.end;
    }
    out.push_str(&text[at..]);
    Ok(out)
}

fn quoted_marker(k: usize) -> String {
    format!("\"{}\"", marker(k))
}

/// Quick test: could `printed` hold anything to cut? (Most statements hold none of these words.)
pub fn may_cut(printed: &str) -> bool {
    let upper = printed.to_ascii_uppercase();
    ["SAMPLE", "EXCLUDE", "ASOF", "POSITIONAL", "USING KEY", "PIVOT", "DESCRIBE", "SUMMARIZE"].iter().any(|w| upper.contains(w))
}

/// Cuts DuckDB's printed statement `printed` (its tokens `tokens`): the text sqlparser reads and
/// what to put back. `None` when there is nothing to cut.
pub fn cut(printed: &str, tokens: &[Token]) -> Result<Option<(String, Cuts)>> {
    if printed.to_ascii_lowercase().contains("__acl") {
        return Ok(None); // a principal's reserved name: never cut, refused by check_reserved
    }
    let t = toks(printed, tokens);
    let mut cuts = Cuts::default();
    let mut edits = Vec::new();
    let mut i = 0;
    while i < t.len() {
        let next = |n: usize| t.get(i + n);
        let k = cuts.kinds.len();
        // `(DESCRIBE (q))` / `(SUMMARIZE (q))`, and the SHOW forms DuckDB prints as DESCRIBE.
        if t[i].text == "(" && next(1).is_some_and(|w| is(w, "DESCRIBE") || is(w, "SUMMARIZE")) {
            let word = if is(&t[i + 1], "DESCRIBE") { "DESCRIBE" } else { "SUMMARIZE" };
            let end = closing(&t, i).ok_or_else(unbalanced)?;
            match next(2) {
                Some(open) if open.text == "(" => {
                    let inner = closing(&t, i + 2).ok_or_else(unbalanced)?;
                    if inner + 1 != end {
                        return Ok(None);
                    }
                    edits.push(Edit { start: t[i + 1].start, end: t[i + 1].end, with: "SELECT * FROM".into() });
                    edits.push(Edit { start: t[inner].end, end: t[inner].end, with: format!(" AS {}", quoted_marker(k)) });
                    cuts.kinds.push(Kind::Describe(word));
                }
                Some(name) if word == "DESCRIBE" && i + 3 == end && name.kind == TokenKind::Identifier => {
                    let listing = match name.text.to_ascii_lowercase().as_str() {
                        "\"tables\"" => SHOW_TABLES,
                        "\"databases\"" => SHOW_DATABASES,
                        _ => return Ok(None),
                    };
                    edits.push(Edit { start: t[i + 1].start, end: name.end, with: format!("SELECT * FROM {listing}") });
                }
                Some(close) if word == "DESCRIBE" && close.text == ")" => {
                    // `SHOW ALL TABLES` prints as `DESCRIBE ` with no name
                    edits.push(Edit { start: t[i + 1].start, end: t[i + 1].end, with: format!("SELECT * FROM {SHOW_ALL_TABLES}") });
                }
                _ => return Ok(None),
            }
            i += 2;
            continue;
        }
        if i > 0 && is(&t[i], "USING") && next(1).is_some_and(|w| is(w, "SAMPLE")) {
            // ` USING SAMPLE <size>[%] (<Method>[, <seed>])`, the end of its SELECT
            let open = i + 3 + usize::from(next(3).is_some_and(|w| w.text == "%"));
            if t.get(open).is_none_or(|w| w.text != "(") {
                return Ok(None);
            }
            let close = closing(&t, open).ok_or_else(unbalanced)?;
            let spec = printed[t[i + 2].start..t[close].end].to_string();
            let qualify = has_qualify(&t, i);
            let with = if qualify { format!(" AND {}", quoted_marker(k)) } else { format!(" QUALIFY {}", quoted_marker(k)) };
            edits.push(Edit { start: t[i - 1].end, end: t[close].end, with });
            cuts.kinds.push(Kind::Sample(spec));
            i = close + 1;
            continue;
        }
        if is(&t[i], "TABLESAMPLE") {
            // ` TABLESAMPLE <Method>(<size> PERCENT|ROWS)[REPEATABLE (<seed>)]`
            let open = i + 2;
            if t.get(open).is_none_or(|w| w.text != "(") {
                return Ok(None);
            }
            let mut close = closing(&t, open).ok_or_else(unbalanced)?;
            if t.get(close + 1).is_some_and(|w| is(w, "REPEATABLE")) {
                close = closing(&t, close + 2).ok_or_else(unbalanced)?;
            }
            let spec = printed[t[i + 1].start..t[close].end].to_string();
            edits.push(Edit { start: t[i].start, end: t[close].end, with: format!("TABLESAMPLE ({})", quoted_marker(k)) });
            cuts.kinds.push(Kind::TableSample(spec));
            i = close + 1;
            continue;
        }
        if i > 0 && is(&t[i], "EXCLUDE") && next(1).is_some_and(|w| ["CURRENT", "GROUP", "TIES", "NO"].iter().any(|x| is(w, x))) {
            // a frame's exclusion, the last thing in its window's parentheses
            let Some(window) = window_open(&t, i) else { return Ok(None) };
            let close = closing(&t, window).ok_or_else(unbalanced)?;
            let clause = printed[t[i].start..t[close - 1].end].to_string();
            edits.push(Edit { start: t[i - 1].end, end: t[close - 1].end, with: String::new() });
            if t.get(window + 1).is_some_and(|w| is(w, "PARTITION")) {
                edits.push(Edit { start: t[window + 2].end, end: t[window + 2].end, with: format!(" {},", quoted_marker(k)) });
            } else {
                edits.push(Edit { start: t[window + 1].start, end: t[window + 1].start, with: format!("PARTITION BY {} ", quoted_marker(k)) });
            }
            cuts.kinds.push(Kind::Exclude(clause));
            i = close + 1;
            continue;
        }
        if is(&t[i], "ASOF") && next(1).is_some_and(|w| is(w, "INNER") || is(w, "LEFT") || is(w, "JOIN")) {
            // the join's ON or USING, at this depth, after its relation
            let Some(on) = join_constraint(&t, i) else { return Ok(None) };
            edits.push(Edit { start: t[i].start, end: t[i + 1].start, with: String::new() });
            if is(&t[on], "ON") {
                edits.push(Edit { start: t[on].end, end: t[on].end, with: format!(" {} AND", quoted_marker(k)) });
            } else {
                edits.push(Edit { start: t[on + 1].end, end: t[on + 1].end, with: format!("{}, ", quoted_marker(k)) });
            }
            cuts.kinds.push(Kind::Asof);
            i += 1;
            continue;
        }
        if i > 0 && is(&t[i], "POSITIONAL") && !is(&t[i - 1], "AS") && next(1).is_some_and(|w| is(w, "JOIN")) {
            // `a POSITIONAL JOIN b`: an inner join whose condition is the marker
            let end = relation_end(&t, i + 2).ok_or_else(unbalanced)?;
            edits.push(Edit { start: t[i].start, end: t[i + 1].start, with: String::new() });
            edits.push(Edit { start: end, end, with: format!(" ON {}", quoted_marker(k)) });
            cuts.kinds.push(Kind::Positional);
            i += 2;
            continue;
        }
        if i > 0 && is(&t[i], "USING") && next(1).is_some_and(|w| is(w, "KEY")) && next(2).is_some_and(|w| w.text == "(") {
            // `r (cols) USING KEY (keys)` in a WITH
            let close = closing(&t, i + 2).ok_or_else(unbalanced)?;
            let clause = printed[t[i].start..t[close].end].to_string();
            edits.push(Edit { start: t[i - 1].end, end: t[close].end, with: String::new() });
            if t[i - 1].text == ")" {
                edits.push(Edit { start: t[i - 1].start, end: t[i - 1].start, with: format!(", {}", quoted_marker(k)) });
            } else {
                edits.push(Edit { start: t[i - 1].end, end: t[i - 1].end, with: format!(" ({})", quoted_marker(k)) });
            }
            cuts.kinds.push(Kind::UsingKey(clause));
            i = close + 1;
            continue;
        }
        if is(&t[i], "PIVOT") && next(1).is_some_and(|w| w.text == "(") {
            let close = closing(&t, i + 1).ok_or_else(unbalanced)?;
            let group = (i + 2..close).find(|&j| is(&t[j], "GROUP") && depth_between(&t, i + 1, j) == 1);
            if let Some(g) = group {
                // the IN list right before GROUP BY
                let in_close = g - 1;
                if t[in_close].text != ")" {
                    return Ok(None);
                }
                let clause = printed[t[g].start..t[close - 1].end].to_string();
                edits.push(Edit { start: t[in_close].end, end: t[close - 1].end, with: String::new() });
                edits.push(Edit { start: t[in_close].start, end: t[in_close].start, with: format!(", {}", quoted_marker(k)) });
                cuts.kinds.push(Kind::PivotGroup(clause));
            }
            i += 2;
            continue;
        }
        i += 1;
    }
    if cuts.kinds.is_empty() && edits.is_empty() {
        return Ok(None);
    }
    Ok(Some((apply(printed, edits)?, cuts)))
}

fn unbalanced() -> AclError {
    AclError::internal("DuckDB's print of the statement has unbalanced parentheses")
}

/// How deep token `j` sits inside the parenthesis opened at `open` (1: directly inside).
fn depth_between(t: &[Tok<'_>], open: usize, j: usize) -> usize {
    let mut depth = 0usize;
    for tok in &t[open..j] {
        match tok.text {
            "(" => depth += 1,
            ")" => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    depth
}

/// Does the SELECT that `USING SAMPLE` at `at` ends have a QUALIFY (at its own depth)?
fn has_qualify(t: &[Tok<'_>], at: usize) -> bool {
    let mut depth = 0i64;
    for j in (0..at).rev() {
        match t[j].text {
            ")" => depth += 1,
            "(" => {
                if depth == 0 {
                    return false; // the start of the parenthesis the SELECT stands in
                }
                depth -= 1;
            }
            _ if depth == 0 && is(&t[j], "QUALIFY") => return true,
            _ if depth == 0 && (is(&t[j], "SELECT") || is(&t[j], "UNION") || is(&t[j], "EXCEPT") || is(&t[j], "INTERSECT")) => {
                return false
            }
            _ => {}
        }
    }
    false
}

/// The `(` of the window (`OVER (`) whose frame holds the EXCLUDE at `at`.
fn window_open(t: &[Tok<'_>], at: usize) -> Option<usize> {
    let mut depth = 0i64;
    for j in (0..at).rev() {
        match t[j].text {
            ")" => depth += 1,
            "(" if depth == 0 => return (j > 0 && is(&t[j - 1], "OVER")).then_some(j),
            "(" => depth -= 1,
            _ => {}
        }
    }
    None
}

/// Where the relation that starts at token `from` (a join's right side) ends: before the first
/// token at its depth that starts another clause or join, or closes the parenthesis it stands in.
fn relation_end(t: &[Tok<'_>], from: usize) -> Option<usize> {
    const NEXT: &[&str] = &[
        "JOIN", "INNER", "LEFT", "RIGHT", "FULL", "CROSS", "NATURAL", "ASOF", "POSITIONAL", "SEMI", "ANTI", "ON", "USING",
        "WHERE", "GROUP", "HAVING", "WINDOW", "QUALIFY", "ORDER", "LIMIT", "OFFSET", "UNION", "EXCEPT", "INTERSECT",
        "RETURNING", "SET",
    ];
    let mut depth = 0usize;
    let mut last = None;
    for tok in t.iter().skip(from) {
        match tok.text {
            "(" => depth += 1,
            ")" if depth == 0 => break,
            ")" => depth -= 1,
            "," | ";" if depth == 0 => break,
            _ if depth == 0 && NEXT.iter().any(|w| is(tok, w)) => break,
            _ => {}
        }
        last = Some(tok.end);
    }
    if depth != 0 {
        return None;
    }
    last
}

/// The ON or USING of the join whose `ASOF` is at `at`: the first one at the same depth.
fn join_constraint(t: &[Tok<'_>], at: usize) -> Option<usize> {
    let mut depth = 0i64;
    for (j, tok) in t.iter().enumerate().skip(at + 1) {
        match tok.text {
            "(" => depth += 1,
            ")" if depth == 0 => return None,
            ")" => depth -= 1,
            _ if depth == 0 && is(tok, "ON") => return Some(j),
            _ if depth == 0 && is(tok, "USING") => return t.get(j + 1).filter(|n| n.text == "(").map(|_| j),
            _ => {}
        }
    }
    None
}

/// Puts every cut back into `output`, the rewrite of the statement as printed (its tokens
/// `tokens`). Each marker must stand exactly once where its kind leaves it.
pub fn restore(output: &str, tokens: &[Token], cuts: &Cuts) -> Result<String> {
    let t = toks(output, tokens);
    let lost = || AclError::internal("a clause cut out of the statement did not come back");
    let mut edits = Vec::new();
    for (k, kind) in cuts.kinds.iter().enumerate() {
        let m = quoted_marker(k);
        let mut at = t.iter().enumerate().filter(|(_, tok)| tok.text.eq_ignore_ascii_case(&m)).map(|(i, _)| i);
        let (Some(i), None) = (at.next(), at.next()) else { return Err(lost()) };
        let prev = i.checked_sub(1).map(|p| &t[p]);
        match kind {
            Kind::Sample(spec) => {
                let p = prev.filter(|p| is(p, "QUALIFY") || is(p, "AND")).ok_or_else(lost)?;
                edits.push(Edit { start: p.start, end: t[i].end, with: format!("USING SAMPLE {spec}") });
            }
            Kind::TableSample(spec) => {
                let ok = i >= 2 && is(&t[i - 2], "TABLESAMPLE") && t[i - 1].text == "(" && t.get(i + 1).is_some_and(|c| c.text == ")");
                if !ok {
                    return Err(lost());
                }
                edits.push(Edit { start: t[i - 2].start, end: t[i + 1].end, with: format!("TABLESAMPLE {spec}") });
            }
            Kind::Exclude(clause) => {
                let open = (0..i).rev().find(|&j| t[j].text == "(" && depth_between(&t, j, i) == 1).ok_or_else(lost)?;
                let close = closing(&t, open).ok_or_else(lost)?;
                if t.get(i + 1).is_some_and(|c| c.text == ",") {
                    edits.push(Edit { start: t[i].start, end: t[i + 2].start, with: String::new() });
                } else {
                    let ok = i >= 2 && is(&t[i - 2], "PARTITION") && is(&t[i - 1], "BY");
                    if !ok {
                        return Err(lost());
                    }
                    let end = t.get(i + 1).map_or(t[i].end, |n| n.start);
                    edits.push(Edit { start: t[i - 2].start, end, with: String::new() });
                }
                edits.push(Edit { start: t[close].start, end: t[close].start, with: format!(" {clause}") });
            }
            Kind::Asof => {
                // `… JOIN <relation> ON "m" AND …` or `USING ("m", …)`
                let p = prev.ok_or_else(lost)?;
                let constraint = if is(p, "ON") && t.get(i + 1).is_some_and(|a| is(a, "AND")) {
                    edits.push(Edit { start: t[i].start, end: t[i + 2].start, with: String::new() });
                    i - 1
                } else if p.text == "(" && i >= 2 && is(&t[i - 2], "USING") && t.get(i + 1).is_some_and(|c| c.text == ",") {
                    edits.push(Edit { start: t[i].start, end: t[i + 2].start, with: String::new() });
                    i - 2
                } else {
                    return Err(lost());
                };
                let join = join_keyword(&t, constraint).ok_or_else(lost)?;
                edits.push(Edit { start: t[join].start, end: t[join].start, with: "ASOF ".into() });
            }
            Kind::Positional => {
                // `… JOIN <relation> ON "m"`, the marker the whole condition
                prev.filter(|p| is(p, "ON")).ok_or_else(lost)?;
                if i < 2 || t.get(i + 1).is_some_and(|a| is(a, "AND") || is(a, "OR")) {
                    return Err(lost());
                }
                let first = join_keyword(&t, i - 1).ok_or_else(lost)?;
                let join = (first..i).find(|&j| is(&t[j], "JOIN")).ok_or_else(lost)?;
                if !(first..join).all(|j| is(&t[j], "INNER")) {
                    return Err(lost());
                }
                edits.push(Edit { start: t[first].start, end: t[join].end, with: "POSITIONAL JOIN".into() });
                edits.push(Edit { start: t[i - 2].end, end: t[i].end, with: String::new() });
            }
            Kind::UsingKey(clause) => {
                let p = prev.ok_or_else(lost)?;
                let close = t.get(i + 1).filter(|c| c.text == ")").ok_or_else(lost)?;
                if p.text == "," {
                    edits.push(Edit { start: p.start, end: t[i].end, with: String::new() });
                    edits.push(Edit { start: close.end, end: close.end, with: format!(" {clause}") });
                } else if p.text == "(" {
                    edits.push(Edit { start: p.start, end: close.end, with: clause.clone() });
                } else {
                    return Err(lost());
                }
            }
            Kind::PivotGroup(clause) => {
                let p = prev.filter(|p| p.text == ",").ok_or_else(lost)?;
                let close = t.get(i + 1).filter(|c| c.text == ")").ok_or_else(lost)?;
                edits.push(Edit { start: p.start, end: t[i].end, with: String::new() });
                edits.push(Edit { start: close.end, end: close.end, with: format!(" {clause}") });
            }
            Kind::Describe(word) => {
                // `(SELECT * FROM (<q>) AS "m")` → `(DESCRIBE (<q>))`
                let ok = i >= 2 && is(&t[i - 1], "AS") && t[i - 2].text == ")";
                if !ok {
                    return Err(lost());
                }
                let inner = opening(&t, i - 2).ok_or_else(lost)?;
                let from = inner.checked_sub(3).ok_or_else(lost)?;
                if !(is(&t[from], "SELECT") && t[from + 1].text == "*" && is(&t[from + 2], "FROM")) {
                    return Err(lost());
                }
                edits.push(Edit { start: t[from].start, end: t[inner].start, with: format!("{word} ") });
                edits.push(Edit { start: t[i - 2].end, end: t[i].end, with: String::new() });
            }
        }
    }
    apply(output, edits)
}

/// The first token of the join (its type keywords, then JOIN) whose ON/USING is at `constraint`.
fn join_keyword(t: &[Tok<'_>], constraint: usize) -> Option<usize> {
    let mut depth = 0i64;
    for j in (0..constraint).rev() {
        match t[j].text {
            ")" => depth += 1,
            "(" if depth == 0 => return None,
            "(" => depth -= 1,
            _ if depth == 0 && is(&t[j], "JOIN") => {
                let mut first = j;
                while first > 0 && ["INNER", "LEFT", "RIGHT", "FULL", "OUTER"].iter().any(|w| is(&t[first - 1], w)) {
                    first -= 1;
                }
                return Some(first);
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
pub(crate) mod tests;
