"""current TableState vs desired TableState -> changes, matched by field id, in a stable order.

Fields are matched by pinned id, then by declared ``renamed_from``, then by exact name; a column that
disappears while another appears is a drop and an add, never a guessed rename. Illegal changes come
back as refusals, so nothing is half-planned.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pyiceberg.types import IcebergType, ListType, MapType, NestedField, PrimitiveType, StructType

from .. import codes
from ..iceberg.names import format_name
from ..iceberg.promotion import can_promote, promotion_advice
from ..model.table import ColumnPath, TableHistory, TableState
from . import changes
from .changes import Change, ColumnAdd, PartitionRename
from .properties import diff_properties
from .refs import diff_refs
from .refusals import Refusal


@dataclass(frozen=True)
class DiffResult:
    changes: list[Change]
    refusals: list[Refusal]


@dataclass
class _Diff:
    current: TableState
    desired: TableState
    history: TableHistory
    drops: list[Change] = field(default_factory=list)
    renames: list[Change] = field(default_factory=list)
    updates: list[Change] = field(default_factory=list)
    adds: list[Change] = field(default_factory=list)  # adds and moves, in declared order
    refusals: list[Refusal] = field(default_factory=list)
    # desired column path -> the current field id it maps to (partition, sort and identifier matching)
    ids: dict[ColumnPath, int] = field(default_factory=dict)
    current_ids: dict[ColumnPath, int] = field(default_factory=dict)

    @property
    def table(self) -> tuple[str, ...]:
        return self.desired.name

    def refuse(self, path: ColumnPath, code: str, message: str, hint: str) -> None:
        self.refusals.append(Refusal(self.table, path, code, message, hint))


def diff_table(current: TableState, desired: TableState, history: TableHistory | None = None) -> DiffResult:
    d = _Diff(current, desired, history or TableHistory())
    d.current_ids = current.ids_by_path
    _struct(d, current.columns, desired.columns, (), ())
    if desired.format_version < current.format_version:
        d.refuse((), codes.TR105, f"format version {current.format_version} cannot be downgraded to "
                 f"{desired.format_version}", f"set format_version: {current.format_version}")
    layout_early, layout_late = _identifier_fields(d)
    sort_early, sort_late = _sort(d)
    found: list[Change] = [
        *layout_early, *sort_early, *d.drops, *d.renames, *d.updates, *_batch_adds(d.adds),
        *_partitions(d), *sort_late, *layout_late,
    ]
    if desired.format_version > current.format_version:
        found.append(changes.UpgradeFormat(table=d.table, old=current.format_version, new=desired.format_version))
    found += diff_properties(current, desired)
    ref_changes, ref_refusals = diff_refs(current, d.history, desired)
    return DiffResult(found + ref_changes, d.refusals + ref_refusals)


def _struct(d: _Diff, cur: StructType, des: StructType, cur_path: ColumnPath, des_path: ColumnPath) -> None:
    by_name = {f.name: f for f in cur.fields}
    by_id = {f.field_id: f for f in cur.fields}
    matched: dict[int, NestedField] = {}
    new: set[str] = set()
    for want in des.fields:
        path = (*des_path, want.name)
        have = _match(d, want, path, by_name, by_id, matched)
        if have is None:
            if want.name not in new:
                new.add(want.name)
                _add(d, want, path, by_name, matched)
            continue
        matched[have.field_id] = want
        d.ids[path] = have.field_id
        if have.name != want.name:
            d.renames.append(changes.RenameColumn(table=d.table, path=(*des_path, have.name), new_name=want.name,
                                          field_id=have.field_id))
        _field(d, have, want, (*cur_path, have.name), path)
    for have in cur.fields:
        if have.field_id not in matched:
            _drop(d, have, (*cur_path, have.name))
    _order(d, cur, des, des_path, matched, new)


def _match(
    d: _Diff, want: NestedField, path: ColumnPath, by_name: dict[str, NestedField],
    by_id: dict[int, NestedField], matched: dict[int, NestedField],
) -> NestedField | None:
    pinned = d.desired.pinned_ids.get(path)
    former = d.desired.renamed_from.get(path)
    if pinned is not None:
        have = by_id.get(pinned)
        if have is None:
            d.refuse(path, codes.TR108, f"pinned field id {pinned} of {format_name(path)} is not in the table here",
                     "remove the pin or correct it (tablepolicy import shows the ids)")
            return None
    elif former is not None and former in _claimed(matched, by_name) and want.name not in by_name:
        have = by_name[former]  # a rename from a field another column holds (a stale renamed_from is let be)
    else:
        have = by_name.get(former) if former is not None and former not in _claimed(matched, by_name) else None
        have = have or by_name.get(want.name)
    if have is not None and have.field_id in matched:
        d.refuse(path, codes.TR110, f"{format_name(path)} and another column both claim field '{have.name}'",
                 "each existing field can be renamed to one column only")
        return None
    return have


def _claimed(matched: dict[int, NestedField], by_name: dict[str, NestedField]) -> set[str]:
    return {name for name, f in by_name.items() if f.field_id in matched}


def _add(d: _Diff, want: NestedField, path: ColumnPath, by_name: dict[str, NestedField],
         matched: dict[int, NestedField]) -> None:
    clash = next((n for n, f in by_name.items()
                  if n.lower() == want.name.lower() and n != want.name and f.field_id not in matched), None)
    if clash is not None:
        d.refuse(path, codes.TR109, f"{format_name(path)} differs only by case from the existing column '{clash}'",
                 f"to rename it, declare renamed_from: {clash}")
        return
    if want.required:
        d.refuse(path, codes.TR103, f"cannot add required column {format_name(path)} to an existing table",
                 "add it as optional (rows already written have no value for it)")
        return
    readded = path in d.history.dropped_paths
    d.adds.append(changes.AddColumn(table=d.table, path=path, type=want.field_type, doc=want.doc, readded=readded,
                            code=codes.TC207 if readded else codes.TC201))


def _drop(d: _Diff, have: NestedField, path: ColumnPath) -> None:
    ids = {have.field_id, *_nested_ids(have.field_type)}
    if ids & d.history.partition_source_ids:
        d.refuse(path, codes.TR104, f"column {format_name(path)} is a partition source (now or in an older spec) "
                 "and cannot be dropped", "keep the column; drop the partition field first if it is current")
        return
    d.drops.append(changes.DropColumn(table=d.table, path=path, field_id=have.field_id))


def _nested_ids(t: IcebergType) -> list[int]:
    if isinstance(t, StructType):
        return [i for f in t.fields for i in (f.field_id, *_nested_ids(f.field_type))]
    if isinstance(t, ListType):
        return [t.element_id, *_nested_ids(t.element_type)]
    if isinstance(t, MapType):
        return [t.key_id, t.value_id, *_nested_ids(t.key_type), *_nested_ids(t.value_type)]
    return []


def _field(d: _Diff, have: NestedField, want: NestedField, cur_path: ColumnPath, path: ColumnPath) -> None:
    _type(d, have.field_type, want.field_type, cur_path, path)
    if have.required and not want.required:
        d.updates.append(changes.MakeOptional(table=d.table, path=path))
    elif want.required and not have.required:
        d.refuse(path, codes.TR102, f"{format_name(path)} cannot become required",
                 "rows may already hold nulls: keep it optional, or add a new required column in a new table")
    if want.doc is not None and want.doc != have.doc:
        d.updates.append(changes.UpdateDoc(table=d.table, path=path, doc=want.doc))


def _type(d: _Diff, have: IcebergType, want: IcebergType, cur_path: ColumnPath, path: ColumnPath) -> None:
    if isinstance(have, PrimitiveType) and isinstance(want, PrimitiveType):
        if have == want:
            return
        if can_promote(have, want, format_version=d.desired.format_version):
            d.updates.append(changes.WidenType(table=d.table, path=path, old=have, new=want))
        else:
            d.refuse(path, codes.TR101, f"{format_name(path)} cannot change from {have} to {want}",
                     promotion_advice(have, want))
    elif isinstance(have, StructType) and isinstance(want, StructType):
        _struct(d, have, want, cur_path, path)
    elif isinstance(have, ListType) and isinstance(want, ListType):
        d.ids[(*path, "element")] = have.element_id
        _type(d, have.element_type, want.element_type, (*cur_path, "element"), (*path, "element"))
        if have.element_required and not want.element_required:
            d.updates.append(changes.MakeOptional(table=d.table, path=(*path, "element")))
    elif isinstance(have, MapType) and isinstance(want, MapType):
        if have.key_type != want.key_type:
            d.refuse(path, codes.TR107, f"the key type of map {format_name(path)} cannot change "
                     f"({have.key_type} -> {want.key_type})", "add a new map column and backfill it")
        d.ids[(*path, "value")] = have.value_id
        _type(d, have.value_type, want.value_type, (*cur_path, "value"), (*path, "value"))
        if have.value_required and not want.value_required:
            d.updates.append(changes.MakeOptional(table=d.table, path=(*path, "value")))
    else:
        d.refuse(path, codes.TR106, f"{format_name(path)} cannot change from {have} to {want}",
                 "a column cannot change between primitive, struct, list and map: add a new column")


def _order(d: _Diff, cur: StructType, des: StructType, path: ColumnPath,
           matched: dict[int, NestedField], new: set[str]) -> None:
    """Place added columns where the policy declares them and move the fewest existing ones.

    Columns on a longest increasing run of current positions stay; the others, and the new ones, are
    placed in declared order right after their predecessor, which keeps every prefix in order.
    """
    target = [f.name for f in des.fields]
    now = {matched[f.field_id].name: i for i, f in enumerate(cur.fields) if f.field_id in matched}
    existing = [n for n in target if n in now]
    keep = set(_longest_increasing(existing, now))
    pending = {a.path[-1]: a for a in d.adds if isinstance(a, changes.AddColumn) and a.path[:-1] == path}
    placed: list[Change] = []
    last_kept = max((target.index(n) for n in keep), default=-1)
    for i, name in enumerate(target):
        position = "first" if i == 0 else "after"
        after = target[i - 1] if i else None
        if name in new and name in pending:
            add = pending[name]
            placed.append(add if i > last_kept and all(n in new for n in target[i:])
                          else add.model_copy(update={"position": position, "after": after}))
        elif name in now and name not in keep:
            placed.append(changes.MoveColumn(table=d.table, path=(*path, name), position=position, after=after))
    d.adds = [a for a in d.adds if not (isinstance(a, changes.AddColumn) and a.path[:-1] == path)] + placed


def _longest_increasing(names: list[str], position: dict[str, int]) -> list[str]:
    """The longest subsequence of ``names`` whose current positions increase (patience sorting)."""
    tails: list[int] = []
    links: list[int] = [-1] * len(names)
    ends: list[int] = []
    for i, name in enumerate(names):
        value = position[name]
        lo, hi = 0, len(tails)
        while lo < hi:
            mid = (lo + hi) // 2
            if tails[mid] < value:
                lo = mid + 1
            else:
                hi = mid
        if lo == len(tails):
            tails.append(value)
            ends.append(i)
        else:
            tails[lo] = value
            ends[lo] = i
        links[i] = ends[lo - 1] if lo else -1
    out: list[str] = []
    at = ends[-1] if ends else -1
    while at >= 0:
        out.append(names[at])
        at = links[at]
    return out[::-1]


def _batch_adds(planned: list[Change]) -> list[Change]:
    """Runs of consecutive safe column adds become one ``ADD COLUMNS`` (one schema commit).

    A re-added name (TC207, breaking) stays on its own, and a move between adds ends a run, so the
    order of adds and moves is kept.
    """
    out: list[Change] = []
    run: list[changes.AddColumn] = []

    def flush() -> None:
        if len(run) > 1:
            out.append(changes.AddColumns(table=run[0].table, columns=tuple(
                ColumnAdd(path=a.path, type=a.type, doc=a.doc, position=a.position, after=a.after) for a in run)))
        else:
            out.extend(run)
        run.clear()

    for change in planned:
        if isinstance(change, changes.AddColumn) and not change.readded:
            run.append(change)
            continue
        flush()
        out.append(change)
    flush()
    return out


def _partitions(d: _Diff) -> list[Change]:
    """One statement when one suffices; a replace as one REPLACE PARTITION FIELD; anything more as one
    changes.UpdatePartitionSpec commit, so no apply passes through a spec that is neither old nor new."""
    current = [f for f in d.current.partition if f.transform.kind != "void"]
    have = {(_current_id(d, f.source), f.transform): f for f in current}
    want = {(d.ids.get(f.source), f.transform): f for f in d.desired.partition}
    drops: list[Change] = [changes.DropPartitionField(table=d.table, field=f)
                           for key, f in have.items() if key not in want]
    adds: list[Change] = [changes.AddPartitionField(table=d.table, field=f)
                          for key, f in want.items() if key[0] is None or key not in have]
    renames: list[Change] = [  # a name is compared only where the policy declares one
        changes.RenamePartitionField(table=d.table, field=f, old_name=have[key].name or "")
        for key, f in want.items() if key in have and f.name is not None and f.name != have[key].name
    ]
    if len(drops) + len(renames) + len(adds) <= 1:
        return drops + renames + adds
    removed = [c.field for c in drops if isinstance(c, changes.DropPartitionField)]
    added = [c.field for c in adds if isinstance(c, changes.AddPartitionField)]
    if len(removed) == 1 and len(added) == 1 and not renames:
        return [changes.ReplacePartitionField(table=d.table, old=removed[0], field=added[0])]
    renamed = tuple(PartitionRename(old_name=c.old_name, field=c.field)
                    for c in renames if isinstance(c, changes.RenamePartitionField))
    if removed or renamed:
        return [changes.UpdatePartitionSpec(table=d.table, remove=tuple(removed), rename=renamed, add=tuple(added),
                                    code=codes.TC409)]
    return [changes.UpdatePartitionSpec(table=d.table, add=tuple(added))]


def _current_id(d: _Diff, path: ColumnPath) -> int | None:
    return d.current_ids.get(path)


def _sort(d: _Diff) -> tuple[list[Change], list[Change]]:
    """(order changes to run before column drops, after adds).

    Iceberg refuses to drop a column the current sort order uses, so such an order is replaced first:
    by the declared one when its columns all exist already, else by no order until the adds have run.
    """
    have = [(_current_id(d, f.source), f.transform, f.direction, f.nulls) for f in d.current.sort]
    want = [(d.ids.get(f.source), f.transform, f.direction, f.nulls) for f in d.desired.sort]
    if have == want and None not in [w[0] for w in want]:
        return [], []
    mode = d.desired.properties.get("write.distribution-mode")
    change = changes.SetSortOrder(table=d.table, sort=d.desired.sort, distribution_mode=mode)
    dropped = [c.path for c in d.drops if isinstance(c, changes.DropColumn)]
    if not any(f.source[:len(p)] == p for f in d.current.sort for p in dropped):
        return [], [change]
    if all(d.ids.get(f.source) is not None and d.current_ids.get(f.source) == d.ids.get(f.source)
           for f in d.desired.sort):  # every column it names is there now, under that name
        return [change], []
    return [changes.SetSortOrder(table=d.table, sort=(), distribution_mode=mode)], [change]


def _identifier_fields(d: _Diff) -> tuple[list[Change], list[Change]]:
    """(changes to run before column drops, changes to run after adds)."""
    have = [_current_id(d, p) for p in d.current.identifier_fields]
    want = [d.ids.get(p) for p in d.desired.identifier_fields]
    if sorted(map(str, have)) == sorted(map(str, want)) and None not in want:
        return [], []
    dropped = {c.field_id for c in d.drops if isinstance(c, changes.DropColumn)}
    early: list[Change] = []
    if d.current.identifier_fields and (not want or dropped & set(filter(None, have))):
        early.append(changes.DropIdentifierFields(table=d.table, fields=d.current.identifier_fields))
    late: list[Change] = []
    if d.desired.identifier_fields:
        late.append(changes.SetIdentifierFields(table=d.table, fields=d.desired.identifier_fields))
    return early, late
