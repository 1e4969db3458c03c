"""A partition spec change in memory, as Iceberg's ``UpdatePartitionSpec`` makes it: add, drop or rename a field,
each refused where Iceberg refuses it (a source column that does not exist, a field or a name twice, a field the
spec does not have). Used by compiler/plan/memory/apply.py, which commits the new spec, and by
compiler/plan/applied.py, which finds the field a change removes as the apply does (``spec_index``).

A v1 spec keeps a dropped field with a void transform (its field ids are positions); v2 removes it.
"""

from __future__ import annotations

from ...iceberg.names import format_name
from ...iceberg.transforms import Transform
from ...model.table import PartitionFieldState, TableState, default_partition_name
from .error import MemoryApplyError


def named_partition(f: PartitionFieldState) -> PartitionFieldState:
    """``f`` with the name Iceberg gives a field declared without one."""
    return f if f.name is not None else f.model_copy(update={"name": default_partition_name(f)})


def add_partition(state: TableState, spec: tuple[PartitionFieldState, ...],
                  wanted: PartitionFieldState) -> tuple[PartitionFieldState, ...]:
    if wanted.source not in state.ids_by_path:
        raise MemoryApplyError(f"cannot partition by {format_name(wanted.source)}: no such column")
    if any((f.source, f.transform) == (wanted.source, wanted.transform) for f in spec):
        raise MemoryApplyError(f"cannot add partition field {wanted.transform.expression(wanted.source)}: "
                               "the spec has it")
    new = named_partition(wanted)
    if state.format_version == 1:  # a void field of that name is renamed out of the way, as Iceberg does
        spec = tuple(f.model_copy(update={"name": f"{f.name}_{1000 + i}"})
                     if f.name == new.name and f.transform.kind == "void" else f for i, f in enumerate(spec))
    if any(f.name == new.name for f in spec):
        raise MemoryApplyError(f"cannot add partition field {new.name}: the name exists")
    return (*spec, new)


def drop_partition(state: TableState, spec: tuple[PartitionFieldState, ...],
                   wanted: PartitionFieldState) -> tuple[PartitionFieldState, ...]:
    """A v1 spec keeps the field with a void transform (field ids there are positions); v2 removes it."""
    at = spec_index(spec, wanted)
    if at is None:
        raise MemoryApplyError(f"cannot drop partition field {wanted.transform.expression(wanted.source)}: "
                               "the spec does not have it")
    if state.format_version == 1:
        return (*spec[:at], spec[at].model_copy(update={"transform": Transform(kind="void")}), *spec[at + 1:])
    return (*spec[:at], *spec[at + 1:])


def spec_index(spec: tuple[PartitionFieldState, ...], wanted: PartitionFieldState) -> int | None:
    """Where the field a change removes is in ``spec``: by its name and transform (Spark's DROP and REPLACE
    PARTITION FIELD name the field, and a rename of its source column keeps both), else by source and transform."""
    return next((i for i, f in enumerate(spec) if f.transform.kind != "void" and (
        (wanted.name is not None and (f.name, f.transform) == (wanted.name, wanted.transform))
        or (f.source, f.transform) == (wanted.source, wanted.transform))), None)


def rename_partition(spec: tuple[PartitionFieldState, ...], old_name: str,
                     wanted: PartitionFieldState) -> tuple[PartitionFieldState, ...]:
    if not any(f.name == old_name for f in spec):
        raise MemoryApplyError(f"cannot rename partition field {old_name}: the spec does not have it")
    return tuple(f.model_copy(update={"name": wanted.name}) if f.name == old_name else f for f in spec)
