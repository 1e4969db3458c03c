"""What a long run reports while it works, as values handed to a callback (``progress=``), never printed.

The CLI turns them into its progress lines and spinner (tablepolicy/cli/progress.py); an orchestrator can log
them, count them or ignore them. Each is a frozen value; ``Event`` is the closed union a consumer matches on.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, Any

from tablepolicy.compiler.diagnostics import Diagnostics
from tablepolicy.compiler.erasure.ledger import Entry
from tablepolicy.compiler.erasure.plan import ErasurePreview, TableErasure
from tablepolicy.compiler.maintenance.actions import Action
from tablepolicy.compiler.maintenance.decide import Skip
from tablepolicy.compiler.maintenance.due import MaintenancePlan
from tablepolicy.compiler.maintenance.report import ActionRun

if TYPE_CHECKING:
    from .erasure.proof import TableProof


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
    """One maintenance action ended: what it did (a ActionRun) or why it did nothing (a Skip)."""

    outcome: ActionRun | Skip


@dataclass(frozen=True)
class ErasureDecided:
    """erase read the requests and the ledger (before anything runs): the tables the requests reach, those left to
    erase, the pairs the ledger had done before, and in a dry run what holds the keys (``previews``, with what they
    could not read exactly).
    ``findings``: the requests file's warnings."""

    reached: tuple[TableErasure, ...]
    todo: tuple[TableErasure, ...]
    done: tuple[Entry, ...]
    today: date
    dry_run: bool
    previews: tuple[ErasurePreview, ...]
    preview_warnings: tuple[str, ...]  # what the dry run could not read exactly (a ref it cannot survey)
    findings: Diagnostics
    held: tuple[TableErasure, ...] = ()  # tables whose requests wait for batching (lifecycle.erasure.batch_margin)


@dataclass(frozen=True)
class ErasureProgress:
    """A step of the table being erased (a rewrite, a commit, an expiry), in words."""

    message: str


@dataclass(frozen=True)
class TableErased:
    """One table erased, proven and recorded in the ledger (``document``: its proof as recorded, no key value)."""

    proof: TableProof
    entries: tuple[Entry, ...]
    document: dict[str, Any]


@dataclass(frozen=True)
class LedgerNote:
    """The erasure ledger is not kept with the catalog, and why (a warning; the run goes on)."""

    text: str


Event = (MaintenanceDecided | SparkStarting | TableStarted | ActionStarted | ActionFinished | ErasureDecided
         | ErasureProgress | TableErased | LedgerNote)
ProgressCallback = Callable[[Event], None]


class CallbackProgress:
    """tablepolicy.runtime.maintain's progress protocol, told to a callback as events."""

    def __init__(self, callback: ProgressCallback) -> None:
        self.callback = callback

    def starting_spark(self) -> None:
        self.callback(SparkStarting())

    def table(self, number: int, total: int, name: tuple[str, ...]) -> None:
        self.callback(TableStarted(number, total, name))

    def action(self, action: Action) -> None:
        self.callback(ActionStarted(action))

    def step(self, step: ActionRun | Skip) -> None:
        self.callback(ActionFinished(step))
