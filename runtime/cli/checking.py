"""``tablepolicy validate`` and where a project keeps its caches: kept apart from the other commands so that
validating imports the policy models and checks only, not the planner, the renderers or a catalog client."""

from __future__ import annotations

from pathlib import Path
from typing import assert_never

import typer

from compiler.project import load_selected
from compiler.render.findings import findings_json, github_annotations
from runtime.caches.folder import project_cache
from runtime.cli.exits import Exit
from runtime.cli.formats import FindingsFormat
from runtime.cli.views import show_diagnostics, summary_line
from runtime.forked import FORKED
from runtime.target import requested_environment


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
