"""Terminal output: how findings, plans and progress look and where they go. Logic lives elsewhere; these only
format and print (the only modules that print). "View" in this project means an Iceberg view."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, assert_never

import typer

from tablepolicy.compiler.catalog.config import CatalogConfig
from tablepolicy.compiler.diagnostics import Diagnostic, Diagnostics, Severity
from tablepolicy.runtime.redaction import redact

from .formats import Format

if TYPE_CHECKING:
    from tablepolicy.compiler.maintenance.report import MaintenanceReport
    from tablepolicy.compiler.plan.model import Plan
    from tablepolicy.runtime.target import Target


def use_color(stream: object = sys.stdout) -> bool:
    if os.environ.get("NO_COLOR"):
        return False
    return bool(os.environ.get("FORCE_COLOR")) or bool(getattr(stream, "isatty", lambda: False)())


def paint(text: str, color: str, *, bold: bool = False, err: bool = False) -> str:
    return typer.style(text, fg=color, bold=bold) if use_color(sys.stderr if err else sys.stdout) else text


def render_plan(plan: Plan, output: Format, header: str, diagnostics: Diagnostics | None = None) -> str:
    """A plan as ``plan`` prints it and ``show`` prints a saved one: text for a terminal (after the catalog's
    header), markdown for a pull request (its findings beside it), JSON for CD (the plan file itself)."""
    match output:
        case Format.text:
            from tablepolicy.compiler.render.text import render_text

            return header + "\n" + render_text(plan, lambda t, c: paint(t, c))
        case Format.markdown:
            from tablepolicy.compiler.render.markdown import render_markdown

            return render_markdown(plan, diagnostics or Diagnostics(), catalog=header)
        case Format.json:
            from tablepolicy.compiler.plan.codec import plan_to_json

            return plan_to_json(plan)
        case _:
            assert_never(output)


def show_diagnostic(d: Diagnostic) -> None:
    color = "red" if d.severity is Severity.ERROR else "yellow"
    head = f"{d.location}: {paint(str(d.severity), color, bold=True, err=True)} {d.code}: {d.message}"
    typer.echo(head, err=True)
    if d.hint:
        typer.echo(f"    {paint('hint:', 'cyan', err=True)} {d.hint}", err=True)


def show_diagnostics(diagnostics: Diagnostics) -> None:
    for d in diagnostics:
        show_diagnostic(d)


def summary_line(diagnostics: Diagnostics, files: int) -> str:
    errors = sum(1 for d in diagnostics.items if d.severity is Severity.ERROR)
    warnings = len(diagnostics.items) - errors
    return f"{files} file(s) checked: {errors} error(s), {warnings} warning(s)"


def error(message: str) -> None:
    """An error line on stderr, masked with the secrets of every catalog this run resolved (runtime/redaction.py)."""
    typer.echo(f"{paint('error:', 'red', bold=True, err=True)} {redact(message)}", err=True)


def warning(message: str) -> None:
    """A warning line on stderr (the run goes on), masked as error() masks."""
    typer.echo(f"{paint('warning:', 'yellow', bold=True, err=True)} {redact(message)}", err=True)


def info(message: str) -> None:
    typer.echo(message)


def catalog_header(config: CatalogConfig | Target, *, err: bool = False) -> None:
    """The first line of a command's output: the catalog it targets, credentials redacted, and the environment
    when one is selected."""
    typer.echo(config.header(), err=err)


def show_maintenance_report(report: MaintenanceReport, output: Format, *, idle: bool) -> None:
    """The maintain report on stdout: text (after the run's progress; nothing more when no table needed
    work, the decisions already said so), markdown or JSON."""
    from tablepolicy.compiler.render.maintenance_report import report_json, report_markdown, report_text

    match output:
        case Format.json:
            typer.echo(report_json(report), nl=False)
        case Format.markdown:
            typer.echo(report_markdown(report), nl=False)
        case Format.text:
            if not idle:
                typer.echo(report_text(report, lambda t, c: paint(t, c)), nl=False)
        case _:
            assert_never(output)


def show_provenance(sha: str | None, policies: str) -> None:
    """On stderr (stdout may be JSON or a PR comment): a plan that records no commit, or a dirty one, says so."""
    if sha is None:
        typer.echo(f"note: {policies} is not in a git repository: the plan records no commit", err=True)
    elif sha.endswith("-dirty"):
        typer.echo(f"note: {policies} has uncommitted changes: the plan records {sha[:12]}-dirty, which no "
                   "commit holds; commit them to plan a reviewable state", err=True)
