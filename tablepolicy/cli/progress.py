"""maintain's progress on stderr, from the events tablepolicy.maintain tells its callback: table n of N, the
action, and its elapsed time while the blocking Spark call runs (rich refreshes the spinner and the clock from
its own thread). When stderr is no terminal (CI logs, pipes): one plain line per finished step, e.g.
``[2/5] logs.app_events: compaction ... done in 12.3s (rewrote 40 files into 2)``.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import assert_never

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import Progress, SpinnerColumn, TaskID, TextColumn, TimeElapsedColumn

from tablepolicy.compiler.iceberg.names import format_name
from tablepolicy.compiler.maintenance.actions import SECTIONS, Action
from tablepolicy.compiler.maintenance.decide import Skip
from tablepolicy.compiler.maintenance.report import ActionRun
from tablepolicy.compiler.render.maintenance_report import skip_text, step_text

from ..events import (
    ActionFinished,
    ActionStarted,
    ErasureDecided,
    ErasureProgress,
    Event,
    LedgerNote,
    MaintenanceDecided,
    SparkStarting,
    TableErased,
    TableStarted,
)


class PlainProgress:
    """One line per finished step; the prefix says which table of how many."""

    def __init__(self) -> None:
        self.prefix = ""

    def __call__(self, event: Event) -> None:
        """The API's progress callback (tablepolicy.events)."""
        match event:
            case MaintenanceDecided() | ErasureDecided() | ErasureProgress() | TableErased() | LedgerNote():
                pass  # the command shows the decisions itself; erase's events are erase's own view
            case SparkStarting():
                self.starting_spark()
            case TableStarted(number, total, table):
                self.table(number, total, table)
            case ActionStarted(action):
                self.action(action)
            case ActionFinished(outcome):
                self.step(outcome)
            case _:
                assert_never(event)

    def emit(self, line: str) -> None:
        typer.echo(line, err=True)

    def starting_spark(self) -> None:
        self.emit("Starting Spark ...")

    def table(self, number: int, total: int, name: tuple[str, ...]) -> None:
        self.prefix = f"[{number}/{total}] {format_name(name)}"

    def action(self, action: Action) -> None:
        pass

    def step(self, step: ActionRun | Skip) -> None:
        self.emit(line(self.prefix, step))


def line(prefix: str, step: ActionRun | Skip) -> str:
    if isinstance(step, Skip):
        return f"{prefix}: {SECTIONS[step.action]} ... {skip_text(step)}"
    return f"{prefix}: {SECTIONS[step.action.action]} ... {step_text(step)}"


class LiveProgress(PlainProgress):
    """The same lines printed above a live spinner with the running action and its elapsed time."""

    def __init__(self, bar: Progress) -> None:
        super().__init__()
        self.bar = bar
        self.running: TaskID | None = None

    def emit(self, line: str) -> None:
        self.bar.console.print(line, markup=False, highlight=False)

    def starting_spark(self) -> None:
        self._start("Starting Spark")

    def table(self, number: int, total: int, name: tuple[str, ...]) -> None:
        self._stop()
        super().table(number, total, name)

    def action(self, action: Action) -> None:
        self._start(f"{self.prefix}: {SECTIONS[action.action]} ({action.action})")

    def step(self, step: ActionRun | Skip) -> None:
        if isinstance(step, ActionRun):
            self._stop()
        super().step(step)

    def _start(self, description: str) -> None:
        self._stop()
        self.running = self.bar.add_task(escape(description), total=None)

    def _stop(self) -> None:
        if self.running is not None:
            self.bar.remove_task(self.running)
            self.running = None


@contextlib.contextmanager
def maintain_progress() -> Iterator[PlainProgress]:
    console = Console(file=sys.stderr)
    if not console.is_terminal:
        yield PlainProgress()
        return
    bar = Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(), console=console,
                   transient=True)
    with bar:
        yield LiveProgress(bar)
