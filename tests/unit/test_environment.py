"""Environment overlays without a JVM or a catalog: each finding code with a failing and a passing overlay
(exact first line), precedence and origins of the values in effect, and names that resolve to nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from tablepolicy.compiler.effective import effective_settings, overlaid_settings
from tablepolicy.compiler.project import EnvironmentNotDefinedError, load_selected

TABLES = {
    "policies/shop/_namespace.yaml": "namespace: shop\nowner: shop-team\nlifecycle:\n"
    "  snapshots: {max_age: 5d, min_keep: 3}\n",
    "policies/shop/orders.yaml": "table: shop.orders\ncolumns:\n  - {name: id, type: long}\n"
    "  - {name: day, type: date}\nlifecycle:\n  snapshots: {max_age: 2d}\n  retention: {column: day, keep: 400d}\n",
    "policies/shop/eu/refunds.yaml": "table: shop.eu.refunds\ncolumns: [{name: id, type: long}]\n",
}


def project_with(root: Path, overlay: str, extra: dict[str, str] | None = None) -> Path:
    for name, text in {**TABLES, **(extra or {}), "environments/t.yaml": overlay}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root / "policies"


# (overlay, the first finding line, or None: no finding)
CASES = [
    pytest.param("columns: [{name: a, type: int}]\n", "environments/t.yaml:1:1: error TP701: an environment overlay "
                 "may not declare a table or its columns ('columns')", id="TP701-top-level-columns"),
    pytest.param("tables:\n  shop.orders: {partition_by: [day]}\n", "environments/t.yaml:2:17: error TP701: an "
                 "environment overlay may not declare a table or its columns ('partition_by')", id="TP701-in-a-table"),
    pytest.param("defaults: {table: shop.x}\n", "environments/t.yaml:1:12: error TP701: an environment overlay may "
                 "not declare a table or its columns ('table')", id="TP701-in-defaults"),
    pytest.param("tables:\n  shop.orders: {lifecycle: {snapshots: {max_age: 1d}}}\n", None, id="TP701-values-pass"),
    pytest.param("tables:\n  shop.order: {owner: x}\n", "environments/t.yaml:2:3: error TP702: no policy declares "
                 "table 'shop.order' (environment 't')", id="TP702-unknown-table"),
    pytest.param("tables:\n  orders: {owner: x}\n", "environments/t.yaml:2:3: error TP109: table name 'orders' has "
                 "no namespace", id="TP109-no-namespace"),
    pytest.param("tables:\n  'shop.`orders': {owner: x}\n", "environments/t.yaml:2:3: error TP107: tables: unclosed "
                 "backtick in name 'shop.`orders'", id="TP107-name-does-not-parse"),
    pytest.param("tables:\n  '`shop`.`orders`': {owner: x}\n", None, id="TP702-quoted-name-pass"),
    pytest.param("namespaces:\n  sohp: {owner: x}\n", "environments/t.yaml:2:3: error TP703: no policy declares "
                 "namespace 'sohp' (environment 't')", id="TP703-unknown-namespace"),
    pytest.param("namespaces:\n  shop.eu: {owner: x}\n", None, id="TP703-nested-namespace-pass"),
    pytest.param("tables:\n  shop.orders: {owner: x}\n  '`shop`.orders': {owner: y}\n", "environments/t.yaml:3:3: "
                 "error TP704: '`shop`.orders' names the same table as 'shop.orders'", id="TP704-twice"),
    pytest.param("defaults: {lifecycle: {snapshot: {max_age: 1d}}}\n", "environments/t.yaml:1:24: error TP102: "
                 "unknown key 'snapshot' in defaults.lifecycle", id="TP102-unknown-key"),
    pytest.param("catalogue: prod\n", "environments/t.yaml:1:1: error TP102: unknown key 'catalogue' in document",
                 id="TP102-top-level"),
    pytest.param("defaults: {properties: {owner: me}}\n", "environments/t.yaml:1:25: error TP501: Spark refuses the "
                 "reserved property 'owner' in TBLPROPERTIES", id="TP501-property"),
    pytest.param("tables:\n  shop.orders: {lifecycle: {snapshots: {max_age: 0s}}}\n", "environments/t.yaml:2:50: "
                 "error TP420: snapshot max_age of zero would expire every snapshot", id="TP420-checked-in-effect"),
    pytest.param("tables:\n  shop.orders: {lifecycle: {retention: {column: when}}}\n", "environments/t.yaml:2:49: "
                 "error TP411: retention column 'when' does not exist", id="TP411-checked-in-effect"),
    pytest.param("- a\n- b\n", "environments/t.yaml:1:1: error TP003: an environment overlay is a mapping of "
                 "catalog, defaults, namespaces and tables", id="TP003-not-a-mapping"),
    pytest.param("", None, id="empty-overlay-pass"),
]


@pytest.mark.parametrize(("overlay", "first"), CASES)
def test_overlay_findings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, overlay: str, first: str | None) -> None:
    monkeypatch.chdir(tmp_path)
    policies = project_with(tmp_path, overlay)
    project, _, diagnostics = load_selected(policies, environment="t")
    lines = [d.render().splitlines()[0] for d in diagnostics]
    assert lines[:1] == ([first] if first else [])
    assert diagnostics.has_errors == (first is not None)
    if first is None:
        assert project.environment is not None and project.environment.name == "t"


def test_validate_without_env_checks_every_overlay(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    policies = project_with(tmp_path, "tables:\n  shop.nope: {owner: x}\n")
    project, _, diagnostics = load_selected(policies, every_environment=True)
    assert [d.code for d in diagnostics] == ["TP702"] and project.environment is None
    _, _, plain = load_selected(policies)  # other commands: no --env, no overlay read
    assert list(plain) == []


def test_org_rules_apply_to_the_value_in_effect(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    rules = {"policies/_rules.yaml": "rules:\n  snapshots_max_age: {max: 7d}\n"}
    policies = project_with(tmp_path, "defaults:\n  lifecycle: {snapshots: {max_age: 30d}}\n", rules)
    _, _, base = load_selected(policies)
    _, _, overlaid = load_selected(policies, environment="t")
    assert not base.has_errors
    assert [d.render().splitlines()[0] for d in overlaid.errors] == [
        "environments/t.yaml:2:36: error TG103: lifecycle.snapshots.max_age 30d is longer than 7d (rule "
        "'snapshots_max_age' of policies/_rules.yaml:2:22)"] * 2


def test_precedence_and_origins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """namespace defaults < table file < overlay defaults < overlay namespaces (outer first) < overlay table."""
    monkeypatch.chdir(tmp_path)
    policies = project_with(tmp_path, "defaults:\n  owner: ops\n  lifecycle: {snapshots: {max_age: 7d}}\n"
                            "namespaces:\n  shop: {properties: {write.a: '1'}}\n"
                            "  shop.eu: {properties: {write.a: '2'}}\n"
                            "tables:\n  shop.eu.refunds: {lifecycle: {snapshots: {max_age: 6h}}}\n")
    project, _, diagnostics = load_selected(policies, environment="t")
    assert not diagnostics.has_errors
    orders, refunds = sorted(project.tables, key=lambda t: t.name)[::-1]
    for table, age, prop, age_line, prop_line in ((orders, "7d", "1", 3, 5), (refunds, "6h", "2", 8, 6)):
        effective = effective_settings(project, table)
        snapshots = effective.lifecycle.snapshots
        assert snapshots is not None and str(snapshots.max_age) == age
        assert snapshots.min_keep == 3  # not overlaid: the namespace defaults' value stays
        assert effective.owner == "ops" and effective.properties == {"write.a": prop}
        assert str(effective.origin("lifecycle.snapshots.max_age")).startswith(f"environments/t.yaml:{age_line}:")
        assert str(effective.origin("properties.write.a")).startswith(f"environments/t.yaml:{prop_line}:")
        assert str(effective.origin("lifecycle.snapshots.min_keep")).startswith("policies/shop/_namespace.yaml:4:")
        assert sorted(overlaid_settings(project, table.name)) == ["lifecycle.snapshots.max_age", "owner",
                                                                  "properties.write.a"]
    retention = effective_settings(project, orders).lifecycle.retention
    assert retention is not None and str(retention.keep) == "400d"  # the table file's, untouched


def test_no_env_means_base_values(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    project, _, _ = load_selected(project_with(tmp_path, "defaults: {owner: ops}\n"))
    assert project.environment is None
    assert all(effective_settings(project, t).owner == "shop-team" for t in project.tables)


@pytest.mark.parametrize(("name", "folder", "message"), [
    ("qa", True, "--env qa: no environment 'qa'; environments/ defines: t"),
    ("t", False, "--env t: the project defines no environments (environments/ holds no *.yaml overlay); create "
     "environments/t.yaml or drop --env"),
])
def test_a_name_that_resolves_to_nothing_is_an_error_naming_what_exists(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, folder: bool, message: str) -> None:
    monkeypatch.chdir(tmp_path)
    policies = project_with(tmp_path, "defaults: {owner: ops}\n")
    if not folder:
        (tmp_path / "environments/t.yaml").unlink()
    with pytest.raises(EnvironmentNotDefinedError) as raised:
        load_selected(policies, environment=name)
    assert str(raised.value) == message


@pytest.mark.parametrize("every_environment", [True, False], ids=["validate", "with-env"])
def test_a_broken_table_file_is_the_only_culprit_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       every_environment: bool) -> None:
    """A table file that fails declares nothing; its table in an overlay is not reported as undeclared (the
    false TP702 came first and pointed at the environment); fixed, the overlay's names are checked again."""
    monkeypatch.chdir(tmp_path)
    broken = {"policies/shop/orders.yaml": TABLES["policies/shop/orders.yaml"].replace("type: long", "type: lon")}
    policies = project_with(tmp_path, "tables:\n  shop.orders: {owner: x}\n  shop.nope: {owner: y}\n", broken)
    selection = {"every_environment": True} if every_environment else {"environment": "t"}
    _, _, diagnostics = load_selected(policies, **selection)  # type: ignore[arg-type]
    assert {d.location.file for d in diagnostics.errors} == {"policies/shop/orders.yaml"}
    assert "TP702" not in {d.code for d in diagnostics}
    (tmp_path / "policies/shop/orders.yaml").write_text(TABLES["policies/shop/orders.yaml"])
    _, _, fixed = load_selected(policies, **selection)  # type: ignore[arg-type]
    assert [d.render().splitlines()[0] for d in fixed.errors] == [
        "environments/t.yaml:3:3: error TP702: no policy declares table 'shop.nope' (environment 't')"]
