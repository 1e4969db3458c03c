"""health and maintain: what the tables' metadata says, and the lifecycle work policy makes due."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, assert_never

import typer

from compiler.maintenance.due import MaintenancePlan, TableMaintenance, maintenance_plan
from compiler.maintenance.select import selection
from compiler.render.maintenance_report import report_json
from compiler.render.maintenance_text import maintenance_json, render_health, render_maintenance
from runtime.cli.checking import cache_dir
from runtime.cli.commands import open_reader, valid_project
from runtime.cli.exits import Exit
from runtime.cli.formats import Format, HealthFormat
from runtime.cli.views import catalog_header, paint, show_maintenance_report
from runtime.target import Target, resolve_target

if TYPE_CHECKING:
    from runtime.maintain import Locations


def due_now(
    path: Path, catalog: str | None, environment: str | None = None, *, tables: list[str] | None = None,
    only: list[str] | None = None, locations: Locations | None = None,
    on_work: Callable[[TableMaintenance], None] = lambda _t: None, target: Target | None = None,
) -> tuple[MaintenancePlan, Target]:
    """``tables``/``only``: ``--table``/``--only`` (checked before the catalog is read); ``locations``: the
    run's map of table locations, reused when the run removes orphan files; ``on_work``: told of each table
    with due work as soon as it is decided; ``target``: the catalog and environment, when the caller resolved
    them already. The environment's lifecycle is the one due."""
    from runtime.health import CatalogHealth
    from runtime.maintain import Locations, orphan_scanner

    target = target or resolve_target(path, catalog, environment)
    config = target.catalog
    project = valid_project(path, environment=environment)
    chosen = selection((t.name for t in project.tables if t.state == "present"), tables or [], only or [])
    with open_reader(config) as reader:
        scan = orphan_scanner(reader, locations if locations is not None else Locations())
        now = datetime.now(UTC).replace(microsecond=0)
        return maintenance_plan(project, CatalogHealth(reader, scan), now, selection=chosen,
                                on_work=on_work), target


def health(path: Path, catalog: str | None, *, output: HealthFormat, html: Path | None = None,
           environment: str | None = None) -> int:
    plan, target = due_now(path, catalog, environment)
    config = target.catalog
    if html is not None:
        from compiler.render.health_html import TableReport, render_health_html

        reports = [TableReport(t.health, t.actions) for t in plan.tables]
        assert plan.now is not None  # due_now decides at one moment: the page says that one
        html.write_text(render_health_html(reports, target.header(), plan.now), encoding="utf-8")
        typer.echo(f"Wrote the health report of {len(reports)} table(s) to {html}", err=True)
    match output:
        case HealthFormat.json:
            typer.echo(maintenance_json(plan, config.name, config.summary()), nl=False)
        case HealthFormat.prometheus:
            from compiler.render.prometheus import render_prometheus

            assert plan.now is not None  # due_now decides at one moment
            typer.echo(render_prometheus(plan, config.name, plan.now), nl=False)
        case HealthFormat.text:
            catalog_header(target)
            typer.echo(render_health(plan, lambda t, c: paint(t, c)), nl=False)
        case _:
            assert_never(output)
    return Exit.OK


def maintain(
    path: Path, catalog: str | None, *, dry_run: bool, master: str, conf: list[str], json_report: Path | None,
    output: Format = Format.text, tables: list[str] | None = None, only: list[str] | None = None,
    environment: str | None = None,
) -> int:
    """Decide, then (without ``dry_run``) run with progress on stderr; the report goes to stdout as
    ``output`` asks and to ``json_report``."""
    from compiler.maintenance.sequence import estimated
    from compiler.render.maintenance import action_sql
    from runtime.cli.progress import maintain_progress
    from runtime.maintain import Locations
    from runtime.spark.session import SessionOnDemand, SparkOptions

    locations = Locations()
    target = resolve_target(path, catalog, environment)
    # Spark starts on a thread as soon as a table with work for Spark is decided, never on a run that needs none
    spark = None if dry_run else SessionOnDemand(target.catalog, SparkOptions.from_flags(master, conf))
    plan, target = due_now(path, catalog, environment, tables=tables, only=only, locations=locations,
                           on_work=lambda t: spark.start() if spark is not None and t.needs_spark else None,
                           target=target)
    config = target.catalog
    if output is Format.text:
        catalog_header(target)
        typer.echo(render_maintenance(plan, lambda t, c: paint(t, c), catalog=config.name if dry_run else None),
                   nl=False)
    if dry_run or not plan.actions:
        report = estimated(plan, lambda a: action_sql(a, config.name), config.summary())
    else:
        from runtime.maintain import run_maintenance

        assert spark is not None
        with maintain_progress() as progress:
            report = run_maintenance(plan, config, spark.options, lock_dir=cache_dir(path), progress=progress,
                                     locations=locations, session=spark)
    show_maintenance_report(report, output, idle=not plan.actions)
    if json_report is not None:
        json_report.write_text(report_json(report), encoding="utf-8")
    return Exit.ERROR if report.failed else Exit.OK

