"""Environment overlays: ``environments/<name>.yaml`` text -> a validated overlay, and its checks against the
project (every table and namespace it names must be declared under ``policies/``).

Pure: the runtime (or tablepolicy.compiler.project) reads the files; here text becomes models and findings.

>>> file, found = parse_environment("prod", "defaults: {lifecycle: {snapshots: {max_age: 7d}}}", "prod.yaml")
>>> [path for _settings, _source, path in file.loaded.layers(("logs", "app_events"))], found
([('defaults',)], [])
"""

from __future__ import annotations

import difflib
import hashlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from .diagnostics import Diagnostic, Location, Severity
from .iceberg.names import format_name, natural_key, parse_name
from .overlay import Layer as Layer
from .overlay import LoadedEnvironment as LoadedEnvironment
from .overlay import OverlayFile as OverlayFile
from .paths import ENVIRONMENTS as ENVIRONMENTS  # where it was first
from .policy.environment import STRUCTURE_KEYS, EnvironmentOverlay, OverlaySettings
from .policy.errors import findings_from
from .yamlsource import Path, SourceMap, parse_yaml

if TYPE_CHECKING:
    from .loader import Project

SETTINGS_SECTIONS = ("owner", "properties", "workload", "lifecycle")


def parse_environment(name: str, text: str, file: str) -> tuple[OverlayFile | None, list[Diagnostic]]:
    """One overlay file; every problem of it as a finding (structure keys, unknown keys, wrong values)."""
    parsed = parse_yaml(text, file)
    if isinstance(parsed, Diagnostic):
        return None, [parsed]
    data = {} if parsed.data is None else parsed.data
    if not isinstance(data, dict):
        return None, [Diagnostic("TP003", Severity.ERROR, Location(file, 1, 1),
                                 "an environment overlay is a mapping of catalog, defaults, namespaces and tables",
                                 "write a mapping, e.g. defaults: {lifecycle: {snapshots: {max_age: 7d}}}")]
    findings = [*_structure(data, parsed.source), *_names(data, parsed.source), *_properties(data, parsed.source)]
    kept = _without_structure(data)
    overlay: LoadedEnvironment | None = None
    try:
        model = EnvironmentOverlay.model_validate(kept)
    except ValidationError as exc:
        findings += findings_from(exc, EnvironmentOverlay, kept, parsed.source)
    else:
        findings += _declared_values(model, parsed.source)
        if not any(f.severity is Severity.ERROR for f in findings):
            overlay = LoadedEnvironment(name, model, parsed.source, hashlib.sha256(text.encode()).hexdigest())
    keys = {section: tuple(data[section]) if isinstance(data.get(section), dict) else ()
            for section in ("tables", "namespaces")}
    return OverlayFile(name, parsed.source, keys["tables"], keys["namespaces"], overlay), findings


def _setting_blocks(data: dict[str, Any]) -> Iterator[tuple[Path, dict[str, Any]]]:
    """Every mapping of the document where a table's keys might be written: the top, defaults, each entry."""
    yield (), data
    if isinstance(data.get("defaults"), dict):
        yield ("defaults",), data["defaults"]
    for section in ("namespaces", "tables"):
        entries = data.get(section)
        if isinstance(entries, dict):
            for key, value in entries.items():
                if isinstance(value, dict):
                    yield (section, key), value


def _structure(data: dict[str, Any], source: SourceMap) -> Iterator[Diagnostic]:
    for path, block in _setting_blocks(data):
        for key in block:
            if key in STRUCTURE_KEYS:
                yield Diagnostic(
                    "TP701", Severity.ERROR, source.key((*path, key)),
                    f"an environment overlay may not declare a table or its columns ('{key}')",
                    "declare it once in the table's file under policies/; an overlay sets only catalog and "
                    f"{', '.join(SETTINGS_SECTIONS)}")


