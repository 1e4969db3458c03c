"""Where a compiler loop may run its items in parallel. The runtime decides how (runtime/forked.py forks
worker processes); the compiler itself never starts a process, and by default runs every item here."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")


class Workers(Protocol):
    def count(self, items: int, at_least: int) -> int:
        """How many workers to use for ``items`` (0: run them in this process; below ``at_least``, starting
        workers costs more than it saves)."""
        ...

    def map(self, work: Callable[[Item], Result], items: Sequence[Item], workers: int,
            after_fork: Callable[[], None] | None = None) -> list[Result]:
        """``[work(item) for item in items]`` on ``workers`` workers; ``after_fork`` runs first in each."""
        ...


class InProcess:
    """No workers: the caller runs every item in this process."""

    def count(self, items: int, at_least: int) -> int:
        return 0

    def map(self, work: Callable[[Item], Result], items: Sequence[Item], workers: int,
            after_fork: Callable[[], None] | None = None) -> list[Result]:
        return [work(item) for item in items]


IN_PROCESS = InProcess()
