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
from dataclasses import dataclass
from pathlib import Path

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
        # a string prefix: ``self.selected in file.parents`` builds every parent, seconds over 10,000 files
        return file == self.selected or str(file).startswith(str(self.selected).rstrip(os.sep) + os.sep)


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
    return ProjectPaths(start, given, given)
