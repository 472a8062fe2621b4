//! Shared pieces of the fuzz targets: a stand-in for DuckDB's tokenizer (the splitter takes
//! DuckDB's tokens, which a fuzz target cannot call), a fixed policy with its principals, the
//! properties each target checks; the small SQL grammar driven by `arbitrary` is `grammar`.
use acl::authz::{Principal, View};
use acl::policy::Policy;
use acl::prefix::{Batch, Token, TokenKind};
use arbitrary::Unstructured;
use sqlparser::ast::{Expr, ObjectName, ObjectNamePart, Statement, TableFactor, Visit, Visitor};
use sqlparser::parser::Parser;
use std::collections::BTreeSet;
use std::ops::ControlFlow;

// ---------------------------------------------------------------------------------------------
// Tokens
// ---------------------------------------------------------------------------------------------

const KEYWORDS: &[&str] = &[
    "select", "from", "where", "role", "admin", "token", "session", "insert", "into", "update", "delete",
    "merge", "with", "as", "and", "or", "not", "values", "set", "table", "join", "on", "group", "by",
    "order", "limit", "union", "all", "create", "drop", "grant", "begin", "commit", "rollback",
];

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b >= 0x80
}

/// Advances `i` to the next char boundary of `q` (inclusive).
fn boundary(q: &str, mut i: usize) -> usize {
    while i < q.len() && !q.is_char_boundary(i) {
        i += 1;
    }
    i.min(q.len())
}

/// An approximation of DuckDB's `Parser::Tokenize` (PostgreSQL's scanner, simplified token
/// types): `--` and nested `/* */` comments, `'…'` / `E'…'` / `$tag$…$tag$` strings, `"…"`
/// identifiers, numbers, words (keywords from a short list), operator runs, and `;` always a
/// token of its own. Starts are byte offsets on char boundaries, strictly increasing.
pub fn tokenize(q: &str) -> Vec<Token> {
    let b = q.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if is_space(c) {
            i += 1;
            continue;
        }
        // DuckDB turns unicode spaces into blanks before it tokenizes
        if c >= 0x80 {
            if let Some(ch) = q[i..].chars().next().filter(|ch| ch.is_whitespace()) {
                i += ch.len_utf8();
                continue;
            }
        }
        let start = i;
        let kind;
        if c == b'-' && b.get(i + 1) == Some(&b'-') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            kind = TokenKind::Comment;
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            let mut depth = 0usize;
            while i < b.len() {
                if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                    depth += 1;
                    i += 2;
                } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            kind = TokenKind::Comment;
        } else if c == b'\'' || ((c == b'e' || c == b'E') && b.get(i + 1) == Some(&b'\'')) {
            let escapes = c != b'\'';
            i += if escapes { 2 } else { 1 };
            while i < b.len() {
                if escapes && b[i] == b'\\' {
                    i += 2;
                } else if b[i] == b'\'' && b.get(i + 1) == Some(&b'\'') {
                    i += 2;
                } else if b[i] == b'\'' {
                    i += 1;
                    break;
                } else {
                    i += 1;
                }
            }
            kind = TokenKind::String;
        } else if c == b'"' {
            i += 1;
            while i < b.len() {
                if b[i] == b'"' && b.get(i + 1) == Some(&b'"') {
                    i += 2;
                } else if b[i] == b'"' {
                    i += 1;
                    break;
                } else {
                    i += 1;
                }
            }
            kind = TokenKind::Identifier;
        } else if c == b'$' {
            // $tag$ … $tag$ (tag may be empty); a lone `$1` is a parameter (operator + number).
            let tag_end = b[i + 1..].iter().position(|x| !(x.is_ascii_alphanumeric() || *x == b'_')).map(|p| i + 1 + p);
            match tag_end {
                Some(e) if b[e] == b'$' && !b[i + 1..e].first().is_some_and(u8::is_ascii_digit) => {
                    let tag = &q[i..=e];
                    i = match q[e + 1..].find(tag) {
                        Some(p) => e + 1 + p + tag.len(),
                        None => b.len(),
                    };
                    kind = TokenKind::String;
                }
                _ => {
                    i += 1;
                    kind = TokenKind::Operator;
                }
            }
        } else if c.is_ascii_digit() {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'.' || b[i] == b'_') {
                i += 1;
            }
            kind = TokenKind::Numeric;
        } else if is_ident_byte(c) {
            while i < b.len() && is_ident_byte(b[i]) {
                if b[i] >= 0x80 && q.is_char_boundary(i) && q[i..].chars().next().is_some_and(char::is_whitespace) {
                    break;
                }
                i += 1;
            }
            let word = q[start..boundary(q, i)].to_ascii_lowercase();
            kind = if KEYWORDS.contains(&word.as_str()) { TokenKind::Keyword } else { TokenKind::Identifier };
        } else if c == b';' || b"(),[]{}.:".contains(&c) {
            i += 1;
            kind = TokenKind::Operator;
        } else {
            while i < b.len() && b"+-*/<>=~!@#%^&|`?".contains(&b[i]) {
                // a comment start ends an operator run, as in PostgreSQL
                if i > start && (b[i..].starts_with(b"--") || b[i..].starts_with(b"/*")) {
                    break;
                }
                i += 1;
            }
            if i == start {
                i += 1;
            }
            kind = TokenKind::Operator;
        }
        i = boundary(q, i);
        out.push(Token { start, kind });
    }
    out
}

