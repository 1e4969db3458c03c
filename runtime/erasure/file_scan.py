"""One file's key columns read and matched against the subjects' keys: the unit of a survey's work.

A module-level function of picklable arguments (a pyarrow filesystem, a path, the key set), so the same code runs
in this process's reader threads and, shipped by value, on a Spark cluster's executors.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow.parquet as pq
from pyarrow import fs as pafs

from .keys import SUBJECT, KeySet, file_key_columns, matches


@dataclass(frozen=True)
class HeldFile:
    """A file that holds at least one subject's key."""

    path: str  # normalized, as storage listings spell it
    rows: int
    requests: tuple[str, ...]


def read_file(filesystem: pafs.FileSystem, path: str, keys: KeySet) -> HeldFile | None:
    """The rows of ``path`` holding a key, or None (no key column in the file, or no match)."""
    with filesystem.open_input_file(path) as handle:
        parquet = pq.ParquetFile(handle)
        paths = file_key_columns(parquet.schema_arrow, keys)
        if paths is None:
            return None
        found = matches(parquet.read(columns=[".".join(p) for p in paths]), paths, keys)
    if not found.num_rows:
        return None
    return HeldFile(path, found.num_rows, keys.requests_of(found.column(SUBJECT)))
