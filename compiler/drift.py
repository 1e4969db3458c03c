"""The reverse view of a plan: what the catalog holds that git does not say. Pure: the catalog comes in as a
plan, the current tables and an inventory; tablepolicy.compiler.render.drift prints the result as text or JSON.

Three kinds of finding, of which only the first two are drift (``--detailed-exitcode`` exits 2 on them):

- a declared table that is missing from the catalog or that apply would change;
- a table in a namespace git manages (a declared table or namespace defaults there) that no policy declares;
- unmanaged: a namespace git never mentions (no declared table in it or under it, no namespace defaults), and
  a table outside the managed namespaces. Listed, never drift: a catalog holds more than one team's tables.

``rules.ignore_unmanaged`` (``_rules.yaml``) hides undeclared namespaces and tables by glob pattern; what it
hides is counted, so nothing disappears silently. Properties other tools set are listed, never drift.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Protocol

from .catalog.current import CurrentTable
from .diff.changes import Change
from .diff.properties import owned_keys
from .iceberg.names import format_name, natural_key
from .importer import Inventory
from .loader import Project
from .model.properties import DECLARED_REFS, SERVER_PROPERTIES, declared_in
from .model.table import TableState
from .plan.model import Plan

Name = tuple[str, ...]
# properties engines set on their own: never listed as another tool's
ENGINE_KEYS = frozenset({"owner", "write.parquet.compression-codec", "comment", *SERVER_PROPERTIES})


class TableSource(Protocol):
    def table(self, name: Name) -> CurrentTable | None: ...


@dataclass(frozen=True)
class TableDrift:
    """One declared table: ``missing`` from the catalog, or the ``changes`` apply would make (none: in sync),
    and the properties, branches and tags set outside git (listed, not drift)."""

    table: Name
    missing: bool = False
    changes: tuple[Change, ...] = ()
    unowned: tuple[tuple[str, str], ...] = ()
    unowned_refs: tuple[tuple[str, str], ...] = ()  # (kind, name) of refs git never declared (apply leaves them)
    kind: str = "table"  # or "view"

    @property
    def status(self) -> str:
        return "missing" if self.missing else "differs" if self.changes else "in_sync"


@dataclass(frozen=True)
class Unmanaged:
    """The namespaces git never mentions and the tables outside the managed namespaces (each sorted)."""

    namespaces: tuple[Name, ...] = ()
    tables: tuple[Name, ...] = ()

    def tables_in(self, namespace: Name) -> int:
        """How many of the tables lie directly in ``namespace`` (a nested namespace is listed on its own)."""
        return sum(1 for t in self.tables if t[:-1] == namespace)


@dataclass(frozen=True)
class Drift:
    tables: tuple[TableDrift, ...]
    undeclared: tuple[Name, ...]  # in a managed namespace, declared by no policy
    unmanaged: Unmanaged | None  # None: not looked for (drift of part of the project)
    ignored: Unmanaged = field(default_factory=Unmanaged)
    patterns: tuple[str, ...] = ()  # rules.ignore_unmanaged of every rules file, in file order

    @property
    def drifted(self) -> bool:
        return bool(self.undeclared) or any(t.status != "in_sync" for t in self.tables)


def ignore_patterns(project: Project) -> tuple[str, ...]:
    """``rules.ignore_unmanaged`` of every rules file of the project, each pattern once."""
    return tuple(dict.fromkeys(p for loaded in project.rules for p in loaded.rules.ignore_unmanaged))


def ignored(name: Name, patterns: Iterable[str]) -> bool:
    """Whether a pattern matches the name (``ns``, ``a.b``, ``ns.table``) or a namespace it lies in."""
    candidates = [format_name(name[:end]) for end in range(1, len(name) + 1)]
    return any(fnmatchcase(candidate, pattern) for pattern in patterns for candidate in candidates)


OWN_NAMESPACE = ("tablepolicy",)  # tablepolicy's own tables (the erasure ledger in the lake): never unmanaged


def unmanaged(project: Project, inventory: Inventory) -> tuple[Unmanaged, Unmanaged]:
    """(listed, ignored): what the catalog holds outside what git mentions, split by the ignore patterns
    (tablepolicy's own namespace left out)."""
    inventory = dataclasses.replace(
        inventory, namespaces=frozenset(n for n in inventory.namespaces if n[:1] != OWN_NAMESPACE),
        tables=frozenset(t for t in inventory.tables if t[:1] != OWN_NAMESPACE))
    declared = {t.name for t in project.tables}
    managed = ({t.name[:-1] for t in project.tables} | {v.name[:-1] for v in project.views}
               | {ns.name for ns in project.namespaces})
    mentioned = {name[:end] for name in managed for end in range(1, len(name) + 1)}
    namespaces = sorted((ns for ns in inventory.namespaces if ns not in mentioned), key=natural_key)
    tables = sorted((t for t in inventory.tables if t not in declared and t[:-1] not in managed), key=natural_key)
    patterns = ignore_patterns(project)
    listed = Unmanaged(tuple(n for n in namespaces if not ignored(n, patterns)),
                       tuple(t for t in tables if not ignored(t, patterns)))
    hidden = Unmanaged(tuple(n for n in namespaces if ignored(n, patterns)),
                       tuple(t for t in tables if ignored(t, patterns)))
    return listed, hidden


def table_drift(plan: Plan, source: TableSource, desired: dict[Name, TableState]) -> list[TableDrift]:
    """Each table of the plan as the catalog holds it; a table dropped while drift read it is left out."""
    found = []
    for table in plan.tables:
        if table.kind == "view":  # missing, or what apply would replace
            found.append(TableDrift(table.table, missing=not table.requirement.exists,
                                    changes=tuple(table.changes) if table.requirement.exists else (), kind="view"))
            continue
        if not table.requirement.exists:
            found.append(TableDrift(table.table, missing=True))
            continue
        current = source.table(table.table)
        if current is None:
            continue
        want = desired.get(table.table)
        owned = owned_keys(current.state, want) if want is not None else set(current.state.properties)
        unowned = sorted(k for k in set(current.state.properties) - owned - ENGINE_KEYS
                         if not k.startswith("tablepolicy."))
        declared = {r.name for r in want.refs} if want is not None else set()
        declared |= declared_in(current.state.properties, DECLARED_REFS)
        found.append(TableDrift(table.table, changes=tuple(table.changes),
                                unowned=tuple((k, current.state.properties[k]) for k in unowned),
                                unowned_refs=tuple((r.kind, r.name) for r in current.state.refs
                                                   if r.name not in declared)))
    return found


def find_drift(plan: Plan, source: TableSource, desired: dict[Name, TableState], project: Project,
               inventory: Inventory | None) -> Drift:
    """``inventory``: every namespace and table of the catalog, or None to leave unmanaged ones out (drift of
    part of the project: what lies outside it is not its business)."""
    patterns = ignore_patterns(project)
    undeclared = tuple(n for n in plan.unmanaged if not ignored(n, patterns))
    hidden_undeclared = tuple(n for n in plan.unmanaged if ignored(n, patterns))
    listed, hidden = (unmanaged(project, inventory) if inventory is not None
                      else (None, Unmanaged()))
    return Drift(tuple(table_drift(plan, source, desired)), undeclared, listed,
                 Unmanaged(hidden.namespaces, tuple(sorted(hidden.tables + hidden_undeclared, key=natural_key))),
                 patterns)
