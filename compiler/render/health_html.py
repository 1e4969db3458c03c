"""Table health -> one self-contained HTML page (inline CSS and SVG, nothing fetched at view time):
the tables at a glance, then per table its file-size histogram, small files per partition, snapshot
timeline, delete files, branches and tags (age, retention, snapshots each alone keeps alive) and the
maintenance due with its reasons; last, the views of the selected namespaces and whether each is git's."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from html import escape

from ..diff.changes import retention_text
from ..iceberg.names import format_name
from ..maintenance.actions import Action
from ..maintenance.due import TableMaintenance
from ..maintenance.health import SIZE_BUCKETS, TableHealth
from ..maintenance.refs import RefHealth, ref_age, ref_health
from ..maintenance.view_health import ViewHealth, ViewsHealth, status_text, version_age
from ..model.table import RefRetention
from .maintenance_text import bloom_lines

CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,sans-serif;margin:24px;color:#1f2328;background:#fff}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px}.muted{color:#656d76}
table{border-collapse:collapse;margin:8px 0}td,th{padding:4px 10px;border-bottom:1px solid #d0d7de;text-align:right}
td:first-child,th:first-child{text-align:left}.card{border:1px solid #d0d7de;border-radius:8px;padding:12px 16px;
margin:16px 0}.charts{display:flex;flex-wrap:wrap;gap:24px}.chart h3{font-size:13px;margin:4px 0}
.due{color:#9a6700}.ok{color:#1a7f37}ul{margin:6px 0 0 18px;padding:0}svg text{font-size:10px;fill:#656d76}
"""


@dataclass(frozen=True)
class TableReport:
    health: TableHealth
    due: Sequence[Action]
    refs: Sequence[RefHealth] = field(default=())  # branches and tags other than main, as ``health`` shows them


def refs_of(table: TableMaintenance) -> list[RefHealth]:
    """The table's branches and tags as ``health`` shows them (none for figures made without a policy)."""
    return ref_health(table.health, table.basis.effective, table.basis.now) if table.basis is not None else []