def _without_structure(data: dict[str, Any]) -> dict[str, Any]:
    """The document without the keys TP701 reported (so they are not reported again as unknown)."""
    def clean(block: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in block.items() if k not in STRUCTURE_KEYS}

    kept = clean(data)
    if isinstance(kept.get("defaults"), dict):
        kept["defaults"] = clean(kept["defaults"])
    for section in ("namespaces", "tables"):
        if isinstance(kept.get(section), dict):
            kept[section] = {k: clean(v) if isinstance(v, dict) else v for k, v in kept[section].items()}
    return kept


def _names(data: dict[str, Any], source: SourceMap) -> Iterator[Diagnostic]:
    """Names that do not parse (TP107), a table name without a namespace (TP109) and one table or namespace
    written twice (TP704)."""
    for section, minimum in (("namespaces", 1), ("tables", 2)):
        seen: dict[tuple[str, ...], str] = {}
        for key in data.get(section) or {} if isinstance(data.get(section), dict) else {}:
            try:
                name = parse_name(key)
            except ValueError as exc:
                yield Diagnostic("TP107", Severity.ERROR, source.key((section, key)), f"{section}: {exc}",
                                 "write names as the policies do, e.g. logs.app_events")
                continue
            if len(name) < minimum:
                yield Diagnostic("TP109", Severity.ERROR, source.key((section, key)),
                                 f"table name '{key}' has no namespace", "write namespace.table")
            elif name in seen:
                yield Diagnostic("TP704", Severity.ERROR, source.key((section, key)),
                                 f"'{key}' names the same {section[:-1]} as '{seen[name]}'",
                                 "merge the two entries into one")
            else:
                seen[name] = key


def _properties(data: dict[str, Any], source: SourceMap) -> Iterator[Diagnostic]:
    """Property keys Spark or Iceberg refuse, or that a lifecycle setting owns (as in a table file)."""
    from .checks.properties import property_findings

    for path, block in _setting_blocks(data):
        if path and isinstance(block.get("properties"), dict):
            yield from property_findings(block["properties"], source, at=path)


def _declared_values(overlay: EnvironmentOverlay, source: SourceMap) -> Iterator[Diagnostic]:
    """Lifecycle values that mean nothing on their own (a zero max_age, an orphan cutoff under 24h), reported
    where the overlay writes them, once, whichever tables they reach."""
    from .checks.lifecycle import declared_lifecycle

    blocks: list[tuple[Path, OverlaySettings]] = [(("defaults",), overlay.defaults)] if overlay.defaults else []
    blocks += [((section, key), settings) for section, entries in (("namespaces", overlay.namespaces),
                                                                    ("tables", overlay.tables))
               for key, settings in entries.items()]
    for path, settings in blocks:
        yield from declared_lifecycle(settings.lifecycle, source, at=path)


def check_references(project: Project, overlay: OverlayFile) -> list[Diagnostic]:
    """Every table and namespace the overlay names must be declared by the project's policies: an overlay
    adjusts what the policies declare, it never declares (or silently misses) a table."""
    tables = {t.name for t in project.tables}
    namespaces = {t.name[:k] for t in project.tables for k in range(1, len(t.name))}
    namespaces |= {ns.name for ns in project.namespaces}
    found = []
    for section, keys, known, code, kind in (("tables", overlay.tables, tables, "TP702", "table"),
                                             ("namespaces", overlay.namespaces, namespaces, "TP703", "namespace")):
        for key in keys:
            try:
                name = parse_name(key)
            except ValueError:
                continue  # reported by parse_environment
            if name in known or (kind == "table" and len(name) < 2):
                continue
            names = sorted((format_name(n) for n in known), key=natural_key)
            close = difflib.get_close_matches(format_name(name), names, n=1, cutoff=0.6)
            listed = ", ".join(names[:12]) + (", ..." if len(names) > 12 else "")
            hint = f"did you mean '{close[0]}'?" if close else f"declared {kind}s: {listed or 'none'}."
            found.append(Diagnostic(code, Severity.ERROR, overlay.source.key((section, key)),
                                    f"no policy declares {kind} '{key}' (environment '{overlay.name}')",
                                    f"{hint} Otherwise declare the {kind} under policies/, or remove this entry"))
    return found
