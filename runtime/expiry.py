"""Snapshot expiry without a JVM: what Spark's ``expire_snapshots(older_than, retain_last)`` does, committed
through pyiceberg (0.12's ``ExpireSnapshots`` removes snapshots by id or age only: no ``retain_last``, no ref
retention, no file cleanup, so the parts it lacks are here and the decision is the compiler's).

- Which snapshots: compiler/maintenance/expiry.py (Iceberg's ``RemoveSnapshots``: every ref's snapshot, each
  branch's ancestors while fewer than its ``min_snapshots_to_keep`` (default ``retain_last``) or newer than its
  ``max_snapshot_age`` (default ``older_than``), unreferenced snapshots newer than ``older_than``), computed on
  the table as it is right before the commit, with the wall clock's now for ref ages as Iceberg uses. Tags
  and branches older than their ``max_ref_age`` (default ``history.expire.max-ref-age-ms``) are removed in
  the same commit, as Iceberg removes them.
- The commit: pyiceberg checks its conditions against the metadata current at the commit: the table's uuid,
  every ref where the decision saw it and, on catalogs that check conditions in this process (SQL, Hive),
  no ref added or removed. A concurrent writer's commit fails it and the decision is made again on the new
  metadata: only ids computed on the metadata committed against are removed, so a writer's snapshot or ref
  is never lost.
- The files: those the expired snapshots reached (manifest lists, manifests, live data and delete files:
  runtime/erasure/survey.py's reach, read as Iceberg's reachability cleanup reads it) that no remaining
  snapshot reaches, plus statistics files no remaining snapshot keeps; deleted through erase's
  ``delete_unreferenced`` (runtime/erasure/leftovers.py), which reads the latest metadata again right before
  deleting. Nothing else is deleted: files no snapshot ever reached are orphan removal's.
- A table with ``gc.enabled=false`` is refused, as Spark refuses it.

A kill between the commit and the deletions leaves unreferenced files that no snapshot reaches: orphan
removal finds them once older than its guard (as after a killed Spark procedure).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import cast

from pyarrow import fs as pafs
from pyiceberg.exceptions import CommitFailedException
from pyiceberg.table import Table
from pyiceberg.table.metadata import TableMetadata
from pyiceberg.table.update import (
    AssertRefSnapshotId,
    AssertTableUUID,
    RemovePartitionStatisticsUpdate,
    RemoveSnapshotRefUpdate,
    RemoveSnapshotsUpdate,
    TableRequirement,
    TableUpdate,
    ValidatableTableRequirement,
)

from tablepolicy.compiler.maintenance.expiry import NEVER, Expiry, RefInfo, SnapshotInfo, expired_snapshots

from .erasure.commits import _retried
from .erasure.leftovers import delete_unreferenced, reached
from .erasure.survey import MetadataCache, filesystem_for, table_reach
from .orphans import drop_checksums, normalize

GC_ENABLED = "gc.enabled"
MAX_REF_AGE = "history.expire.max-ref-age-ms"
PAUSE = "TABLEPOLICY_EXPIRY_PAUSE"  # seconds to wait after the commit, before deleting: the kill test's window


class ExpiryRefused(Exception):
    """The table must not be expired (as Spark refuses it)."""


@dataclass(frozen=True)
class Expired:
    """What one expiry did: the snapshots and refs it removed, the files it deleted (normalized paths) by kind."""

    snapshots: tuple[int, ...] = ()
    refs: tuple[str, ...] = ()
    manifest_lists: tuple[str, ...] = ()
    manifests: tuple[str, ...] = ()
    content: tuple[str, ...] = ()  # data and delete files
    statistics: tuple[str, ...] = ()

    @property
    def deleted(self) -> tuple[str, ...]:
        return tuple(sorted((*self.manifest_lists, *self.manifests, *self.content, *self.statistics)))

    def output(self) -> dict[str, int]:
        """As Spark's procedure's result row counts them (data and delete files together)."""
        return {"deleted_content_files_count": len(self.content), "deleted_manifest_files_count": len(self.manifests),
                "deleted_manifest_lists_count": len(self.manifest_lists),
                "deleted_statistics_files_count": len(self.statistics)}


def decision(metadata: TableMetadata, *, now: datetime, older_than: datetime, retain_last: int) -> Expiry:
    """What ``expire_snapshots(older_than, retain_last)`` removes from ``metadata`` at ``now``."""
    snapshots = tuple(SnapshotInfo(id=s.snapshot_id, parent_id=s.parent_snapshot_id, timestamp_ms=s.timestamp_ms)
                      for s in metadata.snapshots)
    refs = tuple(RefInfo(name=name, snapshot_id=ref.snapshot_id, branch=ref.snapshot_ref_type == "branch",
                         max_ref_age_ms=ref.max_ref_age_ms, max_snapshot_age_ms=ref.max_snapshot_age_ms,
                         min_snapshots_to_keep=ref.min_snapshots_to_keep)
                 for name, ref in sorted(metadata.refs.items()))
    age = metadata.properties.get(MAX_REF_AGE)
    return expired_snapshots(snapshots, refs, now_ms=int(now.timestamp() * 1000),
                             older_than_ms=int(older_than.timestamp() * 1000), retain_last=retain_last,
                             default_max_ref_age_ms=int(age) if age else NEVER)


class AssertRefsUnchanged(ValidatableTableRequirement):
    """The table has exactly these refs (names and snapshots): a ref created or removed meanwhile fails the
    commit. Checked in this process by catalogs that commit here (SQL, Hive); not sent to a REST server."""

    type: str = "tablepolicy-assert-refs-unchanged"
    refs: dict[str, int]

    def validate(self, base_metadata: TableMetadata | None) -> None:  # type: ignore[override]
        current = {name: ref.snapshot_id for name, ref in (base_metadata.refs if base_metadata else {}).items()}
        if current != self.refs:
            raise CommitFailedException(f"Requirement failed: the table's refs changed ({sorted(current)} now, "
                                        f"{sorted(self.refs)} when expiry was decided)")


def _requirements(table: Table) -> tuple[TableRequirement, ...]:
    metadata = table.metadata
    found: list[ValidatableTableRequirement] = [AssertTableUUID(uuid=metadata.table_uuid)]
    found += [AssertRefSnapshotId(ref=name, snapshot_id=ref.snapshot_id) for name, ref in sorted(metadata.refs.items())]
    from pyiceberg.catalog.rest import RestCatalog  # tablepolicy's BoundedRestCatalog among them

    if not isinstance(table.catalog, RestCatalog):
        found.append(AssertRefsUnchanged(refs={name: ref.snapshot_id for name, ref in metadata.refs.items()}))
    return cast(tuple[TableRequirement, ...], tuple(found))  # pyiceberg's union names its own kinds only


def _updates(metadata: TableMetadata, expiry: Expiry) -> tuple[TableUpdate, ...]:
    gone = set(expiry.expire)
    updates: list[TableUpdate] = [RemoveSnapshotRefUpdate(ref_name=name) for name in expiry.dropped_refs]
    if gone:
        updates.append(RemoveSnapshotsUpdate(snapshot_ids=sorted(gone)))
        updates += [RemovePartitionStatisticsUpdate(snapshot_id=s.snapshot_id)
                    for s in metadata.partition_statistics if s.snapshot_id in gone]
    return tuple(updates)


def expire(name: str, latest: Callable[[], Table], *, older_than: datetime, retain_last: int,
           clock: Callable[[], datetime], filesystems: dict[tuple[str, str], pafs.FileSystem] | None = None,
           ) -> Expired:
    """Expire ``latest()`` as Spark's procedure would, then delete what only the expired snapshots reached.
    ``name``: the table's, for messages; ``clock``: now, read at each attempt (refs' ages)."""
    cache = MetadataCache()  # manifests are immutable: each is read once however many attempts and reaches
    outcome: dict[str, object] = {}

    def attempt() -> Table:
        table = latest()
        if table.properties.get(GC_ENABLED, "true").strip().lower() == "false":
            raise ExpiryRefused(f"{name}: cannot expire snapshots: GC is disabled (gc.enabled=false: deleting "
                                "files may corrupt other tables)")
        expiry = decision(table.metadata, now=clock(), older_than=older_than, retain_last=retain_last)
        updates = _updates(table.metadata, expiry)
        outcome.update(before=table, expiry=expiry)
        if updates:
            table.catalog.commit_table(table, _requirements(table), updates)
        return latest()

    after = _retried(f"{name}: expire snapshots", attempt)
    before, expiry = outcome["before"], outcome["expiry"]
    assert isinstance(before, Table) and isinstance(expiry, Expiry)
    if not expiry.expire and not expiry.dropped_refs:
        return Expired()
    if seconds := os.environ.get(PAUSE):
        time.sleep(float(seconds))
    was, now = table_reach(before, cache), table_reach(after, cache)
    paths = {path: was.uris.get(path, path) for path in was.reached_by(expiry.expire) - reached(now)}
    paths |= {path: uri for path, uri in _statistics(before).items() if path not in _statistics(after)}
    last: list[Table] = []

    def fresh() -> Table:
        last.append(latest())
        return last[-1]

    systems = filesystems if filesystems is not None else {}
    deleted = set(delete_unreferenced(fresh, paths, systems, read=lambda reach: reached(reach)
                                      | _statistics(last[-1]).keys()))
    for path in deleted:
        drop_checksums(filesystem_for(paths[path], systems, after.io.properties), [path])
    lists = deleted & was.lists
    manifests = deleted & was.all_manifests - lists
    statistics = deleted & _statistics(before).keys() - lists - manifests
    return Expired(tuple(expiry.expire), tuple(expiry.dropped_refs), tuple(sorted(lists)), tuple(sorted(manifests)),
                   tuple(sorted(deleted - lists - manifests - statistics)), tuple(sorted(statistics)))


def _statistics(table: Table) -> dict[str, str]:
    """The table's statistics and partition statistics files: normalized path -> as spelled."""
    metadata = table.metadata
    return {normalize(s.statistics_path): s.statistics_path
            for s in (*metadata.statistics, *metadata.partition_statistics)}
