"""One file's key columns read and matched against the subjects' keys: the unit of a survey's work.

A module-level function of picklable arguments (a pyarrow filesystem, a path, the key set, the run's KeyProbe and the
file's manifest bounds), so the same code runs in this process's reader threads and, shipped by value, on a Spark
cluster's executors. With a probe, metadata decides first (runtime/erasure/pruning.py): a file its manifest bounds
exclude is not opened; one its footer's statistics or bloom filters exclude has no column chunk read.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow.parquet as pq
from pyarrow import fs as pafs

from .keys import SUBJECT, KeySet, file_key_columns, matches
from .pruning import Evidence, FileBounds, KeyProbe, footer_verdict


@dataclass(frozen=True)
class HeldFile:
    """A file that holds at least one subject's key."""

    path: str  # normalized, as storage listings spell it
    rows: int
    requests: tuple[str, ...]


@dataclass(frozen=True)
class FileRead:
    """What a survey learnt of one file, and from which evidence."""

    held: HeldFile | None  # None: it holds no key
    evidence: Evidence


def read_file(filesystem: pafs.FileSystem, path: str, keys: KeySet, probe: KeyProbe | None = None,
              bounds: FileBounds | None = None, size: int = -1) -> FileRead:
    """The rows of ``path`` holding a key, or none (no key column in the file, metadata excludes every key, or no
    match). ``probe`` None: no pruning, the key columns are read. ``bounds``: the file's manifest entry's, which count
    only when its recorded size is ``size``, the size listed."""
    alive = probe.after_bounds(bounds, size) if probe is not None else frozenset()
    if probe is not None and not alive:
        return FileRead(None, Evidence.BOUNDS)
    with filesystem.open_input_file(path) as handle:
        parquet = pq.ParquetFile(handle)
        paths = file_key_columns(parquet.schema_arrow, keys)
        if paths is None:
            return FileRead(None, Evidence.NO_KEY_COLUMN)
        if probe is not None and (verdict := footer_verdict(probe, parquet, handle, paths, alive)) is not None:
            return FileRead(None, verdict)
        found = matches(parquet.read(columns=[".".join(p) for p in paths]), paths, keys)
    if not found.num_rows:
        return FileRead(None, Evidence.READ)
    return FileRead(HeldFile(path, found.num_rows, keys.requests_of(found.column(SUBJECT))), Evidence.READ)
