"""The erasure request ledger, kept with the catalog: two tables beside Iceberg's own.

``tablepolicy_erasure_ledger`` holds a row per catalog, request and table: received date, deadline, state
(pending / done / held / failed), a salted hash of the keys (never a key value), timestamps and the id of
the proof. ``tablepolicy_erasure_proofs`` holds each table proof of a run once, however many requests it
covers. In a PostgreSQL catalog both sit in the catalog's database beside Iceberg's ``iceberg_tables`` (as
``tablepolicy_locks`` does), so every checkout, CI runner and ``erase status`` sees the same ledger. A SQLite
catalog gets them in ``tablepolicy-erasure-ledger.db`` beside its database file, as it gets lock files
(runtime/lock.py): its writes never contend with the catalog's commits. (A write into the catalog's own file
between two of Spark's commits made Spark's next commit fail with SQLITE_BUSY_SNAPSHOT, seen in
tests/integration/test_erase_ledger.py, before every commit renewed its connections: runtime/spark/sqlite_pool.py.)

A catalog without a SQL database (REST, Glue, Hive, an in-memory SQLite), or one whose definition sets
``tablepolicy-ledger: table``, keeps the ledger as Iceberg tables in the catalog (runtime/lake_ledger.py), where
every runner sees it; a project file ``.tablepolicy/erasure-ledger.db`` an earlier version kept for such catalogs
is carried over once.
"""

from __future__ import annotations

import contextlib
import json
import re
import secrets
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Table, create_engine, inspect, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Engine

from tablepolicy.compiler import jsontext
from tablepolicy.compiler.erasure.ledger import Entry
from tablepolicy.compiler.errors import CatalogError

from .ledger_rows import ledger_table, metadata, proof_table
from .ledger_rows import parse_state as _state
from .ledger_rows import parse_time as _time
from .ledger_rows import row_of as _row
from .ledger_rows import stamp as _stamp

LEDGER_FILE = "erasure-ledger.db"
SQLITE_LEDGER_FILE = "tablepolicy-erasure-ledger.db"  # beside a SQLite catalog's database file
SQLITE_TIMEOUT_SECONDS = 30  # a concurrent erase holding the ledger file: wait, as the catalog's busy timeout does
# INSERT ... ON CONFLICT, as both dialects spell it (their Insert classes share the methods, not a base class)
_UPSERTS: dict[str, Callable[[Table], Any]] = {"sqlite": sqlite.insert, "postgresql": postgresql.insert}

