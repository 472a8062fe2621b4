//! An issuer's `KEYS`, in the three forms `CREATE ISSUER` accepts, turned into jsonwebtoken
//! `DecodingKey`s. Each key carries the algorithms it may verify, so a token can never pick an
//! algorithm of another key family (the HS256-with-an-RSA-public-key confusion).
use crate::error::{AclError, KeyProblem, Result};
use crate::policy::Issuer;
use jsonwebtoken::jwk::{
    AlgorithmParameters, EllipticCurve, Jwk, JwkSet, KeyOperations, PublicKeyUse,
};
use jsonwebtoken::{Algorithm, AlgorithmFamily, DecodingKey};

/// `KEYS 'hmac:<secret>'`: a shared secret for HS256/HS384/HS512, the UTF-8 bytes after the prefix.
pub const HMAC_PREFIX: &str = "hmac:";
/// RFC 7518 §3.2: an HMAC key at least as long as the hash output (HS256: 32 bytes).
const MIN_HMAC_BYTES: usize = 32;
/// RSA moduli of fewer bits are refused (NIST SP 800-131A). The bits of the modulus are
/// counted, not the characters of its encoding: a JWK `n` (or a DER integer) may carry leading
/// zero bytes, which make the text longer and the key no stronger (issue 31, finding 9).
const MIN_RSA_BITS: usize = 2048;
/// The largest modulus the verifier takes (`rsa::RsaPublicKey::MAX_SIZE`): a longer one would be
/// accepted here and then fail every token.
const MAX_RSA_BITS: usize = 8192;
/// The public exponents the verifier takes (`rsa::RsaPublicKey`: odd, 3 ..= 2^33 - 1).
const MAX_RSA_EXPONENT: u64 = (1 << 33) - 1;

/// Every algorithm we verify, by the upper-case name `ALGS` stores.
const ALGORITHMS: [(&str, Algorithm); 12] = [
    ("RS256", Algorithm::RS256),
    ("RS384", Algorithm::RS384),
    ("RS512", Algorithm::RS512),
    ("PS256", Algorithm::PS256),
    ("PS384", Algorithm::PS384),
    ("PS512", Algorithm::PS512),
    ("ES256", Algorithm::ES256),
    ("ES384", Algorithm::ES384),
    ("EDDSA", Algorithm::EdDSA),
    ("HS256", Algorithm::HS256),
    ("HS384", Algorithm::HS384),
    ("HS512", Algorithm::HS512),
];

/// An `ALGS` entry, case-insensitive. `none` gets its own message: it is refused by design.
pub fn parse_alg(name: &str) -> Result<Algorithm> {
    let upper = name.to_ascii_uppercase();
    if upper == "NONE" {
        return Err(KeyProblem::Rule("algorithm none is never accepted").into());
    }
    match ALGORITHMS.iter().find(|(n, _)| *n == upper) {
        Some((_, a)) => Ok(*a),
        None => {
            let known: Vec<&'static str> = ALGORITHMS.iter().map(|(n, _)| *n).collect();
            let mut shown = name.to_string();
            shown.truncate(shown.char_indices().nth(20).map_or(shown.len(), |(i, _)| i));
            Err(KeyProblem::UnknownAlgorithm { shown, known }.into())
        }
    }
}

/// The upper-case name of an algorithm, as `ALGS` stores it.
pub fn alg_name(alg: Algorithm) -> &'static str {
    ALGORITHMS
        .iter()
        .find(|(_, a)| *a == alg)
        .map_or("?", |(n, _)| n)
}

/// What kind of keys `text` holds, as `acl_issuers().key_kind` shows it (no key material).
pub fn kind_of(text: &str) -> &'static str {
    if text.starts_with(HMAC_PREFIX) {
        "hmac"
    } else if text.trim_start().starts_with('{') {
        "jwks"
    } else {
        "pem"
    }
}

