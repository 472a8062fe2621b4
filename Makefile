# duckdb-acl — build, test, demo. Everything a fresh clone needs is installed from here.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
EXT_VERSION := $(shell sed -n 's/^version = "\(.*\)"/v\1/p' Cargo.toml | head -n1)
STAGE2 := target/release/libacl.so
EXT := build/release/acl.duckdb_extension

.PHONY: all release faults venv test layers unit runner-selftest slt pytests demo bench clean safety header pgo-profile

all: release

release: $(EXT)

# Stage 2: the Rust cdylib with the C++ shim (borrows DuckDB's symbols from the host), built
# with the committed profile (`make pgo-profile`; spec 012, "Profile-guided build"). A function
# changed since the profile was made is simply built without it.
PGO_PROFILE := pgo/acl.profdata.gz
# Named by the profile's digest: cargo does not watch the file, but it rebuilds when RUSTFLAGS
# (and so this path) change.
PGO_DATA := target/pgo/acl-$(shell sha256sum $(PGO_PROFILE) | cut -c1-16).profdata
# With the profile, the cold blocks of hot functions are split out (`.text.split`) and the linker
# keeps LLVM's hot and unlikely sections apart, so the code a statement runs sits together:
# a never-seen statement is bound by fetching code (spec 012, "Hot code together").
PGO_FLAGS = -Cprofile-use=$(abspath $(PGO_DATA)) -Cllvm-args=-no-pgo-warn-mismatch \
	-Cllvm-args=-enable-split-machine-functions -Clink-arg=-Wl,-z,keep-text-section-prefix

$(PGO_DATA): $(PGO_PROFILE)
	@mkdir -p $(dir $@)
	gzip -dc $< > $@

$(STAGE2): FORCE $(PGO_DATA)
	RUSTFLAGS="$(PGO_FLAGS)" cargo build --release --locked --features flight-sql

# Stage 1: a small loader with no DuckDB symbols that embeds stage 2; then the metadata footer.
$(EXT): $(STAGE2) cpp/loader.cpp extension-ci-tools/append_metadata.py
	@mkdir -p build/release
	g++ -std=c++17 -O2 -fPIC -shared -fvisibility=hidden -D_GLIBCXX_USE_CXX11_ABI=1 \
	    -DACL_STAGE2_PATH='"$(abspath $(STAGE2))"' cpp/loader.cpp -o build/release/acl_stage1.so -ldl
	$(PYTHON) extension-ci-tools/append_metadata.py build/release/acl_stage1.so $@ \
	    --extension-version $(EXT_VERSION)
	@echo "built $@"

FORCE:

