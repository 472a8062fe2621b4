//! The prefix/batch splitter: `acl::prefix::split` on arbitrary text with tokens from a
//! stand-in tokenizer, both faithful and re-cut by the fuzzer.
//! Properties: no panic; statements are substrings of the input, in order, after the prefix;
//! with faithful tokens no `;` is inside a statement and no code is dropped.
#![no_main]
use arbitrary::Unstructured;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // First byte: 0 → faithful tokens only; otherwise the tail after a NUL-free text is used
    // to re-cut the tokens.
    let (mode, rest) = match data.split_first() {
        Some((m, r)) => (*m, r),
        None => return,
    };
    let (text, extra) = match rest.iter().position(|b| *b == 0xff) {
        Some(i) if mode & 1 == 1 => (&rest[..i], &rest[i + 1..]),
        _ => (rest, &[][..]),
    };
    let q = String::from_utf8_lossy(text);
    let tokens = acl_fuzz::tokenize(&q);
    acl_fuzz::check_split(&q, &tokens, true);
    if mode & 1 == 1 {
        let mut u = Unstructured::new(extra);
        let mangled = acl_fuzz::mangle(&q, tokens, &mut u);
        acl_fuzz::check_split(&q, &mangled, false);
    }
    let _ = acl::prefix::maybe_ours(text);
});
