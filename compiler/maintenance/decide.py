"""Lifecycle policy + table health -> only the maintenance a table needs now, in a safe order.

Nothing runs unless its lifecycle section is declared in git (the table's file or its namespace
defaults); each action carries the health figures that made it due. Order: expired rows go first, then
files are compacted, then history that the earlier steps made obsolete is expired on its own schedule,
and orphan files are removed last.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TypeGuard, TypeVar

from pyiceberg.types import DateType, TimestampType, TimestamptzType

from ..catalog.retention import retention_cutoff
from ..effective import Effective
from ..iceberg.names import parse_name
from ..model.table import ColumnPath, TableState
from ..policy.lifecycle import Compaction, DeleteFileRewrite, ManifestRewrite, OrphanFiles
from ..policy.units import Duration
from . import actions
from .actions import Action, ColumnKind, TimeCutoff
from .expiry import NEVER, Expiry, expired_snapshots
from .health import TableHealth

DEFAULT_MIN_INPUT_FILES = 5  # Iceberg's rewrite_data_files default
DEFAULT_MIN_DELETE_FILES = 1
DEFAULT_MIN_MANIFESTS = 100
DEFAULT_MIN_KEEP = 1
DEFAULT_ORPHAN_AGE = Duration.parse("3d")


def expiry_cutoff(effective: Effective, now: datetime) -> datetime | None:
    """The retention cutoff for today (see retention_cutoff), or None without a complete retention."""
    retention = effective.lifecycle.retention
    if retention is None or retention.column is None or retention.keep is None:
        return None
    return retention_cutoff(now.date(), retention.keep)


@dataclass(frozen=True)
class Skip:
    """A declared action that is not due now, and why ("below min_input_files" is a skip, not a success)."""

    code: str
    action: str
    reason: str


@dataclass(frozen=True)
class Due:
    """What every rule reads: the effective policy, the table as the catalog holds it, its health, now."""

    effective: Effective
    state: TableState
    health: TableHealth
    now: datetime


def maintenance_for(effective: Effective, state: TableState, health: TableHealth, now: datetime) -> list[Action]:
    """The actions due now, in order."""
    return [a for a in decisions(effective, state, health, now) if not isinstance(a, Skip)]


def decisions(effective: Effective, state: TableState, health: TableHealth, now: datetime) -> list[Action | Skip]:
    """Every declared action: due (an Action) or not (a Skip with its reason), in order."""
    due = Due(effective, state, health, now)
    return [decision for rule in RULES if (decision := rule(due)) is not None]


def _expired_rows(due: Due) -> Action | Skip | None:
    retention, expired = due.effective.lifecycle.retention, due.health.expired
    cutoff = expiry_cutoff(due.effective, due.now)
    if retention is None or retention.column is None or retention.keep is None or cutoff is None:
        return None
    column = parse_name(retention.column)
    kind = _temporal_kind(due.state, column)
    if kind is None or expired is None or expired.rows_upper == 0:
        return None
    return actions.DeleteExpiredRows(
        table=due.state.name, cutoff=TimeCutoff(column=column, kind=kind, before=cutoff), keep=str(retention.keep),
        reason=f"{expired.files + expired.partial_files} data file(s) may hold rows before the cutoff "
               f"({expired.files} wholly, {expired.rows:,} row(s))")


def _compaction(due: Due) -> Action | Skip | None:
    compaction, health = due.effective.lifecycle.compaction, due.health
    if not _switched_on(compaction):
        return None
    minimum = compaction.min_input_files or DEFAULT_MIN_INPUT_FILES
    groups = [n for n in health.small_file_groups if n >= minimum]
    if not groups:
        fullest = max(health.small_file_groups, default=0)
        return Skip("TM201", "rewrite_data_files", f"{fullest} small file(s) in the fullest partition, below "
                                                    f"min_input_files {minimum}")
    return actions.RewriteDataFiles(
        table=due.state.name, strategy=compaction.strategy or "binpack",
        zorder_by=tuple(parse_name(c) for c in compaction.zorder_by or ()),
        target_file_size=health.target_file_size, min_input_files=minimum,
        only_before=compaction_window(due.effective, due.state, due.now),
        reason=f"{sum(groups)} small data files in {len(groups)} partition(s) with at least {minimum} each "
               f"(min_input_files); {health.small_files} of {health.data_files} files are under 75% of the "
               f"{health.target_file_size:,}-byte target")


def _delete_files(due: Due) -> Action | Skip | None:
    deletes, count = due.effective.lifecycle.delete_files, due.health.position_delete_files
    if not _switched_on(deletes):
        return None
    minimum = deletes.min_input_files or DEFAULT_MIN_DELETE_FILES
    if count < minimum:
        return Skip("TM202", "rewrite_position_delete_files",
                    f"{count} position delete file(s), below min_input_files {minimum}")
    return actions.RewritePositionDeletes(table=due.state.name, min_input_files=minimum,
                                  reason=f"{count} position delete file(s) (min_input_files {minimum})")


def _manifests(due: Due) -> Action | Skip | None:
    manifests, count = due.effective.lifecycle.manifests, due.health.manifests
    if not _switched_on(manifests):
        return None
    minimum = manifests.min_manifests or DEFAULT_MIN_MANIFESTS
    if count < minimum:
        return Skip("TM203", "rewrite_manifests", f"{count} manifest(s), below min_manifests {minimum}")
    return actions.RewriteManifests(table=due.state.name,
                            reason=f"the current snapshot has {count} manifests (min_manifests {minimum})")


def _snapshots(due: Due) -> Action | Skip | None:
    snapshots, times = due.effective.lifecycle.snapshots, due.health.snapshot_times
    if snapshots is None or snapshots.max_age is None:
        return None
    keep = snapshots.min_keep or DEFAULT_MIN_KEEP
    older_than = due.now - timedelta(milliseconds=snapshots.max_age.millis)
    expiry = snapshot_expiry(due.health, older_than, keep, due.now)
    if not expiry.expire and not expiry.dropped_refs:
        return Skip("TM301", "expire_snapshots", f"none of {len(times)} snapshot(s) is older than "
                                                  f"{snapshots.max_age} beyond the newest {keep} (min_keep)")
    held = [f"{name} keeps {n}" for name, n in expiry.held_by_refs.items()]
    dropped = [f"{name} is dropped (older than its max_ref_age)" for name in expiry.dropped_refs]
    return actions.ExpireSnapshots(
        table=due.state.name, older_than=older_than, retain_last=keep,
        reason=f"{len(expiry.expire)} of {len(times)} snapshots expire: older than {snapshots.max_age} beyond the "
               f"newest {keep} (min_keep)" + "".join(f"; {', '.join(x)}" for x in (held, dropped) if x))


def snapshot_expiry(health: TableHealth, older_than: datetime, retain_last: int, now: datetime) -> Expiry:
    """What ``expire_snapshots(older_than, retain_last)`` removes from the table as ``health`` shows it."""
    return expired_snapshots(health.snapshot_log, health.refs, now_ms=int(now.timestamp() * 1000),
                             older_than_ms=int(older_than.timestamp() * 1000), retain_last=retain_last,
                             default_max_ref_age_ms=health.max_ref_age_ms or NEVER)


def _orphans(due: Due) -> Action | Skip | None:
    orphans = due.effective.lifecycle.orphan_files
    if not _switched_on(orphans):
        return None
    age = orphans.older_than or DEFAULT_ORPHAN_AGE
    found = due.health.orphans
    if found is None:  # the location was not listed (a caller without storage access): Spark lists it
        reason = f"declared; the table location is listed for files older than {age} that no snapshot uses"
    elif found.refused is not None:
        return Skip("TM302", "remove_orphan_files", f"refused: {found.refused}")
    elif found.files == 0:
        young = f" ({found.young} newer unreferenced file(s) wait for the {age} guard)" if found.young else ""
        return Skip("TM302", "remove_orphan_files", f"no unreferenced file older than {age}{young}")
    else:
        reason = f"{found.files} unreferenced file(s), {found.bytes:,} bytes, older than {age}"
    return actions.RemoveOrphanFiles(table=due.state.name, older_than=due.now - timedelta(milliseconds=age.millis),
                             reason=reason)


Switchable = TypeVar("Switchable", Compaction, DeleteFileRewrite, ManifestRewrite, OrphanFiles)


def _switched_on(section: Switchable | None) -> TypeGuard[Switchable]:
    """Declared in git and not turned off with ``enabled: false``."""
    return section is not None and section.enabled is not False


# One rule per lifecycle section, in the order of the module docstring.
RULES: tuple[Callable[[Due], Action | Skip | None], ...] = (
    _expired_rows, _compaction, _delete_files, _manifests, _snapshots, _orphans,
)


def _temporal_kind(state: TableState, column: ColumnPath) -> ColumnKind | None:
    field = state.field_at(column)
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