# The profile itself: the instrumented build runs bench/pgo_train.py (the never-seen statement
# path, `make bench` cases (a) and (h) in small, the SQL suite), and its counts, merged, become
# pgo/acl.profdata.gz. Needs an llvm-profdata that reads rustc's raw profiles (Debian's llvm-19
# reads those of rustc 1.95's LLVM 22). Not part of `make test`; run it after changes to the
# statement path and commit the result.
LLVM_PROFDATA ?= $(or $(lastword $(sort $(wildcard /usr/lib/llvm-*/bin/llvm-profdata))),llvm-profdata)
PGO_GEN_DIR := target/pgo-gen
pgo-profile: venv
	RUSTFLAGS="-Cprofile-generate=$(abspath $(PGO_GEN_DIR)/raw)" cargo build --release --locked --target-dir $(PGO_GEN_DIR)
	rm -rf $(PGO_GEN_DIR)/raw build/pgo-gen && mkdir -p build/pgo-gen
	g++ -std=c++17 -O2 -fPIC -shared -fvisibility=hidden -D_GLIBCXX_USE_CXX11_ABI=1 \
	    -DACL_STAGE2_PATH='"$(abspath $(PGO_GEN_DIR)/release/libacl.so)"' cpp/loader.cpp -o build/pgo-gen/acl_stage1.so -ldl
	$(PY) extension-ci-tools/append_metadata.py build/pgo-gen/acl_stage1.so build/pgo-gen/acl.duckdb_extension \
	    --extension-version $(EXT_VERSION)
	@mkdir -p build/pgo-gen/stage2
	$(PY) extension-ci-tools/append_metadata.py $(PGO_GEN_DIR)/release/libacl.so build/pgo-gen/stage2/acl.duckdb_extension \
	    --extension-version $(EXT_VERSION)
	$(PY) bench/pgo_train.py build/pgo-gen/acl.duckdb_extension build/pgo-gen/stage2/acl.duckdb_extension
	$(LLVM_PROFDATA) merge --sparse -o $(PGO_GEN_DIR)/acl.profdata $(PGO_GEN_DIR)/raw/*.profraw
	gzip -9n < $(PGO_GEN_DIR)/acl.profdata > $(PGO_PROFILE)
	@echo "wrote $(PGO_PROFILE) ($$(du -h $(PGO_PROFILE) | cut -f1))"

# The same extension with the `test-faults` feature (deliberate rewriter bugs behind
# ACL_TEST_FAULT), only for test/python/test_defence.py. Its own target dir: switching features
# in target/ would rebuild the crate and the shim each way.
FAULTS_STAGE2 := target/faults/release/libacl.so
FAULTS := build/faults/acl.duckdb_extension

faults: $(FAULTS)

$(FAULTS_STAGE2): FORCE
	cargo build --release --locked --features test-faults --target-dir target/faults

$(FAULTS): $(FAULTS_STAGE2) cpp/loader.cpp extension-ci-tools/append_metadata.py
	@mkdir -p build/faults
	g++ -std=c++17 -O2 -fPIC -shared -fvisibility=hidden -D_GLIBCXX_USE_CXX11_ABI=1 \
	    -DACL_STAGE2_PATH='"$(abspath $(FAULTS_STAGE2))"' cpp/loader.cpp -o build/faults/acl_stage1.so -ldl
	$(PYTHON) extension-ci-tools/append_metadata.py build/faults/acl_stage1.so $@ \
	    --extension-version $(EXT_VERSION)

# A quick build for iterating (not used by `make test`): opt-level 1 with incremental compilation
# in its own target dir, so a one-file change rebuilds in seconds instead of minutes.
QUICK_ENV := CARGO_PROFILE_RELEASE_INCREMENTAL=true CARGO_PROFILE_RELEASE_OPT_LEVEL=1
QUICK_STAGE2 := target/quick/release/libacl.so
QUICK := build/quick/acl.duckdb_extension

.PHONY: quick slt-quick
quick:
	$(QUICK_ENV) cargo build --release --locked --target-dir target/quick
	@mkdir -p build/quick
	g++ -std=c++17 -O2 -fPIC -shared -fvisibility=hidden -D_GLIBCXX_USE_CXX11_ABI=1 \
	    -DACL_STAGE2_PATH='"$(abspath $(QUICK_STAGE2))"' cpp/loader.cpp -o build/quick/acl_stage1.so -ldl
	$(PYTHON) extension-ci-tools/append_metadata.py build/quick/acl_stage1.so $(QUICK) \
	    --extension-version $(EXT_VERSION)

slt-quick: venv quick
	$(PY) test/runner.py --extension $(QUICK) test/sql

venv: $(VENV)/.ok

$(VENV)/.ok: test/requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet -r test/requirements.txt
	@touch $@

# No import cycle between the crate's top-level modules and no import against their layer order
# (specs/001-core-model.md, "Layers"); the checker's own cases first. Needs only python3.
layers:
	$(PYTHON) test/check_layers.py --selftest

unit:
	cargo test --locked --no-default-features --lib

# The SQL test runner's own test: files it must pass and files it must fail, each for its stated
# reason (specs/014-test-runner.md). Needs only the venv.
runner-selftest: venv
	$(PY) test/runner_selftest/selftest.py

slt: venv release
	$(PY) test/runner.py --extension $(EXT) test/sql

pytests: venv release faults
	@for t in test/python/test_*.py; do echo "== $$t"; $(PY) $$t --extension $(EXT) --faults-extension $(FAULTS) || exit 1; done

# Every unsafe block and impl with a `// SAFETY:` comment, every unsafe fn with a `# Safety` section.
safety:
	$(PYTHON) test/check_safety.py

# cpp/acl_ffi.hpp, the C boundary the shim includes, regenerated from the Rust side by cbindgen
# (cbindgen.toml); the unit test `ffi_header` fails while the committed file is stale.
header:
	ACL_BLESS=1 cargo test --locked --no-default-features --lib ffi_header

# The SQL logic tests run last so that their summary is the closing line. A short fuzz run of
# every target (FUZZ_SECONDS each) and a short crash hunt (CRASH_SMOKE_SECONDS) are part of the
# suite; the runner's self-test runs before the SQL tests it vouches for.
test: layers safety unit runner-selftest fuzz-smoke pytests crash-smoke slt

demo: venv release
	$(PY) test/demo.py --extension $(EXT)

# Stage 2 with a footer, loadable directly once the host's symbols are global: valgrind can read
# its symbols (the embedded copy is loaded from a memfd), for bench case (b)'s instruction count.
BENCH_STAGE2 := build/bench/acl.duckdb_extension

bench: venv release tpc-data
	@mkdir -p build/bench
	$(PY) extension-ci-tools/append_metadata.py $(STAGE2) $(BENCH_STAGE2) --extension-version $(EXT_VERSION)
	$(PY) bench/bench.py --extension $(EXT) $$(command -v valgrind >/dev/null && echo --callgrind $(BENCH_STAGE2))

# Only case (h), the star-schema workload of issue 14 (a few minutes): `make bench-star`.
.PHONY: bench-star
bench-star: venv release
	$(PY) bench/bench.py --extension $(EXT) --cases h

# (i, j) TPC-H SF1 and TPC-DS SF0.1 (issue 32): DuckDB 2.0.0 cannot install tpch/tpcds offline,
# so a private venv with an older DuckDB and the extensions' PyPI packages writes the parquet.
TPC_VENV := build/tpcvenv
$(TPC_VENV)/bin/python:
	$(PYTHON) -m venv $(TPC_VENV)
	$(TPC_VENV)/bin/pip install -q duckdb==1.5.5 duckdb-extension-tpch==1.5.5 duckdb-extension-tpcds==1.5.5
build/bench/tpch-sf1/queries.json: | $(TPC_VENV)/bin/python
	$(TPC_VENV)/bin/python bench/tpc_gen.py tpch 1 build/bench/tpch-sf1
build/bench/tpcds-sf0.1/queries.json: | $(TPC_VENV)/bin/python
	$(TPC_VENV)/bin/python bench/tpc_gen.py tpcds 0.1 build/bench/tpcds-sf0.1
.PHONY: tpc-data bench-tpc bench-leakproof
tpc-data: build/bench/tpch-sf1/queries.json build/bench/tpcds-sf0.1/queries.json
bench-tpc: venv release tpc-data
	$(PY) bench/bench.py --extension $(EXT) --cases jk

# The leak-proof differential test's full product (`make test` runs a seeded sample of 2 000).
bench-leakproof: venv release
	ACL_DIFF_CASES=all $(PY) test/python/test_leakproof_diff.py --extension $(EXT)

clean:
	rm -rf build target

# ---- `make dist`: one self-contained extension file with DuckDB linked in statically, like the
# official Linux extensions, for hosts that export no DuckDB C++ symbols (specs/013-static-build.md).
# Not part of `make test`. libduckdb is compiled once per DuckDB version (~35 min on 2 cores, niced)
# into a cache outside the clone; `make clean` leaves it alone.
DUCKDB_VERSION := v2.0.0
DUCKDB_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/duckdb-acl/$(DUCKDB_VERSION)
DIST_JOBS ?= 2
DIST_NICE ?= 15
DIST_TARGET := target/dist
DIST := build/dist/acl.duckdb_extension
HOST_TRIPLE = $(shell rustc -vV | sed -n 's/^host: //p')
DIST_LINKER_VAR = CARGO_TARGET_$(shell echo '$(HOST_TRIPLE)' | tr 'a-z-' 'A-Z_')_LINKER
RUST_HOST := extension-ci-tools/rust-host
RUST_HOST_BIN := target/rust-host/release/acl-rust-host

.PHONY: dist libduckdb rust-host rust-host-bundled dist-check dist-check-bundled

libduckdb:
	$(PYTHON) extension-ci-tools/build_libduckdb.py --cache-dir $(DUCKDB_CACHE) --jobs $(DIST_JOBS) --nice $(DIST_NICE)

dist: libduckdb $(PGO_DATA)
	ACL_DUCKDB_LIB_DIR=$(DUCKDB_CACHE)/lib $(DIST_LINKER_VAR)=$(abspath extension-ci-tools/dist-linker.sh) \
	    RUSTFLAGS="$(PGO_FLAGS)" nice -n $(DIST_NICE) cargo build --release --locked --features static-duckdb \
	    --target-dir $(DIST_TARGET) -j $(DIST_JOBS)
	strip --strip-all -o $(DIST_TARGET)/release/acl-stripped.so $(DIST_TARGET)/release/libacl.so
	@exports="$$(nm -D --defined-only $(DIST_TARGET)/release/acl-stripped.so | awk '{print $$3}')"; \
	    if [ "$$exports" != acl_duckdb_cpp_init ]; then echo "dist: unexpected exports: $$exports" >&2; exit 1; fi
	@mkdir -p build/dist
	$(PYTHON) extension-ci-tools/append_metadata.py $(DIST_TARGET)/release/acl-stripped.so $(DIST) \
	    --extension-version $(EXT_VERSION)
	@echo "built $(DIST) ($$(du -h $(DIST) | cut -f1); exports only acl_duckdb_cpp_init)"

# A Rust program on the `duckdb` crate that links the same cached libduckdb (linked mode:
# DUCKDB_LIB_DIR + DUCKDB_STATIC); it exports no DuckDB symbols, like any Rust binary.
rust-host: libduckdb
	DUCKDB_LIB_DIR=$(DUCKDB_CACHE)/lib DUCKDB_STATIC=1 nice -n $(DIST_NICE) cargo build --release --locked \
	    --manifest-path $(RUST_HOST)/Cargo.toml --target-dir target/rust-host -j $(DIST_JOBS)

# The same program with the crate's `bundled` feature: libduckdb-sys compiles DuckDB itself (~35 min
# niced, once: its target dir lives in the cache).
rust-host-bundled:
	CXXFLAGS="-D_GLIBCXX_USE_CXX11_ABI=1" nice -n $(DIST_NICE) cargo build --release --locked --features bundled \
	    --manifest-path $(RUST_HOST)/Cargo.toml --target-dir $(DUCKDB_CACHE)/rust-host-bundled -j $(DIST_JOBS)

# The dist file in the Python wheel (the SQL tests) and in the Rust host; the two-stage file must
# fail to load in the Rust host with a clean error (exit 2), not crash.
dist-check: dist venv release rust-host
	$(PY) test/runner.py --extension $(DIST) test/sql
	$(RUST_HOST_BIN) $(abspath $(DIST))
	@$(RUST_HOST_BIN) $(abspath $(EXT)); rc=$$?; \
	    if [ $$rc -ne 2 ]; then echo "dist-check: two-stage file in the Rust host: exit $$rc, expected 2" >&2; exit 1; fi; \
	    echo "two-stage build refused cleanly in the Rust host, as expected"

# The dist file in the Rust host built with the duckdb crate's `bundled` feature.
dist-check-bundled: dist rust-host-bundled
	$(DUCKDB_CACHE)/rust-host-bundled/release/acl-rust-host $(abspath $(DIST))

# Fuzzing (issue 5): cargo-fuzz targets in fuzz/ (the prefix/batch splitter, the rewriter on
# arbitrary text and on SQL from a small grammar; see fuzz/README.md). Built with the stable
# toolchain (RUSTC_BOOTSTRAP lets cargo-fuzz pass its -Z flags), without a sanitizer (the code
# under test is safe Rust; a panic or abort is what the targets catch), into their own target
# dir so a fuzz build never blocks the extension's. The corpus grows in fuzz/corpus (ignored),
# seeded from fuzz/seeds; findings land in fuzz/artifacts (ignored).
FUZZ_TARGETS := prefix rewrite rewrite_grammar
FUZZ_SECONDS ?= 10
FUZZ_ENV := RUSTC_BOOTSTRAP=1 CARGO_TARGET_DIR=$(CURDIR)/fuzz/target

.PHONY: fuzz-smoke
fuzz-smoke:
	@command -v cargo-fuzz >/dev/null 2>&1 || cargo install cargo-fuzz --locked
	cd fuzz && $(FUZZ_ENV) cargo fuzz build -s none
	@set -e; cd fuzz; for t in $(FUZZ_TARGETS); do \
	    mkdir -p corpus/$$t; \
	    echo "== fuzz $$t for $(FUZZ_SECONDS)s"; \
	    rc=0; out=$$($(FUZZ_ENV) cargo fuzz run -s none $$t corpus/$$t seeds/$$t -- \
	        -max_total_time=$(FUZZ_SECONDS) -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
	        -print_final_stats=1 2>&1) || rc=$$?; \
	    echo "$$out" | grep -E '^stat::number_of_executed_units|^Done [0-9]+ runs' || true; \
	    if [ $$rc -ne 0 ]; then echo "$$out" | tail -n 40; echo "fuzz $$t failed (see fuzz/artifacts/$$t)"; exit 1; fi; \
	done
	@echo "fuzz-smoke: no findings"

# Crash hunting (issue 31, finding 8): programs of principal DDL and metadata listings nested in
# views, CTEs, CTAS, subqueries, prepared statements, relations and small-stack threads, run
# against the real extension in a child process, so that a signal, a hang or a dead node is a
# finding (reduced, printed, and written to fuzz/artifacts/crash_hunt with a stand-alone repro).
# `make test` runs the known crashes and a short random sample; `make crash-hunt` runs longer
# (CRASH_SECONDS; CRASH_SEED=n repeats a run). See fuzz/README.md.
CRASH_SMOKE_SECONDS ?= 40
CRASH_SECONDS ?= 600
CRASH_SEED ?=

.PHONY: crash-smoke crash-hunt
crash-smoke: venv release
	$(PY) fuzz/crash_hunt.py --extension $(EXT) --seconds $(CRASH_SMOKE_SECONDS) --reduce-seconds 15 $(if $(CRASH_SEED),--seed $(CRASH_SEED))

crash-hunt: venv release
	$(PY) fuzz/crash_hunt.py --extension $(EXT) --seconds $(CRASH_SECONDS) $(if $(CRASH_SEED),--seed $(CRASH_SEED))

# ---- Packages a user installs without building (specs/024-packages.md), from the static
# `make dist` file (PACKAGE_EXT= another file, e.g. $(EXT), packages that one instead):
# `make repo`: an extension repository directory, `INSTALL acl FROM '<abs path of build/repo>'`;
# `make wheel`: build/wheel/duckdb_extension_acl-<version>-py3-none-manylinux_*_x86_64.whl.
# test/python/test_packages.py (in `make pytests`) packages the release file the same way.
REPO_DIR := build/repo
WHEEL_DIR := build/wheel
PACKAGE_EXT ?= $(DIST)

.PHONY: repo wheel

repo: $(if $(filter $(DIST),$(PACKAGE_EXT)),dist)
	rm -rf $(REPO_DIR)
	$(PYTHON) extension-ci-tools/package.py repo $(PACKAGE_EXT) $(REPO_DIR)

wheel: $(if $(filter $(DIST),$(PACKAGE_EXT)),dist)
	rm -rf $(WHEEL_DIR)
	$(PYTHON) extension-ci-tools/package.py wheel $(PACKAGE_EXT) $(WHEEL_DIR)
