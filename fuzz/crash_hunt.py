#!/usr/bin/env python3
"""Crash hunting against the real extension (issue 31, finding 8): programs of principal DDL and
metadata listings nested in views, CTEs, CTAS, subqueries, prepared statements, relations and
small-stack threads, run in a child process so that a signal is a finding, not the end of the run.

    crash_hunt.py --extension build/release/acl.duckdb_extension [--seconds 45] [--seed N]
    crash_hunt.py --extension … --replay fuzz/artifacts/crash_hunt/<finding>.json

A *program* is a list of steps on a fresh node (an in-memory DuckDB, or files when it restarts);
the grammar is in `gen.py` beside this file. One child process runs program after program and
reports each step before running it; the parent reads the reports. Findings:

- `signal`: the child died by a signal (SIGSEGV, SIGABRT, …) — the host crashed;
- `hang`: no report for `--step-timeout` seconds (killed);
- `internal`: a statement failed with DuckDB's INTERNAL or FATAL error, or the database was
  invalidated (the node is dead for every later statement);
- `listing`: after the program, a principal's plain listing or the gateway's `SELECT 42` failed
  (one principal's objects broke everybody's listing).

A finding is replayed alone in a fresh child, reduced step by step while it still reproduces
(within `--reduce-seconds`), printed, and written to `--out` as JSON and as a stand-alone
`repro_<name>.py`. Exit status 1 on any finding. Regression programs (known crashes) run first.
"""
import argparse
import json
import os
import random
import select
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import crash_gen as gen  # noqa: E402

CHILD = os.path.join(HERE, "crash_child.py")


class Child:
    """One child process running programs; `run` returns (outcome, detail, step index)."""

    def __init__(self, ext, python, step_timeout):
        self.ext, self.python, self.step_timeout = ext, python, step_timeout
        self.proc = None

    def start(self):
        # stderr to a file: a pipe nobody reads would block a child that writes much there
        self.err = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            [self.python, CHILD, self.ext],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.err,
            text=True,
            bufsize=1,
        )
        self.pending = b""

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.proc = None

    def stacks(self):
        """Every thread's stack of a hung child, when gdb is at hand (the end of each)."""
        if not shutil.which("gdb"):
            return ""
        try:
            p = subprocess.run(["gdb", "-p", str(self.proc.pid), "-batch", "-ex", "thread apply all bt 25"],
                               capture_output=True, text=True, timeout=120)
            return "\n".join(l for l in p.stdout.splitlines() if l.startswith(("#", "Thread")))[-6000:]
        except (OSError, subprocess.SubprocessError):
            return ""

    def readline(self):
        """The child's next line ("" at its end, None after `step_timeout` without one). Read
        from the pipe itself: a buffered reader would hold lines that `select` cannot see."""
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.pending:
            ready, _, _ = select.select([fd], [], [], self.step_timeout)
            if not ready:
                return None
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                rest, self.pending = self.pending, b""
                return rest.decode(errors="replace")
            self.pending += chunk
        line, self.pending = self.pending.split(b"\n", 1)
        return line.decode(errors="replace") + "\n"

    def run(self, program):
        """Runs one program. Outcomes: ok, signal, exit, hang, internal, listing."""
        if self.proc is None or self.proc.poll() is not None:
            self.start()
        self.proc.stdin.write(json.dumps(program) + "\n")
        self.proc.stdin.flush()
        step = -1
        while True:
            line = self.readline()
            if line is None:
                stacks = self.stacks()
                self.stop()
                return "hang", f"no report for {self.step_timeout}s\n{stacks}", step
            if not line:
                rc = self.proc.wait()
                self.err.seek(0)
                err = self.err.read()[-2000:].decode(errors="replace")
                self.proc = None
                if rc < 0:
                    return "signal", f"killed by signal {-rc}\n{err}", step
                return "exit", f"exit status {rc}\n{err}", step
            try:
                msg = json.loads(line)
            except ValueError:
                continue  # something DuckDB printed
            if msg[0] == "step":
                step = msg[1]
            elif msg[0] == "finding":
                return msg[1], msg[2], msg[3]
            elif msg[0] == "done":
                return "ok", "", step


