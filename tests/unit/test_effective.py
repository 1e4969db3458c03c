"""Namespace defaults: inherited field by field, nearest namespace wins, every value knows its origin."""

from __future__ import annotations

from pathlib import Path

from tablepolicy.compiler.effective import effective_settings
from tablepolicy.compiler.loader import load_project
from tablepolicy.compiler.model.properties import desired_properties
from tablepolicy.compiler.validate import validate

ROOT = Path(__file__).resolve().parents[2]


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def test_table_overrides_namespace_field_by_field(tmp_path: Path) -> None:
    write(tmp_path, {
        "shop/_namespace.yaml": "namespace: shop\nowner: shop-team\nlifecycle:\n"
        "  snapshots: {max_age: 5d, min_keep: 3}\n  orphan_files: {older_than: 4d}\n",
        "shop/eu/_namespace.yaml": "namespace: shop.eu\nlifecycle:\n  snapshots: {min_keep: 7}\n",
        "shop/eu/orders.yaml": "table: shop.eu.orders\ncolumns: [{name: id, type: long}]\n"
        "lifecycle:\n  snapshots: {max_age: 6h}\n",
    })
    project, diagnostics = load_project(tmp_path)
    assert not diagnostics.has_errors
    effective = effective_settings(project, project.tables[0])
    snapshots = effective.lifecycle.snapshots
    assert snapshots is not None and snapshots.max_age is not None and snapshots.min_keep == 7
    assert str(snapshots.max_age) == "6h"
    assert effective.owner == "shop-team"
    origin = effective.origin("lifecycle.snapshots.min_keep")
    assert origin is not None and origin.file.endswith("shop/eu/_namespace.yaml") and origin.line == 3
    origin = effective.origin("lifecycle.snapshots.max_age")
    assert origin is not None and origin.file.endswith("shop/eu/orders.yaml") and origin.line == 4
    origin = effective.origin("lifecycle.orphan_files.older_than")
    assert origin is not None and origin.file.endswith("shop/_namespace.yaml")
    props = desired_properties(project.tables[0].policy, effective)
    assert props["history.expire.max-snapshot-age-ms"] == "21600000"
    assert props["history.expire.min-snapshots-to-keep"] == "7"
    assert props["tablepolicy.owner"] == "shop-team"


def test_lint_reports_at_the_namespace_file_that_set_the_value(tmp_path: Path) -> None:
    write(tmp_path, {
        "_ns.yaml": "namespace: shop\nlifecycle:\n  orphan_files: {older_than: 12h}\n",
        "orders.yaml": "table: shop.orders\ncolumns: [{name: id, type: long}]\n",
    })
    _, diagnostics = validate(tmp_path)
    [finding] = diagnostics.errors
    assert finding.code == "TP421" and finding.location.file.endswith("_ns.yaml") and finding.location.line == 3


def test_duplicate_table_across_files(tmp_path: Path) -> None:
    table = "table: shop.orders\ncolumns: [{name: id, type: long}]\n"
    write(tmp_path, {"a.yaml": table, "b.yaml": table})
    _, diagnostics = validate(tmp_path)
    [finding] = diagnostics.errors
    assert finding.code == "TP401" and finding.location.file.endswith("b.yaml")
    assert "a.yaml:1" in (finding.hint or "")


def test_example_policies_are_valid_without_warnings() -> None:
    _, diagnostics = validate(ROOT / "policies")
    assert [d.render() for d in diagnostics] == []
