"""Dotted names with backtick quoting, durations and sizes."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tablepolicy.compiler.iceberg.names import format_name, parse_name
from tablepolicy.compiler.policy.units import Duration, Size


@settings(deadline=None)  # hypothesis' default 200 ms per example is a timing assertion
@given(st.lists(st.text(min_size=1, max_size=12).filter(lambda s: s.strip() == s and s), min_size=1, max_size=4))
def test_names_round_trip(parts: list[str]) -> None:
    assert parse_name(format_name(tuple(parts))) == tuple(parts)


@pytest.mark.parametrize(
    ("text", "parts"),
    [
        ("security.cloudtrail_mgmt", ("security", "cloudtrail_mgmt")),
        ("a.b.c", ("a", "b", "c")),
        ("`my ns`.`t.x`", ("my ns", "t.x")),
        ("`we``ird`.t", ("we`ird", "t")),
        ("`日本語`.テーブル", ("日本語", "テーブル")),
    ],
)
def test_parse_name(text: str, parts: tuple[str, ...]) -> None:
    assert parse_name(text) == parts


@pytest.mark.parametrize("text", ["a..b", "`open.b", "a.", "ab`c"])
def test_bad_names(text: str) -> None:
    with pytest.raises(ValueError):
        parse_name(text)


@pytest.mark.parametrize(
    ("text", "millis"),
    [("6h", 21_600_000), ("3d", 259_200_000), ("30m", 1_800_000), ("500ms", 500), ("2w", 1_209_600_000)],
)
def test_durations(text: str, millis: int) -> None:
    assert Duration.parse(text).millis == millis


@pytest.mark.parametrize("text", ["6 h", "6hours", "-1d", "1.5h", "6H", "", "d"])
def test_bad_durations(text: str) -> None:
    with pytest.raises(ValueError):
        Duration.parse(text)


@pytest.mark.parametrize(("text", "size"), [("512MB", 536_870_912), ("1GB", 1 << 30), ("128KiB", 131_072), ("10B", 10)])
def test_sizes(text: str, size: int) -> None:
    assert Size.parse(text).bytes == size


@pytest.mark.parametrize("text", ["512mb", "512 MB", "1.5GB", "512"])
def test_bad_sizes(text: str) -> None:
    with pytest.raises(ValueError):
        Size.parse(text)
