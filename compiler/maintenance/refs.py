"""Each branch and tag other than main as ``health`` shows it: where it points, how old that snapshot is, how
many snapshots it alone keeps from expiry, and whether the next expiry drops it (older than its max_ref_age).

Computed with the same model of Iceberg's RemoveSnapshots that maintain's dry run uses (compiler.maintenance.
expiry), with the table's effective lifecycle.snapshots (unset: Iceberg's 5d and 1), so health and maintain agree.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from ..diff.changes import duration_text
from ..effective import Effective
from .decide import DEFAULT_MIN_KEEP, snapshot_expiry
from .expiry import MAIN
from .health import TableHealth

ICEBERG_MAX_SNAPSHOT_AGE = timedelta(days=5)


@dataclass(frozen=True)
class RefHealth:
    name: str
    kind: str  # "branch" or "tag"
    snapshot_id: int
    age_ms: int | None  # None: its snapshot is not in the metadata
    keeps: int  # snapshots only this ref keeps from expiry
    expires: bool  # the next expiry drops the ref (its snapshot is older than its max_ref_age)


def ref_health(health: TableHealth, effective: Effective, now: datetime) -> list[RefHealth]:
    snapshots = effective.lifecycle.snapshots
    max_age = timedelta(milliseconds=snapshots.max_age.millis) if snapshots and snapshots.max_age else \
        ICEBERG_MAX_SNAPSHOT_AGE
    keep = snapshots.min_keep if snapshots and snapshots.min_keep else DEFAULT_MIN_KEEP
    expiry = snapshot_expiry(health, now - max_age, keep, now)
    times = {s.id: s.timestamp_ms for s in health.snapshot_log}
    now_ms = int(now.timestamp() * 1000)
    return [RefHealth(name=r.name, kind="branch" if r.branch else "tag", snapshot_id=r.snapshot_id,
                      age_ms=now_ms - times[r.snapshot_id] if r.snapshot_id in times else None,
                      keeps=expiry.held_by_refs.get(r.name, 0), expires=r.name in expiry.dropped_refs)
            for r in health.refs if r.name != MAIN]


def age_text(ms: int) -> str:
    """``12d old``: to the minute, in the largest whole unit (a minute at least)."""
    return f"{duration_text(max(ms, 0) // 60_000 * 60_000 or 60_000)} old"


def ref_age(ref: RefHealth) -> str:
    """How old the ref's snapshot is, or that its snapshot is not in the metadata."""
    return age_text(ref.age_ms) if ref.age_ms is not None else "snapshot not in the metadata"


def ref_lines(refs: list[RefHealth]) -> list[str]:
    """``  refs          tag month_end: snapshot 123, 12d old, keeps 1 snapshot``, one line per ref."""
    lines = []
    for i, ref in enumerate(refs):
        age = ref_age(ref)
        note = "; the next expiry drops it (older than its max_ref_age)" if ref.expires else ""
        lines.append(f"  {'refs' if i == 0 else '':<14}{ref.kind} {ref.name}: snapshot {ref.snapshot_id}, {age}, "
                     f"alone keeps {ref.keeps} snapshot(s) from expiry{note}")
    return lines
