"""Namespace defaults merged under a table's own settings, remembering where each value came from.

Defaults of ``security`` apply to ``security.cloudtrail`` and to ``security.raw.events``; the nearest
namespace wins, and the table's own file wins over all of them, field by field.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from compiler.diagnostics import Location
from compiler.loader import LoadedNamespace, LoadedTable, Project
from compiler.spec.lifecycle import Lifecycle, Workload
from compiler.spec.table import PropertyValue
from compiler.yamlsource import Path, SourceMap


@dataclass(frozen=True)
class Effective:
    """The settings that apply to one table, and for each dotted setting path, where it was written."""

    lifecycle: Lifecycle
    workload: Workload
    properties: dict[str, PropertyValue]
    owner: str | None
    origins: dict[str, tuple[SourceMap, Path]] = field(default_factory=dict)

    def origin(self, setting: str) -> Location | None:
        """Where a setting was written; resolved only when asked (positions are looked up lazily)."""
        found = self.origins.get(setting)
        return found[0].value(found[1]) if found else None


def namespace_chain(project: Project, table: LoadedTable) -> list[LoadedNamespace]:
    """Defaults that apply to ``table``, outermost namespace first."""
    namespace = table.name[:-1]
    applicable = [ns for ns in project.namespaces if namespace[: len(ns.name)] == ns.name]
    return sorted(applicable, key=lambda ns: len(ns.name))


def effective_settings(project: Project, table: LoadedTable) -> Effective:
    layers: list[tuple[Any, SourceMap]] = [(ns.defaults, ns.source) for ns in namespace_chain(project, table)]
    layers.append((table.policy, table.source))
    lifecycle: dict[str, Any] = {}
    workload: dict[str, Any] = {}
    properties: dict[str, PropertyValue] = {}
    owner: str | None = None
    origins: dict[str, tuple[SourceMap, Path]] = {}
    for model, source in layers:
        if model.lifecycle is not None:
            _merge(lifecycle, model.lifecycle.model_dump(exclude_none=True), ("lifecycle",), source, origins)
        if model.workload is not None:
            _merge(workload, model.workload.model_dump(exclude_none=True), ("workload",), source, origins)
        for key, value in model.properties.items():
            properties[key] = value
            origins[f"properties.{key}"] = (source, ("properties", key))
        if model.owner is not None:
            owner = model.owner
            origins["owner"] = (source, ("owner",))
    return Effective(
        lifecycle=Lifecycle.model_validate(lifecycle),
        workload=Workload.model_validate(workload),
        properties=properties,
        owner=owner,
        origins=origins,
    )


def _merge(
    into: dict[str, Any],
    layer: dict[str, Any],
    path: tuple[str, ...],
    source: SourceMap,
    origins: dict[str, tuple[SourceMap, Path]],
) -> None:
    for key, value in layer.items():
        here = (*path, key)
        if isinstance(value, dict):
            _merge(into.setdefault(key, {}), value, here, source, origins)
        else:
            into[key] = value
            origins[".".join(here)] = (source, here)
