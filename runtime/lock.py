"""One run at a time per table (apply, maintain and erase share the locks), with locks that die with their
holder instead of outliving it by a fixed TTL.

Three stores, chosen by the catalog:

- PostgreSQL catalog: a session-level ``pg_try_advisory_lock`` per table, held on one dedicated connection
  for the run. PostgreSQL drops it the moment that connection closes, so a holder killed by SIGKILL or a
  crashed runner releases it at once (a dead host: within the TCP keepalive window this connection sets,
  about a minute). A row in ``tablepolicy_locks`` beside Iceberg's tables describes the holder (host,
  pid, command, since, heartbeat) for error messages and ``tablepolicy unlock``; it is not the lock.
- Another SQL database: the row is the lock (an INSERT on a primary key is atomic), kept alive by a
  heartbeat.
- SQLite catalog or no SQL catalog: a lock file (beside the SQLite database, so every run against it
  shares the files wherever it starts), kept alive by a heartbeat. SQLite gets files rather than rows so no
  second writer contends with Spark's JDBC connection for the database file.

A heartbeat thread refreshes the holder's ``heartbeat`` every interval (15 s; ``TABLEPOLICY_LOCK_HEARTBEAT``
shortens it) and the lock records its own interval, so whoever reads it judges it by the holder's pace: it
is dead once its heartbeat is older than ``STALE_AFTER_BEATS`` intervals (or, on the holder's own host, once
its pid is gone). A lock is only ever removed by a compare-and-swap on exactly what was judged dead, so a
holder that beats in between keeps it. A holder whose lock was taken over (``unlock --force``) notices at
its next heartbeat and its run ends with LockLostError.

Wall clocks of the hosts are compared (heartbeat against now): a skew of a few seconds is harmless against
a 60 s window; hosts without NTP are not.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import secrets
import socket
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

from compiler import jsontext
from compiler.errors import TablePolicyError
from runtime.catalog.reader import CatalogReader

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


def lock_engine(reader: CatalogReader) -> object | None:
    """The catalog database for locks, unless it is SQLite (lock files beside it instead)."""
    engine = getattr(reader.catalog, "engine", None)
    return engine if engine is not None and engine.url.get_backend_name() != "sqlite" else None


def lock_store(reader: CatalogReader, fallback_dir: Path) -> LockStore:
    """The store every run against the same catalog shares: PostgreSQL advisory locks, rows in another SQL
    database, files beside a SQLite catalog's database, else files in ``fallback_dir``."""
    engine = lock_engine(reader)
    sqlite = getattr(reader.catalog, "engine", None)
    directory = fallback_dir
    if engine is None and sqlite is not None and sqlite.url.database:
        directory = Path(sqlite.url.database).resolve().parent
    return store_for(engine, directory)


def store_for(engine: Any | None, directory: Path) -> LockStore:
    if engine is None:
        return FileStore(directory)
    if engine.url.get_backend_name() == "postgresql":
        return AdvisoryStore(engine)
    return RowStore(engine)


def catalog_locks(
    reader: CatalogReader, names: list[str], fallback_dir: Path
) -> contextlib.AbstractContextManager[None]:
    """The locks of a run (apply, maintain, erase) on ``names``, in the store the catalog's runs share."""
    return hold(lock_store(reader, fallback_dir), names)


def table_locks(engine: Any | None, fallback_dir: Path, names: list[str]) -> contextlib.AbstractContextManager[None]:
    return hold(store_for(engine, fallback_dir), names)


@contextlib.contextmanager
def hold(store: LockStore, names: list[str]) -> Iterator[None]:
    """Hold a lock on every table in ``names`` (sorted, all or none) for the block, beating meanwhile."""
    interval = heartbeat_seconds()
    token = secrets.token_hex(8)
    held: dict[str, Holder] = {}
    heart: _Heartbeat | None = None
    try:
        for name in sorted(set(names)):
            held[name] = store.acquire(name, Holder.me(name, interval, token))
        heart = _Heartbeat(store, held, interval)
        heart.start()
        yield
    finally:
        if heart is not None:
            heart.stop()
        for name, me in held.items():
            if heart is None or name not in heart.lost:
                with contextlib.suppress(Exception):  # a lock we cannot release dies with us or goes stale
                    store.release(name, me)
        store.close()
    if heart is not None and heart.lost:
        raise LockLostError(f"the lock on {', '.join(sorted(heart.lost))} was taken over while this run held it "
                            "(tablepolicy unlock --force, or the lock's connection was lost): another run may "
                            "have changed the table meanwhile; check it before running again")


