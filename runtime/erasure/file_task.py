"""One candidate file's outcome in a survey: what it holds and which evidence decided (file_scan.FileRead), or why
the file could not be read.

``scan`` is what a survey maps over its candidates (runtime/erasure/runners.py): in this process's reader threads,
or shipped by value to a cluster's executors together with the modules it needs. It therefore imports pyarrow and
this folder's file_scan, keys, pruning and bloom alone (runners.SHIPPED lists them): an executor needs pyarrow, not
tablepolicy.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

import pyarrow as pa
from pyarrow import fs as pafs

from .file_scan import FileRead, read_file
from .keys import KeySet
from .pruning import FileBounds, KeyProbe


class Unread(Enum):
    """Why a candidate was not read (an enum: a member pickled on an executor is the same member here)."""

    GONE = "gone"  # deleted meanwhile (an expiry): it holds nothing any more, and is not known clean
    NOT_PARQUET = "not parquet"  # named .parquet and none (a write that failed half way, a stray of another tool):
    # it cannot be read, so it cannot be proven free of a key (damage if a snapshot reads it: the survey decides)


@dataclass(frozen=True)
class Candidate:
    """A file to read: its normalized path, the filesystem that reads it (pyarrow filesystems pickle), its size as
    listed and its manifest entry's key-column bounds (None: no snapshot references it)."""

    path: str
    filesystem: pafs.FileSystem
    size: int
    bounds: FileBounds | None = None


Outcome = FileRead | Unread


def scan(keys: KeySet, probe: KeyProbe | None, candidate: Candidate) -> Outcome:
    """``probe`` None: no pruning, every file's key columns are read."""
    try:
        return read_file(candidate.filesystem, candidate.path, keys, probe, candidate.bounds, candidate.size)
    except FileNotFoundError:
        return Unread.GONE
    except (pa.ArrowInvalid, OSError):  # no parquet footer or a broken one, no bytes
        return Unread.NOT_PARQUET
