"""``tablepolicy history TABLE``: which plan, git commit and user changed a table, and when, read without a JVM.

Two records answer it. Apply stamps every table it changes with the plan id, the commit of the policies and who
ran it (``tablepolicy.plan-id``, ``tablepolicy.git-sha``, ``tablepolicy.applied-by``); each metadata file the table
lists in its metadata log keeps the stamps of its time, so the log tells when each apply landed. The snapshots
tell what wrote data (their summaries: the operation, the rows added and deleted, the engine). Both are merged
into one list by time, oldest first. The log holds as many files as ``write.metadata.previous-versions-max``
keeps (100 by default); older applies are gone with them, and a metadata file that cannot be read is said so.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from tablepolicy.compiler.errors import TablePolicyError
from tablepolicy.compiler.iceberg.names import format_name
from tablepolicy.compiler.model.properties import APPLIED_BY

from .catalog.reader import CatalogReader, read_metadata

PLAN_ID, GIT_SHA = "tablepolicy.plan-id", "tablepolicy.git-sha"
SUMMARY_KEYS = ("added-records", "deleted-records", "added-data-files", "deleted-data-files")


class NoSuchTableError(TablePolicyError):
    """history of a table the catalog does not hold."""


@dataclass(frozen=True)
class Event:
    at: datetime
    kind: str  # "apply" (a plan's stamps appeared), "snapshot" (a data commit), "unreadable" (a log entry)
    text: str  # one line: what happened
    plan_id: str | None = None
    git_sha: str | None = None
    applied_by: str | None = None
    snapshot_id: int | None = None

    def as_json(self) -> dict[str, object]:
        return {"at": self.at.isoformat(), "kind": self.kind, "text": self.text, "plan_id": self.plan_id,
                "git_sha": self.git_sha, "applied_by": self.applied_by, "snapshot_id": self.snapshot_id}


def table_history(reader: CatalogReader, name: tuple[str, ...]) -> list[Event]:
    """The table's applies (from the stamps in its metadata log) and data commits (snapshots), oldest first."""
    table = reader.pyiceberg_table(name, fresh=True)
    if table is None:
        raise NoSuchTableError(f"the catalog holds no table {format_name(name)}; tablepolicy drift lists the tables "
                               "it holds")
    documents: list[tuple[int, str, dict[str, Any] | None]] = []
    for entry in table.metadata.metadata_log:
        try:
            document: dict[str, Any] | None = read_metadata(reader.catalog, entry.metadata_file, table.io)
        except Exception:  # removed by write.metadata.delete-after-commit, or unreadable: said, not guessed
            document = None
        documents.append((entry.timestamp_ms, entry.metadata_file, document))
    documents.append((table.metadata.last_updated_ms, table.metadata_location,
                      {"properties": dict(table.metadata.properties)}))
    events = [*_applies(documents), *_snapshots(table.metadata.snapshots)]
    return sorted(events, key=lambda e: (e.at, e.kind != "apply", e.snapshot_id or 0))


def _applies(documents: list[tuple[int, str, dict[str, Any] | None]]) -> list[Event]:
    events, last = [], None
    for timestamp, location, document in documents:
        at = _time(timestamp)
        if document is None:
            events.append(Event(at, "unreadable", f"metadata file {location} cannot be read (its stamps are "
                                                  "unknown)"))
            continue
        properties = document.get("properties") or {}
        plan_id = properties.get(PLAN_ID)
        if plan_id is None or plan_id == last:
            continue
        last = plan_id
        sha, who = properties.get(GIT_SHA), properties.get(APPLIED_BY)
        text = (f"applied plan {plan_id}" + (f" from commit {sha[:12]}" if sha else "")
                + (f" by {who}" if who else ""))
        events.append(Event(at, "apply", text, plan_id=plan_id, git_sha=sha, applied_by=who))
    return events


def _snapshots(snapshots: list[Any]) -> list[Event]:
    events = []
    for snapshot in snapshots:
        summary = snapshot.summary
        figures = summary.additional_properties if summary is not None else {}
        operation = str(summary.operation.value) if summary is not None else "commit"
        counts = ", ".join(f"{key.replace('-', ' ')} {figures[key]}" for key in SUMMARY_KEYS if key in figures)
        engine = figures.get("engine-name")
        engine_text = f" by {engine} {figures.get('engine-version', '')}".rstrip() if engine else ""
        events.append(Event(_time(snapshot.timestamp_ms), "snapshot",
                            f"snapshot {snapshot.snapshot_id}: {operation}" + (f" ({counts})" if counts else "")
                            + engine_text, snapshot_id=snapshot.snapshot_id))
    return events


def _time(milliseconds: int) -> datetime:
    return datetime.fromtimestamp(milliseconds / 1000, UTC)