/// Re-cuts and re-labels a token list from fuzzer bytes, keeping what DuckDB guarantees:
/// starts on char boundaries, non-decreasing, within the text.
pub fn mangle(q: &str, mut tokens: Vec<Token>, u: &mut Unstructured<'_>) -> Vec<Token> {
    let kinds = [
        TokenKind::Identifier,
        TokenKind::Numeric,
        TokenKind::String,
        TokenKind::Operator,
        TokenKind::Keyword,
        TokenKind::Comment,
        TokenKind::Error,
    ];
    let n = u.arbitrary_len::<u8>().unwrap_or(0).min(64);
    for _ in 0..n {
        let op: u8 = u.arbitrary().unwrap_or(0);
        match op % 4 {
            0 if !tokens.is_empty() => {
                let i = usize::from(u.arbitrary::<u16>().unwrap_or(0)) % tokens.len();
                tokens.remove(i);
            }
            1 if !tokens.is_empty() => {
                let i = usize::from(u.arbitrary::<u16>().unwrap_or(0)) % tokens.len();
                tokens[i].kind = kinds[usize::from(u.arbitrary::<u8>().unwrap_or(0)) % kinds.len()];
            }
            _ => {
                let at = boundary(q, usize::from(u.arbitrary::<u16>().unwrap_or(0)) % (q.len() + 1));
                let kind = kinds[usize::from(u.arbitrary::<u8>().unwrap_or(0)) % kinds.len()];
                let pos = tokens.partition_point(|t| t.start <= at);
                tokens.insert(pos, Token { start: at, kind });
            }
        }
    }
    tokens
}

fn range_of(outer: &str, inner: &str) -> (usize, usize) {
    let start = inner.as_ptr() as usize - outer.as_ptr() as usize;
    (start, start + inner.len())
}

/// The splitter's properties. `exact`: the tokens are a faithful tokenization (then no code
/// may be lost and no `;` may end up inside a statement).
pub fn check_split(q: &str, tokens: &[Token], exact: bool) {
    let result = acl::prefix::split(q, tokens);
    let Ok(Some(Batch { prefix, statements, .. })) = result else { return };
    assert!(!statements.is_empty(), "a batch with no statements was accepted");
    // The prefix is the first real token, `ACL`.
    let first = tokens.iter().position(|t| t.kind != TokenKind::Comment).expect("a first token");
    let first_end = tokens.get(first + 1).map_or(q.len(), |t| t.start);
    assert!(q[tokens[first].start..first_end].trim_end().eq_ignore_ascii_case("acl"), "prefix without ACL");
    // Statements are substrings of the input, in order, not overlapping, after the prefix.
    let mut last_end = first_end;
    let mut ranges = Vec::new();
    for s in &statements {
        let within = (s.as_ptr() as usize) >= (q.as_ptr() as usize)
            && (s.as_ptr() as usize + s.len()) <= (q.as_ptr() as usize + q.len());
        assert!(within, "statement {s:?} is not a substring of the input");
        let (a, z) = range_of(q, s);
        assert!(a >= last_end, "statements out of order or overlapping the prefix: {statements:?}");
        // (a re-cut token list can mark a blank stretch as code; DuckDB's tokens never do)
        assert!(!exact || !s.trim().is_empty(), "an empty statement was kept");
        last_end = z;
        ranges.push((a, z));
    }
    if let acl::prefix::Prefix::Role(r) = &prefix {
        assert!(!r.contains('\0') || q.contains('\0'));
    }
    if !exact {
        return;
    }
    // `ranges` is sorted and disjoint: a binary search finds the statement around a position
    let inside_any = |p: usize| {
        let i = ranges.partition_point(|&(a, _)| a <= p);
        i > 0 && p < ranges[i - 1].1
    };
    // Every `;` operator token after the prefix separates statements: none is inside one.
    for t in tokens.iter().filter(|t| t.start >= first_end) {
        let semicolon = t.kind == TokenKind::Operator && q.as_bytes().get(t.start) == Some(&b';');
        if semicolon {
            assert!(!inside_any(t.start), "a ';' token at {} is inside a statement", t.start);
        }
    }
    // No code is lost: every non-comment token after the prefix argument lies in a statement.
    let body_from = statements.first().map_or(q.len(), |s| range_of(q, s).0);
    for t in tokens.iter().filter(|t| t.start >= body_from && t.kind != TokenKind::Comment) {
        let semicolon = t.kind == TokenKind::Operator && q.as_bytes().get(t.start) == Some(&b';');
        if semicolon {
            continue;
        }
        assert!(inside_any(t.start), "the token at {} ({:?}) is in no statement: {statements:?}", t.start, t.kind);
    }
}

