"""Table health read from metadata with pyiceberg (no JVM): snapshots, data and delete files, manifests.

Reading the current snapshot's manifests is the whole cost; data files are never opened.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from collections.abc import Callable
from datetime import datetime
from typing import Any

from pyiceberg.conversions import from_bytes
from pyiceberg.manifest import DataFile, DataFileContent
from pyiceberg.schema import Schema
from pyiceberg.table import Table

from tablepolicy.compiler.catalog.current import CurrentTable
from tablepolicy.compiler.iceberg.partition_values import readable_partition
from tablepolicy.compiler.maintenance.due import HealthRequest
from tablepolicy.compiler.maintenance.expiry import RefInfo, SnapshotInfo
from tablepolicy.compiler.maintenance.health import (
    ICEBERG_TARGET_FILE_SIZE,
    SIZE_BUCKETS,
    SMALL_FRACTION,
    TOP_PARTITIONS,
    OrphanFigures,
    PartitionFiles,
    SmallGroup,
    TableHealth,
)
from tablepolicy.compiler.model.table import ColumnPath

from .bloom_coverage import coverage, key_filters
from .catalog.estimate import column_field, estimate_retention, physical_cutoff
from .catalog.reader import CatalogReader
from .manifests import READS

# (name, table, files older than this) -> orphan figures from a listing of the table location
# (runtime/orphans.py), or None where a listing cannot decide (the removal is then left to Spark's own checks)
OrphanScanner = Callable[[tuple[str, ...], Table, datetime], OrphanFigures | None]


class CatalogHealth:
    """tablepolicy.compiler.maintenance.due's HealthSource on a catalog reader: health read from each table's metadata,
    and its orphan files listed by ``scan_orphans`` when the policy asks for them. ``fresh``: read the catalog
    again (after an action), not the metadata this run read first. ``footers``: read each data file's footer for
    the bloom filter coverage of the erasure key (``health``; maintenance decides nothing on it)."""

    def __init__(self, reader: CatalogReader, scan_orphans: OrphanScanner | None = None, *, fresh: bool = False,
                 footers: bool = False) -> None:
        self.reader, self.scan_orphans, self.fresh, self.footers = reader, scan_orphans, fresh, footers

    def table(self, name: tuple[str, ...]) -> CurrentTable | None:
        return self.reader.table(name, fresh=self.fresh)

    def health(self, name: tuple[str, ...], request: HealthRequest) -> TableHealth | None:
        table = self.reader.pyiceberg_table(name, fresh=self.fresh)
        if table is None:
            return None
        health = read_health(name, table, request.retention, request.recent, footers=self.footers)
        if self.scan_orphans is not None and request.orphans_older_than is not None:
            health = health.model_copy(update={"orphans": self.scan_orphans(name, table, request.orphans_older_than)})
        return health


def read_health(
    name: tuple[str, ...],
    table: Table,
    retention: tuple[ColumnPath, datetime] | None = None,
    recent: tuple[ColumnPath, datetime] | None = None,
    *,
    footers: bool = False,
) -> TableHealth:
    """``retention``: the column and cutoff whose older rows are estimated from column bounds; ``recent``:
    files whose column is wholly at or after the cutoff are not counted for compaction; ``footers``: read the data
    files' footers for bloom filter coverage when the table asks filters on its erasure key."""
    metadata = table.metadata
    target = int(table.properties.get("write.target-file-size-bytes", ICEBERG_TARGET_FILE_SIZE))
    data_files = data_bytes = rows = small = position = equality = manifests = 0
    groups: dict[tuple[int, Any], list[int]] = {}  # partition -> [files, bytes, largest] (SmallGroup at the end)
    retained: dict[tuple[int, Any], list[int]] = {}
    per_partition: Counter[tuple[int, Any]] = Counter()
    per_partition_small: Counter[tuple[int, Any]] = Counter()
    histogram = [0] * (len(SIZE_BUCKETS) + 1)
    is_recent = _bound_test(table, recent, at_or_after=True)
    is_expired = _bound_test(table, retention, at_or_after=False)
    filtered = key_filters(table.properties, table.schema()) if footers else {}
    files: list[tuple[str, int]] = []  # (path, bytes) of each data file, when their footers are read
    snapshot = table.current_snapshot()
    if snapshot is not None:
        for manifest in READS.manifests(table.io, snapshot):
            # a manifest holding only entries a rewrite marked deleted is dropped by the next commit and read
            # by no scan: counting it made rewrite_manifests due right after compaction (0 rewritten)
            live = (manifest.added_files_count, manifest.existing_files_count)
            manifests += any(count is None for count in live) or sum(c or 0 for c in live) > 0
            for entry in READS.entries(table.io, manifest, discard_deleted=True):
                file = entry.data_file
                if file.content == DataFileContent.DATA:
                    size = file.file_size_in_bytes
                    data_files += 1
                    data_bytes += size
                    rows += file.record_count
                    histogram[bisect_left(SIZE_BUCKETS, size)] += 1
                    if filtered:
                        files.append((file.file_path, size))
                    key: tuple[int, Any] = (file.spec_id, tuple(file.partition._data))  # a Record hashes by repr
                    per_partition[key] += 1
                    if size < SMALL_FRACTION * target:
                        small += 1
                        per_partition_small[key] += 1
                        if not is_recent(file):
                            _add(groups, key, size)
                            if not is_expired(file):
                                _add(retained, key, size)
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
        small_file_groups=tuple(g.files for g in _largest_first(groups)),
        retained_small_file_groups=tuple(g.files for g in _largest_first(retained)) if retention is not None else None,
        small_groups=_largest_first(groups),
        retained_small_groups=_largest_first(retained) if retention is not None else None,
        target_file_size=target,
        position_delete_files=position,
        equality_delete_files=equality,
        manifests=manifests,
        metadata_files=len(metadata.metadata_log) + 1,
        expired=estimate_retention(table, *retention) if retention is not None else None,
        size_histogram=tuple(histogram),
        partitions=_top_partitions(table, per_partition, per_partition_small),
        partition_count=len(per_partition), small_partition_count=sum(1 for n in per_partition_small.values() if n),
        snapshot_log=tuple(SnapshotInfo(id=s.snapshot_id, parent_id=s.parent_snapshot_id, timestamp_ms=s.timestamp_ms)
                           for s in sorted(metadata.snapshots, key=lambda s: (s.timestamp_ms, s.snapshot_id))),
        refs=tuple(RefInfo(name=name, snapshot_id=ref.snapshot_id, branch=ref.snapshot_ref_type == "branch",
                           max_ref_age_ms=ref.max_ref_age_ms, max_snapshot_age_ms=ref.max_snapshot_age_ms,
                           min_snapshots_to_keep=ref.min_snapshots_to_keep)
                   for name, ref in sorted(metadata.refs.items())),
        max_ref_age_ms=int(age) if (age := table.properties.get("history.expire.max-ref-age-ms")) else None,
        bloom_filters=coverage(table.io, filtered, files) if filtered else None,
    )


