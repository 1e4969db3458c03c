"""Flag values checked before any work starts: where outputs go, which Spark master to use.

Each problem is a FlagError naming the flag, so the user learns it in one line before a plan is made, a
JVM boots or anything in the catalog changes.
"""

from __future__ import annotations

import os
import re
import socket
from pathlib import Path

from tablepolicy.compiler.errors import TablePolicyError

MASTER_FORMS = re.compile(r"local(\[(\*|\d+)(,\d+)?\])?|local-cluster\[\d+,\d+,\d+\]|yarn|k8s://\S+|spark://\S+")
CONNECT_TIMEOUT_SECONDS = 5.0


class FlagError(TablePolicyError):
    """A flag's value cannot work; the message names the flag."""


def check_output(flag: str, path: Path | None) -> None:
    """An output file must be writable where it is asked for: not a folder, in a folder that exists."""
    if path is None:
        return
    folder = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise FlagError(f"{flag} {path}: is a directory; give a file path, e.g. {path / 'report.json'}")
    if not folder.is_dir():
        raise FlagError(f"{flag} {path}: folder {folder} does not exist; create it first")
    if not os.access(folder, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise FlagError(f"{flag} {path}: not writable")


def check_master(master: str, *, reach: bool) -> None:
    """A Spark master URL Spark accepts; with ``reach``, a standalone master must answer on its port."""
    if not MASTER_FORMS.fullmatch(master):
        raise FlagError(f"--spark-master {master!r}: not a Spark master URL; use local[N], spark://host:port, "
                        "yarn or k8s://https://host:port")
    if not reach or not master.startswith("spark://"):
        return
    for address in master.removeprefix("spark://").split(","):
        host, _, port = address.rpartition(":")
        if not host or not port.isdigit():
            raise FlagError(f"--spark-master {master!r}: a standalone master is spark://host:port")
        try:
            with socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_TIMEOUT_SECONDS):
                return
        except OSError as exc:
            reason = exc.strerror or type(exc).__name__
    raise FlagError(f"--spark-master {master!r}: no Spark master answers there ({reason}); start it or fix the URL")
