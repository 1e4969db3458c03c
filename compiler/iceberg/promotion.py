"""Legal type promotions, as one table: those Iceberg's Java implementation applies (plans run through
Spark), format v2.

Not pyiceberg's ``promote()``: 0.12 accepts a decimal scale change, which the spec forbids. Not the v3
spec's date -> timestamp either: Iceberg 1.10's ``TypeUtil.isPromotionAllowed`` has no such row, so
Spark's ``ALTER COLUMN ... TYPE`` refuses it at apply ("Cannot change column type: d: date -> timestamp").

>>> can_promote(IntegerType(), LongType(), format_version=2)
True
>>> can_promote(DecimalType(10, 2), DecimalType(12, 3), format_version=2)
False
"""

from __future__ import annotations

from collections.abc import Callable

from pyiceberg.types import DecimalType, DoubleType, FloatType, IntegerType, LongType, PrimitiveType

Rule = Callable[[PrimitiveType, PrimitiveType], bool]


def _always(_a: PrimitiveType, _b: PrimitiveType) -> bool:
    return True


def _wider_decimal(a: PrimitiveType, b: PrimitiveType) -> bool:
    assert isinstance(a, DecimalType) and isinstance(b, DecimalType)
    return a.scale == b.scale and b.precision > a.precision


# (from type, to type) -> (condition on the parameters, first format version that allows it)
PROMOTIONS: dict[tuple[type[PrimitiveType], type[PrimitiveType]], tuple[Rule, int]] = {
    (IntegerType, LongType): (_always, 1),
    (FloatType, DoubleType): (_always, 1),
    (DecimalType, DecimalType): (_wider_decimal, 1),
}


def can_promote(source: PrimitiveType, target: PrimitiveType, *, format_version: int) -> bool:
    """Whether a column of type ``source`` may become ``target`` in place (same field id, no rewrite)."""
    if source == target:
        return True
    entry = PROMOTIONS.get((type(source), type(target)))
    if entry is None:
        return False
    rule, since = entry
    return format_version >= since and rule(source, target)


def promotion_advice(source: PrimitiveType, target: PrimitiveType) -> str:
    """What to do instead of an illegal type change."""
    if isinstance(source, DecimalType) and isinstance(target, DecimalType):
        if source.scale != target.scale:
            return "a decimal's scale cannot change: add a new column, backfill it, then drop the old one"
        return "a decimal's precision can only grow: add a new column, backfill it, then drop the old one"
    return (
        f"{source} cannot become {target} in place: add a new column with the new type, backfill it "
        "(INSERT OVERWRITE or MERGE), then drop the old column"
    )
