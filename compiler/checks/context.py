"""What every semantic check of one table reads: the policy, its effective settings, its schema."""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from pyiceberg.types import IcebergType, ListType, MapType, NestedField, StructType

from compiler.diagnostics import Location
from compiler.effective import Effective
from compiler.loader import LoadedTable
from compiler.model.names import format_name
from compiler.model.table import ColumnPath, build_struct, find_field
from compiler.yamlsource import Path


@dataclass(frozen=True)
class TableContext:
    table: LoadedTable
    effective: Effective
    struct: StructType

    @classmethod
    def of(cls, table: LoadedTable, effective: Effective) -> TableContext:
        return cls(table, effective, build_struct(table.policy.columns))

    @property
    def file(self) -> str:
        return self.table.source.file

    def at(self, path: Path) -> Location:
        return self.table.source.value(path)

    def key_at(self, path: Path) -> Location:
        return self.table.source.key(path)

    def setting(self, dotted: str) -> Location:
        """Where an effective setting was written (table file or namespace defaults)."""
        return self.effective.origin(dotted) or self.at(tuple(dotted.split(".")))

    def resolve(self, path: ColumnPath) -> NestedField | None:
        return find_field(self.struct, path)

    def suggest(self, path: ColumnPath) -> str:
        """A hint naming the closest existing column path."""
        names = [format_name(p) for p in all_paths(self.struct)]
        close = difflib.get_close_matches(format_name(path), names, n=1, cutoff=0.5)
        lowered = {n.lower(): n for n in names}
        if format_name(path).lower() in lowered:
            return f"names are matched exactly: did you mean '{lowered[format_name(path).lower()]}'?"
        return f"did you mean '{close[0]}'?" if close else f"columns: {', '.join(names[:12])}"


def all_paths(struct: StructType, prefix: ColumnPath = ()) -> list[ColumnPath]:
    """Paths of every field reachable through structs only (what partitions and sorts may name)."""
    out: list[ColumnPath] = []
    for f in struct.fields:
        out.append((*prefix, f.name))
        if isinstance(f.field_type, StructType):
            out.extend(all_paths(f.field_type, (*prefix, f.name)))
    return out


def walk_types(t: IcebergType) -> list[IcebergType]:
    """Every type nested in ``t``, ``t`` included."""
    out = [t]
    if isinstance(t, StructType):
        for f in t.fields:
            out.extend(walk_types(f.field_type))
    elif isinstance(t, ListType):
        out.extend(walk_types(t.element_type))
    elif isinstance(t, MapType):
        out.extend(walk_types(t.key_type) + walk_types(t.value_type))
    return out
