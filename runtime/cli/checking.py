"""``tablepolicy validate`` and where a project keeps its caches: kept apart from the other commands so that
validating imports the policy models and checks only, not the planner, the renderers or a catalog client."""

from __future__ import annotations

from pathlib import Path
from typing import assert_never

import typer

from compiler.paths import find_project
from compiler.project import load_selected
from compiler.render.findings import findings_json, github_annotations
from runtime.caches.models import FileModelCache
from runtime.cli.exits import Exit
from runtime.cli.formats import FindingsFormat
from runtime.cli.views import show_diagnostics, summary_line
from runtime.forked import FORKED
from runtime.target import requested_environment


def cache_dir(path: Path) -> Path:
    """``.tablepolicy/`` beside the project's policies directory (like Terraform's .terraform/)."""
    return find_project(path).root / ".tablepolicy"


def caches_on(path: Path) -> bool:
    """Caches live in ``.tablepolicy/`` when the project has that folder (init makes it; ``mkdir .tablepolicy``
    turns them on in a clone): a read-only command never creates a file or folder of its own accord."""
    return cache_dir(path).is_dir()


def project_cache(path: Path) -> FileModelCache | None:
    return FileModelCache.open(cache_dir(path) / "models.json") if caches_on(path) else None


def validate(path: Path, *, output: FindingsFormat = FindingsFormat.text, environment: str | None = None) -> int:
    # without an environment every overlay is checked against the policies; with one, the tables under it
    name, flag = requested_environment(environment)
    _, files, diagnostics = load_selected(path, project_cache(path), name, every_environment=True,
                                          environment_flag=flag, workers=FORKED)
    match output:
        case FindingsFormat.json:
            typer.echo(findings_json(diagnostics, files), nl=False)
        case FindingsFormat.github | FindingsFormat.text:
            if output is FindingsFormat.github:  # annotations for the workflow; the same findings readable below
                typer.echo(github_annotations(diagnostics), nl=False)
            show_diagnostics(diagnostics)
            typer.echo(summary_line(diagnostics, files), err=True)
        case _:
            assert_never(output)
    return Exit.ERROR if diagnostics.has_errors else Exit.OK
