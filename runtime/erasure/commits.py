"""Erasure's commits through pyiceberg, with no JVM: the delete's overwrite, the manifest rewrite, the expiry.

A small erasure's time was almost all Spark's fixed cost: the JVM's boot, then the catalog's start-up and
each Iceberg operation's first run in a cold JVM (bench/erase.py: 7 to 12 of 12 to 18 s). None of the three
commits needs an engine: each writes a few avro files and swaps the table's metadata. So they are written
here, each on the table as it is at that moment and sent with the condition that the branch's head has not
moved (pyiceberg's ``AssertRefSnapshotId``); a commit that loses that race is built again on the new head.
Spark still rewrites the files in the cases ``arrow_rewrite.LeftToSpark`` names.

- The delete (``commit_rewrite``) swaps the files arrow_rewrite staged for the files they replace, and
  removes the position delete files and deletion vectors that point into those files only. It is validated
  as Spark validates a copy-on-write delete under snapshot isolation: from the snapshot the rewrite read,
  every replaced file is still live and no delete file was added. Appends meanwhile do not conflict; a
  conflict stages the rewrite again from the table as it is then. The replaced files' deleted entries are
  written without column bounds: their bounds are the erased keys (runtime/erasure/manifests.py).
- The manifest rewrite (``rewrite_manifests``) writes the current snapshot's manifests that reveal a key as
  a bound (another engine's DELETE keeps them on its deleted entries) again with their live entries only, as
  Iceberg's RewriteManifests does: the deleted entries stay with the snapshots before, which are expired.
- The expiry (``expire``) removes exactly the snapshots named, then deletes what only they reached (their
  manifest lists, manifests, data and delete files), as Iceberg's reachability cleanup does: a file some
  kept snapshot reads as live stays.
- A delete file that holds a key (an equality delete keyed on the subject, as Flink's upserts write them)
  is removed from the current snapshot once it applies to no live data file (``drop_dangling``): after the
  files it served are rewritten, which the delete itself or Spark's rewrite_data_files does.

``TABLEPOLICY_ERASE_PAUSE`` (seconds) makes each step wait once before its commit and before deleting files:
the tests that kill erase between its steps from outside, or append while its delete runs, need the windows
a JVM's slowness used to give them.
"""

from __future__ import annotations

import os
import re
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from typing import TypeVar

from pyiceberg.avro.codecs import AvroCompressionCodec
from pyiceberg.avro.file import AvroOutputFile
from pyiceberg.exceptions import CommitFailedException, CommitStateUnknownException
from pyiceberg.manifest import (
    DATA_FILE_TYPE,
    DEFAULT_READ_VERSION,
    DataFile,
    DataFileContent,
    ManifestContent,
    ManifestEntry,
    ManifestEntryStatus,
    ManifestFile,
    ManifestWriter,
    ManifestWriterV1,
    ManifestWriterV2,
    write_manifest_list,
)
from pyiceberg.table import Table
from pyiceberg.table.refs import MAIN_BRANCH
from pyiceberg.table.snapshots import (
    Operation,
    Snapshot,
    SnapshotSummaryCollector,
    Summary,
    update_snapshot_summaries,
)
from pyiceberg.table.update import (
    AddSnapshotUpdate,
    AssertRefSnapshotId,
    AssertTableUUID,
    RemoveSnapshotRefUpdate,
    RemoveSnapshotsUpdate,
    SetSnapshotRefUpdate,
)

from tablepolicy.compiler.sql.filters import qualified

from ..executor import CONFLICT_ATTEMPTS, TRANSIENT, ExecutionError
from ..manifests import READS
from ..orphans import normalize
from .arrow_rewrite import LeftToSpark, StagedRewrite
from .survey import Reach

PAUSE = "TABLEPOLICY_ERASE_PAUSE"
DRIVER_PREFIX = re.compile(r"^\([\w.]+\) ")  # SQLAlchemy's "(sqlite3.OperationalError) "
AVRO_COMPRESSION = "write.avro.compression-codec"
ERASURE = "tablepolicy.operation"
READ_SNAPSHOT = "tablepolicy.erasure.read-snapshot-id"
FILE_PATH_FIELD = 2147483546  # a position delete file's file_path column: equal bounds name the one file it serves
V3_FIELDS = [f.name for f in DATA_FILE_TYPE[3].fields]
Result = TypeVar("Result")


class Conflict(Exception):
    """A concurrent commit touched the files the step read: it is planned again from the table as it is."""


