"""TableState: one engine-agnostic picture of an Iceberg table, built from a policy or from a catalog.

The planner compares two TableStates; the renderers and the executor only read them.
"""

from __future__ import annotations

import json
from functools import cached_property
from itertools import count
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, PlainSerializer
from pyiceberg.schema import Schema
from pyiceberg.types import IcebergType, ListType, MapType, NestedField, PrimitiveType, StructType

from ..effective import Effective
from ..iceberg.names import parse_name
from ..iceberg.nested import list_type, map_type, nested_field, struct_type
from ..iceberg.transforms import Transform, parse_expression
from ..iceberg.types import parse_primitive
from ..policy.columns import Column, ListOf, MapOf, StructOf
from ..policy.refs import BranchRef, TagRef, ref_name
from ..policy.table import SortField, TablePolicy, split_sort
from .properties import desired_properties

ColumnPath = tuple[str, ...]


def _pairs_to_dict(value: Any) -> Any:
    """The plan file's form of a by-path dict ``[[path, value], ...]`` back to ``{path: value}``."""
    return {tuple(path): item for path, item in value} if isinstance(value, list) else value


def _dict_to_pairs(value: dict[ColumnPath, Any]) -> list[list[Any]]:
    return [[list(path), item] for path, item in sorted(value.items())]


# By-path dicts as JSON: a list of [path, value] pairs sorted by path (a JSON object key cannot hold a
# tuple, and joining the names would not round-trip a name holding the separator).
RenamesByPath = Annotated[dict[ColumnPath, str], BeforeValidator(_pairs_to_dict),
                          PlainSerializer(_dict_to_pairs, when_used="json")]
PinsByPath = Annotated[dict[ColumnPath, int], BeforeValidator(_pairs_to_dict),
                       PlainSerializer(_dict_to_pairs, when_used="json")]
# Sets as JSON: sorted, so the plan file does not follow string hashing (PYTHONHASHSEED).
SortedKeys = Annotated[frozenset[str], PlainSerializer(sorted, when_used="json")]


class State(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True,
                              ignored_types=(cached_property,))


class PartitionFieldState(State):
    source: ColumnPath
    transform: Transform
    name: str | None = None  # None: whatever name Iceberg gives; compared only when declared


class SortFieldState(State):
    source: ColumnPath
    transform: Transform
    direction: Literal["asc", "desc"]
    nulls: Literal["first", "last"]


class RefRetention(State):
    """A ref's own retention, as Iceberg's SnapshotRef holds it: None means the table's setting applies."""

    max_ref_age_ms: int | None = None
    min_snapshots_to_keep: int | None = None  # branches only
    max_snapshot_age_ms: int | None = None  # branches only


class RefState(State):
    """A branch or tag other than main. ``snapshot_id``: where it points (in the catalog), or where a new one
    starts (declared; None: the current snapshot)."""

    name: str
    kind: Literal["branch", "tag"]
    snapshot_id: int | None = None
    retention: RefRetention = RefRetention()


class TableState(State):
    name: tuple[str, ...]
    columns: StructType = Field(description="The schema's fields, with their Iceberg field ids.")
    identifier_field_ids: tuple[int, ...] = ()
    partition: tuple[PartitionFieldState, ...] = ()
    sort: tuple[SortFieldState, ...] = ()
    identifier_fields: tuple[ColumnPath, ...] = ()
    properties: dict[str, str] = {}
    comment: str | None = None
    location: str | None = None
    format_version: int = 2
    # Desired side only: declared renames (path -> former name) and pinned field ids, by column path.
    renamed_from: RenamesByPath = {}
    pinned_ids: PinsByPath = {}
    ignore_properties: SortedKeys = frozenset()
    declared_properties: SortedKeys = frozenset()  # keys written by hand under properties (table + defaults)
    refs: tuple[RefState, ...] = Field((), description="Branches and tags other than main, by name.",
                                       exclude_if=lambda refs: not refs)  # plan files without refs stay as they were

    @property
    def namespace(self) -> tuple[str, ...]:
        return self.name[:-1]

    @cached_property
    def schema_(self) -> Schema:
        """pyiceberg's Schema, built only when asked (its name index costs more than the diff)."""
        return Schema(*self.columns.fields, schema_id=0, identifier_field_ids=list(self.identifier_field_ids))

    @cached_property
    def ids_by_path(self) -> dict[ColumnPath, int]:
        """Every field's id by its column path (see field_paths)."""
        return {path: field_id for field_id, path in field_paths(self.columns).items()}

    def field_at(self, path: ColumnPath) -> NestedField | None:
        """The field at a column path, or None when the table has no such column."""
        field_id = self.ids_by_path.get(path)
        return self.schema_.find_field(field_id) if field_id is not None else None


