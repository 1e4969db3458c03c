"""Column checks: names Spark would find ambiguous, types Spark 3.5 cannot create, pinned ids."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from .. import codes
from ..diagnostics import Diagnostic, Location, Severity
from ..iceberg.types import parse_primitive, why_not_spark
from ..policy.columns import Column, ListOf, MapOf, StructOf
from ..yamlsource import Path
from .context import TableContext


@dataclass(frozen=True)
class TypeSite:
    """A type expression in the policy and the YAML path of its ``type:`` value."""

    spec: str | StructOf | ListOf | MapOf
    path: Path


def _type_sites(spec: str | StructOf | ListOf | MapOf, path: Path) -> Iterator[TypeSite]:
    """The type at ``path`` and the list element / map key and value types inside it.

    Struct fields are not entered: they are columns of their own, visited through ``_structs``.
    """
    yield TypeSite(spec, path)
    match spec:
        case ListOf():
            yield from _type_sites(spec.element, (*path, "list"))
        case MapOf():
            yield from _type_sites(spec.entries.key, (*path, "map", "key"))
            yield from _type_sites(spec.entries.value, (*path, "map", "value"))


def _structs(columns: list[Column], path: Path) -> Iterator[tuple[list[Column], Path]]:
    """Every list of sibling columns: the table's, then each struct's at any depth."""
    yield columns, path
    for i, column in enumerate(columns):
        yield from _nested(column.type, (*path, i, "type"))


def _nested(spec: str | StructOf | ListOf | MapOf, path: Path) -> Iterator[tuple[list[Column], Path]]:
    match spec:
        case StructOf():
            yield from _structs(spec.struct, (*path, "struct"))
        case ListOf():
            yield from _nested(spec.element, (*path, "list"))
        case MapOf():
            yield from _nested(spec.entries.key, (*path, "map", "key"))
            yield from _nested(spec.entries.value, (*path, "map", "value"))


MAX_TYPE_DEPTH = 64  # nested struct, list and map types; real schemas nest a dozen levels


def _too_deep(spec: str | StructOf | ListOf | MapOf, path: Path, level: int) -> TypeSite | None:
    """The first type nested deeper than MAX_TYPE_DEPTH, or None (YAML nesting bounds this recursion)."""
    if isinstance(spec, str):
        return None
    if level > MAX_TYPE_DEPTH:
        return TypeSite(spec, path)
    inner: list[tuple[str | StructOf | ListOf | MapOf, Path]]
    match spec:
        case StructOf():
            inner = [(c.type, (*path, "struct", i, "type")) for i, c in enumerate(spec.struct)]
        case ListOf():
            inner = [(spec.element, (*path, "list"))]
        case MapOf():
            inner = [(spec.entries.key, (*path, "map", "key")), (spec.entries.value, (*path, "map", "value"))]
    for child, child_path in inner:
        found = _too_deep(child, child_path, level + 1)
        if found is not None:
            return found
    return None


def check_columns(ctx: TableContext) -> Iterator[Diagnostic]:
    deep = next((d for i, c in enumerate(ctx.table.policy.columns)
                 if (d := _too_deep(c.type, ("columns", i, "type"), 1)) is not None), None)
    if deep is not None:
        yield Diagnostic(codes.TP204, Severity.ERROR, ctx.at(deep.path),
                         f"types nest deeper than {MAX_TYPE_DEPTH} levels",
                         "Iceberg metadata and Spark plans of such a schema exceed what engines read; flatten it")
        return
    pinned: dict[int, Path] = {}
    for siblings, path in _structs(ctx.table.policy.columns, ("columns",)):
        yield from _check_names(ctx, siblings, path)
        for i, column in enumerate(siblings):
            if column.id is not None:
                yield from _pin(ctx, column.id, (*path, i, "id"), pinned)
            for site in _type_sites(column.type, (*path, i, "type")):
                yield from _check_type(ctx, site)
                yield from _check_pins(ctx, site, pinned)


def _check_names(ctx: TableContext, siblings: list[Column], path: Path) -> Iterator[Diagnostic]:
    seen: dict[str, str] = {}
    names = {c.name for c in siblings}
    for i, column in enumerate(siblings):
        folded = column.name.casefold()
        if folded in seen:
            yield from _name_clash(ctx, column, seen[folded], ctx.at((*path, i, "name")))
        seen.setdefault(folded, column.name)
        if column.renamed_from is not None and column.renamed_from in names:
            yield Diagnostic(codes.TP215, Severity.ERROR, ctx.at((*path, i, "renamed_from")),
                             f"renamed_from '{column.renamed_from}' names a column that is still declared",
                             "a renamed column's old name must be gone from the policy")


def _name_clash(ctx: TableContext, column: Column, other: str, where: Location) -> Iterator[Diagnostic]:
    if column.name == other:
        yield Diagnostic(codes.TP210, Severity.ERROR, where, f"duplicate column name '{column.name}'",
                         "each field of a struct needs a distinct name")
    elif ctx.table.policy.case_sensitive:
        yield Diagnostic(codes.TP211, Severity.WARNING, where,
                         f"column '{column.name}' differs from '{other}' only by case",
                         "legal with case_sensitive: true, but Trino and Athena cannot tell them apart")
    else:
        yield Diagnostic(codes.TP216, Severity.ERROR, where,
                         f"column '{column.name}' differs from '{other}' only by case; Spark resolves "
                         "names case-insensitively so both would be ambiguous",
                         "rename one, or set case_sensitive: true if every engine is configured for it")


def _check_type(ctx: TableContext, site: TypeSite) -> Iterator[Diagnostic]:
    spec = site.spec
    if isinstance(spec, str):
        reason = why_not_spark(parse_primitive(spec))
        if reason:
            yield Diagnostic(codes.TP212, Severity.ERROR, ctx.at(site.path),
                             f"type '{spec}' cannot be created through Spark 3.5", reason)
    elif isinstance(spec, ListOf) and spec.element_required:
        yield Diagnostic(codes.TP213, Severity.ERROR, ctx.at((*site.path, "element_required")),
                         "required list elements cannot be created through Spark DDL (ARRAY elements are nullable)",
                         "remove element_required, or create the table with another engine and import it")
    elif isinstance(spec, MapOf) and spec.entries.value_required:
        yield Diagnostic(codes.TP213, Severity.ERROR, ctx.at((*site.path, "map", "value_required")),
                         "required map values cannot be created through Spark DDL (MAP values are nullable)",
                         "remove value_required, or create the table with another engine and import it")


def _check_pins(ctx: TableContext, site: TypeSite, pinned: dict[int, Path]) -> Iterator[Diagnostic]:
    spec = site.spec
    if isinstance(spec, ListOf) and spec.element_id is not None:
        yield from _pin(ctx, spec.element_id, (*site.path, "element_id"), pinned)
    if isinstance(spec, MapOf):
        for key in ("key_id", "value_id"):
            value = getattr(spec.entries, key)
            if value is not None:
                yield from _pin(ctx, value, (*site.path, "map", key), pinned)


def _pin(ctx: TableContext, field_id: int, path: Path, pinned: dict[int, Path]) -> Iterator[Diagnostic]:
    if field_id in pinned:
        yield Diagnostic(codes.TP214, Severity.ERROR, ctx.at(path), f"field id {field_id} is pinned twice",
                         f"already pinned at line {ctx.at(pinned[field_id]).line}")
    else:
        pinned[field_id] = path
