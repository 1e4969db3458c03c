"""Erased keys in manifests: the column bounds a manifest keeps for every data file it lists.

A manifest entry carries its data file's lower and upper bound per column (strings truncated, by default to
16 characters, the upper bound's last character then incremented), so a manifest listing a file that held
an erased key can hold that key as a bound after the file is gone. The rule erasure applies:

- A bound of an entry whose data file the survey read and found holding no key is a value of kept rows
  (an exact bound is a value the file holds; a truncated one a prefix of such a value): it reveals nothing
  the kept rows do not hold in full, whatever it shares with a key. This covers every live entry of a
  manifest a kept snapshot reads, once erasure has removed the files holding keys from those snapshots.
- Every other entry describes a file that held a key, or one that is gone: a deleted entry (a DELETE's or
  an overwrite's manifests list the files they replaced with those files' statistics, in Iceberg 1.10 and
  pyiceberg alike), or any entry of an unreferenced manifest. Its bounds are matched against every key
  value of the key column: equal to one, or equal to one's lower or upper form truncated at a length the
  table's metrics settings name (``write.metadata.metrics.default`` and ``.column.*``: Iceberg's default
  is truncate(16)).
- A manifest no snapshot reads (an expiry killed after its commit deletes data files before manifests,
  so its manifests stay behind) is deleted when it reveals a key, after the latest metadata is read again:
  the guard runtime/erasure/leftovers.py applies to data files.
- A manifest a snapshot reads that reveals a key (a deleted entry, above): if the current snapshot reads
  it, as it does right after erasure's own DELETE, its manifests are rewritten (``rewrite_manifests`` keeps
  live entries only); then every snapshot that still reads such a manifest is expired, as one that reads a
  file holding a key is.
- Manifest lists hold partition summaries, not column values; statistics (puffin) files hold sketches, not
  values: neither is read. A key column that is an identity partition source is not covered here (its
  values sit in partition tuples and summaries): a partition per person is not an erasure layout.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
from pyarrow import fs as pafs
from pyiceberg.avro.file import AvroFile
from pyiceberg.io.pyarrow import PyArrowFile
from pyiceberg.manifest import (
    DEFAULT_READ_VERSION,
    MANIFEST_ENTRY_SCHEMAS,
    DataFile,
    DataFileContent,
    FileFormat,
    ManifestEntry,
    ManifestEntryStatus,
)

from ..orphans import normalize
from .keys import SUBJECT, KeySet

MANIFEST_HEADER = "partition-spec"  # in every manifest's avro header; manifest lists carry snapshot-id instead
DEFAULT_TRUNCATE = 16  # Iceberg's default metrics mode, truncate(16), in Java and pyiceberg alike
METRICS = "write.metadata.metrics."
TRUNCATE = re.compile(r"truncate\((\d+)\)")


def truncations(properties: Mapping[str, str]) -> frozenset[int]:
    """The lengths the table's writers may truncate string bounds to: the default and every metrics setting."""
    found = {int(m.group(1)) for key, value in properties.items() if key.startswith(METRICS)
             and (m := TRUNCATE.fullmatch(value.strip()))}
    return frozenset({DEFAULT_TRUNCATE, *found})


@dataclass(frozen=True)
class BoundHit:
    """An entry whose bound for a key column equals a key value (or its truncated form)."""

    data_file: str  # normalized path of the data file the entry describes
    live: bool  # added or existing (a deleted entry is history only)
    subjects: tuple[int, ...]  # the key set's subjects the bounds reveal


