//! DuckDB v2.0.0's keywords (`duckdb_keywords()`, every category), sorted: DuckDB quotes an
//! identifier that is one when it prints a `CREATE TABLE` (`KeywordHelper::WriteOptionallyQuoted`),
//! and so does `duckdb_tables().sql` here (spec 005, "SHOW and PRAGMA").

const KEYWORDS: &str = concat!(
    "abort absolute access action add admin after aggregate all also alter always analyse analyze and ",
    "anti any approx array as asc asof assertion assignment asymmetric at attach attribute authorization ",
    "backward before begin between bigint binary bit boolean both by cache call called cascade cascaded ",
    "case cast catalog centuries century chain char character characteristics check checkpoint class ",
    "close cluster coalesce collate collation column columns columns comment comments commit committed ",
    "compression concurrently configuration conflict connect connection constraint constraints content ",
    "continue conversion copy cost create cross csv cube current cursor cycle data database day days ",
    "deallocate dec decade decades decimal declare default defaults deferrable deferred definer delete ",
    "delimiter delimiters depends desc describe destroy detach dictionary disable discard disconnect ",
    "distance distinct do document domain double drop each else enable encoding encrypted end enum error ",
    "escape event exact except exclude excluding exclusive execute exists explain export export_state ",
    "extension extensions external extract false family fetch filter first float following for force ",
    "foreign forward freeze from full function functions generated generated glob global grant granted ",
    "group grouping grouping_id groups handler having header hold hour hours identity if ignore ilike ",
    "immediate immutable implicit import in include including increment index indexes inherit inherits ",
    "initially inline inner inout input insensitive insert install instead int integer intersect interval ",
    "into invoker is isnull isolation join json key label lambda language large last lateral leading ",
    "leakproof left level like limit listen load local location lock locked logged macro map map mapping ",
    "match matched materialized maxvalue merge method microsecond microseconds millennia millennium ",
    "millisecond milliseconds minute minutes minvalue mode month months move name names national natural ",
    "nchar nearest new next no none not nothing notify notnull nowait null nullif nulls numeric object of ",
    "off offset oids old on only operator option options or order ordinality others out outer over ",
    "overlaps overlay overriding owned owner parallel parser partial partition partitioned passing ",
    "password percent persistent pivot pivot_longer pivot_wider placing plans policy position positional ",
    "pragma preceding precision prepare prepared preserve primary prior privileges procedural procedure ",
    "program publication qualify quarter quarters quote range read real reassign recheck recursive ref ",
    "references referencing refresh register reindex relative release rename repeatable replace replica ",
    "reset resource resources respect restart restrict returning returns revoke right role rollback ",
    "rollup row rows rule sample savepoint schema schemas scope scroll search second seconds secret ",
    "secure security select semi sequence sequences serializable server session set setof sets share show ",
    "similar similarity simple skip smallint snapshot some sorted source sql stable standalone start ",
    "statement statistics stdin stdout storage stored strict strip struct struct subscription substring ",
    "summarize symmetric sysid system table tables tablesample tablespace target temp template temporary ",
    "text then ties time timestamp to trailing transaction transform treat trigger trim true truncate ",
    "trusted try_cast try_cast tuple tuple type types unbounded uncommitted unencrypted union unique ",
    "unknown unlisten unlogged unpack unpivot until update use user using vacuum valid validate validator ",
    "value values varchar variable variadic varying verbose version view views virtual volatile week ",
    "weeks when where whitespace window with within without work wrapper write xml xmlattributes ",
    "xmlconcat xmlelement xmlexists xmlforest xmlnamespaces xmlparse xmlpi xmlroot xmlserialize xmltable ",
    "year years yes zone",
);

/// Is `word` one of DuckDB's keywords (as written: keywords are lower case)?
pub fn is_keyword(word: &str) -> bool {
    KEYWORDS.split(' ').any(|k| k == word)
}

/// `word` as DuckDB prints an identifier: bare when it is lower-case letters, digits (not first)
/// and underscores and no keyword; otherwise double-quoted, quotes doubled.
pub fn optionally_quoted(word: &str) -> String {
    let bytes = word.as_bytes();
    let simple = !word.is_empty()
        && bytes.iter().enumerate().all(|(i, b)| b.is_ascii_lowercase() || *b == b'_' || (i > 0 && b.is_ascii_digit()))
        && !(bytes.len() > 1 && bytes[0] == b'_' && bytes[1].is_ascii_digit());
    if simple && !is_keyword(word) {
        word.to_string()
    } else {
        format!("\"{}\"", word.replace('"', "\"\""))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn quotes_as_duckdb_prints() {
        assert_eq!(super::optionally_quoted("a"), "a");
        assert_eq!(super::optionally_quoted("name"), "\"name\"");
        assert_eq!(super::optionally_quoted("My T"), "\"My T\"");
        assert_eq!(super::optionally_quoted("x\"y"), "\"x\"\"y\"");
        assert_eq!(super::optionally_quoted("a1_b"), "a1_b");
        assert!(super::is_keyword("select") && !super::is_keyword("orders"));
    }
}
