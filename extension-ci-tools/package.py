#!/usr/bin/env python3
"""Packages a built extension file the two ways users install DuckDB extensions (spec 024).

    package.py repo  EXT OUT_DIR   a repository directory `INSTALL acl FROM 'OUT_DIR'` reads:
                                   OUT_DIR/<duckdb version>/<platform>/acl.duckdb_extension.gz
    package.py wheel EXT OUT_DIR   OUT_DIR/duckdb_extension_acl-<version>-py3-none-<tag>.whl, the
                                   `duckdb_extension_<name>/extensions/<duckdb version>/` convention

The extension's version, DuckDB version and platform are read from the file's metadata footer
(extension-ci-tools/append_metadata.py wrote it), so a package can only say what the file is.
Standard library only: a wheel is a zip with a RECORD, built here byte for byte reproducibly.
"""
import base64
import gzip
import hashlib
import io
import os
import re
import subprocess
import sys
import zipfile

NAME = "acl"
DIST_NAME = "duckdb-extension-acl"
PKG = "duckdb_extension_acl"
FOOTER = 512
FIXED_TIME = (2020, 1, 1, 0, 0, 0)  # zip entries' time: the same input gives the same wheel


def footer(path):
    """(extension version, DuckDB version, platform) from the metadata footer."""
    with open(path, "rb") as f:
        f.seek(-FOOTER, os.SEEK_END)
        tail = f.read(FOOTER)
    # eight 32-byte NUL-padded fields ("", "", "", ABI, extension version, DuckDB version,
    # platform, "4"), then the 256-byte signature area
    meta = [tail[i * 32:(i + 1) * 32].rstrip(b"\0").decode() for i in range(8)]
    if meta[7] != "4":
        raise SystemExit(f"{path}: no DuckDB metadata footer (run append_metadata.py)")
    return meta[4], meta[5], meta[6]


def repo(ext, out):
    version, duckdb_version, platform = footer(ext)
    where = os.path.join(out, duckdb_version, platform)
    os.makedirs(where, exist_ok=True)
    target = os.path.join(where, f"{NAME}.duckdb_extension.gz")
    with open(ext, "rb") as f, open(target + ".tmp", "wb") as raw:
        # mtime 0 and no name: the same file gives the same archive
        with gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=9, mtime=0, filename="") as gz:
            gz.write(f.read())
    os.replace(target + ".tmp", target)
    print(f"{target} (extension {version}, DuckDB {duckdb_version}, {platform})")


def glibc_floor(ext):
    """The newest GLIBC_x.y symbol version the file needs: the manylinux tag it can claim."""
    try:
        out = subprocess.run(["objdump", "-T", ext], check=True, capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return (2, 28)
    found = [tuple(int(x) for x in m) for m in re.findall(r"GLIBC_(\d+)\.(\d+)", out)]
    return max(found + [(2, 17)])


def project_urls():
    """The project's URLs, from Cargo.toml's `homepage`/`repository`/`documentation` (none is
    invented: a field that is absent is left out)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with open(os.path.join(root, "Cargo.toml"), encoding="utf-8") as f:
        text = f.read().split("\n[", 1)[0]
    found = dict(re.findall(r'^(homepage|repository|documentation) = "([^"]+)"', text, re.M))
    names = {"homepage": "Homepage", "repository": "Source", "documentation": "Documentation"}
    return [(names[k], v) for k, v in found.items()]


def record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


INIT = '''"""The {name} DuckDB extension ({duckdb_version}), packaged as `duckdb-extension-{name}`.

DuckDB {duckdb_version} does not look for extensions in Python packages by itself:

    import duckdb, duckdb_extension_{name}
    con = duckdb_extension_{name}.connect()            # a new in-memory DuckDB with {name} loaded
    # or, on a connection made with config={{"allow_unsigned_extensions": "true"}}:
    duckdb_extension_{name}.load(con)
"""
import os

__version__ = "{version}"
DUCKDB_VERSION = "{duckdb_version}"


def extension_path():
    """The extension file this package carries."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "extensions", DUCKDB_VERSION,
                        "{name}.duckdb_extension")


def _literal(s):
    return "'" + s.replace("'", "''") + "'"