/// One verification key and the algorithms it may verify (never empty after `parse`, except
/// when `ALGS` excludes every algorithm of this key: then it verifies nothing).
pub struct VerifyKey {
    pub kid: Option<String>,
    pub key: DecodingKey,
    pub algs: Vec<Algorithm>,
}

pub struct IssuerKeys {
    keys: Vec<VerifyKey>,
    /// A PEM key or a secret: one key, and the token's `kid` is ignored.
    single: bool,
}

impl IssuerKeys {
    /// Parses and checks an issuer's keys against its `ALGS`; every error is `Invalid` and says
    /// what is wrong without repeating key material.
    pub fn parse(issuer: &Issuer) -> Result<IssuerKeys> {
        let allowed = issuer
            .algs
            .iter()
            .map(|a| parse_alg(a))
            .collect::<Result<Vec<_>>>()?;
        let text = issuer.keys.trim();
        let (mut keys, single) = if let Some(secret) = issuer.keys.strip_prefix(HMAC_PREFIX) {
            (vec![hmac_key(secret)?], true)
        } else if text.starts_with("-----BEGIN") {
            (vec![pem_key(text)?], true)
        } else if text.starts_with('{') {
            (jwks_keys(text)?, false)
        } else {
            return Err(KeyProblem::Rule("issuer KEYS must be a PEM public key, a JWKS document or 'hmac:<secret>'").into());
        };
        if !allowed.is_empty() {
            for k in &mut keys {
                k.algs.retain(|a| allowed.contains(a));
            }
            // An ALGS entry no key can verify is a mistake the operator should hear about now.
            if let Some(a) = allowed
                .iter()
                .find(|a| !keys.iter().any(|k| k.algs.contains(a)))
            {
                return Err(KeyProblem::AlgorithmUnverifiable { alg: alg_name(*a) }.into());
            }
        }
        Ok(IssuerKeys { keys, single })
    }

    /// Does any key of the issuer verify `alg`?
    pub fn allows(&self, alg: Algorithm) -> bool {
        self.keys.iter().any(|k| k.algs.contains(&alg))
    }

    /// The key for a token's `kid`. A JWKS of several keys needs a `kid` that names one.
    pub fn select(&self, kid: Option<&str>) -> Option<&VerifyKey> {
        if self.single {
            return self.keys.first();
        }
        match kid {
            Some(kid) => self.keys.iter().find(|k| k.kid.as_deref() == Some(kid)),
            None if self.keys.len() == 1 => self.keys.first(),
            None => None,
        }
    }

    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }
}

/// The length of an HMAC key as HMAC uses it: a key shorter than the hash's block (64 or 128
/// bytes) is padded with zero bytes, so trailing zero bytes add nothing — `k` and `k` followed by
/// zeros are the same key. They are not counted (a key that happens to end in a zero byte is
/// measured one byte short: one random key in 256, which the operator can draw again).
fn hmac_strength(key: &[u8]) -> usize {
    key.iter().rposition(|b| *b != 0).map_or(0, |i| i + 1)
}

fn hmac_key(secret: &str) -> Result<VerifyKey> {
    if hmac_strength(secret.as_bytes()) < MIN_HMAC_BYTES {
        return Err(KeyProblem::ShortSecret { min: MIN_HMAC_BYTES }.into());
    }
    let key = DecodingKey::from_secret(secret.as_bytes())
        .map_err(|_| AclError::from(KeyProblem::Rule("the hmac: secret is not usable")))?;
    Ok(VerifyKey {
        kid: None,
        key,
        algs: AlgorithmFamily::Hmac.algorithms().to_vec(),
    })
}

