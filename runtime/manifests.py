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
from pyiceberg.table.snapshots import Snapshot

MAX_ENTRIES = 2_000_000  # about a few hundred MB of entries at most


class ManifestReads:
    def __init__(self, max_entries: int = MAX_ENTRIES) -> None:
        self.max_entries = max_entries
        self._lists: dict[str, tuple[ManifestFile, ...]] = {}
        self._entries: dict[str, tuple[ManifestEntry, ...]] = {}
        self._held = 0

    def manifests(self, io: FileIO, snapshot: Snapshot) -> tuple[ManifestFile, ...]:
        found = self._lists.get(snapshot.manifest_list)
        if found is None:
            found = self._lists[snapshot.manifest_list] = tuple(snapshot.manifests(io))
        return found

    def entries(self, io: FileIO, manifest: ManifestFile, *, discard_deleted: bool) -> Sequence[ManifestEntry]:
        """Every entry of the manifest (``discard_deleted``: without those a rewrite marked deleted)."""
        found = self._entries.get(manifest.manifest_path)
        if found is None:
            found = tuple(manifest.fetch_manifest_entry(io, discard_deleted=False))
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
