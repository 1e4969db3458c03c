"""Organisation rules (``policies/_rules.yaml``) that every table policy must keep, checked by validate.

    rules:
      owner_required: true
      pii_requires_erasure: true            # a column tagged pii needs lifecycle.erasure
      snapshots_max_age: {min: 1h, max: 7d}
      retention_keep: {max: 730d}
      orphan_older_than: {min: 3d}
      erasure_within: {max: 30d}
      ref_max_age: {max: 30d}               # each declared branch or tag, kept no longer than this
      required_properties: {write.format.default: parquet, write.object-storage.enabled: null}
      table_name: "^[a-z][a-z0-9_]*$"       # the table's last name part
      column_name: "^[a-z][a-z0-9_]*$"      # every field, nested ones included
      no_weakening: true                     # a table may not loosen what its namespace defaults set
      ignore_unmanaged: [scratch, "sales.tmp_*"]  # read by drift (tablepolicy.compiler.drift), not a check on tables

Each rule has its own code (TG101-TG111) and reports at the value that breaks it. A bound applies to
the value in effect for the table (its own file over its namespace defaults); an undeclared setting is
left to its own rule (``owner_required``, ``pii_requires_erasure``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from . import codes
from .diagnostics import Diagnostic, Location, Severity
from .effective import Effective, effective_settings, namespace_chain
from .loader import LoadedRules, LoadedTable, Project
from .policy.columns import Column, ListOf, MapOf, StructOf
from .policy.refs import TagRef, ref_name
from .policy.rules import DurationBounds, Rules
from .policy.units import Duration
from .yamlsource import Path

PII_TAG = "pii"

# the lifecycle settings whose bounds the rules set: (rule field, setting path, looser when longer?)
BOUNDED: tuple[tuple[str, tuple[str, ...], str, bool], ...] = (
    ("snapshots_max_age", ("lifecycle", "snapshots", "max_age"), codes.TG103, True),
    ("retention_keep", ("lifecycle", "retention", "keep"), codes.TG104, True),
    ("orphan_older_than", ("lifecycle", "orphan_files", "older_than"), codes.TG105, False),
    ("erasure_within", ("lifecycle", "erasure", "within"), codes.TG106, True),
)


def check_rules(project: Project, loaded: LoadedRules) -> Iterator[Diagnostic]:
    """Every rule finding of every present table, in file order."""
    for table in project.tables:
        if table.state != "present":
            continue
        effective = effective_settings(project, table)
        for check in RULE_CHECKS:
            yield from check(_Context(project, table, effective, loaded))


@dataclass(frozen=True)
class _Context:
    project: Project
    table: LoadedTable
    effective: Effective
    loaded: LoadedRules

    @property
    def rules(self) -> Rules:
        return self.loaded.rules

    def at(self, setting: str, fallback: Path = ("table",)) -> Location:
        return self.effective.origin(setting) or self.table.source.value(fallback)

    def rule(self, name: str) -> str:
        return f"rule '{name}' of {self.loaded.source.value(('rules', name))}"

    def finding(self, code: str, where: Location, message: str, hint: str) -> Diagnostic:
        return Diagnostic(code, Severity.ERROR, where, message, hint)


def _owner(ctx: _Context) -> Iterator[Diagnostic]:
    if ctx.rules.owner_required and not ctx.effective.owner:
        yield ctx.finding(codes.TG101, ctx.at("owner"), f"table {ctx.table.declared} has no owner "
                          f"({ctx.rule('owner_required')})", "add 'owner: <team>' to the table or its namespace")


def _pii(ctx: _Context) -> Iterator[Diagnostic]:
    if not ctx.rules.pii_requires_erasure or ctx.effective.lifecycle.erasure is not None:
        return
    for path, column in _columns(ctx.table.policy.columns, ("columns",)):
        if PII_TAG in column.tags:
            yield ctx.finding(codes.TG102, ctx.table.source.value((*path, "tags")),
                              f"column {column.name} is tagged {PII_TAG} but {ctx.table.declared} declares no "
                              f"erasure ({ctx.rule('pii_requires_erasure')})",
                              "add lifecycle.erasure: {key: [<subject id column>], within: 30d}")


def _bounds(ctx: _Context) -> Iterator[Diagnostic]:
    for rule, path, code, _ in BOUNDED:
        bounds: DurationBounds | None = getattr(ctx.rules, rule)
        value = _setting(ctx.effective, path)
        if bounds is None or value is None:
            continue
        setting = ".".join(path)
        if bounds.min is not None and value.millis < bounds.min.millis:
            yield ctx.finding(code, ctx.at(setting), f"{setting} {value} is shorter than {bounds.min} "
                              f"({ctx.rule(rule)})", f"declare at least {bounds.min}")
        if bounds.max is not None and value.millis > bounds.max.millis:
            yield ctx.finding(code, ctx.at(setting), f"{setting} {value} is longer than {bounds.max} "
                              f"({ctx.rule(rule)})", f"declare at most {bounds.max}")


def _refs(ctx: _Context) -> Iterator[Diagnostic]:
    """Each declared ref's max age as expiry reads it: its own, else the table's max_ref_age, else forever."""
    bounds = ctx.rules.ref_max_age
    if bounds is None:
        return
    snapshots = ctx.effective.lifecycle.snapshots
    inherited = snapshots.max_ref_age if snapshots is not None else None
    for index, ref in enumerate(ctx.table.policy.refs):
        kind = "tag" if isinstance(ref, TagRef) else "branch"
        own = ref.max_ref_age
        value = own or inherited
        where = ctx.table.source.value(("refs", index, "max_ref_age")) if own else \
            ctx.at("lifecycle.snapshots.max_ref_age", ("refs", index, kind))
        kept = f"{kind} {ref_name(ref)} is kept " + (f"{value}" + ("" if own else " (the table's max_ref_age)")
                                                     if value is not None else "forever (no max_ref_age)")
        if bounds.max is not None and (value is None or value.millis > bounds.max.millis):
            yield ctx.finding(codes.TG111, where, f"{kept}, longer than {bounds.max} ({ctx.rule('ref_max_age')})",
                              f"declare max_ref_age: {bounds.max} (or less) on it")
        if bounds.min is not None and value is not None and value.millis < bounds.min.millis:
            yield ctx.finding(codes.TG111, where, f"{kept}, shorter than {bounds.min} ({ctx.rule('ref_max_age')})",
                              f"declare max_ref_age: {bounds.min} (or more) on it")


def _properties(ctx: _Context) -> Iterator[Diagnostic]:
    for key, wanted in sorted(ctx.rules.required_properties.items()):
        have = ctx.effective.properties.get(key)
        if have is None:
            yield ctx.finding(codes.TG107, ctx.at(f"properties.{key}"), f"{ctx.table.declared} does not set property "
                              f"{key} ({ctx.rule('required_properties')})",
                              f"add properties: {{{key}: {wanted if wanted is not None else '<value>'}}}")
        elif wanted is not None and str(have).lower() != str(wanted).lower():
            yield ctx.finding(codes.TG107, ctx.at(f"properties.{key}"), f"property {key} is {have}, the rules "
                              f"require {wanted} ({ctx.rule('required_properties')})", f"set {key}: {wanted}")


def _names(ctx: _Context) -> Iterator[Diagnostic]:
    if ctx.rules.table_name and not re.fullmatch(ctx.rules.table_name, ctx.table.name[-1]):
        yield ctx.finding(codes.TG108, ctx.table.source.value(("table",)), f"table name '{ctx.table.name[-1]}' does "
                          f"not match {ctx.rules.table_name} ({ctx.rule('table_name')})", "rename the table")
    if ctx.rules.column_name:
        for path, column in _columns(ctx.table.policy.columns, ("columns",)):
            if not re.fullmatch(ctx.rules.column_name, column.name):
                yield ctx.finding(codes.TG109, ctx.table.source.value((*path, "name")), f"column name '{column.name}' "
                                  f"does not match {ctx.rules.column_name} ({ctx.rule('column_name')})",
                                  "rename it (declare renamed_from on a live table)")


def _weakening(ctx: _Context) -> Iterator[Diagnostic]:
    """A table's own value may tighten its namespace's, never loosen it."""
    if not ctx.rules.no_weakening:
        return
    chain = namespace_chain(ctx.project, ctx.table)
    for _, path, _, looser_when_longer in BOUNDED:
        mine = _dig(ctx.table.policy, path)
        inherited = next((v for ns in reversed(chain) if (v := _dig(ns.defaults, path)) is not None), None)
        if mine is None or inherited is None:
            continue
        if (mine.millis > inherited.millis) if looser_when_longer else (mine.millis < inherited.millis):
            setting = ".".join(path)
            yield ctx.finding(codes.TG110, ctx.table.source.value(path), f"{setting} {mine} loosens the namespace's "
                              f"{inherited} ({ctx.rule('no_weakening')})",
                              f"keep {inherited} or tighten it; change the namespace defaults to loosen it")


def _setting(effective: Effective, path: tuple[str, ...]) -> Duration | None:
    section = getattr(effective.lifecycle, path[1])
    return getattr(section, path[2]) if section is not None else None


def _dig(model: Any, path: tuple[str, ...]) -> Duration | None:
    """The value at ``path`` as the model itself declares it (None where it does not)."""
    value: Any = model
    for part in path:
        value = getattr(value, part, None)
    return value if isinstance(value, Duration) else None


def _columns(columns: list[Column], path: Path) -> Iterator[tuple[Path, Column]]:
    """Every column, nested ones included, with its YAML path."""
    for index, column in enumerate(columns):
        here = (*path, index)
        yield here, column
        kind, at = column.type, (*here, "type")
        while isinstance(kind, ListOf | MapOf):
            kind, at = (kind.element, (*at, "list")) if isinstance(kind, ListOf) else (
                kind.entries.value, (*at, "map", "value"))
        if isinstance(kind, StructOf):
            yield from _columns(kind.struct, (*at, "struct"))


RULE_CHECKS: tuple[Callable[[_Context], Iterator[Diagnostic]], ...] = (
    _owner, _pii, _bounds, _refs, _properties, _names, _weakening,
)

