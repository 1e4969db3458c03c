"""validate: load, check, and return the project with every finding of every file."""

from __future__ import annotations

from pathlib import Path

from compiler.checks import check_project
from compiler.diagnostics import Diagnostics
from compiler.loader import Project, load_project


def validate(path: Path) -> tuple[Project, Diagnostics]:
    project, diagnostics = load_project(path)
    diagnostics.extend(check_project(project))
    return project, diagnostics
