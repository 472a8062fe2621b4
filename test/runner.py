#!/usr/bin/env python3
"""SQLLogicTest runner for the duckdb-acl extension (needs only `duckdb` + stdlib).

Usage:
    python test/runner.py --extension PATH [--verbose] [--filter SUBSTR] [paths...]

Paths are .test files or directories (searched recursively for *.test, sorted);
the default is test/sql under the repository root.  The last line printed is
`N passed, N failed` (plus `, N known bugs` and `, N records skipped` when there
are any; each known bug is listed above it); the exit code is 1 if any file
failed or no file ran, else 0.  Each file runs against its own fresh in-memory
database and stops at its first failing record.

The runner is strict, so that a record cannot pass for the wrong reason
(specs/014-test-runner.md):
  - a `statement error` names the error it expects: a `----` section whose text (or
    `<REGEX>:`) does not also accept a generic message such as `acl: x`,
    `Permission Error: acl: x` or `Parser Error: x` (see GENERIC); `<!REGEX>:` alone
    is not accepted there (it says only what must be absent);
  - an error containing `acl: internal error` or `acl: could not parse` satisfies a
    record only if the record's expected text names it (`internal error`,
    `could not parse`): the second check and our parser are not a clean refusal
    of something else;
  - an unknown `require`, an unknown `mode`, and a `mode skip` never closed by
    `mode unskip` fail the file;
  - `bug REASON` before a record marks a known bug: the record must fail (it is
    counted and listed), and the file fails once it passes.

Supported directives (DuckDB's sqllogictest dialect; records are separated by
blank lines, lines starting with `#` between records are comments):
    require acl                load the extension (--extension) now and again after
                               every later load/restart; a missing file fails the file
    require skip_reload|notwindows   accepted, no effect
    require <anything else>    fails the file (a misspelt require must not skip it)
    load [PATH] [readonly]     reopen the database at PATH (fresh :memory: if none)
    restart / reconnect        reopen the same database / new default connection
    statement ok|error|maybe [CONNECTION]
                               SQL lines; for error a `----` followed by text the error
                               message must contain (required, see above), optional for
                               maybe.  Text starting with `<REGEX>:` (re.search) or
                               `<!REGEX>:` (must not match; not alone for error)
    query TYPES [nosort|rowsort|valuesort] [CONNECTION]
                               SQL lines, `----`, expected rows (values separated by
                               TAB, or one value per line); NULL, (empty), true/false,
                               `<REGEX>:`/`<!REGEX>:` values, `N values hashing to MD5`
    onlyif SYSTEM / skipif SYSTEM    condition for the next record (SYSTEM duckdb)
    bug REASON                 the next statement/query record is a known bug: it must
                               fail (counted as a known bug), or the file fails
    mode skip / mode unskip    skip the records in between (counted); other modes fail
    loop VAR START END / foreach VAR V1 V2 ... / endloop   (concurrent* run serially)
    halt                       stop the file here (it passes)
Substitutions: ${VAR} (loop variables), __TEST_DIR__ (per-file temp dir),
${ACL_EXTENSION} (absolute extension path), __WORKING_DIRECTORY__ (cwd).
A named CONNECTION is created on first use as another connection to the same
database (`cursor()`).  A record's SQL is passed whole to one `execute()` call.
"""
import argparse
import datetime
import decimal
import hashlib
import math
import os
import re
import shutil
import struct
import sys
import tempfile
import time
import traceback
from pathlib import Path

import duckdb

SORTS = ("nosort", "rowsort", "valuesort")
LOOP_CMDS = ("loop", "foreach", "concurrentloop", "concurrentforeach")
SIMPLE_CMDS = ("require", "load", "restart", "reconnect", "mode", "halt")
HASH_RE = re.compile(r"^\d+ values hashing to [0-9a-f]{32}$")
PYTZ_MSG = "Required module 'pytz'"
KNOWN_REQUIRES = ("skip_reload", "notwindows")  # besides the extension itself
MODES = ("skip", "unskip")
# What a `statement error` expectation must not accept: error messages that say nothing but
# their kind (\x00 stands for whatever detail follows). An expectation that any of these would
# satisfy does not name the refusal it is about.
GENERIC = [""] + [f"{kind}Error: acl: \x00" for kind in (
    "", "Permission ", "Parser ", "Invalid Input ", "Invalid ", "Binder ", "Catalog ", "Conversion ",
    "Constraint ", "Transaction ", "Not implemented ", "Out of Range ", "Dependency ", "IO ",
    "Internal ", "INTERNAL ", "Syntax ", "Unknown ")] + ["acl: \x00", "acl:", "Error: \x00"]
