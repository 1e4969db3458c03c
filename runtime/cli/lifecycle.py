"""health, maintain and erase: what the tables' metadata says, and the lifecycle work policy makes due."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import typer
from pyiceberg.table import Table

from compiler.catalog.config import CatalogConfig, resolve_catalog
from compiler.erasure.plan import erasure_plan
from compiler.erasure.requests import load_requests
from compiler.errors import PolicyError
from compiler.loader import display_path
from compiler.maintenance.due import MaintenancePlan, maintenance_plan
from compiler.maintenance.health import OrphanFigures
from compiler.model.names import format_name
from compiler.render.erasure import render_preview
from compiler.render.maintenance_text import maintenance_json, render_health, render_maintenance
from runtime.cli.commands import cache_dir, open_reader, valid_project
from runtime.cli.exits import Exit
from runtime.cli.views import catalog_header, error, info, paint


def due_now(path: Path, catalog: str | None) -> tuple[MaintenancePlan, CatalogConfig]:
    from runtime.maintain import shared_location
    from runtime.orphans import orphan_figures

    config = resolve_catalog(catalog, path)
    project = valid_project(path)
    with open_reader(config) as reader:
        def scan(name: tuple[str, ...], table: Table, guard: datetime) -> OrphanFigures | None:
            # a location another table shares cannot be judged from this table's metadata: the removal stays
            # due and maintain refuses it, naming the other table
            try:
                return None if shared_location(reader, name) else orphan_figures(table, guard)
            except Exception:  # storage this process cannot list (credentials, permissions): Spark lists it
                return None

        now = datetime.now(UTC).replace(microsecond=0)
        return maintenance_plan(project, reader, now, scan_orphans=scan), config


def health(path: Path, catalog: str | None, *, output: str, html: Path | None = None) -> int:
    plan, config = due_now(path, catalog)
    if html is not None:
        from compiler.render.health_html import TableReport, render_health_html

        reports = [TableReport(t.health, t.actions) for t in plan.tables]
        html.write_text(render_health_html(reports, config.header(), datetime.now(UTC)), encoding="utf-8")
        typer.echo(f"Wrote the health report of {len(reports)} table(s) to {html}", err=True)
    if output == "json":
        typer.echo(maintenance_json(plan, config.name, config.summary()), nl=False)
        return Exit.OK
    catalog_header(config)
    typer.echo(render_health(plan, lambda t, c: paint(t, c)), nl=False)
    return Exit.OK


def maintain(
    path: Path, catalog: str | None, *, dry_run: bool, master: str, conf: list[str], json_report: Path | None
) -> int:
    from runtime.maintain import run_maintenance
    from runtime.spark.session import SparkOptions

    plan, config = due_now(path, catalog)
    catalog_header(config)
    typer.echo(render_maintenance(plan, lambda t, c: paint(t, c), catalog=config.name if dry_run else None), nl=False)
    if dry_run or not plan.actions:
        return Exit.OK
    options = SparkOptions.from_flags(master, conf)
    report = run_maintenance(
        plan, config, options, lock_dir=cache_dir(path),
        on_result=lambda r: info(f"  {format_name(r.action.table)}: {r.action.action}: {r.status}"
                                 + (f" ({r.seconds:.1f}s) {_output(r.output)}" if r.status == "done" else "")))
    if json_report is not None:
        json_report.write_text(json.dumps({"catalog": config.summary(), "results": [
            {"table": list(r.action.table), "action": r.action.action, "status": r.status, "sql": r.sql,
             "seconds": round(r.seconds, 3), "output": r.output, "error": r.error} for r in report.results
        ]}, indent=2, default=str) + "\n", encoding="utf-8")
    for failed in (r for r in report.results if r.status in ("failed", "refused")):
        error(failed.error or failed.action.summary)
    done = sum(r.status == "done" for r in report.results)
    info(f"Maintenance complete: {done} of {len(report.results)} action(s) done.")
    return Exit.ERROR if report.failed else Exit.OK


def _output(row: dict[str, object]) -> str:
    return ", ".join(f"{key}={value}" for key, value in row.items())


def erase(
    path: Path, requests_file: Path, catalog: str | None, *, dry_run: bool, proof: Path | None, master: str,
    conf: list[str],
) -> int:
    from runtime.erase import preview_erasure, run_erasure
    from runtime.spark.session import SparkOptions

    config = resolve_catalog(catalog, path)
    project = valid_project(path)
    catalog_header(config)
    try:
        text = requests_file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        error(f"cannot read {display_path(requests_file)}: {exc}")
        return Exit.ERROR
    requests, diagnostics = load_requests(text, display_path(requests_file))
    if requests is None:
        raise PolicyError(diagnostics)
    with open_reader(config) as reader:
        states = {t.name: current.state for t in project.tables if (current := reader.table(t.name)) is not None}
    tables, findings = erasure_plan(project, requests, states)
    if findings.has_errors:
        raise PolicyError(findings)
    today = datetime.now(UTC).date()
    for table in tables:
        deadline = min(s.deadline for s in table.subjects)
        late = sorted({s.request for s in table.subjects if s.deadline < today})
        info(paint(f"- {table.summary} (earliest deadline {deadline})", "red")
             + (paint(f"; overdue: {', '.join(late)}", "red", bold=True) if late else ""))
    if dry_run:
        for preview in preview_erasure(tables, config):
            info(render_preview(preview).rstrip("\n"))
    if dry_run or not tables:
        return Exit.OK
    proofs = run_erasure(tables, config, SparkOptions.from_flags(master, conf),
                         lock_dir=cache_dir(path), on_progress=lambda message: info(f"  {message}"))
    document = {"catalog": config.summary(), "erased_at": datetime.now(UTC).isoformat(),
                "requests": [r.id for r in requests.model.requests], "tables": [p.as_json() for p in proofs]}
    if proof is not None:
        proof.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    for p in proofs:
        state = (paint("erased and proven", "green") if p.complete else paint("held", "yellow", bold=True)
                 if p.state == "held" else paint("NOT complete", "red", bold=True))
        info(f"  {format_name(p.table)}: {p.rows_before} row(s) in {len(p.files_with_keys)} file(s): {state}; "
             f"{len(p.snapshots_checked)} snapshot(s) checked, {p.rows_after} row(s) found after")
        for ref, files in p.held_by.items():
            info(f"  {format_name(p.table)}: legal hold '{ref}' keeps {len(files)} file(s) holding a key")
        if p.error:
            error(p.error)
        for ref in p.blocking_refs:
            error(f"{format_name(p.table)}: '{ref}' still keeps a snapshot whose files hold the keys; drop it "
                  f"(ALTER TABLE ... DROP TAG/BRANCH) and run erase again")
    return Exit.OK if all(p.state in ("complete", "held") for p in proofs) else Exit.ERROR
