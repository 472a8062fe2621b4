#!/usr/bin/env python3
"""Fails when an `unsafe` block or impl in src/ has no `// SAFETY:` comment, or an `unsafe fn`
no `# Safety` doc section (issue 11).

An unsafe block or impl is documented by a `// SAFETY:` line in the comment lines directly above
the line it is on, or on the first line inside the block (when `unsafe {` ends its line). An
`unsafe fn` (an `unsafe extern "C" fn` callback too) by a `# Safety` heading in its doc comment.
Comments and string literals are not searched for the keyword.
Usage: python3 test/check_safety.py [src-dir]
"""
import re
import sys
from pathlib import Path

BLOCK = re.compile(r"\bunsafe\s*\{")
IMPL = re.compile(r"\bunsafe\s+impl\b")
FN = re.compile(r"\bunsafe\s+(?:extern\s+\"[^\"]*\"\s+)?fn\s+[A-Za-z_]")
STRING = re.compile(r'"(?:\\.|[^"\\])*"')
CHAR = re.compile(r"'(?:\\.|[^'\\])'")


def code_of(line: str) -> str:
    """The line without string and char literals and without its `//` comment."""
    line = CHAR.sub("''", STRING.sub('""', line))
    return line.split("//", 1)[0]


def comments_above(lines, i):
    """The `//` comment lines directly above line i (attributes in between are skipped)."""
    out = []
    j = i - 1
    while j >= 0:
        s = lines[j].strip()
        if s.startswith("//"):
            out.append(s)
        elif not s.startswith("#["):
            break
        j -= 1
    return out


def check_file(path: Path, rel: str):
    problems = []
    lines = path.read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines):
        code = code_of(line)
        above = comments_above(lines, i)
        if BLOCK.search(code) or IMPL.search(code):
            inside = lines[i + 1].strip() if code.rstrip().endswith("{") and i + 1 < len(lines) else ""
            if not any("SAFETY:" in c for c in above) and not inside.startswith("// SAFETY:"):
                what = "unsafe impl" if IMPL.search(code) else "unsafe block"
                problems.append(f"{rel}:{i + 1}: {what} without a `// SAFETY:` comment directly above it "
                                "or on its first line")
        if FN.search(code):
            if not any(re.match(r"///\s*#\s*Safety\b", c) for c in above):
                problems.append(f"{rel}:{i + 1}: unsafe fn without a `# Safety` section in its doc comment")
    return problems


def main():
    src = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent / "src")
    problems = []
    files = sorted(src.rglob("*.rs"))
    for f in files:
        problems += check_file(f, str(f.relative_to(src.parent)))
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} undocumented unsafe item(s)")
        return 1
    print(f"every unsafe block, impl and fn in {len(files)} files is documented")
    return 0


if __name__ == "__main__":
    sys.exit(main())
