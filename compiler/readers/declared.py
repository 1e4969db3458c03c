"""The readers declared for a table: the org rules' list, replaced by a namespace's (the nearest wins), replaced
by the table's own; and the lists that name one engine twice with different versions (TP122)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from .. import codes
from ..diagnostics import Diagnostic, Location, Severity
from ..effective import namespace_chain
from ..loader import LoadedTable, Project
from ..policy.readers import Reader
from ..yamlsource import SourceMap


@dataclass(frozen=True)
class DeclaredReader:
    engine: str
    version: str
    severity: Severity  # of what it cannot read
    source: SourceMap  # the file declaring it
    index: int  # its place in that file's readers: list
    in_rules: bool = False  # declared by the org rules (else by a namespace or the table)

    @property
    def where(self) -> Location:
        return self.source.value(("rules", "readers", self.index) if self.in_rules else ("readers", self.index))

    @property
    def named(self) -> str:
        return f"{self.engine} {self.version}"


def readers_for(project: Project, table: LoadedTable) -> list[DeclaredReader]:
    """The readers whose reads the table's checks judge (none when nothing declares any)."""
    rules = next((r for r in project.rules if r.rules.readers is not None), None)
    default = Severity.WARNING if rules is not None and rules.rules.readers_severity == "warning" else Severity.ERROR
    declared: tuple[list[Reader], SourceMap, bool] | None = None
    if rules is not None and rules.rules.readers is not None:
        declared = (rules.rules.readers, rules.source, True)
    for namespace in namespace_chain(project, table):
        if namespace.defaults.readers is not None:
            declared = (namespace.defaults.readers, namespace.source, False)
    if table.policy.readers is not None:
        declared = (table.policy.readers, table.source, False)
    if declared is None:
        return []
    readers, source, in_rules = declared
    first = {r.engine: i for i, r in reversed(list(enumerate(readers)))}  # a second entry of an engine is TP122
    return [DeclaredReader(r.engine, r.version, _severity(r, default), source, i, in_rules)
            for i, r in enumerate(readers) if first[r.engine] == i]


def _severity(reader: Reader, default: Severity) -> Severity:
    if reader.severity is None:
        return default
    return Severity.WARNING if reader.severity == "warning" else Severity.ERROR


def conflicting_readers(project: Project) -> Iterator[Diagnostic]:
    """TP122 at each ``readers:`` entry naming an engine an earlier entry of its list names at another version."""
    lists: list[tuple[list[Reader] | None, SourceMap, tuple[str, ...]]] = [
        (r.rules.readers, r.source, ("rules", "readers")) for r in project.rules]
    lists += [(n.defaults.readers, n.source, ("readers",)) for n in project.namespaces]
    lists += [(t.policy.readers, t.source, ("readers",)) for t in project.tables if table_declares(t)]
    for readers, source, at in lists:
        first: dict[str, tuple[int, str]] = {}
        for index, reader in enumerate(readers or []):
            if reader.engine not in first:
                first[reader.engine] = (index, reader.version)
                continue
            earlier, version = first[reader.engine]
            if version != reader.version:
                yield Diagnostic(
                    codes.TP122, Severity.ERROR, source.value((*at, index, "version")),
                    f"reader {reader.engine} is declared twice, at versions {version} and {reader.version}",
                    f"keep one entry with the oldest version in use (first declared at "
                    f"{source.value((*at, earlier))})")


def table_declares(table: LoadedTable) -> bool:
    """Whether a present table declares readers of its own, without building a policy restored from the model
    cache (pydantic's JSON, where a key is never part of an escaped string)."""
    if table.state != "present":
        return False
    if table.model is None and '"readers":[' not in (table.model_json or ""):
        return False
    return table.policy.readers is not None


def any_declared(project: Project) -> bool:
    """Whether any file declares readers (else the checks cost nothing)."""
    return any(r.rules.readers is not None for r in project.rules) or \
        any(n.defaults.readers is not None for n in project.namespaces) or any(map(table_declares, project.tables))
