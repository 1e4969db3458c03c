"""health and maintain: what the tables' metadata says, and the maintenance lifecycle policy makes due."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import typer

from compiler.catalog.config import resolve_catalog
from compiler.catalog.reader import CatalogReader
from compiler.maintenance.due import MaintenancePlan, maintenance_plan
from compiler.model.names import format_name
from compiler.render.maintenance_text import maintenance_json, render_health, render_maintenance
from runtime.cli.commands import cache_dir, valid_project
from runtime.cli.exits import Exit
from runtime.cli.views import error, info, paint


def due_now(path: Path, catalog: str | None) -> tuple[MaintenancePlan, str]:
    project = valid_project(path)
    config = resolve_catalog(catalog, path)
    with CatalogReader(config) as reader:
        return maintenance_plan(project, reader, datetime.now(UTC).replace(microsecond=0)), config.name


def health(path: Path, catalog: str | None, *, output: str) -> int:
    plan, name = due_now(path, catalog)
    text = maintenance_json(plan, name) if output == "json" else render_health(plan, lambda t, c: paint(t, c))
    typer.echo(text, nl=False)
    return Exit.OK


def maintain(
    path: Path, catalog: str | None, *, dry_run: bool, master: str, conf: list[str], json_report: Path | None
) -> int:
    from runtime.maintain import run_maintenance
    from runtime.spark.session import SparkOptions

    plan, name = due_now(path, catalog)
    typer.echo(render_maintenance(plan, lambda t, c: paint(t, c), catalog=name if dry_run else None), nl=False)
    if dry_run or not plan.actions:
        return Exit.OK
    options = SparkOptions(master=master, conf=dict(item.split("=", 1) for item in conf))
    report = run_maintenance(
        plan, resolve_catalog(catalog, path), options, lock_dir=cache_dir(path),
        on_result=lambda r: info(f"  {format_name(r.action.table)}: {r.action.action}: {r.status}"
                                 + (f" ({r.seconds:.1f}s) {_output(r.output)}" if r.status == "done" else "")))
    if json_report is not None:
        json_report.write_text(json.dumps([
            {"table": list(r.action.table), "action": r.action.action, "status": r.status, "sql": r.sql,
             "seconds": round(r.seconds, 3), "output": r.output, "error": r.error} for r in report.results
        ], indent=2, default=str) + "\n", encoding="utf-8")
    for failed in (r for r in report.results if r.status == "failed"):
        error(failed.error or failed.action.summary)
    done = sum(r.status == "done" for r in report.results)
    info(f"Maintenance complete: {done} of {len(report.results)} action(s) done.")
    return Exit.ERROR if report.failed else Exit.OK


def _output(row: dict[str, object]) -> str:
    return ", ".join(f"{key}={value}" for key, value in row.items())
