"""The request ledger's model: per request and table, where the erasure stands, and what that means today.

Rows are kept by runtime/ledger.py in the catalog's database; everything here is pure: which subjects a
run still has to erase, whether a request is done, held, pending or OVERDUE, and whether the SLA was met.
A ledger never holds key values: a request's keys are recognised by a salted SHA-256 of the typed values
(``keys_fingerprint``), so a request id reused for another subject is refused, not skipped.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date, datetime
from enum import StrEnum
from typing import Any

from ..diagnostics import Diagnostic, Diagnostics, Severity
from ..iceberg.names import format_name, natural_key
from .plan import Subject, TableErasure
from .requests import KeyValue, LoadedRequests


class State(StrEnum):
    """A request's state on a table, as the ledger stores it."""

    PENDING = "pending"
    DONE = "done"
    HELD = "held"  # a declared legal hold keeps files holding its keys
    FAILED = "failed"


STATES = tuple(State)


@dataclass(frozen=True)
class Entry:
    """One request on one table."""

    request: str
    table: str  # the qualified name, as format_name writes it
    received: date
    deadline: date
    state: State
    fingerprint: str = ""  # "salt:sha256" of the key columns and typed values; empty when never run
    proof: Mapping[str, Any] | None = None  # the table's proof of the run that last recorded this entry
    updated: datetime | None = None
    done_at: datetime | None = None
    runs_on: date | None = None  # pending and held for batching: the day a run erases it (never stored)

    def overdue(self, today: date) -> bool:
        return self.state != State.DONE and self.deadline < today

    @property
    def sla_met(self) -> bool | None:
        """Done by the deadline (None while not done)."""
        return None if self.done_at is None else self.done_at.date() <= self.deadline


@dataclass(frozen=True)
class RequestStatus:
    request: str
    received: date
    entries: tuple[Entry, ...]  # by table

    @property
    def state(self) -> State:
        """done when every table is; failed or held if one is (failed first); else pending."""
        states = {e.state for e in self.entries}
        for state in (State.FAILED, State.HELD, State.PENDING):
            if state in states:
                return state
        return State.DONE

    @property
    def deadline(self) -> date:
        return min(e.deadline for e in self.entries)

    @property
    def runs_on(self) -> date | None:
        """The first day a run erases it on a table it is pending on, when held for batching."""
        days = [e.runs_on for e in self.entries if e.state == State.PENDING and e.runs_on is not None]
        return min(days) if days else None

    def overdue(self, today: date) -> bool:
        return any(e.overdue(today) for e in self.entries)

    @property
    def sla_met(self) -> bool | None:
        met = [e.sla_met for e in self.entries]
        return None if None in met else all(met)


_CANONICAL = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))  # json.dumps' encoder, built once


def keys_fingerprint(columns: Iterable[str], values: Iterable[KeyValue], salt: str) -> str:
    """``salt:hex``: SHA-256 of the salt and the canonical JSON of column -> typed value."""
    canonical = _CANONICAL.encode(sorted(zip(columns, values, strict=True)))
    return f"{salt}:{hashlib.sha256((salt + canonical).encode('utf-8', 'surrogatepass')).hexdigest()}"


def same_keys(fingerprint: str, columns: Iterable[str], values: Iterable[KeyValue]) -> bool:
    salt = fingerprint.split(":", 1)[0]
    return keys_fingerprint(columns, values, salt) == fingerprint


def subject_columns(table: TableErasure) -> list[str]:
    return [format_name(c) for c in table.columns]


@dataclass(frozen=True)
class Outstanding:
    """What a run still has to do once the ledger is read."""

    tables: list[TableErasure]  # with only the subjects not done yet
    done: list[Entry]  # (request, table) pairs done by an earlier run: skipped
    findings: Diagnostics


def outstanding(
    tables: list[TableErasure], ledger: Mapping[tuple[str, str], Entry], requests: LoadedRequests
) -> Outstanding:
    """Drop the subjects an earlier run erased and proved; a done request whose keys differ now is TP606."""
    index = {r.id: i for i, r in enumerate(requests.model.requests)}
    remaining, done, findings = [], [], Diagnostics()
    for table in tables:
        name, columns, keep = format_name(table.table), subject_columns(table), []
        for subject in table.subjects:
            entry = ledger.get((subject.request, name))
            if entry is None or entry.state != State.DONE:
                keep.append(subject)
            elif not same_keys(entry.fingerprint, columns, subject.values):
                when = entry.done_at.date() if entry.done_at else "earlier"
                findings.add(Diagnostic(
                    "TP606", Severity.ERROR, requests.at(index[subject.request], "keys"),
                    f"request '{subject.request}' was erased from {name} on {when} with other key values",
                    "a request id names one subject: give this subject's request its own id"))
            else:
                done.append(entry)
        if keep:
            remaining.append(dataclasses.replace(table, subjects=tuple(keep)))
    return Outstanding(remaining, done, findings)


def statuses(entries: Iterable[Entry]) -> list[RequestStatus]:
    """Entries grouped by request, in request id order, tables in name order."""
    grouped: dict[str, list[Entry]] = {}
    for entry in entries:
        grouped.setdefault(entry.request, []).append(entry)
    return [RequestStatus(request, min(e.received for e in found),
                          tuple(sorted(found, key=lambda e: natural_key(e.table))))
            for request, found in sorted(grouped.items())]


def planned_entries(tables: Iterable[TableErasure], received: Mapping[str, date]) -> list[Entry]:
    """A pending entry per (request, table) a requests file reaches (``received``: by request id), with the day a
    run erases it when the table batches requests."""
    from .batching import runs_on

    return [Entry(s.request, format_name(t.table), received[s.request], s.deadline, State.PENDING,
                  runs_on=runs_on(s, t)) for t in tables for s in t.subjects]


def subject_entry(table: TableErasure, subject: Subject, received: date, state: State, salt: str) -> Entry:
    return Entry(subject.request, format_name(table.table), received, subject.deadline, state,
                 keys_fingerprint(subject_columns(table), subject.values, salt))


def subject_entries(table: TableErasure, received: Mapping[str, date], state: State, salt: str) -> list[Entry]:
    """``subject_entry`` of every subject of ``table`` (``received``: by request id), its names spelled once."""
    name, columns = format_name(table.table), subject_columns(table)
    return [Entry(s.request, name, received[s.request], s.deadline, state, keys_fingerprint(columns, s.values, salt))
            for s in table.subjects]
