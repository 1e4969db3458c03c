"""Keep Python's cyclic GC from rescanning what a run builds up and keeps.

Loading thousands of policies and table metadata creates millions of long-lived, acyclic objects; each
generation-2 collection rescans them all, which doubled the cost of a load and of a plan. Moving them
to the permanent generation (``gc.freeze``) after each unit of work keeps collections cheap; the scope
unfreezes at the end, so nothing leaks past the run.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager


@contextmanager
def settled_heap() -> Iterator[Callable[[], None]]:
    """Yields ``settle``: call it after building something that lives to the end of the scope."""
    try:
        yield gc.freeze
    finally:
        gc.unfreeze()
