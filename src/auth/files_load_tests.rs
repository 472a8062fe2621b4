//! Keys files read when a policy is published (issue 31, finding 9): never the keys the policy or
//! the store kept, tokens refused until the read finished, and every read bounded.
use super::*;

/// The attacker's words: "the IdP rotated my stolen key out of the JWKS file, but the store kept
/// the text read at CREATE ISSUER; after a restart the node verifies my token against that copy
/// until the first re-read, five minutes later." The store's (here: the policy's) keys verify
/// nothing: before the file is read `KeysNotRead`, after it `BadSignature`.
#[test]
fn the_keys_the_policy_or_store_kept_never_verify() {
    let file = TempFile::new(&format!("hmac:{A}"));
    let p = policy(&file);
    let cache = TokenCache::new();
    let stolen = token(STORED, "mallory");
    assert_eq!(at(&cache, &p, &stolen, NOW), Err(TokenReason::KeysNotRead));
    cache.files.settle();
    assert_eq!(at(&cache, &p, &stolen, NOW), Err(TokenReason::BadSignature));
    assert!(at(&cache, &p, &token(A, "alice"), NOW).is_ok());
}

/// "Rotated out, then the node restarts (or joins a shared store)": the new node's publish reads
/// the file, so the old key fails at its first token; a reload on a running node reads it too,
/// without waiting for the interval.
#[test]
fn a_key_rotated_out_fails_at_once_after_a_restart_or_a_reload() {
    let file = TempFile::new(&format!("hmac:{A}"));
    let p = policy(&file);
    let running = TokenCache::new();
    publish(&running, &p, NOW);
    let old = token(A, "old");
    assert!(at(&running, &p, &old, NOW).is_ok());
    file.write(&format!("hmac:{B}"));
    let restarted = TokenCache::new();
    publish(&restarted, &p, NOW + 1);
    assert_eq!(at(&restarted, &p, &old, NOW + 1), Err(TokenReason::BadSignature));
    assert!(at(&restarted, &p, &token(B, "new"), NOW + 1).is_ok());
    // the running node, not yet due, still has the old keys — until a reload publishes
    assert!(at(&running, &p, &old, NOW + 2).is_ok());
    let mut reloaded = p.clone();
    reloaded.version += 1;
    publish(&running, &reloaded, NOW + 2);
    assert_eq!(at(&running, &reloaded, &old, NOW + 2), Err(TokenReason::BadSignature));
}

/// "The file system is slow: until the read ends, whatever the node has must not verify me": a
/// publish that stopped waiting leaves the issuer without keys, `KeysNotRead`, until it ends.
#[test]
fn tokens_are_refused_until_the_first_read_finished() {
    let file = TempFile::new(&format!("hmac:{A}"));
    let p = policy(&file);
    let cache = TokenCache::new();
    cache.files.set_read_delay(std::time::Duration::from_millis(300));
    let t = token(A, "alice");
    cache.files.publish(&p, NOW, NO_WAIT);
    assert_eq!(at(&cache, &p, &t, NOW), Err(TokenReason::KeysNotRead));
    assert_eq!(at(&cache, &p, &t, NOW + 5), Err(TokenReason::KeysNotRead), "one read in flight, still not finished");
    cache.files.settle();
    assert!(at(&cache, &p, &t, NOW + 5).is_ok());
}

/// A file unreadable at load does not refuse the store: its issuer's tokens are refused,
/// `KeysUnreadable`, and a read is tried again every second (whatever the interval) until one
/// gives keys. Garbage is no better than no file.
#[test]
fn a_first_read_that_fails_refuses_with_its_reason_and_is_tried_again() {
    let file = TempFile::new("not keys");
    let p = policy(&file);
    let cache = TokenCache::new();
    let never = KeyTimes { refresh_secs: 0, max_stale_secs: 0 };
    publish(&cache, &p, NOW);
    let t = token(A, "alice");
    assert_eq!(cache.principal(&p, &t, NOW, 0, never).map(|_| ()), Err(AclError::token(TokenReason::KeysUnreadable)));
    std::fs::remove_file(&file.0).unwrap();
    assert_eq!(cache.principal(&p, &t, NOW + 1, 0, never).map(|_| ()), Err(AclError::token(TokenReason::KeysUnreadable)));
    cache.files.settle();
    file.write(&format!("hmac:{A}"));
    // not before a second has passed since the last try
    assert_eq!(cache.principal(&p, &t, NOW + 1, 0, never).map(|_| ()), Err(AclError::token(TokenReason::KeysUnreadable)));
    cache.files.settle();
    assert_eq!(cache.principal(&p, &t, NOW + 1, 0, never).map(|_| ()), Err(AclError::token(TokenReason::KeysUnreadable)));
    assert_eq!(cache.principal(&p, &t, NOW + 2, 0, never).map(|_| ()), Err(AclError::token(TokenReason::KeysUnreadable)), "the read has only started");
    cache.files.settle();
    assert!(cache.principal(&p, &t, NOW + 2, 0, never).is_ok());
}

