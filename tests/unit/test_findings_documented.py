"""The manual's code tables are compiler/codes.py rendered; the hand-written maintenance table agrees with it.

The generated blocks (``<!-- codes:begin FAMILY... -->`` ... ``<!-- codes:end -->``) live in the pages of docs/;
``make docs`` (scripts/docgen.py) re-renders them after a registry change, and tests/unit/test_docs_generated.py
fails while a page is stale. Here: every family has its table once, and the maintenance table lists each action.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tablepolicy.compiler import codes
from tablepolicy.compiler.safety import Safety

DOCS = Path(__file__).resolve().parents[2] / "docs"
HAND_WRITTEN = {"TM"}  # the maintenance table also says when each action is due and what Spark runs


def manual() -> str:
    return "".join(page.read_text(encoding="utf-8") for page in sorted(DOCS.glob("*.md")))


def test_the_manuals_tables_are_the_registry_rendered() -> None:
    for page in sorted(DOCS.glob("*.md")):
        text = page.read_text(encoding="utf-8")
        assert codes.readme_with_tables(text) == text, f"{page.name}: code tables are stale; run make docs"


def test_every_family_is_in_the_manual_once() -> None:
    rendered = codes.families_in(manual())
    assert sorted(rendered + sorted(HAND_WRITTEN)) == sorted(codes.FAMILIES)


def maintenance_rows() -> dict[str, str]:
    section = (DOCS / "maintenance.md").read_text(encoding="utf-8").split("### Maintenance", 1)[1].split("\n#", 1)[0]
    return dict(re.findall(r"^\| (TM\d{3}) \| ([^|]+) \|", section, re.MULTILINE))


def test_the_maintenance_table_has_each_action_and_its_safety() -> None:
    rows = maintenance_rows()
    assert sorted(rows) == codes.codes_of(["TM"])
    marked = {code for code, action in rows.items() if "(destructive)" in action}
    assert marked == {c for c in rows if codes.lookup(c).level is Safety.DESTRUCTIVE}


@pytest.mark.parametrize(("readme", "expected"), [
    ("a\n<!-- codes:begin TA -->\nold\n<!-- codes:end -->\nb\n",
     "a\n<!-- codes:begin TA -->\n| Code | Severity | Approval finding |\n| --- | --- | --- |\n"
     "| TA101 | warning | an `allow_destructive` entry that approves no change in this plan: delete it |\n"
     "<!-- codes:end -->\nb\n"),
    ("<!-- codes:begin TA TA -->\n<!-- codes:end -->", "<!-- codes:begin TA TA -->\n"
     + "\n\n".join([codes.markdown_table("TA")] * 2) + "\n<!-- codes:end -->"),
    ("no block\n", "no block\n"),
], ids=["replaced", "two tables", "untouched"])
def test_rendering_a_block(readme: str, expected: str) -> None:
    assert codes.readme_with_tables(readme) == expected


def test_a_block_of_an_unknown_family_is_an_error() -> None:
    with pytest.raises(codes.UnknownCode, match=r"README block names no code family \['TX'\]"):
        codes.readme_with_tables("<!-- codes:begin TP TX -->\n<!-- codes:end -->\n")
