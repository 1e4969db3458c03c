"""Who holds a table's lock, and whether the holder is alive: the holder's record (host, pid, command, since,
heartbeat and its interval), the verdict on it, the errors a run gets, and the protocol every store keeps."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import socket
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from tablepolicy.compiler import jsontext
from tablepolicy.compiler.errors import TablePolicyError

HEARTBEAT_ENV = "TABLEPOLICY_LOCK_HEARTBEAT"
DEFAULT_HEARTBEAT_SECONDS = 15.0
MIN_HEARTBEAT_SECONDS = 0.1
STALE_AFTER_BEATS = 4
LEGACY_TTL_SECONDS = 3600  # locks written before heartbeats existed: judged by pid and age, as they were
LOCK_FILE_BYTES = 1024  # lock files are rewritten in place at one length, so a reader never sees a torn one
KEY_PREFIX = b"tablepolicy.lock\0"


class LockHeldError(TablePolicyError):
    """Another run holds a lock on a table of this run."""


class LockLostError(TablePolicyError):
    """The run's lock was taken over while it ran (``unlock --force``, or a connection lost on PostgreSQL)."""


class LockSettingError(TablePolicyError):
    """TABLEPOLICY_LOCK_HEARTBEAT holds something that is not a usable interval."""


class UnlockError(TablePolicyError):
    """unlock could not remove the lock it showed."""


def heartbeat_seconds() -> float:
    """The heartbeat interval: 15 s, or shorter by ``TABLEPOLICY_LOCK_HEARTBEAT`` (tests, impatient operators)."""
    text = os.environ.get(HEARTBEAT_ENV, "").strip()
    if not text:
        return DEFAULT_HEARTBEAT_SECONDS
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not MIN_HEARTBEAT_SECONDS <= value <= DEFAULT_HEARTBEAT_SECONDS:
        raise LockSettingError(f"{HEARTBEAT_ENV}={text!r}: give the lock heartbeat in seconds, from "
                               f"{MIN_HEARTBEAT_SECONDS} to {DEFAULT_HEARTBEAT_SECONDS:g} (default), or unset it")
    return value


