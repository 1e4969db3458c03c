"""The content-hash caches change nothing but speed: same models, same findings, corrupt caches ignored."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tablepolicy.compiler.desired import desired_states
from tablepolicy.compiler.validate import validate
from tablepolicy.runtime.caches.models import FileModelCache

ROOT = Path(__file__).resolve().parents[2]


def test_cached_validation_gives_the_same_project_and_findings(tmp_path: Path) -> None:
    policies = shutil.copytree(ROOT / "policies", tmp_path / "policies")
    (policies / "warn.yaml").write_text(
        "table: shop.orders\ncolumns: [{name: id, type: long}]\nlifecycle:\n  orphan_files: {older_than: 2d}\n")
    cache_file = tmp_path / "models.tsv"
    cold, cold_findings = validate(policies, FileModelCache.open(cache_file))
    warm_cache = FileModelCache.open(cache_file)
    assert len(warm_cache.models) == 7
    warm, warm_findings = validate(policies, warm_cache)
    assert [d.render() for d in warm_findings] == [d.render() for d in cold_findings]
    assert [d.code for d in warm_findings] == ["TP422"]
    assert desired_states(warm) == desired_states(cold)


def test_positions_of_a_cached_file_are_parsed_on_demand(tmp_path: Path) -> None:
    policies = shutil.copytree(ROOT / "policies", tmp_path / "policies")
    cache = FileModelCache.open(tmp_path / "models.tsv")
    validate(policies, cache)
    project, _ = validate(policies, FileModelCache.open(tmp_path / "models.tsv"))
    click_log = next(t for t in project.tables if t.name == ("ads", "click_log"))
    assert click_log.source.root is None and click_log.source.text is None
    assert click_log.source.value(("columns", 5)).line == 14


def test_corrupt_cache_is_ignored(tmp_path: Path) -> None:
    (tmp_path / "models.tsv").write_text("{not json")
    _, diagnostics = validate(ROOT / "policies", FileModelCache.open(tmp_path / "models.tsv"))
    assert not diagnostics.has_errors


def test_the_plan_cache_is_replaced_whole_and_a_folder_it_cannot_write_is_one_line(tmp_path: Path) -> None:
    from tablepolicy.compiler.errors import TablePolicyError
    from tablepolicy.runtime.caches.plans import PlanCache

    folder = tmp_path / ".tablepolicy"
    cache = PlanCache(folder / "plan-cache.json", {"shop.orders": {"key": "k"}})
    cache.save()
    assert PlanCache.open(folder / "plan-cache.json").entries == cache.entries
    assert sorted(p.name for p in folder.iterdir()) == ["plan-cache.json"]  # no temporary left beside it
    (folder / "plan-cache.json").unlink()
    (folder / "plan-cache.json").mkdir()  # what it would be replaced over cannot be: a directory
    with pytest.raises(TablePolicyError, match=r"^cannot save the plan cache .*plan-cache\.json: Is a directory; "
                                               r"make \.tablepolicy/ writable for this user, or remove it"):
        cache.save()
    assert sorted(p.name for p in folder.iterdir()) == ["plan-cache.json"]
