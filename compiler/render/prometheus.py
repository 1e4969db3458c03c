"""Table health -> the Prometheus text exposition format (version 0.0.4), for node_exporter's textfile collector
or a pushgateway: ``tablepolicy health --format prometheus > /var/lib/node_exporter/tablepolicy.prom``.

One gauge family per figure, a sample per table labelled ``catalog``, ``namespace`` (dotted, backticked where a
part needs it, as policies write it) and ``table``; every maintenance action as ``tablepolicy_maintenance_due``
(1 due, 0 not) so a dashboard's series do not come and go. Views only: the figures come from the health the
text, JSON and HTML views read, and the age of the last snapshot from the ``now`` the runtime passes in. No
sample carries a timestamp (the textfile collector refuses them). Families in a fixed order, tables in natural
order, actions in the order they run: the same health prints the same bytes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime

from ..iceberg.names import format_name, natural_key
from ..maintenance.actions import SECTIONS
from ..maintenance.due import MaintenancePlan, TableMaintenance

PREFIX = "tablepolicy_"
Labels = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Family:
    """One gauge: its name (after the prefix), its HELP text, and its samples for one table (extra labels,
    value), none when the health does not know the figure."""

    name: str
    help: str
    samples: Callable[[TableMaintenance, float], Iterable[tuple[Labels, float]]]


def _one(value: float | None) -> list[tuple[Labels, float]]:
    return [] if value is None else [((), value)]


def _age(t: TableMaintenance, now: float) -> list[tuple[Labels, float]]:
    times = t.health.snapshot_times
    return _one(max(now - times[-1] / 1000, 0.0) if times else None)


FAMILIES: tuple[Family, ...] = (
    Family("data_files", "Data files the current snapshot references.",
           lambda t, _: _one(t.health.data_files)),
    Family("small_files", "Data files under 75% of the table's target file size (what compaction merges).",
           lambda t, _: _one(t.health.small_files)),
    Family("data_bytes", "Bytes of the data files the current snapshot references.",
           lambda t, _: _one(t.health.data_bytes)),
    Family("rows", "Rows in the current snapshot, from its data files' record counts.",
           lambda t, _: _one(t.health.rows)),
    Family("snapshots", "Snapshots the table metadata keeps.",
           lambda t, _: _one(t.health.snapshots)),
    Family("delete_files", "Delete files the current snapshot references, by kind (position or equality).",
           lambda t, _: [((("kind", "position"),), t.health.position_delete_files),
                         ((("kind", "equality"),), t.health.equality_delete_files)]),
    Family("manifests", "Manifests the current snapshot reads.",
           lambda t, _: _one(t.health.manifests)),
    Family("orphan_files", "Files under the table location no snapshot references, older than the policy's "
           "orphan_files guard (only for tables whose policy declares orphan removal: their location is listed).",
           lambda t, _: _one(t.health.orphans.files if t.health.orphans else None)),
    Family("orphan_bytes", "Bytes of those orphan files: what remove_orphan_files would delete.",
           lambda t, _: _one(t.health.orphans.bytes if t.health.orphans else None)),
    Family("bloom_filter_bytes", "Bytes of the data files whose footer has a bloom filter on every erasure key "
           "column (only for tables whose properties ask filters on their key: their footers are read); the rest "
           "are read whole by erase until compaction rewrites them.",
           lambda t, _: _one(t.health.bloom_filters.covered_bytes if t.health.bloom_filters else None)),
    Family("last_snapshot_age_seconds", "Seconds from the newest snapshot's commit to when health was read "
           "(no sample for a table without snapshots).", _age),
    Family("maintenance_due", "1 when the maintenance action is due now by the table's policy, else 0 (also "
           "for actions the policy does not declare).",
           lambda t, _: [((("action", a),), float(any(d.action == a for d in t.actions))) for a in SECTIONS]),
)


def escape_label(value: str) -> str:
    r"""A label value as the exposition format quotes it: ``\``, ``"`` and a line feed escaped."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def escape_help(text: str) -> str:
    r"""HELP text escapes ``\`` and a line feed (a double quote stays)."""
    return text.replace("\\", "\\\\").replace("\n", "\\n")


def number(value: float) -> str:
    """Integers without a fraction (``12``, not ``12.0``); others as Python's shortest round trip."""
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _labels(labels: Labels) -> str:
    return "{" + ",".join(f'{k}="{escape_label(v)}"' for k, v in labels) + "}"


def render_prometheus(plan: MaintenancePlan, catalog: str, now: datetime) -> str:
    """Every family with at least one sample: ``# HELP``, ``# TYPE``, then a line per table (and extra label)."""
    seconds = now.timestamp()
    tables = sorted(plan.tables, key=lambda t: natural_key(t.table))
    lines: list[str] = []
    for family in FAMILIES:
        samples = [(t, labels, value) for t in tables for labels, value in family.samples(t, seconds)]
        if not samples:
            continue
        name = PREFIX + family.name
        lines += [f"# HELP {name} {escape_help(family.help)}", f"# TYPE {name} gauge"]
        for t, extra, value in samples:
            base = (("catalog", catalog), ("namespace", format_name(t.table[:-1])), ("table", t.table[-1]))
            lines.append(f"{name}{_labels(base + extra)} {number(value)}")
    return "\n".join(lines) + "\n" if lines else ""
