"""What a maintenance run did (or a dry run estimates), table by table: before and after figures, each
action's effect, and the declared actions that did not run with their reasons. Data only; the renderers in
compiler/render/maintenance_report.py format it."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from .actions import Action
from .decide import Skip
from .health import TableHealth


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
    """What one action changed; None where it does not apply (or is not known). ``rewritten``/``written``: data
    files for compaction, delete files for their rewrite, manifests for theirs. Compaction also gives the bytes
    it read and wrote; a dry run knows the bytes read but not the bytes written (None), and gives the files
    written as a range from ``written`` to ``written_most`` when the count is the engine's to decide."""

    rows_deleted: int | None = None
    rewritten: int | None = None
    written: int | None = None
    written_most: int | None = None
    bytes_rewritten: int | None = None
    bytes_written: int | None = None
    snapshots_expired: int | None = None
    files_removed: int | None = None
    bytes_removed: int | None = None
    # the table's data bytes (current snapshot) re-read before and after the action: what every action that ran
    # changed, whatever its kind (a dry run leaves them unknown)
    data_bytes_before: int | None = None
    data_bytes_after: int | None = None

    def as_json(self) -> dict[str, int]:
        """What the action did (the table's data bytes around it are in ``bytes_json``)."""
        return {k: v for k, v in self.__dict__.items() if v is not None and not k.startswith("data_bytes_")}

    def bytes_json(self) -> dict[str, int | None]:
        """Every byte figure under one stable set of keys, null where the action or a dry run does not know it:
        ``read``/``written`` by compaction, ``removed`` by orphan removal, the table's data bytes around it."""
        return {"data_before": self.data_bytes_before, "data_after": self.data_bytes_after,
                "read": self.bytes_rewritten, "written": self.bytes_written, "removed": self.bytes_removed}


@dataclass(frozen=True)
class ActionRun:
    """One maintenance action as it ran (or, in a dry run, as estimated): its SQL, status and effect. Not a plan's
    Step (compiler/plan/steps.py), which is one change's SQL waiting to be applied."""

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
    steps: tuple[ActionRun, ...] = ()
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
    def data_files_after(self) -> tuple[int, int]:
        """The fewest and the most data files after (equal once measured, or when the estimate is exact)."""
        more = sum(s.effect.written_most - (s.effect.written or 0) for s in self.steps
                   if s.status is Status.ESTIMATED and s.effect.written_most is not None)
        return self.after.data_files, self.after.data_files + more

    @property
    def data_bytes_after(self) -> tuple[int, int]:
        """The least and the most data bytes after: a dry run does not know what compaction writes, only that it
        is more than nothing and (in practice: merged files share one footer and their pages) no more than it
        reads, which ``after.data_bytes`` keeps."""
        unknown = sum(s.effect.bytes_rewritten or 0 for s in self.steps
                      if s.status is Status.ESTIMATED and s.effect.bytes_rewritten is not None
                      and s.effect.bytes_written is None)
        return self.after.data_bytes - unknown, self.after.data_bytes

    @property
    def average_after(self) -> tuple[int, int]:
        """The smallest and the largest average data file size after the bounds above allow (0: no lower bound)."""
        (fewest, most), (least, largest) = self.data_files_after, self.data_bytes_after
        return (least // most if most else 0), (largest // fewest if fewest else 0)

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
    def steps(self) -> list[ActionRun]:
        return [s for t in self.tables for s in t.steps]
