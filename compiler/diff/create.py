"""A table from nothing: CREATE TABLE, then one change for each thing Spark's CREATE cannot say.

Spark's PARTITIONED BY cannot name a field, so from the first named field on, partition fields are
added by ADD PARTITION FIELD ... AS; sort order and identifier fields follow. One change per
statement lets apply resume a crashed creation step by step.
"""

from __future__ import annotations

from compiler.diff.changes import AddPartitionField, Change, CreateTable, SetIdentifierFields, SetSortOrder
from compiler.diff.safety import Safety
from compiler.model.table import TableState


def first_named_partition(state: TableState) -> int:
    return next((i for i, f in enumerate(state.partition) if f.name), len(state.partition))


def creation_changes(state: TableState) -> list[Change]:
    changes: list[Change] = [CreateTable(table=state.name, state=state)]
    changes += [AddPartitionField(table=state.name, field=f) for f in state.partition[first_named_partition(state):]]
    if state.sort:
        changes.append(SetSortOrder(table=state.name, sort=state.sort,
                                    distribution_mode=state.properties.get("write.distribution-mode")))
    if state.identifier_fields:
        changes.append(SetIdentifierFields(table=state.name, fields=state.identifier_fields,
                                           safety=Safety.SAFE, code="TC405"))
    return changes
