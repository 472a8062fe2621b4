//! Runs the rewrite target's check on each seed file given (no fuzzer): `cargo run --example one -- <files>`.
fn main() {
    let fx = acl_fuzz::Fixture::new();
    for path in std::env::args().skip(1) {
        let data = std::fs::read(&path).unwrap();
        let Some((which, text)) = data.split_first() else { continue };
        let Ok(sql) = std::str::from_utf8(text) else { continue };
        let which = usize::from(*which);
        if std::panic::catch_unwind(|| acl::stack::run(|| acl_fuzz::check_rewrite(&fx, which, sql)).unwrap()).is_err() {
            println!("FAIL {path}");
        }
    }
}
