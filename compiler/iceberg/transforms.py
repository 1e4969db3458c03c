"""Partition and sort transforms: spelling, which source types each accepts, and Spark's DDL form.

>>> parse_expression("bucket(16, user_id)")
(Transform(kind='bucket', param=16), ('user_id',))
>>> parse_expression("time_dt")
(Transform(kind='identity', param=None), ('time_dt',))
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import Literal

from pyiceberg.types import (
    BinaryType,
    DateType,
    DecimalType,
    FixedType,
    IcebergType,
    IntegerType,
    LongType,
    PrimitiveType,
    StringType,
    TimestampNanoType,
    TimestampType,
    TimestamptzNanoType,
    TimestamptzType,
    TimeType,
    UUIDType,
)

from .names import format_name, parse_name
from .types import INT32_MAX

TransformKind = Literal["identity", "year", "month", "day", "hour", "bucket", "truncate", "void"]

_TS = (TimestampType, TimestamptzType, TimestampNanoType, TimestamptzNanoType)


@dataclass(frozen=True)
class TransformRule:
    sources: tuple[type[IcebergType], ...] | None  # None: any primitive
    spark: str | None  # Spark DDL function; None: not expressible in DDL
    param: str | None = None  # the name of the integer parameter, if any


TRANSFORM_RULES: dict[str, TransformRule] = {
    "identity": TransformRule(None, ""),
    "year": TransformRule((DateType, *_TS), "years"),
    "month": TransformRule((DateType, *_TS), "months"),
    "day": TransformRule((DateType, *_TS), "days"),
    "hour": TransformRule(_TS, "hours"),
    "bucket": TransformRule(
        (IntegerType, LongType, DecimalType, DateType, TimeType, *_TS, StringType, UUIDType, FixedType, BinaryType),
        "bucket",
        "buckets",
    ),
    "truncate": TransformRule((IntegerType, LongType, DecimalType, StringType, BinaryType), "truncate", "width"),
    "void": TransformRule(None, None),
}

# Spellings users bring from Spark, Hive and cron-like tools, mapped to the Iceberg name.
_FOREIGN = {
    "years": "year",
    "months": "month",
    "days": "day",
    "date": "day",
    "hours": "hour",
    "date_hour": "hour",
    "hourly": "hour",
    "daily": "day",
    "monthly": "month",
    "yearly": "year",
    "trunc": "truncate",
    "buckets": "bucket",
    "hash": "bucket",
}


@dataclass(frozen=True)
class Transform:
    kind: TransformKind
    param: int | None = None

    def __str__(self) -> str:
        """Iceberg's own spelling, as in table metadata: ``bucket[16]``."""
        return f"{self.kind}[{self.param}]" if self.param is not None else self.kind

    def accepts(self, source: IcebergType) -> bool:
        rule = TRANSFORM_RULES[self.kind]
        if not isinstance(source, PrimitiveType):
            return False
        return rule.sources is None or isinstance(source, rule.sources)

    def expression(self, column: tuple[str, ...]) -> str:
        """Policy spelling of this transform applied to a column: ``bucket(16, user_id)``."""
        name = format_name(column)
        if self.kind == "identity":
            return name
        if self.param is not None:
            return f"{self.kind}({self.param}, {name})"
        return f"{self.kind}({name})"


class TransformError(ValueError):
    def __init__(self, message: str, hint: str) -> None:
        super().__init__(message)
        self.hint = hint


_CALL = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*\((.*)\)\s*", re.DOTALL)
_ICEBERG = re.compile(r"([a-z]+)(?:\[([0-9]+)\])?")  # ASCII digits: Python's \d also takes ٣


