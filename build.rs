//! Compiles the C++ shim against DuckDB v2.0.0's headers, taken from the source tarball that the
//! pinned `libduckdb-sys` crate ships (so the headers always match the host we load into).
use std::{env, fs, path::PathBuf, process::Command};

fn main() {
    for f in [
        "cpp/shim.cpp",
        "cpp/walk.cpp",
        "cpp/meta.cpp",
        "cpp/txn.cpp",
        "cpp/client.cpp",
        "cpp/host_parse.cpp",
        "cpp/kept.cpp",
        "cpp/enums.cpp",
        "cpp/sessions.cpp",
        "cpp/api.cpp",
        "cpp/flight.cpp",
        "cpp/pushdown.cpp",
        "cpp/pushdown_casts.cpp",
        "cpp/settings.cpp",
        "cpp/acl_shim.hpp",
        "cpp/acl_ffi.hpp",
    ] {
        println!("cargo:rerun-if-changed={f}");
    }
    println!("cargo:rerun-if-changed=build.rs");
    if env::var_os("CARGO_FEATURE_EXTENSION").is_none() {
        return; // unit-test build: no shim, no DuckDB symbols
    }
    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    let include = out.join("duckdb/src/include");
    if !include.join("duckdb.hpp").exists() {
        extract_headers(&locate_tarball(), &out);
    }
    cc::Build::new()
        .cpp(true)
        .include(&include)
        .files(["cpp/shim.cpp", "cpp/walk.cpp", "cpp/meta.cpp", "cpp/txn.cpp", "cpp/client.cpp", "cpp/host_parse.cpp", "cpp/kept.cpp", "cpp/enums.cpp", "cpp/sessions.cpp", "cpp/api.cpp", "cpp/flight.cpp", "cpp/pushdown.cpp", "cpp/pushdown_casts.cpp", "cpp/settings.cpp"])
        .flag("-std=c++17")
        .flag("-fPIC")
        .flag("-fvisibility=hidden")
        .define("NDEBUG", None)
        .define("_GLIBCXX_USE_CXX11_ABI", "1")
        .warnings(false)
        .compile("acl_shim");
    println!("cargo:rustc-link-lib=stdc++");
    if env::var_os("CARGO_FEATURE_STATIC_DUCKDB").is_some() {
        link_static_duckdb();
    }
}

/// `static-duckdb` (`make dist`): links DuckDB's own static library (same tarball, same headers
/// as the shim) into the extension, like official Linux extensions. Its symbols stay local: the
/// archive's through `--exclude-libs`, and the dist linker wrapper narrows the exports to
/// `acl_duckdb_cpp_init`, so nothing embedded can interpose the host's DuckDB.
fn link_static_duckdb() {
    println!("cargo:rerun-if-env-changed=ACL_DUCKDB_LIB_DIR");
    let dir = PathBuf::from(env::var("ACL_DUCKDB_LIB_DIR").expect(
        "feature static-duckdb: set ACL_DUCKDB_LIB_DIR to the directory of libduckdb_static.a (`make libduckdb`)",
    ));
    let lib = dir.join("libduckdb_static.a");
    assert!(lib.exists(), "{} does not exist (`make libduckdb` builds it)", lib.display());
    println!("cargo:rerun-if-changed={}", lib.display());
    println!("cargo:rustc-link-search=native={}", dir.display());
    println!("cargo:rustc-link-lib=static=duckdb_static");
    for sys in ["stdc++", "m", "dl", "pthread"] {
        println!("cargo:rustc-link-lib=dylib={sys}");
    }
    println!("cargo:rustc-cdylib-link-arg=-Wl,--exclude-libs,ALL");
}

/// Finds `duckdb.tar.gz` of the resolved libduckdb-sys package through `cargo metadata`, so any
/// CARGO_HOME or vendored layout works.
fn locate_tarball() -> PathBuf {
    let cargo = env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let manifest = env::var("CARGO_MANIFEST_DIR").unwrap();
    let out = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--locked", "--manifest-path"])
        .arg(PathBuf::from(&manifest).join("Cargo.toml"))
        .output()
        .expect("cargo metadata");
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).expect("cargo metadata json");
    for p in meta["packages"].as_array().expect("packages") {
        if p["name"] == "libduckdb-sys" {
            let m = PathBuf::from(p["manifest_path"].as_str().unwrap());
            return m.parent().unwrap().join("duckdb.tar.gz");
        }
    }
    panic!("libduckdb-sys not found in cargo metadata");
}

fn extract_headers(tarball: &PathBuf, out: &PathBuf) {
    let f = fs::File::open(tarball).unwrap_or_else(|e| panic!("{}: {e}", tarball.display()));
    let mut ar = tar::Archive::new(flate2::read::GzDecoder::new(f));
    for entry in ar.entries().unwrap() {
        let mut entry = entry.unwrap();
        let path = entry.path().unwrap().into_owned();
        if path.starts_with("duckdb/src/include") {
            entry.unpack_in(out).unwrap();
        }
    }
}
