"""Which snapshots expire_snapshots removes, as Iceberg's RemoveSnapshots computes it: a table of cases."""

from __future__ import annotations

import pytest

from tablepolicy.compiler.maintenance.expiry import RefInfo, SnapshotInfo, expired_snapshots

DAY = 86_400_000
NOW = 100 * DAY


def chain(*ages_days: float) -> tuple[SnapshotInfo, ...]:
    """Snapshots 1..n, each the parent of the next, the given days old (oldest first)."""
    return tuple(SnapshotInfo(id=i + 1, parent_id=i or None, timestamp_ms=int(NOW - age * DAY))
                 for i, age in enumerate(ages_days))


MAIN = RefInfo(name="main", snapshot_id=12, branch=True)
TWELVE = chain(12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 0.5, 0.1)

CASES = [
    # (refs, older than (days), retain_last, expected expired ids, held by refs)
    ((MAIN,), 2, 1, tuple(range(1, 11)), {}),
    ((MAIN,), 2, 5, tuple(range(1, 8)), {}),
    ((MAIN,), 20, 1, (), {}),
    # main keeps 8-12 (newer than 5.5 days); a tag on snapshot 4 keeps exactly that one: 6 expire, not 7
    ((MAIN, RefInfo(name="audit", snapshot_id=4, branch=False)), 5.5, 1, (1, 2, 3, 5, 6, 7), {"audit": 1}),
    # a tag older than its max_ref_age is dropped and keeps nothing
    ((MAIN, RefInfo(name="old", snapshot_id=4, branch=False, max_ref_age_ms=DAY)), 5.5, 1, (1, 2, 3, 4, 5, 6, 7), {}),
    # a branch at 6 keeps its own history by its own min_snapshots_to_keep
    ((MAIN, RefInfo(name="dev", snapshot_id=6, branch=True, min_snapshots_to_keep=3)), 5.5, 1, (1, 2, 3, 7),
     {"dev": 3}),
]


@pytest.mark.parametrize(("refs", "days", "retain", "expired", "held"), CASES, ids=str)
def test_expiry_matches_iceberg(refs: tuple[RefInfo, ...], days: float, retain: int, expired: tuple[int, ...],
                                held: dict[str, int]) -> None:
    result = expired_snapshots(TWELVE, refs, now_ms=NOW, older_than_ms=int(NOW - days * DAY), retain_last=retain)
    assert result.expire == expired
    assert result.held_by_refs == held


def test_unreferenced_snapshots_go_by_age_alone() -> None:
    snapshots = (*chain(9, 1), SnapshotInfo(id=7, parent_id=None, timestamp_ms=NOW - 3 * DAY),
                 SnapshotInfo(id=8, parent_id=None, timestamp_ms=NOW - DAY // 2))
    result = expired_snapshots(snapshots, (RefInfo(name="main", snapshot_id=2, branch=True),), now_ms=NOW,
                               older_than_ms=NOW - 2 * DAY, retain_last=1)
    assert result.expire == (1, 7)
