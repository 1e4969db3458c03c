"""How much of a table's data the bloom filters on its erasure key cover: each data file's parquet footer, read
alone (one read at the end of the file), says whether every row group carries a filter on every key column.

Iceberg writes a filter only into files written after ``write.parquet.bloom-filter-enabled.column.<col>`` is
set; older files get one when compaction rewrites them. Columns are matched by field id, so a file written before
a key column was renamed is still read right. No cache: data files never change, but a health run reads each
footer once, a few at a time.
"""

from __future__ import annotations

from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import IO, cast

import pyarrow as pa
import pyarrow.parquet as pq
from pyiceberg.io import FileIO
from pyiceberg.io.pyarrow import PYARROW_PARQUET_FIELD_ID_KEY
from pyiceberg.schema import Schema

from tablepolicy.compiler.maintenance.health import BloomCoverage
from tablepolicy.compiler.model import bloom

READERS = 4  # footers read at once: each is a wait on storage, not work


def key_filters(properties: dict[str, str], schema: Schema) -> dict[str, int]:
    """The erasure key columns the table asks filters for, by path, with their field ids (none: no coverage)."""
    wanted = set(bloom.key_columns(properties)) & set(bloom.enabled_columns(properties))
    found: dict[str, int] = {}
    for column in sorted(wanted):
        try:
            found[column] = schema.find_field(column).field_id
        except ValueError:
            continue  # a key column no longer in the schema: the plan's findings say so
    return found


def coverage(io: FileIO, columns: dict[str, int], files: Iterable[tuple[str, int]]) -> BloomCoverage:
    """``files``: (path, bytes) of the current snapshot's data files."""
    listed = list(files)
    ids = frozenset(columns.values())
    with ThreadPoolExecutor(READERS) as pool:
        found = list(pool.map(lambda f: _covered(io, f[0], ids, columns), listed))
    return BloomCoverage(
        columns=tuple(columns), files=len(listed), bytes=sum(size for _, size in listed),
        covered_files=sum(1 for c in found if c), covered_bytes=sum(size for (_, size), c in zip(listed, found,
                                                                                              strict=True) if c),
        unread=sum(1 for c in found if c is None))


def _covered(io: FileIO, path: str, ids: frozenset[int], names: dict[str, int]) -> bool | None:
    """Whether every row group of ``path`` has a filter on every column of ``ids``; None: the footer is unreadable."""
    try:
        with io.new_input(path).open() as stream:
            parquet = pq.ParquetFile(cast(IO[bytes], stream))
            meta, arrow = parquet.metadata, parquet.schema_arrow
    except (OSError, ValueError):
        return None
    by_id = _paths_by_id(arrow) or {field_id: name for name, field_id in names.items()}  # no ids: by name
    if any(field_id not in by_id for field_id in ids):
        return False  # a key column the file does not hold (added later): nothing to filter by
    index = {meta.schema.column(i).path: i for i in range(meta.num_columns)}
    chunks = [index.get(by_id[field_id]) for field_id in ids]
    if any(i is None for i in chunks):
        return False
    return all(meta.row_group(g).column(i).bloom_filter_offset is not None
               for g in range(meta.num_row_groups) for i in chunks if i is not None)


def _paths_by_id(schema: pa.Schema) -> dict[int, str]:
    """Field id -> parquet column path, through structs (key columns are strings and integers: no lists, maps)."""
    found: dict[int, str] = {}

    def walk(fields: Iterable[pa.Field], prefix: str) -> None:
        for f in fields:
            path = prefix + f.name
            if pa.types.is_struct(f.type):
                walk(f.type, path + ".")
            elif f.metadata and PYARROW_PARQUET_FIELD_ID_KEY in f.metadata:
                found[int(f.metadata[PYARROW_PARQUET_FIELD_ID_KEY])] = path

    walk(schema, "")
    return found
