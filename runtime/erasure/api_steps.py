"""Erasure's steps that go through Iceberg's Java API on the table Spark's catalog loaded, where a Spark
procedure does more than erasure needs or less.

- Manifests the current snapshot reads with a key as a column bound (the rule is in
  runtime/erasure/manifests.py), such as the deleted entries erasure's own DELETE writes: every manifest of the
  current snapshot is written anew with its live entries only (RewriteManifests, one cluster), so those entries
  stay with the snapshots before it, which erasure then expires. Spark's ``rewrite_manifests`` procedure skips
  a snapshot of a single manifest, which is what a DELETE on a table of 100 manifests or more leaves (it
  merges them), so the deleted entries would stay.
- Expiry of exactly the snapshots erasure names (ExpireSnapshots): the same commit and the same file
  deletions as Spark's ``expire_snapshots`` procedure, which computes what to delete with Spark jobs over every
  manifest of the table; the table's own cleanup reads them in the driver, which on a small cluster is most of
  the difference.

Both are safe to run again, like the other steps: a rewrite rewrites what is there, an expiry of snapshots
already gone is skipped (``landed``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from compiler.model.names import format_name
from compiler.render.filters import qualified
from runtime.executor import ExecutionError, with_commit_retries


def rewrite_manifests_text(table: Sequence[str], catalog: str) -> str:
    """What the proof and the dry run show for the step (it runs through Iceberg's API, not as SQL)."""
    return (f"-- Iceberg RewriteManifests on {qualified((catalog, *table))}: every manifest of the current snapshot "
            "written again with its live entries only")


def rewrite_manifests(spark: Any, table: tuple[str, ...], catalog: str) -> str:
    what = f"{format_name(table)}: erasure: rewrite the manifests that keep a key as a column bound"

    def run() -> None:
        try:
            rewrite_current_manifests(spark, table, catalog)
        except Exception as exc:
            raise ExecutionError(f"{what} failed: {_reason(exc)}") from None

    with_commit_retries(spark, run)
    return rewrite_manifests_text(table, catalog)


def rewrite_current_manifests(spark: Any, table: tuple[str, ...], catalog: str) -> None:
    _load(spark, table, catalog).rewriteManifests().clusterBy(_constant(spark, "")).commit()  # one cluster


def expire_text(table: Sequence[str], catalog: str, snapshot_ids: Sequence[int]) -> str:
    return (f"-- Iceberg ExpireSnapshots on {qualified((catalog, *table))}: snapshots "
            + ", ".join(str(s) for s in sorted(snapshot_ids)) + " (their files no other snapshot reads are deleted)")


def expire(spark: Any, table: tuple[str, ...], catalog: str, snapshot_ids: list[int],
           landed: Callable[[], bool]) -> str:
    what = f"{format_name(table)}: erasure: expire the snapshots that read erased rows"

    def run() -> None:
        try:
            expiry = _load(spark, table, catalog).expireSnapshots()
            for snapshot in sorted(snapshot_ids):
                expiry = expiry.expireSnapshotId(snapshot)
            expiry.expireOlderThan(0).commit()  # the epoch: with ids alone, the default age would expire others too
        except Exception as exc:
            raise ExecutionError(f"{what} failed: {_reason(exc)}") from None

    if not landed():
        with_commit_retries(spark, run, landed)
    return expire_text(table, catalog, snapshot_ids)


def _load(spark: Any, table: tuple[str, ...], catalog: str) -> Any:
    """The Iceberg table through the catalog instance Spark holds: Iceberg's classes come with ``spark.jars``,
    in a class loader py4j's own lookups (``spark._jvm.org.apache.iceberg...``) do not see."""
    jvm, gateway = spark._jvm, spark.sparkContext._gateway
    # the session may have been built on another thread (runtime/erase.py starts it beside the survey): made
    # active on this one, the catalog manager resolves the catalog from its configuration, as SQL does
    jvm.org.apache.spark.sql.SparkSession.setActiveSession(spark._jsparkSession)
    plugin = spark._jsparkSession.sessionState().catalogManager().catalog(catalog)
    namespace = gateway.new_array(jvm.java.lang.String, len(table) - 1)
    for i, part in enumerate(table[:-1]):
        namespace[i] = part
    return plugin.loadTable(jvm.org.apache.spark.sql.connector.catalog.Identifier.of(namespace, table[-1])).table()


def _constant(spark: Any, value: str) -> Any:
    """A java.util.function.Function returning ``value`` whatever it is given, from the JDK alone (a method
    handle made into a proxy): py4j cannot pass a Python callable to Java without a callback server."""
    jvm, gateway = spark._jvm, spark.sparkContext._gateway
    handles = jvm.java.lang.invoke.MethodHandles
    anything = jvm.java.lang.Class.forName("java.lang.Object")
    dropped = gateway.new_array(jvm.java.lang.Class, 1)
    dropped[0] = anything
    handle = handles.dropArguments(handles.constant(anything, value), 0, dropped)
    return jvm.java.lang.invoke.MethodHandleProxies.asInterfaceInstance(
        jvm.java.lang.Class.forName("java.util.function.Function"), handle)


def _reason(exc: Exception) -> str:
    """The JVM's innermost message, one line."""
    cause = getattr(exc, "java_exception", None)
    if cause is None:
        return (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    while cause.getCause() is not None and cause.getCause() != cause:
        cause = cause.getCause()
    return f"{cause.getClass().getSimpleName()}: {str(cause.getMessage()).splitlines()[0]}"
