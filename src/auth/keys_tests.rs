//! The key-strength rules measure the key, not its text (issue 31, finding 9): a modulus, secret
//! or coordinate padded with zero bytes is no longer or stronger than without them.
use super::*;
use crate::auth::test_keys::*;
use crate::error::Invalid;
use jsonwebtoken::{encode, EncodingKey, Header};
use serde_json::json;

/// base64url without padding (RFC 7515 §2), for building JWKs by hand.
fn b64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let v = chunk.iter().enumerate().fold(0u32, |acc, (i, b)| acc | (u32::from(*b) << (16 - 8 * i)));
        for i in 0..=chunk.len() {
            out.push(A[(v >> (18 - 6 * i) & 63) as usize] as char);
        }
    }
    out
}

fn issuer(keys: &str) -> Issuer {
    Issuer { iss: "https://idp.example".into(), keys: keys.into(), ..Issuer::default() }
}

fn problem(keys: &str) -> KeyProblem {
    match IssuerKeys::parse(&issuer(keys)) {
        Err(AclError::Invalid(Invalid::Keys(k))) => k,
        Err(e) => panic!("not a key problem: {e}"),
        Ok(_) => panic!("accepted: {keys:.80}"),
    }
}

/// `(n, e)` of a PEM RSA public key, as the verifier reads them.
fn rsa_parts(pem: &str) -> (Vec<u8>, Vec<u8>) {
    let key = DecodingKey::from_rsa_pem(pem.as_bytes()).unwrap();
    let jwk = Jwk::from_decoding_key(&key, None).unwrap();
    match DecodingKey::from_jwk(&jwk).unwrap().kind() {
        jsonwebtoken::DecodingKeyKind::RsaModulusExponent { n, e } => (n.clone(), e.clone()),
        _ => unreachable!(),
    }
}

/// The attack's key: the 1024-bit test key as a JWK whose `n` carries 128 leading zero bytes.
pub(crate) fn padded_rsa1024_jwk() -> String {
    let (n, e) = rsa_parts(RSA1024_PUBLIC);
    rsa_jwk(&padded(&n, 128), &e)
}

fn rsa_jwk(n: &[u8], e: &[u8]) -> String {
    json!({"kty": "RSA", "kid": "k", "n": b64(n), "e": b64(e)}).to_string()
}

fn padded(bytes: &[u8], zeros: usize) -> Vec<u8> {
    let mut v = vec![0u8; zeros];
    v.extend_from_slice(bytes);
    v
}

/// The attacker's words: "the 2048-bit rule counts the characters of `n`; I prepend 128 zero
/// bytes to my 1024-bit modulus, the JWK passes, and my tokens verify." The same key signs a
/// token that verifies against the padded JWK (the padding changes nothing for the verifier), so
/// only the rule stands between it and the policy: `KeyProblem::ShortRsa`, however `n` is written.
#[test]
fn a_1024_bit_modulus_padded_with_zero_bytes_is_still_1024_bits() {
    let (n, e) = rsa_parts(RSA1024_PUBLIC);
    assert_eq!(n.len(), 128);
    let jwk = rsa_jwk(&padded(&n, 128), &e);
    // what the attack relies on: the padded key verifies the small key's tokens
    let token = encode(
        &Header::new(Algorithm::RS256),
        &json!({"iss": "https://idp.example", "exp": 4_000_000_000i64}),
        &EncodingKey::from_rsa_pem(RSA1024_PRIVATE.as_bytes()).unwrap(),
    )
    .unwrap();
    let key = DecodingKey::from_jwk(&serde_json::from_str(&jwk).unwrap()).unwrap();
    let mut v = jsonwebtoken::Validation::new(Algorithm::RS256);
    v.validate_exp = false;
    assert!(jsonwebtoken::decode::<serde_json::Value>(&token, &key, &v).is_ok(), "the padded JWK verifies the 1024-bit key's tokens");
    // and the rule refuses it, padded or not, in a JWKS or bare, and as PEM
    for keys in [jwk.clone(), json!({"keys": [serde_json::from_str::<serde_json::Value>(&jwk).unwrap()]}).to_string(), rsa_jwk(&n, &e)] {
        assert!(matches!(problem(&keys), KeyProblem::ShortRsa { .. }), "{keys:.60}");
    }
    assert!(matches!(problem(RSA1024_PUBLIC), KeyProblem::ShortRsa { .. }));
    // a 2048-bit modulus stays 2048 bits with or without leading zeros
    let (n, e) = rsa_parts(RSA_PUBLIC);
    assert!(IssuerKeys::parse(&issuer(&rsa_jwk(&padded(&n, 7), &padded(&e, 3)))).is_ok());
    assert!(IssuerKeys::parse(&issuer(&rsa_jwk(&n, &e))).is_ok());
}

