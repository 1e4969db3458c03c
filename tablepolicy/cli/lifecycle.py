"""health and maintain: what the tables' metadata says, and the lifecycle work policy makes due."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import assert_never

import typer

import tablepolicy
from tablepolicy.compiler.render.maintenance_report import report_json
from tablepolicy.compiler.render.maintenance_text import maintenance_json, render_health, render_maintenance

from ..events import Event, MaintenanceDecided
from .exits import Exit
from .formats import Format, HealthFormat
from .output import catalog_header, paint, show_diagnostics, show_maintenance_report


def health(path: Path, catalog: str | None, *, output: HealthFormat, html: Path | None = None,
           environment: str | None = None) -> int:
    outcome = tablepolicy.health(tablepolicy.invocation(path, catalog=catalog, environment=environment))
    plan, target = outcome.decided, outcome.target
    config = target.catalog
    show_diagnostics(outcome.unreadable)  # what a declared reader already cannot read (stderr: any format)
    if html is not None:
        from tablepolicy.compiler.render.health_html import TableReport, refs_of, render_health_html

        reports = [TableReport(t.health, t.actions, refs_of(t)) for t in plan.tables]
        assert plan.now is not None  # health decides at one moment: the page says that one
        html.write_text(render_health_html(reports, target.header(), plan.now, outcome.views), encoding="utf-8")
        typer.echo(f"Wrote the health report of {len(reports)} table(s) to {html}", err=True)
    match output:
        case HealthFormat.json:
            typer.echo(maintenance_json(plan, config.name, config.summary(), outcome.views), nl=False)
        case HealthFormat.prometheus:
            from tablepolicy.compiler.render.prometheus import render_prometheus

            assert plan.now is not None  # health decides at one moment
            typer.echo(render_prometheus(plan, config.name, plan.now), nl=False)
        case HealthFormat.text:
            catalog_header(target)
            typer.echo(render_health(plan, lambda t, c: paint(t, c), outcome.views), nl=False)
        case _:
            assert_never(output)
    return Exit.OK


def maintain(
    path: Path, catalog: str | None, *, dry_run: bool, master: str, conf: list[str], json_report: Path | None,
    output: Format = Format.text, tables: list[str] | None = None, only: list[str] | None = None,
    environment: str | None = None,
) -> int:
    """tablepolicy.maintain, its decisions shown as soon as they are made and its progress on stderr; the report
    goes to stdout as ``output`` asks and to ``json_report``."""
    from .progress import maintain_progress

    run = tablepolicy.invocation(path, catalog=catalog, environment=environment)  # once: the API is handed it
    target, config = run.target, run.catalog
    # the progress display starts once the decisions are shown and work begins: rich's live display takes over
    # the terminal while it runs, and the decisions are stdout's, printed before it
    with contextlib.ExitStack() as running:
        shown: list[Callable[[Event], None]] = []

        def told(event: Event) -> None:
            if isinstance(event, MaintenanceDecided):
                if output is Format.text:
                    catalog_header(target)
                    typer.echo(render_maintenance(event.plan, lambda t, c: paint(t, c),
                                                  catalog=config.name if dry_run else None), nl=False)
                return
            if not shown:
                shown.append(running.enter_context(maintain_progress()))
            shown[0](event)

        outcome = tablepolicy.maintain(run, tables=tables or [], only=only or [], dry_run=dry_run, spark_master=master,
                                       spark_conf=dict(item.split("=", 1) for item in conf), progress=told)
    report = outcome.report
    show_maintenance_report(report, output, idle=not outcome.decided.actions)
    if json_report is not None:
        json_report.write_text(report_json(report), encoding="utf-8")
    return Exit.ERROR if report.failed else Exit.OK
