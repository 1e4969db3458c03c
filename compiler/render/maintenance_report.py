"""A maintenance report (compiler/maintenance/report.py) -> terminal text, markdown (a PR or a ticket) and
JSON (``--json-report``, ``--format json``). Views only: the figures are computed elsewhere.

Per table: data files, average file size, snapshots and rows before and after, rows deleted, bytes
reclaimed, each action with its effect, the declared actions that did not run and why, failures with their
error. A dry run's "after" is the estimate (compiler/maintenance/projection.py): a range where the engine
decides (the files compaction writes, their size), so that the run's figure falls in it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, assert_never

from ..iceberg.names import format_name
from ..maintenance import actions
from ..maintenance.actions import SECTIONS, Action
from ..maintenance.decide import Skip
from ..maintenance.health import TableHealth
from ..maintenance.report import ActionRun, Effect, MaintenanceReport, Status, TableOutcome
from .text import Painter, no_color

REPORT_VERSION = 1


def _n(value: int | None) -> str:
    return "?" if value is None else f"{value:,}"


def effect_text(action: Action, effect: Effect) -> str:
    """``rewrote 40 files into 2``: one action's effect in words."""
    match action:
        case actions.DeleteExpiredRows():
            return f"deleted {_n(effect.rows_deleted)} row(s)"
        case actions.RewriteDataFiles():
            return _compaction_text(effect)
        case actions.RewritePositionDeletes():
            return f"rewrote {_n(effect.rewritten)} delete files into {_n(effect.written)}"
        case actions.RewriteManifests():
            return f"rewrote {_n(effect.rewritten)} manifests into {_n(effect.written)}"
        case actions.ExpireSnapshots():
            return f"expired {_n(effect.snapshots_expired)} snapshot(s)"
        case actions.RemoveOrphanFiles():
            if effect.files_removed is None:
                return "the location was not listed: Spark lists it"
            return f"removed {_n(effect.files_removed)} file(s) ({_n(effect.bytes_removed)} bytes)"
        case _:
            assert_never(action)


def _compaction_text(effect: Effect) -> str:
    """``rewrote 40 files (80.0 KiB) into 2 (3.1 KiB)``; a dry run gives the range of files it may write and says
    the bytes are known after the run."""
    read = f" ({byte_size(effect.bytes_rewritten)})" if effect.bytes_rewritten is not None else ""
    into = _n(effect.written) if effect.written_most is None else f"{_n(effect.written)} to {_n(effect.written_most)}"
    if effect.bytes_written is not None:
        wrote = f" ({byte_size(effect.bytes_written)})"
    elif effect.bytes_rewritten:
        wrote = ", their size known after the run"
    else:
        wrote = ""
    return f"rewrote {_n(effect.rewritten)} files{read} into {into}{wrote}"


def step_text(step: ActionRun) -> str:
    """The outcome of one step after ``compaction ...``: ``done in 12.3s (rewrote 40 files into 2)``."""
    effect = effect_text(step.action, step.effect)
    match step.status:
        case Status.DONE:
            return f"done in {step.seconds:.1f}s ({effect})"
        case Status.ESTIMATED:
            return f"would run ({effect})"
        case Status.FAILED:
            return f"failed after {step.seconds:.1f}s: {first_line(step.error)}"
        case Status.REFUSED:
            return f"refused: {first_line(step.error)}"
        case Status.NOT_RUN:
            return first_line(step.error)
        case _:
            assert_never(step.status)


def skip_text(skip: Skip) -> str:
    return f"skipped: {skip.reason}"


def first_line(text: str | None) -> str:
    return (text or "").strip().splitlines()[0] if (text or "").strip() else "(no message)"


def average(h: TableHealth) -> int:
    return h.data_bytes // h.data_files if h.data_files else 0


