"""A throwaway PostgreSQL server on a free loopback port, for tests and benchmarks (not shipped).

initdb refuses to run as root, so as root the server runs as the unprivileged user
`nobody` (through runuser); its data directory lives in a temporary folder removed on stop.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

UNPRIVILEGED_USER = "nobody"


def find_bindir() -> Path | None:
    """The directory holding initdb/pg_ctl, or None when PostgreSQL is not installed."""
    candidates = [os.environ.get("ANONSQL_PG_BINDIR", "")]
    if shutil.which("pg_config"):
        out = subprocess.run(["pg_config", "--bindir"], capture_output=True, text=True)
        candidates.append(out.stdout.strip())
    candidates += sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)
    if shutil.which("initdb"):
        candidates.append(str(Path(shutil.which("initdb")).parent))
    for c in candidates:
        if c and (Path(c) / "initdb").exists() and (Path(c) / "pg_ctl").exists():
            return Path(c)
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class TempPostgres:
    """`with TempPostgres() as url:` gives a postgresql:// URL to a fresh, empty server."""

    def __init__(self, bindir: Path | None = None):
        self.bindir = bindir or find_bindir()
        if self.bindir is None:
            raise RuntimeError("PostgreSQL server binaries (initdb, pg_ctl) not found")
        self.port = _free_port()
        self.url = f"postgresql://anonsql@127.0.0.1:{self.port}/postgres"
        self._root: str | None = None

    def _run(self, *args: str) -> None:
        cmd = [str(self.bindir / args[0]), *args[1:]]
        if os.geteuid() == 0:
            cmd = ["runuser", "-u", UNPRIVILEGED_USER, "--", *cmd]
        done = subprocess.run(cmd, capture_output=True, text=True, cwd=self._root)
        if done.returncode:
            raise RuntimeError(f"{args[0]} failed: {done.stderr.strip() or done.stdout.strip()}")

    def start(self) -> str:
        self._root = tempfile.mkdtemp(prefix="anonsql-pg-")
        if os.geteuid() == 0:
            shutil.chown(self._root, user=UNPRIVILEGED_USER)
        data = os.path.join(self._root, "data")
        self._run("initdb", "-D", data, "-U", "anonsql", "--auth=trust",
                  "--encoding=UTF8", "--locale=C", "--no-sync")
        opts = (f"-p {self.port} -k {self._root} -c listen_addresses=127.0.0.1 "
                "-c fsync=off -c synchronous_commit=off -c full_page_writes=off")
        self._run("pg_ctl", "-D", data, "-o", opts, "-l", os.path.join(self._root, "log"),
                  "-w", "-t", "60", "start")
        return self.url

    def stop(self) -> None:
        if self._root is None:
            return
        try:
            self._run("pg_ctl", "-D", os.path.join(self._root, "data"), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self._root, ignore_errors=True)
            self._root = None

    def __enter__(self) -> str:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc) -> None:
        self.stop()
