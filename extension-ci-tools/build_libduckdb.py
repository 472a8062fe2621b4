#!/usr/bin/env python3
"""Build DuckDB's static library once per DuckDB version, in a cache outside the clone.

Sources: `duckdb.tar.gz` of the pinned `libduckdb-sys` crate (found through `cargo metadata`, like
build.rs does), compiled from its `manifest.json` file list: the base library (unity `ub_*.cpp`
files and the rest) plus the core_functions, json and parquet extensions, as the Python wheel
links them. Flags match the wheel's ABI (`-std=c++17 -O3 -fPIC -DNDEBUG
-D_GLIBCXX_USE_CXX11_ABI=1`, never DEBUG).

Layout of the cache directory (default `${XDG_CACHE_HOME:-~/.cache}/duckdb-acl/<version>`):

    src/duckdb/...              the unpacked tarball
    obj/*.o                     one object per source file (kept: an interrupted build resumes)
    lib/libduckdb_static.a      the result (DUCKDB_LIB_DIR for libduckdb-sys' linked mode)
    lib/include/                DuckDB's public headers (duckdb.h, duckdb.hpp, ...)
    build-info.json             the key (tarball sha256 + flags) and the measured build time

Every compile runs under `nice` (default 15) with at most `--jobs` (default 2) at a time. The
script is idempotent: with a matching key and an existing archive it prints the path and exits.
"""
import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

VERSION = "v2.0.0"
EXTENSIONS = ["core_functions", "json", "parquet"]
CXXFLAGS = [
    "-std=c++17", "-O3", "-fPIC", "-DNDEBUG", "-D_GLIBCXX_USE_CXX11_ABI=1",
    # Not ABI-relevant: let the final link drop what the extension never reaches.
    "-ffunction-sections", "-fdata-sections",
    "-w",
]
DEFINES = [f"-DDUCKDB_EXTENSION_{e.upper()}_LINKED=1" for e in EXTENSIONS] + [
    "-DDUCKDB_EXTENSION_AUTOINSTALL_DEFAULT=1",
    "-DDUCKDB_EXTENSION_AUTOLOAD_DEFAULT=1",
]
# A constructor-only file for programs, never for an archive (see its own header comment).
SKIP = {"duckdb/extension/loader/static_extension_autoregister.cpp"}


def default_cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "duckdb-acl" / VERSION


