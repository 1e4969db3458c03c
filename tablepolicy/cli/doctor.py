"""``tablepolicy doctor``: the checks of runtime/doctor.py for the selected catalog and environment, a line each
(✓ or ✗, what was checked, how to fix a ✗), or one JSON document. Exit 1 on any ✗."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from tablepolicy.runtime.doctor import Check, DoctorReport, selected_tables
from tablepolicy.runtime.doctor import doctor as run_checks
from tablepolicy.runtime.target import resolve_target

from .exits import Exit
from .formats import DoctorFormat
from .output import catalog_header, info, paint


def doctor(path: Path, catalog: str | None, *, environment: str | None, write_probe: bool, master: str | None,
           output: DoctorFormat) -> int:
    report = run_checks(resolve_target(path, catalog, environment), write_probe=write_probe, master=master,
                        tables=selected_tables(path))
    show_doctor(report, output)
    return Exit.OK if report.ok else Exit.ERROR


def show_doctor(report: DoctorReport, output: DoctorFormat) -> None:
    if output is DoctorFormat.json:
        typer.echo(json.dumps(report.as_json(), indent=2, ensure_ascii=False))
        return
    catalog_header(report.target)
    for check in report.checks:
        info(check_line(check))
    failed = sum(1 for c in report.checks if not c.ok)
    info(f"{len(report.checks)} checks: " + (f"{failed} failed" if failed else "all passed"))


def check_line(check: Check) -> str:
    """``✓ connection: listed 2 namespace(s) (ads, logs)`` or ``✗ warehouse: ... — fix: ...``."""
    if check.ok:
        return f"{paint('✓', 'green')} {check.name}: {check.detail}"
    return f"{paint('✗', 'red', bold=True)} {check.name}: {check.detail} — fix: {check.fix}"
