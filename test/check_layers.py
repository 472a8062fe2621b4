#!/usr/bin/env python3
"""Fails when the crate's top-level modules import each other in a cycle (issue 11).

Reads every `crate::<module>` reference in src/ (use lines and paths alike), builds the graph
"top-level module A refers to top-level module B", and prints each strongly connected component
with more than one module (or a module that is part of a cycle). Exit 1 on any cycle.
Usage: python3 test/check_layers.py [src-dir]
"""
import re
import sys
from pathlib import Path

REF = re.compile(r"\bcrate::([a-z_][a-z0-9_]*)")


def top_module(src: Path, path: Path) -> str:
    rel = path.relative_to(src)
    return rel.parts[0].removesuffix(".rs") if len(rel.parts) > 1 else rel.stem


def graph(src: Path):
    edges = {}
    for f in src.rglob("*.rs"):
        m = top_module(src, f)
        if m in ("lib", "main"):
            continue
        text = f.read_text(encoding="utf-8")
        # comments name modules without depending on them
        code = "\n".join(line.split("//")[0] for line in text.splitlines())
        for target in REF.findall(code):
            if target != m:
                edges.setdefault(m, set()).add(target)
        edges.setdefault(m, set())
    return edges


def cycles(edges):
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in edges:
                continue
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


def main():
    src = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent / "src")
    edges = graph(src)
    found = cycles(edges)
    for comp in found:
        inner = {m: sorted(t for t in edges[m] if t in comp) for m in comp}
        print("import cycle between top-level modules: " + ", ".join(f"{m} -> {inner[m]}" for m in comp))
    if found:
        return 1
    print(f"no import cycles between {len(edges)} top-level modules")
    return 0


if __name__ == "__main__":
    sys.exit(main())
