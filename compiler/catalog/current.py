"""A table's metadata document (Iceberg's table metadata JSON) -> the TableState the planner compares.

Only what a plan needs is read: the current schema, spec and sort order, properties, and from older
schemas and specs just their field ids. pyiceberg's full parse also builds every historical schema,
snapshot and log entry as validated models, which cost more than the whole diff; this reads the same
JSON with the rules pyiceberg applies to it (v1 fallbacks included), and a test compares the two on
every kind of table the integration tests make.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ..iceberg.nested import struct_from_json
from ..iceberg.transforms import parse_iceberg_transform
from ..model.table import (
    ColumnPath,
    PartitionFieldState,
    RefRetention,
    RefState,
    SortFieldState,
    TableHistory,
    TableState,
    field_paths,
)

UNSORTED_ORDER_ID = 0


@dataclass(frozen=True)
class CurrentTable:
    """A table as the catalog holds it, with the metadata file it was read from."""

    state: TableState
    metadata_location: str
    schema_id: int
    spec_id: int
    sort_order_id: int
    history: TableHistory = field(default_factory=TableHistory)
    snapshot_id: int | None = None
    uuid: str | None = None  # Iceberg's table-uuid (optional in v1): a re-created table has a new one


def current_table(name: tuple[str, ...], location: str, metadata: dict[str, Any]) -> CurrentTable:
    schema = _current_schema(metadata)
    columns = struct_from_json(schema)
    paths = field_paths(columns)
    spec_id, spec_fields = _current_spec(metadata)
    order_id, order_fields = _current_sort_order(metadata)
    identifier_ids = tuple(schema.get("identifier-field-ids", ()))
    properties = dict(sorted(metadata.get("properties", {}).items()))
    state = TableState(
        name=name,
        columns=columns,
        identifier_field_ids=identifier_ids,
        partition=tuple(
            PartitionFieldState(source=paths[_source_id(f)], transform=parse_iceberg_transform(f["transform"]),
                                name=f["name"])
            for f in spec_fields
        ),
        sort=tuple(
            SortFieldState(
                source=paths[_source_id(f)],
                transform=parse_iceberg_transform(f["transform"]),
                direction="asc" if f["direction"] == "asc" else "desc",
                nulls="first" if f["null-order"] == "nulls-first" else "last",
            )
            for f in order_fields
        ),
        identifier_fields=tuple(paths[i] for i in identifier_ids),
        properties=properties,
        comment=properties.get("comment"),
        location=metadata["location"],
        format_version=metadata["format-version"],
        refs=current_refs(metadata),
    )
    snapshot_id = metadata.get("current-snapshot-id")
    return CurrentTable(
        state=state,
        metadata_location=location,
        schema_id=schema.get("schema-id", 0),
        spec_id=spec_id,
        sort_order_id=order_id,
        history=_history(metadata, set(paths)),
        snapshot_id=None if snapshot_id in (None, -1) else snapshot_id,
        uuid=metadata.get("table-uuid"),
    )


def current_refs(metadata: dict[str, Any]) -> tuple[RefState, ...]:
    """Branches and tags other than main, by name, as pyiceberg's SnapshotRef reads them."""
    return tuple(
        RefState(name=name, kind="tag" if ref.get("type") == "tag" else "branch", snapshot_id=ref["snapshot-id"],
                 retention=RefRetention(max_ref_age_ms=ref.get("max-ref-age-ms"),
                                        min_snapshots_to_keep=ref.get("min-snapshots-to-keep"),
                                        max_snapshot_age_ms=ref.get("max-snapshot-age-ms")))
        for name, ref in sorted(metadata.get("refs", {}).items()) if name != "main"
    )


def _schemas(metadata: dict[str, Any]) -> list[dict[str, Any]]:
    return metadata.get("schemas") or [metadata["schema"]]  # v1 may have only "schema"


def _current_schema(metadata: dict[str, Any]) -> dict[str, Any]:
    current = metadata.get("current-schema-id", 0)
    return next(s for s in _schemas(metadata) if s.get("schema-id", 0) == current)


def _specs(metadata: dict[str, Any]) -> list[dict[str, Any]]:
    if metadata.get("partition-specs"):
        return list(metadata["partition-specs"])
    return [{"spec-id": 0, "fields": metadata.get("partition-spec", [])}]  # v1 may have only "partition-spec"


def _current_spec(metadata: dict[str, Any]) -> tuple[int, list[dict[str, Any]]]:
    specs = _specs(metadata)
    if not metadata.get("partition-specs"):
        return 0, specs[0]["fields"]
    current = metadata.get("default-spec-id", 0)
    spec = next(s for s in specs if s["spec-id"] == current)
    return current, spec["fields"]


def _current_sort_order(metadata: dict[str, Any]) -> tuple[int, list[dict[str, Any]]]:
    current = metadata.get("default-sort-order-id", UNSORTED_ORDER_ID)
    for order in metadata.get("sort-orders", ()):
        if order["order-id"] == current:
            return current, order["fields"]
    return UNSORTED_ORDER_ID, []


def _source_id(partition_or_sort_field: dict[str, Any]) -> int:
    if "source-id" in partition_or_sort_field:
        return int(partition_or_sort_field["source-id"])
    return int(partition_or_sort_field["source-ids"][0])  # v3 spelling; one-argument transforms only


def _history(metadata: dict[str, Any], live: set[int]) -> TableHistory:
    """Partition source ids of every spec ever used, and paths of fields older schemas had."""
    sources = frozenset(_source_id(f) for spec in _specs(metadata) for f in spec["fields"])
    dropped = frozenset(
        path for schema in _schemas(metadata) for field_id, path in _json_paths(schema, ()) if field_id not in live
    )
    current = metadata.get("current-snapshot-id")
    return TableHistory(partition_source_ids=sources, dropped_paths=dropped,
                        snapshot_ids=frozenset(s["snapshot-id"] for s in metadata.get("snapshots") or ()),
                        current_snapshot_id=None if current in (None, -1) else current)


def _json_paths(type_json: Any, prefix: ColumnPath) -> Iterator[tuple[int, ColumnPath]]:
    """Field ids and paths straight from a schema's JSON (older schemas are never built as types)."""
    if isinstance(type_json, str):
        return
    kind = type_json.get("type")
    if kind == "struct":
        for f in type_json.get("fields", ()):
            path = (*prefix, f["name"])
            yield f["id"], path
            yield from _json_paths(f["type"], path)
    elif kind == "list":
        yield type_json["element-id"], (*prefix, "element")
        yield from _json_paths(type_json["element"], (*prefix, "element"))
    elif kind == "map":
        yield type_json["key-id"], (*prefix, "key")
        yield type_json["value-id"], (*prefix, "value")
        yield from _json_paths(type_json["key"], (*prefix, "key"))
        yield from _json_paths(type_json["value"], (*prefix, "value"))