/// One public key in PEM. It goes through `Jwk::from_decoding_key`, which checks the key's
/// structure and tells the EC curve, and then takes the same path as a JWKS key.
fn pem_key(text: &str) -> Result<VerifyKey> {
    const BAD: &str = "the PEM key is not an RSA, EC (P-256, P-384) or Ed25519 public key";
    // Only public keys: a private key or a certificate in the policy is a mistake to stop.
    if !(text.starts_with("-----BEGIN PUBLIC KEY-----")
        || text.starts_with("-----BEGIN RSA PUBLIC KEY-----"))
    {
        return Err(KeyProblem::Rule("the PEM must be a public key (BEGIN PUBLIC KEY or BEGIN RSA PUBLIC KEY)").into());
    }
    if text.matches("-----BEGIN").count() > 1 {
        return Err(KeyProblem::Rule("give one PEM key, or several keys as a JWKS").into());
    }
    let pem = text.as_bytes();
    let key = DecodingKey::from_rsa_pem(pem)
        .or_else(|_| DecodingKey::from_ec_pem(pem))
        .or_else(|_| DecodingKey::from_ed_pem(pem))
        .map_err(|_| AclError::from(KeyProblem::Rule(BAD)))?;
    let jwk = Jwk::from_decoding_key(&key, None).map_err(|_| AclError::from(KeyProblem::Rule(BAD)))?;
    jwk_key(&jwk, "the PEM key")?.ok_or_else(|| KeyProblem::Rule(BAD).into())
}

/// A JWKS document (`{"keys": […]}`) or a single JWK.
fn jwks_keys(text: &str) -> Result<Vec<VerifyKey>> {
    let value: serde_json::Value = serde_json::from_str(text)
        .map_err(|_| AclError::from(KeyProblem::Rule("the KEYS JSON does not parse")))?;
    let set: JwkSet = if value.get("keys").is_some() {
        serde_json::from_value(value)
            .map_err(|_| AclError::from(KeyProblem::Rule("the KEYS JSON is not a JWKS")))?
    } else {
        let jwk = serde_json::from_value(value)
            .map_err(|_| AclError::from(KeyProblem::Rule("the KEYS JSON is not a JWK")))?;
        JwkSet { keys: vec![jwk] }
    };
    let mut out: Vec<VerifyKey> = Vec::new();
    for (i, jwk) in set.keys.iter().enumerate() {
        let what = match &jwk.common.key_id {
            Some(kid) => format!("JWKS key \"{}\"", kid.chars().take(40).collect::<String>()),
            None => format!("JWKS key #{}", i + 1),
        };
        let Some(key) = jwk_key(jwk, &what)? else {
            continue;
        };
        // Two keys under one kid would make the choice of key ambiguous.
        if key.kid.is_some() && out.iter().any(|k| k.kid == key.kid) {
            return Err(KeyProblem::Twice { what }.into());
        }
        out.push(key);
    }
    if out.is_empty() {
        return Err(KeyProblem::Rule("the JWKS has no signing key").into());
    }
    if out.len() > 1 && out.iter().any(|k| k.kid.is_none()) {
        return Err(KeyProblem::Rule("every key of a JWKS with several keys needs a kid").into());
    }
    Ok(out)
}

