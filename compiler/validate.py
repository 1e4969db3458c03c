"""validate: load, check, and return the project with every finding of every file."""

from __future__ import annotations

from pathlib import Path

from compiler.checks import check_project
from compiler.diagnostics import Diagnostics
from compiler.loader import Project, load_project
from compiler.modelcache import ModelCache


def validate(path: Path, cache: ModelCache | None = None) -> tuple[Project, Diagnostics]:
    project, diagnostics = load_project(path, cache)
    diagnostics.extend(check_project(project, cache))
    if cache is not None and not diagnostics.has_errors:
        cache.save()
    return project, diagnostics