def rewrite_manifests_text(table: Sequence[str], catalog: str) -> str:
    """What the proof and the dry run show for the manifest rewrite (a commit, not SQL)."""
    return (f"-- rewrite manifests of {qualified((catalog, *table))}: the current snapshot's manifests whose "
            "column bounds reveal a key written again with their live entries only")


def expire_text(table: Sequence[str], catalog: str, snapshot_ids: Sequence[int]) -> str:
    return (f"-- expire snapshots of {qualified((catalog, *table))}: "
            + ", ".join(str(s) for s in sorted(snapshot_ids)) + " (their files no other snapshot reads are deleted)")


def drop_dangling_text(table: Sequence[str], catalog: str, paths: Sequence[str]) -> str:
    return (f"-- remove delete files of {qualified((catalog, *table))} that hold a key and apply to no live row: "
            f"{len(paths)} file(s)")


def pause() -> None:
    if seconds := os.environ.get(PAUSE):
        time.sleep(float(seconds))


def commit_rewrite(name: str, latest: Callable[[], Table], staged: StagedRewrite,
                   restage: Callable[[Table], StagedRewrite | LeftToSpark], ref: str = MAIN_BRANCH
                   ) -> StagedRewrite | LeftToSpark:
    """Commit ``staged`` on ``ref`` (main, another branch, or a tag: re-pointed to the new snapshot); a conflict
    stages it again with ``restage`` (which may leave it to Spark: returned uncommitted). Returns what was
    committed. ``name``: the table's, for messages."""
    what = f"{name}: erasure: delete the subjects' rows" + ("" if ref == MAIN_BRANCH else f" through '{ref}'")
    pause()
    for attempt in range(1, CONFLICT_ATTEMPTS + 1):
        current = staged
        try:
            if current.files:
                _retried(what, partial(_overwrite_latest, latest, current, ref))
            return current
        except Conflict as exc:
            current.discard()
            if attempt == CONFLICT_ATTEMPTS:
                raise ExecutionError(f"{what}: {exc} ({attempt} attempts)") from None
            time.sleep(min(0.2 * attempt, 2.0))
            restaged = restage(latest())
            if isinstance(restaged, LeftToSpark):
                return restaged
            staged = restaged
        except CommitStateUnknownException as exc:  # it may have landed: its files stay, and a re-run's survey says
            raise ExecutionError(f"{what}: {_first_line(exc)}: the commit's outcome is unknown; run erase again once "
                                 "the catalog server answers (the requests stay pending until a proof)") from None
        except BaseException:
            current.discard()
            raise
    raise AssertionError("unreachable: the last attempt returns or raises")


def rewrite_manifests(name: str, latest: Callable[[], Table], revealing: frozenset[str], ref: str = MAIN_BRANCH
                      ) -> int:
    """Write the manifests of ``ref``'s snapshot (the current one for main) in ``revealing`` (normalized paths)
    again with their live entries only; returns how many were rewritten."""
    pause()
    return _retried(f"{name}: erasure: rewrite the manifests that keep a key as a column bound",
                    lambda: _rewrite_manifests(latest(), revealing, ref))


def drop_ref(name: str, latest: Callable[[], Table], ref: str) -> int | None:
    """Drop the tag or branch ``ref`` (the policy says expire); fenced on the snapshot it points at when the
    commit is built. Returns that snapshot (None: the ref was gone already)."""
    def commit() -> int | None:
        table = latest()
        found = table.metadata.refs.get(ref)
        if found is None:
            return None
        table.catalog.commit_table(table, (AssertTableUUID(uuid=table.metadata.table_uuid),
                                           AssertRefSnapshotId(snapshot_id=found.snapshot_id, ref=ref)),
                                   (RemoveSnapshotRefUpdate(ref_name=ref),))
        return found.snapshot_id

    pause()
    return _retried(f"{name}: erasure: drop '{ref}' (lifecycle.erasure.refs says expire)", commit)


