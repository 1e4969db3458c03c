"""Delete files that hold an erased key and that no snapshot reads: what an expiry killed between its commit
and its file deletions leaves behind (data files, and the manifests listing them with the key as a bound).

The 3-day guard of orphan removal protects files of commits still in flight; it does not protect these:
erasure has read them and found personal data, and checks the latest metadata once more right before
deleting, so a file a snapshot reads (a commit that landed meanwhile) is never deleted.
"""

from __future__ import annotations

from collections.abc import Callable

from pyarrow import fs as pafs
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