// ---------------------------------------------------------------------------------------------
// The fixed policy
// ---------------------------------------------------------------------------------------------

/// Management statements that build the fuzzed policy. Physical names are distinctive
/// (`pdb_`, `ph_`) so a message that echoes one is easy to spot.
pub const POLICY: &[&str] = &[
    "CREATE VIRTUAL CATALOG sales",
    "CREATE VIRTUAL TABLE sales.orders AS pdb_main.main.ph_orders",
    "CREATE VIRTUAL TABLE sales.items AS pdb_main.main.ph_order_items",
    "CREATE VIRTUAL TABLE sales.eu.orders AS pdb_main.ph_eu.ph_orders",
    "CREATE VIRTUAL TABLE sales.people AS pdb_main.main.ph_people COLUMNS (id, ssn = NULL, email = left(email, 2) || '…', tenant) RLS (tenant = acl_claim('tenant'))",
    "CREATE VIRTUAL CATALOG hr",
    "CREATE VIRTUAL TABLE hr.people AS pdb_hr.main.ph_staff",
    "CREATE VIRTUAL TABLE hr.salaries AS pdb_hr.main.ph_salaries",
    "CREATE VIRTUAL CATALOG vault",
    "CREATE VIRTUAL TABLE vault.keys AS pdb_vault.main.ph_keys",
    "CREATE ROLE analyst CLAIMS (tenant = 'acme')",
    "GRANT CATALOG sales TO ROLE analyst WITH (select) MAIN",
    "CREATE ROLE clerk",
    "GRANT CATALOG sales TO ROLE clerk WITH (writer) MAIN",
    "GRANT TABLE sales.items TO ROLE clerk WITH (select, insert)",
    "CREATE ROLE hr_reader",
    "GRANT TABLE hr.people TO ROLE hr_reader WITH (select)",
    "CREATE ROLE agent CLAIMS (tenant = 'globex')",
    "GRANT CATALOG sales TO ROLE agent WITH (select) MAIN RLS (tenant = acl_claim('tenant'))",
];

const SALES: &[(&str, &str, &str)] = &[
    ("pdb_main", "main", "ph_orders"),
    ("pdb_main", "main", "ph_order_items"),
    ("pdb_main", "ph_eu", "ph_orders"),
    ("pdb_main", "main", "ph_people"),
];

/// Words that only physical names contain: a refusal may show one only if the input had it.
pub const PHYSICAL_WORDS: &[&str] = &["pdb_", "ph_"];

pub struct Fixture {
    pub policy: Policy,
    /// Each principal with the physical tables its grants reach.
    pub principals: Vec<(Principal, BTreeSet<(String, String, String)>)>,
}

fn set(items: &[(&str, &str, &str)]) -> BTreeSet<(String, String, String)> {
    items.iter().map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string())).collect()
}

