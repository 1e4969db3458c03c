"""Manifest lists and manifests read once per process.

Iceberg never changes a manifest list or a manifest once written: a commit writes new ones under new names
(each carries a UUID). So what one read found stays true, and maintain, which reads a table's health and its
reachable files again after every action, reads only the files the action wrote. Opening an avro file is
the cost (pyiceberg parses its schema each time): without this, a table with 21 snapshots re-read its 21
manifest lists and their manifests after each of its actions.

The cache is bounded by the number of manifest entries it holds; past the bound it is emptied, which costs
only reads again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, ClassVar

from pyiceberg.avro.decoder import new_decoder
from pyiceberg.avro.file import _SCHEMA_KEY, META_SCHEMA, AvroFile, AvroFileHeader
from pyiceberg.avro.reader import Reader
from pyiceberg.avro.resolver import construct_reader, resolve_reader
from pyiceberg.expressions import BooleanExpression
from pyiceberg.io import FileIO
from pyiceberg.manifest import (
    DEFAULT_READ_VERSION,
    MANIFEST_ENTRY_SCHEMAS,
    MANIFEST_LIST_FILE_SCHEMAS,
    DataFile,
    DataFileContent,
    FileFormat,
    ManifestContent,
    ManifestEntry,
    ManifestEntryStatus,
    ManifestFile,
    PartitionFieldSummary,
    _inherit_from_manifest,
)
from pyiceberg.schema import Schema
from pyiceberg.table import Table
from pyiceberg.table.snapshots import Snapshot

from .executor import ExecutionError

MAX_ENTRIES = 2_000_000  # about 2 KB each as pyiceberg holds them (bench/fleet.py: 580 MB for 300,000): 4 GB


class TableDamaged(ExecutionError):
    """A file a snapshot reads cannot be read (torn by a killed writer, truncated, emptied, gone): the table itself
    is damaged, and every command reading it stops with this finding, which names the file and what to do."""

    def __init__(self, path: str, reader: str, reason: str) -> None:
        self.path = path
        super().__init__(damaged_message(path, reader, reason))


def damaged_message(path: str, reader: str, reason: str) -> str:
    """The finding for a file a snapshot reads that cannot be read."""
    return (f"the table is damaged: {path} ({reader}) cannot be read ({reason}); restore the file from a copy, "
            "or roll the table back to a snapshot that does not read it (CALL <catalog>.system.rollback_to_snapshot) "
            "and expire the snapshots that do, then run the command again")


def reason_of(exc: BaseException) -> str:
    """An unreadable file's reason in words: the decoder's first line, never a traceback."""
    text = str(exc).strip().split("\n", 1)[0]
    return text or f"{type(exc).__name__}: the file ends before its content does"


class _AvroFile(AvroFile[Any]):
    """pyiceberg's AvroFile whose header reader, and schema and reader tree per distinct schema, are made once per
    process: the manifests of one table (one partition spec) all carry one schema and every manifest list
    another, and pyiceberg converting and resolving them again for every file was a third of reading a
    50-entry manifest."""

    _header: ClassVar[Reader | None] = None
    _readers: ClassVar[dict[tuple[str, int], tuple[Schema, Reader]]] = {}  # (schema, id of the read schema)

    def _read_header(self) -> AvroFileHeader:
        if _AvroFile._header is None:
            _AvroFile._header = construct_reader(META_SCHEMA, {-1: AvroFileHeader})
        header: AvroFileHeader = _AvroFile._header.read(self.decoder)
        return header

    def __enter__(self) -> _AvroFile:
        with self.input_file.open() as handle:
            self.decoder = new_decoder(handle.read())
        self.header = self._read_header()
        key = (self.header.meta.get(_SCHEMA_KEY, ""), id(self.read_schema))  # one read schema, types, enums each
        found = self._readers.get(key)
        if found is None:
            schema = self.header.get_schema()
            found = self._readers[key] = (schema, resolve_reader(schema, self.read_schema or schema,
                                                                 self.read_types, self.read_enums))
        self.schema, self.reader = found
        return self


def read_entries(io: FileIO, manifest: ManifestFile) -> tuple[ManifestEntry, ...]:
    """Every entry of a manifest, deleted ones too: ``manifest.fetch_manifest_entry(io, discard_deleted=False)``,
    its schema read once per distinct schema (``_AvroFile``)."""
    with _AvroFile(io.new_input(manifest.manifest_path), MANIFEST_ENTRY_SCHEMAS[DEFAULT_READ_VERSION],
                   read_types={-1: ManifestEntry, 2: DataFile},
                   read_enums={0: ManifestEntryStatus, 101: FileFormat, 134: DataFileContent}) as reader:
        return tuple(_inherit_from_manifest(entry, manifest) for entry in reader)


def read_list(io: FileIO, manifest_list: str) -> tuple[ManifestFile, ...]:
    """The manifests a manifest list names: ``snapshot.manifests(io)``, its schema read once (``_AvroFile``)."""
    with _AvroFile(io.new_input(manifest_list), MANIFEST_LIST_FILE_SCHEMAS[DEFAULT_READ_VERSION],
                   read_types={-1: ManifestFile, 508: PartitionFieldSummary},
                   read_enums={517: ManifestContent}) as reader:
        return tuple(reader)


class ManifestReads:
    def __init__(self, max_entries: int = MAX_ENTRIES) -> None:
        self.max_entries = max_entries
        self._lists: dict[str, tuple[ManifestFile, ...]] = {}
        self._entries: dict[str, tuple[ManifestEntry, ...]] = {}
        self._held = 0

    def manifests(self, io: FileIO, snapshot: Snapshot) -> tuple[ManifestFile, ...]:
        found = self._lists.get(snapshot.manifest_list)
        if found is None:
            try:
                listed = read_list(io, snapshot.manifest_list)
            except Exception as exc:  # torn, emptied or gone: named as damage, never a traceback
                raise TableDamaged(snapshot.manifest_list, f"the manifest list of snapshot {snapshot.snapshot_id}",
                                   reason_of(exc)) from exc
            found = self._lists[snapshot.manifest_list] = listed
        return found

    def entries(self, io: FileIO, manifest: ManifestFile, *, discard_deleted: bool) -> Sequence[ManifestEntry]:
        """Every entry of the manifest (``discard_deleted``: without those a rewrite marked deleted)."""
        found = self._entries.get(manifest.manifest_path)
        if found is None:
            try:
                found = read_entries(io, manifest)
            except Exception as exc:  # as above
                raise TableDamaged(manifest.manifest_path, "a manifest a snapshot reads", reason_of(exc)) from exc
            if self._held + len(found) > self.max_entries:
                self.clear()
            self._entries[manifest.manifest_path] = found
            self._held += len(found)
        if discard_deleted:
            return [entry for entry in found if entry.status != ManifestEntryStatus.DELETED]
        return found

    def clear(self) -> None:
        self._lists.clear()
        self._entries.clear()
        self._held = 0


READS = ManifestReads()  # the process's reads: every health and orphan reading shares them


def planned_data_files(table: Table, row_filter: BooleanExpression) -> Iterator[DataFile]:
    """The data files of the current snapshot a scan with ``row_filter`` plans (``table.scan(row_filter=...)
    .plan_files()``'s, by pyiceberg's own evaluators: manifest partition summaries, partition values, column
    metrics), from the manifests READS holds: a scan of its own would read every manifest health read again."""
    from pyiceberg.table import ManifestGroupPlanner

    snapshot = table.current_snapshot()
    if snapshot is None:
        return
    planner = ManifestGroupPlanner(table.metadata, table.io, row_filter)
    manifests: dict[int, Callable[[ManifestFile], bool]] = {}
    partitions: dict[int, Callable[[DataFile], bool]] = {}
    metrics = planner._build_metrics_evaluator()
    verdicts: dict[tuple[int, tuple[Any, ...]], bool] = {}  # the files of a partition share its verdict
    for manifest in READS.manifests(table.io, snapshot):
        spec = manifest.partition_spec_id
        if spec not in manifests:
            manifests[spec] = planner._build_manifest_evaluator(spec)
            partitions[spec] = planner._build_partition_evaluator(spec)
        if not manifests[spec](manifest):
            continue
        for entry in READS.entries(table.io, manifest, discard_deleted=True):
            file = entry.data_file
            if file.content != DataFileContent.DATA:
                continue
            key = (spec, tuple(file.partition._data))
            verdict = verdicts.get(key)
            if verdict is None:
                verdict = verdicts[key] = partitions[spec](file)
            if verdict and metrics(file):
                yield file


def damaged_in(table: Table, message: str) -> str | None:
    """The damage finding for a step that failed on a file a snapshot reads and that cannot be read, if
    ``message`` (the engine's error) names one; None when it names none (the step failed otherwise)."""
    import pyarrow.parquet as pq

    for snapshot in table.metadata.snapshots:
        for manifest in READS.manifests(table.io, snapshot):
            for entry in READS.entries(table.io, manifest, discard_deleted=True):
                path = entry.data_file.file_path
                if path.rsplit("/", 1)[-1] not in message:
                    continue
                try:
                    with table.io.new_input(path).open() as handle:
                        pq.ParquetFile(handle)
                except Exception as exc:  # the file the engine failed on does not read: damage, named
                    return damaged_message(path, f"a data or delete file snapshot {snapshot.snapshot_id} reads",
                                           reason_of(exc))
    return None