/// "A modulus the verifier cannot take, or an exponent of 1, gets past CREATE and fails (or worse,
/// forges) later": the key is refused when it is registered — `LongRsa`, `RsaExponent`, `NotAKey`.
#[test]
fn the_modulus_and_exponent_the_verifier_takes() {
    let (n, _) = rsa_parts(RSA_PUBLIC);
    for e in [&[1u8][..], &[2], &[0, 0, 1], &[1, 0, 0, 0, 0, 0, 0, 0, 1], &[0x01, 0x00, 0x00]] {
        assert!(matches!(problem(&rsa_jwk(&n, e)), KeyProblem::RsaExponent { .. }), "{e:?}");
    }
    assert!(IssuerKeys::parse(&issuer(&rsa_jwk(&n, &[3]))).is_ok());
    let mut even = n.clone();
    *even.last_mut().unwrap() &= 0xfe;
    assert!(matches!(problem(&rsa_jwk(&even, &[1, 0, 1])), KeyProblem::NotAKey { .. }));
    let huge = vec![0xffu8; 8192 / 8 + 1];
    assert!(matches!(problem(&rsa_jwk(&huge, &[1, 0, 1])), KeyProblem::LongRsa { .. }));
    assert!(IssuerKeys::parse(&issuer(&rsa_jwk(&huge[1..], &[1, 0, 1]))).is_ok(), "8192 bits is the most");
}

/// "HMAC pads a short key with zeros, so a 16-byte secret followed by 16 zero bytes is the 16-byte
/// secret; the 32-byte rule counts 32": `ShortSecret` (hmac:) and `ShortHmac` (a JWK `oct` key).
#[test]
fn trailing_zero_bytes_do_not_lengthen_an_hmac_key() {
    let short = "0123456789abcdef";
    assert!(matches!(problem(&format!("hmac:{short}{}", "\0".repeat(16))), KeyProblem::ShortSecret { .. }));
    assert!(IssuerKeys::parse(&issuer(&format!("hmac:{short}{short}"))).is_ok());
    let oct = |k: &[u8]| json!({"kty": "oct", "k": b64(k)}).to_string();
    let mut k = short.as_bytes().to_vec();
    k.extend([0u8; 16]);
    assert!(matches!(problem(&oct(&k)), KeyProblem::ShortHmac { .. }));
    assert!(IssuerKeys::parse(&issuer(&oct(&[7u8; 32]))).is_ok());
    // leading zero bytes are key bytes (HMAC does not strip them)
    let mut lead = vec![0u8; 16];
    lead.extend(short.as_bytes());
    assert!(IssuerKeys::parse(&issuer(&oct(&lead))).is_ok());
}

/// EC and Ed25519 keys are judged by the curve they name and the point the verifier parses, not
/// by the length of their text: a coordinate padded with a zero byte, or a P-384 key named
/// P-256, is not a key (`NotAKey`).
#[test]
fn curves_are_judged_by_the_point_not_the_text() {
    let jwk = |pem: &str| {
        let key = DecodingKey::from_ec_pem(pem.as_bytes()).or_else(|_| DecodingKey::from_ed_pem(pem.as_bytes())).unwrap();
        serde_json::to_value(Jwk::from_decoding_key(&key, None).unwrap()).unwrap()
    };
    let decode = |s: &str| {
        let k = DecodingKey::from_jwk(&serde_json::from_value(json!({"kty": "oct", "k": s})).unwrap()).unwrap();
        k.try_get_as_bytes().unwrap().to_vec()
    };
    let mut p256 = jwk(P256_PUBLIC);
    assert!(IssuerKeys::parse(&issuer(&p256.to_string())).is_ok());
    let x = decode(p256["x"].as_str().unwrap());
    p256["x"] = json!(b64(&padded(&x, 1)));
    assert!(matches!(problem(&p256.to_string()), KeyProblem::NotAKey { .. }));
    let mut p384 = jwk(P384_PUBLIC);
    p384["crv"] = json!("P-256");
    assert!(matches!(problem(&p384.to_string()), KeyProblem::NotAKey { .. }));
    let mut ed = jwk(ED_PUBLIC);
    let x = decode(ed["x"].as_str().unwrap());
    ed["x"] = json!(b64(&padded(&x, 1)));
    assert!(matches!(problem(&ed.to_string()), KeyProblem::NotAKey { .. }));
}
