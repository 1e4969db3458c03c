"""What a long run reports while it works, as values handed to a callback (``progress=``), never printed.

The CLI turns them into its progress lines and spinner (runtime/cli/progress.py); an orchestrator can log
them, count them or ignore them. Each is a frozen value; ``Event`` is the closed union a consumer matches on.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from compiler.maintenance.actions import Action
from compiler.maintenance.decide import Skip
from compiler.maintenance.due import MaintenancePlan
from compiler.maintenance.report import Step


@dataclass(frozen=True)
class MaintenanceDecided:
    """maintain decided what is due (before anything runs): each table with its health and due actions."""

    plan: MaintenancePlan


@dataclass(frozen=True)
class SparkStarting:
    """A step needs Spark and the session is starting (seconds, the first time)."""


@dataclass(frozen=True)
class TableStarted:
    """Work on table ``number`` of ``total`` begins."""

    number: int
    total: int
    table: tuple[str, ...]


@dataclass(frozen=True)
class ActionStarted:
    """One maintenance action of the current table begins."""

    action: Action


@dataclass(frozen=True)
class ActionFinished:
    """One maintenance action ended: what it did (a Step) or why it did nothing (a Skip)."""

    outcome: Step | Skip


Event = MaintenanceDecided | SparkStarting | TableStarted | ActionStarted | ActionFinished
ProgressCallback = Callable[[Event], None]


class CallbackProgress:
    """runtime.maintain's progress protocol, told to a callback as events."""

    def __init__(self, callback: ProgressCallback) -> None:
        self.callback = callback

    def starting_spark(self) -> None:
        self.callback(SparkStarting())

    def table(self, number: int, total: int, name: tuple[str, ...]) -> None:
        self.callback(TableStarted(number, total, name))

    def action(self, action: Action) -> None:
        self.callback(ActionStarted(action))

    def step(self, step: Step | Skip) -> None:
        self.callback(ActionFinished(step))
