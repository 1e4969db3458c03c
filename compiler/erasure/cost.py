"""What an erasure of one table will cost, known before it runs: the files whose key columns the survey reads once
metadata has pruned the rest (the proof reads as many again), the files the rewrite replaces or deletes, and where
the reads and the rewrite run. ``erase --dry-run`` prints it per table; ``--format json`` carries the same."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# how a survey decided a file without reading its key columns (runtime/erasure/pruning.py Evidence) -> its words
EXCLUSIONS = {"bounds": "manifest bounds", "statistics": "row-group statistics", "bloom_filter": "bloom filters",
              "no_key_column": "no key column"}


@dataclass(frozen=True)
class Placement:
    """Where a part of the run runs (this process or the cluster's executors), and why (runtime/erasure/runners.py
    decides)."""

    cluster: bool
    why: str

    @property
    def where(self) -> str:
        return "the cluster" if self.cluster else "this process"

    @property
    def text(self) -> str:
        return f"{self.where} ({self.why})"

    def as_json(self) -> dict[str, Any]:
        return {"where": "cluster" if self.cluster else "this process", "why": self.why}


@dataclass(frozen=True)
class ErasureCost:
    files_listed: int  # parquet files under the table's locations or referenced by a snapshot
    bytes_listed: int
    files_read: int  # of them, those whose key columns the survey reads after pruning (the proof: as many again)
    bytes_read: int  # their sizes as listed (only their key column chunks are read)
    excluded: tuple[tuple[str, int, int], ...]  # (evidence, files, bytes) decided without reading a key column
    pruned: bool  # False: --no-prune, every file's key columns are read
    files_rewritten: int  # files of the current snapshot holding a key: the delete replaces them
    bytes_rewritten: int
    files_deleted: int  # files holding a key that no snapshot reads: deleted
    bytes_deleted: int
    reads: Placement
    rewrite: Placement

    def as_json(self) -> dict[str, Any]:
        return {"files_listed": self.files_listed, "bytes_listed": self.bytes_listed,
                "files_read": self.files_read, "bytes_read": self.bytes_read, "pruned": self.pruned,
                "excluded": {evidence: {"files": files, "bytes": size} for evidence, files, size in self.excluded},
                "files_rewritten": self.files_rewritten, "bytes_rewritten": self.bytes_rewritten,
                "files_deleted": self.files_deleted, "bytes_deleted": self.bytes_deleted,
                "reads": self.reads.as_json(), "rewrite": self.rewrite.as_json()}
