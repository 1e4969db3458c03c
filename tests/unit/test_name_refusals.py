"""The one name placement refused at validate (compiler/checks/names.py): a namespace starting or ending with
whitespace, which Spark keeps and pyiceberg strips. Every other hostile name works
(tests/integration/test_hostile_names.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyiceberg.catalog.sql import SqlCatalog

from tests.cli_runner import tablepolicy

CASES = [  # table as written -> the finding's line, or None when it validates
    ("`ns `.t", "namespace `ns ` of table `ns `.t ends with a space (U+0020)"),
    ("` ns`.`a b`.t", "namespace ` ns` of table ` ns`.`a b`.t starts with a space (U+0020)"),
    ("ops.`\u00a0ns`.t", "namespace `\u00a0ns` of table ops.`\u00a0ns`.t starts with a no-break space (U+00A0)"),
    ("`n s`.t", None),
    ("ns.`t `", None),  # a table name keeps its spaces in pyiceberg
    ("`n's`.`t``x`", None),
]


@pytest.mark.parametrize(("table", "finding"), CASES, ids=[c[0] for c in CASES])
def test_a_namespace_with_whitespace_at_an_end_is_refused(tmp_path: Path, table: str, finding: str | None) -> None:
    (tmp_path / "policies").mkdir()
    (tmp_path / "policies" / "t.yaml").write_text(f'table: "{table}"\ncolumns:\n  - {{name: id, type: long}}\n',
                                                  encoding="utf-8")
    run = tablepolicy("validate", "policies", cwd=tmp_path)
    if finding is None:
        assert run.returncode == 0, run.stderr
        return
    assert run.returncode == 1
    assert run.stderr.splitlines()[:2] == [
        f"policies/t.yaml:1:8: error TP113: {finding}: pyiceberg, which plan, health and erase read the catalog with, "
        "strips it, so they would not find the namespace Spark creates",
        "    hint: remove it from the namespace's start or end (a space inside a name works)"]


def test_pyiceberg_strips_a_namespaces_edges(tmp_path: Path) -> None:
    """Why the refusal exists (if pyiceberg stops stripping, it can go)."""
    catalog = SqlCatalog("c", uri=f"sqlite:///{tmp_path / 'c.db'}", warehouse=tmp_path.as_uri())
    catalog.create_namespace("ns ")
    assert catalog.list_namespaces() == [("ns",)]
