"""Branches and tags in a table policy (``refs:``): what validate says about each mistake, at its line."""

from __future__ import annotations

from pathlib import Path

import pytest

from tablepolicy.compiler.checks import check_project
from tablepolicy.compiler.diagnostics import Diagnostics
from tablepolicy.compiler.loader import Project, load_text

TABLE = "table: u.t\ncolumns: [{name: id, type: long}]\nrefs:\n"

CASES = [
    ("  - {branch: main}\n", "policies/u/t.yaml:4:14: error TP450: refs.0.branch: 'main' is the table's own branch "
     "and is never declared"),
    ("  - {tag: m}\n  - {branch: m}\n", "policies/u/t.yaml:5:14: error TP451: ref 'm' is declared twice"),
    ("  - {tag: m, min_snapshots_to_keep: 2}\n", "policies/u/t.yaml:4:14: error TP102: unknown key "
     "'min_snapshots_to_keep' in refs.0"),
    ("  - {branch: b, max_snapshot_age: 90s}\n", "policies/u/t.yaml:4:35: error TP110: refs.0.max_snapshot_age: bad "
     "duration '90s': write a whole number and a unit, e.g. 30m, 6h, 30d, 2w"),
    ("  - {name: b}\n", "policies/u/t.yaml:4:5: error TP104: refs.0: expected a mapping with 'tag: NAME' or "
     "'branch: NAME'"),
    ("  - {tag: m, max_ref_age: 0d}\n", "policies/u/t.yaml:4:27: error TP110: refs.0.max_ref_age: duration '0d' is "
     "zero: a window or deadline of no time means nothing"),
]


def findings(text: str) -> list[str]:
    project, diagnostics = Project(root=Path("policies")), Diagnostics()
    load_text(text, "policies/u/t.yaml", project, diagnostics)
    if not diagnostics.has_errors:
        diagnostics.extend(check_project(project))
    return [d.render() for d in diagnostics]


@pytest.mark.parametrize(("refs", "first_line"), CASES, ids=[c[1].split(": ")[1][:12] for c in CASES])
def test_each_mistake_is_one_finding_with_a_hint(refs: str, first_line: str) -> None:
    [finding] = findings(TABLE + refs)
    assert finding.splitlines()[0] == first_line
    assert "hint:" in finding


def test_a_tag_and_a_branch_with_their_retention_validate() -> None:
    assert findings(TABLE + "  - {tag: month_end, max_ref_age: 400d, snapshot_id: 5}\n"
                    "  - {branch: audit, max_ref_age: 30d, min_snapshots_to_keep: 2, max_snapshot_age: 2d}\n") == []


def test_fmt_orders_a_tag_and_a_branch_by_their_own_keys() -> None:
    from tablepolicy.compiler.fmt import format_text

    text = TABLE + "  - {max_ref_age: 30d, branch: audit, min_snapshots_to_keep: 2}\n  - {snapshot_id: 3, tag: m}\n"
    assert format_text(text).split("refs:\n")[1] == ("  - {branch: audit, max_ref_age: 30d, min_snapshots_to_keep: 2}\n"
                                                     "  - {tag: m, snapshot_id: 3}\n")
