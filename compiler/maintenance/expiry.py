"""Which snapshots ``expire_snapshots(older_than, retain_last)`` removes, computed as Iceberg does
(``RemoveSnapshots``): so the dry run's count is the run's count, tags and branches included.

Retained: every ref's snapshot (a tag or branch other than main is dropped first when its snapshot is
older than the ref's ``max_ref_age``); along each branch, ancestors while fewer than its
``min_snapshots_to_keep`` (default ``retain_last``) are kept or while newer than its ``max_snapshot_age``
(default ``older_than``); snapshots no ref reaches, while newer than ``older_than``. The rest expire.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

MAIN = "main"
NEVER = 2**63 - 1  # Iceberg's default history.expire.max-ref-age-ms: refs are kept forever


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class SnapshotInfo(Frozen):
    id: int
    parent_id: int | None = None
    timestamp_ms: int


class RefInfo(Frozen):
    name: str
    snapshot_id: int
    branch: bool
    max_ref_age_ms: int | None = None
    max_snapshot_age_ms: int | None = None
    min_snapshots_to_keep: int | None = None


class Expiry(Frozen):
    expire: tuple[int, ...] = Field(description="Snapshot ids the procedure removes, oldest first.")
    held_by_refs: dict[str, int] = Field(
        default_factory=dict, description="Per tag or branch other than main: snapshots kept only because of it.")
    dropped_refs: tuple[str, ...] = Field((), description="Refs removed for being older than their max_ref_age.")


def _ancestors(start: int, by_id: dict[int, SnapshotInfo]) -> list[SnapshotInfo]:
    out, at = [], by_id.get(start)
    while at is not None:
        out.append(at)
        at = by_id.get(at.parent_id) if at.parent_id is not None else None
    return out


def expired_snapshots(
    snapshots: tuple[SnapshotInfo, ...], refs: tuple[RefInfo, ...], *, now_ms: int, older_than_ms: int,
    retain_last: int, default_max_ref_age_ms: int = NEVER,
) -> Expiry:
    by_id = {s.id: s for s in snapshots}
    retained_refs = [r for r in refs if r.name == MAIN or (
        r.snapshot_id in by_id and now_ms - by_id[r.snapshot_id].timestamp_ms
        <= (r.max_ref_age_ms if r.max_ref_age_ms is not None else default_max_ref_age_ms))]
    keep_for: dict[str, set[int]] = {r.name: {r.snapshot_id} for r in retained_refs}
    reached: set[int] = set()
    for ref in retained_refs:
        if not ref.branch:
            reached.add(ref.snapshot_id)
            continue
        lineage = _ancestors(ref.snapshot_id, by_id)
        reached.update(s.id for s in lineage)
        cutoff = now_ms - ref.max_snapshot_age_ms if ref.max_snapshot_age_ms is not None else older_than_ms
        minimum = ref.min_snapshots_to_keep if ref.min_snapshots_to_keep is not None else retain_last
        kept: set[int] = set()
        for snapshot in lineage:
            if len(kept) < minimum or snapshot.timestamp_ms >= cutoff:
                kept.add(snapshot.id)
            else:
                break
        keep_for[ref.name] |= kept
    unreferenced = {s.id for s in snapshots if s.id not in reached and s.timestamp_ms >= older_than_ms}
    retained = set().union(*keep_for.values(), unreferenced)
    expire = tuple(s.id for s in sorted(snapshots, key=lambda s: (s.timestamp_ms, s.id)) if s.id not in retained)
    others = set().union(keep_for.get(MAIN, set()), unreferenced)
    held = {}
    for name, ids in sorted(keep_for.items()):
        if name == MAIN:
            continue
        only_here = ids - others - set().union(*(v for k, v in keep_for.items() if k not in (name, MAIN)))
        if only_here:
            held[name] = len(only_here)
    dropped = tuple(sorted(r.name for r in refs if r not in retained_refs))
    return Expiry(expire=expire, held_by_refs=held, dropped_refs=dropped)
