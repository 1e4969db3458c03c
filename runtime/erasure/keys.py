"""The subjects' keys as data, never as SQL text: one arrow table serves both engines.

Spark receives it as a DataFrame registered as a temporary view, which the DELETE reads through an
``IN (SELECT ...)`` subquery; the proof matches each file's key columns against the same table: a set
lookup when there is one key column, an arrow hash join when there are several. Key columns are resolved by
field id on the live schema, so a file written before a column was renamed is still read by the column's
identity, and nested columns (``user.uid``) work.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from pyiceberg.schema import Schema
from pyiceberg.types import IntegerType, LongType, NestedField, StringType, StructType

from tablepolicy.compiler.erasure.plan import TableErasure
from tablepolicy.compiler.iceberg.names import format_name
from tablepolicy.compiler.model.table import ColumnPath

FIELD_ID = b"PARQUET:field_id"
SUBJECT = "subject"  # the key table's column naming the subject (index into KeySet.subjects)
ROW = "row"  # a row's position in the rows being filtered
ARROW_TYPES: dict[type, pa.DataType] = {StringType: pa.string(), IntegerType: pa.int64(), LongType: pa.int64()}


class KeyColumnError(Exception):
    """A key column the live table does not have, or of a type erasure cannot match."""


@dataclass(frozen=True)
class KeyColumn:
    path: ColumnPath
    field_id: int
    arrow_type: pa.DataType

    @property
    def alias(self) -> str:
        return f"k{self.field_id}"


@dataclass(frozen=True)
class KeySet:
    """Every subject's key values, one row per subject, typed as the table's key columns."""

    columns: tuple[KeyColumn, ...]
    table: pa.Table  # one column per key (KeyColumn.alias) and SUBJECT
    requests: tuple[str, ...]  # SUBJECT index -> request id
    # computed once at construction (fields, not functools.cached_property: Python 3.11's holds a lock, which
    # cannot be pickled, and a KeySet is shipped to a cluster's executors: runtime/erasure/runners.py)
    values: pa.Array | None = field(init=False, repr=False, compare=False)
    distinct: bool = field(init=False, repr=False, compare=False)

    @property
    def aliases(self) -> list[str]:
        return [c.alias for c in self.columns]

    def requests_of(self, subjects: pa.Array | pa.ChunkedArray) -> tuple[str, ...]:
        return tuple(sorted({self.requests[i] for i in pc.unique(subjects).to_pylist()}))

    def __post_init__(self) -> None:
        # values: the key column's values when there is one key column: rows are then matched by a set lookup,
        # several times faster than a hash join, which builds its table of the 10,000 keys again for each file.
        # distinct: one key column and no two subjects share a value: a row then matches one subject at most,
        # which a lookup finds (two requests for the same subject make the join pair the row with both).
        values = self.table.column(self.columns[0].alias).combine_chunks() if len(self.columns) == 1 else None
        object.__setattr__(self, "values", values)
        object.__setattr__(self, "distinct",
                           values is not None and pc.count_distinct(values).as_py() == len(values))


def key_set(erasure: TableErasure, schema: Schema) -> KeySet:
    columns = tuple(_resolve(schema, path, erasure.table) for path in erasure.columns)
    data: dict[str, Any] = {
        column.alias: pa.array([s.values[i] for s in erasure.subjects], column.arrow_type)
        for i, column in enumerate(columns)
    }
    data[SUBJECT] = pa.array(range(len(erasure.subjects)), pa.int32())
    return KeySet(columns, pa.table(data), tuple(s.request for s in erasure.subjects))


def _resolve(schema: Schema, path: ColumnPath, table: tuple[str, ...]) -> KeyColumn:
    struct: StructType = schema.as_struct()
    found: NestedField | None = None
    for depth, part in enumerate(path):
        found = next((f for f in struct.fields if f.name == part), None)
        if found is None or (depth < len(path) - 1 and not isinstance(found.field_type, StructType)):
            raise KeyColumnError(f"{format_name(table)} has no key column {format_name(path)}")
        if isinstance(found.field_type, StructType):
            struct = found.field_type
    assert found is not None
    arrow_type = ARROW_TYPES.get(type(found.field_type))
    if arrow_type is None:
        raise KeyColumnError(f"key column {format_name(path)} of {format_name(table)} is {found.field_type}: "
                             "erasure keys are string or integer columns")
    return KeyColumn(path, found.field_id, arrow_type)


def _locate(schema: pa.Schema, field_id: int) -> list[str] | None:
    """The physical name path of a field id in a parquet file's schema, or None if the file lacks it."""
    def walk(fields: list[pa.Field], prefix: list[str]) -> list[str] | None:
        for f in fields:
            if f.metadata and f.metadata.get(FIELD_ID) == str(field_id).encode():
                return [*prefix, f.name]
            if pa.types.is_struct(f.type):
                inner = walk([f.type.field(i) for i in range(f.type.num_fields)], [*prefix, f.name])
                if inner is not None:
                    return inner
        return None

    return walk(list(schema), [])


def file_key_columns(schema: pa.Schema, keys: KeySet) -> list[list[str]] | None:
    """Where each key column is in a data file; None when the file holds no key column (a delete file, a file
    written before the key column existed): such a file cannot hold a key."""
    paths = [_locate(schema, c.field_id) for c in keys.columns]
    if any(p is None for p in paths):
        return None
    return [p for p in paths if p is not None]


def matches(read: pa.Table, paths: list[list[str]], keys: KeySet) -> pa.Table:
    """The rows of ``read`` (a file's key columns) that hold a subject's key: key columns and SUBJECT, a row per
    subject it matches."""
    arrays = _key_arrays(read, paths, keys)
    if keys.distinct:
        ((alias, column),) = arrays.items()
        found = pc.index_in(column, value_set=keys.values)  # the subject's position in the key set, or null
        held = pc.is_valid(found)
        return pa.table({alias: column.filter(held), SUBJECT: keys.table.column(SUBJECT).take(found.filter(held))})
    return pa.table(arrays).join(keys.table, keys=keys.aliases, join_type="inner")


def without_keys(read: pa.Table, keys: KeySet) -> pa.Table:
    """The rows of ``read`` (a table's rows, columns named as its live schema names them) that hold no
    subject's key, in their order: a NULL key column matches nothing, as in the DELETE's ``IN``."""
    arrays = _key_arrays(read, [list(c.path) for c in keys.columns], keys)
    if keys.values is not None:
        ((_, column),) = arrays.items()
        return read.filter(pc.invert(pc.is_in(column, value_set=keys.values)))  # a NULL is in no set: kept
    arrays[ROW] = pa.array(range(read.num_rows), pa.int64())
    held = pa.table(arrays).join(keys.table.select(keys.aliases), keys=keys.aliases, join_type="left semi")
    return read.filter(pc.invert(pc.is_in(arrays[ROW], value_set=held.column(ROW).combine_chunks())))


def _key_arrays(read: pa.Table, paths: list[list[str]], keys: KeySet) -> dict[str, Any]:
    """Each key column of ``read`` (found by its name path), typed as the key set's column."""
    arrays = {}
    for column, path in zip(keys.columns, paths, strict=True):
        values: Any = read.column(path[0])
        for name in path[1:]:
            values = pc.struct_field(values, name)
        arrays[column.alias] = pc.cast(values, column.arrow_type)
    return arrays
