"""pydantic validation errors -> findings with stable codes, positions and "did you mean" hints."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, ValidationError

from .. import codes
from ..diagnostics import Diagnostic, Severity
from ..iceberg.names import UNSAFE_HINT, unsafe_character
from ..iceberg.types import INT32_MAX, LONG_MAX
from ..yamlsource import Path, SourceMap
from .introspect import field_names, models_at

# pydantic's built-in error types, grouped under the project's stable codes.
_BUILTIN_CODES: dict[str, tuple[str, str]] = {
    "extra_forbidden": (codes.TP102, "unknown key"),
    "missing": (codes.TP103, "missing required key"),
    "greater_than_equal": (codes.TP105, "value out of range"),
    "greater_than": (codes.TP105, "value out of range"),
    "less_than_equal": (codes.TP105, "value out of range"),
    "too_short": (codes.TP112, "too few items"),
    "string_too_short": (codes.TP112, "must not be empty"),
    "literal_error": (codes.TP106, "not one of the allowed values"),
    "string_pattern_mismatch": (codes.TP101, "a name Spark, lock files and catalogs cannot carry"),  # FieldName only
    "string_too_long": (codes.TP105, "too long"),
}
_WRONG_TYPE = (codes.TP104, "wrong type")
_LIMITS = {INT32_MAX: "Iceberg and Spark hold this as a 32-bit integer",
           LONG_MAX: "Iceberg and Spark hold this as a 64-bit integer (a Java long)"}
# The unions whose errors carry no hint of their own (type expressions, partition and sort items).
_UNION_HINTS = {
    codes.TP203: "e.g. type: string, type: {list: string} or type: {struct: [{name: a, type: int}]}",
    codes.TP104: "e.g. day(ts), or {field: day(ts), name: ts_day}",
}
# How to write what a wrong-type value should have been (by pydantic's error type).
_SPELLINGS = {
    "bool_type": "write true or false (yes, no, on, off and 1 are not booleans)",
    "int_type": "write a whole number, unquoted (true and 2.0 are not whole numbers)",
    "string_type": "quote the value to make it text",
    "float_type": "write a number, unquoted",
    "date_type": "write the date as YYYY-MM-DD, e.g. 2026-11-02",
    "date_parsing": "write the date as YYYY-MM-DD, e.g. 2026-11-02",
    "date_from_datetime_parsing": "write the date as YYYY-MM-DD, e.g. 2026-11-02",
    "list_type": "write a list: [a, b] or one '- item' per line",
    "dict_type": "write a mapping: {key: value} or one 'key: value' per line",
    "model_type": "write a mapping: {key: value} or one 'key: value' per line",
    "model_attributes_type": "write a mapping: {key: value} or one 'key: value' per line",
}


def findings_from(
    error: ValidationError, model: type[BaseModel], data: Any, source: SourceMap
) -> Iterable[Diagnostic]:
    """Translate every error of one validation into a finding at its YAML position."""
    seen: set[tuple[Path, str]] = set()
    for item in error.errors(include_url=False):
        path = _data_path(item["loc"], data, keyed=item["type"] in ("missing", "extra_forbidden"))
        ctx = item.get("ctx") or {}
        kind = item["type"]
        union_member = kind.endswith("_type") and _is_tag_noise(item["loc"], path)
        if kind == "union_tag_invalid" or union_member:
            kind = codes.TP104
        code, label = _BUILTIN_CODES.get(kind, (kind, "")) if not kind.startswith("TP") else (kind, "")
        if union_member:
            label = _WRONG_TYPE[1]
        if not code.startswith("TP"):
            code, label = _WRONG_TYPE
        message, hint = _describe(item, path, label, model, ctx)
        if (path, code) in seen:  # a union reports one wrong value once per member
            continue
        seen.add((path, code))
        location = source.key(path) if kind in ("extra_forbidden", "missing") else source.value(path)
        yield Diagnostic(code, Severity.ERROR, location, message, hint)


def _belongs_under(model: type[BaseModel], parent: Path, key: str, allowed: list[str]) -> str | None:
    """The key of this mapping whose own mapping takes ``key``: a top-level ``retention:`` belongs under
    ``lifecycle:``."""
    for name in allowed:
        try:
            if key in field_names(models_at(model, (*parent, name))):
                return name
        except (KeyError, TypeError, AttributeError):
            continue
    return None


def _describe(
    item: Any, path: Path, label: str, model: type[BaseModel], ctx: dict[str, Any]
) -> tuple[str, str | None]:
    where = ".".join(str(p) for p in path) or "document"
    kind = item["type"]
    if kind == "extra_forbidden":
        key = str(path[-1])
        allowed = sorted(field_names(models_at(model, path[:-1])))
        close = difflib.get_close_matches(key, allowed, n=1, cutoff=0.6)
        hint = f"did you mean '{close[0]}'?" if close else f"allowed keys: {', '.join(sorted(allowed))}"
        if not close and (home := _belongs_under(model, path[:-1], key, allowed)) is not None:
            hint = f"'{key}' belongs under '{home}:' (write {home}: {{{key}: ...}})"
        return f"unknown key '{key}' in {'.'.join(str(p) for p in path[:-1]) or 'document'}", hint
    if kind == "missing":
        return f"missing required key '{path[-1]}'", f"add '{path[-1]}:' here"
    if kind.startswith("TP"):
        return f"{where}: {item['msg']}", ctx.get("hint") or _UNION_HINTS.get(kind)
    if kind in ("greater_than_equal", "greater_than"):
        bound = ctx.get("ge", ctx.get("gt"))
        return f"{where}: {label}: {item['msg'][0].lower()}{item['msg'][1:]}", f"the smallest allowed value is {bound}"
    if kind in ("too_short", "string_too_short"):
        fix = "add an item, or remove the key" if kind == "too_short" else "write a value, or remove the key"
        return f"{where}: {label}: {item['msg'][0].lower()}{item['msg'][1:]}", fix
    if kind == "string_too_long":
        return (f"{where}: {label}: {len(item['input'])} characters, at most {ctx.get('max_length')}",
                f"shorten it to {ctx.get('max_length')} characters")
    if kind == "less_than_equal":
        return f"{where}: {label}: at most {ctx.get('le')}, got {item['input']!r}", _LIMITS.get(ctx.get("le", 0))
    if kind == "string_pattern_mismatch":
        return f"{where}: name {item['input']!r} holds {unsafe_character(item['input'], field=True)}", UNSAFE_HINT
    if kind == "literal_error":
        return f"{where}: {label}, got {item['input']!r}", f"expected {ctx.get('expected')}"
    return f"{where}: {label}: {item['msg'][0].lower()}{item['msg'][1:]}", _SPELLINGS.get(kind)


def _is_tag_noise(loc: tuple[Any, ...], path: Path) -> bool:
    return len(loc) > len(path)


def _data_path(loc: tuple[Any, ...], data: Any, *, keyed: bool) -> Path:
    """Drop union tags and validator names from a pydantic loc by following the real data; ``keyed``: the last
    part names a key missing from the data or not allowed in it (else it is a union member's name, ``str`` or
    ``int``, which names no key of the mapping it was tried on)."""
    path: list[str | int] = []
    node = data
    for i, part in enumerate(loc):
        in_map = isinstance(node, dict) and isinstance(part, str) and part in node
        if in_map and _is_union_tag(node, part, loc[i + 1 :]):
            continue
        in_list = isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)
        if in_map or in_list:
            node = node[part]
            path.append(part)
        elif keyed and i == len(loc) - 1 and isinstance(node, dict) and isinstance(part, str):
            path.append(part)  # a missing or extra key: not in the data, but still the name to report
    return tuple(path)


def _is_union_tag(node: dict[str, Any], part: str, rest: tuple[Any, ...]) -> bool:
    """``list`` in ``('type', 'list', 'element_id')`` is the union member's tag, not the ``list:`` key: the
    next part is a sibling key of ``list:`` and no key of its value."""
    if not rest or not isinstance(rest[0], str) or rest[0] not in node:
        return False
    value = node[part]
    return not (isinstance(value, dict) and rest[0] in value)