# Messages a record accepts only when its expected text names them: our parser's refusal and a
# failure of the second check are not a clean refusal by the check a record is about.
MUST_BE_NAMED = (("acl: internal error", "internal error"), ("acl: could not parse", "could not parse"))


class Failure(Exception):
    def __init__(self, line, message, sql=None, expected=None, actual=None):
        super().__init__(message)
        self.line, self.message, self.sql, self.expected, self.actual = line, message, sql, expected, actual


class Halt(Exception):
    """`halt`: stop the file here; it passes."""


class Record:
    def __init__(self, line, words, sql="", expected=None, conds=(), bug=None):
        self.line, self.cmd, self.args = line, words[0], words[1:]
        self.sql, self.expected, self.conds, self.bug = sql, expected, list(conds), bug


class Loop:
    def __init__(self, line, var, values):
        self.line, self.var, self.values, self.body = line, var, values, []


def check_expectation(lineno, words, expected):
    """A `statement error` must name the error it expects (see GENERIC)."""
    if len(words) < 2 or words[1] != "error":
        return
    if expected is None or not "\n".join(expected).strip():
        raise Failure(lineno, "statement error without an expected message: name the error it expects")
    want = "\n".join(expected)
    if want.startswith("<!REGEX>:"):
        raise Failure(lineno, "statement error with only <!REGEX>: name the error it expects "
                      "(a <REGEX>: with a negative lookahead can say both)")
    if want.startswith("<REGEX>:"):
        try:
            pattern = re.compile(want[8:], re.S)
        except re.error as e:
            raise Failure(lineno, f"invalid <REGEX>: {e}") from None
        weak = next((g for g in GENERIC if pattern.search(g)), None)
    else:
        weak = next((g for g in GENERIC if want in g), None)
    if weak is not None:
        raise Failure(lineno, "statement error expectation too weak: it accepts the generic message "
                      f"{weak.replace(chr(0), '…')!r}; name the error it expects", None, [want])


def parse(text):
    """Turn the file text into a list of Record/Loop nodes (and check what can be checked
    without running anything: expectations, the bug directive, mode skip closed)."""
    lines, root, stack, conds, i = text.replace("\r\n", "\n").split("\n"), [], [], [], 0
    bug, skip_open = None, None
    while i < len(lines):
        s, lineno = lines[i].strip(), i + 1
        i += 1
        if not s or s.startswith("#"):
            continue
        words = s.split()
        cmd, body = words[0], stack[-1].body if stack else root
        if cmd in ("onlyif", "skipif"):
            conds.append((cmd, words[1] if len(words) > 1 else ""))
            continue
        if cmd == "bug":
            reason = s[len("bug"):].strip()
            if not reason:
                raise Failure(lineno, "bug needs a reason: `bug <why this record fails>`")
            if bug is not None:
                raise Failure(lineno, "two bug lines before one record")
            bug = (lineno, reason)
            continue
        if bug is not None and cmd not in ("statement", "query"):
            raise Failure(bug[0], f"bug must be followed by a statement or query record, not {cmd}")
        if cmd in ("statement", "query"):
            block = []
            while i < len(lines) and lines[i].strip():
                block.append(lines[i].rstrip("\r"))
                i += 1
            k = next((n for n, line in enumerate(block) if line.strip() == "----"), None)
            block, expected = (block, None) if k is None else (block[:k], block[k + 1:])
            if cmd == "statement" and skip_open is None:  # a skipped record is checked once it runs
                check_expectation(lineno, words, expected)
            body.append(Record(lineno, words, "\n".join(block), expected, conds, bug and bug[1]))
            bug = None
        elif cmd in LOOP_CMDS:
            is_range = "loop" in cmd
            if len(words) < 3 or (is_range and (len(words) != 4 or not all(
                    re.fullmatch(r"-?\d+", w) for w in words[2:]))):
                raise Failure(lineno, f"malformed loop header: {s}")
            values = [str(v) for v in range(int(words[2]), int(words[3]))] if is_range else words[2:]
            body.append(Loop(lineno, words[1], values))
            stack.append(body[-1])
        elif cmd == "endloop":
            if not stack:
                raise Failure(lineno, "endloop without loop")
            stack.pop()
        elif cmd in SIMPLE_CMDS:
            if cmd == "mode":
                mode = words[1] if len(words) > 1 else ""
                if mode not in MODES:
                    raise Failure(lineno, f"unknown mode {mode!r} (the runner knows {', '.join(MODES)})")
                skip_open = lineno if mode == "skip" else None
            body.append(Record(lineno, words, conds=conds))
        else:
            raise Failure(lineno, f"unknown directive: {s}")
        conds = []
    if bug is not None:
        raise Failure(bug[0], "bug at the end of the file: it must be followed by a record")
    if stack:
        raise Failure(stack[-1].line, "loop without endloop")
    if skip_open is not None:
        raise Failure(skip_open, "mode skip is never closed by mode unskip: the rest of the file would not run")
    return root


