#!/usr/bin/env python3
"""Fails when the crate's top-level modules import each other against the layer order (issue 11).

Reads every path into another top-level module: `crate::x::…` in `use` lines (groups like
`use crate::{a::b, c}` included) and in expressions, and `super::…` chains that climb out of a
top-level module. Test code counts too (`#[cfg(test)]` modules, inline or in their own files,
and other `#[cfg(test)]` items). Comments and string literals are ignored.

Fails (exit 1) on
- any cycle between top-level modules (production and test code together), and
- any edge against LAYERS (lowest first): a module may import modules of lower layers, and
  modules of its own layer only where the layer is marked open. A test-only edge against the
  order is accepted only if TEST_ONLY_EDGES names it (and then only from test code).
Modules not in LAYERS (a new module) are held to the cycle check only, and named.

Usage: python3 test/check_layers.py [--edges] [--selftest] [src-dir]
  --edges     also print every edge between top-level modules, with where it is made
  --selftest  run the checker against small generated crates (cycles it must find and not find)
"""
import re
import sys
import tempfile
from pathlib import Path

# Lowest first: (modules, open). In an open layer the modules may import each other (the cycle
# check still applies); in a closed one they may not (admin and rewrite never import each other).
LAYERS = [
    (["error", "bounded", "faults", "prefix", "sqltext", "stack"], True),
    (["policy"], False),
    (["auth"], False),
    (["authz"], False),
    (["admin", "rewrite"], False),
    (["store"], False),
    (["state", "engine"], True),
    # The Flight SQL door (spec 018) runs statements through engine's sessions; ffi implements
    # the node it runs them on. Nothing below it may know it.
    (["door"], False),
    (["ffi"], False),
]

# Edges against the order that test code (only) may make, and why.
TEST_ONLY_EDGES = {
    ("rewrite", "admin"): "rewrite's unit tests write their policies as management statements (admin::parse, admin::apply)",
}

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"


def blank_literals(text: str) -> str:
    """`text` with comments and the contents of string and char literals replaced by spaces
    (offsets and line breaks kept), so only code is searched."""
    out = list(text)
    n = len(text)

    def blank(a, b):
        for k in range(a, b):
            if out[k] != "\n":
                out[k] = " "

    raw = re.compile(r'b?r(#*)"')
    i = 0
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            blank(i, j)
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            blank(i, j)
            i = j
        elif (m := raw.match(text, i)) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            end = text.find('"' + m.group(1), m.end())
            end = n if end < 0 else end
            blank(m.end(), end)
            i = end + 1 + len(m.group(1))
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            blank(i + 1, min(j, n))
            i = j + 1
        elif c == "'":
            if i + 1 < n and text[i + 1] == "\\":  # '\n', '\'', '\u{..}'
                j = text.find("'", i + 3)
                j = n if j < 0 else j
                blank(i + 1, j)
                i = j + 1
            elif i + 2 < n and text[i + 2] == "'":  # 'x' (also '"')
                blank(i + 1, i + 2)
                i += 3
            else:  # a lifetime or a label
                i += 1
        else:
            i += 1
    return "".join(out)


ATTR_TEST = re.compile(r"#\s*\[\s*cfg\s*\(\s*test\s*\)\s*\]")
ATTR_PATH = re.compile(r'#\s*\[\s*path\s*=\s*"')
MOD = re.compile(rf"\bmod\s+({IDENT})\s*([;{{])")
USE = re.compile(r"\buse\s+([^;]*);")
PATH = re.compile(rf"(?<![\w:$])(?:\$?crate|super|self)(?:\s*::\s*{IDENT})+")


def block_end(code: str, start: int) -> int:
    """Where the item starting at `start` ends: its first `;` outside braces, or the brace that
    closes its first `{` (a `use` ends at its `;`)."""
    depth = 0
    is_use = re.match(r"\s*(pub(\s*\([^)]*\))?\s+)?use\b", code[start:]) is not None
    for k in range(start, len(code)):
        ch = code[k]
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0 and not is_use:
                return k + 1
        elif ch == ";" and (depth == 0 or is_use):
            if depth == 0:
                return k + 1
    return len(code)


