#!/usr/bin/env python3
"""The two ways a user installs the extension without building it (spec 024): an extension
repository directory (`make repo`) and the `duckdb-extension-acl` wheel (`make wheel`).

Both are made here by extension-ci-tools/package.py, the script the make targets run, from the
extension file under test (`make repo`/`make wheel` package the static `make dist` file; the
layout, the footer and the loading are the same for the two-stage file `make release` builds, so
the test does not need the 35-minute static build). Every DuckDB runs in a child process with
an extension directory of its own, empty at the start:

- `INSTALL acl FROM '<repo>'` + `LOAD acl` (the file is `<repo>/v2.0.0/linux_amd64/
  acl.duckdb_extension.gz`, gzip, as DuckDB's repositories hold it);
- a newer build in the repository: `INSTALL` keeps the installed one, `FORCE INSTALL` replaces
  it, and the next process loads the newer one;
- the wheel installed with pip into a fresh venv under /tmp (removed after), its metadata
  (name, version, `duckdb==2.0.0`, license), `load(con)`, `install(con)` + `LOAD acl`, and the
  demo scenario (test/demo.py --wheel) with the answers it must give.

Run: python test/python/test_packages.py --extension build/release/acl.duckdb_extension
"""
import gzip
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

import duckdb

import harness
from harness import test

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PACKAGE = os.path.join(ROOT, "extension-ci-tools", "package.py")
DEMO = os.path.join(ROOT, "test", "demo.py")


def package(kind, ext, out):
    subprocess.run([sys.executable, PACKAGE, kind, ext, out], check=True, capture_output=True, text=True)


def renumbered(ext, version, out):
    """The same extension file with another extension version in its footer: a newer build."""
    with open(ext, "rb") as f:
        data = f.read()
    body, footer = data[:-512], bytearray(data[-512:])
    footer[4 * 32:5 * 32] = version.encode().ljust(32, b"\0")
    with open(out, "wb") as f:
        f.write(body + bytes(footer))
    return out


def duck(code, ext_dir, *args, python=sys.executable, cwd=None):
    """Runs `code` in a child process with `duckdb` imported and `ext_dir` as the extension
    directory of every connection made by `connect()`; returns its stdout."""
    prelude = (
        "import duckdb, sys\n"
        f"EXT_DIR = {ext_dir!r}\n"
        "def connect(**cfg):\n"
        "    cfg.setdefault('allow_unsigned_extensions', 'true')\n"
        "    cfg['extension_directory'] = EXT_DIR\n"
        "    return duckdb.connect(':memory:', config=cfg)\n"
    )
    env = dict(os.environ, HOME=os.path.join(ext_dir, "home"))
    p = subprocess.run([python, "-c", prelude + code, *args], capture_output=True, text=True, timeout=300,
                       cwd=cwd, env=env)
    assert p.returncode == 0, f"exit {p.returncode}\n{p.stdout}\n{p.stderr[-3000:]}"
    return p.stdout


def fresh(ext):
    work = tempfile.mkdtemp(prefix="acl-packages-")
    ext_dir = os.path.join(work, "extensions")
    os.makedirs(os.path.join(ext_dir, "home"))
    return work, ext_dir


@test
def install_from_the_repository_and_load(ext):
    work, ext_dir = fresh(ext)
    try:
        repo = os.path.join(work, "repo")
        package("repo", ext, repo)
        gz = os.path.join(repo, "v2.0.0", "linux_amd64", "acl.duckdb_extension.gz")
        with gzip.open(gz, "rb") as f, open(ext, "rb") as g:
            assert f.read() == g.read(), "the repository's file is not the extension, gzipped"
        out = duck(
            "con = connect()\n"
            "assert con.execute(\"SELECT count(*) FROM duckdb_extensions() WHERE extension_name = 'acl' AND installed\").fetchone() == (0,)\n"
            "con.execute(\"INSTALL acl FROM '\" + sys.argv[1] + \"'\")\n"
            "con.close()\n"
            "con = connect()\n"           # a fresh process's view: a plain LOAD finds it
            "con.execute('LOAD acl')\n"
            "print(con.execute(\"SELECT installed_from, extension_version, install_mode FROM duckdb_extensions() WHERE extension_name = 'acl'\").fetchone())\n"
            "print(con.execute(\"SELECT mode FROM acl_status()\").fetchone()[0])\n",
            ext_dir, repo)
        assert repr(repo) in out and "v0.1.0" in out and "REPOSITORY" in out, out
        assert "memory" in out, out
        assert os.path.exists(os.path.join(ext_dir, "v2.0.0", "linux_amd64", "acl.duckdb_extension")), os.listdir(ext_dir)
    finally:
        shutil.rmtree(work, ignore_errors=True)


