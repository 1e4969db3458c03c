"""The one retention cutoff the plan's estimate and maintain's DELETE share."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

from ..policy.units import Duration


def retention_cutoff(day: date, keep: Duration) -> datetime:
    """Rows before midnight UTC of ``day`` minus ``keep`` are expired: the plan's estimate and maintain's
    DELETE use this one cutoff, so it holds all day long."""
    return datetime(day.year, day.month, day.day, tzinfo=UTC) - timedelta(milliseconds=keep.millis)