def parse_transform(kind: str, param: int | None) -> Transform:
    """Validate a transform name and its parameter; raise TransformError with a suggestion."""
    if kind not in TRANSFORM_RULES:
        suggestion = _FOREIGN.get(kind.lower()) or next(
            iter(difflib.get_close_matches(kind.lower(), list(TRANSFORM_RULES), n=1)), None
        )
        hint = f"did you mean '{suggestion}'?" if suggestion else f"use one of: {', '.join(TRANSFORM_RULES)}"
        raise TransformError(f"unknown transform '{kind}'", hint)
    rule = TRANSFORM_RULES[kind]
    if rule.param and param is None:
        raise TransformError(f"{kind} needs a {rule.param} parameter", f"write {kind}(N, column)")
    if not rule.param and param is not None:
        raise TransformError(f"{kind} takes no parameter", f"write {kind}(column)")
    if param is not None and param < 1:
        raise TransformError(f"{kind} {rule.param} must be at least 1, got {param}", f"e.g. {kind}(16, column)")
    if param is not None and param > INT32_MAX:
        raise TransformError(f"{rule.param} {param} of {kind}() is out of range: Iceberg holds at most {INT32_MAX}",
                             f"e.g. {kind}(16, column)")
    return Transform(kind, param)  # type: ignore[arg-type]


def parse_iceberg_transform(text: str) -> Transform:
    """Parse the metadata spelling (``day``, ``bucket[16]``) that pyiceberg's ``str()`` gives."""
    match = _ICEBERG.fullmatch(text)
    if not match:
        raise TransformError(f"unsupported transform '{text}'", "this table uses a transform tablepolicy lacks")
    return parse_transform(match[1], int(match[2]) if match[2] else None)


def parse_expression(text: str) -> tuple[Transform, tuple[str, ...]]:
    """Parse ``column``, ``day(column)``, ``bucket(16, column)`` or ``truncate(4, column)``."""
    call = _CALL.fullmatch(text)
    if call is None:
        if "`" not in text and re.search(r"[()]", text):
            raise TransformError(
                f"unbalanced parentheses in '{text}'",
                "in a YAML flow list [a, b] a comma splits items: quote it, e.g. ['bucket(16, id)'], "
                "or use a block list",
            )
        try:
            return Transform("identity"), parse_name(text.strip())
        except ValueError as exc:
            raise TransformError(str(exc), "quote names with dots or spaces in backticks") from exc
    kind, args = call[1], [a.strip() for a in _split_args(call[2])]
    param: int | None = None
    if len(args) == 2:
        if not re.fullmatch(r"-?[0-9]+", args[0]):
            raise TransformError(
                f"{kind}: expected a number before the column, got '{args[0]}'", f"write {kind}(16, column)"
            )
        if len(args[0]) > 20:
            raise TransformError(f"{kind}: {args[0]} is out of range: Iceberg holds at most {INT32_MAX}",
                                 f"write {kind}(16, column)")
        param = int(args[0])
    elif len(args) != 1:
        raise TransformError(f"{kind}: expected 1 or 2 arguments, got {len(args)}", f"write {kind}(column)")
    transform = parse_transform(kind, param)
    try:
        return transform, parse_name(args[-1])
    except ValueError as exc:
        raise TransformError(str(exc), "quote names with dots or spaces in backticks") from exc


def _split_args(text: str) -> list[str]:
    """Split on commas outside backticks."""
    args: list[str] = []
    buf: list[str] = []
    quoted = False
    for ch in text:
        if ch == "`":
            quoted = not quoted
        if ch == "," and not quoted:
            args.append("".join(buf))
            buf = []
        else:
            buf.append(ch)
    args.append("".join(buf))
    return args


_SOURCE_NAMES: dict[type[IcebergType], str] = {
    IntegerType: "int",
    LongType: "long",
    DecimalType: "decimal",
    DateType: "date",
    TimeType: "time",
    TimestampType: "timestamp",
    TimestamptzType: "timestamptz",
    TimestampNanoType: "timestamp_ns",
    TimestamptzNanoType: "timestamptz_ns",
    StringType: "string",
    UUIDType: "uuid",
    FixedType: "fixed",
    BinaryType: "binary",
}


def accepted_sources(kind: str) -> str:
    """Human list of the source types a transform accepts: ``int, long, decimal, string, binary``."""
    sources = TRANSFORM_RULES[kind].sources
    return "any primitive type" if sources is None else ", ".join(_SOURCE_NAMES[t] for t in sources)
