"""Map CPU-bound work over many items in forked worker processes, when that is safe and pays.

Workers inherit the parent's memory by fork, so nothing is pickled on the way in (validated models,
open catalog handles, the work function itself); only each item's result comes back. Forking is done
only from a single-threaded process (a CLI run), never beside a JVM or other threads, and only where
the platform has fork; otherwise callers run the same work in-process. ``FORKED`` is what the runtime hands
the compiler's validate and plan as their ``tablepolicy.compiler.parallel.Workers``.
"""

from __future__ import annotations

import gc
import os
import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")

MAX_WORKERS = 4
_JOB: tuple[Callable[[Any], Any], Sequence[Any], int, Callable[[], None] | None] | None = None


def workers_for(items: int, at_least: int) -> int:
    """How many workers to fork for ``items`` (0: run in-process: too few items, one core, threads, no fork)."""
    cores = min(os.cpu_count() or 1, MAX_WORKERS)
    if items < at_least or cores < 2 or threading.active_count() > 1:
        return 0
    import multiprocessing  # here: a command that forks nothing (validate of one file) does not load it

    return cores if "fork" in multiprocessing.get_all_start_methods() else 0


CHUNK = 50  # items a worker does per task: results stream back in chunks, none piles up in a worker


def forked_map(
    work: Callable[[Item], Result], items: Sequence[Item], workers: int, after_fork: Callable[[], None] | None = None
) -> list[Result]:
    """``[work(item) for item in items]``, in chunks of ``CHUNK`` items spread over ``workers``; ``after_fork``
    runs first in each worker. Each chunk's results come back as soon as it is done, so a worker holds one
    chunk's results at a time, never its share of the whole run's."""
    import multiprocessing

    global _JOB
    _JOB = (work, items, workers, after_fork)
    try:
        with multiprocessing.get_context("fork").Pool(workers, initializer=_start) as pool:
            results: list[Any] = []
            for chunk in pool.imap(_chunk, range(0, len(items), CHUNK)):
                results += chunk
    finally:
        _JOB = None
    return results


def _start() -> None:
    assert _JOB is not None
    after_fork = _JOB[3]
    if after_fork is not None:
        after_fork()
    gc.freeze()  # what the worker inherits and what its items leave behind is not rescanned by the GC


def _chunk(start: int) -> list[Any]:
    assert _JOB is not None
    work, items = _JOB[0], _JOB[1]
    results = []
    for item in items[start:start + CHUNK]:
        results.append(work(item))
        gc.freeze()  # what an item leaves behind (metadata read, trees kept) is not rescanned by the GC
    return results


class Forked:
    """tablepolicy.compiler.parallel.Workers in forked worker processes."""

    def count(self, items: int, at_least: int) -> int:
        return workers_for(items, at_least)

    def map(self, work: Callable[[Item], Result], items: Sequence[Item], workers: int,
            after_fork: Callable[[], None] | None = None) -> list[Result]:
        return forked_map(work, items, workers, after_fork)


FORKED = Forked()