def byte_size(n: int | None) -> str:
    if n is None:
        return "?"
    sign, n = ("-" if n < 0 else ""), abs(n)
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{sign}{n:,} {unit}" if unit == "bytes" else f"{sign}{n:,.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    raise AssertionError("unreachable")


def _range(low: int, high: int, show: Callable[[int], str]) -> str:
    """One figure, or the range a dry run can promise (``≤ 9.8 KiB`` when there is no lower bound)."""
    if low == high:
        return show(high)
    return f"≤ {show(high)}" if low == 0 else f"{show(low)}–{show(high)}"


def files_after(t: TableOutcome) -> str:
    return _range(*t.data_files_after, lambda n: f"{n:,}")


def average_after(t: TableOutcome) -> str:
    return _range(*t.average_after, byte_size)


FIGURES: tuple[tuple[str, Any, Any], ...] = (  # label, before (health), after (outcome)
    ("data files", lambda h: f"{h.data_files:,}", files_after),
    ("average file size", lambda h: byte_size(average(h)), average_after),
    ("snapshots", lambda h: f"{h.snapshots:,}", lambda t: f"{t.after.snapshots:,}"),
    ("rows", lambda h: f"{h.rows:,}", lambda t: f"{t.after.rows:,}"),
)


def _worked(report: MaintenanceReport) -> list[TableOutcome]:
    return [t for t in report.tables if t.steps]


def report_text(report: MaintenanceReport, paint: Painter = no_color) -> str:
    after = "after (estimated)" if report.dry_run else "after"
    lines = ["", paint("Dry run: what maintenance would do" if report.dry_run else "Maintenance report", "cyan")]
    for t in _worked(report):
        lines += ["", paint(f"table {format_name(t.table)}", "cyan"), f"  {'':<20}{'before':>16}  {after:>20}"]
        lines += [f"  {label:<20}{before(t.before):>16}  {after_of(t):>20}" for label, before, after_of in FIGURES]
        lines += [f"  {'rows deleted':<20}{t.rows_deleted:>16,}",
                  f"  {'bytes reclaimed':<20}{byte_size(t.bytes_reclaimed):>16}"]
        for step in t.steps:
            color = "red" if step.status.failed else "yellow" if step.status is Status.NOT_RUN else "green"
            lines.append(paint(f"  {SECTIONS[step.action.action]:<13} {step_text(step)}", color))
        lines += [f"  {SECTIONS[k.action]:<13} {skip_text(k)}" for k in t.skips]
    idle = len(report.tables) - len(_worked(report))
    lines += ["", _totals(report) + (f"; {idle} table(s) needed nothing" if idle else "")]
    return "\n".join(lines) + "\n"


def _totals(report: MaintenanceReport) -> str:
    steps = report.steps
    ok = sum(s.ok for s in steps)
    failed = sum(s.status.failed for s in steps)
    verb = "would run" if report.dry_run else "done"
    return (f"{ok} of {len(steps)} action(s) {verb} on {len(_worked(report))} table(s)"
            + (f", {failed} failed" if failed else ""))


def report_markdown(report: MaintenanceReport) -> str:
    """For a pull request or a ticket: one summary table, then each table's actions with reasons and SQL."""
    head = "Maintenance dry run" if report.dry_run else "Maintenance report"
    catalog = report.catalog.get("name", "")
    lines = [f"### {head} — catalog `{catalog}`", ""]
    worked = _worked(report)
    if not worked:
        lines += [f"No maintenance due on {len(report.tables)} table(s).", ""]
    else:
        after = "after (est.)" if report.dry_run else "after"
        lines += [f"| table | data files before → {after} | avg file size | snapshots | rows deleted | "
                  "bytes reclaimed | status |", "| --- | ---: | ---: | ---: | ---: | ---: | --- |"]
        for t in worked:
            status = "failed" if t.failed else ("due" if report.dry_run else "done")
            lines.append(
                f"| `{format_name(t.table)}` | {t.before.data_files:,} → {files_after(t)} | "
                f"{byte_size(average(t.before))} → {average_after(t)} | {t.before.snapshots:,} → "
                f"{t.after.snapshots:,} | {t.rows_deleted:,} | {byte_size(t.bytes_reclaimed)} | {status} |")
        lines.append("")
        for t in worked:
            lines += [f"#### `{format_name(t.table)}`", ""]
            for step in t.steps:
                lines.append(f"- **{SECTIONS[step.action.action]}** ({step.action.code}, {step.action.safety}): "
                             f"{step.action.summary} — {step_text(step)}  ")
                lines.append(f"  why: {step.action.reason}")
            lines += [f"- {SECTIONS[k.action]} ({k.code}): {skip_text(k)}" for k in t.skips]
            lines += ["", "<details><summary>SQL</summary>", "", "```sql",
                      *(f"{s.sql};" for s in t.steps if s.sql), "```", "", "</details>", ""]
    lines.append(_totals(report) + ".")
    if report.missing:
        lines.append(f"Not in the catalog yet: {', '.join(f'`{format_name(n)}`' for n in report.missing)}.")
    return "\n".join(lines) + "\n"


def _figures(h: TableHealth) -> dict[str, int]:
    return {"data_files": h.data_files, "data_bytes": h.data_bytes, "average_file_size": average(h),
            "snapshots": h.snapshots, "rows": h.rows, "manifests": h.manifests}


def _step(step: ActionRun) -> dict[str, Any]:
    action = step.action
    return {"section": SECTIONS[action.action], "action": action.action, "code": action.code,
            "safety": str(action.safety), "summary": action.summary, "reason": action.reason,
            "status": step.status, "effect": step.effect.as_json(), "seconds": round(step.seconds, 3),
            "bytes": step.effect.bytes_json(),
            "sql": step.sql, "output": step.output, "error": step.error}


def report_json(report: MaintenanceReport) -> str:
    """The same content as the text report, for machines; a dry run's "after" and effects are estimates."""
    return json.dumps({
        "catalog": report.catalog,
        "report_version": REPORT_VERSION,
        "dry_run": report.dry_run,
        "failed": report.failed,
        "tables": [{
            "table": list(t.table), "before": _figures(t.before), "after": _figures(t.after),
            "after_is_estimate": report.dry_run,
            # what a dry run can promise: each figure's least and most (equal when exact, and in a run)
            "after_range": {"data_files": list(t.data_files_after), "data_bytes": list(t.data_bytes_after),
                            "average_file_size": list(t.average_after)},
            "rows_deleted": t.rows_deleted,
            "bytes_reclaimed": t.bytes_reclaimed,
            "stored_bytes": {"before": t.stored_bytes[0], "after": t.stored_bytes[1]} if t.stored_bytes else None,
            "failed": t.failed, "steps": [_step(s) for s in t.steps],
            "skipped": [{"section": SECTIONS[k.action], "action": k.action, "code": k.code, "reason": k.reason}
                        for k in t.skips],
        } for t in report.tables],
        "missing": [list(n) for n in report.missing],
    }, indent=2, sort_keys=False, default=str) + "\n"
