"""The erasure policy's decision per ref, merged like every lifecycle value (namespace defaults, then the table
file, each ref on its own), with the position of each decision: what the certificate cites and TP443 points at.
No JVM."""

from __future__ import annotations

from pathlib import Path

import pytest

from tablepolicy.compiler.desired import desired_table
from tablepolicy.compiler.erasure.plan import erasure_plan
from tablepolicy.compiler.erasure.requests import load_requests
from tablepolicy.compiler.validate import validate

NAMESPACE = """namespace: privacy
lifecycle:
  erasure:
    refs: {month_end: expire, audit: rewrite}
"""
TABLE = """table: privacy.events
columns:
  - {name: user_id, type: string}
lifecycle:
  erasure:
    key: [user_id]
    within: 30d
    holds: [litigation]
    refs:
      month_end: rewrite
"""


def rules(root: Path, table: str, namespace: str | None = None) -> list[tuple[str, str, str]]:
    folder = root / "policies" / "privacy"
    folder.mkdir(parents=True)
    (folder / "events.yaml").write_text(table)
    if namespace is not None:
        (folder / "_namespace.yaml").write_text(namespace)
    project, found = validate(root / "policies")
    assert project is not None and not found.has_errors, [d.render() for d in found]
    state = desired_table(project, project.tables[0]).state
    requests, _ = load_requests('requests:\n  - {id: R, received: "2026-11-02", keys: {user_id: u}}\n', "r.yaml")
    assert requests is not None
    (erasure,), _ = erasure_plan(project, requests, {state.name: state})
    return [(r.ref, r.decision, f"{Path(r.location.file).name}:{r.location.line}:{r.location.col}")
            for r in erasure.rules]


def test_each_ref_is_decided_where_git_says_so_the_table_over_its_namespace(tmp_path: Path) -> None:
    assert rules(tmp_path, TABLE, NAMESPACE) == [
        ("audit", "rewrite", "_namespace.yaml:4:31"),  # from the namespace defaults
        ("litigation", "hold", "events.yaml:8:13"),  # holds: the shorthand
        ("month_end", "rewrite", "events.yaml:10:7"),  # the table's own decision over the namespace's expire
    ]


@pytest.mark.parametrize(("refs", "expected"), [
    ("refs: {litigation: hold}", [("litigation", "hold", "events.yaml:8:13")]),  # said twice alike: once
    ("refs: {t10: rewrite, t2: expire}", [("litigation", "hold", "events.yaml:8:13"),
                                          ("t2", "expire", "events.yaml:9:26"),
                                          ("t10", "rewrite", "events.yaml:9:12")]),  # natural order
])
def test_holds_and_refs_together(tmp_path: Path, refs: str, expected: list[tuple[str, str, str]]) -> None:
    text = TABLE.replace("    refs:\n      month_end: rewrite\n", f"    {refs}\n")
    assert rules(tmp_path, text) == expected
