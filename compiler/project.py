"""Where a project is, whatever path the user gives: the project, its ``policies/``, a subfolder or one file.

The root is found by walking up from the path (a file's folder first) to the nearest folder named
``policies``; a folder that holds a ``policies/`` folder is that project. Anything else (a folder of
policy files with another name, or a lone file outside any ``policies/``) is a project of its own.
The embedded catalog (``.lake/``) and the caches (``.tablepolicy/``) live beside the policies folder.

>>> find_project(Path("shop/policies/logs/app_events.yaml")).policies.name
'policies'
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from compiler.diagnostics import Diagnostics, Location
from compiler.loader import Project
from compiler.modelcache import ModelCache
from compiler.plan.model import Plan

POLICIES = "policies"
_POLICY_SUFFIXES = (".yaml", ".yml", ".json")


@dataclass(frozen=True)
class ProjectPaths:
    policies: Path  # the policies folder: .lake/ and .tablepolicy/ live in its parent
    scope: Path  # what belongs to the project: the policies folder, or the path given when it stands alone
    selected: Path  # the path given: the plan is restricted to the tables declared under it

    @property
    def root(self) -> Path:
        return self.policies.parent

    @property
    def restricted(self) -> bool:
        return self.selected != self.scope

    def selects(self, file: Path) -> bool:
        """Whether a policy file lies under the path the user gave."""
        return file == self.selected or self.selected in file.parents


def _looks_like_file(path: Path) -> bool:
    return path.is_file() or (not path.exists() and path.suffix in _POLICY_SUFFIXES)


def find_project(path: Path) -> ProjectPaths:
    given = Path(os.path.abspath(path))
    if given.is_dir() and given.name != POLICIES and (given / POLICIES).is_dir():
        policies = given / POLICIES
        return ProjectPaths(policies, policies, policies)
    start = given.parent if _looks_like_file(given) else given
    for folder in (start, *start.parents):
        if folder.name == POLICIES:
            return ProjectPaths(folder, folder, given)
    return ProjectPaths(start, given, given)


@dataclass
class SelectedProject(Project):
    """A project restricted to the tables declared under the path the user gave. Namespace defaults all stay
    (they apply by name); tables declared elsewhere in the project are never reported as unmanaged."""

    declared_elsewhere: frozenset[tuple[str, ...]] = frozenset()
    managed: frozenset[tuple[str, ...]] = frozenset()  # the namespaces the selection declares tables or defaults in


def load_selected(path: Path, cache: ModelCache | None = None) -> tuple[Project, int, Diagnostics]:
    """The whole project ``path`` belongs to, validated, then restricted to the tables under ``path``: the
    project, how many policy files ``path`` holds, and the findings that concern them. ``cache``: the project's
    model cache (``.tablepolicy/models.json`` beside its policies folder)."""
    from compiler.loader import discover, display_path
    from compiler.validate import validate

    paths = find_project(path)
    project, diagnostics = validate(paths.scope, cache if paths.scope.is_dir() else None)
    project, diagnostics = restrict(project, diagnostics, paths)
    files = sum(1 for f in discover(paths.scope) if paths.selects(f.absolute())) if paths.scope.exists() else 0
    if paths.selected.exists() and not files:
        diagnostics.error("TP006", Location(display_path(paths.selected)), "no policy files here",
                          "policy files end in .yaml or .yml; give the project's policies/ folder, a subfolder "
                          "or one policy file")
    elif not paths.selected.exists() and paths.scope.exists():
        diagnostics.error("TP000", Location(display_path(paths.selected)), "no such file or directory")
    return project, files, diagnostics


def restrict(project: Project, diagnostics: Diagnostics, paths: ProjectPaths) -> tuple[Project, Diagnostics]:
    """The project restricted to ``paths.selected``, with the findings of the selected files and of every file
    that is not another table's (namespace defaults, and files too broken to say what they are)."""
    if not paths.restricted:
        return project, diagnostics

    def selected(file: str) -> bool:
        return paths.selects(Path(os.path.abspath(file)))

    others = [t for t in project.tables if not selected(t.source.file)]
    other_files = {t.source.file for t in others}
    tables = [t for t in project.tables if selected(t.source.file)]
    managed = {t.name[:-1] for t in tables} | {ns.name for ns in project.namespaces if selected(ns.source.file)}
    kept = Diagnostics([d for d in diagnostics.items if selected(d.location.file) or (
        d.location.file not in other_files and not _declares_table(d.location.file))])
    return SelectedProject(root=project.root, tables=tables, namespaces=project.namespaces,
                           declared_elsewhere=frozenset(t.name for t in others), managed=frozenset(managed)), kept


_TABLE_KEY = re.compile(r"^table\s*:", re.MULTILINE)


def _declares_table(file: str) -> bool:
    """Whether a file that did not load says it declares a table (its findings then concern only that table)."""
    try:
        return bool(_TABLE_KEY.search(Path(file).read_text(encoding="utf-8", errors="replace")[:100_000]))
    except OSError:
        return False


def restrict_plan(plan: Plan, project: Project) -> Plan:
    """Unmanaged tables as the selection sees them: in its namespaces, declared by no file of the project."""
    if not isinstance(project, SelectedProject):
        return plan
    unmanaged = [n for n in plan.unmanaged if n not in project.declared_elsewhere and n[:-1] in project.managed]
    # recorded in the plan file, so apply compares only these tables with the plan it derives from git
    selected = sorted({t.name for t in project.tables})
    return plan.model_copy(update={"unmanaged": unmanaged, "selected": selected})