def lock_key(name: str) -> int:
    """The table's advisory lock key: the same signed 64-bit number in every process on every host (a hash of
    the name, not Python's salted ``hash()``).

    >>> lock_key("shop.orders") == lock_key("shop.orders") != lock_key("shop.order")
    True
    """
    digest = hashlib.sha256(KEY_PREFIX + name.encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def _command() -> str:
    """``tablepolicy apply``: the program and its subcommand only (other arguments may carry credentials)."""
    words = [word for word in sys.argv[1:2] if re.fullmatch(r"[a-z][a-z-]{0,30}", word)]
    return " ".join(["tablepolicy", *words]) if words else "tablepolicy"


def utc(seconds: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(seconds))


def ago(seconds: float) -> str:
    seconds = max(0.0, seconds)
    if seconds < 120:
        return f"{seconds:.0f}s ago"
    minutes = int(seconds // 60)
    return f"{minutes // 60}h {minutes % 60}m ago" if minutes >= 60 else f"{minutes}m ago"


@dataclass(frozen=True)
class Holder:
    """Who holds a lock. ``interval`` None: written by a tablepolicy before heartbeats (no ``heartbeat``)."""

    table: str
    host: str
    pid: int
    command: str
    since: float
    heartbeat: float
    interval: float | None
    token: str
    session: int | None = None  # the PostgreSQL backend pid holding the advisory lock

    @classmethod
    def me(cls, table: str, interval: float, token: str) -> Holder:
        now = time.time()
        return cls(table, socket.gethostname(), os.getpid(), _command(), now, now, interval, token)

    def to_json(self) -> str:
        return json.dumps({"table": self.table, "host": self.host, "pid": self.pid, "command": self.command,
                           "since": round(self.since, 3), "heartbeat": round(self.heartbeat, 3),
                           "interval": self.interval, "token": self.token, "session": self.session},
                          sort_keys=True)

    @classmethod
    def from_json(cls, text: str, table: str) -> Holder:
        """Raises ValueError for text that is not a holder."""
        data = jsontext.loads(text)
        if not isinstance(data, dict):
            raise ValueError("not an object")
        since = float(data.get("since", 0))
        interval = data.get("interval")
        session = data.get("session")
        return cls(str(data.get("table", table)), str(data.get("host", "?")), int(data.get("pid", 0)),
                   str(data.get("command", "")), since, float(data.get("heartbeat", since)),
                   float(interval) if interval is not None else None, str(data.get("token", "")),
                   int(session) if session is not None else None)

    def describe(self, now: float) -> str:
        """``pid 4242 on runner-7 (tablepolicy maintain) since 2026-05-01 10:00:00 UTC, last heartbeat 3s ago``."""
        what = f" ({self.command})" if self.command else ""
        beat = f", last heartbeat {ago(now - self.heartbeat)}" if self.interval is not None else ""
        return f"pid {self.pid} on {self.host}{what} since {utc(self.since)}{beat}"

    def activity(self) -> str:
        """How a refusal names what the holder does: ``is being applied by``."""
        verb = {"apply": "is being applied by", "maintain": "is being maintained by",
                "erase": "is locked for an erasure by"}
        return verb.get(self.command.removeprefix("tablepolicy").strip(), "is locked by")


@dataclass(frozen=True)
class Verdict:
    alive: bool
    reason: str


def judge(holder: Holder, now: float) -> Verdict:
    """Is the holder of a heartbeat lock (file or row) still there?"""
    if holder.host == socket.gethostname() and holder.pid > 0 and not _pid_exists(holder.pid):
        return Verdict(False, f"pid {holder.pid} is gone from {holder.host}")
    if holder.interval is None:  # an older tablepolicy's lock: no heartbeat, a one-hour TTL from its start
        age = now - holder.since
        return Verdict(age <= LEGACY_TTL_SECONDS, f"a lock without heartbeat, {ago(age)} (expires after 1h)")
    window = holder.interval * STALE_AFTER_BEATS
    age = now - holder.heartbeat
    return Verdict(age <= window, f"its heartbeat is {age:.0f}s old; the holder beats every {holder.interval:g}s "
                                  f"and counts as dead after {window:g}s without one")


def _pid_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    with contextlib.suppress(OSError, IndexError):  # a zombie (killed, not yet reaped) holds nothing
        if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
            return False
    return True


@dataclass(frozen=True)
class Found:
    """A lock as read from its store: ``raw`` is exactly what was read, so removing it is a compare-and-swap."""

    name: str
    holder: Holder | None  # None: a PostgreSQL session holds the advisory lock but wrote no row (yet)
    raw: str
    verdict: Verdict


def refusal(name: str, found: Found, now: float) -> LockHeldError:
    who = (f"{found.holder.activity()} {found.holder.describe(now)}" if found.holder is not None
           else f"is locked by a run that left no readable description of itself ({found.verdict.reason})")
    return LockHeldError(f"table {name} {who}; wait for it to finish, or, if that run is dead, "
                         f"`tablepolicy unlock {name}` shows the holder and takes its lock over")


def clear_dead(store: LockStore, name: str) -> None:
    """Before taking a lock someone holds: refuse if its holder is alive, else remove exactly that lock (a
    holder that beats in between keeps it, and the caller tries again)."""
    found = store.find(name)
    if found is not None and found.verdict.alive:
        raise refusal(name, found, time.time()) from None
    if found is not None:
        store.remove(found, force=False)


class LockStore(Protocol):
    where: str  # where the locks live, for messages: "lock files in /x/.lake"

    def acquire(self, name: str, me: Holder) -> Holder: ...
    def refresh(self, name: str, old: Holder, new: Holder) -> bool: ...  # False: the lock is no longer ours
    def release(self, name: str, me: Holder) -> None: ...
    def find(self, name: str) -> Found | None: ...
    def remove(self, found: Found, *, force: bool) -> bool: ...  # False: it changed since it was found
    def names(self) -> list[str]: ...
    def close(self) -> None: ...
