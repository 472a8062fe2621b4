//! What the second check learns from DuckDB's parser at load (spec 011, "Spellings"; spec 016):
//! the calls DuckDB's parser makes of syntax, and the names it gives calls in some forms. Learned
//! by parsing probes with the host's own parser, so a host whose parser spells something else is
//! followed, never a list kept by hand.
//!
//! The syntax probe writes every form of syntax our printer can hand DuckDB that is not a call in
//! sqlparser's tree (operators, literals of nested types, EXTRACT, INTERVAL, SUBSTRING … FROM,
//! TRIM, POSITION, OVERLAY, comprehensions, `= ANY` of a list, AT TIME ZONE, …): the unqualified
//! calls DuckDB's parse holds for it are the only bare names the check lets through besides what
//! the rules emitted (`Spellings::synthesised`). No function a principal calls by name is written
//! in it: such a call is qualified by the gate, so a bare one in DuckDB's parse is a rule's
//! mistake. The form probes write every built-in of `system.main` qualified, in each form DuckDB's
//! transformer renames (`f()`, `f(…) OVER ()`, `f(…) WITHIN GROUP (…)`), and keep the names that
//! come back different (`count` → `count_star`, …).
// Used by `ffi` at load, which the unit tests do not build.
#![cfg_attr(not(feature = "extension"), allow(dead_code))]
use crate::policy::functions::{CallForm, Spellings};
use crate::sqltext::ident;

/// Every syntax form DuckDB's parser turns into a call (one select item each; `t`'s columns are
/// never bound: the probe is only parsed).
pub const SYNTAX_PROBE: &str = "SELECT 1 + 1, 1 - 1, 2 * 2, 4 / 2, 4 // 2, 5 % 2, 2 ** 3, 2 ^ 3, 'a' || 'b', 1 & 1, \
 1 | 1, 1 << 1, 1 >> 1, ~1, -x, +x, 5!, @(-1), \
 'a' LIKE 'a', 'a' NOT LIKE 'a', 'a' ILIKE 'a', 'a' NOT ILIKE 'a', 'a' ~~ 'a', 'a' !~~ 'a', 'a' ~~* 'a', 'a' !~~* 'a', \
 'a' GLOB 'a', 'a' NOT GLOB 'a', 'a' ~~~ 'a', 'a' !~~~ 'a', 'a' SIMILAR TO 'a', 'a' NOT SIMILAR TO 'a', 'a' ~ 'a', \
 'a' !~ 'a', 'a' ~* 'a', 'a' !~* 'a', 'a' LIKE 'a' ESCAPE '\\', 'a' NOT LIKE 'a' ESCAPE '\\', 'a' ILIKE 'a' ESCAPE '\\', \
 'a' NOT ILIKE 'a' ESCAPE '\\', 'a' ^@ 'a', [1] @> [1], [1] <@ [1], [1] && [1], j ->> 'a', \
 [1, 2], [], {'a': 1}, MAP {'a': 1}, MAP(), ROW(1, 2), (1, 2), ARRAY[1], ARRAY(SELECT 1), l[1], l[1:2], l[1:2:1], \
 s.a, s['a'], EXTRACT(year FROM d), EXTRACT('year' FROM d), \
 INTERVAL 1 YEAR, INTERVAL 1 MONTH, INTERVAL 1 DAY, INTERVAL 1 HOUR, INTERVAL 1 MINUTE, INTERVAL 1 SECOND, \
 INTERVAL 1 MILLISECOND, INTERVAL 1 MICROSECOND, INTERVAL 1 WEEK, INTERVAL 1 QUARTER, INTERVAL 1 DECADE, \
 INTERVAL 1 CENTURY, INTERVAL 1 MILLENNIUM, INTERVAL '1' DAY, INTERVAL (x) DAY, INTERVAL '1 day', \
 SUBSTRING('a' FROM 1 FOR 1), SUBSTRING('a' FROM 1), SUBSTRING('a' FOR 1), TRIM(BOTH 'a' FROM 'b'), \
 TRIM(LEADING 'a' FROM 'b'), TRIM(TRAILING 'a' FROM 'b'), TRIM('a'), TRIM('a', 'b'), POSITION('a' IN 'b'), \
 OVERLAY('a' PLACING 'b' FROM 1), OVERLAY('a' PLACING 'b' FROM 1 FOR 1), NULLIF(1, 1), IFNULL(1, 2), \
 COALESCE(1, 2), 1 = ANY([1]), 1 <> ALL([1]), 1 IN (1), 1 BETWEEN 0 AND 2, CASE WHEN true THEN 1 END, \
 [x FOR x IN [1]], [x FOR x IN [1] IF x > 0], [x * i FOR x, i IN [1]], lambda x: x, TRY(1), GROUPING(x), \
 x IS NULL, x IS DISTINCT FROM y, CAST(1 AS INT), 1::INT, TRY_CAST(1 AS INT), ts AT TIME ZONE 'UTC', \
 x COLLATE nocase, DATE '2024-01-01', TIMESTAMP '2024-01-01', NOT x, x AND y, COLUMNS('a'), \
 COLUMNS(lambda c: c = 'x'), UNPACK(COLUMNS('a')), count(*) FROM t";

