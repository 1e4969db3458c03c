"""The erasure ledger as Iceberg tables in the target catalog: what every runner on every machine sees.

A catalog without a SQL database of its own (REST, Glue, Hive, an in-memory SQLite) keeps the ledger in two
Iceberg tables of the namespace ``tablepolicy``, written through pyiceberg (no JVM): ``erasure_ledger`` (a row
per catalog, request and table, the columns of runtime/ledger.py's SQL table) and ``erasure_proofs`` (each table
proof of a run once). A SQL catalog keeps its SQL tables, unless its definition sets ``tablepolicy-ledger:
table`` (the same Iceberg tables, e.g. to keep the ledger in the lake whatever the catalog). Every row is
upserted on (catalog, request, table); a commit that races another runner's is tried again on the fresh table.

A project file ledger (``.tablepolicy/erasure-ledger.db``, where earlier versions kept it for such catalogs) is
carried over once: its entries and proofs are copied in, the file is renamed ``erasure-ledger.db.carried-over``,
and the run says so.
"""

from __future__ import annotations

import contextlib
import json
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from datetime import date, datetime
from pathlib import Path
from typing import Any, TypeVar

import pyarrow as pa
from pyiceberg.catalog import Catalog
from pyiceberg.exceptions import CommitFailedException, NamespaceAlreadyExistsError, TableAlreadyExistsError
from pyiceberg.expressions import And, BooleanExpression, EqualTo, In
from pyiceberg.schema import Schema
from pyiceberg.table import Table
from pyiceberg.types import NestedField, StringType

from tablepolicy.compiler import jsontext
from tablepolicy.compiler.drift import OWN_NAMESPACE
from tablepolicy.compiler.erasure.ledger import Entry
from tablepolicy.compiler.errors import CatalogError

from .ledger_rows import ledger_table, parse_state, parse_time, proof_table, row_of, stamp

NAMESPACE = OWN_NAMESPACE  # drift never lists it as unmanaged
LEDGER = (*NAMESPACE, "erasure_ledger")
PROOFS = (*NAMESPACE, "erasure_proofs")
LEDGER_COLUMNS = ("catalog_name", "request_id", "table_name", "received", "deadline", "state", "keys_hash",
                  "proof_id", "first_seen", "updated", "done_at")
PROOF_COLUMNS = ("proof_id", "catalog_name", "table_name", "recorded", "proof")
KEYS = ["catalog_name", "request_id", "table_name"]
ATTEMPTS = 8
CARRIED = ".carried-over"
T = TypeVar("T")


def _schema(columns: tuple[str, ...], required: Iterable[str]) -> Schema:
    needed = set(required)
    return Schema(*(NestedField(i, name, StringType(), required=name in needed) for i, name in enumerate(columns, 1)))


LEDGER_SCHEMA = _schema(LEDGER_COLUMNS, KEYS)
PROOF_SCHEMA = _schema(PROOF_COLUMNS, ["proof_id"])


def _retried(what: str, attempt: Callable[[], T]) -> T:
    for n in range(ATTEMPTS):
        try:
            return attempt()
        except CommitFailedException:
            if n == ATTEMPTS - 1:
                raise CatalogError(f"the erasure ledger: {what} kept conflicting with other runners' commits "
                                   f"({ATTEMPTS} attempts); run erase again") from None
            time.sleep(0.05 * (n + 1))
    raise AssertionError("unreachable")