def expire(name: str, latest: Callable[[], Table], snapshot_ids: Sequence[int], before: Reach,
           after: Callable[[Table], Reach]) -> list[str]:
    """Remove ``snapshot_ids`` (those still there), then delete what only they reached (``before``: the reach
    of the table with them, ``after``: the reach of a table); returns the files deleted (normalized)."""
    def commit() -> Table:
        table = latest()
        present = sorted(set(snapshot_ids) & {s.snapshot_id for s in table.metadata.snapshots})
        if present:
            table.catalog.commit_table(table, (AssertTableUUID(uuid=table.metadata.table_uuid),),
                                       (RemoveSnapshotsUpdate(snapshot_ids=present),))
        return latest()

    pause()
    table = _retried(f"{name}: erasure: expire the snapshots that read erased rows", commit)
    kept = after(table)
    reached = before.reached_by(snapshot_ids) - kept.reached_by(kept.live)
    pause()
    deleted = []
    for path in sorted(reached):
        try:
            table.io.delete(before.uris.get(path, path))
        except FileNotFoundError:
            continue
        deleted.append(path)
    return deleted


def _retried(what: str, attempt: Callable[[], Result]) -> Result:
    """Run ``attempt`` until its commit does not lose a race (a moved head, a locked SQLite catalog)."""
    for number in range(1, CONFLICT_ATTEMPTS + 1):
        try:
            return attempt()
        except Exception as exc:
            lost = isinstance(exc, CommitFailedException) or (type(exc).__name__ == "OperationalError"
                                                               and TRANSIENT.search(str(exc)))
            if not lost:
                raise
            if number == CONFLICT_ATTEMPTS:
                raise ExecutionError(f"{what}: lost the commit race {number} times: {_first_line(exc)}") from None
            time.sleep(min(0.05 * 2**number, 2.0))
    raise AssertionError("unreachable: the last attempt returns or raises")


def _first_line(exc: Exception) -> str:
    """The error's first line without SQLAlchemy's ``(sqlite3.OperationalError) `` prefix (as catalog errors)."""
    return DRIVER_PREFIX.sub("", (str(exc).splitlines() or [type(exc).__name__])[0])


class _Commit:
    """One attempt's new snapshot on a ref of ``table`` (main by default): the files it writes, removed if it
    fails. On a branch the new snapshot is its head; on a tag, a child of the tag's snapshot that the tag is
    re-pointed to (Iceberg's REPLACE TAG, in the same commit), the ref's retention kept either way."""

    def __init__(self, table: Table, ref: str = MAIN_BRANCH) -> None:
        self.table, self.metadata, self.ref = table, table.metadata, ref
        found = table.metadata.refs.get(ref)
        self.head = table.metadata.snapshot_by_id(found.snapshot_id) if found is not None else None
        self.snapshot_id = self.metadata.new_snapshot_id()
        self.name = uuid.uuid4()
        self.written: list[str] = []
        self.compression: AvroCompressionCodec = self.metadata.properties.get(  # type: ignore[assignment]
            AVRO_COMPRESSION, "gzip")

    def writer(self, manifest_content: ManifestContent, spec_id: int) -> ManifestWriter:
        location = self.table.location_provider().new_metadata_location(f"{self.name}-m{len(self.written)}.avro")
        self.written.append(location)
        spec, schema, version = self.metadata.specs()[spec_id], self.metadata.schema(), self.metadata.format_version
        output = self.table.io.new_output(location)
        if manifest_content == ManifestContent.DELETES:
            return _DeleteManifestWriter(spec, schema, output, self.snapshot_id, self.compression)
        if version == 1:
            return _ManifestWriterV1(spec, schema, output, self.snapshot_id, self.compression)
        return _ManifestWriterV2(spec, schema, output, self.snapshot_id, self.compression)

    def manifest(self, manifest_content: ManifestContent, spec_id: int,
                 entries: Iterable[tuple[ManifestEntryStatus, ManifestEntry]]) -> ManifestFile:
        with self.writer(manifest_content, spec_id) as writer:
            for status, entry in entries:
                if status == ManifestEntryStatus.EXISTING:
                    writer.existing(entry)
                elif status == ManifestEntryStatus.ADDED:
                    writer.add(entry)
                else:
                    writer.delete(entry)
        return writer.to_manifest_file()

    def commit(self, manifests: list[ManifestFile], summary: Summary) -> None:
        assert self.head is not None
        sequence = self.metadata.next_sequence_number()
        location = self.table.location_provider().new_metadata_location(f"snap-{self.snapshot_id}-1-{self.name}.avro")
        self.written.append(location)
        with write_manifest_list(format_version=self.metadata.format_version,
                                 output_file=self.table.io.new_output(location), snapshot_id=self.snapshot_id,
                                 parent_snapshot_id=self.head.snapshot_id, sequence_number=sequence,
                                 avro_compression=self.compression) as writer:
            writer.add_manifests(manifests)
        snapshot = Snapshot(snapshot_id=self.snapshot_id, parent_snapshot_id=self.head.snapshot_id,
                            sequence_number=sequence, manifest_list=location, summary=summary,
                            schema_id=self.metadata.current_schema_id)
        ref = self.metadata.refs[self.ref]
        try:
            self.table.catalog.commit_table(
                self.table,
                (AssertTableUUID(uuid=self.metadata.table_uuid),
                 AssertRefSnapshotId(snapshot_id=self.head.snapshot_id, ref=self.ref)),
                (AddSnapshotUpdate(snapshot=snapshot),
                 SetSnapshotRefUpdate(snapshot_id=self.snapshot_id, parent_snapshot_id=self.head.snapshot_id,
                                      ref_name=self.ref, type=ref.snapshot_ref_type, max_ref_age_ms=ref.max_ref_age_ms,
                                      max_snapshot_age_ms=ref.max_snapshot_age_ms,
                                      min_snapshots_to_keep=ref.min_snapshots_to_keep)))
        except CommitFailedException:  # it did not land: what it wrote is litter
            self.discard()
            raise

    def discard(self) -> None:
        for path in self.written:
            self.table.io.delete(path)