@test
def force_install_takes_a_newer_build_and_plain_install_keeps_the_old(ext):
    work, ext_dir = fresh(ext)
    try:
        old, new = os.path.join(work, "repo-old"), os.path.join(work, "repo-new")
        package("repo", ext, old)
        package("repo", renumbered(ext, "v0.1.1", os.path.join(work, "acl.duckdb_extension")), new)
        version = "print(con.execute(\"SELECT extension_version FROM duckdb_extensions() WHERE extension_name = 'acl'\").fetchone()[0])\n"
        duck("con = connect(); con.execute(\"INSTALL acl FROM '\" + sys.argv[1] + \"'\")\n", ext_dir, old)
        out = duck("con = connect()\n"
                   "try:\n"
                   "    con.execute(\"INSTALL acl FROM '\" + sys.argv[1] + \"'\")\n"
                   "except duckdb.Error as e:\n"
                   "    print('refused', e)\n"
                   "con.close(); con = connect(); con.execute('LOAD acl')\n" + version, ext_dir, new)
        assert out.strip().endswith("v0.1.0"), f"a plain INSTALL replaced the installed build: {out}"
        out = duck("con = connect(); con.execute(\"FORCE INSTALL acl FROM '\" + sys.argv[1] + \"'\")\n"
                   "con.close(); con = connect(); con.execute('LOAD acl')\n" + version
                   + "print(con.execute(\"SELECT installed_from FROM duckdb_extensions() WHERE extension_name = 'acl'\").fetchone()[0])\n",
                   ext_dir, new)
        assert out.split() == ["v0.1.1", new], out
    finally:
        shutil.rmtree(work, ignore_errors=True)


def duckdb_site():
    """The site-packages directory this interpreter's duckdb comes from."""
    return os.path.dirname(os.path.dirname(os.path.abspath(duckdb.__file__)))


@test
def the_wheel_in_a_fresh_venv_runs_the_demo(ext):
    work, ext_dir = fresh(ext)
    try:
        wheels = os.path.join(work, "wheels")
        package("wheel", ext, wheels)
        (whl,) = [os.path.join(wheels, f) for f in os.listdir(wheels)]
        name = os.path.basename(whl)
        assert name.startswith("duckdb_extension_acl-0.1.0-py3-none-manylinux_") and name.endswith("_x86_64.whl"), name
        with zipfile.ZipFile(whl) as z:
            names = z.namelist()
            meta = z.read("duckdb_extension_acl-0.1.0.dist-info/METADATA").decode()
        assert "duckdb_extension_acl/extensions/v2.0.0/acl.duckdb_extension" in names, names
        for line in ("Name: duckdb-extension-acl", "Version: 0.1.0", "Requires-Dist: duckdb==2.0.0", "License: MIT"):
            assert line in meta.splitlines(), (line, meta)
        venv = os.path.join(work, "venv")
        subprocess.run([sys.executable, "-m", "venv", venv], check=True, capture_output=True)
        py = os.path.join(venv, "bin", "python")
        # duckdb 2.0.0 comes from this interpreter's site-packages (no download): pip then finds
        # the requirement satisfied, and would refuse the wheel under another duckdb.
        vsite = subprocess.run([py, "-c", "import site; print(site.getsitepackages()[0])"], check=True,
                               capture_output=True, text=True).stdout.strip()
        with open(os.path.join(vsite, "duckdb-from-host.pth"), "w") as f:
            f.write(duckdb_site() + "\n")
        p = subprocess.run([py, "-m", "pip", "install", "--no-index", "--no-cache-dir", "--disable-pip-version-check", whl],
                           capture_output=True, text=True)
        assert p.returncode == 0, p.stdout + p.stderr
        p = subprocess.run([py, "-m", "pip", "check"], capture_output=True, text=True)
        assert p.returncode == 0, p.stdout + p.stderr
        out = duck(
            "import duckdb_extension_acl as acl\n"
            "assert acl.__version__ == '0.1.0' and acl.DUCKDB_VERSION == 'v2.0.0'\n"
            "con = acl.load(connect())\n"
            "print(con.execute(\"SELECT mode FROM acl_status()\").fetchone()[0])\n"
            "acl.install(connect())\n"
            "con = connect(); con.execute('LOAD acl')\n"
            "print(con.execute(\"SELECT install_mode FROM duckdb_extensions() WHERE extension_name = 'acl'\").fetchone()[0])\n"
            "try:\n"
            "    acl.load(duckdb.connect(':memory:'))\n"
            "except duckdb.Error as e:\n"
            "    print('unsigned refused')\n",
            ext_dir, python=py, cwd=work)
        assert out.split() == ["memory", "CUSTOM_PATH", "unsigned", "refused"], out
        demo = subprocess.run([py, DEMO, "--wheel"], capture_output=True, text=True, cwd=work, timeout=300,
                              env=dict(os.environ, HOME=os.path.join(ext_dir, "home")))
        assert demo.returncode == 0, demo.stdout + demo.stderr
        text = demo.stdout
        # the scenario's answers: the analyst reads, cannot write or reach physical objects or
        # files; the clerk writes
        assert "(1, 'acme', Decimal('10.50'))" in text, text
        assert "(3, 'initech', Decimal('7.25'))" in text, text
        assert "(1, 'acme', Decimal('21.00'))" in text, text
        assert text.count("refused:") >= 4, text
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    harness.main(lambda ext: ext)
