"""Parquet bloom filters on the erasure key columns, as Iceberg's table properties (one pair per key column).

A table declaring ``lifecycle.erasure.key`` gets a filter on every key column unless its ``bloom_filter`` turns
them off: the properties are derived from the key, so they follow it when a key column is renamed. Which keys the
policy owns is read from the key the table records (``tablepolicy.erasure.key``, planned with it) as well as from
the key git declares: a key column dropped from the key, or erasure removed, unsets the properties it owned.
Unset, not false: Iceberg writes a filter only for ``true``, so both mean no filter and unset converges with a
table that never had one. Filters on other columns stay the user's (``properties:``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..iceberg.names import parse_name
from ..iceberg.types import INT32_MAX
from ..policy.lifecycle import Erasure

ENABLED = "write.parquet.bloom-filter-enabled.column."
FPP = "write.parquet.bloom-filter-fpp.column."
MAX_BYTES = "write.parquet.bloom-filter-max-bytes"
SETTING = "lifecycle.erasure.bloom_filter"
ERASURE_KEY = "tablepolicy.erasure.key"  # LIFECYCLE_PROPERTIES' record of lifecycle.erasure.key: comma-joined


def column_path(key: str) -> str | None:
    """A key column as Iceberg's per-column properties name it: the dotted path (``payload.account_id``)."""
    try:
        return ".".join(parse_name(key))
    except ValueError:
        return None  # TP441 reports it


def bloom_properties(erasure: Erasure | None) -> dict[str, str]:
    """The properties ``erasure``'s bloom filters set (none without a key)."""
    if erasure is None or not erasure.key:
        return {}
    spec = erasure.bloom_filter
    enabled = spec is None or spec.enabled is not False
    overrides = (spec.columns if spec is not None else None) or {}
    props: dict[str, str] = {}
    for key in erasure.key:
        path = column_path(key)
        if path is None:
            continue
        column = overrides.get(key) or overrides.get(path)
        if not (column.enabled if column is not None and column.enabled is not None else enabled):
            continue
        props[ENABLED + path] = "true"
        fpp = column.fpp if column is not None and column.fpp is not None else spec.fpp if spec else None
        if fpp is not None:
            props[FPP + path] = repr(fpp)
    if spec is not None and spec.max_bytes is not None:
        props[MAX_BYTES] = str(spec.max_bytes.bytes)
    return props


def same_filter(key: str, old: str | None, new: str | None) -> bool:
    """An enabled key set to false and one unset both mean no filter: the plan leaves a false one alone."""
    return key.startswith(ENABLED) and {(old or "false").strip().lower(), new or "false"} == {"false"}


def key_columns(properties: Mapping[str, str]) -> list[str]:
    """The key columns a table's (or a desired state's) erasure record names, as property paths."""
    text = properties.get(ERASURE_KEY)
    if not text:
        return []
    return [path for key in text.split(",") if (path := column_path(key)) is not None]


def owned_keys(properties: Mapping[str, str]) -> set[str]:
    """The bloom filter properties an erasure recorded in ``properties`` owns (none without one)."""
    return _keys(key_columns(properties))


def managed_keys(erasure: Erasure | None) -> set[str]:
    """The bloom filter properties ``erasure`` owns: hand-written under ``properties:`` they are refused."""
    if erasure is None or not erasure.key:
        return set()
    return _keys([path for key in erasure.key if (path := column_path(key)) is not None])


def _keys(columns: list[str]) -> set[str]:
    if not columns:
        return set()
    return {MAX_BYTES} | {prefix + column for column in columns for prefix in (ENABLED, FPP)}


def enabled_columns(properties: Mapping[str, str]) -> list[str]:
    """The columns a table's properties ask Iceberg to write bloom filters for."""
    return sorted(key.removeprefix(ENABLED) for key, value in properties.items()
                  if key.startswith(ENABLED) and value.strip().lower() == "true")


def declared_filters(properties: Mapping[str, str]) -> dict[str, Any] | None:
    """The ``bloom_filter`` block that plans the filters ``properties`` hold on the recorded erasure key (import);
    None when they are the default (a filter on every key column, Iceberg's sizes). ``max_bytes`` in bytes."""
    columns = key_columns(properties)
    if not columns:
        return None
    on = [c for c in columns if properties.get(ENABLED + c, "").strip().lower() == "true"]
    block: dict[str, Any] = {} if on else {"enabled": False}
    per_column: dict[str, dict[str, Any]] = {c: {"enabled": False} for c in columns if c not in on} if on else {}
    fpps = {c: _probability(properties.get(FPP + c)) for c in on}
    shared = set(fpps.values())
    if len(shared) == 1 and None not in shared:
        block["fpp"] = shared.pop()
    else:
        for column, fpp in fpps.items():
            if fpp is not None:
                per_column.setdefault(column, {})["fpp"] = fpp
    limit = properties.get(MAX_BYTES, "")
    if limit.isdigit() and 0 < int(limit) <= INT32_MAX:
        block["max_bytes"] = int(limit)
    if per_column:
        block["columns"] = per_column
    return block or None


def _probability(text: str | None) -> float | None:
    try:
        value = float(text) if text is not None else None
    except ValueError:
        return None  # not a number: the plan sets what git then declares
    return value if value is not None and 0 < value < 1 else None
