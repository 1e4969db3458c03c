"""Quoting and list formatting for the SQL templates; the templates only place these results.

>>> ident("we`ird")
'`we``ird`'
>>> literal("it's")
"'it\\\\'s'"
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime

from pyiceberg.types import IcebergType, ListType, MapType, NestedField, PrimitiveType, StructType

from ..diff.changes import ColumnAdd
from ..iceberg.transforms import TRANSFORM_RULES, Transform
from ..iceberg.types import spark_ddl_type
from ..model.table import PartitionFieldState, RefRetention, SortFieldState

_ESCAPES = {"\\": "\\\\", "'": "\\'", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def ident(name: str) -> str:
    """A Spark identifier, always backquoted, embedded backticks doubled."""
    return "`" + name.replace("`", "``") + "`"


def qualified(parts: Iterable[str]) -> str:
    return ".".join(ident(p) for p in parts)


def literal(value: str) -> str:
    """A Spark string literal; backslash escapes are on by default in Spark SQL, so escape them too."""
    return "'" + "".join(_ESCAPES.get(ch, ch) for ch in value) + "'"


def spark_type(t: IcebergType) -> str:
    if isinstance(t, PrimitiveType):
        return spark_ddl_type(t)
    if isinstance(t, StructType):
        return "STRUCT<" + ", ".join(_struct_field(f) for f in t.fields) + ">"
    if isinstance(t, ListType):
        return f"ARRAY<{spark_type(t.element_type)}>"
    if isinstance(t, MapType):
        return f"MAP<{spark_type(t.key_type)}, {spark_type(t.value_type)}>"
    raise TypeError(f"no Spark DDL for {t}")


def _field_options(f: NestedField) -> str:
    options = " NOT NULL" if f.required else ""
    return options + (f" COMMENT {literal(f.doc)}" if f.doc else "")


def _struct_field(f: NestedField) -> str:
    return f"{ident(f.name)}: {spark_type(f.field_type)}{_field_options(f)}"


def column_definition(f: NestedField) -> str:
    return f"{ident(f.name)} {spark_type(f.field_type)}{_field_options(f)}"


def column_list(fields: Iterable[NestedField]) -> str:
    return ",\n".join("  " + column_definition(f) for f in fields)


def transform_sql(transform: Transform, source: tuple[str, ...]) -> str:
    """Spark's spelling of a transform applied to a column: ``days(`ts`)``, ``bucket(16, `id`)``."""
    column = qualified(source)
    function = TRANSFORM_RULES[transform.kind].spark
    if function is None:
        raise ValueError(f"transform {transform} has no Spark DDL form")
    if not function:
        return column
    if transform.param is not None:
        return f"{function}({transform.param}, {column})"
    return f"{function}({column})"


def partition_expr(field: PartitionFieldState) -> str:
    return transform_sql(field.transform, field.source)


def partition_list(fields: Iterable[PartitionFieldState]) -> str:
    return ", ".join(partition_expr(f) for f in fields)


def partition_ref(field: PartitionFieldState) -> str:
    """A current partition field by its name (the catalog always has one), else by its expression."""
    return ident(field.name) if field.name else partition_expr(field)


def partition_names(fields: Iterable[PartitionFieldState]) -> str:
    return ", ".join(f"{partition_expr(f)} AS {ident(f.name or '')}" for f in fields)


def comment_text(text: str) -> str:
    """Text safe inside a ``--`` comment line: line breaks are written as escapes."""
    return text.replace("\r", "\\r").replace("\n", "\\n")


def added_columns(columns: Iterable[ColumnAdd]) -> str:
    """The column list of ``ADD COLUMNS (...)``: path, type, comment and position, one per line."""
    return ",\n".join(
        f"  {qualified(c.path)} {spark_type(c.type)}" + (f" COMMENT {literal(c.doc)}" if c.doc else "")
        + position_clause(c.position, c.after)
        for c in columns
    )


def sort_list(fields: Iterable[SortFieldState]) -> str:
    return ", ".join(
        f"{transform_sql(f.transform, f.source)} {f.direction.upper()} NULLS {f.nulls.upper()}" for f in fields
    )


def ident_paths(paths: Iterable[tuple[str, ...]]) -> str:
    return ", ".join(qualified(p) for p in paths)


def property_list(properties: Mapping[str, str]) -> str:
    return ",\n".join(f"  {literal(k)} = {literal(v)}" for k, v in properties.items())


def property_keys(keys: Iterable[str]) -> str:
    return ", ".join(literal(k) for k in keys)


def position_clause(position: str, after: str | None) -> str:
    """`` FIRST``, `` AFTER `col` `` or nothing (append at the end)."""
    if position == "first":
        return " FIRST"
    if position == "after" and after is not None:
        return f" AFTER {ident(after)}"
    return ""


def time_literal(kind: str, when: datetime) -> str:
    """A date or timestamp literal for a column of that kind; instants are written in UTC with the offset,
    so they mean the same in any session time zone."""
    utc = when.astimezone(UTC)
    if kind == "date":
        return f"DATE {literal(utc.date().isoformat())}"
    if kind == "timestamp":  # without zone: Iceberg's timestamp, Spark's TIMESTAMP_NTZ
        return f"TIMESTAMP_NTZ {literal(utc.replace(tzinfo=None).isoformat(' '))}"
    return f"TIMESTAMP {literal(utc.isoformat(' '))}"


def named_arguments(arguments: Iterable[tuple[str, str]]) -> str:
    """Procedure arguments ``name => value``, one per line; values are already quoted SQL."""
    return ",\n".join(f"  {name} => {value}" for name, value in arguments)


def string_map(options: Mapping[str, str]) -> str:
    return "map(" + ", ".join(f"{literal(k)}, {literal(v)}" for k, v in options.items()) + ")"


_SPARK_UNITS = (("DAYS", 86_400_000), ("HOURS", 3_600_000), ("MINUTES", 60_000))


def time_span(ms: int) -> str:
    """Milliseconds as Spark's ref DDL counts them, in the largest whole unit: ``7 DAYS``, ``90 MINUTES``."""
    unit, size = next((u, s) for u, s in _SPARK_UNITS if ms % s == 0 or u == "MINUTES")
    return f"{ms // size} {unit}"


def ref_options(retention: RefRetention) -> str:
    """`` RETAIN n DAYS WITH SNAPSHOT RETENTION n SNAPSHOTS n DAYS``: the values a ref sets itself (none: '')."""
    out = f" RETAIN {time_span(retention.max_ref_age_ms)}" if retention.max_ref_age_ms is not None else ""
    keep = [f"{retention.min_snapshots_to_keep} SNAPSHOTS"] if retention.min_snapshots_to_keep is not None else []
    keep += [time_span(retention.max_snapshot_age_ms)] if retention.max_snapshot_age_ms is not None else []
    return out + (f" WITH SNAPSHOT RETENTION {' '.join(keep)}" if keep else "")


FILTERS = {
    "ref_options": ref_options,
    "time_literal": time_literal,
    "named_arguments": named_arguments,
    "position_clause": position_clause,
    "ident": ident,
    "qualified": qualified,
    "literal": literal,
    "spark_type": spark_type,
    "column_definition": column_definition,
    "column_list": column_list,
    "partition_expr": partition_expr,
    "partition_list": partition_list,
    "partition_ref": partition_ref,
    "partition_names": partition_names,
    "comment_text": comment_text,
    "added_columns": added_columns,
    "sort_list": sort_list,
    "ident_paths": ident_paths,
    "property_list": property_list,
    "property_keys": property_keys,
}