def render(v, typ="", top=True):
    """Render a Python value the way DuckDB's sqllogictest prints it."""
    if v is None:
        return "NULL"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        if top:
            return v or "(empty)"
        if v == "" or v.upper() == "NULL" or v != v.strip() or any(c in v for c in ",'\"[]{}:=\\()"):
            return "'" + v.replace("\\", "\\\\").replace("'", "\\'") + "'"
        return v
    if isinstance(v, float):
        if "FLOAT" in typ and "DOUBLE" not in typ:  # shortest text that round-trips as float32
            for p in range(1, 10):
                if struct.pack("<f", float(f"{v:.{p}g}")) == struct.pack("<f", v):
                    return repr(float(f"{v:.{p}g}"))
        return repr(v)
    if isinstance(v, (bytes, bytearray, memoryview)):
        return "".join(chr(b) if 32 <= b < 127 else f"\\x{b:02X}" for b in bytes(v))
    if isinstance(v, (list, tuple)):  # LIST and ARRAY
        return "[" + ", ".join(render(x, typ, False) for x in v) + "]"
    if isinstance(v, dict):  # MAP or STRUCT: guess from the column type and the keys
        if "MAP(" in typ and ("STRUCT(" not in typ or not all(isinstance(k, str) for k in v)):
            return "{" + ", ".join(f"{render(k, typ, False)}={render(x, typ, False)}" for k, x in v.items()) + "}"
        return "{" + ", ".join(f"'{k}': {render(x, typ, False)}" for k, x in v.items()) + "}"
    if isinstance(v, datetime.timedelta):  # months arrive folded into 30-day units
        sign, us = ("-" if v < datetime.timedelta(0) else ""), abs(v) // datetime.timedelta(microseconds=1)
        days, us = divmod(us, 86400 * 10**6)
        h, m, sec, frac = us // 3600_000_000, us // 60_000_000 % 60, us // 10**6 % 60, us % 10**6
        t = f"{sign}{h:02d}:{m:02d}:{sec:02d}" + (f".{frac:06d}".rstrip("0") if frac else "")
        d = f"{sign}{days} day{'s' if days != 1 else ''}" if days else ""
        return f"{d} {t if us else ''}".strip() or t
    s = str(v)  # datetime/time: DuckDB trims trailing zeros of fractional seconds
    return s.rstrip("0") if hasattr(v, "isoformat") and re.search(r"\.\d+$", s) else s


def values_equal(exp, value, actual):
    """Compare one expected string with one actual value and its rendering."""
    if exp.startswith(("<REGEX>:", "<!REGEX>:")):
        neg = exp.startswith("<!")
        return (re.fullmatch(exp[8 + neg:], actual, re.S) is None) == neg
    if exp == actual:
        return True
    if isinstance(value, bool):
        return exp.lower() == actual
    try:
        if isinstance(value, float):
            e = float(exp)
            if math.isnan(e) or math.isnan(value) or math.isinf(e) or math.isinf(value):
                return repr(e) == repr(value)
            return abs(value - e) <= abs(e) * 0.01 + 1e-8  # DuckDB's ApproxEqual
        if isinstance(value, (int, decimal.Decimal)):
            return decimal.Decimal(exp) == decimal.Decimal(value)
    except (ValueError, ArithmeticError):
        pass
    return False


