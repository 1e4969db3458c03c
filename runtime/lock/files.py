"""Locks as files (a SQLite catalog, or none): one fixed-length file per table, created exclusively,
rewritten in place by the heartbeat, removed by compare-and-swap."""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import secrets
import time
from pathlib import Path

from .holder import (
    DEFAULT_HEARTBEAT_SECONDS,
    LOCK_FILE_BYTES,
    STALE_AFTER_BEATS,
    Found,
    Holder,
    LockHeldError,
    Verdict,
    ago,
    clear_dead,
    judge,
)


def lock_file_name(name: str) -> str:
    """``lock-shop.orders.json``; a name a file system cannot carry (a slash, a control character, a length
    past its limit) gets a safe prefix and a hash of the whole name, so two tables never share a lock file.

    >>> lock_file_name("a/b" + "x" * 300)[:12]
    'lock-a_bxxxx'
    """
    if re.fullmatch(r"[\w.-]{1,100}", name, re.ASCII):
        return f"lock-{name}.json"
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"lock-{re.sub(r'[^A-Za-z0-9_.-]', '_', name)[:80]}-{digest}.json"


class FileStore:
    """Lock files. Created whole under a temporary name and linked into place (link fails if the name exists,
    so exactly one creator wins and no reader sees an empty lock); the holder keeps the file open and rewrites
    its heartbeat in place at a fixed length; a lock is removed by renaming it away and checking that what was
    renamed is what was judged."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.where = f"lock files in {directory}"
        self.files: dict[str, int] = {}  # table -> descriptor of the lock file this process created

    def _path(self, name: str) -> Path:
        return self.directory / lock_file_name(name)

    def acquire(self, name: str, me: Holder) -> Holder:
        self.directory.mkdir(parents=True, exist_ok=True)
        path = self._path(name)
        for _ in range(3):
            temporary = path.with_name(f".{path.name}.{me.token}.new")
            temporary.write_bytes(me.to_json().encode().ljust(LOCK_FILE_BYTES))
            try:
                os.link(temporary, path)
            except FileExistsError:
                clear_dead(self, name)
                continue
            else:
                self.files[name] = os.open(path, os.O_RDWR)
                return me
            finally:
                temporary.unlink(missing_ok=True)
        raise LockHeldError(f"could not take the lock on table {name} in {self.where}: it keeps changing hands")

    def refresh(self, name: str, old: Holder, new: Holder) -> bool:
        descriptor = self.files.get(name)
        try:
            if descriptor is None or os.fstat(descriptor).st_ino != os.stat(self._path(name)).st_ino:
                return False  # renamed away: taken over
        except FileNotFoundError:
            return False
        os.pwrite(descriptor, new.to_json().encode().ljust(LOCK_FILE_BYTES), 0)
        return True

    def release(self, name: str, me: Holder) -> None:
        descriptor = self.files.pop(name, None)
        if descriptor is None:
            return
        with contextlib.suppress(FileNotFoundError):
            if os.fstat(descriptor).st_ino == os.stat(self._path(name)).st_ino:
                self._path(name).unlink()
        os.close(descriptor)

    def find(self, name: str) -> Found | None:
        path = self._path(name)
        for attempt in range(5):
            try:
                raw = path.read_bytes().decode("utf-8", "replace")
            except FileNotFoundError:
                return None
            try:
                holder = Holder.from_json(raw, name)
            except (ValueError, TypeError):
                if attempt < 4:
                    time.sleep(0.05)
                    continue
                age = time.time() - path.stat().st_mtime
                window = DEFAULT_HEARTBEAT_SECONDS * STALE_AFTER_BEATS
                return Found(name, None, raw, Verdict(age <= window, f"an unreadable lock file, {ago(age)}"))
            return Found(name, holder, raw, judge(holder, time.time()))
        return None  # unreachable: the last attempt returns

    def remove(self, found: Found, *, force: bool) -> bool:
        path = self._path(found.name)
        aside = path.with_name(f".{path.name}.{secrets.token_hex(8)}.removed")
        try:
            os.rename(path, aside)
        except FileNotFoundError:
            return False
        if aside.read_bytes().decode("utf-8", "replace") == found.raw:
            aside.unlink()
            return True
        with contextlib.suppress(FileExistsError):  # its holder beat meanwhile: put it back
            os.link(aside, path)
        aside.unlink()
        return False

    def names(self) -> list[str]:
        tables = []
        for path in sorted(self.directory.glob("lock-*.json")):
            with contextlib.suppress(OSError, ValueError, TypeError):
                tables.append(Holder.from_json(path.read_text(encoding="utf-8", errors="replace"), "").table
                              or path.name.removeprefix("lock-").removesuffix(".json"))
        return tables

    def close(self) -> None:
        for descriptor in self.files.values():
            os.close(descriptor)
        self.files.clear()
