"""Where a project is, whatever path the user gives: the project, its ``policies/``, a subfolder or one file.

The root is found by walking up from the path (a file's folder first) to the nearest folder named
``policies``; a folder that holds a ``policies/`` folder is that project. Anything else (a folder of
policy files with another name, or a lone file outside any ``policies/``) is a project of its own; inside a project
(a folder holding ``policies/``, no higher than the git work tree's top) it keeps that project's catalog and caches
(``home``), never a catalog beside it. With no path, the CLI finds the project from the working directory as git finds a
repository (``locate_policies``). The embedded catalog (``.lake/``) and the caches (``.tablepolicy/``) live beside
the policies folder.

>>> find_project(Path("shop/policies/logs/app_events.yaml")).policies.name
'policies'
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from . import codes
from .diagnostics import Diagnostic, Location, Severity
from .errors import TablePolicyError

POLICIES = "policies"
ENVIRONMENTS = "environments"  # the folder beside policies/ that holds the overlays
POLICY_SUFFIXES = (".yaml", ".yml")  # a policy file's (``.YAML`` counts as ``.yaml``)
_POLICY_SUFFIXES = (".yaml", ".yml", ".json")  # what a path that does not exist yet names a file by


@dataclass(frozen=True)
class ProjectPaths:
    policies: Path  # the policies folder: .lake/ and .tablepolicy/ live in its parent
    scope: Path  # what belongs to the project: the policies folder, or the path given when it stands alone
    selected: Path  # the path given: the plan is restricted to the tables declared under it
    home: Path | None = None  # the enclosing project's folder, for policies outside its policies/ folder

    @property
    def root(self) -> Path:
        """Where the embedded catalog (.lake/) and the caches (.tablepolicy/) live."""
        return self.home if self.home is not None else self.policies.parent

    @property
    def restricted(self) -> bool:
        return self.selected != self.scope

    def selects(self, file: str) -> bool:
        """Whether a policy file (its absolute, normalized path) lies under the path the user gave."""
        # a string prefix: ``self.selected in Path(file).parents`` builds every parent, seconds over 10,000 files
        whole = str(self.selected)
        return file == whole or file.startswith(whole.rstrip(os.sep) + os.sep)


ProjectPath = Path | ProjectPaths  # a path the user gave, or the project already found from it


def _looks_like_file(path: Path) -> bool:
    return path.is_file() or (not path.exists() and path.suffix in _POLICY_SUFFIXES)


def find_project(path: ProjectPath) -> ProjectPaths:
    """The project ``path`` belongs to. The runtime finds it once per command, at the edge, and hands the value
    on: a ProjectPaths given here is that value, returned as it is."""
    if isinstance(path, ProjectPaths):
        return path
    return _locate(path)


def _locate(path: Path) -> ProjectPaths:
    given = Path(os.path.abspath(path))
    if given.is_dir() and given.name != POLICIES and (given / POLICIES).is_dir():
        policies = given / POLICIES
        return ProjectPaths(policies, policies, policies)
    start = given.parent if _looks_like_file(given) else given
    for folder in (start, *start.parents):
        if folder.name == POLICIES:
            return ProjectPaths(folder, folder, given)
    # a file or folder of policies inside a project, outside its policies folder: a project of its own whose catalog
    # and caches are the enclosing project's, never a catalog beside it (start's parent)
    if given.exists() and (project := _enclosing_project(start)) is not None and start.parent != project:
        return ProjectPaths(start, given, given, home=project)
    return ProjectPaths(start, given, given)


def _enclosing_project(start: Path) -> Path | None:
    """The nearest folder at or above ``start`` holding a ``policies/`` folder, looking no higher than the top of
    the git work tree ``start`` is in (a folder holding ``.git``)."""
    for folder in (start, *start.parents):
        if (folder / POLICIES).is_dir():
            return folder
        if (folder / ".git").exists():
            return None
    return None


def locate_policies(cwd: Path) -> Path | None:
    """The policies folder of the project the working directory ``cwd`` is in, found as git finds a repository:
    ``cwd`` or the nearest folder above it that is named ``policies`` or holds one, looking no higher than the top
    of the git work tree (a folder holding ``.git``). None outside any project.

    >>> locate_policies(Path("/")) is None
    True
    """
    for folder in (cwd, *cwd.parents):
        if folder.name == POLICIES:
            return folder
        if (folder / POLICIES).is_dir():
            return folder / POLICIES
        if (folder / ".git").exists():
            return None
    return None


STRAY_SKIP = frozenset({POLICIES, ENVIRONMENTS, "node_modules", "wheels", "site", "venv"})


def stray_tables(paths: ProjectPaths, limit: int = 4096) -> list[Path]:
    """Table policy files a project holds outside its policies folder (in its root and the root's folders, not
    hidden ones): they are not part of the project, and a user who put one there expects it to be. A file counts
    when a line of its first ``limit`` bytes starts with ``table:``."""
    if paths.policies.name != POLICIES or not paths.root.is_dir():
        return []
    found = []
    try:
        entries = sorted(os.scandir(paths.root), key=lambda e: e.name)
    except OSError:
        return []
    candidates: list[os.DirEntry[str]] = []
    for entry in entries:
        if entry.name.startswith(".") or entry.name in STRAY_SKIP:
            continue
        try:
            if entry.is_dir(follow_symlinks=False):
                candidates.extend(sorted(os.scandir(entry.path), key=lambda e: e.name))
            else:
                candidates.append(entry)
        except OSError:
            continue
    for entry in candidates:
        if os.path.splitext(entry.name)[1].lower() not in POLICY_SUFFIXES:
            continue
        try:
            if not entry.is_file():
                continue
            with open(entry.path, "rb") as file:
                head = file.read(limit)
        except OSError:
            continue
        if any(line.startswith(b"table:") for line in head.splitlines()):
            found.append(Path(entry.path))
    return found


class EnvironmentNotDefinedError(TablePolicyError):
    """--env (or TABLEPOLICY_ENV) names no overlay of the project."""


def display_path(path: Path | str) -> str:
    """The path as the user would type it: relative to the working directory when possible."""
    try:
        return os.path.relpath(path)
    except ValueError:
        return str(path)


class FolderUnreadableError(TablePolicyError):
    """A folder of the project's policies or overlays cannot be listed: its files would go unchecked."""

    @classmethod
    def of(cls, folder: str | Path, exc: OSError) -> FolderUnreadableError:
        if isinstance(exc, FileNotFoundError):
            return cls(f"no such folder: {display_path(folder)}; give the project's policies/ folder, a subfolder or "
                       "one policy file")
        if isinstance(exc, NotADirectoryError):  # /dev/null, a socket, a file without a policy's suffix
            return cls(f"{display_path(folder)} is neither a folder nor a policy file (*.yaml, *.yml); give the "
                       "project's policies/ folder, a subfolder or one policy file")
        return cls(f"cannot list {display_path(folder)}: {exc.strerror or exc}; make it readable for this user "
                   "(the files in it would otherwise go unchecked)")


