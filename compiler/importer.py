"""Catalog tables -> policy YAML, so that ``plan`` right after ``import`` shows no changes."""

from __future__ import annotations

import io
from typing import Any

from pyiceberg.types import IcebergType, ListType, MapType, NestedField, PrimitiveType, StructType
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq

from compiler.fmt import format_text
from compiler.model.names import format_name
from compiler.model.properties import ICEBERG_RESERVED, LIFECYCLE_PROPERTIES, MANAGED_PROPERTIES, SPARK_RESERVED
from compiler.model.table import PartitionFieldState, SortFieldState, TableState
from compiler.model.types import primitive_spelling
from compiler.spec.units import Duration, Size

_DEFAULT_PARTITION_SUFFIX = {"identity": "", "year": "_year", "month": "_month", "day": "_day", "hour": "_hour",
                             "bucket": "_bucket", "truncate": "_trunc", "void": "_null"}


def policy_yaml(state: TableState) -> str:
    """The policy file text that declares ``state`` exactly (canonical formatting)."""
    yaml = YAML(typ="rt")
    out = io.StringIO()
    yaml.dump(policy_document(state), out)
    header = f"# Imported from the catalog by `tablepolicy import {format_name(state.name)}`.\n"
    return format_text(header + out.getvalue())


def policy_document(state: TableState) -> CommentedMap:
    props = dict(state.properties)
    doc = CommentedMap()
    doc["table"] = format_name(state.name)
    if state.comment:
        doc["description"] = state.comment
    if "tablepolicy.owner" in props:
        doc["owner"] = props["tablepolicy.owner"]
    if props.get("tablepolicy.tags"):
        doc["tags"] = _flow(props["tablepolicy.tags"].split(","))
    if state.format_version != 2:
        doc["format_version"] = state.format_version
    doc["columns"] = CommentedSeq(_column(f) for f in state.columns.fields)
    if state.partition:
        doc["partition_by"] = CommentedSeq(_partition(f) for f in state.partition if f.transform.kind != "void")
    if state.sort:
        doc["sort_by"] = _flow([_sort(f) for f in state.sort])
    if state.identifier_fields:
        doc["identifier_fields"] = _flow([format_name(p) for p in state.identifier_fields])
    if "write.distribution-mode" in props:
        doc["distribution_mode"] = props["write.distribution-mode"]
    modes = {op: props[f"write.{op}.mode"] for op in ("delete", "update", "merge") if f"write.{op}.mode" in props}
    if modes:
        doc["write_modes"] = _flow_map(modes)
    free = {k: v for k, v in props.items() if _free_property(k)}
    if free:
        doc["properties"] = CommentedMap(sorted(free.items()))
    lifecycle = _lifecycle(props)
    if lifecycle:
        doc["lifecycle"] = lifecycle
    return doc


def _free_property(key: str) -> bool:
    return not (key in SPARK_RESERVED or key in ICEBERG_RESERVED or key in MANAGED_PROPERTIES
                or key.startswith("tablepolicy."))


def _column(f: NestedField) -> CommentedMap:
    column = CommentedMap(name=f.name, type=_type(f.field_type))
    if f.required:
        column["required"] = True
    if f.doc:
        column["doc"] = f.doc
    if isinstance(f.field_type, PrimitiveType):
        column.fa.set_flow_style()
    return column


def _type(t: IcebergType) -> Any:
    if isinstance(t, PrimitiveType):
        return primitive_spelling(t)
    if isinstance(t, StructType):
        return CommentedMap(struct=CommentedSeq(_column(f) for f in t.fields))
    if isinstance(t, ListType):
        out = CommentedMap(list=_type(t.element_type))
        if t.element_required:
            out["element_required"] = True
        return out
    if isinstance(t, MapType):
        entries = CommentedMap(key=_type(t.key_type), value=_type(t.value_type))
        if t.value_required:
            entries["value_required"] = True
        return CommentedMap(map=entries)
    raise TypeError(f"unsupported type {t}")


def _partition(f: PartitionFieldState) -> Any:
    expression = f.transform.expression(f.source)
    default = f.source[-1] + _DEFAULT_PARTITION_SUFFIX[f.transform.kind]
    if f.name is None or f.name == default or f.name.startswith(f"{default}_"):
        return expression
    return _flow_map({"field": expression, "name": f.name})


def _sort(f: SortFieldState) -> str:
    text = f.transform.expression(f.source)
    if f.direction == "desc":
        text += " desc"
    if f.nulls != ("first" if f.direction == "asc" else "last"):
        text += f" nulls {f.nulls}"
    return text


def _lifecycle(props: dict[str, str]) -> CommentedMap:
    lifecycle = CommentedMap()
    for key, (setting, _) in LIFECYCLE_PROPERTIES.items():
        if key not in props:
            continue
        _, section, name = setting.split(".")
        lifecycle.setdefault(section, CommentedMap())[name] = _setting_value(name, key, props[key])
    for section in lifecycle.values():
        section.fa.set_flow_style()
    return lifecycle


def _setting_value(name: str, key: str, text: str) -> Any:
    if key.endswith("-ms"):
        return duration_text(int(text))
    if key == "write.target-file-size-bytes":
        return size_text(int(text))
    if text in ("true", "false"):
        return text == "true"
    if name in ("zorder_by", "key"):
        return _flow(text.split(","))
    if text.isdigit() and name not in ("column",):
        return int(text)
    return text


def duration_text(millis: int) -> str:
    """The coarsest whole unit: 21600000 -> ``6h``."""
    for unit in ("w", "d", "h", "m", "s"):
        size = Duration.UNITS[unit]
        if millis and millis % size == 0:
            return f"{millis // size}{unit}"
    return f"{millis}ms"


def size_text(size: int) -> str:
    for unit in ("TB", "GB", "MB", "KB"):
        step = Size.UNITS[unit]
        if size and size % step == 0:
            return f"{size // step}{unit}"
    return f"{size}B"


def _flow(items: list[str]) -> CommentedSeq:
    seq = CommentedSeq(items)
    seq.fa.set_flow_style()
    return seq


def _flow_map(items: dict[str, Any]) -> CommentedMap:
    mapping = CommentedMap(items)
    mapping.fa.set_flow_style()
    return mapping
