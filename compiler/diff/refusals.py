"""Changes the planner refuses for every flag, each with the reason and the path to take instead."""

from __future__ import annotations

from dataclasses import dataclass

from ..model.table import ColumnPath


@dataclass(frozen=True)
class Refusal:
    table: tuple[str, ...]
    path: ColumnPath  # desired-side column path; () for table-level refusals
    code: str
    message: str
    hint: str
    ref: str | None = None  # the branch or tag declared in ``refs:`` the finding is about
    warning: bool = False  # planned around, not refused: the plan goes on (TP453)
