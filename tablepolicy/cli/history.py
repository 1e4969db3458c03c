"""``tablepolicy history TABLE``: the table's applies and data commits, one line each, oldest first."""

from __future__ import annotations

import json
from pathlib import Path

import typer

import tablepolicy

from .exits import Exit
from .formats import DriftFormat
from .output import catalog_header, info, paint


def history(table: str, catalog: str | None, policies: Path, *, output: DriftFormat) -> int:
    run = tablepolicy.invocation(policies, catalog=catalog)
    catalog_header(run.target, err=output is DriftFormat.json)
    events = tablepolicy.history(table, catalog=run.target, policies=run.project)
    if output is DriftFormat.json:
        typer.echo(json.dumps([e.as_json() for e in events], indent=2))
        return Exit.OK
    if not events:
        info(f"{table}: no apply stamped it and no snapshot wrote to it yet")
    for event in events:
        line = f"{event.at:%Y-%m-%d %H:%M:%S}Z  {event.text}"
        info(paint(line, "green") if event.kind == "apply" else paint(line, "yellow") if event.kind == "unreadable"
             else line)
    return Exit.OK