def _add(groups: dict[tuple[int, Any], list[int]], key: tuple[int, Any], size: int) -> None:
    group = groups.get(key)
    if group is None:
        groups[key] = [1, size, size]
    else:
        group[0], group[1], group[2] = group[0] + 1, group[1] + size, max(group[2], size)


def _largest_first(groups: dict[tuple[int, Any], list[int]]) -> tuple[SmallGroup, ...]:
    return tuple(SmallGroup(files=files, bytes=size, largest=largest)
                 for files, size, largest in sorted(groups.values(), reverse=True))


def _top_partitions(table: Table, files: Counter[tuple[int, Any]], small: Counter[tuple[int, Any]]
                    ) -> tuple[PartitionFiles, ...]:
    def label(key: tuple[int, Any]) -> str:
        spec_id, record = key
        spec = table.specs().get(spec_id)
        if spec is None or not spec.fields:
            return "(unpartitioned)"
        return "/".join(f"{f.name}={record[i]}" for i, f in enumerate(spec.fields))

    def readable(key: tuple[int, Any]) -> str:
        spec_id, record = key
        spec, schema = table.specs().get(spec_id), table.schema()
        if spec is None or not spec.fields:
            return "(unpartitioned)"
        return readable_partition((f.name, str(f.transform), _type_name(schema, f.source_id), record[i])
                                  for i, f in enumerate(spec.fields))

    ranked = sorted(files, key=lambda k: (-small[k], -files[k], label(k)))[:TOP_PARTITIONS]
    return tuple(PartitionFiles(partition=label(k), readable=readable(k), files=files[k], small=small[k])
                 for k in ranked)


def _type_name(schema: Schema, field_id: int) -> str:
    """The type of a partition source column ('' when an old spec's source is no longer in the schema: its
    transform alone then says how to read the value)."""
    try:
        return str(schema.find_type(field_id))
    except ValueError:
        return ""


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
