"""Which files cannot hold a requested key, shown by metadata before any column chunk is read.

Evidence is weighed in the order of its cost: the manifest entry's column bounds (no read of the file at all),
then the footer's row-group statistics (min and max per column chunk), then the split-block bloom filters of the
row groups the statistics leave (one ranged read each, runtime/erasure/bloom.py). Only sound evidence excludes: a
bound or a statistic is a value every row lies beyond or within, a bloom filter has no false negatives. A subject is
absent from a row group when some key column excludes its value there (a multi-column key needs every column to
match); a file is excluded when every subject is absent from every row group. Evidence this module cannot decode (a
missing or undecodable statistic, an unknown filter format, a type it does not compare) excludes nothing: the file
is read as before pruning existed.

Manifest bounds of strings may be truncated (Iceberg's truncate(16)): a truncated lower bound is a prefix, still at
most every value; a truncated upper bound has its last character incremented (or is not written), still at least
every value. Strings compare by code point, which is the UTF-8 byte order Parquet statistics use.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from .bloom import BloomFormatError, Probe, SparseFilter, SplitBlockFilter, encode, filter_at
from .keys import KeySet


class Evidence(StrEnum):
    """How a survey decided a file: excluded by metadata, or its key columns read."""

    BOUNDS = "bounds"  # the manifest entry's column bounds: the file is not opened
    STATISTICS = "statistics"  # the footer's row-group min and max
    BLOOM_FILTER = "bloom_filter"  # a row group's statistics left a key its bloom filter excludes
    NO_KEY_COLUMN = "no_key_column"  # the footer's schema has no key column (a position delete file, an old file)
    READ = "read"  # the key columns read and matched
    WRITTEN = "written"  # written by this run from rows already matched (not read by this survey)


EXCLUDED = (Evidence.BOUNDS, Evidence.STATISTICS, Evidence.BLOOM_FILTER)
SKIPPED = (*EXCLUDED, Evidence.NO_KEY_COLUMN)  # decided without reading a key column


@dataclass(frozen=True)
class FileBounds:
    """A data file's key-column bounds as a manifest entry gives them (raw, by field id), and the file's size the
    entry records: they describe the file in storage only when the sizes agree."""

    size: int
    lower: dict[int, bytes]
    upper: dict[int, bytes]


@dataclass(frozen=True)
class Pruning:
    """A survey's decisions: per evidence, the files and their bytes (as listed)."""

    enabled: bool
    files: dict[Evidence, int] = field(default_factory=dict)
    bytes: dict[Evidence, int] = field(default_factory=dict)

    @property
    def files_read(self) -> int:
        return self.files.get(Evidence.READ, 0)

    @property
    def bytes_read(self) -> int:
        return self.bytes.get(Evidence.READ, 0)

    @property
    def bytes_skipped(self) -> int:
        return sum(self.bytes.get(e, 0) for e in SKIPPED)

    def excluded(self, evidence: Evidence) -> int:
        return self.files.get(evidence, 0)

    def as_json(self) -> dict[str, object]:
        return {"enabled": self.enabled, "excluded_by_bounds": self.excluded(Evidence.BOUNDS),
                "excluded_by_statistics": self.excluded(Evidence.STATISTICS),
                "excluded_by_bloom_filter": self.excluded(Evidence.BLOOM_FILTER),
                "no_key_column": self.excluded(Evidence.NO_KEY_COLUMN), "files_read": self.files_read,
                "bytes_read": self.bytes_read, "bytes_skipped": self.bytes_skipped}


