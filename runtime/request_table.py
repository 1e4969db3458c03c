"""The request table read and erased through pyiceberg (no JVM): the pure rules are compiler/erasure/request_table.py.

``read_table`` checks the live columns and returns the pending requests. ``scrub`` runs after a run proved its
requests done: it rewrites their rows (copy-on-write: every file holding such a row is rewritten) with empty
keys, status done and the ledger's fingerprint, then expires every snapshot older than the rewrite and deletes
the files only they reached (runtime/expiry.py), and finally reads every snapshot left to check that none holds
a key of those requests. A concurrent append by the portal makes a commit fail: it is tried again on the
fresh table.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pyarrow as pa
from pyiceberg.catalog import Catalog
from pyiceberg.exceptions import CommitFailedException
from pyiceberg.expressions import In
from pyiceberg.table import Table

from tablepolicy.compiler.diagnostics import Diagnostics, Location
from tablepolicy.compiler.erasure.request_table import DONE, Row, TableRequests, column_findings, table_requests
from tablepolicy.compiler.errors import PolicyError, TablePolicyError
from tablepolicy.compiler.iceberg.names import format_name, parse_name

from .catalog.reader import load
from .expiry import expire

ATTEMPTS = 5


@dataclass(frozen=True)
class Scrubbed:
    """What erasing the request store did: the requests whose keys were replaced by their fingerprint, the
    snapshots expired and files deleted, and the snapshots left (each read: none holds those keys)."""

    table: str
    requests: tuple[str, ...]
    snapshots_expired: int
    files_deleted: int
    snapshots_checked: int


def table_name(text: str) -> tuple[str, ...]:
    try:
        name = parse_name(text)
    except ValueError as exc:
        raise TablePolicyError(f"--requests-table {text}: {exc}") from None
    if len(name) < 2:
        raise TablePolicyError(f"--requests-table {text}: name the table with its namespace, e.g. "
                               "privacy.erasure_requests")
    return name


def _loaded(catalog: Catalog, name: tuple[str, ...]) -> Table:
    table = load(catalog, name)
    if table is None:
        findings = Diagnostics()
        findings.error("TP614", Location(format_name(name)),
                       f"request table {format_name(name)} does not exist in the catalog",
                       "create it from its policy (tablepolicy init scaffolds policies/privacy/erasure_requests.yaml; "
                       "then plan and apply), or name the right table with --requests-table")
        raise PolicyError(findings)
    return table


def read_table(catalog: Catalog, name: tuple[str, ...]) -> TableRequests:
    """The pending requests of the table; a missing table (TP614) or wrong columns (TP615) raise at once."""
    table = _loaded(catalog, name)
    shown = format_name(name)
    columns = {f.name: (str(f.field_type), f.required) for f in table.schema().fields}
    findings = column_findings(shown, columns)
    if findings.has_errors:
        raise PolicyError(findings)
    rows = [Row(r["id"], r["received"], r.get("deadline"), None if r["keys"] is None else tuple(r["keys"]),
                r["status"], r["fingerprint"])
            for r in table.scan().to_arrow().to_pylist()]
    rows.sort(key=lambda r: (r.received is None, str(r.received), r.id or ""))
    return table_requests(shown, rows)


def scrub(catalog: Catalog, name: tuple[str, ...], fingerprints: dict[str, str],
          progress: Callable[[str], None], clock: Callable[[], datetime] = lambda: datetime.now(UTC)) -> Scrubbed:
    """Replace the keys of ``fingerprints``' requests (id -> the ledger's fingerprint) and erase the table's
    history that holds them. ``clock``: the wall clock, for snapshot ages (expiry removes what is older)."""
    shown = format_name(name)
    ids = sorted(fingerprints)
    for attempt in range(ATTEMPTS):
        table = _loaded(catalog, name)
        current = table.scan(row_filter=In(term="id", literals=ids)).to_arrow()
        if not any(r["status"] != DONE or r["keys"] for r in current.select(["status", "keys"]).to_pylist()):
            break
        try:
            table.overwrite(_scrubbed_rows(current, fingerprints), overwrite_filter=In(term="id", literals=ids))
            break
        except CommitFailedException:
            if attempt == ATTEMPTS - 1:
                raise
            time.sleep(0.05 * (attempt + 1))
    progress(f"{shown}: the keys of {len(ids)} request(s) replaced by their fingerprint")
    # every snapshot before the rewrite holds the keys: expire them all (a second's margin over the commit's time)
    expired = expire(shown, lambda: _loaded(catalog, name), older_than=clock() + timedelta(seconds=1),
                     retain_last=1, clock=clock)
    progress(f"{shown}: {len(expired.snapshots)} older snapshot(s) expired, {len(expired.deleted)} file(s) deleted")
    checked = _check(shown, _loaded(catalog, name), ids)
    return Scrubbed(shown, tuple(ids), len(expired.snapshots), len(expired.deleted), checked)


def _scrubbed_rows(current: pa.Table, fingerprints: dict[str, str]) -> pa.Table:
    rows = current.to_pylist()
    for row in rows:
        if row["status"] != DONE or row["keys"]:
            row.update(keys=[], status=DONE, fingerprint=fingerprints[row["id"]])
    return pa.Table.from_pylist(rows, schema=current.schema)


def _check(shown: str, table: Table, ids: list[str]) -> int:
    """Every snapshot left read: a row of ``ids`` with a key left raises."""
    snapshots = table.metadata.snapshots
    for snapshot in snapshots:
        rows = table.scan(row_filter=In(term="id", literals=ids), snapshot_id=snapshot.snapshot_id).to_arrow()
        left = sorted({r["id"] for r in rows.select(["id", "keys"]).to_pylist() if r["keys"]})
        if left:
            raise TablePolicyError(f"{shown}: snapshot {snapshot.snapshot_id} still holds the keys of "
                                   f"{', '.join(left)} after the request table was erased; run erase again")
    return len(snapshots)
