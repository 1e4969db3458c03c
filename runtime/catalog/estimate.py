"""What a tighter retention would delete, estimated from manifests and column bounds, never data files.

Reads manifests through pyiceberg (runtime: the compiler only receives the RetentionEstimate)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from pyiceberg.conversions import from_bytes
from pyiceberg.expressions import LessThan
from pyiceberg.table import Table
from pyiceberg.types import DateType, PrimitiveType, TimestampType

from tablepolicy.compiler.diff.changes import RetentionEstimate
from tablepolicy.compiler.model.table import ColumnPath, field_paths

from ..manifests import planned_data_files

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def estimate_retention(table: Table, column: ColumnPath, cutoff: datetime) -> RetentionEstimate:
    """Files whose upper bound of ``column`` is below ``cutoff`` go whole; files straddling it are partial.

    Manifest partition summaries prune the scan and file-level bounds classify what is left, so the
    cost is reading manifests, as the planner already does.
    """
    found = column_field(table, column)
    if found is None or table.current_snapshot() is None:
        return RetentionEstimate(files=0, partial_files=0, rows=0, rows_upper=0, bytes=0)
    field_id, field_type = found
    limit, literal = physical_cutoff(field_type, cutoff)
    whole = partial = rows = rows_upper = size = 0
    # keyword form: the pydantic mypy plugin reads LessThan's fields, not its __init__(term, literal)
    arguments: dict[str, Any] = {"term": ".".join(column), "literal": literal}
    predicate = LessThan(**arguments)
    for data in planned_data_files(table, predicate):  # the manifests health reads, read once
        rows_upper += data.record_count
        upper = (data.upper_bounds or {}).get(field_id)
        if upper is not None and int(from_bytes(field_type, upper)) < limit:
            whole += 1
            rows += data.record_count
            size += data.file_size_in_bytes
        else:
            partial += 1
    return RetentionEstimate(files=whole, partial_files=partial, rows=rows, rows_upper=rows_upper, bytes=size)


def column_field(table: Table, column: ColumnPath) -> tuple[int, PrimitiveType] | None:
    """The field id and primitive type of a column path in the table's current schema."""
    paths = {path: fid for fid, path in field_paths(table.schema().as_struct()).items()}
    field_id = paths.get(column)
    if field_id is None:
        return None
    field_type = table.schema().find_field(field_id).field_type
    return (field_id, field_type) if isinstance(field_type, PrimitiveType) else None


def physical_cutoff(field_type: PrimitiveType, cutoff: datetime) -> tuple[int, str]:
    """The cutoff in the column's physical unit (days or microseconds) and as a filter literal."""
    if isinstance(field_type, DateType):
        return (cutoff.date() - EPOCH.date()).days, cutoff.date().isoformat()
    micros = int((cutoff - EPOCH).total_seconds() * 1_000_000)
    if isinstance(field_type, TimestampType):
        return micros, cutoff.replace(tzinfo=None).isoformat()
    return micros, cutoff.isoformat()
