"""The ledger's rows as both stores keep them (runtime/ledger.py's SQL tables, runtime/lake_ledger.py's Iceberg
tables): the columns, and dates and instants as text, the same on every database."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Column, MetaData, String, Table, Text

from tablepolicy.compiler.erasure.ledger import Entry, State
from tablepolicy.compiler.errors import CatalogError

metadata = MetaData()
ledger_table = Table(
    "tablepolicy_erasure_ledger", metadata,
    Column("catalog_name", String(255), primary_key=True),
    Column("request_id", String(255), primary_key=True),
    Column("table_name", String(1000), primary_key=True),
    Column("received", String(10), nullable=False),  # ISO dates and UTC timestamps as text: the same on every DB
    Column("deadline", String(10), nullable=False),
    Column("state", String(16), nullable=False),
    Column("keys_hash", String(100), nullable=False),
    Column("proof_id", String(32)),
    Column("first_seen", String(32), nullable=False),
    Column("updated", String(32), nullable=False),
    Column("done_at", String(32)),
)
proof_table = Table(
    "tablepolicy_erasure_proofs", metadata,
    Column("proof_id", String(32), primary_key=True),
    Column("catalog_name", String(255), nullable=False),
    Column("table_name", String(1000), nullable=False),
    Column("recorded", String(32), nullable=False),
    Column("proof", Text, nullable=False),
)


def row_of(catalog: str, entry: Entry, now: str, proof_id: str | None) -> dict[str, Any]:
    """``now``: the run's instant as stored (stamp)."""
    return {"catalog_name": catalog, "request_id": entry.request, "table_name": entry.table,
            "received": entry.received.isoformat(), "deadline": entry.deadline.isoformat(), "state": entry.state,
            "keys_hash": entry.fingerprint, "proof_id": proof_id, "first_seen": now, "updated": now,
            "done_at": now if entry.state == State.DONE else None}


def stamp(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(text: str | None) -> datetime | None:
    return None if text is None else datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


def parse_state(text: str) -> State:
    try:
        return State(text)
    except ValueError:
        pass
    raise CatalogError(f"the erasure ledger holds an unknown state {text!r}; this tablepolicy knows "
                       "pending, done, held and failed")
