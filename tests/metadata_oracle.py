"""The reference reading of a table: pyiceberg's fully parsed Table, mapped field by field.

compiler/catalog/current.py reads only what a plan needs from the metadata JSON; tests compare it with
this mapping of pyiceberg's own parse, on every table they make.
"""

from __future__ import annotations

from pyiceberg.table import Table
from pyiceberg.table.refs import MAIN_BRANCH, SnapshotRefType
from pyiceberg.table.sorting import NullOrder, SortDirection

from tablepolicy.compiler.catalog.current import CurrentTable
from tablepolicy.compiler.iceberg.transforms import parse_iceberg_transform
from tablepolicy.compiler.model.table import (
    PartitionFieldState,
    RefRetention,
    RefState,
    SortFieldState,
    TableHistory,
    TableState,
    field_paths,
)


def pyiceberg_reading(name: tuple[str, ...], table: Table) -> CurrentTable:
    metadata, schema, spec, order = table.metadata, table.schema(), table.spec(), table.sort_order()
    paths = field_paths(schema.as_struct())
    state = TableState(
        name=name,
        columns=schema.as_struct(),
        identifier_field_ids=tuple(schema.identifier_field_ids),
        partition=tuple(
            PartitionFieldState(source=paths[f.source_id], transform=parse_iceberg_transform(str(f.transform)),
                                name=f.name)
            for f in spec.fields
        ),
        sort=tuple(
            SortFieldState(source=paths[f.source_id], transform=parse_iceberg_transform(str(f.transform)),
                           direction="asc" if f.direction == SortDirection.ASC else "desc",
                           nulls="first" if f.null_order == NullOrder.NULLS_FIRST else "last")
            for f in order.fields
        ),
        identifier_fields=tuple(paths[i] for i in schema.identifier_field_ids),
        properties=dict(sorted(table.properties.items())),
        comment=table.properties.get("comment"),
        location=table.location(),
        format_version=metadata.format_version,
        refs=tuple(RefState(name=n, kind="tag" if r.snapshot_ref_type == SnapshotRefType.TAG else "branch",
                            snapshot_id=r.snapshot_id,
                            retention=RefRetention(max_ref_age_ms=r.max_ref_age_ms,
                                                   min_snapshots_to_keep=r.min_snapshots_to_keep,
                                                   max_snapshot_age_ms=r.max_snapshot_age_ms))
                   for n, r in sorted(metadata.refs.items()) if n != MAIN_BRANCH),
    )
    live = set(paths)
    dropped = frozenset(path for old in metadata.schemas for fid, path in field_paths(old.as_struct()).items()
                        if fid not in live)
    sources = frozenset(f.source_id for s in metadata.partition_specs for f in s.fields)
    return CurrentTable(state=state, metadata_location=table.metadata_location, schema_id=schema.schema_id,
                        spec_id=spec.spec_id, sort_order_id=order.order_id,
                        history=TableHistory(partition_source_ids=sources, dropped_paths=dropped,
                                             snapshot_ids=frozenset(s.snapshot_id for s in metadata.snapshots),
                                             current_snapshot_id=metadata.current_snapshot_id),
                        snapshot_id=metadata.current_snapshot_id, uuid=str(metadata.table_uuid))