def environment_files(paths: ProjectPaths) -> dict[str, Path]:
    """The project's overlays by name (``environments/prod.yaml`` is ``prod``), sorted by name."""
    folder = paths.root / ENVIRONMENTS
    if not folder.is_dir():
        return {}
    found: dict[str, Path] = {}
    try:
        listed = sorted(folder.iterdir())
    except OSError as exc:
        raise FolderUnreadableError.of(folder, exc) from None
    for file in listed:
        if file.suffix.lower() in POLICY_SUFFIXES and file.is_file():
            if file.stem in found:
                raise EnvironmentNotDefinedError(
                    f"environment '{file.stem}' is defined twice: {display_path(found[file.stem])} and "
                    f"{display_path(file)}; keep one")
            found[file.stem] = file
    return dict(sorted(found.items()))


def policy_files(path: str) -> list[str]:
    """The policy files under the folder ``path`` (absolute when it is), in ``discover``'s order, as strings."""
    return [file for _, file in sorted(_policy_files(path, ()))]  # Path's order: by parts


def _policy_files(folder: str, parts: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], str]]:
    """The parts (below the folder walked from) and the path of every policy file under ``folder``: ``Path.rglob``'s
    walk (hidden folders included, symlinked folders not entered, a symlink to a file counted) without a Path per
    entry, which cost a second over 10,000 files. A folder that cannot be listed is an error, never skipped."""
    try:
        entries = list(os.scandir(folder))
    except OSError as exc:
        raise FolderUnreadableError.of(folder, exc) from None
    for entry in entries:
        try:
            if entry.is_dir(follow_symlinks=False):
                yield from _policy_files(entry.path, (*parts, entry.name))
            elif os.path.splitext(entry.name)[1].lower() in POLICY_SUFFIXES and entry.is_file():
                yield (*parts, entry.name), entry.path
        except OSError:
            continue


def stray_findings(paths: ProjectPaths) -> list[Diagnostic]:
    """A warning (TP010) for each table policy file the project holds outside its policies folder (read every run,
    never cached: a file there is outside every cache's view)."""
    return [Diagnostic(codes.TP010, Severity.WARNING, Location(display_path(stray)),
                       "a table declared outside the project's policies/ folder, so no command reads it",
                       f"move it under {display_path(paths.policies)} (a folder per namespace), or out of the project "
                       "if it is not a policy") for stray in stray_tables(paths)]
