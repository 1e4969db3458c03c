"""Table health as maintenance decides on it: figures read from metadata by runtime/health.py (no JVM).

Only the models live here; reading a table's snapshots and manifests is IO and belongs to the runtime.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from ..diff.changes import RetentionEstimate
from .expiry import RefInfo, SnapshotInfo

ICEBERG_TARGET_FILE_SIZE = 512 * 1024 * 1024  # write.target-file-size-bytes when a table does not set it
SMALL_FRACTION = 0.75  # rewrite_data_files' default min-file-size-bytes: 75% of the target
# data file size histogram: upper bounds of each bucket in bytes (the last bucket is everything above)
SIZE_BUCKETS = (1 << 20, 8 << 20, 32 << 20, 128 << 20, 384 << 20, 512 << 20, 1 << 30)
TOP_PARTITIONS = 20  # partitions listed by small files in the HTML report


class PartitionFiles(BaseModel):
    """Data files of one partition: how many, how many small (under 75% of the target)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    partition: str = Field(description="name=value per field as stored (day, hour ordinals): ``ts_day=20749``.")
    readable: str = Field(description="The same as a person reads it (compiler/iceberg/partition_values.py): "
                                      "``ts_day=2026-10-23``.")
    files: int
    small: int


class SmallGroup(BaseModel):
    """The small data files of one partition that compaction may take: how many, their bytes, the largest."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    files: int
    bytes: int = Field(0, description="Their total size (0 for figures made by hand: one file written).")
    largest: int = 0


class OrphanFigures(BaseModel):
    """Unreferenced files under the table location (from a listing, see runtime/orphans.py)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    files: int = Field(description="Unreferenced files older than the guard: what removal would delete.")
    bytes: int
    young: int = Field(0, description="Unreferenced files newer than the guard (maybe a commit in flight).")
    refused: str | None = Field(None, description="Why removal must not run: the candidates look implausible.")


class BloomCoverage(BaseModel):
    """The current snapshot's data files whose footer holds a bloom filter on every erasure key column asked for:
    erase skips such a file without reading its data when no requested key is in its filters. Files written
    before the property have none until compaction rewrites them (runtime/bloom_coverage.py)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    columns: tuple[str, ...] = Field(description="The key columns the table's properties ask filters for.")
    files: int = Field(description="Data files of the current snapshot.")
    bytes: int
    covered_files: int = Field(description="Data files with a filter on every such column in every row group.")
    covered_bytes: int
    unread: int = Field(0, description="Footers that could not be read (counted as not covered).")


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
    small_groups: tuple[SmallGroup, ...] = Field(
        (), description="small_file_groups with their bytes, in the same order: what a compaction estimate reads "
                        "(compiler/maintenance/compaction.py).")
    retained_small_groups: tuple[SmallGroup, ...] | None = Field(
        None, description="retained_small_file_groups with their bytes, in the same order.")
    target_file_size: int
    position_delete_files: int
    equality_delete_files: int
    manifests: int
    metadata_files: int = Field(description="Metadata JSON files the table still lists (log + current).")
    expired: RetentionEstimate | None = Field(None, description="Files holding rows older than the retention.")
    size_histogram: tuple[int, ...] = Field((), description="Data files per size bucket (SIZE_BUCKETS, then above).")
    partitions: tuple[PartitionFiles, ...] = Field(
        (), description=f"The {TOP_PARTITIONS} partitions with the most small files, most first.")
    partition_count: int = Field(0, description="Partitions holding data files (`partitions` lists the first "
                                                f"{TOP_PARTITIONS}); with small files: `small_partition_count`.")
    small_partition_count: int = Field(0, description="Partitions holding small files.")
    snapshot_log: tuple[SnapshotInfo, ...] = Field((), description="Every snapshot kept: id, parent, time.")
    refs: tuple[RefInfo, ...] = Field((), description="Branches and tags, with their retention settings.")
    max_ref_age_ms: int | None = Field(None, description="history.expire.max-ref-age-ms, when the table sets it.")
    orphans: OrphanFigures | None = Field(None, description="Orphan files, when the location was listed.")
    bloom_filters: BloomCoverage | None = Field(
        None, description="Bloom filter coverage of the erasure key (`health` only; None without filters asked for).")

    @property
    def snapshots(self) -> int:
        return len(self.snapshot_times)
