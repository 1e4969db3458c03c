"""The project root, whatever path the user gives: a single file or a subfolder plans exactly what the
directory plan says about those tables (namespace defaults applied, the same catalog and caches)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tablepolicy.compiler.desired import desired_states
from tablepolicy.compiler.paths import find_project
from tablepolicy.compiler.validate import validate
from tests.catalog_fixtures import create_like, embedded_catalog
from tests.cli_runner import tablepolicy as tool

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(("given", "policies", "scope", "selected"), [
    ("shop", "shop/policies", "shop/policies", "shop/policies"),
    ("shop/policies", "shop/policies", "shop/policies", "shop/policies"),
    ("shop/policies/logs", "shop/policies", "shop/policies", "shop/policies/logs"),
    ("shop/policies/logs/app_events.yaml", "shop/policies", "shop/policies", "shop/policies/logs/app_events.yaml"),
    ("shop/policies/logs/new.yaml", "shop/policies", "shop/policies", "shop/policies/logs/new.yaml"),
    ("loose", "loose", "loose", "loose"),
    ("loose/t.yaml", "loose", "loose/t.yaml", "loose/t.yaml"),
])
def test_how_the_root_is_found(tmp_path: Path, given: str, policies: str, scope: str, selected: str) -> None:
    (tmp_path / "shop/policies/logs").mkdir(parents=True)
    (tmp_path / "shop/policies/logs/app_events.yaml").write_text("table: logs.app_events\n")
    (tmp_path / "loose").mkdir()
    (tmp_path / "loose/t.yaml").write_text("table: a.t\n")
    found = find_project(tmp_path / given)
    assert (found.policies, found.scope, found.selected) == (tmp_path / policies, tmp_path / scope,
                                                              tmp_path / selected)
    assert found.root == (tmp_path / policies).parent


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The examples in the embedded catalog, then edited so every table has something to plan: a namespace
    default, a table's own property, and a table no policy declares in a managed namespace."""
    root = tmp_path_factory.mktemp("project")
    policies = shutil.copytree(ROOT / "policies", root / "policies")
    catalog = embedded_catalog(policies)
    for state in desired_states(validate(policies)[0]):
        create_like(catalog, state)
    catalog.create_table(("logs", "stray"), schema=catalog.load_table(("logs", "app_events")).schema())
    edits = {"logs/_namespace.yaml": ("{max_age: 1d, min_keep: 10}", "{max_age: 2d, min_keep: 10}"),
             "ads/click_log.yaml": ("  - {name: ad_id, type: long}", "  - {name: ad_id, type: long, doc: the ad}"),
             "security/_namespace.yaml": ("security-eng", "security-platform")}
    for file, (old, new) in edits.items():
        text = (policies / file).read_text()
        assert old in text, file
        (policies / file).write_text(text.replace(old, new))
    return root


def json_plan(project: Path, path: str) -> dict[str, Any]:
    result = tool("plan", path, "--format", "json", cwd=project)
    assert result.returncode == 0, result.stderr
    document: dict[str, Any] = json.loads(result.stdout)
    return document


def restricted(plan: dict[str, Any], files: set[str]) -> dict[str, Any]:
    """The directory plan restricted to the tables declared in ``files``."""
    tables = [t for t in plan["tables"] if t["policy_file"] in files]
    namespaces = {tuple(t["name"][:-1]) for t in tables}
    whole = files == set(TABLE_FILES)  # the project itself is not a restriction: apply compares every table
    return plan | {"tables": tables, "unmanaged": [n for n in plan["unmanaged"] if tuple(n[:-1]) in namespaces],
                   "selected": None if whole else sorted(t["name"] for t in tables),
                   "namespaces": [c for c in plan["namespaces"] if tuple(c["change"]["table"]) in namespaces],
                   "blocked": [b for b in plan["blocked"] if b["policy_file"] in files]}


TABLE_FILES = ["policies/ads/click_log.yaml", "policies/logs/app_events.yaml", "policies/security/cloudtrail_mgmt.yaml"]


@pytest.mark.parametrize("file", TABLE_FILES)
def test_a_single_file_plans_what_the_directory_plan_says_about_it(project: Path, file: str) -> None:
    whole = json_plan(project, "policies")
    assert all(t["changes"] for t in whole["tables"]) and whole["unmanaged"] == [["logs", "stray"]]
    single = json_plan(project, file)
    assert single == restricted(whole, {file})
    assert [t["policy_file"] for t in single["tables"]] == [file]
    assert not (project / "policies" / Path(file).parent.name / ".lake").exists()


@pytest.mark.parametrize(("path", "files"), [
    ("policies/logs", {"policies/logs/app_events.yaml"}),
    ("policies/security", {"policies/security/cloudtrail_mgmt.yaml"}),
    (".", set(TABLE_FILES)),
])
def test_a_subfolder_or_the_project_plans_its_part_of_the_directory_plan(project: Path, path: str,
                                                                           files: set[str]) -> None:
    assert json_plan(project, path) == restricted(json_plan(project, "policies"), files)


def test_namespace_defaults_apply_to_a_single_file(project: Path) -> None:
    """The issue's case: the file alone proposed unsetting the lifecycle properties its namespace sets."""
    text = tool("plan", "logs/app_events.yaml", cwd=project / "policies").stdout
    lines = text.splitlines()
    assert lines[0] == f"Catalog: lake (sql, sqlite:///{project / '.lake' / 'catalog.db'})"
    assert "history.expire.max-snapshot-age-ms: from " in text and "logs/_namespace.yaml:6:24" in text
    assert "unset" not in text and "Plan: 1 change(s): 1 safe" in text
    assert not (project / "policies" / ".lake").exists() and not (project / "policies/logs/.lake").exists()


def test_validate_of_one_file_reports_that_file_and_the_defaults_it_reads(project: Path, tmp_path: Path) -> None:
    copy = shutil.copytree(project / "policies", tmp_path / "policies")
    (copy / "ads/click_log.yaml").write_text((copy / "ads/click_log.yaml").read_text() + "owner: [not, a, name]\n")
    alone = tool("validate", "policies/logs/app_events.yaml", cwd=tmp_path)
    assert alone.returncode == 0, alone.stderr
    assert "1 file(s) checked: 0 error(s)" in alone.stderr
    broken = tool("validate", "policies/ads", cwd=tmp_path)
    assert broken.returncode == 1 and "policies/ads/click_log.yaml:47:1: error TP002" in broken.stderr
    (copy / "logs/_namespace.yaml").write_text("namespace: logs\nlifecycle: {snapshots: {max_age: soon}}\n")
    defaults = tool("validate", "policies/logs/app_events.yaml", cwd=tmp_path)
    assert defaults.returncode == 1 and "policies/logs/_namespace.yaml:2:" in defaults.stderr
