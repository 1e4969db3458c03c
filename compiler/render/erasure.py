"""Erasure steps -> Spark SQL. Key values are quoted by the predicate (TableErasure.sql_predicate)."""

from __future__ import annotations

from datetime import datetime

from compiler.erasure.plan import TableErasure
from compiler.maintenance.actions import ExpireSnapshots
from compiler.render.env import render
from compiler.render.filters import literal, qualified, string_map
from compiler.render.maintenance import action_sql


def files_holding_sql(erasure: TableErasure, catalog: str) -> str:
    """The files of the current snapshot that hold a key, with how many rows: Spark's _file column."""
    return render("files_holding", table=(catalog, *erasure.table), predicate=erasure.sql_predicate())


def delete_sql(erasure: TableErasure, catalog: str) -> str:
    return render("delete_where", table=(catalog, *erasure.table), predicate=erasure.sql_predicate())


def rewrite_sql(erasure: TableErasure, catalog: str) -> str:
    """Rewrite every file that may hold a key, applying the delete files a merge-on-read DELETE wrote."""
    return render("call_procedure", catalog=catalog, procedure="rewrite_data_files", arguments=[
        ("table", literal(qualified((catalog, *erasure.table)))), ("where", literal(erasure.sql_predicate())),
        ("options", string_map({"rewrite-all": "true"}))])


def expire_sql(erasure: TableErasure, catalog: str, now: datetime) -> str:
    """Expire every snapshot but the current one: the files that still held the rows are deleted."""
    return action_sql(ExpireSnapshots(table=erasure.table, older_than=now, retain_last=1,
                                      reason="erasure: older snapshots still reference the rows"), catalog)