def _size(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if n < 1024 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TB"


def _bars(values: Sequence[int], labels: Sequence[str], color: str, title: str) -> str:
    width, height, gap = 46, 120, 8
    top = max(values, default=0) or 1
    parts = [f'<svg width="{len(values) * (width + gap) + gap}" height="{height + 34}" role="img" '
             f'aria-label="{escape(title)}">']
    for i, (value, label) in enumerate(zip(values, labels, strict=True)):
        h = round(height * value / top)
        x = gap + i * (width + gap)
        parts.append(f'<rect x="{x}" y="{height - h + 12}" width="{width}" height="{h}" fill="{color}"/>'
                     f'<text x="{x + width / 2}" y="{height - h + 9}" text-anchor="middle">{value}</text>'
                     f'<text x="{x + width / 2}" y="{height + 26}" text-anchor="middle">{escape(label)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _histogram(health: TableHealth) -> str:
    bounds = [_size(b).replace(".0 ", " ") for b in SIZE_BUCKETS]
    labels = [f"<{bounds[0]}", *(f"<{b}" for b in bounds[1:]), f">{bounds[-1]}"]
    values = list(health.size_histogram) or [0] * len(labels)
    return _chart("Data file sizes", _bars(values, labels, "#0969da", "data file size histogram"))


def _partitions(health: TableHealth) -> str:
    if not health.partitions:
        return _chart("Small files per partition", '<p class="muted">no data files</p>')
    rows = []
    for p in health.partitions:
        share = p.small / p.files if p.files else 0
        rows.append(f'<tr><td title="{escape(p.partition)}">{escape(p.readable)}</td><td>{p.small} / {p.files}</td>'
                    f'<td><svg width="120" height="10"><rect width="120" height="10" fill="#eaeef2"/>'
                    f'<rect width="{round(120 * share)}" height="10" fill="#bf8700"/></svg></td></tr>')
    table = "<table><tr><th>partition</th><th>small / files</th><th>small share</th></tr>" + "".join(rows)
    shown = len(health.partitions)
    more = (f'<p class="muted">{shown} of {health.partition_count} partitions shown: those with the most small files '
            f"({health.small_partition_count} hold any)</p>" if health.partition_count > shown else "")
    return _chart("Small files per partition", table + "</table>" + more)


def _timeline(health: TableHealth, now: datetime) -> str:
    snapshots = health.snapshot_log
    if not snapshots:
        return _chart("Snapshots", '<p class="muted">no snapshots</p>')
    width, start = 560, min(s.timestamp_ms for s in snapshots)
    end = max(int(now.timestamp() * 1000), max(s.timestamp_ms for s in snapshots))
    span = max(end - start, 1)
    referenced = {r.snapshot_id: r.name for r in health.refs}
    marks, labelled = [], 0
    for s in snapshots:
        x = 10 + round((width - 20) * (s.timestamp_ms - start) / span)
        color = "#8250df" if s.id in referenced else "#0969da"
        marks.append(f'<circle cx="{x}" cy="30" r="5" fill="{color}"><title>snapshot {s.id} at '
                     f'{datetime.fromtimestamp(s.timestamp_ms / 1000, UTC):%Y-%m-%d %H:%M} UTC</title></circle>')
        if s.id in referenced:  # labels alternate above and below the line so close refs stay readable
            y = 16 if labelled % 2 == 0 else 47
            labelled += 1
            marks.append(f'<text x="{x}" y="{y}" text-anchor="start">{escape(referenced[s.id])}</text>')
    first = datetime.fromtimestamp(start / 1000, UTC)
    svg = (f'<svg width="{width}" height="64" role="img" aria-label="snapshot timeline"><line x1="10" y1="30" '
           f'x2="{width - 10}" y2="30" stroke="#d0d7de"/>{"".join(marks)}<text x="10" y="62">{first:%Y-%m-%d}'
           f'</text><text x="{width - 10}" y="58" text-anchor="end">now</text></svg>')
    return _chart(f"Snapshots ({len(snapshots)})", svg)


def _chart(title: str, body: str) -> str:
    return f'<div class="chart"><h3>{escape(title)}</h3>{body}</div>'


def _refs(report: TableReport) -> str:
    if not report.refs:
        return '<h3>Branches and tags</h3><p class="muted">none but main</p>'
    kept = {r.name: r for r in report.health.refs}
    rows = []
    for ref in report.refs:
        info = kept.get(ref.name)
        keep = RefRetention(max_ref_age_ms=info.max_ref_age_ms, min_snapshots_to_keep=info.min_snapshots_to_keep,
                            max_snapshot_age_ms=info.max_snapshot_age_ms) if info is not None else RefRetention()
        note = ' <span class="due">the next expiry drops it</span>' if ref.expires else ""
        rows.append(f"<tr><td>{escape(ref.name)}</td><td>{ref.kind}</td><td>{ref.snapshot_id}</td>"
                    f"<td>{escape(ref_age(ref))}</td><td>{escape(retention_text(keep, ref.kind))}</td>"
                    f"<td>{ref.keeps}{note}</td></tr>")
    return ("<h3>Branches and tags</h3><table><tr><th>ref</th><th>type</th><th>snapshot</th><th>age</th>"
            "<th>retention</th><th>snapshots it alone keeps alive</th></tr>" + "".join(rows) + "</table>")


def _views(views: ViewsHealth) -> str:
    spaces = escape(", ".join(format_name(n) for n in views.namespaces) or "none")
    head = f'<section class="card" id="views"><h2>Views</h2><p class="muted">in {spaces}</p>'
    if views.unread is not None:
        return f'{head}<p class="muted">not read: {escape(views.unread)}</p></section>'
    if not views.views:
        return f'{head}<p class="muted">no views</p></section>'
    rows = "".join(_view_row(v) for v in views.views)
    return (f"{head}<table><tr><th>view</th><th>version</th><th>age of the version</th><th>git</th></tr>{rows}"
            "</table></section>")


def _view_row(view: ViewHealth) -> str:
    read = view.version_id is not None
    mark = "ok" if view.status == "same" else "due"
    return (f"<tr><td>{escape(format_name(view.view))}</td><td>{view.version_id if read else '–'}</td>"
            f"<td>{escape(version_age(view)) if read else '–'}</td>"
            f'<td class="{mark}" data-status="{view.status}">{escape(status_text(view))}</td></tr>')


def _card(report: TableReport, now: datetime) -> str:
    h = report.health
    name = escape(format_name(h.table))
    average = _size(h.data_bytes / h.data_files) if h.data_files else "–"
    due = ("<ul>" + "".join(f'<li class="due"><b>{escape(a.code)} {escape(a.action)}</b>: {escape(a.reason)}</li>'
                            for a in report.due) + "</ul>") if report.due else '<p class="ok">nothing due</p>'
    figures = (f"{h.data_files} data files ({_size(h.data_bytes)}, average {average}), {h.rows:,} rows, "
               f"{h.small_files} small; {h.position_delete_files} position and {h.equality_delete_files} equality "
               f"delete files; {h.manifests} manifests; {h.metadata_files} metadata files")
    charts = _histogram(h) + _partitions(h) + _timeline(h, now)
    filters = "".join(f'<p class="bloom">Bloom filters: {escape(line)}</p>' for line in bloom_lines(h.bloom_filters)
                      ) if h.bloom_filters else ""
    return (f'<section class="card" id="{name}"><h2>{name}</h2><p class="muted">{escape(figures)}</p>{filters}'
            f'<div class="charts">{charts}</div>{_refs(report)}<h3>Maintenance due</h3>{due}</section>')


def render_health_html(reports: Sequence[TableReport], catalog: str, now: datetime,
                       views: ViewsHealth | None = None) -> str:
    rows = []
    for r in reports:
        h = r.health
        share = f"{h.small_files / h.data_files:.0%}" if h.data_files else "–"
        rows.append(f'<tr><td><a href="#{escape(format_name(h.table))}">{escape(format_name(h.table))}</a></td>'
                    f"<td>{h.data_files}</td><td>{_size(h.data_bytes)}</td><td>{share}</td><td>{h.snapshots}</td>"
                    f"<td>{h.position_delete_files + h.equality_delete_files}</td>"
                    f"<td>{', '.join(a.code for a in r.due) or '–'}</td></tr>")
    summary = ("<table><tr><th>table</th><th>data files</th><th>bytes</th><th>small</th><th>snapshots</th>"
               "<th>delete files</th><th>due</th></tr>" + "".join(rows) + "</table>")
    cards = "".join(_card(r, now) for r in reports) + (_views(views) if views is not None else "")
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>tablepolicy health</title>'
            f"<style>{CSS}</style></head><body><h1>Table health</h1><p class=\"muted\">{escape(catalog)} · "
            f"{now:%Y-%m-%d %H:%M} UTC · {len(reports)} table(s)</p>{summary}{cards}</body></html>\n")
