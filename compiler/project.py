"""A project's policies as the compiler reads them: the files under the project (compiler/paths.py says where a
project is, whatever path the user gives), its environment overlays, and the selection the user's path makes.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .diagnostics import Diagnostics, Location
from .environment import OverlayFile, check_references, parse_environment
from .loader import Project
from .modelcache import ModelCache
from .parallel import IN_PROCESS, Workers
from .paths import ENVIRONMENTS, ProjectPath, ProjectPaths
from .paths import EnvironmentNotDefinedError as EnvironmentNotDefinedError  # where it was first
from .paths import environment_files as environment_files
from .paths import find_project as find_project  # where it was first: runtime modules import it here
from .verdict import Verdict, kept, selection, selection_findings, verdict_of

if TYPE_CHECKING:
    from .plan.model import Plan  # restrict_plan only edits one: validate needs no plan model


@dataclass
class SelectedProject(Project):
    """A project restricted to the tables declared under the path the user gave. Namespace defaults all stay
    (they apply by name); tables declared elsewhere in the project are never reported as unmanaged."""

    declared_elsewhere: frozenset[tuple[str, ...]] = frozenset()
    managed: frozenset[tuple[str, ...]] = frozenset()  # the namespaces the selection declares tables or defaults in


def read_environment(paths: ProjectPaths, name: str, diagnostics: Diagnostics, flag: str = "--env"
                     ) -> OverlayFile | None:
    """The overlay file ``name`` of the project; a name that resolves to no file is an error listing those
    that exist. Findings of the file go to ``diagnostics`` (its ``loaded`` is None when it has errors)."""
    from .loader import display_path

    files = environment_files(paths)
    folder = display_path(paths.root / ENVIRONMENTS)
    if not files:
        raise EnvironmentNotDefinedError(
            f"{flag} {name}: the project defines no environments ({folder}/ holds no *.yaml overlay); create "
            f"{folder}/{name}.yaml or drop {flag}")
    if name not in files:
        raise EnvironmentNotDefinedError(
            f"{flag} {name}: no environment '{name}'; {folder}/ defines: {', '.join(files)}")
    file = files[name]
    try:
        text = file.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        diagnostics.error("TP000", Location(display_path(file)), f"environment overlay is not UTF-8 text (byte "
                          f"{exc.start})", "fix the encoding: save the file as UTF-8")
        return None
    except OSError as exc:
        diagnostics.error("TP000", Location(display_path(file)), f"cannot read environment overlay: {exc.strerror}",
                          "check that the file exists and this user may read it")
        return None
    overlay, findings = parse_environment(name, text, display_path(file))
    diagnostics.extend(findings)
    return overlay


@dataclass(frozen=True)
class WholeProject:
    """The whole project a path belongs to, validated: what ``load_selected`` restricts to the path given."""

    paths: ProjectPaths
    project: Project
    diagnostics: Diagnostics  # the policy files' findings
    overlays: Diagnostics  # the overlays' own findings and their references to the policies: kept whatever the path
    listed: list[Path]  # every policy file of the project (absolute)

    def selected(self) -> tuple[Project, int, Diagnostics]:
        """The project restricted to the tables under the path given, how many policy files that path holds, and
        the findings that concern them."""
        project, diagnostics = restrict(self.project, self.diagnostics, self.paths)
        diagnostics.extend(self.overlays.items)
        files, diagnostics = selection_findings(self.paths, [str(f) for f in self.listed], diagnostics)
        return project, files, diagnostics

    def verdict(self) -> Verdict:
        """The findings as a later run that finds nothing changed restricts them (compiler/verdict.py)."""
        return verdict_of(self.diagnostics.items, self.overlays.items, _declaring(self.project))


def load_selected(path: ProjectPath, cache: ModelCache | None = None, environment: str | None = None, *,
                  every_environment: bool = False, environment_flag: str = "--env", workers: Workers = IN_PROCESS,
                  overlay_read: tuple[OverlayFile, Diagnostics] | None = None) -> tuple[Project, int, Diagnostics]:
    """The whole project ``path`` belongs to, validated, then restricted to the tables under ``path``: the
    project, how many policy files ``path`` holds, and the findings that concern them. See ``load_whole``."""
    return load_whole(path, cache, environment, every_environment=every_environment,
                      environment_flag=environment_flag, workers=workers, overlay_read=overlay_read).selected()


def load_whole(path: ProjectPath, cache: ModelCache | None = None, environment: str | None = None, *,
               every_environment: bool = False, environment_flag: str = "--env", workers: Workers = IN_PROCESS,
               overlay_read: tuple[OverlayFile, Diagnostics] | None = None,
               listed: list[str] | None = None) -> WholeProject:
    """The whole project ``path`` belongs to, validated. ``cache``: the project's model cache
    (``.tablepolicy/models.tsv`` beside its policies folder). ``environment``: the overlay to layer on top (its
    findings included; ``overlay_read``: that overlay already read, with its findings, when the caller read it to
    find the catalog); ``every_environment``: without one, check every overlay the project has against its
    policies (what ``validate`` does). ``workers``: see compiler.validate. ``listed``: the project's policy files
    (absolute) when the caller listed them."""
    from .loader import discover
    from .validate import validate

    paths = find_project(path)
    found = Diagnostics()  # the overlays' own findings: kept whatever the selection
    if overlay_read is not None and overlay_read[0].name == environment:
        overlay: OverlayFile | None = overlay_read[0]
        found.extend(overlay_read[1].items)
    else:
        overlay = read_environment(paths, environment, found, environment_flag) if environment is not None else None
    files = [Path(f) for f in listed] if listed is not None else discover(paths.scope) if paths.scope.exists() else []
    project, diagnostics = validate(paths.scope, cache if paths.scope.is_dir() else None,
                                    overlay.loaded if overlay is not None else None, workers, files or None)
    others = [read_environment(paths, name, found) for name in environment_files(paths)] if (
        environment is None and every_environment) else []
    overlay_files = {c.source.file for c in (overlay, *others) if c is not None}
    # a policy file with errors declares nothing: its tables would read as undeclared (TP702/TP703) and the first
    # finding would point at an environment instead of the culprit; the names are checked once the policies load
    policies_failed = any(d.location.file not in overlay_files for d in diagnostics.errors)
    for checked in (overlay, *others):
        if checked is not None and not policies_failed:
            found.extend(check_references(project, checked))
    return WholeProject(paths, project, diagnostics, found, files)


def restrict(project: Project, diagnostics: Diagnostics, paths: ProjectPaths) -> tuple[Project, Diagnostics]:
    """The project restricted to ``paths.selected``, with the findings of the selected files and of every file
    that is not another table's (namespace defaults, and files too broken to say what they are)."""
    if not paths.restricted:
        return project, diagnostics
    selected = selection(paths)
    others = [t for t in project.tables if not selected(t.source.file)]
    tables = [t for t in project.tables if selected(t.source.file)]
    views = [v for v in project.views if selected(v.source.file)]
    managed = ({t.name[:-1] for t in tables} | {v.name[:-1] for v in views}
               | {ns.name for ns in project.namespaces if selected(ns.source.file)})
    declares = _declaring(project)
    kept_findings = Diagnostics([d for d in diagnostics.items if kept(d.location.file, paths, selected, declares)])
    return SelectedProject(root=project.root, tables=tables, namespaces=project.namespaces, rules=project.rules,
                           views=views,
                           environment=project.environment, declared_elsewhere=frozenset(t.name for t in others),
                           managed=frozenset(managed)), kept_findings


def _declaring(project: Project) -> Callable[[str], bool]:
    """Whether a file (as findings show it) declares a table: one of the project's, or, for a file that did not
    load, by its text."""
    files = {t.source.file for t in project.tables}
    return lambda file: file in files or _declares_table(file)


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
    selected = sorted({t.name for t in project.tables} | {v.name for v in project.views})
    return plan.model_copy(update={"unmanaged": unmanaged, "selected": selected})
