"""One candidate file's outcome in a survey: the rows holding a key, none, or why the file could not be read.

``scan`` is what a survey maps over its candidates (runtime/erasure/runners.py): in this process's reader threads,
or shipped by value to a cluster's executors together with the modules it needs. It therefore imports pyarrow and
this folder's file_scan and keys alone (runners.SHIPPED lists them): an executor needs pyarrow, not tablepolicy.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

import pyarrow as pa
from pyarrow import fs as pafs

from .file_scan import HeldFile, read_file
from .keys import KeySet


class Unread(Enum):
    """Why a candidate was not read (an enum: a member pickled on an executor is the same member here)."""

    GONE = "gone"  # deleted meanwhile (an expiry): it holds nothing any more, and is not known clean
    NOT_PARQUET = "not parquet"  # named .parquet and none (a write that failed half way, a stray of another tool):
    # it cannot be read, so it cannot be proven free of a key (damage if a snapshot reads it: the survey decides)


@dataclass(frozen=True)
class Candidate:
    """A file to read: its normalized path, the filesystem that reads it (pyarrow filesystems pickle) and its size."""

    path: str
    filesystem: pafs.FileSystem
    size: int


Outcome = HeldFile | Unread | None  # None: read, and it holds no key


def scan(keys: KeySet, candidate: Candidate) -> Outcome:
    try:
        return read_file(candidate.filesystem, candidate.path, keys)
    except FileNotFoundError:
        return Unread.GONE
    except (pa.ArrowInvalid, OSError):  # no parquet footer or a broken one, no bytes
        return Unread.NOT_PARQUET