@dataclass(frozen=True)
class KeyBounds:
    """Per key column's field id: the values a bound may equal to reveal a key."""

    exact: dict[int, dict[object, frozenset[int]]]  # field id -> value -> the subjects holding it
    truncated: dict[int, dict[str, frozenset[int]]]

    @classmethod
    def of(cls, keys: KeySet, lengths: frozenset[int] = frozenset({DEFAULT_TRUNCATE})) -> KeyBounds:
        exact: dict[int, dict[object, frozenset[int]]] = {}
        truncated: dict[int, dict[str, frozenset[int]]] = {}
        subjects = keys.table.column(SUBJECT).to_pylist()
        for column in keys.columns:
            values = keys.table.column(column.alias).to_pylist()
            exact[column.field_id] = _grouped((v, s) for v, s in zip(values, subjects, strict=True) if v is not None)
            if column.arrow_type == pa.string():
                truncated[column.field_id] = _grouped(
                    (form, s) for v, s in zip(values, subjects, strict=True) if v is not None
                    for n in sorted(lengths) if 0 < n < len(v)
                    for form in (v[:n], v[:n - 1] + chr(min(ord(v[n - 1]) + 1, 0x10FFFF))))
        return cls(exact, truncated)

    def reveals(self, field_id: int, raw: bytes) -> frozenset[int]:
        """The subjects whose key this bound (as stored) equals or is a truncated form of; empty: none."""
        exact = self.exact.get(field_id)
        if exact is None:
            return frozenset()
        if field_id in self.truncated:
            text = raw.decode("utf-8", errors="replace")
            return exact.get(text, frozenset()) | self.truncated[field_id].get(text, frozenset())
        return exact.get(int.from_bytes(raw, "little", signed=True), frozenset())

    def hits(self, entries: Iterable[ManifestEntry]) -> tuple[BoundHit, ...]:
        found = []
        for entry in entries:
            data_file = entry.data_file
            bounds = [*(data_file.lower_bounds or {}).items(), *(data_file.upper_bounds or {}).items()]
            subjects = frozenset().union(*(self.reveals(field_id, raw) for field_id, raw in bounds))
            if subjects:
                found.append(BoundHit(normalize(data_file.file_path), entry.status != ManifestEntryStatus.DELETED,
                                      tuple(sorted(subjects))))
        return tuple(found)


def _grouped(pairs: Iterable[tuple[Any, int]]) -> dict[Any, frozenset[int]]:
    found: dict[Any, set[int]] = {}
    for value, subject in pairs:
        found.setdefault(value, set()).add(subject)
    return {value: frozenset(subjects) for value, subjects in found.items()}


@dataclass
class ManifestReader:
    """Reads the key-column bounds of avro files no snapshot reads (a manifest's own metadata tells it from a
    manifest list); remembers the hits per (path, size) for the rest of the run (files are immutable)."""

    keys: KeySet
    lengths: frozenset[int] = frozenset({DEFAULT_TRUNCATE})
    bounds: KeyBounds = field(init=False)
    seen: dict[tuple[str, int], tuple[BoundHit, ...] | None] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.bounds = KeyBounds.of(self.keys, self.lengths)

    def hits(self, filesystem: pafs.FileSystem, path: str, size: int) -> tuple[BoundHit, ...] | None:
        """The entries revealing a key; None when the avro file is no manifest (a manifest list)."""
        known = (path, size)
        if known not in self.seen:
            self.seen[known] = self._read(filesystem, path)
        return self.seen[known]

    def _read(self, filesystem: pafs.FileSystem, path: str) -> tuple[BoundHit, ...] | None:
        with AvroFile[Any](PyArrowFile(path, path, filesystem)) as header:  # the file's own schema: any avro
            if MANIFEST_HEADER not in header.header.meta:
                for _record in header:  # every block decoded: a torn manifest list raises here
                    pass
                return None
        with AvroFile[ManifestEntry](
            PyArrowFile(path, path, filesystem),
            MANIFEST_ENTRY_SCHEMAS[DEFAULT_READ_VERSION],
            read_types={-1: ManifestEntry, 2: DataFile},
            read_enums={0: ManifestEntryStatus, 101: FileFormat, 134: DataFileContent},
        ) as reader:
            return self.bounds.hits(reader)
