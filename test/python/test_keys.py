#!/usr/bin/env python3
"""Issuer keys as the design says (issue 31, finding 9; specs/003-tokens.md, specs/006-policy-store.md),
with tokens minted by PyJWT:

- the RSA minimum counts the modulus's bits: a 1024-bit key whose JWK `n` is padded with zero
  bytes is refused at CREATE ISSUER and, written into the store by hand, refuses the store;
- a `KEYS FROM` issuer's keys are the file's, read when the policy is loaded or published, never
  the copy the store holds: a key rotated out of the file fails at once after a restart; until the
  read finished (or when it failed) the issuer's tokens are refused, with the reason named;
- every read of a keys file is bounded (1 MiB): `/proc/self/pagemap`, a large file, a FIFO;
- load and reload repeat every check management makes; a store that fails one is refused whole
  and the node keeps the policy it had.

Run: python test/python/test_keys.py --extension build/release/acl.duckdb_extension \
         --faults-extension build/faults/acl.duckdb_extension
Ends with `N passed, N failed`.
"""
import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import duckdb
import jwt
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm

import harness
from harness import refused_with, sql_str, test

SMALL = rsa.generate_private_key(public_exponent=65537, key_size=1024)
KEY_A = rsa.generate_private_key(public_exponent=65537, key_size=2048)
KEY_B = rsa.generate_private_key(public_exponent=65537, key_size=2048)
ISS = "https://idp.example"
SHORT_RSA = "RSA keys must have at least 2048 bits"
CORRUPT = "holds a record that cannot be read: issuers"
NOT_READ = "acl: token rejected: the issuer's keys file has not been read yet"
UNREADABLE = "acl: token rejected: the issuer's keys file could not be read or holds no usable keys"


def b64(n):
    return base64.urlsafe_b64encode(n).rstrip(b"=").decode()


