"""Apply a plan's changes to catalog state in memory, as Iceberg applies each commit to table metadata (pyiceberg's
``update_table_metadata`` of a ``TableUpdate``): no engine, no catalog. Tests use it to prove, for every row of the
differ's case table, that the planned changes turn the current state into the desired one and that planning again
finds nothing; it refuses what Iceberg refuses (dropping a partition, sort or identifier source, a name twice, a
table in a namespace that does not exist), so the order of a plan's changes is checked as well.

Field ids are assigned as Iceberg's ``SchemaUpdate`` assigns them: a new column takes ``last_column_id + 1``, then
its nested fields take the next ids (every field of a struct first, then each field's own type: TypeUtil's
``assignFreshIds``), and ``last_column_id`` only grows, so a dropped id is never given again (a re-added name has a
new id). Partition, sort and identifier sources are held by field id, as metadata holds them: a rename moves them
with the column.

Where ids decide what the differ sees: it matches a column by pinned id (``id:``), then ``renamed_from``, then name,
and a partition, sort or identifier field by the id its source path has now; a policy's own ids are a fresh
create's (1..n), which an evolved table's are not. So an applied table equals the policy on names, not ids
(``differences``), except where git pins an id, and a name dropped and added again is a new field (a new id).

Each change is one commit: a new metadata file, and a new schema, spec or sort order id where it changes one. The
stamps apply adds (plan id, declared keys and refs, consumed approvals) are commits of their own
(``SetProperties`` changes made by runtime/apply.py); a change list without them is applied as it is.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from itertools import count
from typing import assert_never

from pyiceberg.types import IcebergType, ListType, MapType, NestedField, PrimitiveType, StructType

from compiler.catalog.current import UNSORTED_ORDER_ID, CurrentTable
from compiler.diff import changes
from compiler.diff.changes import Change, RetentionEstimate
from compiler.diff.properties import owned_keys
from compiler.model.iceberg_types import list_type, map_type, nested_field, struct_type
from compiler.model.names import format_name
from compiler.model.table import (
    ColumnPath,
    PartitionFieldState,
    RefState,
    TableHistory,
    TableState,
    default_partition_name,
    field_paths,
)
from compiler.model.transforms import Transform
from compiler.model.view import CurrentView

# What Spark's WRITE clause sets write.distribution-mode to (Iceberg's SQL extensions): ORDERED BY -> range,
# DISTRIBUTED BY PARTITION -> hash, UNORDERED -> none; LOCALLY ORDERED BY leaves the property as it was.
DISTRIBUTION = "write.distribution-mode"
_WRITE_MODE: dict[str | None, str | None] = {None: "range", "range": "range", "hash": "hash", "none": None}


class MemoryApplyError(ValueError):
    """A change Iceberg would refuse on this state (the plan's order or the change itself is wrong)."""


@dataclass(frozen=True)
class MemoryTable:
    """A table's metadata in memory: what the planner reads (``current``) and the counter Iceberg keeps beside it."""

    current: CurrentTable
    last_column_id: int = 0
    commits: int = 1  # metadata files written so far

    @classmethod
    def of(cls, current: CurrentTable, last_column_id: int | None = None) -> MemoryTable:
        """``last_column_id``: the metadata's ``last-column-id`` (by default the highest live id, which is right
        unless a column was dropped since the highest one was added)."""
        live = max(field_paths(current.state.columns), default=0)
        return cls(current, live if last_column_id is None else last_column_id)


@dataclass(frozen=True)
class Lake:
    """Namespaces, tables and views held in memory; a StateSource (compiler.plan.planner), so a plan can be made
    against what an apply left."""

    namespaces: frozenset[tuple[str, ...]] = frozenset()
    tables: Mapping[tuple[str, ...], MemoryTable] = field(default_factory=dict)
    views: Mapping[tuple[str, ...], CurrentView] = field(default_factory=dict)

    def table(self, name: tuple[str, ...]) -> CurrentTable | None:
        held = self.tables.get(name)
        return held.current if held is not None else None

    def namespace_exists(self, namespace: tuple[str, ...]) -> bool:
        return namespace in self.namespaces

    def tables_in(self, namespace: tuple[str, ...]) -> list[tuple[str, ...]]:
        return sorted(name for name in self.tables if name[:-1] == namespace)

    def estimate_retention(
        self, name: tuple[str, ...], column: tuple[str, ...], cutoff: datetime
    ) -> RetentionEstimate | None:
        return None  # no data files in memory

    def metadata_locations(self) -> dict[tuple[str, ...], str] | None:
        return None

    def view(self, name: tuple[str, ...]) -> CurrentView | None:
        return self.views.get(name)


def apply_change(lake: Lake, change: Change) -> Lake:
    """``lake`` after the one commit ``change`` makes."""
    name = change.table
    match change:
        case changes.CreateNamespace():  # CREATE NAMESPACE IF NOT EXISTS
            return replace(lake, namespaces=lake.namespaces | {name})
        case changes.CreateTable():
            if name[:-1] not in lake.namespaces:
                raise MemoryApplyError(f"cannot create {format_name(name)}: namespace {format_name(name[:-1])} "
                                       "does not exist")
            if name in lake.tables or name in lake.views:
                raise MemoryApplyError(f"cannot create {format_name(name)}: it exists")
            return replace(lake, tables={**lake.tables, name: created(change.state)})
        case changes.DropTable():
            _held(lake, name)
            return replace(lake, tables={k: v for k, v in lake.tables.items() if k != name})
        case changes.CreateView() | changes.ReplaceView() | changes.UnsetViewProperties() | changes.DropView():
            return _view(lake, change)
        case _:
            return replace(lake, tables={**lake.tables, name: evolve(_held(lake, name), change)})


def created(state: TableState) -> MemoryTable:
    """A table as one atomic create leaves it: the declared schema with the ids a fresh CREATE TABLE assigns
    (``state.columns`` holds them), spec 0 with Iceberg's default names, the sort order, no snapshot, no ref."""
    ids = state.ids_by_path
    held = TableState(
        name=state.name, columns=state.columns,
        identifier_field_ids=tuple(ids[p] for p in state.identifier_fields),
        partition=tuple(_named(f) for f in state.partition), sort=state.sort,
        identifier_fields=state.identifier_fields,
        properties=dict(sorted({**state.properties, **_comment(state.comment)}.items())), comment=state.comment,
        location=state.location or "memory:/" + "/".join(state.name), format_version=state.format_version)
    current = CurrentTable(
        state=held, metadata_location=_metadata_file(held, 1), schema_id=0, spec_id=0,
        sort_order_id=1 if state.sort else UNSORTED_ORDER_ID,
        history=TableHistory(partition_source_ids=frozenset(ids[f.source] for f in state.partition)),
        uuid=str(uuid.uuid5(uuid.NAMESPACE_URL, "memory:" + ".".join(state.name))))
    return MemoryTable(current, max(field_paths(state.columns), default=0))


def evolve(table: MemoryTable, change: Change) -> MemoryTable:
    """One commit of a table's evolution (not a create or drop: those change the lake)."""
    state = table.current.state
    match change:
        case changes.AddColumn():
            return _schema(table, _add(table, [changes.ColumnAdd(path=change.path, type=change.type, doc=change.doc,
                                                                 position=change.position, after=change.after)]))
        case changes.AddColumns():  # one schema commit, ids assigned in the batch's order
            return _schema(table, _add(table, list(change.columns)))
        case changes.DropColumn():
            return _schema(table, (_drop(state, change.path), table.last_column_id))
        case changes.RenameColumn():
            new = change.new_name
            return _schema(table, (_edit_field(state, change.path, lambda f: _renamed(f, new), check_name=new),
                                   table.last_column_id))
        case changes.WidenType():  # a struct field, a list's element or a map's value
            return _schema(table, (_at_type(state.columns, change.path, _widened(change.new)), table.last_column_id))
        case changes.MakeOptional():
            return _schema(table, (_optional(state, change.path), table.last_column_id))
        case changes.UpdateDoc():
            doc = change.doc
            return _schema(table, (_edit_field(state, change.path, lambda f: nested_field(
                f.field_id, f.name, f.field_type, f.required, doc)), table.last_column_id))
        case changes.MoveColumn():
            return _schema(table, (_move(state, change.path, change.position, change.after), table.last_column_id))
        case changes.AddPartitionField():
            return _spec(table, _add_partition(state, state.partition, change.field))
        case changes.DropPartitionField():
            return _spec(table, _drop_partition(state, state.partition, change.field))
        case changes.RenamePartitionField():
            return _spec(table, _rename_partition(state.partition, change.old_name, change.field))
        case changes.ReplacePartitionField():
            kept = _drop_partition(state, state.partition, change.old)
            return _spec(table, _add_partition(state, kept, change.field))
        case changes.UpdatePartitionSpec():  # one commit: removes, renames, then adds, as UpdatePartitionSpec
            spec = state.partition
            for removed in change.remove:
                spec = _drop_partition(state, spec, removed)
            for rename in change.rename:
                spec = _rename_partition(spec, rename.old_name, rename.field)
            for added in change.add:
                spec = _add_partition(state, spec, added)
            return _spec(table, spec)
        case changes.SetSortOrder():
            return _sort(table, change)
        case changes.SetIdentifierFields():
            return _identifiers(table, change.fields)
        case changes.DropIdentifierFields():
            return _identifiers(table, tuple(p for p in state.identifier_fields if p not in change.fields))
        case changes.UpgradeFormat():
            if change.new < state.format_version:
                raise MemoryApplyError(f"format version {state.format_version} cannot go down to {change.new}")
            return _commit(table, state.model_copy(update={"format_version": change.new}))
        case changes.SetComment():
            return _properties(table, {"comment": change.comment}, comment=change.comment)
        case changes.SetProperties():
            return _properties(table, {c.key: c.new for c in change.changes})
        case changes.TightenRetention():
            return _properties(table, {c.key: c.new for c in change.properties})
        case changes.UnsetProperties():
            return _properties(table, {c.key: None for c in change.changes})
        case changes.CreateRef() | changes.SetRefRetention() | changes.DropRef():
            return _ref(table, change)
        case (changes.CreateNamespace() | changes.CreateTable() | changes.DropTable() | changes.CreateView()
              | changes.ReplaceView() | changes.UnsetViewProperties() | changes.DropView()):
            raise AssertionError(f"{change.action} changes the lake, not a table: apply_change applies it")
        case _:
            assert_never(change)


# --- schema

def _schema(table: MemoryTable, result: tuple[StructType, int]) -> MemoryTable:
    """A new schema: partition, sort and identifier sources follow their field ids (a rename moves them), and
    Iceberg refuses a schema that drops one (the differ replaces an order and drops identifiers first)."""
    columns, last_column_id = result
    state, current = table.current.state, table.current
    path_of = field_paths(columns)
    id_of = state.ids_by_path

    def follow(path: ColumnPath, what: str) -> ColumnPath:
        moved = path_of.get(id_of[path])
        if moved is None:
            raise MemoryApplyError(f"cannot drop {format_name(path)}: it is {what} of {format_name(state.name)}")
        return moved

    held = _fresh_state(state, {
        "columns": columns,
        "partition": tuple(f.model_copy(update={"source": follow(f.source, "a partition source")})
                           for f in state.partition),
        "sort": tuple(f.model_copy(update={"source": follow(f.source, "a sort source")}) for f in state.sort),
        "identifier_fields": tuple(follow(p, "an identifier field") for p in state.identifier_fields),
    })
    gone = frozenset(p for i, p in field_paths(state.columns).items() if i not in path_of)
    dropped = current.history.dropped_paths | gone
    history = current.history.model_copy(update={"dropped_paths": dropped}) if gone else None
    return _commit(replace(table, last_column_id=last_column_id), held, schema=True, history=history)


def _fresh_state(state: TableState, update: dict[str, object]) -> TableState:
    """``state`` with a new schema: model_copy would carry the cached ``ids_by_path`` and ``schema_`` of the old one
    over (a cached_property lives in the instance's __dict__, which model_copy copies)."""
    held = state.model_copy(update=update)
    for cached in ("ids_by_path", "schema_"):
        held.__dict__.pop(cached, None)
    return held


def _add(table: MemoryTable, adds: list[changes.ColumnAdd]) -> tuple[StructType, int]:
    columns = table.current.state.columns
    ids = count(table.last_column_id + 1)
    for add in adds:
        parent, name = add.path[:-1], add.path[-1]
        field_id = next(ids)
        new = nested_field(field_id, name, _fresh(add.type, ids), False, add.doc)  # the differ refuses required
        columns = _at_struct(columns, parent, _inserting(new, add.position, add.after))
    return columns, next(ids) - 1


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


def _drop(state: TableState, path: ColumnPath) -> StructType:
    def without(struct: StructType) -> StructType:
        _index(list(struct.fields), path[-1])
        return struct_type(tuple(f for f in struct.fields if f.name != path[-1]))

    return _at_struct(state.columns, path[:-1], without)


def _move(state: TableState, path: ColumnPath, position: str, after: str | None) -> StructType:
    def moved(struct: StructType) -> StructType:
        fields = list(struct.fields)
        column = fields.pop(_index(fields, path[-1]))
        if after == column.name:
            raise MemoryApplyError(f"cannot move {format_name(path)} after itself")
        return _insert(struct_type(tuple(fields)), column, position, after)

    return _at_struct(state.columns, path[:-1], moved)


def _edit_field(state: TableState, path: ColumnPath, edit: Callable[[NestedField], NestedField],
                check_name: str | None = None) -> StructType:
    def edited(struct: StructType) -> StructType:
        fields = list(struct.fields)
        at = _index(fields, path[-1])
        if check_name is not None and any(f.name == check_name for f in fields):
            raise MemoryApplyError(f"cannot rename {format_name(path)} to {check_name}: the name exists")
        fields[at] = edit(fields[at])
        return struct_type(tuple(fields))

    return _at_struct(state.columns, path[:-1], edited)


def _optional(state: TableState, path: ColumnPath) -> StructType:
    """A struct field, a list's element or a map's value made optional."""
    if path[-1] in ("element", "value"):
        holder = _type_at(state.columns, path[:-1])
        if isinstance(holder, ListType) and path[-1] == "element":
            return _at_type(state.columns, path[:-1], lambda t: list_type(
                holder.element_id, holder.element_type, False))
        if isinstance(holder, MapType) and path[-1] == "value":
            return _at_type(state.columns, path[:-1], lambda t: map_type(
                holder.key_id, holder.key_type, holder.value_id, holder.value_type, False))
    return _edit_field(state, path, lambda f: nested_field(f.field_id, f.name, f.field_type, False, f.doc))


def _renamed(f: NestedField, name: str) -> NestedField:
    return nested_field(f.field_id, name, f.field_type, f.required, f.doc)


def _widened(new: IcebergType) -> Callable[[IcebergType], IcebergType]:
    def widen(old: IcebergType) -> IcebergType:
        if not isinstance(old, PrimitiveType):
            raise MemoryApplyError(f"cannot change {old} to {new}: only a primitive is widened")
        return new

    return widen


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


# --- partition spec, sort order, identifier fields

def _named(f: PartitionFieldState) -> PartitionFieldState:
    return f if f.name is not None else f.model_copy(update={"name": default_partition_name(f)})


def _add_partition(state: TableState, spec: tuple[PartitionFieldState, ...],
                   wanted: PartitionFieldState) -> tuple[PartitionFieldState, ...]:
    if wanted.source not in state.ids_by_path:
        raise MemoryApplyError(f"cannot partition by {format_name(wanted.source)}: no such column")
    if any((f.source, f.transform) == (wanted.source, wanted.transform) for f in spec):
        raise MemoryApplyError(f"cannot add partition field {wanted.transform.expression(wanted.source)}: "
                               "the spec has it")
    new = _named(wanted)
    if state.format_version == 1:  # a void field of that name is renamed out of the way, as Iceberg does
        spec = tuple(f.model_copy(update={"name": f"{f.name}_{1000 + i}"})
                     if f.name == new.name and f.transform.kind == "void" else f for i, f in enumerate(spec))
    if any(f.name == new.name for f in spec):
        raise MemoryApplyError(f"cannot add partition field {new.name}: the name exists")
    return (*spec, new)


def _drop_partition(state: TableState, spec: tuple[PartitionFieldState, ...],
                    wanted: PartitionFieldState) -> tuple[PartitionFieldState, ...]:
    """A v1 spec keeps the field with a void transform (field ids there are positions); v2 removes it."""
    at = spec_index(spec, wanted)
    if at is None:
        raise MemoryApplyError(f"cannot drop partition field {wanted.transform.expression(wanted.source)}: "
                               "the spec does not have it")
    if state.format_version == 1:
        return (*spec[:at], spec[at].model_copy(update={"transform": Transform(kind="void")}), *spec[at + 1:])
    return (*spec[:at], *spec[at + 1:])


def spec_index(spec: tuple[PartitionFieldState, ...], wanted: PartitionFieldState) -> int | None:
    """Where the field a change removes is in ``spec``: by its name and transform (Spark's DROP and REPLACE
    PARTITION FIELD name the field, and a rename of its source column keeps both), else by source and transform."""
    return next((i for i, f in enumerate(spec) if f.transform.kind != "void" and (
        (wanted.name is not None and (f.name, f.transform) == (wanted.name, wanted.transform))
        or (f.source, f.transform) == (wanted.source, wanted.transform))), None)


def _rename_partition(spec: tuple[PartitionFieldState, ...], old_name: str,
                      wanted: PartitionFieldState) -> tuple[PartitionFieldState, ...]:
    if not any(f.name == old_name for f in spec):
        raise MemoryApplyError(f"cannot rename partition field {old_name}: the spec does not have it")
    return tuple(f.model_copy(update={"name": wanted.name}) if f.name == old_name else f for f in spec)


def _spec(table: MemoryTable, spec: tuple[PartitionFieldState, ...]) -> MemoryTable:
    state, history = table.current.state, table.current.history
    ids = state.ids_by_path
    sources = history.partition_source_ids | {ids[f.source] for f in spec}
    return _commit(table, state.model_copy(update={"partition": spec}), spec=True,
                   history=history.model_copy(update={"partition_source_ids": sources}))


def _sort(table: MemoryTable, change: changes.SetSortOrder) -> MemoryTable:
    state = table.current.state
    missing = [f.source for f in change.sort if f.source not in state.ids_by_path]
    if missing:
        raise MemoryApplyError(f"cannot sort by {format_name(missing[0])}: no such column")
    properties = dict(state.properties)
    mode = "none" if not change.sort else _WRITE_MODE[change.distribution_mode]
    if mode is not None:
        properties[DISTRIBUTION] = mode
    held = state.model_copy(update={"sort": change.sort, "properties": dict(sorted(properties.items()))})
    return _commit(table, held, sort=bool(change.sort))


def _identifiers(table: MemoryTable, fields: tuple[ColumnPath, ...]) -> MemoryTable:
    """Iceberg takes only required primitive fields as identifier fields."""
    state = table.current.state
    for path in fields:
        found = state.field_at(path)
        if found is None or not found.required or not isinstance(found.field_type, PrimitiveType):
            raise MemoryApplyError(f"{format_name(path)} cannot be an identifier field: it is "
                                   f"{'missing' if found is None else 'optional or not a primitive'}")
    ids = state.ids_by_path
    held = state.model_copy(update={"identifier_fields": fields,
                                    "identifier_field_ids": tuple(ids[p] for p in fields)})
    return _commit(table, held, schema=True)


# --- properties and refs

def _comment(comment: str | None) -> dict[str, str]:
    return {"comment": comment} if comment is not None else {}


def _properties(table: MemoryTable, values: Mapping[str, str | None], comment: str | None = None) -> MemoryTable:
    state = table.current.state
    properties = {k: v for k, v in {**state.properties, **values}.items() if v is not None}
    update: dict[str, object] = {"properties": dict(sorted(properties.items()))}
    if comment is not None:
        update["comment"] = comment
    return _commit(table, state.model_copy(update=update))


def _ref(table: MemoryTable, change: changes.CreateRef | changes.SetRefRetention | changes.DropRef) -> MemoryTable:
    state, history = table.current.state, table.current.history
    refs = {r.name: r for r in state.refs}
    if isinstance(change, changes.CreateRef) == (change.name in refs):
        raise MemoryApplyError(f"{change.kind} {change.name} "
                               f"{'exists' if change.name in refs else 'does not exist'}")
    updated = None
    match change:
        case changes.CreateRef():
            start = change.snapshot_id
            if start is None:  # a branch of a table without a snapshot: an empty snapshot of its own
                start = max(history.snapshot_ids, default=0) + 1
                updated = history.model_copy(update={"snapshot_ids": history.snapshot_ids | {start}})
            elif start not in history.snapshot_ids:
                raise MemoryApplyError(f"snapshot {start} is not in {format_name(state.name)}")
            refs[change.name] = RefState(name=change.name, kind=change.kind, snapshot_id=start,
                                         retention=change.retention)
        case changes.SetRefRetention():
            refs[change.name] = refs[change.name].model_copy(update={"retention": change.new})
        case changes.DropRef():
            del refs[change.name]
        case _:
            assert_never(change)
    held = state.model_copy(update={"refs": tuple(sorted(refs.values(), key=lambda r: r.name))})
    return _commit(table, held, history=updated)


def _commit(table: MemoryTable, state: TableState, *, schema: bool = False, spec: bool = False,
            sort: bool | None = None, history: TableHistory | None = None) -> MemoryTable:
    """One commit: a new metadata file; a new schema or spec id where it changes one; the sort order id of the new
    order (``sort``: whether it has fields; 0 is the unsorted order)."""
    current, commits = table.current, table.commits + 1
    sort_order_id = current.sort_order_id if sort is None else (
        max(current.sort_order_id, UNSORTED_ORDER_ID) + 1 if sort else UNSORTED_ORDER_ID)
    return replace(table, commits=commits, current=replace(
        current, state=state, metadata_location=_metadata_file(state, commits),
        schema_id=current.schema_id + schema, spec_id=current.spec_id + spec, sort_order_id=sort_order_id,
        history=history or current.history))


def _metadata_file(state: TableState, commits: int) -> str:
    return f"{state.location or 'memory:'}/metadata/{commits:05d}-memory.metadata.json"


def _held(lake: Lake, name: tuple[str, ...]) -> MemoryTable:
    held = lake.tables.get(name)
    if held is None:
        raise MemoryApplyError(f"no table {format_name(name)}")
    return held


# --- views

def _view(lake: Lake, change: changes.CreateView | changes.ReplaceView | changes.UnsetViewProperties
          | changes.DropView) -> Lake:
    """A view's commit: create and replace write a new version (a replace keeps the properties the view had and
    sets the declared ones, as Iceberg's does); an unset changes properties only; a drop removes it."""
    name = change.table
    current = lake.views.get(name)
    if (current is None) != isinstance(change, changes.CreateView):
        raise MemoryApplyError(f"view {format_name(name)} {'exists' if current is not None else 'does not exist'}")
    views = dict(lake.views)
    match change:
        case changes.CreateView():
            if name[:-1] not in lake.namespaces or name in lake.tables:
                raise MemoryApplyError(f"cannot create view {format_name(name)} here")
            views[name] = CurrentView(metadata_location=f"memory:/{'/'.join(name)}/metadata/00001.metadata.json",
                                      uuid=str(uuid.uuid5(uuid.NAMESPACE_URL, "memory-view:" + ".".join(name))),
                                      version_id=1, state=change.state)
        case changes.ReplaceView():
            assert current is not None
            state = change.state.model_copy(update={"properties": {**current.state.properties,
                                                                   **change.state.properties}})
            views[name] = current.model_copy(update={"version_id": current.version_id + 1, "state": state})
        case changes.UnsetViewProperties():
            assert current is not None
            kept = {k: v for k, v in current.state.properties.items() if k not in change.keys}
            views[name] = current.model_copy(update={"state": current.state.model_copy(update={"properties": kept})})
        case changes.DropView():
            del views[name]
        case _:
            assert_never(change)
    return replace(lake, views=views)


# --- convergence

def differences(held: TableState, desired: TableState, history: TableHistory | None = None) -> list[str]:
    """What still differs between a table and the policy, compared as the differ compares them, in words (none:
    the table is as declared).

    Columns are compared by name, in order, with their types, nullability and the docs git declares; field ids
    only where git pins one (``id:``), since the differ matches a column by pin, then ``renamed_from``, then name:
    an id an apply assigns is Iceberg's (``last_column_id + 1``) and never the fresh id the policy's own
    numbering gives, so comparing ids would fail every add after a drop. Partition fields are compared as a set
    (names where declared), the sort order in order, identifier fields as a set, properties on the keys the
    policy owns, the comment where declared, and refs by kind and retention (a tag declared without a snapshot id
    waits for the table's first snapshot, TP452: ``history`` tells whether there is one). A column's partition or
    sort source is matched by its path, which the held state derives from the field id.
    """
    found = _columns(held.columns, desired.columns, ())
    ids = held.ids_by_path
    found += [f"{format_name(p)} has field id {ids.get(p)}, pinned {pin}"
              for p, pin in sorted(desired.pinned_ids.items()) if ids.get(p) != pin]
    have = {(f.source, f.transform): f.name for f in held.partition if f.transform.kind != "void"}
    want = {(f.source, f.transform): f.name for f in desired.partition}
    if set(have) != set(want) or any(name is not None and have[key] != name for key, name in want.items()):
        found.append(f"partition {sorted(map(str, have.items()))} != {sorted(map(str, want.items()))}")
    if held.sort != desired.sort:
        found.append(f"sort order {held.sort} != {desired.sort}")
    if set(held.identifier_fields) != set(desired.identifier_fields):
        found.append(f"identifier fields {held.identifier_fields} != {desired.identifier_fields}")
    found += [f"property {k}: {held.properties.get(k)!r} != {desired.properties.get(k)!r}"
              for k in sorted(owned_keys(held, desired)) if held.properties.get(k) != desired.properties.get(k)]
    if desired.comment is not None and held.comment != desired.comment:
        found.append(f"comment {held.comment!r} != {desired.comment!r}")
    if held.format_version != desired.format_version:
        found.append(f"format version {held.format_version} != {desired.format_version}")
    refs = {r.name: (r.kind, r.retention) for r in held.refs}
    waiting = history is not None and history.current_snapshot_id is None
    found += [f"ref {r.name}: {refs.get(r.name)} != {(r.kind, r.retention)}" for r in desired.refs
              if refs.get(r.name) != (r.kind, r.retention)
              and not (waiting and r.kind == "tag" and r.snapshot_id is None and r.name not in refs)]
    return found


def _columns(have: IcebergType, want: IcebergType, path: ColumnPath) -> list[str]:
    where = format_name(path) if path else "the schema"
    if isinstance(have, StructType) and isinstance(want, StructType):
        names = [f.name for f in have.fields], [f.name for f in want.fields]
        if names[0] != names[1]:
            return [f"{where}: fields {names[0]} != {names[1]}"]
        found = []
        for h, w in zip(have.fields, want.fields, strict=True):
            at = (*path, w.name)
            if h.required != w.required:
                found.append(f"{format_name(at)}: required {h.required} != {w.required}")
            if w.doc is not None and h.doc != w.doc:
                found.append(f"{format_name(at)}: doc {h.doc!r} != {w.doc!r}")
            found += _columns(h.field_type, w.field_type, at)
        return found
    if isinstance(have, ListType) and isinstance(want, ListType):
        found = [f"{where}: element required {have.element_required}"] \
            if have.element_required != want.element_required else []
        return found + _columns(have.element_type, want.element_type, (*path, "element"))
    if isinstance(have, MapType) and isinstance(want, MapType):
        found = [f"{where}: value required {have.value_required}"] if have.value_required != want.value_required else []
        return (found + _columns(have.key_type, want.key_type, (*path, "key"))
                + _columns(have.value_type, want.value_type, (*path, "value")))
    if isinstance(have, PrimitiveType) and isinstance(want, PrimitiveType) and have == want:
        return []
    return [f"{where}: {have} != {want}"]