class _OneBlock(AvroOutputFile[ManifestEntry]):
    """pyiceberg's avro output with its entries written as one block when it closes. pyiceberg writes (and deflates)
    a block per entry: a manifest of 500 entries written again took 133 KB instead of 14 KB, and a third longer
    to write and to read back (each later survey and the proof read it)."""

    def __enter__(self) -> _OneBlock:
        self.pending: list[ManifestEntry] = []
        super().__enter__()
        return self

    def write_block(self, objects: list[ManifestEntry]) -> None:
        self.pending.extend(objects)

    def __exit__(self, *exc: object) -> None:
        if self.pending and exc[0] is None:
            super().write_block(self.pending)
        super().__exit__(*exc)  # type: ignore[arg-type]


class _OneBlockWriter(ManifestWriter):
    """A manifest writer whose entries go out as one avro block (``_OneBlock``)."""

    def new_writer(self) -> AvroOutputFile[ManifestEntry]:
        return _OneBlock(output_file=self._output_file, file_schema=self._with_partition(self.version),
                         record_schema=self._with_partition(DEFAULT_READ_VERSION), schema_name="manifest_entry",
                         metadata=self._meta)


class _ManifestWriterV1(_OneBlockWriter, ManifestWriterV1):
    pass


class _ManifestWriterV2(_OneBlockWriter, ManifestWriterV2):
    pass


class _DeleteManifestWriter(_OneBlockWriter, ManifestWriterV2):
    """pyiceberg's v2 writer, for a manifest of delete files (it writes data manifests only)."""

    def content(self) -> ManifestContent:
        return ManifestContent.DELETES

    @property
    def _meta(self) -> dict[str, str]:
        return {**super()._meta, "content": "deletes"}


def _overwrite(table: Table, staged: StagedRewrite, ref: str = MAIN_BRANCH) -> None:
    commit = _Commit(table, ref)
    if commit.head is None:
        raise Conflict("the table has no current snapshot any more" if ref == MAIN_BRANCH else
                       f"'{ref}' is gone or points at no snapshot")
    _check_window(table, staged.snapshot_id, commit.head)
    sources = staged.sources
    kept, removed = _without(commit, lambda file: _replaced(file, sources))
    found = {normalize(e.data_file.file_path) for e in removed if e.data_file.content == DataFileContent.DATA}
    if found != sources:
        commit.discard()  # the manifests it wrote already
        raise Conflict(f"Missing required files to delete: {', '.join(sorted(sources - found))} (a concurrent "
                       "commit replaced them)")
    added = [file for rewritten in staged.files for file in rewritten.data_files]
    new: list[ManifestFile] = []
    for spec_id in sorted({f.spec_id for f in added}):
        new.append(commit.manifest(ManifestContent.DATA, spec_id, [
            (ManifestEntryStatus.ADDED, _entry(commit.snapshot_id, f)) for f in added if f.spec_id == spec_id]))
    summary = _summary(commit, Operation.OVERWRITE, added, removed, {READ_SNAPSHOT: str(staged.snapshot_id)})
    commit.commit([*new, *_deleted_manifests(commit, removed), *kept], summary)