class File:
    def __init__(self, path: Path, modpath, test: bool):
        self.path, self.modpath, self.test = path, list(modpath), test
        self.text = path.read_text(encoding="utf-8")
        self.code = blank_literals(self.text)
        self.lines = [0] + [m.end() for m in re.finditer("\n", self.code)]
        # (start, end, name) of inline modules and (start, end) of test items
        self.inline, self.tests, self.children = [], [], []
        self._structure()

    def line(self, offset):
        lo, hi = 0, len(self.lines) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.lines[mid] <= offset:
                lo = mid
            else:
                hi = mid - 1
        return lo + 1

    def _attrs_before(self, offset):
        """The attributes directly before `offset` (separated only by whitespace and `pub`)."""
        head = self.code[:offset]
        head = re.sub(r"(pub(\s*\([^)]*\))?\s*)$", "", head.rstrip()).rstrip()
        attrs = []
        while head.endswith("]"):
            depth, k = 0, len(head) - 1
            while k >= 0:
                if head[k] == "]":
                    depth += 1
                elif head[k] == "[":
                    depth -= 1
                    if depth == 0:
                        break
                k -= 1
            if k <= 0 or head[k - 1] != "#":
                break
            attrs.append((k - 1, len(head)))
            head = head[: k - 1].rstrip()
        return attrs

    def _structure(self):
        for m in ATTR_TEST.finditer(self.code):
            self.tests.append((m.start(), block_end(self.code, m.end())))
        for m in MOD.finditer(self.code):
            name, kind = m.group(1), m.group(2)
            attrs = self._attrs_before(m.start())
            test = any(ATTR_TEST.fullmatch(self.code[a:b]) for a, b in attrs)
            path = None
            for a, b in attrs:
                if ATTR_PATH.match(self.code, a):
                    q = self.code.index('"', a) + 1
                    path = self.text[q : self.text.index('"', q)]
            if kind == "{":
                self.inline.append((m.start(), block_end(self.code, m.start()), name))
            else:
                self.children.append((m.start(), name, path, test))

    def scope(self, offset):
        """The module path and whether the code at `offset` is test code."""
        inner = [n for (a, b, n) in sorted(self.inline) if a <= offset < b]
        test = self.test or any(a <= offset < b for (a, b) in self.tests)
        return self.modpath + inner, test

    def child_file(self, offset, name, path):
        inner = [n for (a, b, n) in sorted(self.inline) if a <= offset < b]
        base = self.path.parent
        if path is not None and not inner:
            return base / path
        if self.path.name not in ("mod.rs", "lib.rs", "main.rs"):
            base = base / self.path.stem
        for n in inner:
            base = base / n
        if path is not None:
            return base / path
        for candidate in (base / f"{name}.rs", base / name / "mod.rs"):
            if candidate.exists():
                return candidate
        return None


def use_paths(text):
    """The paths a `use` tree names: `crate::{a::b, c as d}` → [crate,a,b], [crate,c]."""
    tokens = re.findall(rf"::|[{{}},*]|{IDENT}", text)
    pos = 0

    def tree(prefix):
        nonlocal pos
        segs = list(prefix)
        while pos < len(tokens):
            t = tokens[pos]
            if t == "{":
                pos += 1
                paths = []
                while pos < len(tokens) and tokens[pos] != "}":
                    paths += tree(segs)
                    if pos < len(tokens) and tokens[pos] == ",":
                        pos += 1
                pos += 1
                return paths
            if t == "*":
                pos += 1
                return [segs + ["*"]]
            if t == "::":
                pos += 1
                continue
            segs.append(t)
            pos += 1
            if pos < len(tokens) and tokens[pos] == "as":
                pos += 2
            if pos >= len(tokens) or tokens[pos] != "::":
                return [segs]
        return [segs]

    out = []
    while pos < len(tokens):
        out += tree([])
        if pos < len(tokens) and tokens[pos] == ",":
            pos += 1
    return out


