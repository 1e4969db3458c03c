"""Table health and due maintenance -> terminal text and JSON (views only: nothing is decided here)."""

from __future__ import annotations

import json
from dataclasses import asdict
from datetime import UTC, datetime

from ..iceberg.names import format_name
from ..maintenance.actions import Action
from ..maintenance.due import MaintenancePlan, TableMaintenance
from ..maintenance.health import TOP_PARTITIONS, BloomCoverage, TableHealth
from ..maintenance.refs import ref_health, ref_lines
from ..maintenance.view_health import ViewsHealth, view_lines
from .maintenance import action_sql
from .text import MARKERS, Painter, no_color


def _time(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M UTC")


def health_lines(h: TableHealth) -> list[str]:
    snapshots = f"{h.snapshots}" + (f" (oldest {_time(h.snapshot_times[0])}, newest {_time(h.snapshot_times[-1])})"
                                    if h.snapshot_times else "")
    rows = f"{h.rows:,}"
    if h.expired is not None:
        rows += f" ({h.expired.rows:,} in files wholly before the retention cutoff, {h.expired.partial_files} " \
                f"file(s) partly)"
    return [
        f"  snapshots     {snapshots}",
        f"  data files    {h.data_files:,} ({h.data_bytes:,} bytes), {h.small_files:,} under 75% of the "
        f"{h.target_file_size:,}-byte target",
        f"  delete files  {h.position_delete_files:,} position, {h.equality_delete_files:,} equality",
        f"  manifests     {h.manifests:,}",
        f"  metadata      {h.metadata_files:,} file(s)",
        f"  rows          {rows}",
        *_partition_lines(h),
        *([f"  bloom filters {line}" for line in bloom_lines(h.bloom_filters)] if h.bloom_filters else []),
        *([f"  orphan files  {h.orphans.files:,} ({h.orphans.bytes:,} bytes) past the guard, {h.orphans.young:,} newer"
           + (f"; removal refused: {h.orphans.refused}" if h.orphans.refused else "")] if h.orphans else []),
    ]


def bloom_lines(c: BloomCoverage) -> list[str]:
    """The erasure key's bloom filter coverage, and what to do about files without filters (text and HTML)."""
    share = f"{c.covered_bytes / c.bytes:.0%}" if c.bytes else "–"
    lines = [f"{c.covered_files:,} of {c.files:,} data file(s) ({c.covered_bytes:,} of {c.bytes:,} bytes, {share}) "
             f"have a filter on {', '.join(c.columns)}"
             + (f"; {c.unread:,} footer(s) could not be read" if c.unread else "")]
    if c.covered_files < c.files:
        lines.append("files written before the filters were set have none: erase reads them whole until "
                     "compaction (tablepolicy maintain) rewrites them with filters")
    return lines


SHOWN_PARTITIONS = 3  # partitions with the most small files in the text view (the HTML page: TOP_PARTITIONS)


def _partition_lines(h: TableHealth) -> list[str]:
    """The partitions with the most small files, their values as a person reads them (``hour=2026-11-24 05:00``)."""
    worst = [p for p in h.partitions if p.small][:SHOWN_PARTITIONS]
    lines = [f"  {'small files' if i == 0 else '':<14}{p.readable}: {p.small:,} of {p.files:,} file(s)"
             for i, p in enumerate(worst)]
    if worst and (more := max(h.small_partition_count, len(worst)) - len(worst)):
        lines.append(f"  {'':<14}… and {more:,} more partition(s) with small files (--format json or --html lists "
                     f"the first {TOP_PARTITIONS})")
    return lines


def action_lines(action: Action, paint: Painter, catalog: str | None = None) -> list[str]:
    sign, color = MARKERS[action.safety]
    lines = [paint(f"  {sign} {action.summary}  [{action.safety} {action.code}]", color), f"      why: {action.reason}"]
    if catalog is not None:
        lines += [f"      {line}" for line in (action_sql(action, catalog) + ";").splitlines()]
    return lines


def _heading(table: TableMaintenance, paint: Painter) -> list[str]:
    return ["", paint(f"table {format_name(table.table)}", "cyan")]


def render_health(plan: MaintenancePlan, paint: Painter = no_color, views: ViewsHealth | None = None) -> str:
    """Table by table, then (``views``) the views of the selected namespaces."""
    lines = [
        line
        for t in plan.tables
        for line in [*_heading(t, paint), *health_lines(t.health),
                     *(ref_lines(ref_health(t.health, t.basis.effective, t.basis.now)) if t.basis else []),
                     f"  due now       {', '.join(a.action for a in t.actions) or 'nothing'}",
                     *(f"  not due       {k.action}: {k.reason}" for k in t.skips)]
    ]
    viewed = ["", *view_lines(views)] if views is not None else []
    return "\n".join([*lines, *_missing(plan), *viewed, ""]).lstrip("\n")


def render_maintenance(plan: MaintenancePlan, paint: Painter = no_color, catalog: str | None = None) -> str:
    """The due actions table by table; with ``catalog``, the SQL each runs (``--dry-run``)."""
    due = [t for t in plan.tables if t.actions]
    lines = [line for t in plan.tables if t.actions or t.skips
             for line in [*_heading(t, paint), *(x for a in t.actions for x in action_lines(a, paint, catalog)),
                          *(f"  - skip {k.action}  [{k.code}]: {k.reason}" for k in t.skips)]]
    count = len(plan.actions)
    lines += ["", f"{count} action(s) due on {len(due)} of {len(plan.tables)} table(s)." if count
              else f"No maintenance due on {len(plan.tables)} table(s).", *_missing(plan)]
    return "\n".join(lines).lstrip("\n") + "\n"


def _missing(plan: MaintenancePlan) -> list[str]:
    if not plan.missing:
        return []
    return [f"Not in the catalog yet (run tablepolicy apply first): {', '.join(format_name(n) for n in plan.missing)}"]


def maintenance_json(plan: MaintenancePlan, catalog: str, target: dict[str, str] | None = None,
                     views: ViewsHealth | None = None) -> str:
    """``target``: the catalog as the report's first key (name, type, redacted URI); ``views`` (health): the views
    of the selected namespaces, last."""
    return json.dumps({
        "catalog": target or {"name": catalog},
        "tables": [{"table": list(t.table), "health": t.health.model_dump(mode="json"),
                    # each branch and tag other than main as the text shows it: age, what it alone keeps alive
                    "refs": [asdict(r) for r in ref_health(t.health, t.basis.effective, t.basis.now)] if t.basis
                    else [],
                    "actions": [{**a.model_dump(mode="json"), "summary": a.summary, "sql": action_sql(a, catalog)}
                                for a in t.actions],
                    "skipped": [{"code": k.code, "action": k.action, "reason": k.reason} for k in t.skips]}
                   for t in plan.tables],
        "missing": [list(n) for n in plan.missing],
        **({"views": views.model_dump(mode="json")} if views is not None else {}),
    }, indent=2) + "\n"
