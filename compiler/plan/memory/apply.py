"""Apply a plan's changes to catalog state in memory, as Iceberg applies each commit to table metadata (pyiceberg's
``update_table_metadata`` of a ``TableUpdate``): no engine, no catalog. Tests use it to prove, for every row of the
differ's case table, that the planned changes turn the current state into the desired one and that planning again
finds nothing (memory_differences.py compares them); it refuses what Iceberg refuses (dropping a partition, sort or
identifier source, a name twice, a table in a namespace that does not exist), so the order of a plan's changes is
checked as well.

This module holds the lake, the dispatch of each change kind and the commits; a schema's edits are in
memory_schema.py (field ids assigned as Iceberg's ``SchemaUpdate`` assigns them), a partition spec's in
memory_spec.py. ``last_column_id`` only grows, so a dropped id is never given again (a re-added name has a new id).
Partition, sort and identifier sources are held by field id, as metadata holds them: a rename moves them with the
column.

Each change is one commit: a new metadata file, and a new schema, spec or sort order id where it changes one. The
stamps apply adds (plan id, declared keys and refs, consumed approvals) are commits of their own
(``SetProperties`` changes made by runtime/apply.py); a change list without them is applied as it is.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import assert_never

from pyiceberg.types import PrimitiveType, StructType

from ...catalog.current import UNSORTED_ORDER_ID, CurrentTable
from ...diff import changes
from ...diff.changes import Change, RetentionEstimate
from ...iceberg.names import format_name
from ...model.table import ColumnPath, PartitionFieldState, RefState, TableHistory, TableState, field_paths
from ...model.view import CurrentView
from .error import MemoryApplyError
from .partition_spec import add_partition, drop_partition, named_partition, rename_partition
from .schema import (
    add_columns,
    drop_column,
    make_optional,
    move_column,
    rename_column,
    set_doc,
    widen_column,
)

# What Spark's WRITE clause sets write.distribution-mode to (Iceberg's SQL extensions): ORDERED BY -> range,
# DISTRIBUTED BY PARTITION -> hash, UNORDERED -> none; LOCALLY ORDERED BY leaves the property as it was.
DISTRIBUTION = "write.distribution-mode"
_WRITE_MODE: dict[str | None, str | None] = {None: "range", "range": "range", "hash": "hash", "none": None}


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
        partition=tuple(named_partition(f) for f in state.partition), sort=state.sort,
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
            return _schema(table, *add_columns(state.columns, table.last_column_id, [changes.ColumnAdd(
                path=change.path, type=change.type, doc=change.doc, position=change.position, after=change.after)]))
        case changes.AddColumns():  # one schema commit, ids assigned in the batch's order
            return _schema(table, *add_columns(state.columns, table.last_column_id, list(change.columns)))
        case changes.DropColumn():
            return _schema(table, drop_column(state.columns, change.path))
        case changes.RenameColumn():
            return _schema(table, rename_column(state.columns, change.path, change.new_name))
        case changes.WidenType():  # a struct field, a list's element or a map's value
            return _schema(table, widen_column(state.columns, change.path, change.new))
        case changes.MakeOptional():
            return _schema(table, make_optional(state.columns, change.path))
        case changes.UpdateDoc():
            return _schema(table, set_doc(state.columns, change.path, change.doc))
        case changes.MoveColumn():
            return _schema(table, move_column(state.columns, change.path, change.position, change.after))
        case changes.AddPartitionField():
            return _spec(table, add_partition(state, state.partition, change.field))
        case changes.DropPartitionField():
            return _spec(table, drop_partition(state, state.partition, change.field))
        case changes.RenamePartitionField():
            return _spec(table, rename_partition(state.partition, change.old_name, change.field))
        case changes.ReplacePartitionField():
            kept = drop_partition(state, state.partition, change.old)
            return _spec(table, add_partition(state, kept, change.field))
        case changes.UpdatePartitionSpec():  # one commit: removes, renames, then adds, as UpdatePartitionSpec
            spec = state.partition
            for removed in change.remove:
                spec = drop_partition(state, spec, removed)
            for rename in change.rename:
                spec = rename_partition(spec, rename.old_name, rename.field)
            for added in change.add:
                spec = add_partition(state, spec, added)
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


# --- schema commits

def _schema(table: MemoryTable, columns: StructType, last_column_id: int | None = None) -> MemoryTable:
    """A new schema (``last_column_id``: the table's new one, where columns were added): partition, sort and
    identifier sources follow their field ids (a rename moves them), and Iceberg refuses a schema that drops one
    (the differ replaces an order and drops identifiers first)."""
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
    if last_column_id is not None:
        table = replace(table, last_column_id=last_column_id)
    return _commit(table, held, schema=True, history=history)


def _fresh_state(state: TableState, update: dict[str, object]) -> TableState:
    """``state`` with a new schema: model_copy would carry the cached ``ids_by_path`` and ``schema_`` of the old one
    over (a cached_property lives in the instance's __dict__, which model_copy copies)."""
    held = state.model_copy(update=update)
    for cached in ("ids_by_path", "schema_"):
        held.__dict__.pop(cached, None)
    return held


# --- partition spec, sort order, identifier fields

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
