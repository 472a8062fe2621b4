"""The little harness the Python tests share: register tests with `@test`, then `main(setup)`
calls each with a fresh connection from `setup(extension_path)` and ends with
`N passed, N failed` (exit 1 on any failure or when nothing ran). `main(setup, teardown)` hands
what `setup` returned to `teardown` after each test, pass or fail (the temporary directories)."""
import argparse
import os
import sys
import traceback

TESTS = []


def sql_str(s):
    """A SQL string literal of `s`."""
    return "'" + s.replace("'", "''") + "'"


def test(fn):
    TESTS.append(fn)
    return fn


def refused_with(fn, expected):
    """Runs `fn`, which must fail with a DuckDB error holding `expected` and naming no physical
    object (`phys`); returns the message."""
    import duckdb

    try:
        fn()
    except duckdb.Error as e:
        assert expected in str(e), str(e)
        assert "phys" not in str(e), str(e)
        return str(e)
    raise AssertionError(f"not refused (expected: {expected})")


# The extension under test, set by `main` from `--extension`; the `test-faults` build of it
# (`make faults`) from `--faults-extension`, for the tests that need it.
EXT = None
FAULTS_EXT = None


def main(setup, teardown=None):
    global EXT, FAULTS_EXT
    ap = argparse.ArgumentParser()
    ap.add_argument("--extension", required=True)
    ap.add_argument("--faults-extension")
    args = ap.parse_args()
    EXT = os.path.abspath(args.extension)
    FAULTS_EXT = os.path.abspath(args.faults_extension) if args.faults_extension else None
    passed = failed = 0
    for t in TESTS:
        made = None
        try:
            made = setup(EXT)
            t(made)
            passed += 1
            print(f"ok   {t.__name__}")
        except Exception:  # noqa: BLE001 - report every failure, keep going
            failed += 1
            print(f"FAIL {t.__name__}")
            traceback.print_exc()
        finally:
            if teardown is not None and made is not None:
                teardown(made)
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed or not passed else 0)


def sales(ext):
    """A fresh in-memory DuckDB with the extension loaded, `phys.main.orders` (3 rows) and the
    virtual catalog `sales` over it, granted read-only and MAIN to role `analyst`."""
    import duckdb

    con = duckdb.connect(":memory:", config={"allow_unsigned_extensions": "true"})
    con.execute(f"LOAD '{ext}'")
    con.execute("ATTACH ':memory:' AS phys")
    con.execute("CREATE TABLE phys.main.orders (id INTEGER, customer VARCHAR)")
    con.execute("INSERT INTO phys.main.orders VALUES (1, 'acme'), (2, 'globex'), (3, 'acme')")
    con.execute(
        "ACL ADMIN CREATE VIRTUAL CATALOG sales; CREATE VIRTUAL TABLE sales.orders AS phys.main.orders;"
        " CREATE ROLE analyst; GRANT CATALOG sales TO ROLE analyst WITH (select) MAIN"
    )
    return con


def known_bug(why):
    """An outside review's finding: the test asserts the secure outcome and fails today, which is
    reported as a BUG line; once fixed it fails (drop the marker so it asserts the fix)."""
    def wrap(fn):
        def run(arg):
            try:
                fn(arg)
            except Exception as e:  # noqa: BLE001 - any failure is the known bug
                return print(f"BUG  {fn.__name__}: {why} ({type(e).__name__}: {str(e)[:200]})")
            raise AssertionError(f"known bug now fixed (remove known_bug): {why}")
        run.__name__ = fn.__name__
        return run
    return wrap