/// A JWK as a verification key; `None` for a key meant for encryption (skipped, not refused:
/// published JWKS documents often carry both).
fn jwk_key(jwk: &Jwk, what: &str) -> Result<Option<VerifyKey>> {
    if matches!(jwk.common.public_key_use, Some(PublicKeyUse::Encryption))
        || jwk
            .common
            .key_operations
            .as_ref()
            .is_some_and(|ops| !ops.contains(&KeyOperations::Verify))
    {
        return Ok(None);
    }
    let unsupported = || AclError::from(KeyProblem::Unsupported { what: what.to_string() });
    let mut algs: Vec<Algorithm> = match &jwk.algorithm {
        // The modulus is measured below, once it is decoded.
        AlgorithmParameters::RSA(_) => AlgorithmFamily::Rsa.algorithms().to_vec(),
        AlgorithmParameters::EllipticCurve(p) => match p.curve {
            EllipticCurve::P256 => vec![Algorithm::ES256],
            EllipticCurve::P384 => vec![Algorithm::ES384],
            _ => return Err(unsupported()),
        },
        AlgorithmParameters::OctetKeyPair(p) => match p.curve {
            EllipticCurve::Ed25519 => vec![Algorithm::EdDSA],
            _ => return Err(unsupported()),
        },
        AlgorithmParameters::OctetKey(_) => AlgorithmFamily::Hmac.algorithms().to_vec(),
        _ => return Err(unsupported()),
    };
    if let Some(ka) = jwk.common.key_algorithm {
        match Algorithm::try_from(ka) {
            Ok(a) if algs.contains(&a) => algs = vec![a],
            _ => {
                return Err(KeyProblem::AlgorithmMismatch { what: what.to_string() }.into())
            }
        }
    }
    let invalid = || AclError::from(KeyProblem::NotAKey { what: what.to_string() });
    let key = DecodingKey::from_jwk(jwk).map_err(|_| invalid())?;
    match key.family() {
        AlgorithmFamily::Rsa => rsa_checks(&key, what)?,
        AlgorithmFamily::Hmac if hmac_strength(key.try_get_as_bytes().unwrap_or_default()) < MIN_HMAC_BYTES => {
            return Err(KeyProblem::ShortHmac { what: what.to_string(), min: MIN_HMAC_BYTES }.into());
        }
        // Building the verifier parses EC and Ed keys: an error here is a broken key (a wrong
        // signature only answers false).
        AlgorithmFamily::Ec | AlgorithmFamily::Ed => {
            jsonwebtoken::crypto::verify("", b"", &key, algs[0]).map_err(|_| invalid())?;
        }
        _ => {}
    }
    Ok(Some(VerifyKey {
        kid: jwk.common.key_id.clone(),
        key,
        algs,
    }))
}

/// An RSA key as the verifier will read it: the modulus's bits (leading zero bytes not counted)
/// within 2048 ..= 8192, the modulus odd, the exponent odd and within 3 ..= 2^33 - 1. A PEM key
/// comes here too (through its JWK), so both forms are measured alike.
fn rsa_checks(key: &DecodingKey, what: &str) -> Result<()> {
    let jsonwebtoken::DecodingKeyKind::RsaModulusExponent { n, e } = key.kind() else {
        return Err(KeyProblem::NotAKey { what: what.to_string() }.into());
    };
    let bits = significant_bits(n);
    if bits < MIN_RSA_BITS {
        return Err(KeyProblem::ShortRsa { what: what.to_string() }.into());
    }
    if bits > MAX_RSA_BITS {
        return Err(KeyProblem::LongRsa { what: what.to_string(), max: MAX_RSA_BITS }.into());
    }
    let exponent = match significant_bytes(e) {
        digits if digits.len() <= 8 => digits.iter().fold(0u64, |acc, b| (acc << 8) | u64::from(*b)),
        _ => u64::MAX,
    };
    if n.last().is_none_or(|b| b % 2 == 0) {
        return Err(KeyProblem::NotAKey { what: what.to_string() }.into());
    }
    if exponent < 3 || exponent % 2 == 0 || exponent > MAX_RSA_EXPONENT {
        return Err(KeyProblem::RsaExponent { what: what.to_string() }.into());
    }
    Ok(())
}

/// A big-endian unsigned integer without its leading zero bytes.
fn significant_bytes(be: &[u8]) -> &[u8] {
    let first = be.iter().position(|b| *b != 0).unwrap_or(be.len());
    &be[first..]
}

/// The number of bits of a big-endian unsigned integer (0 for zero).
fn significant_bits(be: &[u8]) -> usize {
    match significant_bytes(be) {
        [] => 0,
        [top, rest @ ..] => rest.len() * 8 + (8 - top.leading_zeros() as usize),
    }
}

#[cfg(test)]
#[path = "keys_tests.rs"]
pub(crate) mod tests;
