"""What an action did, measured: its procedure's result row and the table's health re-read before and
after it (the run's counterpart of compiler/maintenance/projection.py)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, assert_never

from . import actions
from .actions import Action
from .health import TableHealth
from .report import Effect


def measured(action: Action, rows: list[dict[str, Any]], before: TableHealth, after: TableHealth) -> Effect:
    """``rows``: every row the statement returned (``remove_orphan_files`` returns one per file removed); every
    effect also carries the table's data bytes before and after."""
    return replace(_measured(action, rows, before, after), data_bytes_before=before.data_bytes,
                   data_bytes_after=after.data_bytes)


def _measured(action: Action, rows: list[dict[str, Any]], before: TableHealth, after: TableHealth) -> Effect:
    output = rows[0] if rows else {}
    match action:
        case actions.DeleteExpiredRows():
            return Effect(rows_deleted=before.rows - after.rows)
        case actions.RewriteDataFiles():
            # the procedure gives the bytes it read; the bytes it wrote are what the table holds beyond the rest
            read = _count(output, "rewritten_bytes_count")
            wrote = after.data_bytes - (before.data_bytes - read) if read is not None else None
            return Effect(rewritten=_count(output, "rewritten_data_files_count"),
                          written=_count(output, "added_data_files_count"), bytes_rewritten=read,
                          bytes_written=wrote if wrote is not None and wrote >= 0 else None)
        case actions.RewritePositionDeletes():
            return Effect(rewritten=_count(output, "rewritten_delete_files_count"),
                          written=_count(output, "added_delete_files_count"))
        case actions.RewriteManifests():
            return Effect(rewritten=_count(output, "rewritten_manifests_count"),
                          written=_count(output, "added_manifests_count"))
        case actions.ExpireSnapshots():
            gone = {s.id for s in before.snapshot_log} - {s.id for s in after.snapshot_log}
            return Effect(snapshots_expired=len(gone))
        case actions.RemoveOrphanFiles():
            # the listing before the removal sized the files; the procedure names each file it removed
            sized = before.orphans is not None and before.orphans.files == len(rows)
            return Effect(files_removed=len(rows), bytes_removed=before.orphans.bytes if sized and before.orphans
                          else None)
        case _:
            assert_never(action)


def _count(output: dict[str, Any], key: str) -> int | None:
    value = output.get(key)
    return int(value) if value is not None else None
