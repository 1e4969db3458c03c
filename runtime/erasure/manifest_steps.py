"""The Spark step for manifests the current snapshot reads with a key as a column bound (the rule is in
runtime/erasure/manifests.py), such as the deleted entries erasure's own DELETE writes: ``rewrite_manifests``
writes them anew with live entries only, so those entries stay with the snapshots before it, which erasure
then expires.

Safe to run again, like the other steps (runtime/erasure/spark_steps.py): a rewrite finds the manifests as
they are and rewrites them once more."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from compiler.model.names import format_name
from compiler.render.env import render
from compiler.render.filters import literal, qualified
from runtime.erasure.spark_steps import run_retried


def rewrite_manifests_sql(table: Sequence[str], catalog: str) -> str:
    return render("call_procedure", catalog=catalog, procedure="rewrite_manifests",
                  arguments=[("table", literal(qualified((catalog, *table))))])


def rewrite_manifests(spark: Any, table: tuple[str, ...], catalog: str) -> str:
    sql = rewrite_manifests_sql(table, catalog)
    run_retried(spark, sql, f"{format_name(table)}: erasure: rewrite the manifests that keep a key as a bound")
    return sql
