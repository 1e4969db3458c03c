"""A throwaway PostgreSQL server for the JDBC catalog tests: loopback only, a free port, a temporary
data directory, stopped and removed afterwards. Debian's binaries; as root it runs as ``postgres``."""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path


def _bin(name: str) -> str:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    if not found:
        raise RuntimeError(f"PostgreSQL's {name} is missing: make test installs Debian's postgresql package")
    return found[-1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _as_postgres(cmd: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *cmd] if os.geteuid() == 0 else cmd


@contextlib.contextmanager
def postgres_server() -> Iterator[str]:
    """Yields a SQLAlchemy URL ``postgresql+psycopg2://tp:tp@127.0.0.1:PORT/catalog``."""
    root = Path(tempfile.mkdtemp(prefix="tp-pg-"))
    data = root / "data"
    if os.geteuid() == 0:
        shutil.chown(root, "postgres")
    port = free_port()
    run = {"check": True, "capture_output": True, "text": True}
    subprocess.run(_as_postgres([_bin("initdb"), "-D", str(data), "-A", "trust", "-U", "tp", "--no-sync"]), **run)
    log = root / "server.log"
    subprocess.run(_as_postgres([
        _bin("pg_ctl"), "-D", str(data), "-l", str(log), "-w", "-t", "60", "start",
        "-o", f"-h 127.0.0.1 -p {port} -k {root} -c fsync=off -c max_connections=200",
    ]), **run)
    try:
        for _ in range(50):
            probe = subprocess.run([_bin("pg_isready"), "-h", "127.0.0.1", "-p", str(port)], capture_output=True)
            if probe.returncode == 0:
                break
            time.sleep(0.1)
        subprocess.run([_bin("createdb"), "-h", "127.0.0.1", "-p", str(port), "-U", "tp", "catalog"], **run)
        subprocess.run([_bin("psql"), "-h", "127.0.0.1", "-p", str(port), "-U", "tp", "-d", "catalog", "-c",
                        "ALTER USER tp PASSWORD 'tp'"], **run)
        yield f"postgresql+psycopg2://tp:tp@127.0.0.1:{port}/catalog"
    finally:
        subprocess.run(_as_postgres([_bin("pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"]),
                       capture_output=True, check=False)
        shutil.rmtree(root, ignore_errors=True)
