"""Catalog tables -> policy YAML, so that ``plan`` right after ``import`` shows no changes.

What ``import`` selects, decided here from a listing of the catalog (the runtime reads it):

- ``sales.orders``: that table;
- ``sales.*`` (or ``--namespace sales``): the tables of namespace ``sales`` itself, not of ``sales.eu``;
- ``sales.**`` (or ``--namespace sales --recursive``): those of ``sales`` and every namespace under it;
- ``**``: every table of the catalog.

Views (a SQL catalog's) are selected as tables are, and each becomes a view policy file.

A selector that matches nothing is an error naming what exists, never an import of zero tables.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, assert_never

from pyiceberg.types import IcebergType, ListType, MapType, NestedField, PrimitiveType, StructType
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.scalarstring import LiteralScalarString

from .diff.refs import SAFETY_TAG_PREFIX
from .fmt import format_text
from .iceberg.names import format_name, natural_key, parse_name
from .iceberg.types import primitive_spelling
from .model import bloom
from .model.properties import (
    ICEBERG_RESERVED,
    LIFECYCLE_PROPERTIES,
    MANAGED_PROPERTIES,
    SERVER_PROPERTIES,
    SPARK_RESERVED,
    declared_in,
)
from .model.table import PartitionFieldState, RefState, SortFieldState, TableState
from .model.view import OWNER_KEY, CurrentView
from .policy.units import Duration, Size

_DEFAULT_PARTITION_SUFFIX = {"identity": "", "year": "_year", "month": "_month", "day": "_day", "hour": "_hour",
                             "bucket": "_bucket", "truncate": "_trunc", "void": "_null"}


def policy_yaml(state: TableState, *, preamble: str = "") -> str:
    """The policy file text that declares ``state`` exactly (canonical formatting); ``preamble``: comment lines
    to start with (the editor schema header)."""
    yaml = YAML(typ="rt")
    out = io.StringIO()
    yaml.dump(policy_document(state), out)
    header = f"# Imported from the catalog by `tablepolicy import {format_name(state.name)}`.\n"
    return format_text(preamble + header + out.getvalue())


def view_policy_yaml(view: CurrentView, *, preamble: str = "") -> str:
    """The view policy file text that declares ``view`` as the catalog holds it, so that plan right after shows no
    changes: the SQL, the columns with their comments when any has one, the comment, and the owner and properties
    an apply recorded as declared (other keys, Spark's own among them, stay undeclared and are left alone)."""
    state = view.state
    doc = CommentedMap()
    doc["view"] = format_name(state.name)
    doc["sql"] = LiteralScalarString(state.sql + "\n") if "\n" in state.sql else state.sql
    if any(comment for _, comment in state.columns):
        doc["columns"] = _flow_map(dict(state.columns))
    if state.comment:
        doc["description"] = state.comment
    declared = declared_in(state.properties)
    if OWNER_KEY in declared and OWNER_KEY in state.properties:
        doc["owner"] = state.properties[OWNER_KEY]
    free = {k: state.properties[k] for k in sorted(declared) if k in state.properties and k != OWNER_KEY}
    if free:
        doc["properties"] = CommentedMap(free)
    yaml = YAML(typ="rt")
    out = io.StringIO()
    yaml.dump(doc, out)
    header = f"# Imported from the catalog by `tablepolicy import {format_name(state.name)}`.\n"
    return format_text(preamble + header + out.getvalue())


def policy_file(folder: Path, name: tuple[str, ...]) -> Path:
    """Where ``import`` writes a table's policy: ``folder/sales/eu/orders.yaml`` for ``sales.eu.orders``.
    ValueError for a name part no file or folder can be called (it would land outside ``folder``)."""
    for part in name:
        if part in (".", "..") or any(c in part for c in "/\\\0"):
            raise ValueError(f"{format_name(name)}: {part!r} cannot be a file or folder name; import the table "
                             f"without --out and save its YAML under a name of your choice")
    return folder.joinpath(*name[:-1], f"{name[-1]}.yaml")


@dataclass(frozen=True)
class ExactTable:
    name: tuple[str, ...]


@dataclass(frozen=True)
class NamespaceTables:
    namespace: tuple[str, ...]  # () with ``recursive``: the whole catalog
    recursive: bool

    def text(self) -> str:
        if not self.namespace:
            return "**"
        return format_name(self.namespace) + (".**" if self.recursive else ".*")

    def matches(self, table: tuple[str, ...]) -> bool:
        if self.recursive:
            return len(table) > len(self.namespace) and table[:len(self.namespace)] == self.namespace
        return table[:-1] == self.namespace


Selector = ExactTable | NamespaceTables

_QUOTED = re.compile(r"`(?:[^`]|``)*`")


def parse_selector(text: str) -> Selector:
    """One argument of ``import``; ValueError says what is wrong and what to write.

    >>> parse_selector("sales.*")
    NamespaceTables(namespace=('sales',), recursive=False)
    >>> parse_selector("`my ns`.**")
    NamespaceTables(namespace=('my ns',), recursive=True)
    """
    stripped = text.strip()
    if stripped == "**":
        return NamespaceTables((), recursive=True)
    for suffix, recursive in ((".**", True), (".*", False)):
        if stripped.endswith(suffix):
            return namespace_selector(stripped[:-len(suffix)], recursive=recursive)
    if "*" in _QUOTED.sub("", stripped):  # a star outside backticks is a wildcard; only whole last parts are
        raise ValueError(f"{text!r}: a wildcard stands for a whole name at the end: NS.* (the tables of NS), "
                         f"NS.** (and of its nested namespaces) or ** (every table)")
    name = parse_name(stripped)
    if len(name) < 2:
        raise ValueError(f"{text!r} is no table name: write namespace.table, NS.* or NS.**")
    return ExactTable(name)


def namespace_selector(text: str, *, recursive: bool) -> NamespaceTables:
    """``--namespace sales`` (``--recursive``: and its nested namespaces)."""
    if "*" in _QUOTED.sub("", text):
        raise ValueError(f"{text!r}: a namespace is a name, not a pattern (write sales or sales.eu)")
    return NamespaceTables(parse_name(text), recursive=recursive)


@dataclass(frozen=True)
class Inventory:
    """What a catalog holds: every namespace (nested ones included) and every table."""

    namespaces: frozenset[tuple[str, ...]]
    tables: frozenset[tuple[str, ...]]
    views: frozenset[tuple[str, ...]] = frozenset()  # selected as tables are; each imported as a view policy


@dataclass(frozen=True)
class Selection:
    tables: tuple[tuple[str, ...], ...]  # sorted, each once
    problems: tuple[str, ...]  # a line per selector that matched nothing, naming what exists


_SHOWN = 20  # names listed in an error before "and N more"


def select_tables(selectors: list[Selector], inventory: Inventory) -> Selection:
    """The tables ``selectors`` name, in name order; every selector that matches nothing is a problem."""
    chosen: set[tuple[str, ...]] = set()
    problems: list[str] = []
    held = inventory.tables | inventory.views
    for selector in selectors:
        match selector:
            case ExactTable(name):
                if name in held:
                    chosen.add(name)
                else:
                    problems.append(_missing_table(name, inventory))
            case NamespaceTables():
                found = {t for t in held if selector.matches(t)}
                chosen |= found
                if not found:
                    problems.append(_empty_selection(selector, inventory))
            case _:
                assert_never(selector)
    return Selection(tuple(sorted(chosen, key=natural_key)), tuple(problems))


def _names(names: set[tuple[str, ...]] | frozenset[tuple[str, ...]]) -> str:
    shown = [format_name(n) for n in sorted(names, key=natural_key)]
    more = f" and {len(shown) - _SHOWN} more" if len(shown) > _SHOWN else ""
    return ", ".join(shown[:_SHOWN]) + more


def _namespaces_that_exist(inventory: Inventory) -> str:
    if not inventory.namespaces:
        return "the catalog holds no namespaces"
    return f"namespaces: {_names(inventory.namespaces)}"


def _missing_table(name: tuple[str, ...], inventory: Inventory) -> str:
    namespace = name[:-1]
    if namespace not in inventory.namespaces:
        return f"{format_name(name)}: no namespace {format_name(namespace)}; {_namespaces_that_exist(inventory)}"
    held = {t for t in inventory.tables if t[:-1] == namespace}
    if not held:
        return f"{format_name(name)}: no such table; namespace {format_name(namespace)} holds no tables"
    return f"{format_name(name)}: no such table; tables of {format_name(namespace)}: {_names(held)}"


def _empty_selection(selector: NamespaceTables, inventory: Inventory) -> str:
    text = selector.text()
    namespace = selector.namespace
    if not namespace:
        return f"{text}: the catalog holds no tables"
    if namespace not in inventory.namespaces:
        return f"{text}: no namespace {format_name(namespace)}; {_namespaces_that_exist(inventory)}"
    nested = NamespaceTables(namespace, recursive=True)
    below = {t[:-1] for t in inventory.tables if nested.matches(t)}
    if below:
        return (f"{text}: namespace {format_name(namespace)} holds no tables of its own; these nested namespaces "
                f"do: {_names(below)} (import them with '{nested.text()}' or --namespace "
                f"{format_name(namespace)} --recursive)")
    return f"{text}: namespace {format_name(namespace)} holds no tables"


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
    filters = bloom.owned_keys(props)  # the erasure block below plans them
    free = {k: v for k, v in props.items() if _free_property(k) and k not in filters}
    if free:
        doc["properties"] = CommentedMap(sorted(free.items()))
    lifecycle = _lifecycle(props)
    if lifecycle:
        doc["lifecycle"] = lifecycle
    refs = [r for r in state.refs if not r.name.startswith(SAFETY_TAG_PREFIX)]
    if refs:
        doc["refs"] = CommentedSeq(_ref(r) for r in refs)
    return doc


def _ref(ref: RefState) -> CommentedMap:
    """A branch or tag with its own retention; no snapshot_id: the ref exists, and a new one (another
    environment) starts at its table's current snapshot."""
    keep = ref.retention
    values = [(ref.kind, ref.name), ("max_ref_age", keep.max_ref_age_ms and duration_text(keep.max_ref_age_ms)),
              ("min_snapshots_to_keep", keep.min_snapshots_to_keep),
              ("max_snapshot_age", keep.max_snapshot_age_ms and duration_text(keep.max_snapshot_age_ms))]
    return _flow_map({key: value for key, value in values if value is not None})


def _free_property(key: str) -> bool:
    return not (key in SPARK_RESERVED or key in ICEBERG_RESERVED or key in MANAGED_PROPERTIES
                or key in SERVER_PROPERTIES or key.startswith("tablepolicy."))


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
    if "erasure" in lifecycle and (filters := bloom.declared_filters(props)) is not None:
        if "max_bytes" in filters:
            filters["max_bytes"] = size_text(filters["max_bytes"])
        lifecycle["erasure"]["bloom_filter"] = _flow_map(
            {k: _flow_map({c: _flow_map(v) for c, v in filters["columns"].items()}) if k == "columns" else v
             for k, v in filters.items()})
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