def _without(commit: _Commit, dropped: Callable[[DataFile], bool]) -> tuple[list[ManifestFile], list[ManifestEntry]]:
    """The head's manifests without the live entries ``dropped`` names (a manifest holding one written again
    with the others as existing entries), and those entries."""
    assert commit.head is not None
    kept: list[ManifestFile] = []
    removed: list[ManifestEntry] = []
    for manifest in READS.manifests(commit.table.io, commit.head):
        entries = READS.entries(commit.table.io, manifest, discard_deleted=True)
        drop = [e for e in entries if dropped(e.data_file)]
        if not drop:
            kept.append(manifest)
            continue
        removed += drop
        if rest := [(ManifestEntryStatus.EXISTING, e) for e in entries if not dropped(e.data_file)]:
            kept.append(commit.manifest(manifest.content, manifest.partition_spec_id, rest))
    return kept, removed


def _deleted_manifests(commit: _Commit, removed: list[ManifestEntry]) -> list[ManifestFile]:
    """The removed files' deleted entries, data and delete files apart, without column bounds (the keys)."""
    written = []
    for content in (ManifestContent.DATA, ManifestContent.DELETES):
        data = content == ManifestContent.DATA
        group = [e for e in removed if (e.data_file.content == DataFileContent.DATA) == data]
        for spec_id in sorted({e.data_file.spec_id for e in group}):
            written.append(commit.manifest(content, spec_id, [
                (ManifestEntryStatus.DELETED, _deleted(commit.snapshot_id, e))
                for e in group if e.data_file.spec_id == spec_id]))
    return written


def _summary(commit: _Commit, operation: Operation, added: list[DataFile], removed: list[ManifestEntry],
             properties: dict[str, str]) -> Summary:
    collector = SnapshotSummaryCollector()
    specs, schema = commit.metadata.specs(), commit.metadata.schema()
    for file in added:
        collector.add_file(file, schema, specs[file.spec_id])
    for entry in removed:
        collector.remove_file(entry.data_file, schema, specs[entry.data_file.spec_id])
    assert commit.head is not None
    counted = update_snapshot_summaries(Summary(Operation.DELETE, **collector.build()),
                                        commit.head.summary)  # the totals, computed for any operation
    return Summary(operation, **{**counted.additional_properties, ERASURE: "erasure", **properties})


def drop_dangling(name: str, latest: Callable[[], Table], held: frozenset[str]) -> list[str]:
    """Remove from the current snapshot the delete files among ``held`` (files holding a key, normalized)
    that apply to no live data file: an equality delete keyed on the subject (a Flink upsert's) once every
    older file of its partition is rewritten. Returns those removed."""
    return _retried(f"{name}: erasure: remove the delete files that hold a key and apply to no row",
                    lambda: _drop_dangling(latest(), held))


def _drop_dangling(table: Table, held: frozenset[str]) -> list[str]:
    commit = _Commit(table)
    if commit.head is None:
        return []
    live = [e for m in READS.manifests(table.io, commit.head) for e in READS.entries(table.io, m, discard_deleted=True)]
    data = [e for e in live if e.data_file.content == DataFileContent.DATA]
    unpartitioned = {spec_id for spec_id, spec in table.metadata.specs().items() if not spec.fields}
    dangling = {normalize(e.data_file.file_path) for e in live
                if e.data_file.content != DataFileContent.DATA and normalize(e.data_file.file_path) in held
                and not any(_applies(e, d, unpartitioned) for d in data)}
    if not dangling:
        return []
    kept, removed = _without(commit, lambda file: normalize(file.file_path) in dangling)
    commit.commit([*_deleted_manifests(commit, removed), *kept], _summary(commit, Operation.REPLACE, [], removed, {}))
    return sorted(dangling)


def _applies(delete: ManifestEntry, data: ManifestEntry, unpartitioned: set[int]) -> bool:
    """Whether a delete file may apply to a data file (the spec's sequence number and partition rules)."""
    file, sequence, data_sequence = delete.data_file, delete.sequence_number or 0, data.sequence_number or 0
    if file.spec_id not in unpartitioned and (file.spec_id, file.partition) != (data.data_file.spec_id,
                                                                                data.data_file.partition):
        return False
    if file.content == DataFileContent.EQUALITY_DELETES:
        return data_sequence < sequence
    referenced = _referenced_data_file(file)
    return data_sequence <= sequence and (referenced is None or normalize(referenced)
                                          == normalize(data.data_file.file_path))


