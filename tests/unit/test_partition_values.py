"""Partition values a person can read (compiler/iceberg/partition_values.py): a case per transform and source type,
then ``health`` text, HTML and JSON on a table written with pyiceberg (hour and bucket partitions, no JVM)."""

from __future__ import annotations

import json
import re
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tablepolicy.cli.app import app
from tablepolicy.compiler.iceberg.partition_values import readable_partition, readable_value
from tests.unit.test_maintenance import written  # noqa: F401  (fixture)
from tests.unit.test_plan_cli import policies as example_policies  # noqa: F401  (fixture)

CASES: list[tuple[str, str, Any, str]] = [  # transform, source type, stored value, readable
    ("day", "timestamptz", 20781, "2026-11-24"),
    ("day", "date", 20749, "2026-10-23"),
    ("day", "timestamp", -1, "1969-12-31"),
    ("hour", "timestamptz", 498749, "2026-11-24 05:00"),
    ("hour", "timestamp_ns", 0, "1970-01-01 00:00"),
    ("month", "timestamp", 682, "2026-11"),
    ("month", "date", -1, "1969-12"),
    ("year", "date", 56, "2026"),
    ("identity", "date", 20749, "2026-10-23"),
    ("identity", "timestamp", 1767323045123456, "2026-01-02 03:04:05.123456"),
    ("identity", "timestamptz", 1767323045000000, "2026-01-02 03:04:05"),
    ("identity", "timestamptz_ns", 1767323045000000123, "2026-01-02 03:04:05"),
    ("identity", "time", 18367000000, "05:06:07"),
    ("identity", "time", 18367000001, "05:06:07.000001"),
    ("identity", "long", 20749, "20749"),  # a number stays a number
    ("identity", "string", "eu", "eu"),
    ("identity", "boolean", True, "true"),
    ("identity", "binary", b"\x01\xff", "0x01ff"),
    ("bucket[8]", "string", 3, "3"),
    ("truncate[2]", "string", "he", "he"),
    ("truncate[10]", "long", 120, "120"),
    ("void", "string", None, "null"),
    ("day", "date", None, "null"),
    ("day", "date", 10**9, "1000000000"),  # past year 9999: shown as stored
    ("identity", "date", date(2026, 10, 23), "2026-10-23"),  # already a date
    ("identity", "timestamp", datetime(2026, 1, 2, 3, 4, 5), "2026-01-02 03:04:05"),
]


@pytest.mark.parametrize(("transform", "source", "value", "readable"), CASES,
                         ids=[f"{t}-{s}-{v!r}" for t, s, v, _ in CASES])
def test_readable_value(transform: str, source: str, value: Any, readable: str) -> None:
    assert readable_value(transform, source, value) == readable


def test_a_partition_joins_its_fields() -> None:
    assert readable_partition([("dt", "day", "timestamptz", 20781), ("hour", "hour", "timestamptz", 498749),
                               ("region", "identity", "string", None)]) == \
        "dt=2026-11-24/hour=2026-11-24 05:00/region=null"


def test_health_shows_readable_partitions_beside_the_raw_value(written: Path, tmp_path: Path) -> None:  # noqa: F811
    """logs.app_events: five small files in the hour partition 07:00 of 2026-11-22, one bucket of service."""
    runner = CliRunner()
    page = tmp_path / "health.html"
    text = runner.invoke(app, ["health", str(written), "--html", str(page)])
    assert text.exit_code == 0, text.output
    hour = int(datetime(2026, 11, 22, 7, tzinfo=UTC).timestamp()) // 3600
    readable = re.compile(r"event_time_hour=2026-11-22 07:00/service_shard=(\d)")
    line = next(line for line in text.stdout.splitlines() if "small files   " in line)
    assert readable.search(line) and line.endswith(": 5 of 5 file(s)"), line
    assert str(hour) not in text.stdout
    html = page.read_text(encoding="utf-8")
    assert readable.search(html) and f'title="event_time_hour={hour}/service_shard=' in html
    document = json.loads(runner.invoke(app, ["health", str(written), "--format", "json"]).stdout)
    (events,) = [t for t in document["tables"] if t["table"] == ["logs", "app_events"]]
    (partition,) = events["health"]["partitions"]
    shard = readable.fullmatch(partition["readable"])
    assert shard and partition["partition"] == f"event_time_hour={hour}/service_shard={shard[1]}"
    assert (partition["files"], partition["small"]) == (5, 5)