class LakeLedger:
    """The Ledger interface (runtime/ledger.py) over the two Iceberg tables."""

    def __init__(self, catalog: Catalog, name: str, *, create: bool) -> None:
        self.catalog, self.name = catalog, name
        self.where = f"the Iceberg tables {'.'.join(LEDGER)} and {'.'.join(PROOFS)} of catalog '{name}'"
        self.note: str | None = None
        self.exists = self._table(LEDGER) is not None
        if create and not self.exists:
            self._create()
            self.exists = True

    def _table(self, name: tuple[str, ...]) -> Table | None:
        from .catalog.reader import load

        return load(self.catalog, name)

    def _create(self) -> None:
        with contextlib.suppress(NamespaceAlreadyExistsError):
            self.catalog.create_namespace(NAMESPACE)
        for name, schema in ((LEDGER, LEDGER_SCHEMA), (PROOFS, PROOF_SCHEMA)):
            with contextlib.suppress(TableAlreadyExistsError):  # another runner created it meanwhile
                self.catalog.create_table(name, schema=schema)

    def _loaded(self, name: tuple[str, ...]) -> Table:
        table = self._table(name)
        if table is None:
            raise CatalogError(f"the erasure ledger table {'.'.join(name)} disappeared from catalog '{self.name}'; "
                               "run erase again to create it")
        return table

    def entries(self, tables: Iterable[str] | None = None) -> dict[tuple[str, str], Entry]:
        if not self.exists:
            return {}
        condition: BooleanExpression = EqualTo(term="catalog_name", value=self.name)
        if tables is not None:
            names = sorted(set(tables))
            if not names:
                return {}
            condition = And(condition, In(term="table_name", literals=names))
        rows = self._loaded(LEDGER).scan(row_filter=condition).to_arrow().to_pylist()
        ids = sorted({r["proof_id"] for r in rows if r["proof_id"]})
        proofs: dict[str, Mapping[str, Any]] = {}
        if ids:
            for row in self._loaded(PROOFS).scan(row_filter=In(term="proof_id", literals=ids)).to_arrow().to_pylist():
                proofs[row["proof_id"]] = jsontext.loads(row["proof"])
        found = {}
        for row in rows:
            entry = Entry(row["request_id"], row["table_name"], date.fromisoformat(row["received"]),
                          date.fromisoformat(row["deadline"]), parse_state(row["state"]), row["keys_hash"] or "",
                          proofs.get(row["proof_id"]) if row["proof_id"] else None, parse_time(row["updated"]),
                          parse_time(row["done_at"]))
            found[(entry.request, entry.table)] = entry
        return found

    def _upsert(self, rows: list[dict[str, Any]], *, update: bool) -> None:
        frame = pa.Table.from_pylist(rows, schema=LEDGER_SCHEMA.as_arrow())

        def attempt() -> None:
            table = self._loaded(LEDGER)
            if update:  # keep each row's first_seen
                ids = sorted({r["request_id"] for r in rows})
                mine = And(EqualTo(term="catalog_name", value=self.name), In(term="request_id", literals=ids))
                seen = {(r["request_id"], r["table_name"]): r["first_seen"]
                        for r in table.scan(row_filter=mine).to_arrow().to_pylist()}
                fixed = [{**r, "first_seen": seen.get((r["request_id"], r["table_name"]), r["first_seen"])}
                         for r in rows]
                table.upsert(pa.Table.from_pylist(fixed, schema=LEDGER_SCHEMA.as_arrow()), join_cols=KEYS)
            else:
                table.upsert(frame, join_cols=KEYS, when_matched_update_all=False)

        _retried("recording requests", attempt)

    def record_pending(self, entries: list[Entry], now: datetime) -> None:
        if entries:
            self._upsert([row_of(self.name, e, stamp(now), None) for e in entries], update=False)

    def record(self, entries: list[Entry], proof: Mapping[str, Any], now: datetime) -> None:
        if not entries:
            return
        proof_id, stamped = uuid.uuid4().hex, stamp(now)
        row = {"proof_id": proof_id, "catalog_name": self.name, "table_name": entries[0].table, "recorded": stamped,
               "proof": json.dumps(proof, sort_keys=True)}
        _retried("recording a proof", lambda: self._loaded(PROOFS).append(
            pa.Table.from_pylist([row], schema=PROOF_SCHEMA.as_arrow())))
        self._upsert([row_of(self.name, e, stamped, proof_id) for e in entries], update=True)

    def carry_over(self, file: Path) -> None:
        """Copy a project file ledger's entries and proofs of this catalog in, once; the file is renamed."""
        from sqlalchemy import create_engine, select


        if not file.is_file():
            return
        engine = create_engine(f"sqlite:///{file}")
        try:
            with engine.connect() as connection:
                rows = [dict(r) for r in connection.execute(select(ledger_table).where(
                    ledger_table.c.catalog_name == self.name)).mappings()]
                proofs = [dict(r) for r in connection.execute(select(proof_table).where(
                    proof_table.c.catalog_name == self.name)).mappings()]
        except Exception as exc:  # not a ledger file: say so, keep it
            self.note = f"{file} could not be read as an erasure ledger ({str(exc).splitlines()[0]}); it was kept"
            return
        finally:
            engine.dispose()
        if proofs:
            _retried("carrying proofs over", lambda: self._loaded(PROOFS).append(
                pa.Table.from_pylist(proofs, schema=PROOF_SCHEMA.as_arrow())))
        if rows:
            self._upsert(rows, update=False)
        file.rename(file.with_name(file.name + CARRIED))
        self.note = (f"the erasure ledger {file} was carried over into {self.where}: {len(rows)} entr(ies) and "
                     f"{len(proofs)} proof(s); the file is kept as {file.name + CARRIED} and no longer read")

    def close(self) -> None:
        pass

