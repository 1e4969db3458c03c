"""Partition spec, sort order, identifier fields and write modes checked against the schema."""

from __future__ import annotations

from collections.abc import Iterator

from pyiceberg.types import DoubleType, FloatType, PrimitiveType

from .. import codes
from ..diagnostics import Diagnostic, Location, Severity
from ..iceberg.names import format_name, parse_name
from ..iceberg.transforms import Transform, accepted_sources
from ..model.table import ColumnPath, partition_fields, sort_fields
from .context import TableContext


def _source_problem(
    ctx: TableContext, code: str, what: str, source: ColumnPath, transform: Transform, where: Location
) -> Iterator[Diagnostic]:
    found = ctx.resolve(source)
    if found is None:
        yield Diagnostic(code, Severity.ERROR, where,
                         f"{what} column '{format_name(source)}' does not exist", ctx.suggest(source))
        return
    if not transform.accepts(found.field_type):
        hint = f"{transform.kind} accepts {accepted_sources(transform.kind)}"
        yield Diagnostic(codes.TP303, Severity.ERROR, where,
                         f"{transform.kind}() cannot be applied to '{format_name(source)}' of type "
                         f"{found.field_type}", hint)


def check_layout(ctx: TableContext) -> Iterator[Diagnostic]:
    policy = ctx.table.policy
    seen: set[tuple[ColumnPath, str]] = set()
    names: set[str] = set()
    columns = {c.name for c in policy.columns}
    for i, field in enumerate(partition_fields(policy)):
        where = ctx.at(("partition_by", i))
        yield from _source_problem(ctx, codes.TP302, "partition", field.source, field.transform, where)
        key = (field.source, field.transform.kind)
        if key in seen:
            yield Diagnostic(codes.TP305, Severity.ERROR, where,
                             f"{field.transform.kind} of '{format_name(field.source)}' is partitioned twice",
                             "remove the duplicate partition field")
        seen.add(key)
        if field.name is not None:
            if field.name in names:
                yield Diagnostic(codes.TP309, Severity.ERROR, where,
                                 f"partition field name '{field.name}' is used twice",
                                 "give each partition field a name of its own")
            names.add(field.name)
            if field.name in columns and (field.transform.kind != "identity" or field.source != (field.name,)):
                yield Diagnostic(codes.TP306, Severity.ERROR, where,
                                 f"partition field name '{field.name}' is also a column name; Iceberg refuses it",
                                 f"name it e.g. '{field.source[-1]}_{field.transform.kind}'")
        if field.transform.kind == "void":
            yield Diagnostic(codes.TP307, Severity.ERROR, where,
                             "a void partition field cannot be created through Spark DDL",
                             "void fields are what a format-v1 table keeps after dropping a partition field; "
                             "remove it from the policy")
    for i, sort in enumerate(sort_fields(policy)):
        where = ctx.at(("sort_by", i))
        yield from _source_problem(ctx, codes.TP308, "sort", sort.source, sort.transform, where)
        if sort.transform.kind == "void":
            yield Diagnostic(codes.TP304, Severity.ERROR, where, "void is not a sort transform", "sort by the column")
    yield from _identifier_fields(ctx)
    yield from _write_modes(ctx)


def _identifier_fields(ctx: TableContext) -> Iterator[Diagnostic]:
    listed: dict[ColumnPath, int] = {}
    for i, text in enumerate(ctx.table.policy.identifier_fields):
        where = ctx.at(("identifier_fields", i))
        try:
            path = parse_name(text)
        except ValueError as exc:
            yield Diagnostic(codes.TP107, Severity.ERROR, where, str(exc),
                             "name a column by its path, a part with dots or spaces in backticks: `my col`.x")
            continue
        if path in listed:
            yield Diagnostic(codes.TP315, Severity.ERROR, where, f"identifier field '{text}' is listed twice",
                             f"Iceberg keeps a set of identifier fields: remove item {i + 1} "
                             f"(first listed as item {listed[path] + 1})")
            continue
        listed[path] = i
        found = ctx.resolve(path)
        if found is None:
            yield Diagnostic(codes.TP310, Severity.ERROR, where, f"identifier field '{text}' does not exist",
                             ctx.suggest(path))
        elif not isinstance(found.field_type, PrimitiveType):
            yield Diagnostic(codes.TP313, Severity.ERROR, where,
                             f"identifier field '{text}' is a {found.field_type}; it must be a primitive column",
                             f"name a primitive field inside it, e.g. {text}.FIELD, or another column")
        elif isinstance(found.field_type, FloatType | DoubleType):
            yield Diagnostic(codes.TP312, Severity.ERROR, where,
                             f"identifier field '{text}' is {found.field_type}; floating point cannot identify rows",
                             "use an integer, string, decimal, date or timestamp column")
        elif not all(_required(ctx, path[:k]) for k in range(1, len(path) + 1)):
            yield Diagnostic(codes.TP311, Severity.ERROR, where, f"identifier field '{text}' is optional",
                             "identifier fields must be required: add 'required: true' to the column")


def _write_modes(ctx: TableContext) -> Iterator[Diagnostic]:
    policy = ctx.table.policy
    if policy.write_modes is None or policy.format_version >= 2:
        return
    for op in ("delete", "update", "merge"):
        if getattr(policy.write_modes, op) == "merge-on-read":
            yield Diagnostic(codes.TP314, Severity.ERROR, ctx.at(("write_modes", op)),
                             "merge-on-read needs delete files, which format version 1 lacks",
                             "set format_version: 2 or use copy-on-write")


def _required(ctx: TableContext, path: ColumnPath) -> bool:
    found = ctx.resolve(path)
    return found is not None and found.required