def jwk(key, kid, pad=0):
    """`key`'s public JWK; `pad` zero bytes in front of its modulus."""
    d = RSAAlgorithm.to_jwk(key.public_key(), as_dict=True)
    n = key.public_key().public_numbers().n
    d["n"] = b64(b"\0" * pad + n.to_bytes((n.bit_length() + 7) // 8, "big"))
    d["kid"] = kid
    return d


def jwks(*keys):
    return json.dumps({"keys": list(keys)})


def token(key, kid, iss=ISS, **over):
    c = {"iss": iss, "sub": "alice", "exp": int(time.time()) + 300, "roles": ["analyst"]}
    c.update(over)
    return jwt.encode(c, key, algorithm="RS256", headers={"kid": kid})


def count(con, tok):
    return con.execute(f"ACL TOKEN {sql_str(tok)} SELECT count(*) FROM orders").fetchone()[0]


def eventually(f, timeout=5.0):
    deadline = time.monotonic() + timeout
    while True:
        try:
            return f()
        except (AssertionError, duckdb.Error):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def write(path, text):
    tmp = path + ".new"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def connect(ext, path=":memory:"):
    con = duckdb.connect(path, config={"allow_unsigned_extensions": "true"})
    con.execute(f"LOAD '{ext}'")
    con.execute("SET GLOBAL acl_allow_anonymous_admin = true")
    return con


def node(ext, d):
    """A node of the policy store in `d` (a new DuckDB instance: a restart, or a node joining)."""
    con = connect(ext)
    con.execute("ATTACH ':memory:' AS phys")
    con.execute("CREATE TABLE phys.main.orders AS SELECT range AS id FROM range(3)")
    con.execute(f"ATTACH {sql_str(os.path.join(d, 'policy.db'))} AS aclcat")
    return con


def new_store(ext, d, jwks_path):
    """A store whose issuer reads `jwks_path`; the node that made it, which the caller closes."""
    con = node(ext, d)
    con.execute("SELECT acl_use_db('aclcat', 'acl', true)")
    con.execute(
        "ACL ADMIN CREATE VIRTUAL CATALOG sales; CREATE VIRTUAL TABLE sales.orders AS phys.main.orders;"
        " CREATE ROLE analyst; GRANT CATALOG sales TO ROLE analyst WITH (select) MAIN;"
        f" CREATE ISSUER '{ISS}' KEYS FROM {sql_str(jwks_path)}"
    )
    return con


def setup(ext):
    return tempfile.mkdtemp(prefix="acl-keys-")


def teardown(d):
    shutil.rmtree(d, ignore_errors=True)


# ---- the RSA minimum counts the modulus's bits ------------------------------------------------


@test
def a_1024_bit_key_with_a_zero_padded_modulus_is_refused_at_create_issuer(d):
    """Attacker: "the 2048-bit rule measures the base64 text of `n`; I prepend 128 zero bytes to
    my 1024-bit modulus, CREATE ISSUER takes it, and every token my small key signs is accepted."
    Refused (`KeyProblem::ShortRsa`) inline, in a JWKS, bare and from a file; the small key's
    tokens then meet no issuer."""
    con = harness.sales(harness.EXT)
    padded = jwk(SMALL, "small", pad=128)
    assert len(padded["n"]) >= len(jwk(KEY_A, "a")["n"]), "the padded text is as long as a 2048-bit key's"
    path = os.path.join(d, "small.jwks")
    write(path, jwks(padded))
    for keys in (f"KEYS {sql_str(jwks(padded))}", f"KEYS {sql_str(json.dumps(padded))}", f"KEYS FROM {sql_str(path)}"):
        refused_with(lambda: con.execute(f"ACL ADMIN CREATE ISSUER '{ISS}' {keys}"), SHORT_RSA)
    tok = token(SMALL, "small")
    refused_with(lambda: count(con, tok), "acl: token rejected: unknown issuer")
    # a real 2048-bit key with zero bytes in front is still a 2048-bit key
    con.execute(f"ACL ADMIN CREATE ISSUER '{ISS}' KEYS {sql_str(jwks(jwk(KEY_A, 'a', pad=3)))}")
    assert count(con, token(KEY_A, "a")) == 3


@test
def a_padded_key_written_into_the_store_refuses_the_reload_and_the_node_keeps_its_policy(d):
    """Attacker with write access to the store's tables: "CREATE ISSUER refuses my key, so I write
    it into the issuers row and wait for acl_reload (or the next node to start)." The reload is
    refused whole (`StoreError::Corrupt`, naming the issuers table); the node keeps the policy it
    had, in which the small key verifies nothing; a new node refuses the store too."""
    con = node(harness.EXT, d)
    con.execute("SELECT acl_use_db('aclcat', 'acl', true)")
    con.execute(
        "ACL ADMIN CREATE VIRTUAL CATALOG sales; CREATE VIRTUAL TABLE sales.orders AS phys.main.orders;"
        " CREATE ROLE analyst; GRANT CATALOG sales TO ROLE analyst WITH (select) MAIN;"
        f" CREATE ISSUER '{ISS}' KEYS {sql_str(jwks(jwk(KEY_A, 'a')))}"
    )
    good, evil = token(KEY_A, "a"), token(SMALL, "small")
    assert count(con, good) == 3
    version = con.execute("SELECT policy_version FROM acl_status()").fetchone()[0]
    con.execute(f"UPDATE aclcat.acl.issuers SET keys = {sql_str(jwks(jwk(SMALL, 'small', pad=128)))} WHERE iss = '{ISS}'")
    con.execute("UPDATE aclcat.acl.meta SET policy_version = policy_version + 1")
    refused_with(lambda: con.execute("SELECT acl_reload()"), CORRUPT)
    assert con.execute("SELECT policy_version FROM acl_status()").fetchone()[0] == version, "the policy in force is the one before"
    assert count(con, good) == 3
    refused_with(lambda: count(con, evil), "acl: token rejected: unknown key id")
    # other rows management would refuse: lower-case or unverifiable ALGS, a bad claim path
    for edit in ("""algs = '["rs256"]'""", """algs = '["HS256"]'""", "role_claim = 'a..b'", """claim_map = '[["x", "X"]]'"""):
        con.execute(f"UPDATE aclcat.acl.issuers SET keys = {sql_str(jwks(jwk(KEY_A, 'a')))}, {edit} WHERE iss = '{ISS}'")
        refused_with(lambda: con.execute("SELECT acl_reload()"), CORRUPT)
        con.execute(f"UPDATE aclcat.acl.issuers SET algs = '[]', role_claim = 'roles', claim_map = '[]' WHERE iss = '{ISS}'")
    con.execute(f"UPDATE aclcat.acl.issuers SET keys = {sql_str(jwks(jwk(SMALL, 'small', pad=128)))} WHERE iss = '{ISS}'")
    con.close()
    joining = node(harness.EXT, d)
    refused_with(lambda: joining.execute("SELECT acl_use_db('aclcat')"), CORRUPT)
    refused_with(lambda: count(joining, evil), "acl: token rejected: unknown issuer")


# ---- KEYS FROM: read at load and publish, never the store's copy ------------------------------


@test
def a_key_rotated_out_of_the_file_fails_at_once_after_a_restart(d):
    """Attacker holding a stolen key the IdP has rotated out of the JWKS file: "the store kept the
    keys read at CREATE ISSUER and a restarted node starts from them; until its first re-read, up
    to five minutes, my token verifies (on every node that joins, too)." The new node reads the
    file when it loads the store: the old key is refused at its first token (`unknown key id`),
    the new one verifies at once."""
    path = os.path.join(d, "idp.jwks")
    write(path, jwks(jwk(KEY_A, "a")))
    con = new_store(harness.EXT, d, path)
    old = token(KEY_A, "a")
    assert count(con, old) == 3
    con.close()
    write(path, jwks(jwk(KEY_B, "b")))
    con = node(harness.EXT, d)
    assert con.execute("SELECT acl_use_db('aclcat')").fetchone()[0].startswith("loaded the policy store")
    refused_with(lambda: count(con, old), "acl: token rejected: unknown key id")
    assert count(con, token(KEY_B, "b")) == 3
    # a running node that reloads reads the file again too, without waiting for the interval
    write(path, jwks(jwk(KEY_A, "a")))
    con.execute("SELECT acl_reload()")
    assert count(con, old) == 3
    refused_with(lambda: count(con, token(KEY_B, "b")), "acl: token rejected: unknown key id")
    # the store holds no copy of the file's keys at all
    assert con.execute(f"SELECT keys FROM aclcat.acl.issuers WHERE iss = '{ISS}'").fetchone()[0] == ""
    assert con.execute(f"SELECT key_source, key_kind FROM acl_issuers() WHERE iss = '{ISS}'").fetchone() == ("file", "jwks")


@test
def a_keys_file_unreadable_at_load_refuses_its_tokens_not_the_store(d):
    """Attacker: "delete (or garble) the JWKS file before a node restarts, and the node falls back
    to the keys the store kept — mine." Nothing falls back: the store loads, every other principal
    works, and the file issuer's tokens are refused with the reason named (`KeysUnreadable`) until
    the file reads again (tried every second)."""
    path = os.path.join(d, "idp.jwks")
    write(path, jwks(jwk(KEY_A, "a")))
    new_store(harness.EXT, d, path).close()
    tok = token(KEY_A, "a")
    for broken in ("remove", "garble"):
        if broken == "remove":
            os.unlink(path)
        else:
            write(path, "not a JWKS")
        con = node(harness.EXT, d)
        assert con.execute("SELECT acl_use_db('aclcat')").fetchone()[0].startswith("loaded the policy store")
        assert con.execute('ACL ROLE "analyst" SELECT count(*) FROM orders').fetchone()[0] == 3
        refused_with(lambda: count(con, tok), UNREADABLE)
        assert con.execute(f"SELECT key_kind FROM acl_issuers() WHERE iss = '{ISS}'").fetchone()[0] is None
        write(path, jwks(jwk(KEY_A, "a")))
        assert eventually(lambda: count(con, tok)) == 3
        con.close()


# In a child (the faults build must be the process's first `acl` library: a second one of the
# same name is not loaded again), with every keys-file read slowed to 3 s. Prints what each step
# gave, as JSON.
SLOW = r"""
import json, sys, time
import duckdb
ext, path, tok = sys.argv[1:4]
con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
con.execute(f"LOAD '{ext}'")
con.execute("ATTACH ':memory:' AS phys")
con.execute("CREATE TABLE phys.main.orders AS SELECT range AS id FROM range(3)")
t0 = time.monotonic()
# one batch, one publish: it waits 2 s for the read, which takes 3
con.execute("ACL ADMIN CREATE VIRTUAL CATALOG sales; CREATE VIRTUAL TABLE sales.orders AS phys.main.orders;"
            " CREATE ROLE analyst; GRANT CATALOG sales TO ROLE analyst WITH (select) MAIN;"
            f" CREATE ISSUER 'https://idp.example' KEYS FROM '{path}'")
out = {"publish_secs": time.monotonic() - t0}
def run():
    try:
        return con.execute(f"ACL TOKEN '{tok}' SELECT count(*) FROM orders").fetchall()
    except duckdb.Error as e:
        return str(e)
out["during"] = run()
deadline = time.monotonic() + 5
while time.monotonic() < deadline and isinstance(run(), str):
    time.sleep(0.05)
out["after"] = run()
print(json.dumps(out))
"""


@test
def a_token_is_refused_while_the_keys_file_has_not_been_read(d):
    """Attacker: "the keys file sits on a slow file system; in the moment before the node has read
    it, whatever it holds from before must not verify my token." With every read slowed past what
    a publish waits for (the `slow_keys_file` fault), the issuer's tokens are refused
    (`KeysNotRead`) until the read finished, then verify."""
    assert harness.FAULTS_EXT and os.path.exists(harness.FAULTS_EXT), "build it with `make faults`"
    path = os.path.join(d, "idp.jwks")
    write(path, jwks(jwk(KEY_A, "a")))
    env = dict(os.environ, ACL_TEST_FAULT="slow_keys_file")
    r = subprocess.run([sys.executable, "-c", SLOW, harness.FAULTS_EXT, path, token(KEY_A, "a")],
                       env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert 1.9 < out["publish_secs"] < 3.0, out
    assert isinstance(out["during"], str) and NOT_READ in out["during"], out
    assert out["after"] == [[3]], out


# ---- every read bounded -------------------------------------------------------------------------

# In a child the parent watches: its resident memory past 1 GiB kills it (a read without bound
# fails the test there instead of taking this machine's memory). Prints what each step gave, as JSON.
BOUNDED = r"""
import json, os, resource, sys, time
import duckdb
ext, d, keys, tok = sys.argv[1:5]
out = {}
def connect():
    con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
    con.execute(f"LOAD '{ext}'")
    con.execute("SET GLOBAL acl_allow_anonymous_admin = true")
    con.execute("ATTACH ':memory:' AS phys")
    con.execute("CREATE TABLE phys.main.orders AS SELECT range AS id FROM range(3)")
    con.execute(f"ATTACH '{d}/bounded.db' AS aclcat")
    return con
con = connect()
con.execute("ACL ADMIN CREATE VIRTUAL CATALOG sales; CREATE VIRTUAL TABLE sales.orders AS phys.main.orders;"
            " CREATE ROLE analyst; GRANT CATALOG sales TO ROLE analyst WITH (select) MAIN")
def step(name, sql):
    t0 = time.monotonic()
    try:
        out[name] = [con.execute(sql).fetchall(), time.monotonic() - t0]
    except duckdb.Error as e:
        out[name] = [str(e), time.monotonic() - t0]
big = os.path.join(d, "big.jwks")
with open(big, "w") as f:
    f.write(" " * (1 << 20) + keys)
fifo = os.path.join(d, "fifo.jwks")
os.mkfifo(fifo)
for name, path in (("pagemap", "/proc/self/pagemap"), ("big", big), ("fifo", fifo), ("zero", "/dev/zero")):
    step(name, f"ACL ADMIN CREATE ISSUER 'https://{name}.example' KEYS FROM '{path}'")
# the interval's re-read on its thread: the file becomes /proc/self/pagemap
good = os.path.join(d, "good.jwks")
with open(good, "w") as f:
    f.write(keys)
step("create", f"ACL ADMIN CREATE ISSUER 'https://idp.example' KEYS FROM '{good}'")
step("before", f"ACL TOKEN '{tok}' SELECT count(*) FROM orders")
os.unlink(good)
os.symlink("/proc/self/pagemap", good)
con.execute("SET acl_jwks_refresh_interval = 1")
time.sleep(1.2)
step("due", f"ACL TOKEN '{tok}' SELECT count(*) FROM orders")
time.sleep(1.0)
step("after", f"ACL TOKEN '{tok}' SELECT count(*) FROM orders")
# and the load path: a store whose issuer names it, loaded by a new node
step("store", "SELECT acl_use_db('aclcat', 'acl', true)")
con.close()
con = connect()
step("load", "SELECT acl_use_db('aclcat')")
step("loaded", f"ACL TOKEN '{tok}' SELECT count(*) FROM orders")
out["maxrss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(out))
"""


def rss_mb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0


@test
def proc_pagemap_a_large_file_and_a_fifo_are_refused_quickly_and_in_bounded_memory(d):
    """Attacker with global manage: "`KEYS FROM '/proc/self/pagemap'` — its size reads 0, so the
    1 MiB check passes and the node reads hundreds of GiB; or point the keys file the interval
    re-reads at it; or a FIFO, and the read waits for a writer forever." Each is refused at once
    (`Invalid::KeysFile`: larger than 1 MiB / not a regular file) with the node's memory flat; the
    re-read on its thread fails the same way and the last good keys stay; a store whose issuer
    names it loads, and the issuer's tokens are refused (`KeysUnreadable`)."""
    tok = token(KEY_A, "a")
    child = subprocess.Popen([sys.executable, "-c", BOUNDED, harness.EXT, d, jwks(jwk(KEY_A, "a")), tok],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline, peak = time.monotonic() + 120, 0
    while child.poll() is None:
        peak = max(peak, rss_mb(child.pid))
        if peak > 1024 or time.monotonic() > deadline:
            child.kill()
            child.wait()
            raise AssertionError(f"the child grew to {peak:.0f} MB (or ran past 120 s)")
        time.sleep(0.02)
    stdout, stderr = child.communicate()
    assert child.returncode == 0, stderr[-2000:]
    r = subprocess.CompletedProcess(child.args, child.returncode, stdout, stderr)
    out = json.loads(r.stdout.strip().splitlines()[-1])
    # pagemap: the read stops at 1 MiB + 1 byte, which the kernel answers with EINVAL (it reads
    # in 8-byte entries): refused either way, as it could not be before the bound
    for name, why in (("pagemap", ("larger than 1 MiB", "invalid input parameter")), ("big", ("larger than 1 MiB",)),
                      ("fifo", ("not a regular file",)), ("zero", ("not a regular file",))):
        msg, secs = out[name]
        assert isinstance(msg, str) and "acl: cannot read keys file" in msg and msg.endswith(why), (name, msg)
        assert secs < 2.0, (name, secs)
    assert out["before"][0] == [[3]] and out["due"][0] == [[3]], out
    assert out["after"][0] == [[3]], ("the last good keys stay while the file cannot be read", out["after"])
    assert out["load"][0][0][0].startswith("loaded the policy store"), out["load"]
    assert isinstance(out["loaded"][0], str) and UNREADABLE in out["loaded"][0], out["loaded"]
    assert out["maxrss_mb"] < 400, out["maxrss_mb"]


if __name__ == "__main__":
    harness.main(setup, teardown)
