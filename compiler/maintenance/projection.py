"""A dry run's estimate of each action's effect: the table's health as it will read after the action, from
the health before it (pure; the run re-reads the real health instead, see compiler/maintenance/sequence.py).

Exact where metadata decides the outcome: rows and files wholly before the retention cutoff, the small
files compaction takes, the snapshots expiry removes (the snapshots the earlier actions commit included),
the orphan files a listing found. Estimated where the engine decides: one output file per compacted
partition, one manifest after a manifest rewrite.
"""

from __future__ import annotations

from datetime import datetime
from typing import assert_never

from compiler.diff.changes import RetentionEstimate
from compiler.maintenance import actions
from compiler.maintenance.actions import Action
from compiler.maintenance.decide import snapshot_expiry
from compiler.maintenance.expiry import MAIN, RefInfo, SnapshotInfo
from compiler.maintenance.health import TableHealth
from compiler.maintenance.report import Effect

NOTHING_EXPIRED = RetentionEstimate(files=0, partial_files=0, rows=0, rows_upper=0, bytes=0)


def projected(health: TableHealth, action: Action, now: datetime) -> tuple[TableHealth, Effect]:
    """The health after ``action`` and what it changed, estimated at ``now`` (the decisions' time)."""
    match action:
        case actions.DeleteExpiredRows():
            expired = health.expired or NOTHING_EXPIRED
            groups = health.retained_small_file_groups
            gone_small = sum(health.small_file_groups) - sum(groups) if groups is not None else 0
            after = health.model_copy(update={
                "data_files": health.data_files - expired.files, "data_bytes": health.data_bytes - expired.bytes,
                "rows": health.rows - expired.rows, "small_files": health.small_files - gone_small,
                "small_file_groups": groups if groups is not None else health.small_file_groups,
                "expired": NOTHING_EXPIRED})
            return _committed(after, now), Effect(rows_deleted=expired.rows)
        case actions.RewriteDataFiles():
            taken = [n for n in health.small_file_groups if n >= action.min_input_files]
            left = tuple(sorted([n for n in health.small_file_groups if n < action.min_input_files]
                                + [1] * len(taken), reverse=True))
            # the rewritten files' manifests are left holding only deleted entries, which no scan reads: what
            # stays is a manifest per untouched file at most, plus the one the rewrite writes
            untouched = health.data_files - sum(taken)
            manifests = min(health.manifests, untouched) + 1 if taken else health.manifests
            after = health.model_copy(update={
                "manifests": manifests, "data_files": health.data_files - sum(taken) + len(taken),
                "small_files": health.small_files - sum(taken) + len(taken), "small_file_groups": left,
                "retained_small_file_groups": left if health.retained_small_file_groups is not None else None})
            return _committed(after, now), Effect(rewritten=sum(taken), written=len(taken))
        case actions.RewritePositionDeletes():
            return _committed(health, now), Effect(rewritten=health.position_delete_files)
        case actions.RewriteManifests():
            after = health.model_copy(update={"manifests": 1})
            return _committed(after, now), Effect(rewritten=health.manifests, written=1)
        case actions.ExpireSnapshots():
            expiry = snapshot_expiry(health, action.older_than, action.retain_last, now)
            gone = set(expiry.expire)
            log = tuple(s for s in health.snapshot_log if s.id not in gone)
            after = health.model_copy(update={
                "snapshot_log": log, "snapshot_times": tuple(s.timestamp_ms for s in log),
                "refs": tuple(r for r in health.refs if r.name not in expiry.dropped_refs)})
            return after, Effect(snapshots_expired=len(gone))
        case actions.RemoveOrphanFiles():
            found = health.orphans
            if found is None:  # the location was not listed: Spark finds out
                return health, Effect()
            after = health.model_copy(update={"orphans": found.model_copy(update={"files": 0, "bytes": 0})})
            return after, Effect(files_removed=found.files, bytes_removed=found.bytes)
        case _:
            assert_never(action)


def _committed(health: TableHealth, now: datetime) -> TableHealth:
    """The table after one more commit on main at ``now``: a new current snapshot (a placeholder id below
    every real one) whose parent is the old current."""
    new_id = min((s.id for s in health.snapshot_log), default=0)
    new_id = min(new_id, 0) - 1
    at = int(now.timestamp() * 1000)
    main = next((r for r in health.refs if r.name == MAIN), None)
    parent = main.snapshot_id if main is not None else health.current_snapshot_id
    moved = RefInfo(name=MAIN, snapshot_id=new_id, branch=True, max_ref_age_ms=main.max_ref_age_ms if main else None,
                    max_snapshot_age_ms=main.max_snapshot_age_ms if main else None,
                    min_snapshots_to_keep=main.min_snapshots_to_keep if main else None)
    refs = (*(r for r in health.refs if r.name != MAIN), moved)
    log = (*health.snapshot_log, SnapshotInfo(id=new_id, parent_id=parent, timestamp_ms=at))
    return health.model_copy(update={
        "snapshot_log": log, "snapshot_times": (*health.snapshot_times, at), "current_snapshot_id": new_id,
        "refs": tuple(sorted(refs, key=lambda r: r.name))})
