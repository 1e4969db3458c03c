"""Lifecycle policy: what keeps a table healthy without anyone remembering to run maintenance.

Every field is optional so namespace defaults and table policies can be merged field by field; the
effective settings (and where each value came from) are computed in ``tablepolicy.compiler.effective``.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, Field
from pydantic_core import PydanticCustomError

from .. import codes
from .base import Count, NonEmpty, Spec
from .units import Duration, IntSize, PositiveDuration, Size


class SnapshotExpiry(Spec):
    """Snapshot expiry; stored as Iceberg's history.expire.* table properties."""

    max_age: Duration | None = Field(None, description="Expire snapshots older than this (e.g. 6h, 5d).")
    min_keep: Count | None = Field(None, description="Always keep at least this many snapshots.")
    max_ref_age: PositiveDuration | None = Field(None, description="Expire branches and tags older than this.")


class Retention(Spec):
    """Row-level retention: rows whose temporal column is older than ``keep`` are deleted."""

    column: str | None = Field(None, min_length=1, description="A date or timestamp column (or a struct field path).")
    keep: Duration | None = Field(None, description="How long rows are kept, e.g. 365d.")


class OrphanFiles(Spec):
    """Removal of files no snapshot references (failed writes, expired snapshots)."""

    enabled: bool | None = Field(None, description="Run orphan-file removal (default true).")
    older_than: Duration | None = Field(
        None, description="Only files older than this are removed (default 3d; 24h is the hard floor)."
    )


class MetadataRetention(Spec):
    """Old metadata.json files kept after each commit."""

    delete_after_commit: bool | None = Field(None, description="Delete old metadata files after a commit.")
    previous_versions_max: Count | None = Field(None, description="Metadata files kept when deleting.")


class Compaction(Spec):
    """Rewrite of small data files (Iceberg rewrite_data_files)."""

    enabled: bool | None = Field(None, description="Run compaction (default true when the section exists).")
    strategy: Literal["binpack", "sort", "zorder"] | None = Field(None, description="Rewrite strategy.")
    target_file_size: Size | None = Field(None, description="Target data file size, e.g. 512MB.")
    min_input_files: Count | None = Field(None, description="Rewrite a group only with this many files.")
    skip_recent: PositiveDuration | None = Field(
        None, description="Only compact partitions older than this (leave the active write window alone)."
    )
    zorder_by: list[NonEmpty] | None = Field(None, min_length=1, description="Columns for the zorder strategy.")


class ManifestRewrite(Spec):
    """Rewrite of many small manifests (Iceberg rewrite_manifests)."""

    enabled: bool | None = Field(None, description="Run manifest rewrite.")
    min_manifests: Count | None = Field(None, description="Rewrite when a snapshot has this many manifests.")


class DeleteFileRewrite(Spec):
    """Rewrite of position delete files (Iceberg rewrite_position_delete_files)."""

    enabled: bool | None = Field(None, description="Run delete-file rewrite.")
    min_input_files: Count | None = Field(None, description="Rewrite a partition with this many delete files.")


def _probability(value: float) -> float:
    if not 0 < value < 1:  # parquet-mr refuses it: the table's next write would fail
        raise PydanticCustomError(codes.TP114, "false positive probability {value} is not between 0 and 1 (exclusive)",
                                  {"value": value, "hint": "e.g. fpp: 0.01 (one lookup in a hundred reads a file "
                                                           "holding no requested key); smaller costs more bytes"})
    return value


# the bounds in the JSON Schema too, so an editor marks a wrong fpp as it is typed
Probability = Annotated[float, AfterValidator(_probability),
                        Field(json_schema_extra={"exclusiveMinimum": 0, "exclusiveMaximum": 1})]


class BloomFilterColumn(Spec):
    """One erasure key column's bloom filter, where it differs from the table's."""

    enabled: bool | None = Field(None, description="Write a bloom filter on this key column (default: the "
                                                    "table's `enabled`).")
    fpp: Probability | None = Field(None, description="Its false positive probability, between 0 and 1.")


class BloomFilters(Spec):
    """Parquet bloom filters on the erasure key columns (Iceberg's write.parquet.bloom-filter-* properties): a file
    whose filters exclude every requested key is skipped by erase, Spark and Iceberg without reading its data."""

    enabled: bool | None = Field(None, description="Write a bloom filter on every key column (default true).")
    fpp: Probability | None = Field(
        None, description="False positive probability, between 0 and 1 (Iceberg's default: 0.01).")
    max_bytes: IntSize | None = Field(
        None, description="Largest filter per column and row group (Iceberg's default: 1MB; without a count of "
                          "distinct values Spark's writer makes every filter this large).")
    columns: dict[NonEmpty, BloomFilterColumn] | None = Field(
        None, min_length=1, description="Per key column: `enabled` or `fpp` overriding the table's (TP449: key "
                                         "columns only).")


RefDecision = Literal["hold", "rewrite", "expire"]  # what erasure does with a tag or branch keeping a key


class Erasure(Spec):
    """Record-level erasure requests (privacy law) keyed on these columns, honoured within an SLA."""

    key: list[NonEmpty] | None = Field(None, min_length=1, description="Key columns that identify a data subject.")
    within: PositiveDuration | None = Field(None, description="Time allowed until the rows are physically gone.")
    batch_margin: Duration | None = Field(
        None, description="Hold new requests until their deadline minus this margin, so one run (one rewrite of "
                          "the files holding keys) erases every request that arrived meanwhile; a request closer "
                          "to its deadline than the margin runs at once. At most `within` (TP448). Unset: every "
                          "request runs on the next erase.")
    cluster_above: Size | None = Field(
        None, description="With a cluster master (erase --spark-master spark://...), a table whose files under its "
                          "location list more bytes than this is surveyed and proven by the cluster's executors, "
                          "not this process; erase --cluster-above overrides it. Unset: 10GiB.")
    holds: list[NonEmpty] | None = Field(
        None, min_length=1,
        description="Tags or branches under legal hold: erasure keeps the files they reach and reports the "
                    "request as held for this table (a hold naming no ref of the table is refused: TP443). "
                    "Shorthand for `refs: {NAME: hold}`.")
    refs: dict[NonEmpty, RefDecision] | None = Field(
        None, min_length=1,
        description="What erasure does with each tag or branch that keeps a snapshot holding an erased key: hold "
                    "(legal hold: kept, the request is held for this table), rewrite (the keys are deleted through "
                    "the ref too: a branch's head, or a tag re-pointed to its snapshot minus the keys, retention "
                    "kept) or expire (the ref is dropped so its snapshots can be expired). A ref keeping a key with "
                    "no decision blocks the erasure; one naming no ref of the table is refused (TP443).")
    bloom_filter: BloomFilters | None = Field(
        None, description="Parquet bloom filters on the key columns, written by default (planned as table "
                          "properties; `health` shows the share of data they cover).")


class Lifecycle(Spec):
    snapshots: SnapshotExpiry | None = None
    retention: Retention | None = None
    orphan_files: OrphanFiles | None = None
    metadata: MetadataRetention | None = None
    compaction: Compaction | None = None
    manifests: ManifestRewrite | None = None
    delete_files: DeleteFileRewrite | None = None
    erasure: Erasure | None = None


class Workload(Spec):
    """What the table's users rely on; lifecycle settings are checked against it."""

    longest_write: PositiveDuration | None = Field(
        None, description="Longest a write job may run; orphan cleanup must wait at least this long."
    )
    time_travel: PositiveDuration | None = Field(
        None, description="How far back readers query old snapshots; snapshot expiry must keep them."
    )