def build_struct(columns: list[Column]) -> StructType:
    """Spec columns -> Iceberg struct with the field ids a fresh CREATE TABLE assigns.

    Iceberg numbers every field of a struct first, then descends into each field in order
    (TypeUtil.assignFreshIds), so ``a, b struct<c>, d`` gets a=1, b=2, d=3, c=4.
    """
    return _struct(columns, count(1))


def _struct(columns: list[Column], ids: count[int]) -> StructType:
    numbered = [(next(ids), column) for column in columns]
    return struct_type(tuple(nested_field(fid, c.name, _type(c.type, ids), c.required, c.doc) for fid, c in numbered))


def _type(spec: str | StructOf | ListOf | MapOf, ids: count[int]) -> IcebergType:
    match spec:
        case str():
            return parse_primitive(spec)
        case StructOf():
            return _struct(spec.struct, ids)
        case ListOf():
            element_id = next(ids)
            return list_type(element_id, _type(spec.element, ids), spec.element_required)
        case MapOf():
            key_id, value_id = next(ids), next(ids)
            key = _type(spec.entries.key, ids)
            value = _type(spec.entries.value, ids)
            return map_type(key_id, key, value_id, value, spec.entries.value_required)


def column_declarations(
    columns: list[Column], prefix: ColumnPath = ()
) -> tuple[dict[ColumnPath, str], dict[ColumnPath, int]]:
    """Declared renames and pinned ids by column path (``element``/``key``/``value`` inside lists and maps)."""
    renames: dict[ColumnPath, str] = {}
    pins: dict[ColumnPath, int] = {}
    for column in columns:
        path = (*prefix, column.name)
        if column.renamed_from is not None:
            renames[path] = column.renamed_from
        if column.id is not None:
            pins[path] = column.id
        _declarations_in(column.type, path, renames, pins)
    return renames, pins


def _declarations_in(
    spec: str | StructOf | ListOf | MapOf, path: ColumnPath, renames: dict[ColumnPath, str], pins: dict[ColumnPath, int]
) -> None:
    match spec:
        case StructOf():
            inner_renames, inner_pins = column_declarations(spec.struct, path)
            renames.update(inner_renames)
            pins.update(inner_pins)
        case ListOf():
            if spec.element_id is not None:
                pins[(*path, "element")] = spec.element_id
            _declarations_in(spec.element, (*path, "element"), renames, pins)
        case MapOf():
            for key, pinned in (("key", spec.entries.key_id), ("value", spec.entries.value_id)):
                if pinned is not None:
                    pins[(*path, key)] = pinned
            _declarations_in(spec.entries.value, (*path, "value"), renames, pins)
        case str():
            pass


def partition_fields(policy: TablePolicy) -> tuple[PartitionFieldState, ...]:
    out = []
    for item in policy.partition_by:
        expression, name = (item, None) if isinstance(item, str) else (item.field, item.name)
        transform, source = parse_expression(expression)
        out.append(PartitionFieldState(source=source, transform=transform, name=name))
    return tuple(out)


def sort_fields(policy: TablePolicy) -> tuple[SortFieldState, ...]:
    out = []
    for item in policy.sort_by:
        if isinstance(item, SortField):
            expression, direction, nulls = item.field, item.direction, item.nulls
        else:
            expression, direction, nulls = split_sort(item)
        transform, source = parse_expression(expression)
        out.append(
            SortFieldState(
                source=source,
                transform=transform,
                direction=direction,
                nulls=nulls or ("first" if direction == "asc" else "last"),
            )
        )
    return tuple(out)


def desired_state(policy: TablePolicy, effective: Effective) -> TableState:
    """The table git declares, as the catalog should hold it after apply."""
    struct = build_struct(policy.columns)
    identifier_paths = tuple(parse_name(f) for f in policy.identifier_fields)
    renames, pins = column_declarations(policy.columns)
    ids = {path: field_id for field_id, path in field_paths(struct).items()}
    identifier_ids = [ids.get(path) for path in identifier_paths]
    return TableState(
        name=parse_name(policy.table),
        columns=struct,
        identifier_field_ids=tuple(fid for fid in identifier_ids if fid is not None),
        partition=partition_fields(policy),
        sort=sort_fields(policy),
        identifier_fields=identifier_paths,
        properties=desired_properties(policy, effective),
        comment=policy.description,
        location=policy.location,
        format_version=policy.format_version,
        renamed_from=renames,
        pinned_ids=pins,
        ignore_properties=frozenset(policy.ignore_properties),
        declared_properties=frozenset(effective.properties),
        refs=declared_refs(policy.refs),
    )


