# duckdb-acl — build, test, demo. Everything a fresh clone needs is installed from here.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
EXT_VERSION := $(shell sed -n 's/^version = "\(.*\)"/v\1/p' Cargo.toml | head -n1)
STAGE2 := target/release/libacl.so
EXT := build/release/acl.duckdb_extension

.PHONY: all release venv test unit slt pytests demo bench clean

all: release

release: $(EXT)

# Stage 2: the Rust cdylib with the C++ shim (borrows DuckDB's symbols from the host).
$(STAGE2): FORCE
	cargo build --release --locked

# Stage 1: a small loader with no DuckDB symbols that embeds stage 2; then the metadata footer.
$(EXT): $(STAGE2) cpp/loader.cpp extension-ci-tools/append_metadata.py
	@mkdir -p build/release
	g++ -std=c++17 -O2 -fPIC -shared -fvisibility=hidden -D_GLIBCXX_USE_CXX11_ABI=1 \
	    -DACL_STAGE2_PATH='"$(abspath $(STAGE2))"' cpp/loader.cpp -o build/release/acl_stage1.so -ldl
	$(PYTHON) extension-ci-tools/append_metadata.py build/release/acl_stage1.so $@ \
	    --extension-version $(EXT_VERSION)
	@echo "built $@"

FORCE:

venv: $(VENV)/.ok

$(VENV)/.ok: test/requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet -r test/requirements.txt
	@touch $@

unit:
	cargo test --locked --no-default-features --lib

slt: venv release
	$(PY) test/runner.py --extension $(EXT) test/sql

pytests: venv release
	@for t in test/python/test_*.py; do echo "== $$t"; $(PY) $$t --extension $(EXT) || exit 1; done

# The SQL logic tests run last so that their summary is the closing line.
test: unit pytests slt

demo: venv release
	$(PY) test/demo.py --extension $(EXT)

bench: venv release
	$(PY) bench/bench.py --extension $(EXT)

clean:
	rm -rf build target