/// `f` in `form`, qualified, for each name: one select item each.
pub fn form_probe(form: CallForm, names: &[&str]) -> String {
    let call = |n: &str| {
        let f = format!("\"system\".\"main\".{}", ident(n));
        match form {
            CallForm::NoArguments => format!("{f}()"),
            CallForm::Over => format!("{f}(1) OVER ()"),
            CallForm::WithinGroup => format!("{f}(0.5) WITHIN GROUP (ORDER BY x)"),
        }
    };
    format!("SELECT {} FROM t", names.iter().map(|n| call(n)).collect::<Vec<_>>().join(", "))
}

/// Learns from what DuckDB's parse of the probes named: `syntax` the calls (name parts) of the
/// syntax probe, `forms` per form the written names and per select item the calls reported.
pub fn learn<'a>(
    syntax: impl IntoIterator<Item = Vec<String>>,
    forms: impl IntoIterator<Item = (CallForm, &'a str, Vec<Vec<String>>)>,
) -> Spellings {
    let mut out = Spellings::default();
    for parts in syntax {
        if let [name] = parts.as_slice() {
            out.synthesised.insert(name.to_ascii_lowercase());
        }
    }
    for (form, written, calls) in forms {
        // the probe's own call, qualified to system.main: the name it came back with
        let parsed = calls.iter().find_map(|p| match p.as_slice() {
            [db, schema, name] if db.eq_ignore_ascii_case("system") && schema.eq_ignore_ascii_case("main") => Some(name),
            _ => None,
        });
        if let Some(parsed) = parsed.filter(|p| !p.eq_ignore_ascii_case(written)) {
            out.renamed.insert((form, written.to_ascii_lowercase()), parsed.to_ascii_lowercase());
        }
    }
    out
}

/// DuckDB v2.0.0's answers to the probes, for the unit tests (which run without a host; a load
/// always learns from the host itself).
#[cfg(test)]
pub fn duckdb_v2_for_tests() -> Spellings {
    const SYNTHESISED: &[&str] = &[
        "!~~", "!~~*", "!~~~", "%", "&", "&&", "*", "**", "+", "-", "->>", "/", "//", "<<", "<@", ">>", "@", "@>", "^", "^@",
        "array_agg", "count_star", "date_part", "factorial", "ilike_escape", "like_escape", "list_apply", "list_filter",
        "list_value", "ltrim", "map", "nullif", "overlay", "position", "regexp_full_match", "regexp_matches", "row", "rtrim",
        "struct_extract", "struct_pack", "substring", "timezone", "to_centuries", "to_days", "to_decades", "to_hours",
        "to_microseconds", "to_millennia", "to_milliseconds", "to_minutes", "to_months", "to_quarters", "to_seconds",
        "to_weeks", "to_years", "trim", "trunc", "unnest", "|", "||", "~", "~~", "~~*", "~~~",
    ];
    let syntax = SYNTHESISED.iter().map(|n| vec![n.to_string()]);
    let q = |n: &str| vec![vec!["system".to_string(), "main".to_string(), n.to_string()]];
    learn(
        syntax,
        [
            (CallForm::NoArguments, "count", q("count_star")),
            (CallForm::Over, "first", q("first_value")),
            (CallForm::Over, "last", q("last_value")),
            (CallForm::WithinGroup, "percentile_cont", q("quantile_cont")),
            (CallForm::WithinGroup, "percentile_disc", q("quantile_disc")),
        ],
    )
}
