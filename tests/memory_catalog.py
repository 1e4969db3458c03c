"""Catalog state in memory, for engine-free plan tests: a table as the catalog would hold it after an
apply of a policy, written as Iceberg table metadata JSON and read back by the planner's own reader
(compiler/catalog/current.py), and a StateSource that serves such tables to ``make_plan``: the in-memory lake
plans are applied to (compiler/plan/memory/apply.py), with a retention estimate to read.

No JVM, no catalog, no files: the metadata documents are checked against pyiceberg's parser, so a
fixture is a table Iceberg could hold, not a shape the planner happens to accept.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from pyiceberg.table.metadata import TableMetadataUtil

from tablepolicy.compiler.catalog.current import CurrentTable, current_table
from tablepolicy.compiler.checks import check_project
from tablepolicy.compiler.desired import desired_table
from tablepolicy.compiler.diagnostics import Diagnostics
from tablepolicy.compiler.diff.changes import RetentionEstimate
from tablepolicy.compiler.iceberg.names import parse_name
from tablepolicy.compiler.loader import Project, load_text
from tablepolicy.compiler.model.properties import DECLARED_KEYS, DECLARED_REFS, declared_stamp
from tablepolicy.compiler.model.table import ColumnPath, TableState, iceberg_json
from tablepolicy.compiler.plan.memory.apply import Lake, MemoryTable

# What Spark and Iceberg write on every table they create, which no policy owns: the planner must ignore it.
ENGINE_PROPERTIES = {"owner": "spark", "write.parquet.compression-codec": "zstd"}


def project_of(*texts: str, files: Sequence[str] = ()) -> Project:
    """Policy texts -> a validated project (``files``: the file each text is read from, by default
    ``policies/<namespace>/<table>.yaml``). Invalid policies fail the test: these are differ inputs."""
    project, diagnostics = Project(root=Path("policies")), Diagnostics()
    for i, text in enumerate(texts):
        load_text(text, files[i] if i < len(files) else _file_of(text), project, diagnostics)
    diagnostics.extend(check_project(project))
    assert not diagnostics.has_errors, [d.render() for d in diagnostics]
    return project


def _file_of(text: str) -> str:
    first = next(line for line in text.splitlines() if line.startswith(("table:", "view:", "namespace:")))
    name = parse_name(first.split(":", 1)[1].strip())
    return "policies/" + "/".join(name) + ".yaml" if first.startswith(("table:", "view:")) else \
        "policies/" + "/".join(name) + "/_namespace.yaml"


def declared_state(text: str) -> TableState:
    """The table one policy text declares, as an apply would leave it."""
    project = project_of(text)
    [table] = project.tables
    return desired_table(project, table).state


def table_uuid(name: tuple[str, ...]) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "tablepolicy-test:" + ".".join(name)))


def table_metadata(
    state: TableState,
    *,
    properties: Mapping[str, str | None] = {},
    dropped: Sequence[str] = (),
    older_partition_sources: Sequence[ColumnPath] = (),
    snapshots: bool = False,
    refs: Mapping[str, dict[str, Any] | None] = {},
) -> dict[str, Any]:
    """Iceberg table metadata (format v1/v2 JSON) of ``state`` as created by one apply, with its stamps.

    ``properties``: changes to the table's properties after that apply (None removes a key);
    ``dropped``: top-level columns an older schema had; ``older_partition_sources``: columns an older
    partition spec used (identity). Either adds an older schema or spec to the history, as evolution does.
    ``snapshots``: the table holds three snapshots (SNAPSHOTS, the last current), as it does anyway when the
    policy declares refs, which the apply made at the current snapshot (or the declared one) and stamped;
    ``refs``: changes to its refs since (Iceberg's JSON of a ref; None removes it).
    """
    schema_text, spec_text, order_text = iceberg_json(state)
    schema, spec, order = json.loads(schema_text), json.loads(spec_text), json.loads(order_text)
    last_id = max(state.ids_by_path.values(), default=0)
    schemas, specs = [schema], [spec]
    if dropped:
        older = {**schema, "schema-id": 0, "fields": [
            *schema["fields"],
            *({"id": last_id + i, "name": name, "type": "string", "required": False} for i, name in
              enumerate(dropped, start=1)),
        ]}
        last_id += len(dropped)
        schemas = [older, {**schema, "schema-id": 1}]
    if older_partition_sources:
        ids = state.ids_by_path
        old_spec = {"spec-id": 0, "fields": [
            {"name": "_".join(path) + "_old", "transform": "identity", "source-id": ids[path], "field-id": 1000 + i}
            for i, path in enumerate(older_partition_sources)
        ]}
        specs = [old_spec, {**spec, "spec-id": 1, "fields": [
            {**f, "field-id": 1000 + len(older_partition_sources) + i} for i, f in enumerate(spec["fields"])]}]
    orders = [{"order-id": 0, "fields": []}, *([order] if order["order-id"] else [])]
    stored = {**ENGINE_PROPERTIES, **state.properties, DECLARED_KEYS: declared_stamp(state.declared_properties)}
    if state.refs:
        stored[DECLARED_REFS] = declared_stamp(r.name for r in state.refs)
    if state.comment is not None:
        stored["comment"] = state.comment
    for key, value in properties.items():
        if value is None:
            stored.pop(key, None)
        else:
            stored[key] = value
    last_partition_id = max((f["field-id"] for s in specs for f in s["fields"]), default=999)
    metadata = {
        "format-version": state.format_version,
        "table-uuid": table_uuid(state.name),
        "location": state.location or "file:/lake/" + "/".join(state.name),
        "last-sequence-number": 0,
        "last-updated-ms": 1_700_000_000_000,
        "last-column-id": last_id,
        "schemas": schemas,
        "current-schema-id": schemas[-1]["schema-id"],
        "partition-specs": specs,
        "default-spec-id": specs[-1]["spec-id"],
        "last-partition-id": last_partition_id,
        "sort-orders": orders,
        "default-sort-order-id": order["order-id"],
        "properties": dict(sorted(stored.items())),
        "current-snapshot-id": -1,
        "snapshots": [],
        "snapshot-log": [],
        "metadata-log": [],
        "refs": {},
    }
    if snapshots or state.refs or refs:
        _with_snapshots(metadata, state, refs)
    if state.format_version == 1:
        metadata.pop("last-sequence-number")
        metadata["schema"] = schemas[-1]
        metadata["partition-spec"] = specs[-1]["fields"]
    TableMetadataUtil.parse_obj(metadata)  # a table Iceberg could hold, or the fixture is wrong
    return metadata


SNAPSHOTS = (101, 102, 103)


def _with_snapshots(metadata: dict[str, Any], state: TableState, edits: Mapping[str, dict[str, Any] | None]) -> None:
    metadata["snapshots"] = [
        {"snapshot-id": sid, **({"parent-snapshot-id": SNAPSHOTS[i - 1]} if i else {}), "sequence-number": i + 1,
         "timestamp-ms": 1_700_000_000_000 + i, "manifest-list": f"{metadata['location']}/metadata/snap-{sid}.avro",
         "summary": {"operation": "append"}, "schema-id": metadata["current-schema-id"]}
        for i, sid in enumerate(SNAPSHOTS)]
    metadata["current-snapshot-id"] = SNAPSHOTS[-1]
    metadata["last-sequence-number"] = len(SNAPSHOTS)
    refs: dict[str, Any] = {"main": {"snapshot-id": SNAPSHOTS[-1], "type": "branch"}}
    for ref in state.refs:
        keep = ref.retention
        refs[ref.name] = {"snapshot-id": ref.snapshot_id or SNAPSHOTS[-1], "type": ref.kind, **{
            k: v for k, v in (("max-ref-age-ms", keep.max_ref_age_ms), ("min-snapshots-to-keep",
                              keep.min_snapshots_to_keep), ("max-snapshot-age-ms", keep.max_snapshot_age_ms))
            if v is not None}}
    for name, edit in edits.items():
        if edit is None:
            refs.pop(name, None)
        else:
            refs[name] = edit
    metadata["refs"] = refs


def applied(
    state: TableState,
    *,
    properties: Mapping[str, str | None] = {},
    dropped: Sequence[str] = (),
    older_partition_sources: Sequence[ColumnPath] = (),
    snapshots: bool = False,
    refs: Mapping[str, dict[str, Any] | None] = {},
) -> CurrentTable:
    """``state`` as the catalog holds it after an apply (see table_metadata), read as the planner reads it."""
    metadata = table_metadata(state, properties=properties, dropped=dropped,
                              older_partition_sources=older_partition_sources, snapshots=snapshots, refs=refs)
    location = f"{metadata['location']}/metadata/00001-{metadata['table-uuid']}.metadata.json"
    return current_table(state.name, location, metadata)


@dataclass(frozen=True)
class MemoryCatalog(Lake):
    """The lake compiler/plan/memory/apply.py applies plans to (a StateSource, tablepolicy.compiler.plan.planner), whose
    retention estimates all read ``estimate``: a Lake holds no data files, so it has none."""

    estimate: RetentionEstimate | None = None  # what every retention estimate reads from "metadata"

    @classmethod
    def of(cls, *tables: CurrentTable, estimate: RetentionEstimate | None = None) -> MemoryCatalog:
        """``tables`` and every namespace holding them."""
        namespaces = frozenset(t.state.name[:k] for t in tables for k in range(1, len(t.state.name)))
        return cls(namespaces, {t.state.name: MemoryTable.of(t) for t in tables}, estimate=estimate)

    def estimate_retention(
        self, name: tuple[str, ...], column: tuple[str, ...], cutoff: datetime
    ) -> RetentionEstimate | None:
        return self.estimate
