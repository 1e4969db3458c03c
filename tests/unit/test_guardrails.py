"""Org rules (policies/_rules.yaml): each rule passes a table that keeps it and reports one that does not,
with its own code at the line of the offending value."""

from __future__ import annotations

from pathlib import Path

import pytest

from tablepolicy.compiler.diagnostics import Diagnostic, Diagnostics
from tablepolicy.compiler.guardrails import check_rules
from tablepolicy.compiler.loader import LoadedRules, Project, load_text

NAMESPACE = "namespace: sales\nlifecycle:\n  snapshots: {max_age: 2d}\n  orphan_files: {older_than: 3d}\n"

GOOD = """\
table: sales.orders
owner: sales-eng
columns:
  - {name: order_id, type: long}
  - {name: email, type: string, tags: [pii]}
properties: {write.format.default: parquet}
lifecycle:
  snapshots: {max_age: 1d}
  erasure: {key: [order_id], within: 30d}
"""

CASES = [
    # (rules, table text with one change, expected code, expected line)
    ("owner_required: true", GOOD.replace("owner: sales-eng\n", ""), "TG101", 1),
    ("pii_requires_erasure: true", GOOD.replace("  erasure: {key: [order_id], within: 30d}\n", ""), "TG102", 5),
    ("snapshots_max_age: {max: 1d}", GOOD.replace("max_age: 1d", "max_age: 3d"), "TG103", 8),
    ("snapshots_max_age: {min: 12h}", GOOD.replace("max_age: 1d", "max_age: 6h"), "TG103", 8),
    ("orphan_older_than: {min: 5d}", GOOD, "TG105", 4),  # inherited from the namespace file
    ("erasure_within: {max: 7d}", GOOD, "TG106", 9),
    ("required_properties: {write.format.default: orc}", GOOD, "TG107", 6),
    ("required_properties: {write.object-storage.enabled: null}", GOOD, "TG107", 1),
    ("table_name: '^t_[a-z]+$'", GOOD, "TG108", 1),
    ("column_name: '^[a-z_]+$'", GOOD.replace("name: email", "name: eMail"), "TG109", 5),
    ("no_weakening: true", GOOD.replace("max_age: 1d", "max_age: 5d"), "TG110", 8),
    ("ref_max_age: {max: 30d}", GOOD + "refs: [{tag: audit_2026, max_ref_age: 400d}]\n", "TG111", 10),
    ("ref_max_age: {max: 30d} ", GOOD + "refs:\n  - {branch: audit, max_ref_age: 7d}\n  - {tag: kept}\n", "TG111", 12),
]


def load_rules(text: str, file: str) -> tuple[LoadedRules | None, list[Diagnostic]]:
    project, diagnostics = Project(root=Path(".")), Diagnostics()
    load_text(text, file, project, diagnostics)
    return (project.rules[0] if project.rules else None), diagnostics.items


def findings(rules: str, table: str) -> list[tuple[str, str, int]]:
    project, diagnostics = Project(root=Path(".")), Diagnostics()
    load_text(NAMESPACE, "policies/sales/_namespace.yaml", project, diagnostics)
    load_text(table, "policies/sales/orders.yaml", project, diagnostics)
    assert not diagnostics.has_errors, [d.render() for d in diagnostics]
    loaded, problems = load_rules(f"rules:\n  {rules}\n", "policies/_rules.yaml")
    assert loaded is not None and not problems, [d.render() for d in problems]
    return [(d.code, d.location.file, d.location.line) for d in check_rules(project, loaded)]


@pytest.mark.parametrize(("rules", "table", "code", "line"), CASES, ids=[f"{c[2]}-{c[0][:28]}" for c in CASES])
def test_rule_reports_the_table_that_breaks_it(rules: str, table: str, code: str, line: int) -> None:
    found = findings(rules, table)
    file = "policies/sales/_namespace.yaml" if code == "TG105" else "policies/sales/orders.yaml"
    assert found == [(code, file, line)]


@pytest.mark.parametrize("rules", sorted({c[0] for c in CASES if c[2] not in ("TG105", "TG106", "TG107", "TG108")}))
def test_rule_passes_the_table_that_keeps_it(rules: str) -> None:
    assert findings(rules, GOOD) == []


def test_all_rules_at_once_pass_the_good_table() -> None:
    rules = ("owner_required: true\n  pii_requires_erasure: true\n  snapshots_max_age: {min: 1h, max: 7d}\n"
             "  erasure_within: {max: 30d}\n  orphan_older_than: {min: 3d}\n"
             "  required_properties: {write.format.default: parquet}\n"
             "  table_name: '^[a-z_]+$'\n  column_name: '^[a-z_]+$'\n  no_weakening: true")
    assert findings(rules, GOOD) == []


@pytest.mark.parametrize(("text", "code"), [
    ("rules:\n  owner_requird: true\n", "TP102"),
    ("rules:\n  column_name: '['\n", "TP"),
    ("rules:\n  snapshots_max_age: {max: 7days}\n", "TP110"),
])
def test_a_broken_rules_file_is_reported_not_raised(text: str, code: str) -> None:
    loaded, problems = load_rules(text, "policies/_rules.yaml")
    assert loaded is None and problems and problems[0].code.startswith(code)
    assert problems[0].location.line == 2