impl Fixture {
    pub fn new() -> Fixture {
        let mut policy = Policy::default();
        policy.functions.host = std::sync::Arc::new(acl::policy::categories::categorise(&host_rows()));
        for s in POLICY {
            let cmd = acl::admin::parse(s).unwrap_or_else(|e| panic!("fixture statement {s:?}: {e}"));
            acl::admin::apply(&mut policy, &cmd).unwrap_or_else(|e| panic!("fixture statement {s:?}: {e}"));
        }
        let hr = [("pdb_hr", "main", "ph_staff")];
        let mut both = Principal::role("analyst");
        both.roles.push("hr_reader".into());
        both.label = "principal analyst+hr_reader".into();
        let both_set: Vec<_> = SALES.iter().chain(hr.iter()).copied().collect();
        let principals = vec![
            (Principal::role("analyst"), set(SALES)),
            (Principal::role("clerk"), set(SALES)),
            (Principal::role("hr_reader"), set(&hr)),
            (Principal::role("agent"), set(SALES)),
            (both, set(&both_set)),
        ];
        Fixture { policy, principals }
    }
}

/// A small stand-in for the host's `duckdb_functions()`: enough names for the grammar, in each
/// shipped category and in the never set.
fn host_rows() -> Vec<acl::policy::categories::HostRow> {
    let scalar = [
        "lower", "upper", "abs", "coalesce", "length", "error", "left", "list_transform", "nullif", "+", "-", "*",
        "/", "=", "<", "<>", "||", "~~", "date_part", "list_value", "struct_pack", "getvariable", "current_setting",
        "nextval", "acl_exec", "acl_claim", "query", "json_execute_serialized_sql", "json_serialize_sql",
        "sqlite_query", "__internal_x", "version", "current_database",
    ];
    let aggregate = ["count", "count_star", "sum", "max", "min"];
    let table = ["read_csv", "query", "query_table", "range", "glob", "acl_roles", "unnest", "duckdb_tables"];
    let row = |name: &str, ty: &str| acl::policy::categories::HostRow {
        db: "system".into(),
        schema: "main".into(),
        name: name.into(),
        function_type: ty.into(),
        macro_definition: None,
    };
    scalar
        .iter()
        .map(|n| row(n, "scalar"))
        .chain(aggregate.iter().map(|n| row(n, "aggregate")))
        .chain(table.iter().map(|n| row(n, "table")))
        .collect()
}

impl Default for Fixture {
    fn default() -> Self {
        Self::new()
    }
}

// ---------------------------------------------------------------------------------------------
// The rewriter's properties
// ---------------------------------------------------------------------------------------------

struct OutputCheck<'a> {
    allowed: &'a BTreeSet<(String, String, String)>,
    problem: Option<String>,
    /// Addresses of the names of table-function calls seen in FROM (their names are visited as
    /// relations too).
    table_functions: Vec<usize>,
    /// The input names no `leakproof` function: every `acl_leakproof[_strict]` call in the output
    /// is then the typed guard's own (spec 002), which the policy emits and the principal cannot.
    guard_calls_are_policy: bool,
}

/// The typed guard's functions (spec 002, "Known types"): never callable by a principal, but the
/// rewrite of a sliced object emits them, qualified, in its own SQL.
fn guard_function(f: &sqlparser::ast::Function) -> bool {
    let parts: Vec<String> = f.name.0.iter().map(|p| p.to_string().trim_matches('"').to_ascii_lowercase()).collect();
    matches!(parts.as_slice(), [c, s, n] if c == "system" && s == "main" && (n == "acl_leakproof" || n == "acl_leakproof_strict" || n == "acl_enum_varchar"))
}

