"""One rewrite serves many requests: ``lifecycle.erasure.batch_margin`` holds a table's new requests until their
deadline minus the margin, and a run that erases a table erases every pending request of it at once.

A subject's run day is ``deadline - margin`` (no margin: the day it arrives). On a run day ``today``, a table
with a subject whose run day has come is erased with all its pending subjects (the files holding keys are
rewritten once, however many keys they drop); a table with none is held. A request never misses its deadline for
being held: its run day is ``margin`` before it (a margin longer than ``within`` is TP448), and one already closer
to its deadline than the margin is due at once. Pure: the day comes from the run, never from a clock.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from ..iceberg.names import format_name
from .plan import Subject, TableErasure


def runs_on(subject: Subject, table: TableErasure) -> date | None:
    """The day ``subject`` is due on ``table``: its deadline minus the table's margin (None: at once)."""
    if table.margin is None:
        return None
    return subject.deadline - table.margin


@dataclass(frozen=True)
class Batch:
    """A table erased on this run: the requests due, and those erased with them before their own run day."""

    table: str
    due: tuple[str, ...]
    joined: tuple[str, ...]

    def as_json(self) -> dict[str, object]:
        return {"table": self.table, "due": list(self.due), "batched": list(self.joined)}


@dataclass(frozen=True)
class Batched:
    run: list[TableErasure]  # erased on this run, every pending subject of each
    held: list[TableErasure]  # no subject due yet
    batches: tuple[Batch, ...]  # per table run, by name

    def next_run(self, table: TableErasure) -> date | None:
        days = [d for s in table.subjects if (d := runs_on(s, table)) is not None]
        return min(days) if days else None


def batched(tables: list[TableErasure], today: date) -> Batched:
    """Split the tables with pending subjects into those erased ``today`` and those held."""
    run, held, batches = [], [], []
    for table in tables:
        due = sorted({s.request for s in table.subjects if (day := runs_on(s, table)) is None or day <= today})
        if not due:
            held.append(table)
            continue
        run.append(table)
        joined = sorted({s.request for s in table.subjects} - set(due))
        batches.append(Batch(format_name(table.table), tuple(due), tuple(joined)))
    return Batched(run, held, tuple(batches))
