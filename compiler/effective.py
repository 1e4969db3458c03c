"""Namespace defaults merged under a table's own settings, remembering where each value came from.

Defaults of ``security`` apply to ``security.cloudtrail`` and to ``security.raw.events``; the nearest
namespace wins, and the table's own file wins over all of them, field by field. An environment overlay
selected with ``--env`` (``environments/prod.yaml``) is layered on top: its ``defaults``, then its
``namespaces`` (outermost first), then its ``tables`` entry, each winning field by field.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .diagnostics import Location
from .loader import LoadedNamespace, LoadedTable, Project
from .policy.lifecycle import Lifecycle, Workload
from .policy.table import PropertyValue
from .yamlsource import Path, SourceMap


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


# a layer: the model holding the settings, its file, and the YAML path of the model in that file
_Layer = tuple[Any, SourceMap, Path]


@dataclass
class _Merged:
    """Layers merged so far, weakest first; ``mode``: "json" keeps values as the plan file writes them."""

    mode: str = "python"
    lifecycle: dict[str, Any] = field(default_factory=dict)
    workload: dict[str, Any] = field(default_factory=dict)
    properties: dict[str, PropertyValue] = field(default_factory=dict)
    owner: str | None = None
    origins: dict[str, tuple[SourceMap, Path]] = field(default_factory=dict)

    def add(self, model: Any, source: SourceMap, at: Path) -> None:
        for section in ("lifecycle", "workload"):
            if getattr(model, section) is not None:
                dumped = getattr(model, section).model_dump(exclude_none=True, mode=self.mode)
                self._merge(getattr(self, section), dumped, (section,), source, at)
        for key, value in model.properties.items():
            self.properties[key] = value
            self.origins[f"properties.{key}"] = (source, (*at, "properties", key))
        if model.owner is not None:
            self.owner = model.owner
            self.origins["owner"] = (source, (*at, "owner"))

    def _merge(self, into: dict[str, Any], layer: dict[str, Any], path: tuple[str, ...], source: SourceMap,
               at: Path) -> None:
        """``path``: the setting's dotted name so far; ``at``: where the layer sits in its file."""
        for key, value in layer.items():
            here = (*path, key)
            if isinstance(value, dict):
                self._merge(into.setdefault(key, {}), value, here, source, at)
            else:
                into[key] = value
                self.origins[".".join(here)] = (source, (*at, *here))

    def values(self) -> dict[str, Any]:
        """Every set value by its dotted setting name."""
        flat = {"owner": self.owner} if self.owner is not None else {}
        flat |= _flatten(self.lifecycle, ("lifecycle",)) | _flatten(self.workload, ("workload",))
        return flat | {f"properties.{key}": value for key, value in self.properties.items()}


def effective_settings(project: Project, table: LoadedTable) -> Effective:
    layers: list[_Layer] = [(ns.defaults, ns.source, ()) for ns in namespace_chain(project, table)]
    layers.append((table.policy, table.source, ()))
    if project.environment is not None:
        layers += project.environment.layers(table.name)
    merged = _Merged()
    for layer in layers:
        merged.add(*layer)
    return Effective(
        lifecycle=Lifecycle.model_validate(merged.lifecycle),
        workload=Workload.model_validate(merged.workload),
        properties=merged.properties,
        owner=merged.owner,
        origins=merged.origins,
    )


def overlaid_settings(project: Project, name: tuple[str, ...]) -> dict[str, tuple[Any, SourceMap, Path]]:
    """The settings the selected environment overlay sets for table ``name``: dotted setting -> (its value as
    JSON data, the overlay's source, the value's YAML path). Reads only the overlay: no table model is built."""
    if project.environment is None:
        return {}
    merged = _Merged(mode="json")
    for layer in project.environment.layers(name):
        merged.add(*layer)
    values = merged.values()
    return {setting: (values[setting], *merged.origins[setting]) for setting in sorted(values)}


def _flatten(tree: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in tree.items():
        here = (*path, key)
        flat |= _flatten(value, here) if isinstance(value, dict) else {".".join(here): value}
    return flat
