"""One apply at a time per table. In a SQL catalog the lock is a row in ``tablepolicy_locks`` beside
Iceberg's own tables (an INSERT on a primary key is atomic on SQLite and PostgreSQL); elsewhere a lock
file beside the journal. A lock whose holder process is gone, or older than its TTL, is taken over."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from compiler.errors import TablePolicyError
from runtime.catalog.reader import CatalogReader

TTL_SECONDS = 3600


class LockHeldError(TablePolicyError):
    """Another apply holds a lock on a table of this plan."""


def holder() -> dict[str, Any]:
    return {"host": socket.gethostname(), "pid": os.getpid(), "since": time.time()}


def _alive(owner: dict[str, Any]) -> bool:
    if time.time() - float(owner.get("since", 0)) > TTL_SECONDS:
        return False
    if owner.get("host") != socket.gethostname():
        return True  # cannot check another machine's processes: trust the TTL
    try:
        os.kill(int(owner["pid"]), 0)
    except ProcessLookupError:
        return False
    except (PermissionError, KeyError, ValueError):
        return True
    return True


def describe(owner: dict[str, Any]) -> str:
    since = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(float(owner.get("since", 0))))
    return f"pid {owner.get('pid')} on {owner.get('host')} since {since}"


def lock_engine(reader: CatalogReader) -> object | None:
    """The catalog database for lock rows: PostgreSQL. A SQLite catalog gets a lock file instead, so no
    second writer contends with Spark's JDBC connection for the database file."""
    engine = getattr(reader.catalog, "engine", None)
    return engine if engine is not None and engine.url.get_backend_name() != "sqlite" else None


def catalog_locks(
    reader: CatalogReader, names: list[str], fallback_dir: Path
) -> contextlib.AbstractContextManager[None]:
    """The locks every run against the same catalog shares (apply, maintain, erase): rows in a PostgreSQL
    catalog, files beside a SQLite catalog's database, else files in ``fallback_dir``."""
    engine = lock_engine(reader)
    sqlite = getattr(reader.catalog, "engine", None)
    directory = fallback_dir
    if engine is None and sqlite is not None and sqlite.url.database:
        directory = Path(sqlite.url.database).resolve().parent
    return table_locks(engine, directory, names)


@contextlib.contextmanager
def table_locks(engine: Any | None, fallback_dir: Path, names: list[str]) -> Iterator[None]:
    """Hold a lock on every table in ``names`` (sorted, all or none) for the duration of the block."""
    me = holder()
    acquire, release = (_sql_lock(engine) if engine is not None else _file_lock(fallback_dir))
    taken: list[str] = []
    try:
        for name in sorted(set(names)):
            acquire(name, me)
            taken.append(name)
        yield
    finally:
        for name in taken:
            release(name, me)


def _sql_lock(engine: Any) -> tuple[Any, Any]:
    from sqlalchemy import text
    from sqlalchemy.exc import IntegrityError

    with engine.begin() as connection:
        connection.execute(text("CREATE TABLE IF NOT EXISTS tablepolicy_locks "
                                "(name VARCHAR(1000) PRIMARY KEY, owner VARCHAR(1000) NOT NULL)"))

    def acquire(name: str, me: dict[str, Any]) -> None:
        for _ in range(2):
            try:
                with engine.begin() as connection:
                    connection.execute(text("INSERT INTO tablepolicy_locks (name, owner) VALUES (:n, :o)"),
                                       {"n": name, "o": json.dumps(me)})
                return
            except IntegrityError:
                with engine.begin() as connection:
                    row = connection.execute(text("SELECT owner FROM tablepolicy_locks WHERE name = :n"),
                                             {"n": name}).first()
                    owner = json.loads(row[0]) if row else {}
                    if row and _alive(owner):
                        raise LockHeldError(f"table {name} is being applied by {describe(owner)}; "
                                            "wait for it, or remove the stale lock if that process is gone") from None
                    connection.execute(text("DELETE FROM tablepolicy_locks WHERE name = :n AND owner = :o"),
                                       {"n": name, "o": row[0] if row else ""})
        raise LockHeldError(f"could not take the lock on table {name}")

    def release(name: str, me: dict[str, Any]) -> None:
        with engine.begin() as connection:
            connection.execute(text("DELETE FROM tablepolicy_locks WHERE name = :n AND owner = :o"),
                               {"n": name, "o": json.dumps(me)})

    return acquire, release


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


def _file_lock(directory: Path) -> tuple[Any, Any]:
    def path(name: str) -> Path:
        return directory / lock_file_name(name)

    def acquire(name: str, me: dict[str, Any]) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        for _ in range(2):
            try:
                with path(name).open("x", encoding="utf-8") as out:
                    out.write(json.dumps(me))
                return
            except FileExistsError:
                owner = json.loads(path(name).read_text(encoding="utf-8") or "{}")
                if _alive(owner):
                    raise LockHeldError(f"table {name} is being applied by {describe(owner)}") from None
                path(name).unlink(missing_ok=True)
        raise LockHeldError(f"could not take the lock on table {name}")

    def release(name: str, me: dict[str, Any]) -> None:
        with contextlib.suppress(FileNotFoundError, ValueError):
            if json.loads(path(name).read_text(encoding="utf-8")) == me:
                path(name).unlink()

    return acquire, release
