"""What a maintenance run did (or a dry run estimates), table by table: before and after figures, each
action's effect, and the declared actions that did not run with their reasons. Data only; the renderers in
compiler/render/maintenance_report.py format it."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from compiler.maintenance.actions import Action
from compiler.maintenance.decide import Skip
from compiler.maintenance.health import TableHealth


class Status(StrEnum):
    """What became of one action (its value is what reports print)."""

    DONE = "done"  # ran
    ESTIMATED = "estimated"  # a dry run's projection
    FAILED = "failed"  # Spark reported an error
    REFUSED = "refused"  # not started because it would be unsafe
    NOT_RUN = "not_run"  # an earlier action of the table failed (their order matters)

    @property
    def failed(self) -> bool:
        return self in (Status.FAILED, Status.REFUSED)


@dataclass(frozen=True)
class Effect:
    """What one action changed; None where it does not apply. ``rewritten``/``written``: data files for
    compaction, delete files for their rewrite, manifests for theirs."""

    rows_deleted: int | None = None
    rewritten: int | None = None
    written: int | None = None
    snapshots_expired: int | None = None
    files_removed: int | None = None
    bytes_removed: int | None = None

    def as_json(self) -> dict[str, int]:
        return {k: v for k, v in self.__dict__.items() if v is not None}


@dataclass(frozen=True)
class Step:
    action: Action
    sql: str
    status: Status
    effect: Effect = Effect()
    seconds: float = 0.0
    output: dict[str, Any] = field(default_factory=dict)  # the procedure's result row
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.status in (Status.DONE, Status.ESTIMATED)


@dataclass(frozen=True)
class TableOutcome:
    table: tuple[str, ...]
    before: TableHealth
    after: TableHealth  # estimated in a dry run
    steps: tuple[Step, ...] = ()
    skips: tuple[Skip, ...] = ()
    stored_bytes: tuple[int, int] | None = None  # bytes under the table location before and after, when listed
    freed_bytes: int | None = None  # bytes of the files listed before that are gone after

    @property
    def failed(self) -> bool:
        return any(s.status.failed for s in self.steps)

    @property
    def rows_deleted(self) -> int:
        return sum(s.effect.rows_deleted or 0 for s in self.steps if s.ok)

    @property
    def bytes_reclaimed(self) -> int | None:
        """Storage freed: the bytes of files under the location that the run deleted (expired snapshots' files,
        orphans; the files a run writes are not subtracted) when the location was listed before and after, else
        (a dry run) the orphan bytes removal would delete."""
        if self.freed_bytes is not None:
            return self.freed_bytes
        removed = [s.effect.bytes_removed for s in self.steps if s.ok and s.effect.bytes_removed is not None]
        return sum(removed) if removed else (0 if not any(s.ok for s in self.steps) else None)


@dataclass(frozen=True)
class MaintenanceReport:
    catalog: dict[str, str]  # name, type, redacted URI
    dry_run: bool
    tables: tuple[TableOutcome, ...]
    missing: tuple[tuple[str, ...], ...] = ()

    @property
    def failed(self) -> bool:
        return any(t.failed for t in self.tables)

    @property
    def steps(self) -> list[Step]:
        return [s for t in self.tables for s in t.steps]