def regroup(values, n):
    return [values[i:i + n] for i in range(0, len(values), n)]


class FileRun:
    def __init__(self, path, ext_path, verbose):
        self.path, self.ext_path, self.verbose = path, ext_path, verbose
        self.tmpdir = tempfile.mkdtemp(prefix="acl-slt-")
        self.db = self.default = None
        self.cursors, self.ext_loaded, self.skipping = {}, False, False
        self.bugs, self.skipped = [], 0  # (line, reason, how it failed); records skipped by mode skip
        self.ext_names = {"acl", os.path.basename(ext_path).split(".")[0]}
        self.open(":memory:", False)

    def sub(self, text, env):
        for k, v in env.items():
            text = text.replace("${" + k + "}", v)
        text = text.replace("${ACL_EXTENSION}", self.ext_path).replace("__WORKING_DIRECTORY__", os.getcwd())
        return text.replace("__TEST_DIR__", self.tmpdir)

    def close(self):
        for c in [*self.cursors.values(), self.default, self.db]:
            try:
                c is not None and c.close()
            except Exception:
                pass
        self.cursors, self.db, self.default = {}, None, None

    def open(self, db_path, read_only, line=0):
        self.close()
        self.db_path, self.read_only = db_path, read_only
        try:
            self.db = duckdb.connect(db_path, read_only=read_only,
                                     config={"allow_unsigned_extensions": "true"})
        except duckdb.Error as e:
            raise Failure(line, f"cannot open database {db_path}: {e}") from None
        self.default = self.db.cursor()
        if self.ext_loaded:
            self.load_extension(line)

    def load_extension(self, line):
        if not os.path.isfile(self.ext_path):
            raise Failure(line, f"require acl: extension file not found: {self.ext_path}")
        sql = "LOAD '" + self.ext_path.replace("'", "''") + "'"
        try:
            self.default.execute(sql)
        except Exception as e:
            raise Failure(line, f"require acl: LOAD failed: {type(e).__name__}: {e}", sql) from None
        self.ext_loaded = True

    def conn(self, name):
        if name is not None and name not in self.cursors:
            self.cursors[name] = self.db.cursor()
        return self.default if name is None else self.cursors[name]

    def run(self, nodes, env):
        for node in nodes:
            if isinstance(node, Loop):
                for value in node.values:
                    self.run(node.body, {**env, node.var: value})
            elif node.bug is None:
                self.run_record(node, env)
            else:
                self.run_bug(node, env)

    def run_bug(self, rec, env):
        """A known bug: the record must fail; once it passes, the `bug` line must go."""
        try:
            ran = self.run_record(rec, env)
        except Failure as f:
            self.bugs.append((rec.line, rec.bug, f.message))
            return
        if ran:
            raise Failure(rec.line, f"known bug now passes (remove its `bug` line): {rec.bug}", rec.sql)

    def run_record(self, rec, env):
        """Run one record; return whether it ran (False: skipped by a mode or a condition)."""
        args = [self.sub(a, env) for a in rec.args]
        if rec.cmd == "mode":
            self.skipping = args[0] == "skip"
            return True
        if self.skipping or any((kind == "onlyif") != (system == "duckdb") for kind, system in rec.conds):
            self.skipped += rec.cmd in ("statement", "query") and self.skipping
            return False
        if self.verbose:
            print(f"  {self.path}:{rec.line}: {' '.join([rec.cmd, *args])}")
        if rec.cmd == "halt":
            raise Halt()
        if rec.cmd == "require":
            name = args[0] if args else ""
            if name in self.ext_names:
                self.load_extension(rec.line)
            elif name not in KNOWN_REQUIRES:
                raise Failure(rec.line, f"unknown require {name!r}: the runner provides only acl and "
                              f"{', '.join(KNOWN_REQUIRES)} (a misspelt require must not skip the file)")
        elif rec.cmd == "load":
            self.open(args[0] if args else ":memory:", "readonly" in args[1:], rec.line)
        elif rec.cmd == "restart":
            self.open(self.db_path, self.read_only, rec.line)
        elif rec.cmd == "reconnect":
            self.default.close()
            self.default = self.db.cursor()
        else:
            expected = [self.sub(line, env) for line in rec.expected or []]
            run = self.run_statement if rec.cmd == "statement" else self.run_query
            run(rec, args, self.sub(rec.sql, env), expected)
        return True

    def execute(self, con, sql, rec, fetch_needed):
        """Run SQL and fetch (errors may surface while fetching); return (types, rows)."""
        try:
            res = con.execute(sql)
            if res is None or res.description is None:
                return [], []
            return [str(d[1]) for d in res.description], res.fetchall()
        except duckdb.Error as e:
            if PYTZ_MSG not in str(e):
                raise
            if not fetch_needed:  # the statement ran; only the Python conversion failed
                return [], []
            raise Failure(rec.line, "TIMESTAMPTZ results need the pytz module; "
                          "cast such columns to VARCHAR in the test", sql) from None
        except Exception as e:
            raise Failure(rec.line, f"Python exception: {type(e).__name__}: {e}", sql) from None

    def run_statement(self, rec, args, sql, expected):
        mode = args[0] if args else ""
        if mode not in ("ok", "error", "maybe"):
            raise Failure(rec.line, f"statement must be ok/error/maybe, got {mode!r}", sql)
        if mode == "ok" and rec.expected is not None:
            raise Failure(rec.line, "statement ok must not have a ---- section", sql)
        try:
            self.execute(self.conn(args[1] if len(args) > 1 else None), sql, rec, False)
        except duckdb.Error as e:
            if mode == "ok":
                raise Failure(rec.line, f"statement failed: {type(e).__name__}", sql, None, [str(e)]) from None
            want, msg = "\n".join(expected), str(e)
            if want.startswith(("<REGEX>:", "<!REGEX>:")):
                neg = want.startswith("<!")
                ok = (re.search(want[8 + neg:], msg, re.S) is None) == neg
            else:
                ok = want in msg
            if not ok:
                raise Failure(rec.line, "error message mismatch", sql, [want], [msg]) from None
            for marker, name in MUST_BE_NAMED:
                if marker in msg and name not in want:
                    raise Failure(rec.line, f"the error is `{marker}`, which this record does not name: "
                                  f"it passes for the wrong reason (expect `{name}` explicitly)",
                                  sql, [want or "<any error>"], [msg]) from None
            return
        if mode == "error":
            raise Failure(rec.line, "statement succeeded but an error was expected", sql,
                          expected or ["<any error>"], ["<success>"])

    def run_query(self, rec, args, sql, expected):
        if not args:
            raise Failure(rec.line, "query needs a column type string", sql)
        types, rest = args[0], args[1:]
        sort = rest.pop(0) if rest and rest[0] in SORTS else "nosort"
        try:
            col_types, rows = self.execute(self.conn(rest[0] if rest else None), sql, rec, True)
        except duckdb.Error as e:
            raise Failure(rec.line, f"query failed: {type(e).__name__}", sql, expected, [str(e)]) from None
        ncols = len(types)
        if len(col_types) != ncols:
            raise Failure(rec.line, f"wrong column count: query declares {ncols} ({types}), "
                          f"result has {len(col_types)}", sql)
        actual = [[(v, render(v, t)) for v, t in zip(row, col_types)] for row in rows]
        exp_rows = [line.split("\t") for line in expected]
        if ncols > 1 and exp_rows and all(len(r) == 1 for r in exp_rows) and len(exp_rows) % ncols == 0:
            exp_rows = regroup([r[0] for r in exp_rows], ncols)  # one value per line
        if sort == "rowsort":
            actual.sort(key=lambda r: [s for _, s in r])
            exp_rows.sort()
        elif sort == "valuesort":
            actual = regroup(sorted((c for r in actual for c in r), key=lambda c: c[1]), ncols)
            exp_rows = regroup(sorted(v for r in exp_rows for v in r), ncols)
        shown = ["\t".join(s for _, s in r) for r in actual]
        if len(expected) == 1 and HASH_RE.match(expected[0]):
            md5 = hashlib.md5("".join(s + "\n" for r in actual for _, s in r).encode()).hexdigest()
            got = f"{sum(len(r) for r in actual)} values hashing to {md5}"
            if got != expected[0]:
                raise Failure(rec.line, "result hash mismatch", sql, expected, [got])
            return
        problem = f"expected {len(exp_rows)} rows, got {len(actual)}" if len(exp_rows) != len(actual) else None
        for i, (er, ar) in enumerate(zip(exp_rows, actual)):
            if problem:
                break
            if len(er) != len(ar):
                problem = f"row {i + 1}: expected {len(er)} values, got {len(ar)}"
            elif not all(values_equal(e, v, s) for e, (v, s) in zip(er, ar)):
                problem = f"row {i + 1} differs"
        if problem:
            raise Failure(rec.line, "query result mismatch: " + problem, sql,
                          ["\t".join(r) for r in exp_rows], shown)


