"""A throwaway PostgreSQL server for the tests: Debian's ``postgresql`` binaries (``make test``
installs the package where missing), a fresh cluster in a temporary folder on 127.0.0.1, owned by an
unprivileged user (as root: the ``postgres`` user the package makes, through ``runuser``), stopped
and deleted when the session ends. No test needs a server someone else started.

Each store a test opens is a database of its own (``fresh_database``), made from an empty template.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import uuid
from pathlib import Path


def _bindir() -> Path:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    if initdb:
        return Path(initdb).parent
    raise RuntimeError("PostgreSQL's initdb was not found: `make test` installs Debian's postgresql package "
                       "(apt-get install postgresql)")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """One cluster: ``url(name)`` is the URL of a database on it."""

    def __init__(self) -> None:
        self.bindir = _bindir()
        self.root = Path(tempfile.mkdtemp(prefix="engram-pg-"))
        self.data = self.root / "data"
        self.port = _free_port()
        self.user = "engram"
        self._as: list[str] = []
        if os.geteuid() == 0:  # initdb and postgres refuse root: the package's own unprivileged user
            owner = pwd.getpwnam("postgres")
            os.chown(self.root, owner.pw_uid, owner.pw_gid)
            self._as = ["runuser", "-u", "postgres", "--"]

    def _run(self, *args: str) -> None:
        subprocess.run([*self._as, *args], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       cwd=self.root)

    def start(self, durable: bool = False) -> Server:
        """``durable``: the server's own defaults (fsync on, each COMMIT flushed), as a benchmark wants;
        else the tests' throwaway settings (nothing flushed: the tests check behaviour, not disks)."""
        self._run(str(self.bindir / "initdb"), "-D", str(self.data), "-U", self.user, "-A", "trust",
                  "-E", "UTF8", "--locale=C", "--no-sync")
        opts = f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.root} -c max_connections=200"
        if not durable:
            opts += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-o", opts, "-l", str(self.root / "log"),
                  "-w", "-t", "60", "start")
        return self

    def stop(self) -> None:
        try:
            self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{self.user}@127.0.0.1:{self.port}/{database}"

    def fresh_database(self) -> str:
        """A new, empty database; its URL."""
        import psycopg

        name = "t_" + uuid.uuid4().hex[:16]
        with psycopg.connect(self.url(), autocommit=True) as db:
            db.execute(f"CREATE DATABASE {name} TEMPLATE template0")  # type: ignore[arg-type]
        return self.url(name)
