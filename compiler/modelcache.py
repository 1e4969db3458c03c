"""Validated policy models and their findings, cached by content hash.

This is the cache in memory; runtime/caches/models.py keeps it between runs in ``.tablepolicy/models.tsv``
(reading and writing that file is IO, which the compiler does not do).

A file whose text is unchanged is not parsed again: its model is restored from JSON (and validated by
the same strict models), its YAML positions are parsed only if a later finding needs one. A table's
semantic findings are reused while its file and every namespace defaults file it inherits are unchanged.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .diagnostics import Diagnostic, Location, Severity

if TYPE_CHECKING:  # the models only pass through here: a run whose every answer is cached never imports pydantic
    from .policy.table import NamespaceDefaults, TablePolicy

CACHE_VERSION = 5  # bump when validation rules change: cached models and findings are then re-derived
# 5: saved as lines (runtime/caches/models.py), beside a file index


def file_stamp(seen: os.stat_result) -> list[int]:
    """What the file index compares of a file's stat, as Git's index does: size, mtime and ctime (ns), inode and
    mode. The ctime tells a file rewritten in place whose mtime was set back (``touch -d``, an editor keeping it):
    no one can set it back. The inode tells a file replaced by another (``mv``, a symlink pointed elsewhere) and the
    mode one made unreadable, each of which may keep size and times."""
    return [seen.st_size, seen.st_mtime_ns, seen.st_ctime_ns, seen.st_ino, seen.st_mode]


def _changed_ns(stamp: list[int]) -> int:
    """When the file's content last changed, by its mtime (Git's racy test): its ctime, which moves with any
    rewrite, only has to match."""
    return stamp[1]


@dataclass
class ModelCache:
    models: dict[str, dict[str, Any]] = field(default_factory=dict)
    checks: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    changed: bool = False  # an entry was added since the cache was read: only then is it worth saving
    # The file index: absolute path -> [*stamp, sha256 of the text] (see ``file_stamp``), as Git's index vouches for
    # a file whose stat is unchanged. An entry is trusted only when the file's mtime lies before ``trusted_before_ns``
    # (the runtime sets it a little before the run that wrote the index started): a file edited within the same clock
    # tick as it was read, keeping its size, would otherwise pass as unchanged. ``settled_before_ns``: that bound for
    # the index this run saves, which holds only the files this run saw (an entry of a file it did not see may be
    # racy, and would be trusted under the later bound).
    files: dict[str, list[Any]] = field(default_factory=dict)
    trusted_before_ns: int = 0
    settled_before_ns: int = 0
    files_seen: set[str] = field(default_factory=set)
    files_changed: bool = False
    pack_models: bool = True  # see LoadedTable.cached: False when nothing will read the models (validate)
    saved: bool = False  # the run kept its entries (it validated without errors): its findings may be kept too

    @classmethod
    def in_memory(cls) -> ModelCache:
        return cls()

    def model(self, digest: str) -> dict[str, Any] | None:
        return self.models.get(digest)

    def put_model(self, digest: str, model: TablePolicy | NamespaceDefaults) -> None:
        """The model's JSON text, restored with model_validate_json (one pass in Rust) when it is read; a
        table's name and state beside it, which every run reads."""
        from .policy.table import TablePolicy

        data = model.model_dump_json(by_alias=True, exclude_unset=True)
        self.changed = True
        if isinstance(model, TablePolicy):
            self.models[digest] = {"kind": "table", "data": data, "table": model.table, "state": model.state}
        else:
            self.models[digest] = {"kind": "namespace", "data": data}

    def known_digest(self, path: str, stamp: list[int]) -> str | None:
        """The text's sha256 when the file index vouches that the file at ``path`` has not changed."""
        entry = self.files.get(path)
        # an entry is checked here, when it is used (a warm run of 10,000 files uses each once): a damaged one, of
        # another shape or type, vouches for nothing
        if (type(entry) is not list or len(entry) != 6 or entry[:-1] != stamp or type(entry[5]) is not str
                or _changed_ns(stamp) >= self.trusted_before_ns):
            return None
        self.files_seen.add(path)
        return str(entry[-1])

    def note_file(self, path: str, stamp: list[int], digest: str) -> None:
        """The stamp of a file taken before its text (with ``digest``) was read. An entry too recent to be trusted
        is saved again once this run's index would trust it."""
        self.files_seen.add(path)
        if (self.files.get(path) != [*stamp, digest]
                or self.trusted_before_ns <= _changed_ns(stamp) < self.settled_before_ns):
            self.files[path] = [*stamp, digest]
            self.files_changed = True

    def forget_file(self, path: str) -> None:
        """Drop the index's entry for ``path``, which vouched for a text the file no longer has."""
        if self.files.pop(path, None) is not None:
            self.files_changed = True

    def findings(self, key: str) -> list[Diagnostic] | None:
        cached = self.checks.get(key)
        if cached is None:
            return None
        return [
            Diagnostic(d["code"], Severity(d["severity"]), Location(d["file"], d["line"], d["col"]), d["message"],
                       d["hint"])
            for d in cached
        ]

    def put_findings(self, key: str, findings: list[Diagnostic]) -> None:
        self.changed = True
        self.checks[key] = [
            {"code": d.code, "severity": int(d.severity), "file": d.location.file, "line": d.location.line,
             "col": d.location.col, "message": d.message, "hint": d.hint}
            for d in findings
        ]

    def save(self) -> None:
        """Keep the entries for the next run: in memory there is nowhere to (runtime's FileModelCache writes)."""
