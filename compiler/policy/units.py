"""Durations (``6h``, ``3d``) and sizes (``512MB``), parsed strictly with one spelling each.

Sizes use binary units as Iceberg's documentation does: ``512MB`` is 536870912 bytes.

>>> Duration.parse("6h").millis
21600000
>>> Size.parse("512MB").bytes
536870912
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, ClassVar, Self

from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import PydanticCustomError, core_schema

from .. import codes
from ..iceberg.types import INT32_MAX, LONG_MAX


class _OutOfRange(ValueError):
    pass


def up_to(high: int) -> str:
    """A regular expression of the numbers 1 to ``high`` written without leading zeros.

    >>> up_to(365000)
    '[1-9][0-9]{0,4}|[1-2][0-9]{5}|3[0-5][0-9]{4}|36[0-4][0-9]{3}|365000'
    """
    text = str(high)
    shorter = [f"[1-9][0-9]{{0,{len(text) - 2}}}"] if len(text) > 2 else ["[1-9]"] if len(text) == 2 else []
    same = []
    for i, digit in enumerate(text):
        low = 1 if i == 0 else 0
        if int(digit) > low:
            rest = len(text) - i - 1
            below = f"[{low}-{int(digit) - 1}]" if int(digit) - 1 > low else str(low)
            same.append(text[:i] + below + (f"[0-9]{{{rest}}}" if rest > 1 else "[0-9]" if rest else ""))
    return "|".join([*shorter, *same, text])


@dataclass(frozen=True, order=True)
class _Quantity:
    """A number with a unit, kept with its original spelling for round-tripping."""

    value: int
    text: str

    UNITS: ClassVar[dict[str, int]] = {}
    MAX: ClassVar[int] = 0  # in the smallest unit
    MAX_TEXT: ClassVar[str] = ""  # the bound as a policy would write it
    WHY_MAX: ClassVar[str] = ""
    HINT: ClassVar[str] = ""
    CODE: ClassVar[str] = ""
    WHAT: ClassVar[str] = ""
    EXAMPLES: ClassVar[str] = ""
    POSITIVE: ClassVar[bool] = False  # zero is refused here (TP110/TP111), not left to a check of its own
    WHY_POSITIVE: ClassVar[str] = ""

    @classmethod
    def pattern(cls) -> str:
        return r"^([0-9]+)(" + "|".join(sorted(cls.UNITS, key=len, reverse=True)) + r")$"

    @classmethod
    def schema_pattern(cls) -> str:
        """What the JSON Schema allows, exactly what ``parse`` takes above zero (a zero the validator allows the
        checks refuse): in each unit, a number from 1 to the most that unit holds within ``MAX``; in ASCII digits
        (Python's ``\\d`` also takes ``٣``, ECMA-262's, which editors use, does not)."""
        units = sorted(cls.UNITS, key=len, reverse=True)
        return "^0*(?:" + "|".join(f"(?:{up_to(cls.MAX // cls.UNITS[u])}){u}" for u in units) + ")$"

    @classmethod
    def parse(cls, text: str) -> Self:
        match = re.fullmatch(cls.pattern(), text)
        if not match:
            raise ValueError(f"bad {cls.WHAT} '{text}': write a whole number and a unit, e.g. {cls.EXAMPLES}")
        digits = match[1].lstrip("0") or "0"  # leading zeros say nothing (and cost nothing)
        if len(digits) > 20 or int(digits) * cls.UNITS[match[2]] > cls.MAX:
            raise _OutOfRange(f"{cls.WHAT} '{text}' is out of range: {cls.WHY_MAX}")
        return cls(int(digits) * cls.UNITS[match[2]], text)

    @classmethod
    def _validate(cls, raw: Any) -> Self:
        if isinstance(raw, cls):
            return raw
        if not isinstance(raw, str):
            raise PydanticCustomError(
                cls.CODE, "bad {what} {raw}: expected a string such as {examples}",
                {"what": cls.WHAT, "raw": repr(raw), "examples": cls.EXAMPLES,
                 "hint": "a number alone has no unit; " + cls.HINT},
            )
        try:
            parsed = cls.parse(raw)
        except ValueError as exc:
            hint = f"at most {cls.MAX_TEXT}" if isinstance(exc, _OutOfRange) else cls.HINT
            raise PydanticCustomError(cls.CODE, "{message}", {"message": str(exc), "hint": hint}) from exc
        if cls.POSITIVE and parsed.value == 0:
            raise PydanticCustomError(cls.CODE, "{what} '{raw}' is zero: {why}",
                                      {"what": cls.WHAT, "raw": raw, "why": cls.WHY_POSITIVE,
                                       "hint": f"write more than zero, e.g. {cls.EXAMPLES}, or remove the key"})
        return parsed

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        return core_schema.no_info_plain_validator_function(
            cls._validate, serialization=core_schema.plain_serializer_function_ser_schema(lambda v: v.text)
        )

    @classmethod
    def __get_pydantic_json_schema__(
        cls, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        return {"type": "string", "pattern": cls.schema_pattern(), "examples": cls.EXAMPLES.split(", ")}

    def __str__(self) -> str:
        return self.text


class Duration(_Quantity):
    UNITS: ClassVar[dict[str, int]] = {
        "ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000, "w": 604_800_000,
    }
    # A thousand years: any cutoff "now minus this" stays a valid date and timestamp for centuries.
    MAX: ClassVar[int] = 365_000 * 86_400_000
    MAX_TEXT: ClassVar[str] = "365000d (1000 years)"
    WHY_MAX: ClassVar[str] = "a cutoff further back is no date or timestamp Spark and Iceberg hold"
    HINT: ClassVar[str] = "the units are ms, s, m, h, d and w"
    CODE: ClassVar[str] = codes.TP110
    WHAT: ClassVar[str] = "duration"
    EXAMPLES: ClassVar[str] = "30m, 6h, 3d, 2w"

    @property
    def millis(self) -> int:
        return self.value


class PositiveDuration(Duration):
    """A window or a deadline: zero would mean nothing (no window, a deadline already missed)."""

    POSITIVE: ClassVar[bool] = True
    WHY_POSITIVE: ClassVar[str] = "a window or deadline of no time means nothing"


class Size(_Quantity):
    UNITS: ClassVar[dict[str, int]] = {
        "B": 1, "KB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30, "TB": 1 << 40,
        "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40,
    }
    MAX: ClassVar[int] = LONG_MAX  # Iceberg's size properties are Java longs
    MAX_TEXT: ClassVar[str] = "8388607TB"
    WHY_MAX: ClassVar[str] = "Iceberg holds sizes as a Java long of bytes"
    HINT: ClassVar[str] = "the units are B, KB, MB, GB and TB (binary: 1KB = 1024B), or KiB, MiB, GiB, TiB"
    CODE: ClassVar[str] = codes.TP111
    WHAT: ClassVar[str] = "size"
    EXAMPLES: ClassVar[str] = "128MB, 512MB, 1GB"
    POSITIVE: ClassVar[bool] = True
    WHY_POSITIVE: ClassVar[str] = "Iceberg cannot write files of no bytes"

    @property
    def bytes(self) -> int:
        return self.value


class IntSize(Size):
    """A size Iceberg reads as a Java int (``write.parquet.bloom-filter-max-bytes``): at most 2 GiB less a byte."""

    MAX: ClassVar[int] = INT32_MAX
    MAX_TEXT: ClassVar[str] = "2047MB"
    WHY_MAX: ClassVar[str] = "Iceberg reads this size as a Java int of bytes"
    EXAMPLES: ClassVar[str] = "64KB, 1MB, 8MB"
    WHY_POSITIVE: ClassVar[str] = "a bloom filter of no bytes holds nothing"
