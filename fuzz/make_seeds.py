#!/usr/bin/env python3
"""Seeds the fuzz corpora from the SQL logic tests: every record's SQL (prefixed batches for
`prefix`; each statement with its prefix stripped for `rewrite`, one file per principal byte).
Writes fuzz/seeds/<target>/<sha1>; run from anywhere: python3 fuzz/make_seeds.py"""
import hashlib
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "fuzz" / "seeds"
MAX = 4096
PREFIX = re.compile(r"""^\s*(?:(?:--[^\n]*\n|/\*.*?\*/)\s*)*ACL\s+(?:ROLE\s+(?:"(?:[^"]|"")*"|\S+)|TOKEN\s+'[^']*'|SESSION\s+'[^']*'|ADMIN)\s*""", re.S | re.I)


def records(text):
    lines, i = text.split("\n"), 0
    while i < len(lines):
        words = lines[i].strip().split()
        i += 1
        if words and words[0] in ("statement", "query"):
            block = []
            while i < len(lines) and lines[i].strip():
                if lines[i].strip() == "----":
                    while i < len(lines) and lines[i].strip():
                        i += 1
                    break
                block.append(lines[i])
                i += 1
            yield "\n".join(block)


def write(target, data):
    if len(data) > MAX:
        return 0
    d = OUT / target
    d.mkdir(parents=True, exist_ok=True)
    p = d / hashlib.sha1(data).hexdigest()
    if p.exists():
        return 0
    p.write_bytes(data)
    return 1


def main():
    counts = {"prefix": 0, "rewrite": 0}
    statements = set()
    for f in sorted((ROOT / "test" / "sql").rglob("*.test")):
        for sql in records(f.read_text(encoding="utf-8")):
            if not sql.strip():
                continue
            counts["prefix"] += write("prefix", b"\x00" + sql.encode())
            m = PREFIX.match(sql)
            if not m or sql[: m.end()].upper().rstrip().endswith("ADMIN"):
                continue
            for stmt in sql[m.end():].split(";"):
                if stmt.strip():
                    statements.add(stmt.strip())
    for i, stmt in enumerate(sorted(statements)):
        # spread the statements over the fixture's principals (first byte)
        counts["rewrite"] += write("rewrite", bytes([i % 5]) + stmt.encode())
    print(counts)


if __name__ == "__main__":
    main()
