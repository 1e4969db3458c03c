"""Delete files that hold an erased key and that no snapshot reads: what an expiry killed between its commit
and its file deletions leaves behind.

The 3-day guard of orphan removal protects files of commits still in flight; it does not protect these:
erasure has read them and found personal data, and checks the latest metadata once more right before
deleting, so a file a snapshot reads (a commit that landed meanwhile) is never deleted.
"""

from __future__ import annotations

from collections.abc import Callable

from pyarrow import fs as pafs
from pyiceberg.table import Table

from runtime.erasure.survey import filesystem_for, table_reach


def delete_unreferenced(
    latest: Callable[[], Table], paths: dict[str, str], filesystems: dict[tuple[str, str], pafs.FileSystem]
) -> list[str]:
    """Delete those of ``paths`` (path -> the location listed under) no snapshot of the latest metadata reads;
    returns what was deleted."""
    table = latest()
    read_now = set().union(*table_reach(table).live.values())
    deleted = []
    for path, location in sorted(paths.items()):
        if path in read_now:
            continue
        try:
            filesystem_for(location, filesystems).delete_file(path)
        except FileNotFoundError:
            continue
        deleted.append(path)
    return deleted