def locate_tarball(manifest_path: Path) -> Path:
    cargo = os.environ.get("CARGO", "cargo")
    out = subprocess.run(
        [cargo, "metadata", "--format-version", "1", "--locked", "--manifest-path", str(manifest_path)],
        check=True, capture_output=True,
    ).stdout
    for p in json.loads(out)["packages"]:
        if p["name"] == "libduckdb-sys":
            return Path(p["manifest_path"]).parent / "duckdb.tar.gz"
    raise SystemExit("libduckdb-sys not found in cargo metadata")


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def object_name(src: str) -> str:
    # duckdb/src/common/foo.cpp -> src__common__foo.o (unique, flat)
    rel = src[len("duckdb/"):] if src.startswith("duckdb/") else src
    return rel.replace("/", "__").rsplit(".", 1)[0] + ".o"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache-dir", type=Path, default=default_cache())
    ap.add_argument("--manifest-path", type=Path, default=Path(__file__).resolve().parent.parent / "Cargo.toml")
    ap.add_argument("--tarball", type=Path, help="duckdb.tar.gz (default: found through cargo metadata)")
    ap.add_argument("--jobs", "-j", type=int, default=2)
    ap.add_argument("--nice", type=int, default=15)
    ap.add_argument("--cxx", default=os.environ.get("CXX", "g++"))
    args = ap.parse_args()

    cache: Path = args.cache_dir
    lib = cache / "lib" / "libduckdb_static.a"
    info_path = cache / "build-info.json"
    tarball = args.tarball or locate_tarball(args.manifest_path)
    key = {
        "duckdb_version": VERSION,
        "tarball_sha256": sha256(tarball),
        "cxx": args.cxx,
        "cxx_version": subprocess.run([args.cxx, "--version"], capture_output=True, text=True).stdout.splitlines()[0],
        "cxxflags": CXXFLAGS,
        "defines": DEFINES,
    }
    old = json.loads(info_path.read_text()) if info_path.exists() else {}
    if old.get("key") == key and lib.exists():
        print(f"libduckdb (cached): {lib}")
        return
    if old.get("key") != key and cache.exists():
        print(f"cache key changed: rebuilding {cache}", file=sys.stderr)
        for sub in ("src", "obj", "lib"):
            shutil.rmtree(cache / sub, ignore_errors=True)
        info_path.unlink(missing_ok=True)
    cache.mkdir(parents=True, exist_ok=True)
    info_path.write_text(json.dumps({"key": key, "state": "building"}, indent=2) + "\n")

    src_root = cache / "src"
    if not (src_root / "duckdb" / "manifest.json").exists():
        print(f"unpacking {tarball}", file=sys.stderr)
        shutil.rmtree(src_root, ignore_errors=True)
        tmp = cache / "src.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        with tarfile.open(tarball) as t:
            t.extractall(tmp, filter="data")
        tmp.rename(src_root)

    manifest = json.loads((src_root / "duckdb" / "manifest.json").read_text())
    files = set(manifest["base"]["cpp_files"])
    incs = set(manifest["base"]["include_dirs"])
    for e in EXTENSIONS:
        files |= set(manifest["extensions"][e]["cpp_files"])
        incs |= set(manifest["extensions"][e]["include_dirs"])
    files = sorted(files - SKIP)
    include_flags = [f"-I{src_root / 'duckdb'}"] + [f"-I{src_root / 'duckdb' / d}" for d in sorted(incs)]

    obj_dir = cache / "obj"
    obj_dir.mkdir(exist_ok=True)
    todo = [f for f in files if not (obj_dir / object_name(f)).exists()]
    # Largest first, so the two slots stay busy until the end.
    todo.sort(key=lambda f: -(src_root / f).stat().st_size)
    print(f"libduckdb: {len(files)} sources, {len(todo)} to compile, -j{args.jobs}, nice {args.nice}",
          file=sys.stderr, flush=True)

    started = time.time()
    done = [0]

    def compile_one(src: str) -> None:
        obj = obj_dir / object_name(src)
        tmp = obj.with_suffix(".o.tmp")
        cmd = ["nice", "-n", str(args.nice), args.cxx, *CXXFLAGS, *DEFINES, *include_flags,
               "-c", str(src_root / src), "-o", str(tmp)]
        t0 = time.time()
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"{src}:\n{r.stderr[-4000:]}")
        tmp.rename(obj)  # atomic: an interrupted build never leaves a half object
        done[0] += 1
        print(f"[{done[0]}/{len(todo)}] {time.time() - t0:6.1f}s {src}", file=sys.stderr, flush=True)

    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for fut in [pool.submit(compile_one, f) for f in todo]:
            fut.result()
    compile_seconds = time.time() - started

    (cache / "lib").mkdir(exist_ok=True)
    tmp_lib = lib.with_suffix(".a.tmp")
    tmp_lib.unlink(missing_ok=True)
    objs = [str(obj_dir / object_name(f)) for f in files]
    subprocess.run(["nice", "-n", str(args.nice), "ar", "rcs", str(tmp_lib), *objs], check=True)
    tmp_lib.rename(lib)
    inc_out = cache / "lib" / "include"
    shutil.rmtree(inc_out, ignore_errors=True)
    shutil.copytree(src_root / "duckdb" / "src" / "include", inc_out)

    info = {
        "key": key,
        "state": "done",
        "sources": len(files),
        "compiled_this_run": len(todo),
        "compile_seconds_this_run": round(compile_seconds),
        "jobs": args.jobs,
        "nice": args.nice,
        "archive": str(lib),
        "archive_bytes": lib.stat().st_size,
        "finished": time.strftime("%Y-%m-%d %H:%M:%S"),
    }
    if old.get("key") == key and old.get("compile_seconds_total"):
        info["compile_seconds_total"] = old["compile_seconds_total"] + round(compile_seconds)
    else:
        info["compile_seconds_total"] = round(compile_seconds)
    info_path.write_text(json.dumps(info, indent=2) + "\n")
    print(f"libduckdb: {lib} ({lib.stat().st_size // (1 << 20)} MiB, {compile_seconds / 60:.1f} min this run)")


if __name__ == "__main__":
    main()
