"""Every finding code the validator can emit is in a row of the README's findings table."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def documented_ranges() -> list[tuple[int, int]]:
    section = ROOT.joinpath("README.md").read_text(encoding="utf-8").split("## Findings", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| TP(\d{3})(?:–TP(\d{3}))? \|", section, re.MULTILINE)
    return [(int(low), int(high or low)) for low, high in rows]


def emitted_codes() -> set[int]:
    sources = [p.read_text(encoding="utf-8") for p in (ROOT / "compiler").rglob("*.py")]
    return {int(code) for text in sources for code in re.findall(r"\"TP(\d{3})\"", text)}


def test_every_code_has_a_row() -> None:
    ranges = documented_ranges()
    assert len(ranges) >= 7
    missing = sorted(c for c in emitted_codes() if not any(low <= c <= high for low, high in ranges))
    assert missing == [], f"document TP{missing} in the README's findings table"
