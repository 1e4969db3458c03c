"""Where a survey's per-file reads run: this process's reader threads, or a Spark job on a cluster's executors.

A survey maps one function (file_task.scan: a file's key columns read and matched against the keys) over its
candidate files through a Runner and never knows where it ran. On a cluster, the function, the key set and each
candidate (a path, a size and a pyarrow filesystem, which pickles with its credentials: they travel to the executors
as the rewrite's Spark job sends the catalog's) are pickled by value with pyspark's cloudpickle together with the
modules in SHIPPED, so executors need pyarrow, not tablepolicy. The results come back
pickled by value too: cloudpickle maps the classes it shipped back to this process's own.

Which one a table gets (``placement``): the cluster when Spark's master is not local and the files listed under the
table's locations are larger than the threshold (lifecycle.erasure.cluster_above, erase --cluster-above, else
DEFAULT_CLUSTER_ABOVE); this process otherwise. The survey after each step and the proof each decide again.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from tablepolicy.compiler.erasure.cost import Placement
from tablepolicy.compiler.render.maintenance_report import byte_size

from ..executor import ExecutionError, _reason

READERS = 4  # pyarrow releases the GIL while it decodes: a few threads keep 2 cores busy
BATCH = 32  # items a reader thread takes at once (Threads.map)
# One process reads a table's key columns (a few percent of its bytes) in a minute or two up to about 10 GiB of files;
# below that a Spark job's start (each executor's Python workers, the code and keys shipped) costs about what it saves.
DEFAULT_CLUSTER_ABOVE = 10 * 2**30
SLICES_PER_CORE = 4  # tasks per executor core: a slow file (a large one, a slow store) holds up one task, not a core
SHIPPED = ("tablepolicy.runtime.erasure.file_task", "tablepolicy.runtime.erasure.file_scan",
           "tablepolicy.runtime.erasure.keys", "tablepolicy.runtime.erasure.pruning",
           "tablepolicy.runtime.erasure.bloom")  # what file_task.scan runs on an executor, pickled by value

T = TypeVar("T")
R = TypeVar("R")


IN_THIS_PROCESS = Placement(False, "no cluster asked for")  # the dry run, and tests' surveys


def placement(master: str, listed: int, threshold: int) -> Placement:
    """Where the reads of a table whose files under its locations list ``listed`` bytes run."""
    if master.startswith("local"):
        return Placement(False, f"local master {master}")
    if listed <= threshold:
        return Placement(False, f"{listed:,} bytes listed, not above the threshold {byte_size(threshold)}")
    return Placement(True, f"{listed:,} bytes listed, above the threshold {byte_size(threshold)}")


class Runner(Protocol):
    @property
    def placement(self) -> Placement: ...

    def map(self, function: Callable[[T], R], items: Sequence[T]) -> list[R]:
        """``function`` of each item, in their order."""


@dataclass(frozen=True)
class Threads:
    """This process: a few reader threads."""

    placement: Placement = IN_THIS_PROCESS

    def map(self, function: Callable[[T], R], items: Sequence[T]) -> list[R]:
        """In order; the items handed to the threads in runs of up to ``BATCH`` (at least 4 runs a thread): a
        task per file cost more than the work of a file its manifest bounds exclude (5,000 of them: 0.15 s)."""
        size = max(1, min(BATCH, len(items) // (READERS * 4)))
        runs = [items[at:at + size] for at in range(0, len(items), size)]
        with ThreadPoolExecutor(READERS) as pool:
            return [result for done in pool.map(lambda run: [function(item) for item in run], runs)
                    for result in done]


@dataclass(frozen=True)
class OnCluster:
    """A Spark job: the items as slices, ``function`` run on them by the executors; the driver reads no file."""

    session: Callable[[], Any]  # the run's Spark session, started when first needed
    placement: Placement

    def map(self, function: Callable[[T], R], items: Sequence[T]) -> list[R]:
        if not items:
            return []
        cloudpickle: Any = importlib.import_module("pyspark.cloudpickle")  # pyspark's own (untyped)
        modules = [importlib.import_module(name) for name in SHIPPED]
        context = self.session().sparkContext
        slices = min(len(items), max(1, context.defaultParallelism) * SLICES_PER_CORE)

        def remote(payload: bytes) -> Any:  # on an executor: pickled back by value, as its input came
            return cloudpickle.dumps(function(cloudpickle.loads(payload)))

        for module in modules:  # registered while this job's code and items are pickled: later pickles are unchanged
            cloudpickle.register_pickle_by_value(module)
        try:
            payloads = [cloudpickle.dumps(item) for item in items]
            results = context.parallelize(payloads, slices).map(remote).collect()
        except Exception as exc:  # an executor without pyarrow, a file it cannot reach: the table fails, named
            raise ExecutionError(f"erasure: reading the key columns on the cluster failed: {_failure(exc)}") from None
        finally:
            for module in modules:
                cloudpickle.unregister_pickle_by_value(module)
        return [cloudpickle.loads(result) for result in results]


def _failure(exc: Exception) -> str:
    """Spark's reason; a Python error on an executor comes as its traceback, whose last line names the error."""
    reason = _reason(exc)
    java = getattr(exc, "java_exception", None)
    if reason.startswith("PythonException") and java is not None:
        cause = java
        while cause.getCause() is not None and cause.getCause() != cause:
            cause = cause.getCause()
        lines = [line for line in str(cause.getMessage()).splitlines() if line.strip()]
        return f"an executor's Python: {lines[-1].strip()}" if lines else reason
    return reason