def _overwrite_latest(latest: Callable[[], Table], staged: StagedRewrite, ref: str) -> None:
    _overwrite(latest(), staged, ref)


def _check_window(table: Table, read: int, head: Snapshot) -> None:
    """Snapshot isolation from ``read`` to ``head``: the read snapshot is an ancestor and no snapshot since
    added a delete file (the rows the rewrite kept would miss it)."""
    snapshot: Snapshot | None = head
    while snapshot is not None and snapshot.snapshot_id != read:
        for manifest in READS.manifests(table.io, snapshot):
            if (manifest.content == ManifestContent.DELETES and manifest.added_snapshot_id == snapshot.snapshot_id
                    and any(e.status == ManifestEntryStatus.ADDED and e.snapshot_id == snapshot.snapshot_id
                            for e in READS.entries(table.io, manifest, discard_deleted=True))):
                raise Conflict(f"Found new conflicting delete files (snapshot {snapshot.snapshot_id} added some)")
        parent = snapshot.parent_snapshot_id
        snapshot = table.metadata.snapshot_by_id(parent) if parent is not None else None
    if snapshot is None:
        raise Conflict(f"snapshot {read}, which the rewrite read, is no longer an ancestor of the current one")


def _replaced(file: DataFile, sources: frozenset[str]) -> bool:
    """A replaced data file, or a delete file that serves only replaced files (a deletion vector, a
    file-scoped position delete file: Iceberg's ContentFileUtil.referencedDataFileLocation)."""
    if file.content == DataFileContent.DATA:
        return normalize(file.file_path) in sources
    if file.content != DataFileContent.POSITION_DELETES:
        return False
    referenced = _referenced_data_file(file)
    return referenced is not None and normalize(referenced) in sources


def _referenced_data_file(file: DataFile) -> str | None:
    """The one data file a position delete file serves: its ``referenced_data_file`` (read only with the v3
    manifest schema in pyiceberg 0.12), else its file_path column's bounds when they are equal."""
    if len(file) == len(V3_FIELDS) and (referenced := file[V3_FIELDS.index("referenced_data_file")]):
        return str(referenced)
    lower, upper = (file.lower_bounds or {}).get(FILE_PATH_FIELD), (file.upper_bounds or {}).get(FILE_PATH_FIELD)
    return lower.decode() if lower is not None and lower == upper else None


def _entry(snapshot_id: int, file: DataFile) -> ManifestEntry:
    return ManifestEntry.from_args(status=ManifestEntryStatus.ADDED, snapshot_id=snapshot_id, data_file=file)


def _deleted(snapshot_id: int, entry: ManifestEntry) -> ManifestEntry:
    """The entry of a file this commit removes, without its column bounds: they are what erasure removes.
    (The file is copied field by field in the shape pyiceberg read it, v2's or v3's whatever the table's.)"""
    file = entry.data_file
    shape = next(v for v in (2, 3) if len(DATA_FILE_TYPE[v].fields) == len(file))
    fields = {f.name: file[i] for i, f in enumerate(DATA_FILE_TYPE[shape].fields)}
    stripped = DataFile.from_args(_table_format_version=shape, **{**fields, "lower_bounds": None, "upper_bounds": None})  # type: ignore[arg-type]
    stripped.spec_id = file.spec_id
    return ManifestEntry.from_args(status=ManifestEntryStatus.DELETED, snapshot_id=snapshot_id,
                                   sequence_number=entry.sequence_number,
                                   file_sequence_number=entry.file_sequence_number, data_file=stripped)


def _rewrite_manifests(table: Table, revealing: frozenset[str], ref: str = MAIN_BRANCH) -> int:
    commit = _Commit(table, ref)
    if commit.head is None:
        return 0
    manifests = list(READS.manifests(table.io, commit.head))
    chosen = [m for m in manifests if normalize(m.manifest_path) in revealing]
    if not chosen:
        return 0
    written = []
    for manifest in chosen:
        live = READS.entries(table.io, manifest, discard_deleted=True)
        if live:
            written.append(commit.manifest(manifest.content, manifest.partition_spec_id,
                                           [(ManifestEntryStatus.EXISTING, e) for e in live]))
    summary = _summary(commit, Operation.REPLACE, [], [], {
        "manifests-replaced": str(len(chosen)), "manifests-created": str(len(written)),
        "manifests-kept": str(len(manifests) - len(chosen))})
    commit.commit([*written, *(m for m in manifests if m not in chosen)], summary)
    return len(chosen)
