"""The request table: erasure requests kept where personal data may live (the lake), never in git.

An application or privacy portal appends one row per request to an Iceberg table declared in git like any
other (``init`` scaffolds its policy)::

    id           string, required   the ticket id; the proof and the certificate name it
    received     date, required     the day it arrived; the SLA (lifecycle.erasure.within) counts from here
    deadline     date               a deadline of its own, when earlier than the policy's (empty: the SLA)
    keys         map<string,string> erasure key column (nested ones with a dot: user.uid) -> this subject's value
    status       string             pending (or empty) until erased and proven; then done
    fingerprint  string             once done: the ledger's salted SHA-256 of the keys, which are then removed

``erase --requests-table NS.TABLE`` reads the pending rows (without a JVM). Once a request is done and proven on
every table it reaches, its row is rewritten with empty keys, status done and the ledger's fingerprint, and the
request table's older snapshots (which still hold the keys) are expired and their files deleted: the request
store is erased like the tables it serves. Values are text, as CSV cells are: the key column's type decides
whether ``42`` is read as an integer (requests.Text).

Everything here is pure: the live schema's columns and the rows arrive as plain values
(runtime/request_table.py reads and rewrites the table).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from ..diagnostics import Diagnostics, Location
from ..iceberg.names import UNSAFE_HINT, unsafe_character
from .requests import MAX_ID, KeptPositions, LoadedRequests, Request, Requests, Text, unique_requests

# column -> (its type as pyiceberg writes it, required)
COLUMNS: dict[str, tuple[str, bool]] = {
    "id": ("string", True), "received": ("date", True), "deadline": ("date", False),
    "keys": ("map<string, string>", True), "status": ("string", True), "fingerprint": ("string", True),
}
PENDING, DONE = "pending", "done"
POLICY_COLUMNS = """\
  - {name: id, type: string, required: true, doc: The request's ticket id}
  - {name: received, type: date, required: true, doc: The day the request arrived; the SLA counts from here}
  - {name: deadline, type: date, doc: A deadline of its own when earlier than lifecycle.erasure.within}
  - {name: keys, type: {map: {key: string, value: string}}, doc: Erasure key column -> value; emptied once done}
  - {name: status, type: string, doc: pending until erased and proven on every table; then done}
  - {name: fingerprint, type: string, doc: The ledger's salted hash of the keys once done}
"""

@dataclass(frozen=True)
class Row:
    """One row of the request table as read (any value may be missing: the table is written by others)."""

    id: str | None
    received: date | None
    deadline: date | None
    keys: tuple[tuple[str | None, str | None], ...] | None
    status: str | None
    fingerprint: str | None = None


@dataclass(frozen=True)
class TablePositions:
    """A request table's findings name the table, the request id and the column: ``ns.t[REQ-1].keys``."""

    table: str
    ids: tuple[str, ...]  # per request loaded: its id

    def value(self, path: tuple[str | int, ...]) -> Location:
        part = str(path[2]) if len(path) > 2 else "id"
        column = "keys" if len(path) > 3 else part
        return Location(f"{self.table}[{self.ids[int(path[1])]}].{column}")


@dataclass(frozen=True)
class TableRequests:
    """The pending requests of a request table (None when a finding refuses them) and every finding."""

    loaded: LoadedRequests | None
    rows: int  # rows read, done ones included
    findings: Diagnostics


def column_findings(table: str, columns: dict[str, tuple[str, bool]]) -> Diagnostics:
    """The live table's columns (name -> (type, required)) against COLUMNS: a missing or mistyped column is
    TP615 naming every column it should have. Other columns are allowed (a portal may keep its own)."""
    findings = Diagnostics()
    for name, (kind, required) in COLUMNS.items():
        found = columns.get(name)
        if found is None and not required:
            continue
        if found is None or found[0] != kind:
            problem = f"has no column {name}" if found is None else f"has {name} of type {found[0]}, not {kind}"
            findings.error("TP615", Location(table), f"request table {table} {problem}",
                           "a request table has columns " + ", ".join(f"{n} {k}" for n, (k, _) in COLUMNS.items())
                           + " (init scaffolds its policy: policies/privacy/erasure_requests.yaml)")
    return findings


def table_requests(table: str, rows: list[Row]) -> TableRequests:
    """The pending rows as requests (their key values as Text), checked as a requests file is: an id, a received
    date, at least one key; the same id twice with other keys is TP601. Rows already done are skipped."""
    findings = Diagnostics()
    requests: list[Request] = []
    ids: list[str] = []
    for number, row in enumerate(rows, 1):
        status = (row.status or PENDING).strip().lower()
        label = row.id if isinstance(row.id, str) and row.id else f"row {number}"
        where = Location(f"{table}[{label}]")
        if status == DONE:
            continue
        if status != PENDING:
            findings.error("TP620", Location(f"{where.file}.status"), f"status {row.status!r} is neither pending "
                           "nor done", "a new request's status is pending (or empty); erase sets done")
            continue
        request = _request(table, label, row, findings)
        if request is not None:
            requests.append(request)
            ids.append(request.id)
    positions = TablePositions(table, tuple(ids))
    kept = unique_requests(requests, positions, findings)
    if findings.has_errors:
        return TableRequests(None, len(rows), findings)
    loaded = LoadedRequests(Requests(tuple(requests[i] for i in kept)),
                            KeptPositions(positions, tuple(kept)))
    return TableRequests(loaded, len(rows), findings)


def _request(table: str, label: str, row: Row, findings: Diagnostics) -> Request | None:
    def at(column: str) -> Location:
        return Location(f"{table}[{label}].{column}")

    good = True
    if not isinstance(row.id, str) or not row.id:
        findings.error("TP103", at("id"), "the request id is empty", "give every request its ticket id")
        good = False
    elif len(row.id) > MAX_ID:
        findings.error("TP105", at("id"), f"the request id is {len(row.id)} characters long: at most {MAX_ID}",
                       "the ledger keeps ticket ids of at most 200 characters")
        good = False
    elif bad := unsafe_character(row.id):
        findings.error("TP610", at("id"), f"request id {row.id!r} holds {bad}", UNSAFE_HINT)
        good = False
    if row.received is None:
        findings.error("TP103", at("received"), f"request {label!r} has no received date",
                       "the day the request arrived: the SLA counts from it")
        good = False
    keys: dict[str, Text] = {}
    for column, value in row.keys or ():
        if not column or not value:
            findings.error("TP112", at("keys"), f"request {label!r}: a key column's name or value is empty",
                           "give each key column with this subject's value, or leave the entry out")
            good = False
        else:
            keys[column] = Text(value)
    if good and not keys:
        findings.error("TP103", at("keys"), f"request {label!r} has no key value",
                       "give the value of each erasure key column of the tables it reaches, e.g. {user_id: u42}")
        good = False
    if not good or row.received is None or not isinstance(row.id, str):
        return None
    return Request(row.id, row.received, dict(keys), row.deadline)