def load(con):
    """Loads the extension into `con` (a duckdb connection). The file is not signed by DuckDB:
    the connection must have been made with allow_unsigned_extensions."""
    import duckdb

    if "v" + duckdb.__version__.lstrip("v") != DUCKDB_VERSION:
        raise RuntimeError(f"duckdb-extension-{name} is built for DuckDB {{DUCKDB_VERSION}}, "
                           f"this is duckdb {{duckdb.__version__}}")
    con.execute("LOAD " + _literal(extension_path()))
    return con


def install(con):
    """Installs the extension into the connection's extension directory, so that a plain
    `LOAD {name}` finds it from then on (`FORCE INSTALL`: replaces an older one)."""
    con.execute("FORCE INSTALL " + _literal(extension_path()))
    return con


def connect(database=":memory:", config=None, **kwargs):
    """duckdb.connect with allow_unsigned_extensions set and the extension loaded."""
    import duckdb

    config = dict(config or {{}})
    config.setdefault("allow_unsigned_extensions", "true")
    return load(duckdb.connect(database, config=config, **kwargs))
'''

METADATA = """Metadata-Version: 2.1
Name: {dist}
Version: {version}
Summary: Role- and token-scoped access control for DuckDB {duckdb_version}, as a loadable extension
License: MIT
Classifier: License :: OSI Approved :: MIT License
Classifier: Operating System :: POSIX :: Linux
Classifier: Programming Language :: Python :: 3
{urls}Requires-Python: >=3.9
Requires-Dist: duckdb=={duckdb_plain}
Description-Content-Type: text/markdown

The `{name}` DuckDB extension for DuckDB {duckdb_version} ({platform}). DuckDB does not find
extensions in Python packages by itself; load it with:

```python
import duckdb_extension_{name}
con = duckdb_extension_{name}.connect()
```

or `duckdb_extension_{name}.load(con)` on a connection made with
`config={{"allow_unsigned_extensions": "true"}}`; `duckdb_extension_{name}.install(con)` puts it
in the extension directory so that `LOAD {name}` finds it.
"""


def wheel(ext, out):
    version, duckdb_version, platform = footer(ext)
    if platform != "linux_amd64":
        raise SystemExit(f"{ext}: platform {platform}: only linux_amd64 wheels are made")
    major, minor = glibc_floor(ext)
    tag = f"py3-none-manylinux_{major}_{minor}_x86_64"
    plain = version.lstrip("v")
    info = f"{PKG}-{plain}.dist-info"
    fmt = dict(name=NAME, dist=DIST_NAME, version=plain, duckdb_version=duckdb_version,
               duckdb_plain=duckdb_version.lstrip("v"), platform=platform,
               urls="".join(f"Project-URL: {k}, {v}\n" for k, v in project_urls()))
    with open(ext, "rb") as f:
        binary = f.read()
    files = [
        (f"{PKG}/__init__.py", INIT.format(**fmt).encode()),
        (f"{PKG}/extensions/{duckdb_version}/{NAME}.duckdb_extension", binary),
        (f"{info}/METADATA", METADATA.format(**fmt).encode()),
        (f"{info}/WHEEL", f"Wheel-Version: 1.0\nGenerator: duckdb-acl package.py\nRoot-Is-Purelib: false\nTag: {tag}\n".encode()),
        (f"{info}/top_level.txt", f"{PKG}\n".encode()),
    ]
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, f"{PKG}-{plain}-{tag}.whl")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        record = []
        for name, data in files:
            zi = zipfile.ZipInfo(name, FIXED_TIME)
            zi.compress_type = zipfile.ZIP_DEFLATED
            zi.external_attr = (0o755 if name.endswith(".duckdb_extension") else 0o644) << 16
            z.writestr(zi, data)
            record.append(record_line(name, data))
        record.append(f"{info}/RECORD,,")
        zi = zipfile.ZipInfo(f"{info}/RECORD", FIXED_TIME)
        zi.external_attr = 0o644 << 16
        z.writestr(zi, "\n".join(record) + "\n")
    with open(path, "wb") as f:
        f.write(buf.getvalue())
    print(path)


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ("repo", "wheel"):
        raise SystemExit(__doc__)
    {"repo": repo, "wheel": wheel}[sys.argv[1]](sys.argv[2], sys.argv[3])


if __name__ == "__main__":
    main()
