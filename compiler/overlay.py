"""An environment overlay once read: the validated overlay with its source, and the file as written. Kept apart
from compiler/environment.py (which parses and checks overlays, using the policy checks) so that the loader can
name these types without importing the checks: the two would otherwise import each other."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from .diagnostics import Location
from .iceberg.names import parse_name
from .policy.environment import EnvironmentOverlay, OverlaySettings
from .yamlsource import Path, SourceMap

# A layer of the overlay that applies to a table: its settings, the overlay's source, the YAML path of the layer
Layer = tuple[OverlaySettings, SourceMap, Path]


@dataclass(frozen=True)
class LoadedEnvironment:
    """A valid overlay; ``name`` is its file's name without the suffix."""

    name: str
    overlay: EnvironmentOverlay
    source: SourceMap
    digest: str  # sha256 of the file text: cache keys include it, so switching environment never reuses a plan

    @property
    def file(self) -> str:
        return self.source.file

    @cached_property
    def _namespaces(self) -> list[tuple[tuple[str, ...], str]]:
        """The namespaces the overlay names, outermost first (nested namespaces override their parents)."""
        return sorted(((parse_name(key), key) for key in self.overlay.namespaces), key=lambda item: len(item[0]))

    @cached_property
    def _tables(self) -> dict[tuple[str, ...], str]:
        return {parse_name(key): key for key in self.overlay.tables}

    def layers(self, table: tuple[str, ...]) -> list[Layer]:
        """The layers that apply to ``table``, weakest first: defaults, namespaces outermost first, the table."""
        found: list[Layer] = []
        if self.overlay.defaults is not None:
            found.append((self.overlay.defaults, self.source, ("defaults",)))
        namespace = table[:-1]
        for name, key in self._namespaces:
            if namespace[: len(name)] == name:
                found.append((self.overlay.namespaces[key], self.source, ("namespaces", key)))
        entry = self._tables.get(table)
        if entry is not None:
            found.append((self.overlay.tables[entry], self.source, ("tables", entry)))
        return found

    def catalog_origin(self) -> Location:
        return self.source.value(("catalog",))


@dataclass(frozen=True)
class OverlayFile:
    """An overlay file as written: the names it mentions are checked against the project even when some
    value of it is wrong (every finding at once); ``loaded`` is the overlay, None when it has errors."""

    name: str
    source: SourceMap
    tables: tuple[str, ...]  # the keys of tables: and namespaces:, as written
    namespaces: tuple[str, ...]
    loaded: LoadedEnvironment | None
