"""What a table uses that a reader may not read: its format version, types, delete files it will write or holds,
default values, partition transforms and name rules, each with where a policy declares it.

>>> from pyiceberg.types import NestedField, StructType, TimestampNanoType
>>> state = TableState(name=("a", "b"), columns=StructType(NestedField(1, "ts", TimestampNanoType())),
...                    format_version=3)
>>> [(u.feature, u.detail) for u in uses_of(state)]
[('format-v3', 'format_version 3'), ('type-timestamp_ns', 'column ts timestamp_ns')]
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from pyiceberg.types import (
    FixedType,
    GeographyType,
    GeometryType,
    IcebergType,
    ListType,
    MapType,
    NestedField,
    StructType,
    TimestampNanoType,
    TimestamptzNanoType,
    TimeType,
    UnknownType,
    UUIDType,
)

from ..iceberg.names import format_name
from ..model.table import ColumnPath, TableState

# primitive types a reader may not read, by pyiceberg class; any other primitive every reader of the table reads
TYPE_FEATURES: tuple[tuple[type[IcebergType], str], ...] = (
    (TimeType, "type-time"),
    (UUIDType, "type-uuid"),
    (FixedType, "type-fixed"),
    (TimestampNanoType, "type-timestamp_ns"),
    (TimestamptzNanoType, "type-timestamptz_ns"),
    (GeometryType, "type-geometry"),
    (GeographyType, "type-geography"),
    (UnknownType, "type-unknown"),
)
TRANSFORM_FEATURES = {"bucket": "transform-bucket", "truncate": "transform-truncate", "year": "transform-time",
                      "month": "transform-time", "day": "transform-time", "hour": "transform-time",
                      "void": "transform-void"}
WRITE_MODES = ("delete", "update", "merge")


@dataclass(frozen=True)
class Use:
    """One thing a table uses. ``column``: the column it is about (a path), else ``key``: the policy key that
    declares it, e.g. ``("format_version",)`` or ``("partition_by", 0)``."""

    feature: str
    detail: str
    key: tuple[str | int, ...] = ()
    column: ColumnPath | None = None


def uses_of(state: TableState) -> list[Use]:
    """Every use of ``state``, in a stable order, one per feature and place."""
    found = [Use(f"format-v{state.format_version}", f"format_version {state.format_version}", ("format_version",))]
    found += _columns(state.columns, ())
    for index, part in enumerate(state.partition):
        feature = TRANSFORM_FEATURES.get(part.transform.kind)
        if feature is not None:
            found.append(Use(feature, f"partition {part.transform.expression(part.source)}", ("partition_by", index)))
    deletes = "deletion-vectors" if state.format_version >= 3 else "position-deletes"
    for op in WRITE_MODES:
        if state.properties.get(f"write.{op}.mode") == "merge-on-read" and state.format_version >= 2:
            found.append(Use(deletes, f"write_modes.{op}: merge-on-read on format {state.format_version}",
                             ("write_modes", op)))
    return list(dict.fromkeys(found))


def _columns(struct: StructType, prefix: ColumnPath) -> Iterator[Use]:
    seen: dict[str, str] = {}
    for field in struct.fields:
        path = (*prefix, field.name)
        folded = field.name.casefold()
        if folded in seen and seen[folded] != field.name:
            yield Use("names-case-only", f"columns {format_name((*prefix, seen[folded]))} and {format_name(path)}",
                      column=path)
        seen.setdefault(folded, field.name)
        yield from _field(field, path)


def _field(field: NestedField, path: ColumnPath) -> Iterator[Use]:
    if field.initial_default is not None or field.write_default is not None:
        yield Use("default-values", f"column {format_name(path)} has a default value", column=path)
    yield from _type(field.field_type, path)


def _type(kind: IcebergType, path: ColumnPath) -> Iterator[Use]:
    if isinstance(kind, StructType):
        yield from _columns(kind, path)
    elif isinstance(kind, ListType):
        yield from _field(kind.element_field, (*path, "element"))
    elif isinstance(kind, MapType):
        yield from _field(kind.key_field, (*path, "key"))
        yield from _field(kind.value_field, (*path, "value"))
    else:
        for cls, feature in TYPE_FEATURES:
            if isinstance(kind, cls):
                yield Use(feature, f"column {format_name(path)} {kind}", column=path)


def held_uses(current: TableState, position_delete_files: int, equality_delete_files: int) -> list[Use]:
    """What a live table holds now: its state's uses and the delete files its current snapshot reads (a reader
    that ignores or cannot read them returns rows that were deleted, or fails)."""
    found = uses_of(current)
    if position_delete_files:
        kind = "deletion-vectors" if current.format_version >= 3 else "position-deletes"
        found.append(Use(kind, f"holds {position_delete_files} position delete file(s)", ("write_modes",)))
    if equality_delete_files:
        found.append(Use("equality-deletes", f"holds {equality_delete_files} equality delete file(s)",
                         ("write_modes",)))
    return list(dict.fromkeys(found))


def new_uses(current: TableState | None, desired: TableState) -> list[Use]:
    """What ``desired`` uses that ``current`` does not (everything, for a table not yet created)."""
    had = {(u.feature, u.column, u.key) for u in uses_of(current)} if current is not None else set()
    return [u for u in uses_of(desired) if (u.feature, u.column, u.key) not in had]
