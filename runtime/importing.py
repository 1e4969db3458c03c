"""``import``: policy YAML for tables and views the catalog already holds, written all or nothing.

Exact names, ``NS.*``/``NS.**`` patterns and namespaces select tables; each becomes a policy file under ``out``
(or, for exact names without ``out``, a document the caller prints). Nothing is written unless every table
resolves and no file would be overwritten or declared twice.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from tablepolicy.compiler.catalog.config import CatalogConfig
from tablepolicy.compiler.diagnostics import Diagnostics
from tablepolicy.compiler.errors import CatalogError, TablePolicyError
from tablepolicy.compiler.iceberg.names import format_name
from tablepolicy.compiler.importer import (
    ExactTable,
    Inventory,
    NamespaceTables,
    Selector,
    namespace_selector,
    parse_selector,
    policy_file,
    policy_yaml,
    select_tables,
    view_policy_yaml,
)
from tablepolicy.compiler.loader import display_path
from tablepolicy.compiler.paths import find_project

if TYPE_CHECKING:
    from tablepolicy.compiler.model.table import TableState
    from tablepolicy.compiler.model.view import CurrentView

    from .catalog.reader import CatalogReader

Document = Callable[[str], str]  # the policy text, given the editor schema header to start with


class ImportUsageError(TablePolicyError):
    """The names and options of an import do not fit together (checked before the catalog is opened)."""


class ImportRefused(TablePolicyError):
    """Nothing was written: ``problems`` lists every reason (a name that resolves to no table; with
    ``conflicts``, files in the way or tables declared in another file)."""

    def __init__(self, problems: list[str], *, conflicts: bool = False) -> None:
        self.problems = tuple(problems)
        self.conflicts = conflicts
        super().__init__("; ".join(self.problems) + "; nothing was written")


def import_selectors(tables: list[str], namespaces: list[str], *, recursive: bool, out: Path | None) -> list[Selector]:
    """The names and options of an import checked together, before the catalog is opened."""
    if not tables and not namespaces:
        raise ImportUsageError("import: name the tables (sales.orders, 'sales.*', 'sales.**') or give --namespace NS")
    if recursive and not namespaces:
        raise ImportUsageError("--recursive applies to --namespace; with a pattern write 'sales.**'")
    try:
        selectors = [parse_selector(t) for t in tables]
        selectors += [namespace_selector(n, recursive=recursive) for n in namespaces]
    except ValueError as exc:
        raise ImportUsageError(str(exc)) from None
    if out is None and any(isinstance(s, NamespaceTables) for s in selectors):
        raise ImportUsageError("a namespace import writes one file per table: give --out DIR (e.g. --out policies/)")
    if out is not None and out.exists() and not out.is_dir():
        raise ImportUsageError(f"--out {out}: is a file; give the policies folder to write the files under")
    return selectors


def read_documents(tables: list[str], namespaces: list[str], config: CatalogConfig, *, recursive: bool,
                   out: Path | None) -> dict[tuple[str, ...], Document]:
    """The policy document of every selected table and view, by dotted name; ImportRefused when a name
    resolves to nothing (every such name listed)."""
    from .catalog.reader import CatalogReader

    selectors = import_selectors(tables, namespaces, recursive=recursive, out=out)
    with CatalogReader(config, create=False) as reader:
        exact = [s.name for s in selectors if isinstance(s, ExactTable)]
        loaded = {name: current.state for name in exact if (current := reader.table(name)) is not None}
        views = {name: view for name in exact if name not in loaded and reader.reads_views
                 and (view := reader.view(name)) is not None}
        listed = (reader.inventory() if len(loaded) + len(views) < len(selectors)
                  else Inventory(frozenset(), frozenset()))
        selection = select_tables(selectors, Inventory(listed.namespaces, listed.tables | set(loaded),
                                                       listed.views | set(views)))
        if selection.problems:
            raise ImportRefused(list(selection.problems))
        documents: dict[tuple[str, ...], Document] = {}
        for name in selection.tables:
            if name in views or (name in listed.views and name not in loaded):
                documents[name] = _view_document(views.get(name) or _current_view(reader, name))
            else:
                documents[name] = _table_document(loaded.get(name) or _current_state(reader, name))
    return documents


def _current_state(reader: CatalogReader, name: tuple[str, ...]) -> TableState:
    current = reader.table(name)
    if current is None:  # listed a moment ago: dropped while we read
        raise CatalogError(f"{format_name(name)} was dropped while it was being imported; run import again")
    return current.state


def _table_document(state: TableState) -> Document:
    return lambda preamble: policy_yaml(state, preamble=preamble)


def _view_document(view: CurrentView) -> Document:
    return lambda preamble: view_policy_yaml(view, preamble=preamble)


def _current_view(reader: CatalogReader, name: tuple[str, ...]) -> CurrentView:
    view = reader.view(name)
    if view is None:  # listed a moment ago: dropped while we read
        raise CatalogError(f"{format_name(name)} was dropped while it was being imported; run import again")
    return view


def write_documents(documents: dict[tuple[str, ...], Document], out: Path, *, force: bool
                    ) -> tuple[tuple[Path, ...], Diagnostics]:
    """One file per table or view at ``out/NS/NAME.yaml``, all or nothing: the files written, and what validate
    says of them as part of the project (an org rule they break)."""
    from .scaffold import schema_header

    paths = find_project(out)
    try:
        targets = {name: policy_file(Path(os.path.abspath(out)), name) for name in documents}
    except ValueError as exc:
        raise ImportRefused([str(exc)]) from None
    problems = import_conflicts(targets, paths.scope, force=force)
    if problems:
        raise ImportRefused(problems, conflicts=True)
    for name, target in targets.items():
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(documents[name](schema_header(target, paths.root)), encoding="utf-8")
    written = tuple(targets.values())
    return written, _findings_in(paths.scope, set(written))


def _findings_in(scope: Path, files: set[Path]) -> Diagnostics:
    """What validate says about ``files`` as part of the project at ``scope``."""
    from tablepolicy.compiler.validate import validate as validate_project

    _, diagnostics = validate_project(scope)
    return Diagnostics([d for d in diagnostics.items if Path(os.path.abspath(d.location.file)) in files])


def import_conflicts(targets: dict[tuple[str, ...], Path], scope: Path, *, force: bool) -> list[str]:
    """Every reason the files cannot be written as they are: a file in the way (without ``force``), a table
    the project already declares in another file, two tables one case-insensitive file system would merge."""
    problems = [f"{display_path(t)} exists; pass --force to overwrite it" for t in targets.values()
                if t.exists() and not force]
    declared = _declared_tables(scope)
    problems += [f"{format_name(name)} is already declared in {declared[name]}" for name, target in targets.items()
                 if name in declared and Path(os.path.abspath(declared[name])) != target]
    folded: dict[str, list[tuple[str, ...]]] = {}
    for name, target in targets.items():
        folded.setdefault(str(target).casefold(), []).append(name)
    problems += [f"{' and '.join(format_name(n) for n in names)} would share one file on a case-insensitive file "
                 "system; import one of them without --out and save it under another file name"
                 for names in folded.values() if len(names) > 1]
    return problems


def _declared_tables(scope: Path) -> dict[tuple[str, ...], str]:
    """The tables and views the project at ``scope`` declares, by name, with the file declaring each."""
    if not scope.exists():
        return {}
    from tablepolicy.compiler.validate import validate as validate_project

    project, _ = validate_project(scope)
    return {**{view.name: view.source.file for view in project.views},
            **{table.name: table.source.file for table in project.tables}}