def format_failure(display, f):
    out = [f"{display}:{f.line}: {f.message}"]
    for title, lines in (("SQL", f.sql.splitlines() if f.sql else None), ("Expected", f.expected),
                         ("Actual", f.actual)):
        if lines is not None:
            out.append(f"  {title}:")
            out.extend("    " + line for text in (lines or ["<nothing>"]) for line in str(text).split("\n"))
    return "\n".join(out)


class Outcome:
    """How one file went: 'pass' or 'fail' (with the report), its known bugs and skipped records."""

    def __init__(self, status, detail=None, bugs=(), skipped=0):
        self.status, self.detail, self.bugs, self.skipped = status, detail, list(bugs), skipped


def run_file(path, display, ext_path, verbose):
    """Run one file; return its Outcome.  Never raises."""
    runner = None
    try:
        nodes = parse(Path(path).read_text(encoding="utf-8"))
        runner = FileRun(display, ext_path, verbose)
        try:
            runner.run(nodes, {})
        except Halt:
            pass
        return Outcome("pass", None, runner.bugs, runner.skipped)
    except Failure as f:
        return Outcome("fail", format_failure(display, f))
    except Exception:
        return Outcome("fail", f"{display}: runner crashed:\n{traceback.format_exc()}")
    finally:
        if runner is not None:
            runner.close()
            shutil.rmtree(runner.tmpdir, ignore_errors=True)


