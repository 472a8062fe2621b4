#!/usr/bin/env python3
"""The SQL test runner's own test (specs/014-test-runner.md): the runner must pass every file
under pass/ and fail every file under fail/, each for the reason it states.

Each file declares what must happen in a header comment:
    # selftest: passes[, bugs=N][, skipped=N]     it passes with N known bugs / skipped records
    # selftest: fails at LINE: TEXT               it fails at LINE with TEXT in the report
No extension is needed: `require acl` is given a path that does not exist (a file that
requires it must fail). Run: python test/runner_selftest/selftest.py   (exit 1 on a mismatch)
"""
import contextlib
import io
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import runner  # noqa: E402

NO_EXTENSION = str(HERE / "no-such-extension.duckdb_extension")
DECLARED = re.compile(r"^# selftest: (passes(?P<counts>(, \w+=\d+)*)|fails at (?P<line>\d+): (?P<text>.+))$", re.M)


def check_file(path):
    """None if the runner did what the file declares, else what went wrong."""
    text = path.read_text(encoding="utf-8")
    declared = DECLARED.search(text)
    if not declared:
        return "no `# selftest:` line"
    outcome = runner.run_file(str(path), path.name, NO_EXTENSION, False)
    if declared["line"]:
        if outcome.status != "fail":
            return f"passed, but must fail at line {declared['line']}: {declared['text']}"
        where = f"{path.name}:{declared['line']}: "
        if not outcome.detail.startswith(where) or declared["text"] not in outcome.detail:
            return f"failed for another reason than {where}{declared['text']}:\n{outcome.detail}"
        return None
    if outcome.status != "pass":
        return f"must pass, failed:\n{outcome.detail}"
    counts = dict(kv.split("=") for kv in declared["counts"].split(", ")[1:])
    got = {"bugs": len(outcome.bugs), "skipped": outcome.skipped}
    for key, value in got.items():
        if int(counts.get(key, 0)) != value:
            return f"passed with {key}={value}, declared {counts.get(key, 0)}"
    return None


def check_summary():
    """main(): known bugs listed and counted in the summary line; any failed file exits 1."""
    problems = []
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = runner.main(["--extension", NO_EXTENSION, str(HERE / "pass")])
    lines = out.getvalue().splitlines()
    if rc != 0 or lines[-1] != "1 passed, 0 failed, 1 known bug, 2 records skipped":
        problems.append(f"summary of pass/: exit {rc}, last line {lines[-1]!r}")
    if not any(line.startswith("BUG  ") and "all_records.test:" in line for line in lines):
        problems.append("the known bug is not listed:\n" + out.getvalue())
    with contextlib.redirect_stdout(io.StringIO()):
        rc = runner.main(["--extension", NO_EXTENSION, str(HERE / "pass"), str(HERE / "fail" / "bug_now_passes.test")])
    if rc != 1:
        problems.append(f"a failing file exited {rc}, not 1")
    return problems


def main():
    files = sorted(HERE.glob("pass/*.test")) + sorted(HERE.glob("fail/*.test"))
    problems = [f"{f.relative_to(HERE)}: {p}" for f in files if (p := check_file(f))]
    problems += check_summary()
    for p in problems:
        print(f"SELFTEST FAIL {p}")
    print(f"runner self-test: {len(files)} files, {len(problems)} problems")
    return 1 if problems or not files else 0


if __name__ == "__main__":
    sys.exit(main())
