"""Table health read from metadata with pyiceberg (no JVM): snapshots, data and delete files, manifests.

Reading the current snapshot's manifests is the whole cost; data files are never opened.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from collections.abc import Callable
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from pyiceberg.conversions import from_bytes
from pyiceberg.manifest import DataFile, DataFileContent
from pyiceberg.table import Table

from compiler.catalog.estimate import column_field, estimate_retention, physical_cutoff
from compiler.diff.changes import RetentionEstimate
from compiler.maintenance.expiry import RefInfo, SnapshotInfo
from compiler.model.table import ColumnPath

ICEBERG_TARGET_FILE_SIZE = 512 * 1024 * 1024  # write.target-file-size-bytes when a table does not set it
SMALL_FRACTION = 0.75  # rewrite_data_files' default min-file-size-bytes: 75% of the target
# data file size histogram: upper bounds of each bucket in bytes (the last bucket is everything above)
SIZE_BUCKETS = (1 << 20, 8 << 20, 32 << 20, 128 << 20, 384 << 20, 512 << 20, 1 << 30)
TOP_PARTITIONS = 20  # partitions listed by small files in the HTML report


class PartitionFiles(BaseModel):
    """Data files of one partition: how many, how many small (under 75% of the target)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    partition: str
    files: int
    small: int


class OrphanFigures(BaseModel):
    """Unreferenced files under the table location (from a listing, see runtime/orphans.py)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    files: int = Field(description="Unreferenced files older than the guard: what removal would delete.")
    bytes: int
    young: int = Field(0, description="Unreferenced files newer than the guard (maybe a commit in flight).")
    refused: str | None = Field(None, description="Why removal must not run: the candidates look implausible.")


class TableHealth(BaseModel):
    """What maintenance decides on; every figure is for the current snapshot unless it says otherwise."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    table: tuple[str, ...]
    snapshot_times: tuple[int, ...] = Field(description="Commit time (ms) of every snapshot kept, oldest first.")
    current_snapshot_id: int | None
    data_files: int
    data_bytes: int
    rows: int
    small_files: int = Field(description="Data files under 75% of the target file size.")
    small_file_groups: tuple[int, ...] = Field(
        (), description="Small files per partition (only partitions with any, largest first): compaction merges "
                        "files within a partition, and leaves out files of the recent window it is told to skip.")
    retained_small_file_groups: tuple[int, ...] | None = Field(
        None, description="small_file_groups without the files wholly before the retention cutoff: what is left "
                          "to compact once expired rows are deleted (None without a retention).")
    target_file_size: int
    position_delete_files: int
    equality_delete_files: int
    manifests: int
    metadata_files: int = Field(description="Metadata JSON files the table still lists (log + current).")
    expired: RetentionEstimate | None = Field(None, description="Files holding rows older than the retention.")
    size_histogram: tuple[int, ...] = Field((), description="Data files per size bucket (SIZE_BUCKETS, then above).")
    partitions: tuple[PartitionFiles, ...] = Field(
        (), description=f"The {TOP_PARTITIONS} partitions with the most small files, most first.")
    snapshot_log: tuple[SnapshotInfo, ...] = Field((), description="Every snapshot kept: id, parent, time.")
    refs: tuple[RefInfo, ...] = Field((), description="Branches and tags, with their retention settings.")
    max_ref_age_ms: int | None = Field(None, description="history.expire.max-ref-age-ms, when the table sets it.")
    orphans: OrphanFigures | None = Field(None, description="Orphan files, when the location was listed.")

    @property
    def snapshots(self) -> int:
        return len(self.snapshot_times)


