// In linked mode libduckdb-sys emits only `static=duckdb_static`; DuckDB's C++ runtime is linked
// here. (The `bundled` build's cc step links it itself.)
fn main() {
    let bundled = std::env::var_os("CARGO_FEATURE_BUNDLED").is_some();
    let mode = if bundled { "bundled" } else { "linked static" };
    println!("cargo:rustc-env=DUCKDB_CRATE=1.20000.1, {mode}");
    println!("cargo:rerun-if-env-changed=DUCKDB_LIB_DIR");
    if !bundled {
        println!("cargo:rustc-link-lib=dylib=stdc++");
    }
}