/// A statement of the policy before a publish (in flight when it happened) does not undo the
/// publish's entry: it is refused, and the new policy's statements go on with the read keys.
#[test]
fn a_statement_of_an_older_policy_does_not_undo_a_publish() {
    let file = TempFile::new(&format!("hmac:{A}"));
    let before = policy(&file);
    let mut after = before.clone();
    after.version = 2;
    after.issuers.get_mut(ISS).unwrap().algs = vec!["HS256".into()];
    let cache = TokenCache::new();
    publish(&cache, &after, NOW);
    let t = token(A, "alice");
    assert_eq!(at(&cache, &before, &t, NOW), Err(TokenReason::KeysNotRead));
    cache.files.settle();
    assert!(at(&cache, &after, &t, NOW).is_ok());
}

/// A publish forgets what the policy no longer reads from a file; the listing's kind is the
/// file's, once read.
#[test]
fn a_publish_keeps_only_the_file_issuers_of_its_policy() {
    let file = TempFile::new(&format!("hmac:{A}"));
    let mut p = policy(&file);
    let files = KeyFiles::default();
    assert_eq!(files.key_kind(ISS), None);
    files.publish(&p, NOW, WAIT);
    assert_eq!(files.key_kind(ISS), Some("hmac"));
    p.issuers.get_mut(ISS).unwrap().keys_file = None;
    files.publish(&p, NOW, WAIT);
    assert_eq!(files.key_kind(ISS), None);
}

/// "`KEYS FROM '/proc/self/pagemap'`: its size reads 0, so the 1 MiB check passes, and the read
/// takes the node's memory." Every read stops at 1 MiB + 1 byte, whatever the file says its size
/// is; a FIFO is refused without waiting for a writer; a device or a directory is no file.
#[test]
fn every_read_is_bounded() {
    let started = std::time::Instant::now();
    if std::path::Path::new("/proc/self/pagemap").exists() {
        // its size reads 0; the read stops at 1 MiB + 1 byte, which the kernel refuses (it reads
        // in 8-byte entries): an error either way, after at most 1 MiB
        let why = read_keys_file("/proc/self/pagemap").unwrap_err();
        assert!(why == "larger than 1 MiB" || why == "invalid input parameter", "{why}");
    }
    for path in ["/dev/zero", "/dev/urandom", "/proc/self", "/"] {
        assert_eq!(read_keys_file(path), Err("not a regular file".to_string()), "{path}");
    }
    let big = TempFile::new("");
    let limit = usize::try_from(MAX_KEYS_FILE_BYTES).unwrap();
    std::fs::write(&big.0, vec![b'a'; limit + 1]).unwrap();
    assert_eq!(read_keys_file(&big.path()), Err("larger than 1 MiB".to_string()));
    std::fs::write(&big.0, vec![b'a'; limit]).unwrap();
    assert_eq!(read_keys_file(&big.path()).map(|t| t.len()), Ok(limit));
    std::fs::write(&big.0, [0xffu8, 0xfe]).unwrap();
    assert_eq!(read_keys_file(&big.path()), Err("not UTF-8 text".to_string()));
    std::fs::remove_file(&big.0).unwrap();
    let c = std::ffi::CString::new(big.path()).unwrap();
    // SAFETY: `c` is a NUL-terminated path that outlives the call.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    assert_eq!(read_keys_file(&big.path()), Err("not a regular file".to_string()));
    assert!(started.elapsed() < std::time::Duration::from_secs(5), "{:?}", started.elapsed());
}
