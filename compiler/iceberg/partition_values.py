"""A partition value as a person reads it: Iceberg stores ``day(ts)`` as days since 1970-01-01, ``hour(ts)`` as
hours since the epoch, ``month`` and ``year`` as months and years since 1970, an identity of a date as days,
of a timestamp as microseconds (nanoseconds for ``_ns``), of a time as microseconds since midnight. Views show
``dt=2026-10-23`` and ``hour=2026-11-24 05:00``; machine output keeps the raw value beside it.

>>> readable_value("hour", "timestamptz", 498749)
'2026-11-24 05:00'
>>> readable_partition([("dt", "identity", "date", 20749), ("shard", "bucket[8]", "string", 3)])
'dt=2026-10-23/shard=3'
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date, datetime, time, timedelta
from typing import Any

EPOCH = datetime(1970, 1, 1)
EPOCH_DAY = date(1970, 1, 1)
_TIMESTAMPS = {"timestamp": 1, "timestamptz": 1, "timestamp_ns": 1000, "timestamptz_ns": 1000}  # units per µs


def _moment(micros: int) -> str:
    moment = EPOCH + timedelta(microseconds=micros)
    return moment.strftime("%Y-%m-%d %H:%M:%S") + (f".{moment.microsecond:06d}" if moment.microsecond else "")


def _time(micros: int) -> str:
    seconds, fraction = divmod(micros, 1_000_000)
    clock = time(seconds // 3600, seconds // 60 % 60, seconds % 60)
    return clock.strftime("%H:%M:%S") + (f".{fraction:06d}" if fraction else "")


def _ordinal(transform: str, value: int) -> str:
    match transform:
        case "year":
            return f"{1970 + value:04d}"
        case "month":
            return f"{1970 + value // 12:04d}-{value % 12 + 1:02d}"
        case "day":
            return (EPOCH_DAY + timedelta(days=value)).isoformat()
        case _:  # hour
            return (EPOCH + timedelta(hours=value)).strftime("%Y-%m-%d %H:00")


def readable_value(transform: str, source_type: str, value: Any) -> str:
    """``transform`` as table metadata spells it (``day``, ``bucket[16]``), ``source_type`` the source column's
    type as Iceberg spells it (``timestamptz``, ``decimal(10, 2)``). A value out of the calendar's range is shown
    as stored."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, bytes):
        return "0x" + value.hex()
    if isinstance(value, datetime):
        return _moment(round((value.replace(tzinfo=None) - EPOCH).total_seconds() * 1_000_000))
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, int):
        try:
            if transform in ("year", "month", "day", "hour"):
                return _ordinal(transform, value)
            if transform == "identity" and source_type == "date":
                return (EPOCH_DAY + timedelta(days=value)).isoformat()
            if transform == "identity" and source_type in _TIMESTAMPS:
                return _moment(value // _TIMESTAMPS[source_type])
            if transform == "identity" and source_type == "time":
                return _time(value)
        except (OverflowError, ValueError):
            return str(value)
    return str(value)


def readable_partition(fields: Iterable[tuple[str, str, str, Any]]) -> str:
    """``name=value`` per partition field (name, transform, source type, stored value), joined by ``/``."""
    return "/".join(f"{name}={readable_value(transform, source, value)}" for name, transform, source, value in fields)
