"""Lifecycle policy + table health -> only the maintenance a table needs now, in a safe order.

Nothing runs unless its lifecycle section is declared in git (the table's file or its namespace
defaults); each action carries the health figures that made it due. Order: expired rows go first, then
files are compacted, then history that the earlier steps made obsolete is expired on its own schedule,
and orphan files are removed last.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from pyiceberg.types import DateType, TimestampType, TimestamptzType

from compiler.effective import Effective
from compiler.maintenance.actions import (
    Action,
    ColumnKind,
    DeleteExpiredRows,
    ExpireSnapshots,
    RemoveOrphanFiles,
    RewriteDataFiles,
    RewriteManifests,
    RewritePositionDeletes,
    TimeCutoff,
)
from compiler.maintenance.health import TableHealth
from compiler.model.names import parse_name
from compiler.model.table import ColumnPath, TableState, field_paths
from compiler.spec.units import Duration

DEFAULT_MIN_INPUT_FILES = 5  # Iceberg's rewrite_data_files default
DEFAULT_MIN_DELETE_FILES = 1
DEFAULT_MIN_MANIFESTS = 100
DEFAULT_MIN_KEEP = 1
DEFAULT_ORPHAN_AGE = Duration.parse("3d")


def retention_cutoff(effective: Effective, today: datetime) -> datetime | None:
    """Midnight UTC of ``today`` minus ``keep``: the same cutoff the plan estimated, all day long."""
    retention = effective.lifecycle.retention
    if retention is None or retention.column is None or retention.keep is None:
        return None
    midnight = datetime(today.year, today.month, today.day, tzinfo=UTC)
    return midnight - timedelta(milliseconds=retention.keep.millis)


def maintenance_for(effective: Effective, state: TableState, health: TableHealth, now: datetime) -> list[Action]:
    lifecycle, name = effective.lifecycle, state.name
    actions: list[Action] = []
    retention, cutoff = lifecycle.retention, retention_cutoff(effective, now)
    if retention is not None and retention.column is not None and retention.keep is not None and cutoff is not None:
        column = parse_name(retention.column)
        kind = _temporal_kind(state, column)
        if kind is not None and health.expired is not None and health.expired.rows_upper > 0:
            e = health.expired
            actions.append(DeleteExpiredRows(
                table=name, cutoff=TimeCutoff(column=column, kind=kind, before=cutoff), keep=str(retention.keep),
                reason=f"{e.files + e.partial_files} data file(s) may hold rows before the cutoff "
                       f"({e.files} wholly, {e.rows:,} row(s))"))
    compaction = lifecycle.compaction
    if compaction is not None and compaction.enabled is not False:
        minimum = compaction.min_input_files or DEFAULT_MIN_INPUT_FILES
        groups = [n for n in health.small_file_groups if n >= minimum]
        if groups:
            window = compaction_window(effective, state, now)
            actions.append(RewriteDataFiles(
                table=name, strategy=compaction.strategy or "binpack",
                zorder_by=tuple(parse_name(c) for c in compaction.zorder_by or ()),
                target_file_size=health.target_file_size, min_input_files=minimum, only_before=window,
                reason=f"{sum(groups)} small data files in {len(groups)} partition(s) with at least "
                       f"{minimum} each (min_input_files); {health.small_files} of {health.data_files} files are "
                       f"under 75% of the {health.target_file_size:,}-byte target"))
    deletes = lifecycle.delete_files
    if deletes is not None and deletes.enabled is not False:
        minimum = deletes.min_input_files or DEFAULT_MIN_DELETE_FILES
        if health.position_delete_files >= minimum:
            actions.append(RewritePositionDeletes(
                table=name, min_input_files=minimum,
                reason=f"{health.position_delete_files} position delete file(s) (min_input_files {minimum})"))
    manifests = lifecycle.manifests
    if manifests is not None and manifests.enabled is not False:
        minimum = manifests.min_manifests or DEFAULT_MIN_MANIFESTS
        if health.manifests >= minimum:
            actions.append(RewriteManifests(
                table=name, reason=f"the current snapshot has {health.manifests} manifests (min_manifests {minimum})"))
    snapshots = lifecycle.snapshots
    if snapshots is not None and snapshots.max_age is not None:
        keep = snapshots.min_keep or DEFAULT_MIN_KEEP
        older_than = now - timedelta(milliseconds=snapshots.max_age.millis)
        expirable = [t for t in health.snapshot_times[:-keep] if t < older_than.timestamp() * 1000]
        if expirable:
            actions.append(ExpireSnapshots(
                table=name, older_than=older_than, retain_last=keep,
                reason=f"{len(expirable)} of {health.snapshots} snapshots are older than {snapshots.max_age} "
                       f"(min_keep {keep})"))
    orphans = lifecycle.orphan_files
    if orphans is not None and orphans.enabled is not False:
        age = orphans.older_than or DEFAULT_ORPHAN_AGE
        actions.append(RemoveOrphanFiles(
            table=name, older_than=now - timedelta(milliseconds=age.millis),
            reason=f"declared; the table location is listed for files older than {age} that no snapshot uses"))
    return actions


def _temporal_kind(state: TableState, column: ColumnPath) -> ColumnKind | None:
    ids = {path: fid for fid, path in field_paths(state.columns).items()}
    field = state.schema_.find_field(ids[column]) if column in ids else None
    match field.field_type if field is not None else None:
        case DateType():
            return "date"
        case TimestamptzType():
            return "timestamptz"
        case TimestampType():
            return "timestamp"
    return None


def compaction_window(effective: Effective, state: TableState, now: datetime) -> TimeCutoff | None:
    """With ``skip_recent``: data before now - skip_recent on the first temporal partition source."""
    compaction = effective.lifecycle.compaction
    if compaction is None or compaction.skip_recent is None:
        return None
    before = now - timedelta(milliseconds=compaction.skip_recent.millis)
    for field in state.partition:
        kind = _temporal_kind(state, field.source)
        if kind is not None:
            return TimeCutoff(column=field.source, kind=kind, before=before)
    return None