impl Visitor for OutputCheck<'_> {
    type Break = ();

    fn pre_visit_relation(&mut self, name: &ObjectName) -> ControlFlow<()> {
        if self.table_functions.contains(&(name as *const ObjectName as usize)) {
            // an admitted table function is emitted as a built-in of the system database
            let first = name.0.first().map(|p| p.to_string()).unwrap_or_default();
            if name.0.len() != 3 || first.trim_matches('"') != "system" {
                self.problem = Some(format!("table function {name} is not a qualified built-in"));
                return ControlFlow::Break(());
            }
            return ControlFlow::Continue(());
        }
        let parts: Vec<Option<&str>> = name
            .0
            .iter()
            .map(|p| match p {
                ObjectNamePart::Identifier(i) => Some(i.value.as_str()),
                _ => None,
            })
            .collect();
        let ok = match parts.as_slice() {
            // the principal's CTEs, a shared slice's (spec 019), policy SQL's (spec 011)
            [Some(cte)] => {
                cte.starts_with("__acl_cte")
                    || cte.starts_with("__acl_k_")
                    || cte.strip_prefix("__acl_s").is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            }
            [Some(db), Some(schema), Some(table)] => {
                self.allowed.contains(&(db.to_string(), schema.to_string(), table.to_string()))
            }
            _ => false,
        };
        if !ok {
            self.problem = Some(format!("relation {name} is neither a CTE nor a granted physical table"));
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_table_factor(&mut self, tf: &TableFactor) -> ControlFlow<()> {
        match tf {
            TableFactor::Table { args: Some(_), name, .. } => {
                self.table_functions.push(name as *const ObjectName as usize);
                ControlFlow::Continue(())
            }
            TableFactor::Table { args: None, .. }
            | TableFactor::Derived { .. }
            | TableFactor::NestedJoin { .. }
            | TableFactor::UNNEST { .. } => ControlFlow::Continue(()),
            other => {
                self.problem = Some(format!("FROM item {other} survived the rewrite"));
                ControlFlow::Break(())
            }
        }
    }

    fn pre_visit_expr(&mut self, e: &Expr) -> ControlFlow<()> {
        if let Expr::Function(f) = e {
            let last = f.name.0.last().map(|p| p.to_string()).unwrap_or_default();
            let last = last.trim_matches('"');
            if acl::policy::categories::never_callable(last) && !(self.guard_calls_are_policy && guard_function(f)) {
                self.problem = Some(format!("never-callable function {last} survived the rewrite"));
                return ControlFlow::Break(());
            }
        }
        ControlFlow::Continue(())
    }
}

/// Parses the rewriter's output again; generous limits (slices add nesting).
fn reparse(sql: &str) -> Result<Vec<Statement>, String> {
    // our dialect as it reads our own print (operators sqlparser has no rule for, `#n`, …)
    Parser::new(&acl::rewrite::parse::AclDialect { reading: acl::rewrite::parse::Reading::Printed })
        .with_recursion_limit(512)
        .try_with_sql(sql)
        .and_then(|mut p| p.parse_statements())
        .map_err(|e| e.to_string())
}

/// Rewrites `sql` for one principal and checks every property; panics on a violation.
pub fn check_rewrite(fx: &Fixture, which: usize, sql: &str) {
    static PRINT: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    if *PRINT.get_or_init(|| std::env::var_os("ACL_FUZZ_PRINT").is_some()) {
        eprintln!("SQL[{which}] {sql}");
    }
    let (principal, allowed) = &fx.principals[which % fx.principals.len()];
    let view = View::new(&fx.policy, principal).expect("fixture principals exist");
    let fns = acl::rewrite::FnGate::new(&fx.policy, principal);
    // as the principal wrote it, and as if it were DuckDB's print of it (spec 016: the dialect's
    // `Printed` reading and the clauses cut out of such a print)
    for host in [&acl::rewrite::NoHost as &dyn acl::rewrite::Host, &AsPrinted] {
        let first = acl::rewrite::statement_with_host(&view, &fns, sql, host);
        let second = acl::rewrite::statement_with_host(&view, &fns, sql, host);
        assert_eq!(first, second, "the rewrite is not deterministic for {sql:?}");
        match first {
            Ok(out) => {
                let stmts = match reparse(&out) {
                    Ok(s) => s,
                    // a clause put back after the rewrite (USING SAMPLE, ASOF, …): only DuckDB reads it
                    Err(_) if acl::rewrite::parse::cuts::may_cut(&out) => continue,
                    Err(e) => panic!("output does not parse: {e}\n in: {sql:?}\nout: {out}"),
                };
                assert_eq!(stmts.len(), 1, "output is not one statement\n in: {sql:?}\nout: {out}");
                let lower = sql.to_ascii_lowercase();
                // the typed guard's probes and the ENUM cast are the rules' own calls
                let guard_calls_are_policy = !lower.contains("leakproof") && !lower.contains("enum_varchar");
                let mut check = OutputCheck { allowed, problem: None, table_functions: Vec::new(), guard_calls_are_policy };
                let _ = stmts[0].visit(&mut check);
                if let Some(p) = check.problem {
                    panic!("{p}\n   principal: {}\n in: {sql:?}\nout: {out}", principal.label);
                }
            }
            Err(e) => {
                let msg = e.to_string();
                assert!(msg.starts_with("acl: "), "a refusal without the acl: prefix: {msg}");
                let lower_in = sql.to_lowercase();
                let lower_msg = msg.to_lowercase();
                for w in PHYSICAL_WORDS {
                    assert!(
                        !lower_msg.contains(w) || lower_in.contains(w),
                        "a refusal names a physical object the input did not: {msg}\n in: {sql:?}"
                    );
                }
            }
        }
    }
}

/// A stand-in for DuckDB's print: the input itself, tokenized by the stand-in tokenizer.
struct AsPrinted;

impl acl::rewrite::Host for AsPrinted {
    fn print(&self, sql: &str) -> acl::error::Result<Option<acl::rewrite::Printed>> {
        Ok(Some(acl::rewrite::Printed { sql: sql.to_string(), statements: 1 }))
    }
    fn tokens(&self, sql: &str) -> acl::error::Result<Vec<Token>> {
        Ok(tokenize(sql))
    }
}

/// No tokenizer and no DuckDB (the batch is split already).
fn no_tokens(_: &str) -> acl::error::Result<Vec<Token>> {
    Err(acl::error::AclError::internal("no tokenizer in the fuzzer"))
}

/// Statement shapes (spec 012): when a shape of `sql` is learned (the sentinel proof passed), the
/// same statement with other numbers must get from the shape exactly what a full rewrite gives it.
/// Single-role principals only (the prefix names the role).
pub fn check_shapes(fx: &Fixture, which: usize, sql: &str) {
    let (principal, _) = &fx.principals[which % fx.principals.len()];
    let [role] = principal.roles.as_slice() else { return };
    let settings = acl::rewrite::Settings { clock_skew: 60, ..Default::default() };
    let state = acl::engine::State::new();
    let tokens_cache = &state.tokens;
    let shapes = acl::engine::ShapeCache::default();
    let run = |q: &str| -> Option<(Vec<Token>, Result<acl::engine::Output, String>)> {
        let toks = tokenize(q);
        let batch = acl::prefix::split(q, &toks).ok()??;
        Some((toks, acl::engine::batch(&state, &fx.policy, &settings, &batch, &no_tokens).map_err(|e| e.to_string())))
    };
    let query = format!("ACL ROLE \"{role}\" {sql}");
    let Some((toks, Ok(actual))) = run(&query) else { return };
    let Ok(Some(batch)) = acl::prefix::split(&query, &toks) else { return };
    let Some(shape) = acl::engine::Shape::of(&query, &toks, &batch) else { return };
    let (text, shifted) = shape.sentinel_query(&toks);
    let Ok(Some(sb)) = acl::prefix::split(&text, &shifted) else { return };
    let Ok(sentinel) = acl::engine::batch(&state, &fx.policy, &settings, &sb, &no_tokens) else { return };
    shapes.learn(&shape, &actual, &sentinel);
    // every plain numeric literal changed: n -> n + 1 (as digits), 0 -> 10
    let mut variant = String::with_capacity(query.len() + 8);
    let mut at = 0;
    for (i, t) in toks.iter().enumerate() {
        let end = toks.get(i + 1).map_or(query.len(), |n| n.start);
        let lit = query[t.start..end].trim_end();
        if t.kind == TokenKind::Numeric && !lit.is_empty() && lit.bytes().all(|b| b.is_ascii_digit()) && t.start > 0 {
            variant.push_str(&query[at..t.start]);
            variant.push_str(&format!("{lit}1"));
            at = t.start + lit.len();
        }
    }
    variant.push_str(&query[at..]);
    let Some((vtoks, direct)) = run(&variant) else { return };
    let Ok(Some(vbatch)) = acl::prefix::split(&variant, &vtoks) else { return };
    let Some(vshape) = acl::engine::Shape::of(&variant, &vtoks, &vbatch) else { return };
    if let Some((reused, _)) = shapes.apply(&fx.policy, tokens_cache, &state.sessions, &settings, &vshape) {
        match direct {
            Ok(direct) => assert_eq!(reused, direct, "a shape's rewrite differs from the full one\n in: {variant:?}"),
            Err(e) => panic!("a learned shape answers what a full rewrite refuses ({e})\n in: {variant:?}"),
        }
    }
}


mod grammar;
pub use grammar::Gen;
