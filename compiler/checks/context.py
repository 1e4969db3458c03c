"""What every semantic check of one table reads: the policy, its effective settings, its columns.

Columns are resolved on the policy's own column specs (no Iceberg schema is built): validation of
thousands of files stays close to the cost of parsing them.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from functools import cached_property

from pyiceberg.types import IcebergType

from ..diagnostics import Location
from ..effective import Effective
from ..iceberg.names import format_name
from ..iceberg.types import parse_primitive
from ..loader import LoadedTable
from ..model.table import ColumnPath, build_struct
from ..policy.columns import Column, StructOf
from ..yamlsource import Path


@dataclass(frozen=True)
class ResolvedColumn:
    column: Column

    @property
    def required(self) -> bool:
        return self.column.required

    @cached_property
    def field_type(self) -> IcebergType:
        spec = self.column.type
        if isinstance(spec, str):
            return parse_primitive(spec)
        return build_struct([self.column]).fields[0].field_type  # nested: built only when a finding needs it


@dataclass(frozen=True)
class TableContext:
    table: LoadedTable
    effective: Effective

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

    def resolve(self, path: ColumnPath) -> ResolvedColumn | None:
        """Follow a path of column names through structs (exact case)."""
        columns = self.table.policy.columns
        found: Column | None = None
        for part in path:
            found = next((c for c in columns if c.name == part), None)
            if found is None:
                return None
            columns = found.type.struct if isinstance(found.type, StructOf) else []
        return ResolvedColumn(found) if found is not None else None

    def suggest(self, path: ColumnPath) -> str:
        """A hint naming the closest existing column path."""
        names = [format_name(p) for p in column_paths(self.table.policy.columns)]
        wanted = format_name(path) if path else ""
        lowered = {n.lower(): n for n in names}
        if wanted.lower() in lowered:
            return f"names are matched exactly: did you mean '{lowered[wanted.lower()]}'?"
        close = difflib.get_close_matches(wanted, names, n=1, cutoff=0.5)
        return f"did you mean '{close[0]}'?" if close else f"columns: {', '.join(names[:12])}"


def column_paths(columns: list[Column], prefix: ColumnPath = ()) -> list[ColumnPath]:
    """Paths of every field reachable through structs only (what partitions and sorts may name)."""
    out: list[ColumnPath] = []
    for c in columns:
        out.append((*prefix, c.name))
        if isinstance(c.type, StructOf):
            out.extend(column_paths(c.type.struct, (*prefix, c.name)))
    return out
