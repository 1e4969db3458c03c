"""The three statements erasure runs in Spark, each retried when its commit loses a race with a writer.

Every one of them is safe to run again: a DELETE whose rows are gone deletes nothing, a rewrite finds no
delete file, an expiry of snapshots already gone is skipped (``landed``). That is what makes a killed run
resumable: the next run reads storage again and runs what is still needed.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from compiler.model.names import format_name
from compiler.render.erasure import delete_sql, expire_sql, rewrite_sql
from runtime.erasure.keys import KeySet
from runtime.executor import ExecutionError, case_sensitive, query_sql, with_commit_retries

VIEW = "tablepolicy_erasure_keys"
CONFLICT = "Found conflicting files"  # Iceberg's ValidationException under serializable isolation
CONFLICT_ATTEMPTS = 20
SPARK_TYPES = {"string": "StringType", "int64": "LongType"}


@contextmanager
def keys_view(spark: Any, keys: KeySet) -> Iterator[str]:
    """The key set as a temporary view of typed columns (one per key column), dropped afterwards."""
    from pyspark.sql import types

    schema = types.StructType([types.StructField(c.alias, getattr(types, SPARK_TYPES[str(c.arrow_type)])(), False)
                               for c in keys.columns])
    rows = list(zip(*(keys.table.column(c.alias).to_pylist() for c in keys.columns), strict=True))
    spark.createDataFrame(rows, schema).createOrReplaceTempView(VIEW)
    try:
        yield VIEW
    finally:
        spark.catalog.dropTempView(VIEW)


def delete_statement(table: tuple[str, ...], catalog: str, keys: KeySet) -> str:
    return delete_sql((catalog, *table), [(c.path, c.alias) for c in keys.columns], VIEW)


def run_retried(spark: Any, sql: str, what: str, landed: Callable[[], bool] = lambda: False) -> None:
    """Run a statement, retrying lost commit races (with_commit_retries) and serializable conflicts: the
    DELETE reads its keys from a view, so Iceberg cannot narrow its conflict check and refuses whenever a
    writer appended meanwhile. Running it again is safe (it is idempotent) and the proof re-reads storage."""
    def run() -> None:
        with case_sensitive(spark):  # names are spelled exactly as the catalog holds them
            query_sql(spark, sql, what)

    for attempt in range(1, CONFLICT_ATTEMPTS + 1):
        try:
            with_commit_retries(spark, run, landed)
            return
        except ExecutionError as exc:
            if CONFLICT not in str(exc) or attempt == CONFLICT_ATTEMPTS:
                raise
            time.sleep(min(0.2 * attempt, 2.0))
            spark._jsparkSession.sessionState().catalogManager().reset()  # drop the failed commit's connection


def delete_rows(spark: Any, table: tuple[str, ...], catalog: str, keys: KeySet) -> str:
    sql = delete_statement(table, catalog, keys)
    with keys_view(spark, keys):
        run_retried(spark, sql, f"{format_name(table)}: erasure: delete the subjects' rows")
    return sql


def rewrite_masked(spark: Any, table: tuple[str, ...], catalog: str) -> str:
    sql = rewrite_sql(table, catalog)
    run_retried(spark, sql, f"{format_name(table)}: erasure: rewrite the files behind delete files")
    return sql


def expire(spark: Any, table: tuple[str, ...], catalog: str, snapshot_ids: list[int],
           landed: Callable[[], bool]) -> str:
    sql = expire_sql(table, catalog, snapshot_ids)
    run_retried(spark, sql, f"{format_name(table)}: erasure: expire the snapshots that read erased rows", landed)
    return sql
