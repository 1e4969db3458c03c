"""A schema change on an Iceberg StructType in memory, as Iceberg's ``SchemaUpdate`` makes it: add, drop, move,
rename, widen, make optional or document a column, each refused where Iceberg refuses it (a name twice, a missing
field, a nested type widened). Used by compiler/plan/memory/apply.py, which commits the new schema.

Field ids are assigned as Iceberg assigns them: a new column takes ``last_column_id + 1``, then its nested fields
take the next ids (every field of a struct first, then each field's own type: TypeUtil's ``assignFreshIds``).

A path names fields through structs and ``element``, ``key``, ``value`` through lists and maps, as
``ColumnPath`` does everywhere else.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import count

from pyiceberg.types import IcebergType, ListType, MapType, NestedField, PrimitiveType, StructType

from ...diff import changes
from ...iceberg.names import format_name
from ...iceberg.nested import list_type, map_type, nested_field, struct_type
from ...model.table import ColumnPath
from .error import MemoryApplyError


def add_columns(columns: StructType, last_column_id: int, adds: list[changes.ColumnAdd]) -> tuple[StructType, int]:
    """``columns`` with ``adds`` in their order, and the new ``last_column_id``."""
    ids = count(last_column_id + 1)
    for add in adds:
        parent, name = add.path[:-1], add.path[-1]
        field_id = next(ids)
        new = nested_field(field_id, name, _fresh(add.type, ids), False, add.doc)  # the differ refuses required
        columns = _at_struct(columns, parent, _inserting(new, add.position, add.after))
    return columns, next(ids) - 1


def drop_column(columns: StructType, path: ColumnPath) -> StructType:
    def without(struct: StructType) -> StructType:
        _index(list(struct.fields), path[-1])
        return struct_type(tuple(f for f in struct.fields if f.name != path[-1]))

    return _at_struct(columns, path[:-1], without)


def move_column(columns: StructType, path: ColumnPath, position: str, after: str | None) -> StructType:
    def moved(struct: StructType) -> StructType:
        fields = list(struct.fields)
        column = fields.pop(_index(fields, path[-1]))
        if after == column.name:
            raise MemoryApplyError(f"cannot move {format_name(path)} after itself")
        return _insert(struct_type(tuple(fields)), column, position, after)

    return _at_struct(columns, path[:-1], moved)


def rename_column(columns: StructType, path: ColumnPath, new_name: str) -> StructType:
    return _edit_field(columns, path, lambda f: nested_field(f.field_id, new_name, f.field_type, f.required, f.doc),
                       check_name=new_name)


def set_doc(columns: StructType, path: ColumnPath, doc: str | None) -> StructType:
    return _edit_field(columns, path, lambda f: nested_field(f.field_id, f.name, f.field_type, f.required, doc))


def widen_column(columns: StructType, path: ColumnPath, new: IcebergType) -> StructType:
    """A struct field, a list's element or a map's value given a wider primitive type."""
    def widen(old: IcebergType) -> IcebergType:
        if not isinstance(old, PrimitiveType):
            raise MemoryApplyError(f"cannot change {old} to {new}: only a primitive is widened")
        return new

    return _at_type(columns, path, widen)


def make_optional(columns: StructType, path: ColumnPath) -> StructType:
    """A struct field, a list's element or a map's value made optional."""
    if path[-1] in ("element", "value"):
        holder = _type_at(columns, path[:-1])
        if isinstance(holder, ListType) and path[-1] == "element":
            return _at_type(columns, path[:-1], lambda t: list_type(
                holder.element_id, holder.element_type, False))
        if isinstance(holder, MapType) and path[-1] == "value":
            return _at_type(columns, path[:-1], lambda t: map_type(
                holder.key_id, holder.key_type, holder.value_id, holder.value_type, False))
    return _edit_field(columns, path, lambda f: nested_field(f.field_id, f.name, f.field_type, False, f.doc))


def _fresh(t: IcebergType, ids: count[int]) -> IcebergType:
    """A new column's type with new ids: every field of a struct first, then each field's type; a list's element,
    a map's key and value, then their types (Iceberg's TypeUtil.assignFreshIds)."""
    if isinstance(t, StructType):
        numbered = [(next(ids), f) for f in t.fields]
        return struct_type(tuple(nested_field(i, f.name, _fresh(f.field_type, ids), f.required, f.doc)
                                 for i, f in numbered))
    if isinstance(t, ListType):
        element_id = next(ids)
        return list_type(element_id, _fresh(t.element_type, ids), t.element_required)
    if isinstance(t, MapType):
        key_id, value_id = next(ids), next(ids)
        key = _fresh(t.key_type, ids)
        return map_type(key_id, key, value_id, _fresh(t.value_type, ids), t.value_required)
    return t


def _inserting(new: NestedField, position: str, after: str | None) -> Callable[[StructType], StructType]:
    return lambda struct: _insert(struct, new, position, after)


def _insert(struct: StructType, new: NestedField, position: str, after: str | None) -> StructType:
    fields = list(struct.fields)
    if any(f.name == new.name for f in fields):
        raise MemoryApplyError(f"cannot add column {new.name}: the name exists")
    at = len(fields) if position == "last" else 0 if position == "first" else _index(fields, after or "") + 1
    return struct_type((*fields[:at], new, *fields[at:]))


def _edit_field(columns: StructType, path: ColumnPath, edit: Callable[[NestedField], NestedField],
                check_name: str | None = None) -> StructType:
    def edited(struct: StructType) -> StructType:
        fields = list(struct.fields)
        at = _index(fields, path[-1])
        if check_name is not None and any(f.name == check_name for f in fields):
            raise MemoryApplyError(f"cannot rename {format_name(path)} to {check_name}: the name exists")
        fields[at] = edit(fields[at])
        return struct_type(tuple(fields))

    return _at_struct(columns, path[:-1], edited)


def _index(fields: list[NestedField], name: str) -> int:
    found = next((i for i, f in enumerate(fields) if f.name == name), None)
    if found is None:
        raise MemoryApplyError(f"no field {name} (fields: {', '.join(f.name for f in fields) or 'none'})")
    return found


def _type_at(t: IcebergType, path: ColumnPath) -> IcebergType:
    """The type at a column path (names through structs, element/key/value through lists and maps)."""
    for part in path:
        if isinstance(t, StructType):
            t = t.fields[_index(list(t.fields), part)].field_type
        elif isinstance(t, ListType) and part == "element":
            t = t.element_type
        elif isinstance(t, MapType) and part in ("key", "value"):
            t = t.key_type if part == "key" else t.value_type
        else:
            raise MemoryApplyError(f"no field {format_name(path)}")
    return t


def _at_type(t: IcebergType, path: ColumnPath, edit: Callable[[IcebergType], IcebergType]) -> StructType:
    result = _rebuilt(t, path, edit)
    assert isinstance(result, StructType)
    return result


def _rebuilt(t: IcebergType, path: ColumnPath, edit: Callable[[IcebergType], IcebergType]) -> IcebergType:
    if not path:
        return edit(t)
    part, rest = path[0], path[1:]
    if isinstance(t, StructType):
        fields = list(t.fields)
        at = _index(fields, part)
        f = fields[at]
        fields[at] = nested_field(f.field_id, f.name, _rebuilt(f.field_type, rest, edit), f.required, f.doc)
        return struct_type(tuple(fields))
    if isinstance(t, ListType) and part == "element":
        return list_type(t.element_id, _rebuilt(t.element_type, rest, edit), t.element_required)
    if isinstance(t, MapType) and part == "value":
        return map_type(t.key_id, t.key_type, t.value_id, _rebuilt(t.value_type, rest, edit), t.value_required)
    if isinstance(t, MapType) and part == "key":
        return map_type(t.key_id, _rebuilt(t.key_type, rest, edit), t.value_id, t.value_type, t.value_required)
    raise MemoryApplyError(f"no field {part} in {t}")


def _at_struct(columns: StructType, parent: ColumnPath, edit: Callable[[StructType], StructType]) -> StructType:
    def struct_edit(t: IcebergType) -> IcebergType:
        if not isinstance(t, StructType):
            raise MemoryApplyError(f"{format_name(parent)} is not a struct")
        return edit(t)

    return _at_type(columns, parent, struct_edit)
