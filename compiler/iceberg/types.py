"""Iceberg primitive types: how policies spell them and what Spark 3.5 can create.

All type rules live in tables here (parsing, Spark DDL, transform sources in transforms.py,
promotions in promotion.py) so the validator, the differ and the renderers agree.

>>> str(parse_primitive("decimal(12,2)"))
'decimal(12, 2)'
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

from pyiceberg.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
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

INT32_MAX = 2**31 - 1  # Java's int: Iceberg field ids, bucket counts, truncate widths, Iceberg's int settings
LONG_MAX = 2**63 - 1  # Java's long: sizes in bytes, durations in milliseconds


class TypeSpellingError(ValueError):
    def __init__(self, message: str, hint: str) -> None:
        super().__init__(message)
        self.hint = hint


@dataclass(frozen=True)
class PrimitiveRule:
    """One policy spelling of a primitive type and how Spark 3.5 DDL writes it (None: it cannot)."""

    pattern: re.Pattern[str]
    build: Callable[[re.Match[str]], PrimitiveType]
    spark: Callable[[PrimitiveType], str] | None
    why_not_spark: str = ""


def _fixed(name: str, iceberg: PrimitiveType, spark: str | None, why: str = "") -> PrimitiveRule:
    return PrimitiveRule(
        re.compile(re.escape(name)), lambda _m: iceberg, (lambda _t: spark) if spark else None, why
    )


def _decimal(m: re.Match[str]) -> DecimalType:
    precision, scale = int(m[1]), int(m[2])
    if not 1 <= precision <= 38:
        raise TypeSpellingError(f"decimal precision {precision} is out of range", "precision must be 1..38")
    if scale > precision:
        raise TypeSpellingError(
            f"decimal scale {scale} exceeds precision {precision}",
            "scale must be at most the precision, e.g. decimal(12,2)",
        )
    return DecimalType(precision, scale)


def _decimal_sql(t: PrimitiveType) -> str:
    assert isinstance(t, DecimalType)
    return f"DECIMAL({t.precision},{t.scale})"


PRIMITIVE_RULES: dict[str, PrimitiveRule] = {
    "boolean": _fixed("boolean", BooleanType(), "BOOLEAN"),
    "int": _fixed("int", IntegerType(), "INT"),
    "long": _fixed("long", LongType(), "BIGINT"),
    "float": _fixed("float", FloatType(), "FLOAT"),
    "double": _fixed("double", DoubleType(), "DOUBLE"),
    "date": _fixed("date", DateType(), "DATE"),
    # Iceberg timestamp has no zone: Spark's TIMESTAMP_NTZ. Iceberg timestamptz is Spark's TIMESTAMP.
    "timestamp": _fixed("timestamp", TimestampType(), "TIMESTAMP_NTZ"),
    "timestamptz": _fixed("timestamptz", TimestamptzType(), "TIMESTAMP"),
    "string": _fixed("string", StringType(), "STRING"),
    "binary": _fixed("binary", BinaryType(), "BINARY"),
    "decimal": PrimitiveRule(
        re.compile(r"decimal\(\s*([0-9]+)\s*,\s*([0-9]+)\s*\)"),
        _decimal,
        _decimal_sql,
    ),
    "time": _fixed("time", TimeType(), None, "Spark 3.5 has no TIME type; store it as long micros"),
    "uuid": _fixed(
        "uuid", UUIDType(), None, "Spark 3.5 has no UUID type; declare it as string (Spark reads uuid as string)"
    ),
    "fixed": PrimitiveRule(
        re.compile(r"fixed\[\s*([0-9]+)\s*\]"),
        lambda m: FixedType(int(m[1])),
        None,
        "Spark 3.5 DDL has no fixed-length binary; declare it as binary",
    ),
    "timestamp_ns": _fixed(
        "timestamp_ns", TimestampNanoType(), None, "nanosecond timestamps are format v3; Spark 3.5 has none"
    ),
    "timestamptz_ns": _fixed(
        "timestamptz_ns", TimestamptzNanoType(), None, "nanosecond timestamps are format v3; Spark 3.5 has none"
    ),
}

# Spellings from other systems, mapped to the Iceberg name a user most likely means.
FOREIGN_SPELLINGS: dict[str, str] = {
    "integer": "int",
    "smallint": "int",
    "tinyint": "int",
    "short": "int",
    "byte": "int",
    "bigint": "long",
    "int64": "long",
    "int32": "int",
    "real": "float",
    "float32": "float",
    "float64": "double",
    "bool": "boolean",
    "varchar": "string",
    "char": "string",
    "text": "string",
    "str": "string",
    "bytes": "binary",
    "varbinary": "binary",
    "numeric": "decimal(P,S)",
    "number": "decimal(P,S)",
    "timestamp_ntz": "timestamp",
    "timestamp_ltz": "timestamptz",
    "datetime": "timestamp",
    "array": "{list: TYPE}",
    "struct": "{struct: [COLUMNS]}",
    "map": "{map: {key: TYPE, value: TYPE}}",
}


@cache
def parse_primitive(text: str) -> PrimitiveType:
    """Parse a policy spelling such as ``long``, ``decimal(12,2)`` or ``fixed[16]``."""
    spelled = text.strip()
    for rule in PRIMITIVE_RULES.values():
        match = rule.pattern.fullmatch(spelled)
        if match:
            return rule.build(match)
    base = re.split(r"[(\[<\s]", spelled, maxsplit=1)[0].lower()
    if base in FOREIGN_SPELLINGS:
        hint = f"did you mean '{FOREIGN_SPELLINGS[base]}'?"
    elif base in PRIMITIVE_RULES:
        hint = "check the parameters, e.g. decimal(12,2) or fixed[16]"
    else:
        close = difflib.get_close_matches(base, [*PRIMITIVE_RULES, *FOREIGN_SPELLINGS], n=1)
        suggestion = FOREIGN_SPELLINGS.get(close[0], close[0]) if close else None
        hint = f"did you mean '{suggestion}'?" if suggestion else "see `tablepolicy schema` for the type names"
    raise TypeSpellingError(f"unknown type '{spelled}'", hint)


def primitive_spelling(t: PrimitiveType) -> str:
    """The policy spelling of a primitive (inverse of parse_primitive)."""
    if isinstance(t, DecimalType):
        return f"decimal({t.precision},{t.scale})"
    if isinstance(t, FixedType):
        return f"fixed[{len(t)}]"
    return str(t)


def spark_ddl_type(t: IcebergType) -> str:
    """Spark 3.5 DDL for an Iceberg type; nested field options are rendered by the caller."""
    if isinstance(t, PrimitiveType):
        rule = _rule_for(t)
        if rule.spark is None:
            raise ValueError(f"type {t} cannot be created by Spark 3.5: {rule.why_not_spark}")
        return rule.spark(t)
    raise TypeError(f"nested type {t} needs the nested renderer")


def why_not_spark(t: PrimitiveType) -> str | None:
    """None when Spark 3.5 can create the type, else the reason it cannot."""
    rule = _rule_for(t)
    return None if rule.spark is not None else rule.why_not_spark


def _rule_for(t: PrimitiveType) -> PrimitiveRule:
    return PRIMITIVE_RULES[re.split(r"[(\[]", primitive_spelling(t), maxsplit=1)[0]]


TEMPORAL = (DateType, TimestampType, TimestamptzType, TimestampNanoType, TimestamptzNanoType)

# What an erasure request can name a subject by (values in the requests file are strings or integers).
ERASURE_KEY_TYPES = (StringType, IntegerType, LongType)

# What Iceberg's Spark z-order can interleave (SparkZOrderUDF): not decimal, not timestamp without zone.
ZORDERABLE = (IntegerType, LongType, FloatType, DoubleType, StringType, UUIDType, BinaryType, FixedType, BooleanType,
              DateType, TimestamptzType)


def is_temporal(t: IcebergType) -> bool:
    return isinstance(t, TEMPORAL)

