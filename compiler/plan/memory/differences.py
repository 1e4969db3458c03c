"""Whether a table holds what its policy declares, compared as the differ compares them: the check that a plan
applied in memory (compiler/plan/memory/apply.py) converged, for every row of the differ's case table.

Where ids decide what the differ sees: it matches a column by pinned id (``id:``), then ``renamed_from``, then name,
and a partition, sort or identifier field by the id its source path has now; a policy's own ids are a fresh
create's (1..n), which an evolved table's are not. So an applied table equals the policy on names, not ids, except
where git pins an id, and a name dropped and added again is a new field (a new id).
"""

from __future__ import annotations

from pyiceberg.types import IcebergType, ListType, MapType, PrimitiveType, StructType

from ...diff.properties import owned_keys
from ...iceberg.names import format_name
from ...model import bloom
from ...model.table import ColumnPath, TableHistory, TableState


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
              for k in sorted(owned_keys(held, desired)) if held.properties.get(k) != desired.properties.get(k)
              and not bloom.same_filter(k, held.properties.get(k), desired.properties.get(k))]
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
