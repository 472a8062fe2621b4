#!/usr/bin/env python3
"""Append DuckDB's 512-byte extension metadata footer (unsigned) to a shared object.

Layout (DuckDB v2.0.0): eight 32-byte NUL-padded fields, written in this order:
"", "", "", ABI type, extension version, DuckDB version, platform, metadata version "4";
then a 256-byte signature area (zeros: unsigned).
"""
import argparse
import shutil


def field(value: str) -> bytes:
    raw = value.encode()
    if len(raw) > 32:
        raise SystemExit(f"metadata field too long: {value!r}")
    return raw.ljust(32, b"\0")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("input")
    ap.add_argument("output")
    ap.add_argument("--abi", default="CPP")
    ap.add_argument("--extension-version", required=True)
    ap.add_argument("--duckdb-version", default="v2.0.0")
    ap.add_argument("--platform", default="linux_amd64")
    args = ap.parse_args()
    fields = ["", "", "", args.abi, args.extension_version, args.duckdb_version, args.platform, "4"]
    footer = b"".join(field(f) for f in fields) + b"\0" * 256
    assert len(footer) == 512
    shutil.copyfile(args.input, args.output)
    with open(args.output, "ab") as out:
        out.write(footer)


if __name__ == "__main__":
    main()
