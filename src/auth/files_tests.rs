//! Keys read `KEYS FROM` a file, read again on `acl_jwks_refresh_interval` and stale after
//! `acl_jwks_max_stale` (`files.rs`). Time is the caller's clock, so no test sleeps.
use super::*;
use jsonwebtoken::{encode, Algorithm, EncodingKey, Header};
use serde_json::json;

const ISS: &str = "https://files.example";
const NOW: i64 = 1_800_000_000;
const A: &str = "first-secret-of-at-least-32-bytes-long";
const B: &str = "second-secret-of-at-least-32-bytes-long";
const TIMES: KeyTimes = KeyTimes { refresh_secs: 10, max_stale_secs: 30 };

struct TempFile(std::path::PathBuf);

impl TempFile {
    fn new(text: &str) -> TempFile {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
        let path = std::env::temp_dir().join(format!("acl-keys-{}-{nanos}.txt", std::process::id()));
        let f = TempFile(path);
        f.write(text);
        f
    }
    fn write(&self, text: &str) {
        std::fs::write(&self.0, text).unwrap();
    }
    fn path(&self) -> String {
        self.0.to_string_lossy().into_owned()
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// One issuer reading `file`. Its `keys` hold a secret the file does not (what an older node left
/// in the store): they must never verify anything.
fn policy(file: &TempFile) -> Policy {
    let mut p = Policy::default();
    p.roles.insert("analyst".into(), Default::default());
    let issuer = Issuer {
        iss: ISS.into(),
        keys: format!("hmac:{STORED}"),
        role_claim: DEFAULT_ROLE_CLAIM.into(),
        keys_file: Some(file.path()),
        ..Issuer::default()
    };
    p.issuers.insert(ISS.into(), issuer);
    p
}

const STORED: &str = "a-secret-an-old-store-row-still-holds";
const NO_WAIT: std::time::Duration = std::time::Duration::ZERO;
const WAIT: std::time::Duration = std::time::Duration::from_secs(5);

fn token(secret: &str, sub: &str) -> String {
    let claims = json!({"iss": ISS, "sub": sub, "exp": NOW + 3600, "roles": "analyst"});
    encode(&Header::new(Algorithm::HS256), &claims, &EncodingKey::from_secret(secret.as_bytes()).unwrap()).unwrap()
}

fn at(cache: &TokenCache, p: &Policy, t: &str, now: i64) -> std::result::Result<Vec<String>, TokenReason> {
    match cache.principal(p, t, now, 0, TIMES) {
        Ok(pr) => Ok(pr.roles),
        Err(AclError::TokenRejected { reason }) => Err(reason),
        Err(e) => panic!("{e}"),
    }
}

/// `cache`'s node publishes `p` at `now` and waits for the reads.
fn publish(cache: &TokenCache, p: &Policy, now: i64) {
    cache.files.publish(p, now, WAIT);
}

#[test]
fn a_rotated_keys_file_is_read_on_the_interval() {
    let file = TempFile::new(&format!("hmac:{A}"));
    let p = policy(&file);
    let cache = TokenCache::new();
    publish(&cache, &p, NOW);
    let (old, new) = (token(A, "old"), token(B, "new"));
    assert!(at(&cache, &p, &old, NOW).is_ok());
    file.write(&format!("hmac:{B}"));
    // not due yet: the keys the node has
    assert!(at(&cache, &p, &old, NOW + 9).is_ok());
    assert_eq!(at(&cache, &p, &new, NOW + 9), Err(TokenReason::BadSignature));
    // due: the statement that finds it so starts the read and goes on with the keys it has …
    assert_eq!(at(&cache, &p, &new, NOW + 10), Err(TokenReason::BadSignature));
    cache.files.settle();
    // … the next one has the file's keys; a token verified with the keys they replaced is
    // verified again (a cached one included) and fails
    assert!(at(&cache, &p, &new, NOW + 10).is_ok());
    assert_eq!(at(&cache, &p, &old, NOW + 11), Err(TokenReason::BadSignature));
    // interval 0: never read again on the statement path
    let never = KeyTimes { refresh_secs: 0, max_stale_secs: 0 };
    let fresh = TokenCache::new();
    publish(&fresh, &p, NOW + 1000);
    file.write(&format!("hmac:{A}"));
    assert!(fresh.principal(&p, &new, NOW + 2000, 0, never).is_ok());
    fresh.files.settle();
    assert!(fresh.principal(&p, &new, NOW + 2001, 0, never).is_ok());
}

#[test]
fn an_unreadable_file_keeps_the_last_keys_for_max_stale_then_refuses() {
    let file = TempFile::new(&format!("hmac:{A}"));
    let p = policy(&file);
    let cache = TokenCache::new();
    publish(&cache, &p, NOW);
    let t = token(A, "alice");
    assert!(at(&cache, &p, &t, NOW).is_ok());
    std::fs::remove_file(&file.0).unwrap();
    // read fails at NOW + 10; the last good read was at NOW (the publish's): valid until NOW + 30
    assert!(at(&cache, &p, &t, NOW + 10).is_ok());
    cache.files.settle();
    assert!(at(&cache, &p, &t, NOW + 30).is_ok());
    cache.files.settle();
    assert_eq!(at(&cache, &p, &t, NOW + 31), Err(TokenReason::KeysStale));
    // a new token of that issuer too, and garbage in the file is no better than no file
    assert_eq!(at(&cache, &p, &token(A, "bob"), NOW + 32), Err(TokenReason::KeysStale));
    file.write("not keys");
    assert_eq!(at(&cache, &p, &t, NOW + 45), Err(TokenReason::KeysStale));
    cache.files.settle();
    assert_eq!(at(&cache, &p, &t, NOW + 46), Err(TokenReason::KeysStale));
    // the file back: the next due read makes the keys fresh again, from the statement after it
    file.write(&format!("hmac:{A}"));
    assert_eq!(at(&cache, &p, &t, NOW + 54), Err(TokenReason::KeysStale), "not due before NOW + 55");
    assert_eq!(at(&cache, &p, &t, NOW + 55), Err(TokenReason::KeysStale), "the read has only started");
    cache.files.settle();
    assert!(at(&cache, &p, &t, NOW + 55).is_ok());
}

#[test]
fn a_statement_never_waits_for_another_reading_the_file() {
    let file = TempFile::new(&format!("hmac:{A}"));
    let p = policy(&file);
    let files = KeyFiles::default();
    let issuer = &p.issuers[ISS];
    files.publish(&p, NOW, WAIT);
    let first = files.current(issuer, &file.path(), 0, NOW, TIMES).unwrap();
    file.write(&format!("hmac:{B}"));
    // many threads find the refresh due at once: one reads, none blocks, all get keys
    std::thread::scope(|s| {
        for _ in 0..8 {
            s.spawn(|| assert!(files.current(issuer, &file.path(), 0, NOW + 10, TIMES).is_ok()));
        }
    });
    files.settle();
    let after = files.current(issuer, &file.path(), 0, NOW + 11, TIMES).unwrap();
    assert_ne!(first.generation, after.generation);
}

/// The file's text is parsed with the issuer's ALGS as the policy holds them now: an ALTER ISSUER
/// SET ALGS that leaves the path as it is starts over, with no keys until the file is read again.
#[test]
fn other_algs_start_over() {
    let file = TempFile::new(&format!("hmac:{A}"));
    let mut p = policy(&file);
    let cache = TokenCache::new();
    publish(&cache, &p, NOW);
    let t = token(A, "alice");
    assert!(at(&cache, &p, &t, NOW).is_ok());
    p.issuers.get_mut(ISS).unwrap().algs = vec!["HS384".into()];
    p.version += 1;
    // a statement that meets the new issuer before the publish read its file
    assert_eq!(at(&cache, &p, &t, NOW + 1), Err(TokenReason::KeysNotRead));
    publish(&cache, &p, NOW + 1);
    assert_eq!(at(&cache, &p, &t, NOW + 1), Err(TokenReason::AlgorithmNotAllowed));
}

/// A token verified while the read is in flight is judged with the keys the node has; the file's
/// keys count from the statement after the read finished. Many reads never run at once.
#[test]
fn one_read_in_flight_per_issuer() {
    let file = TempFile::new(&format!("hmac:{A}"));
    let p = policy(&file);
    let files = KeyFiles::default();
    let issuer = &p.issuers[ISS];
    files.publish(&p, NOW, WAIT);
    let first = files.current(issuer, &file.path(), 0, NOW, TIMES).unwrap();
    file.write(&format!("hmac:{B}"));
    for now in [NOW + 10, NOW + 10, NOW + 11] {
        // the first starts the read; the others find it done or in flight and start none
        let _ = files.current(issuer, &file.path(), 0, now, TIMES).unwrap();
    }
    files.settle();
    let read = files.current(issuer, &file.path(), 0, NOW + 12, TIMES).unwrap();
    assert_ne!(read.generation, first.generation);
    file.write(&format!("hmac:{A}"));
    // not due again before NOW + 20: the file's change is not seen yet
    let _ = files.current(issuer, &file.path(), 0, NOW + 19, TIMES).unwrap();
    files.settle();
    assert_eq!(files.current(issuer, &file.path(), 0, NOW + 19, TIMES).unwrap().generation, read.generation);
}

#[path = "files_load_tests.rs"]
mod load;