def resolve(segs, modpath):
    """The full path `segs` denotes from module `modpath`, or None if it is not the crate's."""
    if not segs:
        return None
    if segs[0] in ("crate", "$crate"):
        return segs[1:]
    if segs[0] not in ("super", "self"):
        return None
    base, k = list(modpath), 0
    while k < len(segs) and segs[k] in ("super", "self"):
        if segs[k] == "super":
            if not base:
                return None
            base.pop()
        k += 1
    return base + segs[k:]


def load(src: Path):
    """Every file of the crate reached from lib.rs, with its module path and test status."""
    files, todo = [], [(src / "lib.rs", [], False)]
    while todo:
        path, modpath, test = todo.pop()
        f = File(path, modpath, test)
        files.append(f)
        for offset, name, attr_path, child_test in f.children:
            child = f.child_file(offset, name, attr_path)
            inner, in_test = f.scope(offset)
            if child is not None and child.exists():
                todo.append((child, inner + [name], test or in_test or child_test))
    return files


def graph(src: Path):
    files = load(src)
    tops = {f.modpath[0] for f in files if len(f.modpath) == 1}
    edges = {m: {} for m in tops}  # a -> b -> [(file, line, text, test)]
    for f in files:
        if not f.modpath:
            continue  # lib.rs only wires modules together
        own = f.modpath[0]
        refs, uses = [], []
        for m in USE.finditer(f.code):
            uses.append((m.start(), m.end()))
            for segs in use_paths(m.group(1)):
                refs.append((m.start(), segs, "use " + "::".join(segs)))
        for m in PATH.finditer(f.code):
            if any(a <= m.start() < b for a, b in uses):
                continue  # read with its use tree above
            segs = [s for s in re.split(r"\s*::\s*", m.group(0))]
            refs.append((m.start(), segs, re.sub(r"\s+", "", m.group(0))))
        for offset, segs, shown in refs:
            modpath, test = f.scope(offset)
            full = resolve(segs, modpath)
            if not full or full[0] not in tops or full[0] == own:
                continue
            edges[own].setdefault(full[0], []).append((f.path, f.line(offset), shown, test))
    return edges


def cycles(edges):
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def rank(module):
    for i, (mods, is_open) in enumerate(LAYERS):
        if module in mods:
            return i, is_open
    return None, False


def against_order(a, b):
    (ra, open_a), (rb, _) = rank(a), rank(b)
    if ra is None or rb is None:
        return False
    return rb > ra or (rb == ra and not open_a)


def where(refs, src, limit=6):
    shown = [f"{p.relative_to(src.parent)}:{line} {text}" + (" (test)" if test else "") for p, line, text, test in refs]
    more = f" … and {len(shown) - limit} more" if len(shown) > limit else ""
    return "\n      ".join(shown[:limit]) + more


def check(src: Path, show_edges=False, out=print):
    edges = graph(src)
    failed = False
    if show_edges:
        for a in sorted(edges):
            for b in sorted(edges[a]):
                out(f"{a} -> {b}:\n      {where(edges[a][b], src, limit=1000)}")
    for comp in cycles(edges):
        failed = True
        out("import cycle between top-level modules: " + " <-> ".join(comp))
        for a in comp:
            for b in sorted(t for t in edges[a] if t in comp):
                mark = " [against the layer order]" if against_order(a, b) else ""
                out(f"  {a} -> {b}{mark}:\n      {where(edges[a][b], src, limit=3)}")
    for a in sorted(edges):
        for b in sorted(edges[a]):
            if not against_order(a, b):
                continue
            refs = edges[a][b]
            prod = [r for r in refs if not r[3]]
            if (a, b) in TEST_ONLY_EDGES and not prod:
                out(f"allowed in test code only: {a} -> {b} ({len(refs)} references): {TEST_ONLY_EDGES[(a, b)]}")
                continue
            failed = True
            bad = prod if (a, b) in TEST_ONLY_EDGES else refs
            out(f"{a} -> {b} is against the layer order ({b} is not below {a}):\n      {where(bad, src)}")
    unknown = sorted(m for m in edges if rank(m)[0] is None)
    if unknown:
        out("not in the layer order (held to the cycle check only): " + ", ".join(unknown))
    if not failed:
        order = " < ".join(("{" + ", ".join(m) + "}") if len(m) > 1 else m[0] for m, _ in LAYERS)
        out(f"no import cycles and no edge against the layer order between {len(edges)} top-level modules ({order})")
    return not failed