@dataclass
class Ledger:
    engine: Engine
    catalog: str
    where: str  # "catalog database" or the ledger file, for the output
    note: str | None = None  # why the ledger is not kept with the catalog
    own_engine: bool = False  # an engine this ledger opened (a catalog's engine belongs to its reader)
    exists: bool = True  # False: nothing was ever recorded (and a read-only use created nothing)

    @staticmethod
    def open(catalog_engine: Engine | None, catalog: str, kind: str, project_dir: Path, *, create: bool) -> Ledger:
        """The ledger of ``catalog``: tables in its PostgreSQL database; a file beside its SQLite database; else a
        project file. Without ``create`` (status, dry runs) nothing is created: a ledger never written is empty."""
        backend = catalog_engine.url.get_backend_name() if catalog_engine is not None else None
        database = catalog_engine.url.database if catalog_engine is not None else None
        if catalog_engine is not None and backend == "postgresql":
            ledger = Ledger(catalog_engine, catalog, "the catalog database")
        else:
            note = None
            if backend == "sqlite" and database and database != ":memory:":
                path = Path(database).resolve().parent / SQLITE_LEDGER_FILE
            else:
                path = project_dir / LEDGER_FILE
                note = (f"catalog '{catalog}' ({kind}) has no PostgreSQL or SQLite database file to keep the erasure "
                        f"ledger with: it is kept in {path}; keep that file (a CI runner must restore it), or "
                        "re-runs redo done requests and status cannot see them")
            if not create and not path.exists():
                return Ledger(create_engine("sqlite://"), catalog, str(path), note, own_engine=True, exists=False)
            path.parent.mkdir(parents=True, exist_ok=True)
            ledger = Ledger(create_engine(f"sqlite:///{path}", connect_args={"timeout": SQLITE_TIMEOUT_SECONDS}),
                            catalog, str(path), note, own_engine=True)
        try:
            if create:
                metadata.create_all(ledger.engine, checkfirst=True)
            else:
                ledger.exists = inspect(ledger.engine).has_table(ledger_table.name)
        except Exception as exc:  # a read-only database, a permission: one line, no traceback
            first = re.sub(r"^\((?:[\w.]+)\) ", "", str(exc).splitlines()[0] if str(exc) else "it failed")
            raise CatalogError(f"cannot {'create' if create else 'read'} the erasure ledger in {ledger.where}: "
                               f"{first}; check that {ledger.where} can be {'written' if create else 'read'} by this "
                               "user (or, for the catalog database, that the user may create tables there)") from None
        return ledger

    def entries(self, tables: Iterable[str] | None = None) -> dict[tuple[str, str], Entry]:
        """Every entry of this catalog (of ``tables`` only, when given), by (request, table)."""
        if not self.exists:
            return {}
        query = select(ledger_table, proof_table.c.proof).outerjoin(
            proof_table, proof_table.c.proof_id == ledger_table.c.proof_id).where(
            ledger_table.c.catalog_name == self.catalog)
        if tables is not None:
            query = query.where(ledger_table.c.table_name.in_(sorted(set(tables))))
        proofs: dict[str, Mapping[str, Any]] = {}  # one proof covers many requests: parsed once
        found = {}
        with self.engine.connect() as connection:
            for row in connection.execute(query).mappings():
                proof = None
                if row["proof_id"] is not None:
                    proof = proofs.get(row["proof_id"])
                    if proof is None:  # once per proof (setdefault parsed it again for every row)
                        proof = proofs[row["proof_id"]] = jsontext.loads(row["proof"])
                entry = Entry(row["request_id"], row["table_name"], date.fromisoformat(row["received"]),
                              date.fromisoformat(row["deadline"]), _state(row["state"]), row["keys_hash"], proof,
                              _time(row["updated"]), _time(row["done_at"]))
                found[(entry.request, entry.table)] = entry
        return found

    def record_pending(self, entries: list[Entry], now: datetime) -> None:
        """Note requests a run is about to erase; an entry already there keeps its state."""
        upsert = _UPSERTS[self.engine.url.get_backend_name()]
        if not entries:
            return
        stamp = _stamp(now)
        with self.engine.begin() as connection:  # one statement, compiled once, run for every row (executemany)
            connection.execute(upsert(ledger_table).on_conflict_do_nothing(),
                               [_row(self.catalog, e, stamp, None) for e in entries])

    def record(self, entries: list[Entry], proof: Mapping[str, Any], now: datetime) -> None:
        """The outcome of one table's erasure for its requests, with its proof (no key values)."""
        if not entries:
            return
        upsert = _UPSERTS[self.engine.url.get_backend_name()]
        proof_id, stamp = uuid.uuid4().hex, _stamp(now)
        with self.engine.begin() as connection:
            connection.execute(proof_table.insert().values(
                proof_id=proof_id, catalog_name=self.catalog, table_name=entries[0].table, recorded=stamp,
                proof=json.dumps(proof, sort_keys=True)))
            statement = upsert(ledger_table)
            excluded = statement.excluded
            connection.execute(statement.on_conflict_do_update(
                index_elements=[ledger_table.c.catalog_name, ledger_table.c.request_id, ledger_table.c.table_name],
                set_={"state": excluded.state, "keys_hash": excluded.keys_hash, "proof_id": excluded.proof_id,
                      "deadline": excluded.deadline, "updated": excluded.updated, "done_at": excluded.done_at}),
                [_row(self.catalog, e, stamp, proof_id) for e in entries])

    def close(self) -> None:
        if self.own_engine:
            self.engine.dispose()


LAKE_SETTING = "tablepolicy-ledger"  # a catalog property: "table" keeps a SQL catalog's ledger in Iceberg tables too


def in_lake(reader: Any) -> bool:
    """Whether the catalog keeps the ledger as Iceberg tables (runtime/lake_ledger.py): a catalog without a SQL
    database file or server (REST, Glue, Hive, in-memory SQLite), or one whose definition asks for it."""
    engine = getattr(reader.catalog, "engine", None)
    if str(reader.config.properties.get(LAKE_SETTING, "")).strip().lower() == "table":
        return True
    if engine is None:
        return True
    return engine.url.get_backend_name() == "sqlite" and engine.url.database in (None, "", ":memory:")


@contextlib.contextmanager
def opened_ledger(reader: Any, project_dir: Path, *, create: bool) -> Iterator[Any]:
    """The ledger of the catalog ``reader`` reads (a CatalogReader): SQL tables beside a SQL catalog's, else Iceberg
    tables in the catalog. A project file ledger left by an earlier version is carried over by the first run that
    writes (status reads it meanwhile, and says so)."""
    if in_lake(reader):
        from .lake_ledger import LakeLedger

        old = project_dir / LEDGER_FILE
        lake = LakeLedger(reader.catalog, reader.config.name, create=create)
        if create:
            lake.carry_over(old)
        elif old.is_file():
            engine = create_engine(f"sqlite:///{old}")
            ledger = Ledger(engine, reader.config.name, str(old),
                            f"{old} is an erasure ledger not carried over into {lake.where} yet: the next erase "
                            "carries it over; until then it is read from there", own_engine=True,
                            exists=inspect(engine).has_table(ledger_table.name))
            try:
                yield ledger
            finally:
                ledger.close()
            return
        yield lake
        return
    ledger = Ledger.open(getattr(reader.catalog, "engine", None), reader.config.name, reader.config.kind,
                         project_dir, create=create)
    try:
        yield ledger
    finally:
        ledger.close()


def new_salt() -> str:
    return secrets.token_hex(16)


def now_utc() -> datetime:
    return datetime.now(UTC).replace(microsecond=0)