def reproduces(child, program, kind):
    got, _, _ = child.run(program)
    return got == kind


def reduce(child, program, kind, step, deadline):
    """The program cut after the failing step, then without each step that is not needed."""
    steps = program["steps"][: step + 1] if step >= 0 else program["steps"]
    cut = dict(program, steps=steps)
    if not reproduces(child, cut, kind):
        return program
    i = len(steps) - 2  # the failing step stays
    while i >= 0 and time.time() < deadline:
        trial = dict(cut, steps=cut["steps"][:i] + cut["steps"][i + 1 :])
        if reproduces(child, trial, kind):
            cut = trial
        i -= 1
    return cut


def repro_script(program):
    return (
        "#!/usr/bin/env python3\n"
        "# A crash-hunting finding, stand-alone: python3 this.py <extension>\n"
        "import json, os, subprocess, sys\n"
        f"PROGRAM = json.loads({json.dumps(json.dumps(program))})\n"
        f"CHILD = {CHILD!r}\n"
        "p = subprocess.run([sys.executable, CHILD, sys.argv[1], '--verbose'], input=json.dumps(PROGRAM) + '\\n', text=True)\n"
        "print('exit status', p.returncode)\n"
    )


def report(out_dir, name, kind, detail, program):
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, f"{name}.json")
    with open(path, "w") as f:
        json.dump({"kind": kind, "detail": detail, "program": program}, f, indent=1)
    with open(os.path.join(out_dir, f"repro_{name}.py"), "w") as f:
        f.write(repro_script(program))
    print(f"FINDING {kind}: {detail.splitlines()[0] if detail else ''}")
    print(f"  program ({'files' if program.get('files') else 'in memory'}), written to {path}:")
    for s in program["steps"]:
        print("   ", gen.describe(s))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--extension", required=True)
    ap.add_argument("--seconds", type=float, default=45)
    ap.add_argument("--seed", type=int)
    ap.add_argument("--out", default=os.path.join(HERE, "artifacts", "crash_hunt"))
    ap.add_argument("--step-timeout", type=float, default=60)
    ap.add_argument("--reduce-seconds", type=float, default=120)
    ap.add_argument("--replay")
    ap.add_argument("--python", default=sys.executable)
    args = ap.parse_args()
    ext = os.path.abspath(args.extension)
    child = Child(ext, args.python, args.step_timeout)

    if args.replay:
        with open(args.replay) as f:
            program = json.load(f)["program"]
        kind, detail, step = child.run(program)
        child.stop()
        print(f"replay: {kind} at step {step} {detail}")
        return 1 if kind != "ok" else 0

    seed = args.seed if args.seed is not None else int(time.time()) % 1_000_000
    print(f"crash hunt: seed {seed}, {args.seconds:.0f}s, extension {ext}")
    start = time.time()
    findings = runs = steps = 0
    seen = set()
    programs = [(f"regression-{i}", p) for i, p in enumerate(gen.regressions())]
    n = 0
    while True:
        if programs:
            name, program = programs.pop(0)
        else:
            if time.time() - start > args.seconds:
                break
            name = f"seed{seed}-{n}"
            program = gen.program(random.Random(f"{seed}/{n}"))
            n += 1
        kind, detail, step = child.run(program)
        runs += 1
        steps += len(program["steps"])
        if kind == "ok":
            continue
        key = (kind, gen.describe(program["steps"][step]) if 0 <= step < len(program["steps"]) else "")
        if key in seen:
            continue
        seen.add(key)
        findings += 1
        small = reduce(child, program, kind, step, time.time() + args.reduce_seconds)
        report(args.out, name, kind, detail, small)
    child.stop()
    took = time.time() - start
    print(f"crash hunt: {runs} programs, {steps} steps in {took:.0f}s, {findings} finding(s)")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
