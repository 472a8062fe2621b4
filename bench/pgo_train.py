#!/usr/bin/env python3
"""The training run of `make pgo-profile` (spec 012, "Profile-guided build").

Runs the instrumented extension over what the profile should favour and what it must not treat
as cold:
- the never-seen statements of `bench/cold_callgrind.py` (plain and with DuckDB's names), the
  statement path a BI tool or an analyst meets on almost every query;
- `make bench` cases (a) and (h), small: repeated and known-shape statements, policy objects,
  the star schema's sliced analytics;
- the whole SQL suite: every statement kind, refusal and management form, so that none of them
  is laid out as never run.
Each workload is its own process; the profile runtime writes (and merges) its counts at exit.

    bench/pgo_train.py STAGE1_EXTENSION STAGE2_WITH_FOOTER
"""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import cold_callgrind  # noqa: E402


def main():
    stage1, stage2 = (os.path.abspath(p) for p in sys.argv[1:3])
    py = sys.executable
    for kind in ("acl", "names"):
        subprocess.run([py, "-c", cold_callgrind.CHILD, stage2, kind, "3000"], check=True)
    subprocess.run([py, os.path.join(HERE, "bench.py"), "--extension", stage1, "--cases", "ah", "--rounds", "300",
                    "--star-rows", "200000", "--star-seconds", "0.3"], check=True, stdout=subprocess.DEVNULL)
    runner = os.path.join(HERE, "..", "test", "runner.py")
    subprocess.run([py, runner, "--extension", stage1, os.path.join(HERE, "..", "test", "sql")], check=True)


if __name__ == "__main__":
    main()