class _Heartbeat(threading.Thread):
    """Refreshes every held lock each interval; a lock it cannot refresh is recorded as lost."""

    def __init__(self, store: LockStore, held: dict[str, Holder], interval: float) -> None:
        super().__init__(name="tablepolicy-lock-heartbeat", daemon=True)
        self.store, self.held, self.interval = store, held, interval
        self.lost: set[str] = set()
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.wait(self.interval):
            self.beat()

    def beat(self) -> None:
        now = time.time()
        for name, old in list(self.held.items()):
            if name in self.lost:
                continue
            new = replace(old, heartbeat=now)
            try:
                kept = self.store.refresh(name, old, new)
            except Exception:
                kept = False
            if kept:
                self.held[name] = new
            else:
                self.lost.add(name)

    def stop(self) -> None:
        """Stop beating, with one last beat: a run that was frozen past the stale window (and taken over)
        learns it here even if its thread never beat since."""
        self.stopped.set()
        self.join()
        self.beat()


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


CREATE_ROWS = ("CREATE TABLE IF NOT EXISTS tablepolicy_locks "
               "(name VARCHAR(1000) PRIMARY KEY, owner VARCHAR(1000) NOT NULL)")


class RowStore:
    """Rows of ``tablepolicy_locks`` in the catalog database; the row is the lock."""

    def __init__(self, engine: Any) -> None:
        from sqlalchemy.exc import IntegrityError, ProgrammingError

        self.engine = engine
        self.where = f"table tablepolicy_locks of the catalog database ({engine.url.get_backend_name()})"
        for _ in range(2):  # two first runs may create the table at once: one of them wins
            with contextlib.suppress(IntegrityError, ProgrammingError), engine.begin() as connection:
                connection.execute(self._text(CREATE_ROWS))
                break

    @staticmethod
    def _text(sql: str) -> Any:
        from sqlalchemy import text

        return text(sql)

    def _row(self, name: str) -> str | None:
        with self.engine.connect() as connection:
            row = connection.execute(self._text("SELECT owner FROM tablepolicy_locks WHERE name = :n"),
                                     {"n": name}).first()
        return str(row[0]) if row is not None else None

    def acquire(self, name: str, me: Holder) -> Holder:
        from sqlalchemy.exc import IntegrityError

        for _ in range(3):
            try:
                with self.engine.begin() as connection:
                    connection.execute(self._text("INSERT INTO tablepolicy_locks (name, owner) VALUES (:n, :o)"),
                                       {"n": name, "o": me.to_json()})
                return me
            except IntegrityError:
                clear_dead(self, name)
        raise LockHeldError(f"could not take the lock on table {name} in {self.where}: it keeps changing hands")

    def refresh(self, name: str, old: Holder, new: Holder) -> bool:
        with self.engine.begin() as connection:
            swapped = connection.execute(
                self._text("UPDATE tablepolicy_locks SET owner = :new WHERE name = :n AND owner = :old"),
                {"n": name, "old": old.to_json(), "new": new.to_json()})
        return bool(swapped.rowcount == 1)

    def release(self, name: str, me: Holder) -> None:
        with self.engine.begin() as connection:
            connection.execute(self._text("DELETE FROM tablepolicy_locks WHERE name = :n AND owner = :o"),
                               {"n": name, "o": me.to_json()})

    def _found(self, name: str, raw: str) -> Found:
        try:
            holder = Holder.from_json(raw, name)
        except (ValueError, TypeError):
            return Found(name, None, raw, Verdict(False, "an unreadable lock row"))
        return Found(name, holder, raw, judge(holder, time.time()))

    def find(self, name: str) -> Found | None:
        raw = self._row(name)
        return self._found(name, raw) if raw is not None else None

    def remove(self, found: Found, *, force: bool) -> bool:
        with self.engine.begin() as connection:
            removed = connection.execute(
                self._text("DELETE FROM tablepolicy_locks WHERE name = :n AND owner = :o"),
                {"n": found.name, "o": found.raw})
        return bool(removed.rowcount == 1)

    def names(self) -> list[str]:
        with self.engine.connect() as connection:
            return sorted(str(r[0]) for r in connection.execute(self._text("SELECT name FROM tablepolicy_locks")))

    def close(self) -> None:
        pass


# The server notices a vanished client host after idle + interval * count seconds instead of the kernel's
# two hours; these are ordinary per-session settings any role may change.
KEEPALIVES = ("SET tcp_keepalives_idle = 30", "SET tcp_keepalives_interval = 10", "SET tcp_keepalives_count = 3")
HOLDING_SESSION = ("SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 1 "
                   "AND classid::bigint = :hi AND objid::bigint = :lo "
                   "AND database = (SELECT oid FROM pg_database WHERE datname = current_database())")


