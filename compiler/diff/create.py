"""A table from nothing: one CreateTable change, applied as one atomic commit.

The whole declared table — schema with its field ids, partition spec with declared field names, sort
order, identifier fields, properties — is created through Iceberg's catalog API in one commit, so spec 0
and sort order 1 are the declared ones and no reader sees a half-made table. Spark SQL cannot name a
partition field or set a sort order in CREATE TABLE: ``tablepolicy ddl`` prints the plain Spark SQL
equivalent (CREATE TABLE, then ALTER statements), see ``tablepolicy.compiler.sql.statements.plain_create_sql``.
"""

from __future__ import annotations

from ..model.table import TableState
from .changes import Change, CreateTable


def first_named_partition(state: TableState) -> int:
    """Spark's PARTITIONED BY can declare the fields before the first one with a declared name."""
    return next((i for i, f in enumerate(state.partition) if f.name), len(state.partition))


def creation_changes(state: TableState) -> list[Change]:
    return [CreateTable(table=state.name, state=state)]