def read_health(
    name: tuple[str, ...],
    table: Table,
    retention: tuple[ColumnPath, datetime] | None = None,
    recent: tuple[ColumnPath, datetime] | None = None,
) -> TableHealth:
    """``retention``: the column and cutoff whose older rows are estimated from column bounds; ``recent``:
    files whose column is wholly at or after the cutoff are not counted for compaction."""
    metadata = table.metadata
    target = int(table.properties.get("write.target-file-size-bytes", ICEBERG_TARGET_FILE_SIZE))
    data_files = data_bytes = rows = small = position = equality = manifests = 0
    groups: Counter[tuple[int, Any]] = Counter()
    retained: Counter[tuple[int, Any]] = Counter()
    per_partition: Counter[tuple[int, Any]] = Counter()
    per_partition_small: Counter[tuple[int, Any]] = Counter()
    histogram = [0] * (len(SIZE_BUCKETS) + 1)
    is_recent = _bound_test(table, recent, at_or_after=True)
    is_expired = _bound_test(table, retention, at_or_after=False)
    snapshot = table.current_snapshot()
    if snapshot is not None:
        for manifest in snapshot.manifests(table.io):
            # a manifest holding only entries a rewrite marked deleted is dropped by the next commit and read
            # by no scan: counting it made rewrite_manifests due right after compaction (0 rewritten)
            live = (manifest.added_files_count, manifest.existing_files_count)
            manifests += any(count is None for count in live) or sum(c or 0 for c in live) > 0
            for entry in manifest.fetch_manifest_entry(table.io, discard_deleted=True):
                file = entry.data_file
                if file.content == DataFileContent.DATA:
                    data_files += 1
                    data_bytes += file.file_size_in_bytes
                    rows += file.record_count
                    histogram[bisect_left(SIZE_BUCKETS, file.file_size_in_bytes)] += 1
                    per_partition[(file.spec_id, file.partition)] += 1
                    if file.file_size_in_bytes < SMALL_FRACTION * target:
                        small += 1
                        per_partition_small[(file.spec_id, file.partition)] += 1
                        if not is_recent(file):
                            groups[(file.spec_id, file.partition)] += 1
                            if not is_expired(file):
                                retained[(file.spec_id, file.partition)] += 1
                elif file.content == DataFileContent.POSITION_DELETES:
                    position += 1
                else:
                    equality += 1
    return TableHealth(
        table=name,
        snapshot_times=tuple(sorted(s.timestamp_ms for s in metadata.snapshots)),
        current_snapshot_id=metadata.current_snapshot_id,
        data_files=data_files,
        data_bytes=data_bytes,
        rows=rows,
        small_files=small,
        small_file_groups=tuple(sorted(groups.values(), reverse=True)),
        retained_small_file_groups=tuple(sorted(retained.values(), reverse=True)) if retention is not None else None,
        target_file_size=target,
        position_delete_files=position,
        equality_delete_files=equality,
        manifests=manifests,
        metadata_files=len(metadata.metadata_log) + 1,
        expired=estimate_retention(table, *retention) if retention is not None else None,
        size_histogram=tuple(histogram),
        partitions=_top_partitions(table, per_partition, per_partition_small),
        snapshot_log=tuple(SnapshotInfo(id=s.snapshot_id, parent_id=s.parent_snapshot_id, timestamp_ms=s.timestamp_ms)
                           for s in sorted(metadata.snapshots, key=lambda s: (s.timestamp_ms, s.snapshot_id))),
        refs=tuple(RefInfo(name=name, snapshot_id=ref.snapshot_id, branch=ref.snapshot_ref_type == "branch",
                           max_ref_age_ms=ref.max_ref_age_ms, max_snapshot_age_ms=ref.max_snapshot_age_ms,
                           min_snapshots_to_keep=ref.min_snapshots_to_keep)
                   for name, ref in sorted(metadata.refs.items())),
        max_ref_age_ms=int(age) if (age := table.properties.get("history.expire.max-ref-age-ms")) else None,
    )


def _top_partitions(table: Table, files: Counter[tuple[int, Any]], small: Counter[tuple[int, Any]]
                    ) -> tuple[PartitionFiles, ...]:
    def label(key: tuple[int, Any]) -> str:
        spec_id, record = key
        spec = table.specs().get(spec_id)
        if spec is None or not spec.fields:
            return "(unpartitioned)"
        return "/".join(f"{f.name}={record[i]}" for i, f in enumerate(spec.fields))

    ranked = sorted(files, key=lambda k: (-small[k], -files[k], label(k)))[:TOP_PARTITIONS]
    return tuple(PartitionFiles(partition=label(k), files=files[k], small=small[k]) for k in ranked)


def _bound_test(table: Table, bound: tuple[ColumnPath, datetime] | None, *, at_or_after: bool
                ) -> Callable[[DataFile], bool]:
    """``at_or_after``: files whose column is wholly at or after the cutoff (lower bound), else wholly before
    it (upper bound); a file without bounds is neither."""
    found = column_field(table, bound[0]) if bound is not None else None
    if bound is None or found is None:
        return lambda _file: False
    field_id, field_type = found
    limit, _ = physical_cutoff(field_type, bound[1])

    def test(file: DataFile) -> bool:
        bounds = (file.lower_bounds if at_or_after else file.upper_bounds) or {}
        raw = bounds.get(field_id)
        if raw is None:
            return False
        position = int(from_bytes(field_type, raw))
        return position >= limit if at_or_after else position < limit

    return test