@dataclass
class KeyProbe:
    """The subjects' keys arranged for metadata: per key column, the values sorted (a range of bounds selects the
    subjects inside it by bisection) and, on first use per physical type, hashed for bloom filters. Built once per
    run; picklable, so it ships to executors with the key set."""

    field_ids: tuple[int, ...]
    strings: tuple[bool, ...]  # per key column: string (else integer)
    values: tuple[tuple[object, ...], ...]  # per key column, per subject
    ordered: tuple[tuple[list[Any], list[int]], ...] = field(init=False)  # per key column: sorted values, subjects
    unordered: frozenset[int] = field(init=False)  # subjects with a NULL in a key column: never excluded
    subjects: frozenset[int] = field(init=False)  # every subject (built once: files ask for it many times)
    hashes: dict[tuple[int, str], tuple[Probe | None, ...]] = field(default_factory=dict)

    @classmethod
    def of(cls, keys: KeySet) -> KeyProbe:
        return cls(tuple(c.field_id for c in keys.columns), tuple(c.arrow_type == pa.string() for c in keys.columns),
                   tuple(tuple(keys.table.column(c.alias).to_pylist()) for c in keys.columns))

    def __post_init__(self) -> None:
        ordered = []
        for values in self.values:
            pairs = sorted((v, s) for s, v in enumerate(values) if v is not None)
            ordered.append(([v for v, _ in pairs], [s for _, s in pairs]))
        self.ordered = tuple(ordered)
        self.unordered = frozenset(s for values in self.values for s, v in enumerate(values) if v is None)
        self.subjects = frozenset(range(len(self.values[0]))) if self.values else frozenset()

    def within(self, column: int, low: Any, high: Any) -> frozenset[int] | None:
        """The subjects whose value of ``column`` lies in [low, high] (None: unbounded on that side); None: the
        bounds are not of the column's type, so they show nothing."""
        kind = str if self.strings[column] else int
        if any(b is not None and (type(b) is not kind) for b in (low, high)):
            return None
        values, subjects = self.ordered[column]
        first = 0 if low is None else bisect.bisect_left(values, low)
        end = len(values) if high is None else bisect.bisect_right(values, high)
        return frozenset(subjects[first:end]) | self.unordered

    def after_bounds(self, bounds: FileBounds | None, size: int) -> frozenset[int]:
        """The subjects the manifest bounds leave possible in a file of ``size`` bytes as listed."""
        if bounds is None or bounds.size != size:
            return self.subjects
        alive: frozenset[int] | None = None
        for column, field_id in enumerate(self.field_ids):
            low = _decode(bounds.lower.get(field_id), self.strings[column])
            high = _decode(bounds.upper.get(field_id), self.strings[column])
            if (low is not None or high is not None) and (inside := self.within(column, low, high)) is not None:
                alive = inside if alive is None else alive & inside
                if not alive:
                    break
        return self.subjects if alive is None else alive

    def probes(self, column: int, physical_type: str) -> tuple[Probe | None, ...]:
        """Each subject's bloom probe for ``column`` stored as ``physical_type`` (None: cannot be hashed)."""
        known = (column, physical_type)
        if known not in self.hashes:
            self.hashes[known] = tuple(None if (encoded := encode(v, physical_type)) is None else Probe.of(encoded)
                                       for v in self.values[column])
        return self.hashes[known]


def _decode(raw: bytes | None, string: bool) -> object:
    """A manifest bound in Iceberg's single-value serialization; None when absent or not decodable."""
    if raw is None:
        return None
    if string:
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            return None
    return int.from_bytes(raw, "little", signed=True) if len(raw) in (4, 8) else None


def footer_verdict(probe: KeyProbe, parquet: pq.ParquetFile, handle: pa.NativeFile, paths: list[list[str]],
                   alive: frozenset[int]) -> Evidence | None:
    """STATISTICS or BLOOM_FILTER when every row group excludes every subject in ``alive``; None: read the file."""
    meta = parquet.metadata
    where: dict[str, list[int]] = {}
    for index in range(meta.num_columns):
        where.setdefault(meta.schema.column(index).path, []).append(index)
    columns = [where.get(".".join(p), []) for p in paths]
    if any(len(c) != 1 for c in columns):  # not found, or two leaves spelled alike: nothing is concluded
        return None
    evidence = Evidence.STATISTICS
    for group_index in range(meta.num_row_groups):
        group = meta.row_group(group_index)
        if group.num_rows == 0:
            continue
        left = alive
        chunks = [group.column(c[0]) for c in columns]
        for column, chunk in enumerate(chunks):
            left = left & _by_statistics(probe, column, chunk)
        for column, chunk in enumerate(chunks):
            if not left:
                break
            bloom = _filter(handle, chunk, len(left))
            if bloom is None:
                continue
            hashed = probe.probes(column, chunk.physical_type)
            if column == len(chunks) - 1:  # no column after it can exclude a subject it admits: the first one it
                # admits decides the read (with many keys a filter admits some by chance, early in the loop)
                if any(h is None or bloom.may_hold(h) for h in (hashed[s] for s in left)):
                    return None
                left = frozenset()
            else:
                left = frozenset(s for s in left if (h := hashed[s]) is None or bloom.may_hold(h))
            evidence = Evidence.BLOOM_FILTER if not left else evidence
        if left:
            return None
    return evidence


def _by_statistics(probe: KeyProbe, column: int, chunk: pq.ColumnChunkMetaData) -> frozenset[int]:
    """The subjects the chunk's min and max leave possible (all when it has none, or none this module reads)."""
    try:
        stats = chunk.statistics if chunk.is_stats_set else None
        if stats is None or not stats.has_min_max:
            return probe.subjects
        inside = probe.within(column, stats.min, stats.max)
    except (ValueError, pa.ArrowException):  # a statistic pyarrow cannot convert (bytes that are no UTF-8)
        return probe.subjects
    return probe.subjects if inside is None else inside


def _filter(handle: pa.NativeFile, chunk: pq.ColumnChunkMetaData, keys: int
            ) -> SplitBlockFilter | SparseFilter | None:
    """The chunk's bloom filter as the cheapest form for testing ``keys`` keys (bloom.filter_at: their blocks alone,
    or the whole filter in one read); None: none, or one this module cannot decode."""
    offset, length = chunk.bloom_filter_offset, chunk.bloom_filter_length
    if offset is None or offset < 0:
        return None
    try:
        return filter_at(handle.read_at, offset, length, keys)
    except BloomFormatError:
        return None
