"""``tablepolicy validate``: kept apart from the other commands so that validating imports the policy models and
checks only, not the planner, the renderers or a catalog client."""

from __future__ import annotations

from pathlib import Path
from typing import assert_never

import typer

import tablepolicy
from tablepolicy.compiler.render.findings import findings_json, github_annotations

from .exits import Exit
from .formats import FindingsFormat
from .output import show_diagnostics, summary_line


def validate(path: Path, *, output: FindingsFormat = FindingsFormat.text, environment: str | None = None) -> int:
    # without an environment every overlay is checked against the policies; with one, the tables under it
    checked = tablepolicy.validate(path, environment=environment)
    diagnostics, files = checked.findings, checked.files
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
