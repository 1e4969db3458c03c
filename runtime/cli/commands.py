"""What each command does: call the compiler or runtime, hand results to the views, return an exit code."""

from __future__ import annotations

from pathlib import Path

import typer

from compiler.catalog.config import resolve_catalog
from compiler.catalog.reader import CatalogReader
from compiler.desired import create_all
from compiler.errors import PolicyError
from compiler.fmt import YAMLError, format_text
from compiler.loader import Project, discover, display_path
from compiler.plan.model import Plan
from compiler.plan.planner import make_plan
from compiler.render.sql import statements
from compiler.render.text import render_text
from compiler.schema import policy_json_schema_text
from compiler.validate import validate as validate_project
from runtime.cli.exits import Exit
from runtime.cli.views import error, info, paint, show_diagnostics, summary_line


def valid_project(path: Path) -> Project:
    """The project, or PolicyError carrying every finding; warnings are shown either way."""
    project, diagnostics = validate_project(path)
    if diagnostics.has_errors:
        raise PolicyError(diagnostics)
    show_diagnostics(diagnostics)
    return project


def validate(path: Path) -> int:
    _, diagnostics = validate_project(path)
    show_diagnostics(diagnostics)
    files = len(discover(path)) if path.exists() else 0
    typer.echo(summary_line(diagnostics, files), err=True)
    return Exit.ERROR if diagnostics.has_errors else Exit.OK


def ddl(path: Path, catalog: str | None) -> int:
    project = valid_project(path)
    name = resolve_catalog(catalog, path).name
    for change in create_all(project):
        for statement in statements(change, name):
            info(f"-- {change.summary}\n{statement.sql};\n")
    return Exit.OK


def schema() -> int:
    typer.echo(policy_json_schema_text(), nl=False)
    return Exit.OK


def fmt(path: Path, *, check: bool) -> int:
    unformatted = 0
    for file in discover(path):
        text = file.read_text(encoding="utf-8")
        try:
            formatted = format_text(text)
        except YAMLError as exc:
            error(f"{display_path(file)}: not formatted, YAML does not parse: {str(exc).splitlines()[0]}")
            unformatted += 1
            continue
        if formatted == text:
            continue
        unformatted += 1
        if check:
            info(f"would reformat {display_path(file)}")
        else:
            file.write_text(formatted, encoding="utf-8")
            info(f"formatted {display_path(file)}")
    return Exit.ERROR if check and unformatted else Exit.OK


def compute_plan(path: Path, catalog: str | None) -> Plan:
    project = valid_project(path)
    config = resolve_catalog(catalog, path)
    return make_plan(project, CatalogReader(config), config.name)


def plan(path: Path, catalog: str | None, *, detailed_exitcode: bool) -> int:
    result = compute_plan(path, catalog)
    typer.echo(render_text(result, lambda text, color: paint(text, color)), nl=False)
    if detailed_exitcode and result.has_changes:
        return Exit.CHANGES
    return Exit.OK


def apply(path: Path, catalog: str | None, *, auto_approve: bool, master: str, conf: list[str]) -> int:
    from runtime.apply import apply_plan
    from runtime.spark.session import SparkOptions

    result = compute_plan(path, catalog)
    typer.echo(render_text(result, lambda text, color: paint(text, color)), nl=False)
    if not result.has_changes:
        return Exit.OK
    if not auto_approve and not typer.confirm("Apply these changes?", default=False):
        error("apply cancelled")
        return Exit.ERROR
    config = resolve_catalog(catalog, path)
    options = SparkOptions(master=master, conf=dict(item.split("=", 1) for item in conf))
    report = apply_plan(result, config, options,
                        lambda step: info(f"  [{step.index}] {step.statement.change.summary} ({step.seconds:.1f}s)"))
    info(f"Apply complete: {len(report.steps)} statement(s) executed.")
    return Exit.OK
