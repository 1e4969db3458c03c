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

from collections.abc import Sequence

from pyiceberg.io import FileIO
from pyiceberg.manifest import ManifestEntry, ManifestEntryStatus, ManifestFile
from pyiceberg.table import Table
from pyiceberg.table.snapshots import Snapshot

from runtime.executor import ExecutionError

MAX_ENTRIES = 2_000_000  # about a few hundred MB of entries at most


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
                listed = tuple(snapshot.manifests(io))
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
                found = tuple(manifest.fetch_manifest_entry(io, discard_deleted=False))
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