class AdvisoryStore(RowStore):
    """PostgreSQL: the lock is a session-level advisory lock on one dedicated connection; the row only says who
    holds it. A row whose advisory lock nobody holds is a dead run's."""

    def __init__(self, engine: Any) -> None:
        super().__init__(engine)
        self.where = "PostgreSQL advisory locks (holders in table tablepolicy_locks of the catalog database)"
        self._session: Any = None
        self._backend = 0

    def _connection(self) -> Any:
        if self._session is None:
            self._session = self.engine.connect().execution_options(isolation_level="AUTOCOMMIT")
            for statement in KEEPALIVES:
                self._session.execute(self._text(statement))
            self._backend = int(self._session.execute(self._text("SELECT pg_backend_pid()")).scalar_one())
        return self._session

    def acquire(self, name: str, me: Holder) -> Holder:
        session = self._connection()
        key = lock_key(name)
        if not session.execute(self._text("SELECT pg_try_advisory_lock(:k)"), {"k": key}).scalar_one():
            found = self.find(name)
            raise refusal(name, found or Found(name, None, "?", Verdict(True, "another PostgreSQL session holds its "
                                                                               "advisory lock")), time.time())
        mine = replace(me, session=self._backend)
        raw = self._row(name)
        if raw is not None:
            found = self._found(name, raw)
            if found.holder is not None and found.holder.interval is None and found.verdict.alive:
                session.execute(self._text("SELECT pg_advisory_unlock(:k)"), {"k": key})
                raise refusal(name, found, time.time())  # an older tablepolicy's row lock, still in force
        session.execute(self._text("INSERT INTO tablepolicy_locks (name, owner) VALUES (:n, :o) "
                                   "ON CONFLICT (name) DO UPDATE SET owner = EXCLUDED.owner"),
                        {"n": name, "o": mine.to_json()})
        return mine

    def refresh(self, name: str, old: Holder, new: Holder) -> bool:
        # through the lock's own connection: a broken connection has lost the lock, and the beat keeps the
        # session from counting as idle
        swapped = self._connection().execute(
            self._text("UPDATE tablepolicy_locks SET owner = :new WHERE name = :n AND owner = :old"),
            {"n": name, "old": old.to_json(), "new": new.to_json()})
        return bool(swapped.rowcount == 1)

    def release(self, name: str, me: Holder) -> None:
        session = self._connection()
        session.execute(self._text("DELETE FROM tablepolicy_locks WHERE name = :n AND owner = :o"),
                        {"n": name, "o": me.to_json()})
        session.execute(self._text("SELECT pg_advisory_unlock(:k)"), {"k": lock_key(name)})

    def _holding_session(self, name: str) -> int | None:
        key = lock_key(name) & 0xFFFFFFFFFFFFFFFF
        with self.engine.connect() as connection:
            row = connection.execute(self._text(HOLDING_SESSION), {"hi": key >> 32, "lo": key & 0xFFFFFFFF}).first()
        return int(row[0]) if row is not None else None

    def find(self, name: str) -> Found | None:
        raw = self._row(name)
        backend = self._holding_session(name)
        if raw is None:
            return None if backend is None else Found(
                name, None, str(backend), Verdict(True, f"PostgreSQL session {backend} holds its advisory lock"))
        found = self._found(name, raw)
        if found.holder is not None and found.holder.interval is None:
            return found  # an older tablepolicy's row lock: judged as it was
        if backend is None:
            return replace(found, verdict=Verdict(False, "no PostgreSQL session holds its advisory lock: the "
                                                         "holder's connection is gone"))
        return replace(found, verdict=Verdict(True, f"PostgreSQL session {backend} holds its advisory lock"))

    def remove(self, found: Found, *, force: bool) -> bool:
        backend = self._holding_session(found.name)
        if backend is not None:
            if not force:
                return False
            from sqlalchemy.exc import DBAPIError

            try:
                with self.engine.connect() as connection:
                    connection.execute(self._text("SELECT pg_terminate_backend(:p)"), {"p": backend})
            except DBAPIError as exc:
                raise UnlockError(f"cannot end PostgreSQL session {backend}, which holds the lock on {found.name}: "
                                  f"{str(exc.orig).strip().splitlines()[0]}; ask a database administrator "
                                  f"to run SELECT pg_terminate_backend({backend})") from None
            deadline = time.time() + 10
            while self._holding_session(found.name) is not None:
                if time.time() > deadline:
                    raise UnlockError(f"PostgreSQL session {backend} still holds the lock on {found.name} 10s "
                                      "after it was asked to end")
                time.sleep(0.1)
        if found.holder is None:
            return True  # only the session held it: ending it removed the lock
        return super().remove(found, force=force)

    def close(self) -> None:
        if self._session is not None:
            with contextlib.suppress(Exception):
                self._session.invalidate()  # never back to the pool: a pooled session would keep any lock it held
            self._session = None
