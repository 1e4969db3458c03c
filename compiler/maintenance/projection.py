"""A dry run's estimate of each action's effect: the table's health as it will read after the action, from
the health before it (pure; the run re-reads the real health instead, see compiler/maintenance/sequence.py).

Exact where metadata decides the outcome: rows and files wholly before the retention cutoff, the small
files compaction takes and the bytes it reads, the snapshots expiry removes (the snapshots the earlier actions
commit included), the orphan files a listing found. A range where the engine decides: the files compaction
writes (compiler/maintenance/compaction.py). Unknown until the run: the bytes compaction writes. Estimated:
one manifest after a manifest rewrite.
"""

from __future__ import annotations

from datetime import datetime
from typing import assert_never

from ..diff.changes import RetentionEstimate
from . import actions
from .actions import Action
from .compaction import estimate, files_written, retained_groups, small_groups
from .decide import snapshot_expiry
from .expiry import MAIN, RefInfo, SnapshotInfo
from .health import SMALL_FRACTION, SmallGroup, TableHealth
from .report import Effect

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
                "small_groups": retained_groups(health) or () if groups is not None else health.small_groups,
                "expired": NOTHING_EXPIRED})
            return _committed(after, now), Effect(rows_deleted=expired.rows)
        case actions.RewriteDataFiles():
            return _compacted(health, action, now)
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


def _compacted(health: TableHealth, action: actions.RewriteDataFiles, now: datetime) -> tuple[TableHealth, Effect]:
    """The files Spark takes are exact; the files it writes are a range (compiler/maintenance/compaction.py):
    the health after holds the fewest, the effect says how many more there may be. The bytes written are
    unknown until the run: ``data_bytes`` after keeps the bytes read, and the effect says they are unknown."""
    target = action.target_file_size
    found = estimate(small_groups(health), target, action.min_input_files)
    if not found.taken:
        return _committed(health, now), Effect(rewritten=0, written=0, bytes_rewritten=0, bytes_written=0)
    written = []
    for group in found.groups_taken:  # a file written stays small when even the whole input would be
        least, _ = files_written(group, target)
        if group.bytes // least < SMALL_FRACTION * target:
            written.append(SmallGroup(files=least, bytes=group.bytes, largest=group.bytes // least))
    left = tuple(sorted((*found.left, *written), key=lambda g: (g.files, g.bytes, g.largest), reverse=True))
    # the rewritten files' manifests are left holding only deleted entries, which no scan reads: what stays is a
    # manifest per untouched file at most, plus the one the rewrite writes
    untouched = health.data_files - found.taken
    least, most = found.written
    after = health.model_copy(update={
        "manifests": min(health.manifests, untouched) + 1, "data_files": untouched + least,
        "small_files": health.small_files - found.taken + sum(g.files for g in written),
        "small_file_groups": tuple(g.files for g in left), "small_groups": left,
        "retained_small_file_groups": tuple(g.files for g in left)
        if health.retained_small_file_groups is not None else None,
        "retained_small_groups": left if health.retained_small_file_groups is not None else None})
    return _committed(after, now), Effect(rewritten=found.taken, written=least, written_most=most if most != least
                                          else None, bytes_rewritten=found.taken_bytes)


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
