"""Delete files that hold an erased key and that no snapshot reads: what an expiry killed between its commit
and its file deletions leaves behind (data files, and the manifests listing them with the key as a bound).

The 3-day guard of orphan removal protects files of commits still in flight; it does not protect these:
erasure has read them and found personal data, and checks the latest metadata once more right before
deleting, so a file a snapshot reads (a commit that landed meanwhile) is never deleted.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pyarrow.parquet as pq
from pyarrow import fs as pafs
from pyiceberg.avro.file import AvroFile
from pyiceberg.io.pyarrow import PyArrowFile
from pyiceberg.table import Table

from .proof import PendingDebris
from .survey import Reach, filesystem_for, table_reach


def data_files(reach: Reach) -> set[str]:
    return set().union(*reach.live.values())


def manifests(reach: Reach) -> set[str]:
    return set(reach.all_manifests)


def delete_unreferenced(
    latest: Callable[[], Table], paths: dict[str, str], filesystems: dict[tuple[str, str], pafs.FileSystem],
    read: Callable[[Reach], set[str]] = data_files,
) -> list[str]:
    """Delete those of ``paths`` (path -> the location listed under) that the latest metadata does not
    ``read`` (its snapshots' data files, or their manifests); returns what was deleted."""
    table = latest()
    read_now = read(table_reach(table))
    deleted = []
    for path, location in sorted(paths.items()):
        if path in read_now:
            continue
        try:
            filesystem_for(location, filesystems, table.io.properties).delete_file(path)
        except FileNotFoundError:
            continue
        deleted.append(path)
    return deleted


def reached(reach: Reach) -> set[str]:
    """Everything a snapshot reads: manifest lists, manifests, data and delete files."""
    return reach.reached_by(reach.live)


DEBRIS_MIN_AGE = timedelta(days=3)  # Iceberg's remove_orphan_files default: younger may be a write in flight


def delete_debris(
    latest: Callable[[], Table], paths: dict[str, str], sizes: dict[str, int],
    filesystems: dict[tuple[str, str], pafs.FileSystem], *, now: datetime, min_age: timedelta = DEBRIS_MIN_AGE,
) -> tuple[list[str], list[PendingDebris]]:
    """Delete those of ``paths`` (unreadable files: path -> the location listed under) that the latest metadata
    does not reach, whose size is what the survey listed, that still cannot be read and whose modification time is
    older than ``now - min_age``; returns what was deleted and what was kept for being younger. An unreadable file
    cannot be shown to hold no key, and no snapshot needs it: a writer killed half way left it. But a file another
    writer is still writing is unreadable and unreachable too until it commits (a parquet writer buffering a row
    group keeps a constant size): the age guard, as Iceberg's orphan removal has, keeps it."""
    table = latest()
    read_now = reached(table_reach(table))
    deleted, pending = [], []
    cutoff = now - min_age
    for path, location in sorted(paths.items()):
        if path in read_now:
            continue
        filesystem = filesystem_for(location, filesystems, table.io.properties)
        info = filesystem.get_file_info(path)
        if info.type != pafs.FileType.File or int(info.size or 0) != sizes.get(path) or readable(filesystem, path):
            continue
        mtime = _aware(info.mtime)
        if mtime is None or mtime > cutoff:  # no time known: never assume it is old
            written = mtime or now
            pending.append(PendingDebris(path, written, written + min_age))
            continue
        try:
            filesystem.delete_file(path)
        except FileNotFoundError:
            continue
        deleted.append(path)
    return deleted, pending


def _aware(moment: datetime | None) -> datetime | None:
    if moment is None:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def readable(filesystem: pafs.FileSystem, path: str) -> bool:
    """Whether ``path`` reads now as what its name says (a parquet footer, an avro header and blocks)."""
    try:
        if path.lower().endswith(".parquet"):
            with filesystem.open_input_file(path) as handle:
                pq.ParquetFile(handle)
        else:
            with AvroFile[Any](PyArrowFile(path, path, filesystem)) as records:
                for _record in records:
                    pass
    except Exception:  # unreadable is the answer asked for
        return False
    return True
