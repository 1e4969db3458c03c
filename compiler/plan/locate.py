"""Column paths of the model -> YAML paths of the policy, so plan findings point at the right line."""

from __future__ import annotations

from ..model.table import ColumnPath
from ..policy.columns import Column, ListOf, MapOf, StructOf
from ..yamlsource import Path


def column_yaml_path(columns: list[Column], path: ColumnPath) -> Path:
    """``('api', 'request', 'uid')`` -> ``('columns', 4, 'type', 'struct', 4, 'type', 'struct', 1)``."""
    out: list[str | int] = ["columns"]
    spec: str | StructOf | ListOf | MapOf | None = StructOf.model_construct(struct=columns)
    for part in path:
        match spec:
            case StructOf():
                index = next((i for i, c in enumerate(spec.struct) if c.name == part), None)
                if index is None:
                    break
                if out[-1] != "columns":
                    out.append("struct")
                out += [index]
                spec = spec.struct[index].type
                out.append("type")
            case ListOf() if part == "element":
                out.append("list")
                spec = spec.element
            case MapOf() if part in ("key", "value"):
                out += ["map", part]
                spec = spec.entries.key if part == "key" else spec.entries.value
            case _:
                break
    while out and out[-1] == "type":
        out.pop()
    return tuple(out)
