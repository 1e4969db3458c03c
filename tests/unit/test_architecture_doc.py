"""docs/architecture.md names the folders, files and tests a reader goes to: each path it names exists, so the
page cannot drift from the house it describes."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "architecture.md"
# a path in backquotes: it has a folder separator or a file suffix (``compiler/plan/``, ``api.py``)
PATH = re.compile(r"`([\w./-]+(?:/|\.py|\.md|\.toml|\.yml))`")


def named_paths(text: str) -> list[str]:
    return sorted(set(PATH.findall(text)))


def resolves(name: str) -> bool:
    return (ROOT / name).exists()


def test_every_path_the_page_names_exists() -> None:
    text = PAGE.read_text(encoding="utf-8")
    missing = []
    for line in text.splitlines():
        folders = [p for p in PATH.findall(line) if p.endswith("/")]
        for name in PATH.findall(line):
            # from the root, or inside a floor, or beside a folder the same line names (`plan/` ... `planner.py`)
            bases = [ROOT / top / folder for top in ("", "compiler", "runtime", "tablepolicy") for folder in
                     ("", *folders)]
            if not any((base / name).exists() for base in bases):
                missing.append(name)
    assert named_paths(text) and missing == []


def test_the_check_finds_a_path_that_is_gone() -> None:
    assert PATH.findall("see `compiler/plan/gone.py` and `runtime/`") == ["compiler/plan/gone.py", "runtime/"]
    assert not resolves("compiler/plan/gone.py") and resolves("runtime/")


def test_the_page_is_short_enough_to_read_in_one_sitting() -> None:
    assert len(PAGE.read_text(encoding="utf-8").splitlines()) <= 150