def declared_refs(refs: list[TagRef | BranchRef]) -> tuple[RefState, ...]:
    """The refs a policy declares, by name, with their own retention in milliseconds."""
    out = []
    for ref in refs:
        age = ref.max_ref_age.millis if ref.max_ref_age is not None else None
        if isinstance(ref, BranchRef):
            keep = RefRetention(max_ref_age_ms=age, min_snapshots_to_keep=ref.min_snapshots_to_keep,
                                max_snapshot_age_ms=ref.max_snapshot_age.millis if ref.max_snapshot_age else None)
        else:
            keep = RefRetention(max_ref_age_ms=age)
        out.append(RefState(name=ref_name(ref), kind="tag" if isinstance(ref, TagRef) else "branch",
                            snapshot_id=ref.snapshot_id, retention=keep))
    return tuple(sorted({r.name: r for r in reversed(out)}.values(), key=lambda r: r.name))


class TableHistory(State):
    """What older metadata of a table says: partition sources ever used, field paths dropped."""

    partition_source_ids: frozenset[int] = frozenset()
    dropped_paths: frozenset[ColumnPath] = frozenset()
    snapshot_ids: frozenset[int] = frozenset()  # every snapshot the metadata keeps (where a new ref may start)
    current_snapshot_id: int | None = None


def field_paths(t: IcebergType, prefix: ColumnPath = ()) -> dict[int, ColumnPath]:
    """Every field id (list elements and map keys/values as ``element``/``key``/``value``) -> its path."""
    out: dict[int, ColumnPath] = {}
    _collect_paths(t, prefix, out)
    return out


def _collect_paths(t: IcebergType, prefix: ColumnPath, out: dict[int, ColumnPath]) -> None:
    if isinstance(t, StructType):
        for f in t.fields:
            path = (*prefix, f.name)
            out[f.field_id] = path
            if not isinstance(f.field_type, PrimitiveType):
                _collect_paths(f.field_type, path, out)
    elif isinstance(t, ListType):
        out[t.element_id] = path = (*prefix, "element")
        _collect_paths(t.element_type, path, out)
    elif isinstance(t, MapType):
        out[t.key_id] = (*prefix, "key")
        out[t.value_id] = (*prefix, "value")
        _collect_paths(t.key_type, (*prefix, "key"), out)
        _collect_paths(t.value_type, (*prefix, "value"), out)


# Iceberg's default partition field names (PartitionSpec.Builder), by transform
_DEFAULT_SUFFIX = {"year": "_year", "month": "_month", "day": "_day", "hour": "_hour", "void": "_null"}


def default_partition_name(field: PartitionFieldState) -> str:
    """The name Iceberg gives a partition field created without one: ``ts_day``, ``id_bucket_16``."""
    source = ".".join(field.source)
    kind, param = field.transform.kind, field.transform.param
    if kind == "identity":
        return source
    if kind == "bucket":
        return f"{source}_bucket_{param}"
    if kind == "truncate":
        return f"{source}_trunc_{param}"
    return source + _DEFAULT_SUFFIX[kind]


def iceberg_json(state: TableState) -> tuple[str, str, str]:
    """(schema, partition spec, sort order) of a table to create, in Iceberg's own JSON forms, as Java's
    SchemaParser, PartitionSpecParser and SortOrderParser read them. Field ids are those of ``columns``,
    which are the ids a fresh CREATE TABLE assigns."""
    ids = state.ids_by_path
    spec = {"spec-id": 0, "fields": [
        {"name": f.name or default_partition_name(f), "transform": str(f.transform), "source-id": ids[f.source],
         "field-id": 1000 + i}
        for i, f in enumerate(state.partition)
    ]}
    order = {"order-id": 1 if state.sort else 0, "fields": [
        {"transform": str(f.transform), "source-id": ids[f.source], "direction": f.direction,
         "null-order": f"nulls-{f.nulls}"}
        for f in state.sort
    ]}
    return state.schema_.model_dump_json(), json.dumps(spec), json.dumps(order)
