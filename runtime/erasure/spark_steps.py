"""The steps erasure runs in Spark when pyarrow and pyiceberg cannot (``arrow_rewrite.LeftToSpark``), each
retried when its commit loses a race with a writer.

Both are safe to run again: a delete whose rows are gone deletes nothing, a rewrite finds no delete file.
That is what makes a killed run resumable: the next run reads storage again and runs what is still needed.
The delete is not Spark's DELETE but the same rows removed in one overwrite that concurrent appends do not
conflict with (snapshot_delete).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from tablepolicy.compiler.iceberg.names import format_name
from tablepolicy.compiler.render.erasure import delete_sql, rewrite_sql

from ..executor import case_sensitive, guard, query_sql, with_conflict_retries
from .arrow_rewrite import LeftToSpark
from .keys import KeySet
from .snapshot_delete import delete_keys

VIEW = "tablepolicy_erasure_keys"
# how the proof and the dry run show the delete: what it removes, spelled as the DELETE it is equivalent to
DELETE_COMMENT = ("-- committed as one copy-on-write overwrite, validated under snapshot "
                  "isolation (appends meanwhile do not conflict); it removes the rows of:\n")
# the first line of the delete's statement in the proof: which engine read and wrote the files
BY_PYARROW = ("-- the files holding a key were read (their delete files applied), filtered and written anew by "
              "pyarrow, and committed by pyiceberg\n")
BY_SPARK = "-- the files holding a key were rewritten by Spark: "
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
    return DELETE_COMMENT + delete_sql((catalog, *table), [(c.path, c.alias) for c in keys.columns], VIEW)


def run_retried(spark: Any, sql: str, what: str, landed: Callable[[], bool] = lambda: False) -> None:
    """Run a statement, retrying lost commit races and conflicts (with_conflict_retries)."""
    def run() -> None:
        with case_sensitive(spark):  # names are spelled exactly as the catalog holds them
            query_sql(spark, sql, what)

    with_conflict_retries(spark, run, landed)  # every erasure step is idempotent and reads the table afresh


def delete_rows(spark: Any, table: tuple[str, ...], catalog: str, keys: KeySet, holding: frozenset[str],
                left: LeftToSpark, ref: str = "main") -> str:
    """Remove the subjects' rows from ``holding``, the files of ``ref``'s snapshot (main: the current one) the
    survey found holding a key, in Spark (``left`` says why pyarrow does not: arrow_rewrite); returns the
    statement the proof shows."""
    sql = delete_statement(table, catalog, keys)
    columns = [(c.path, c.alias) for c in keys.columns]

    def delete() -> None:
        with keys_view(spark, keys):
            delete_keys(spark, catalog, table, columns, VIEW, holding, ref)

    def run() -> None:
        with case_sensitive(spark):  # names are spelled exactly as the catalog holds them
            guard(what, sql, delete)

    what = f"{format_name(table)}: erasure: delete the subjects' rows"
    with_conflict_retries(spark, run)
    return f"{BY_SPARK}{left.reason}\n{sql}"


def rewrite_masked(spark: Any, table: tuple[str, ...], catalog: str) -> str:
    sql = rewrite_sql(table, catalog)
    run_retried(spark, sql, f"{format_name(table)}: erasure: rewrite the files behind delete files")
    return sql
