"""Plan shapes (issue 14, item 3): the physical plan of a statement, reduced to what decides its
speed, and a comparer that says precisely where two shapes differ.

Where the plan comes from: `ACL ROLE "r" EXPLAIN <query>` is admitted when the role holds
`explain` on the catalogs it touches and shows DuckDB's physical plan of the rewritten statement,
but only as the boxed text tree: `EXPLAIN (FORMAT json)` is refused under a principal (spec 005).
The same physical plan, as JSON, is what DuckDB's profiler records for the statement it ran
(`SET enable_profiling = 'no_output'`, then `get_profiling_information(format='json')`), for a
prefixed statement (the rewrite) as for a plain one; `explain_agrees` checks that the principal's
EXPLAIN text shows the same scans and joins as that profile.

A shape keeps, per operator: its type; for a join its join type and conditions; for a scan the
table it reads, its pushed filters and its dynamic (join) filters; for a FILTER its expression.
It drops projections (the rewrite reads the slice's column too), estimated and actual
cardinalities and timings, positional references (`#3`), which projections renumber, and the
values in a join filter's IN list (their order is a hash table's).
"""
import difflib
import json
import re

SKIP = {"PROJECTION", "RESULT_COLLECTOR"}


def _list(v):
    if v is None:
        return []
    return [v] if isinstance(v, str) else list(v)


def _node(op):
    kind = op.get("type") or op.get("operator_type") or op.get("name", "?")
    info = op.get("extra_info") or {}
    node = {"op": kind}
    if "Join Type" in info:
        node["join"] = info["Join Type"]
        node["on"] = sorted(re.sub(r"#\d+", "#", c) for c in _list(info.get("Conditions")))
    if "Table" in info:
        node["table"] = info["Table"]
        node["filters"] = sorted(_list(info.get("Filters")))
        # a join filter's value list is the build side's keys: the same data gives the same list,
        # but its order is the hash table's; the column and the kind of filter are what matter
        node["dynamic"] = sorted(re.sub(r"IN \([^()]*\)", "IN (...)", f) for f in _list(info.get("Dynamic Filters")))
    if kind == "FILTER":
        node["expr"] = sorted(_list(info.get("Expression")))
    if kind == "TOP_N":
        node["top"] = info.get("Top")
    return node


def shape(op):
    """The normalised tree of a profiler operator: (node, [children]), projections spliced out."""
    kids = [s for c in op.get("children", []) for s in _spliced(c)]
    return (_node(op), kids)


def _spliced(op):
    if (op.get("type") or "") in SKIP:
        return [s for c in op.get("children", []) for s in _spliced(c)]
    return [shape(op)]


def plan_of(con, sql):
    """Runs `sql` on `con` with the profiler on and returns the shape of the plan it ran."""
    con.execute("SET enable_profiling = 'no_output'")
    try:
        con.execute(sql).fetchall()
        info = json.loads(con.get_profiling_information(format="json"))
    finally:
        con.execute("RESET enable_profiling")
    ops = info["operator"] if isinstance(info["operator"], list) else [info["operator"]]
    roots = [s for op in ops for s in _spliced(op)]
    assert len(roots) == 1, f"expected one plan root, got {len(roots)}"
    return roots[0]


def render(tree, depth=0):
    """The shape as indented lines, one operator per line."""
    node, kids = tree
    extra = "  ".join(f"{k}={v}" for k, v in node.items() if k != "op" and v not in ([], None))
    lines = ["  " * depth + node["op"] + (f"  {extra}" if extra else "")]
    for k in kids:
        lines += render(k, depth + 1)
    return lines


def _walk(tree, path="", out=None):
    out = [] if out is None else out
    node, kids = tree
    out.append((path or "/", node))
    for i, k in enumerate(kids):
        _walk(k, f"{path}/{node['op']}[{i}]", out)
    return out


def scans(tree):
    return [n for _, n in _walk(tree) if "table" in n]


def join_order(tree):
    """The tables in the order the plan's leaves read them (probe side first, as DuckDB prints)."""
    return [n["table"] for n in scans(tree)]


def differences(acl, native):
    """Every difference between the principal's plan shape and the hand-written one, as lines;
    empty when the shapes are the same."""
    if acl == native:
        return []
    out = []
    ja, jn = join_order(acl), join_order(native)
    if ja != jn:
        out.append(f"join order: principal {ja} vs hand-written {jn}")
    sa, sn = scans(acl), scans(native)
    for a, n in zip(sa, sn):
        if a["table"] == n["table"]:
            for key, label in (("filters", "filters pushed into the scan"), ("dynamic", "join filters on the scan")):
                if a[key] != n[key]:
                    out.append(f"{a['table']}: {label}: principal {a[key]} vs hand-written {n[key]}")
    fa = [n["expr"] for _, n in _walk(acl) if n["op"] == "FILTER"]
    fn = [n["expr"] for _, n in _walk(native) if n["op"] == "FILTER"]
    if fa != fn:
        out.append(f"filters above the scans: principal {fa} vs hand-written {fn}")
    oa = [(p.count("/"), n["op"], n.get("join")) for p, n in _walk(acl) if "table" not in n and n["op"] != "FILTER"]
    on = [(p.count("/"), n["op"], n.get("join")) for p, n in _walk(native) if "table" not in n and n["op"] != "FILTER"]
    if oa != on:
        out.append("operators (depth, type, join): principal "
                   f"{[o[1:] for o in oa]} vs hand-written {[o[1:] for o in on]}")
    diff = list(difflib.unified_diff(render(native), render(acl), "hand-written", "principal", n=99, lineterm=""))
    out.append("plan shapes (- hand-written, + principal):\n" + "\n".join(diff[2:]))
    return out


def explain_agrees(explain_text, tree):
    """The principal's EXPLAIN text names the same tables, as many times, and as many hash joins
    as the profiled shape: the profile is the plan EXPLAIN shows."""
    tables = sorted(re.findall(r"Table: ([\w.]+)", explain_text))
    joins = explain_text.count("Hash Join")
    want_joins = sum(1 for _, n in _walk(tree) if n["op"] == "HASH_JOIN")
    return tables == sorted(join_order(tree)) and joins == want_joins