def selftest():
    """The checker against small generated crates: what it must find and what it must not."""
    cases = {
        "use group": ({"a/mod.rs": "use crate::{error::E, b::{x, y}};", "b.rs": "use crate::a::Z;"}, True),
        "expression path": ({"a/mod.rs": "fn f() { crate::b::g(); }", "b.rs": "pub fn g() { crate::a::h() }"}, True),
        "super out of a top-level module": ({"a/mod.rs": "mod c;", "a/c.rs": "fn f() { super::super::b::g(); }",
                                             "b.rs": "use crate::a;"}, True),
        "test module in its own file": ({"a/mod.rs": "#[cfg(test)]\nmod tests;", "a/tests.rs": "use crate::b::g;",
                                         "b.rs": "use crate::a;"}, True),
        "#[path] test file": ({"a/x.rs": "#[cfg(test)]\n#[path = \"x_tests.rs\"]\nmod tests;", "a/x_tests.rs": "use super::super::super::b::g;",
                               "a/mod.rs": "mod x;", "b.rs": "use crate::a;"}, True),
        "inline test module": ({"a/mod.rs": "#[cfg(test)]\nmod tests {\n    use crate::b::g;\n}", "b.rs": "use crate::a;"}, True),
        "comments and strings": ({"a/mod.rs": "// crate::b::g\n/* crate::b */ fn f() -> &'static str { \"crate::b::g\" }\n"
                                              "const C: char = '\"'; const S: &str = r#\"crate::b\"#;",
                                  "b.rs": "use crate::a;"}, False),
        "super inside a module": ({"a/mod.rs": "mod c;\nfn g() {}", "a/c.rs": "use super::g;", "b.rs": "use crate::a;"}, False),
        "sibling layer": ({"admin.rs": "use crate::rewrite::x;", "rewrite.rs": ""}, True),
        "allowed test edge": ({"rewrite.rs": "#[cfg(test)]\nmod t {\n    use crate::admin::parse;\n}", "admin.rs": ""}, False),
        "allowed edge, not in a test": ({"rewrite.rs": "use crate::admin::parse;", "admin.rs": ""}, True),
        "downward": ({"admin.rs": "use crate::{policy::P, auth};", "policy.rs": "use crate::sqltext::q;", "auth.rs": "",
                      "sqltext.rs": ""}, False),
        "upward": ({"policy.rs": "fn f() { crate::rewrite::g() }", "rewrite.rs": ""}, True),
    }
    ok = True
    for name, (sources, must_fail) in cases.items():
        with tempfile.TemporaryDirectory() as d:
            src = Path(d) / "src"
            tops = sorted({p.split("/")[0].removesuffix(".rs") for p in sources})
            files = {"lib.rs": "".join(f"mod {t};\n" for t in tops), **sources}
            for rel, text in files.items():
                (src / rel).parent.mkdir(parents=True, exist_ok=True)
                (src / rel).write_text(text)
            lines = []
            failed = not check(src, out=lines.append)
            if failed != must_fail:
                ok = False
                print(f"selftest {name}: expected {'a failure' if must_fail else 'a pass'}, got:\n  " + "\n  ".join(lines))
    print("selftest " + ("passed" if ok else "FAILED") + f" ({len(cases)} cases)")
    return ok


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if "--selftest" in sys.argv and not selftest():
        return 1
    src = Path(args[0]) if args else Path(__file__).resolve().parent.parent / "src"
    return 0 if check(src, show_edges="--edges" in sys.argv) else 1


if __name__ == "__main__":
    sys.exit(main())
