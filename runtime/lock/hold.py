"""Holding locks for a run: the store a catalog's runs share, all of a run's tables or none, and the heartbeat
thread that keeps them alive (and notices a takeover)."""

from __future__ import annotations

import contextlib
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..catalog.reader import CatalogReader
from .files import FileStore
from .holder import Holder, LockHeldError, LockLostError, LockSettingError, LockStore, heartbeat_seconds
from .objects import LOCK_LOCATION, ObjectStore, S3Settings
from .rows import AdvisoryStore, RowStore


def lock_engine(reader: CatalogReader) -> object | None:
    """The catalog database for locks, unless it is SQLite (lock files beside it instead)."""
    engine = getattr(reader.catalog, "engine", None)
    return engine if engine is not None and engine.url.get_backend_name() != "sqlite" else None


def lock_store(reader: CatalogReader, fallback_dir: Path) -> LockStore:
    """The store every run against the same catalog shares: PostgreSQL advisory locks, rows in another SQL
    database, files beside a SQLite catalog's database; for other catalogs (REST, Glue, Hive) objects at the
    definition's ``tablepolicy.lock-location`` (S3 conditional writes), else files in ``fallback_dir`` (seen by
    the runs of this work tree only: doctor says so)."""
    engine = lock_engine(reader)
    sqlite = getattr(reader.catalog, "engine", None)
    location = reader.config.properties.get(LOCK_LOCATION)
    if sqlite is None and location:
        try:
            return ObjectStore(S3Settings.of(location, reader.config.properties))
        except ValueError as exc:
            raise LockSettingError(f"{reader.config.describe()}: {exc}") from None
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


# How long a run waits for a table another run holds (``--lock-timeout``): 0, refused at once (the default).
LOCK_WAIT: ContextVar[float] = ContextVar("tablepolicy_lock_wait", default=0.0)
POLL_SECONDS = 2.0  # how often a waiting run asks again


@contextlib.contextmanager
def waiting_for_locks(seconds: float) -> Iterator[None]:
    """Within the block, a run whose table another run holds waits up to ``seconds`` for it (``--lock-timeout``),
    asking again every POLL_SECONDS, before it is refused with who holds it."""
    token = LOCK_WAIT.set(max(0.0, seconds))
    try:
        yield
    finally:
        LOCK_WAIT.reset(token)


def acquire_waiting(store: LockStore, name: str, me: Holder, wait: float,
                    sleep: Callable[[float], None] = time.sleep, clock: Callable[[], float] = time.monotonic) -> Holder:
    """``store.acquire``, asked again while another run holds the lock, until ``wait`` seconds have passed."""
    deadline = clock() + wait
    while True:
        try:
            return store.acquire(name, me)
        except LockHeldError as exc:
            left = deadline - clock()
            if left <= 0:
                if wait > 0:
                    raise LockHeldError(f"{exc} (waited {wait:g}s: --lock-timeout)") from None
                raise
            sleep(min(POLL_SECONDS, left))


@contextlib.contextmanager
def hold(store: LockStore, names: list[str], *, sleep: Callable[[float], None] = time.sleep) -> Iterator[None]:
    """Hold a lock on every table in ``names`` (sorted, all or none) for the block, beating meanwhile; a lock
    another run holds is waited for as ``waiting_for_locks`` says (``sleep``: how a wait passes)."""
    interval = heartbeat_seconds()
    token = secrets.token_hex(8)
    held: dict[str, Holder] = {}
    heart: _Heartbeat | None = None
    wait = LOCK_WAIT.get()
    try:
        for name in sorted(set(names)):
            held[name] = acquire_waiting(store, name, Holder.me(name, interval, token), wait, sleep)
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
