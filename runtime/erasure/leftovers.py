"""Delete files that hold an erased key and that no snapshot reads: what an expiry killed between its commit
and its file deletions leaves behind (data files, and the manifests listing them with the key as a bound).

The 3-day guard of orphan removal protects files of commits still in flight; it does not protect these:
erasure has read them and found personal data, and checks the latest metadata once more right before
deleting, so a file a snapshot reads (a commit that landed meanwhile) is never deleted.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pyarrow.parquet as pq
from pyarrow import fs as pafs
from pyiceberg.avro.file import AvroFile
from pyiceberg.io.pyarrow import PyArrowFile
from pyiceberg.table import Table

from runtime.erasure.survey import Reach, filesystem_for, table_reach


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


def delete_debris(
    latest: Callable[[], Table], paths: dict[str, str], sizes: dict[str, int],
    filesystems: dict[tuple[str, str], pafs.FileSystem],
) -> list[str]:
    """Delete those of ``paths`` (unreadable files: path -> the location listed under) that the latest metadata
    does not reach, whose size is what the survey listed (a file still growing is a write in flight) and that still
    cannot be read; returns what was deleted. An unreadable file cannot be shown to hold no key, and no snapshot
    needs it: a writer killed half way left it."""
    table = latest()
    read_now = reached(table_reach(table))
    deleted = []
    for path, location in sorted(paths.items()):
        if path in read_now:
            continue
        filesystem = filesystem_for(location, filesystems, table.io.properties)
        info = filesystem.get_file_info(path)
        if info.type != pafs.FileType.File or int(info.size or 0) != sizes.get(path) or readable(filesystem, path):
            continue
        try:
            filesystem.delete_file(path)
        except FileNotFoundError:
            continue
        deleted.append(path)
    return deleted


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