def collect(paths):
    files, missing = [], []
    for p in map(Path, paths):
        if p.is_dir():
            files.extend(sorted(p.rglob("*.test")))
        elif p.is_file():
            files.append(p)
        else:
            missing.append(str(p))
    seen = set()  # drop duplicates, keep the first occurrence
    return [f for f in files if not (f.resolve() in seen or seen.add(f.resolve()))], missing


def main(argv=None):
    repo = Path(__file__).resolve().parent.parent
    ap = argparse.ArgumentParser(description="Run sqllogictest files against duckdb + the acl extension.")
    ap.add_argument("--extension", required=True, help="path to the built acl .duckdb_extension")
    ap.add_argument("--verbose", action="store_true", help="print every file and record")
    ap.add_argument("--filter", help="only run files whose path contains this substring")
    ap.add_argument("paths", nargs="*", help="test files or directories (default: test/sql)")
    opts = ap.parse_args(argv)
    ext_path = os.path.abspath(opts.extension)
    files, missing = collect(opts.paths or [str(repo / "test" / "sql")])
    files = [f for f in files if not opts.filter or opts.filter in str(f)]
    passed, failed, skipped, bugs = 0, len(missing), 0, []
    for m in missing:
        print(f"FAIL {m}: no such file or directory")
    for f in files:
        display = str(f) if os.path.relpath(f).startswith("..") else os.path.relpath(f)
        start = time.time()
        outcome = run_file(str(f), display, ext_path, opts.verbose)
        bugs.extend((display, *b) for b in outcome.bugs)
        skipped += outcome.skipped
        if outcome.status == "fail":
            failed += 1
            print(f"FAIL {outcome.detail}")
        else:
            passed += 1
            if opts.verbose:
                print(f"PASS {display} ({time.time() - start:.2f}s)")
    for display, line, reason, how in bugs:
        print(f"BUG  {display}:{line}: {reason}" + (f" [{how}]" if opts.verbose else ""))
    if passed + failed == 0:
        print("no test files ran")
    extra = (f", {len(bugs)} known bug{'s' * (len(bugs) != 1)}" if bugs else "") + \
        (f", {skipped} record{'s' * (skipped != 1)} skipped" if skipped else "")
    print(f"{passed} passed, {failed} failed{extra}")
    return 1 if failed or passed + failed == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
