//! The reference system's legacy quoted lists (shared/reference-surface.md, "Management
//! statements"): `CAPS '<json object>'` and `CLAIMS 'k=v,k2=v2'`. Each parses into exactly what
//! its modern twin (`WITH (…)`, `CLAIMS (k = 'v', …)`) gives, so the rest of `admin` sees one form.
use crate::error::{AclError, Duplicate, Invalid, Result};
use crate::policy::{norm, Caps};
use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use std::collections::BTreeMap;
use std::fmt;

/// A JSON object's members in order, duplicates kept (serde_json's `Map` would keep the last
/// silently, and `{"select": true, "select": false}` must not mean either).
pub(super) struct Members(pub(super) Vec<(String, serde_json::Value)>);

impl<'de> Deserialize<'de> for Members {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Members;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> std::result::Result<Members, A::Error> {
                let mut out = Vec::new();
                while let Some(entry) = m.next_entry::<String, serde_json::Value>()? {
                    out.push(entry);
                }
                Ok(Members(out))
            }
        }
        d.deserialize_map(V)
    }
}

/// `CAPS '<json>'`: the capabilities set to `true`, each with the word it was written as (for the
/// caller's checks, as `WITH (…)` gives them). `'{}'` is the explicit empty set. Names are the
/// twelve capabilities (case-insensitive); presets and unknown names are refused, as is any value
/// but `true`/`false` and a name given twice.
pub(super) fn caps_json(text: &str) -> Result<Vec<(String, Caps)>> {
    let Members(members) = serde_json::from_str(text).map_err(|_| AclError::from(Invalid::CapsJson))?;
    let mut out = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    for (name, value) in members {
        let word = name.to_ascii_lowercase();
        if matches!(word.as_str(), "reader" | "writer" | "admin") {
            return Err(Invalid::CapsName { word: name }.into());
        }
        let cap = Caps::parse_one(&word).map_err(|_| AclError::from(Invalid::CapsName { word: name.clone() }))?;
        if seen.contains(&word) {
            return Err(Duplicate::Capability(word).into());
        }
        seen.push(word.clone());
        match value {
            serde_json::Value::Bool(true) => out.push((word, cap)),
            serde_json::Value::Bool(false) => {}
            _ => return Err(Invalid::CapsJson.into()),
        }
    }
    Ok(out)
}

/// `CLAIMS 'k=v,k2=v2'`: names as identifiers (lower-cased, quotes allowed), values the text
/// after `=` up to the next comma, trimmed. An empty string is no claims.
pub(super) fn claims_list(text: &str) -> Result<BTreeMap<String, String>> {
    let mut claims = BTreeMap::new();
    if text.trim().is_empty() {
        return Ok(claims);
    }
    for item in text.split(',') {
        let (key, value) = item.split_once('=').ok_or_else(|| AclError::from(Invalid::ClaimsList))?;
        let key = claim_name(key.trim())?;
        if claims.insert(key.clone(), value.trim().to_string()).is_some() {
            return Err(Duplicate::Claim(key).into());
        }
    }
    Ok(claims)
}

/// One identifier, as the parenthesised form reads a claim name.
fn claim_name(text: &str) -> Result<String> {
    let dialect = sqlparser::dialect::DuckDbDialect {};
    let mut p = sqlparser::parser::Parser::new(&dialect)
        .try_with_sql(text)
        .map_err(|_| AclError::from(Invalid::ClaimsList))?;
    let id = p.parse_identifier().map_err(|_| AclError::from(Invalid::ClaimsList))?;
    if id.value.is_empty() || p.peek_token_ref().token != sqlparser::tokenizer::Token::EOF {
        return Err(Invalid::ClaimsList.into());
    }
    Ok(norm(&id.value))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caps(text: &str) -> Result<Caps> {
        caps_json(text).map(|v| v.into_iter().fold(Caps::NONE, |a, (_, c)| a.union(c)))
    }

    #[test]
    fn caps_objects() {
        assert_eq!(caps("{}").unwrap(), Caps::NONE);
        assert_eq!(caps(r#"{"select": true}"#).unwrap(), Caps::SELECT);
        assert_eq!(caps(r#"{"SELECT": true, "insert": false, "manage": true}"#).unwrap(), Caps::SELECT.union(Caps::MANAGE));
        assert_eq!(caps(r#" { "update" : true , "delete" : true } "#).unwrap(), Caps::UPDATE.union(Caps::DELETE));
        for bad in ["", "[]", "true", "{select: true}", r#"{"select": 1}"#, r#"{"select": "true"}"#, r#"{"select": null}"#, "{", r#"{"a": true} x"#] {
            assert_eq!(caps(bad).unwrap_err(), AclError::from(Invalid::CapsJson), "{bad}");
        }
        assert_eq!(caps(r#"{"selec": true}"#).unwrap_err(), AclError::from(Invalid::CapsName { word: "selec".into() }));
        assert_eq!(caps(r#"{"reader": true}"#).unwrap_err(), AclError::from(Invalid::CapsName { word: "reader".into() }));
        assert_eq!(
            caps(r#"{"select": true, "Select": false}"#).unwrap_err(),
            AclError::from(Duplicate::Capability("select".into()))
        );
    }

    #[test]
    fn claim_lists() {
        let m = claims_list("tenant=acme, Region = eu ,n=3").unwrap();
        assert_eq!(m, BTreeMap::from([("tenant".into(), "acme".into()), ("region".into(), "eu".into()), ("n".into(), "3".into())]));
        assert!(claims_list("").unwrap().is_empty());
        assert!(claims_list("  ").unwrap().is_empty());
        assert_eq!(claims_list("\"My Key\"=x").unwrap(), BTreeMap::from([("my key".into(), "x".into())]));
        assert_eq!(claims_list("a=").unwrap(), BTreeMap::from([("a".into(), String::new())]));
        assert_eq!(claims_list("a=x=y").unwrap(), BTreeMap::from([("a".into(), "x=y".into())]));
        for bad in ["a", "a=1,", "=1", "a b=1", "a=1,,b=2", "a.b=1"] {
            assert_eq!(claims_list(bad).unwrap_err(), AclError::from(Invalid::ClaimsList), "{bad}");
        }
        assert_eq!(claims_list("a=1,A=2").unwrap_err(), AclError::from(Duplicate::Claim("a".into())));
    }
}
