"""Locks in the catalog's database: a row per table (the row is the lock in any SQL database), and on
PostgreSQL a session advisory lock that dies with its connection, the row describing the holder."""

from __future__ import annotations

import contextlib
import time
from dataclasses import replace
from typing import Any

from .holder import Found, Holder, LockHeldError, UnlockError, Verdict, clear_dead, judge, lock_key, refusal

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
        if backend is not None and (row := self._row(found.name)) is not None:
            # its session has ended, so it beats no more; a beat that landed since it was found changed only the
            # heartbeat of its row: the same run (by its token) is still the one taken over
            now = self._found(found.name, row)
            if now.holder is not None and now.holder.token == found.holder.token:
                found = now
        return super().remove(found, force=force)

    def close(self) -> None:
        if self._session is not None:
            with contextlib.suppress(Exception):
                self._session.invalidate()  # never back to the pool: a pooled session would keep any lock it held
            self._session = None
