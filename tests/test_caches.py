"""The content-hash caches change nothing but speed: same models, same findings, corrupt caches ignored."""

from __future__ import annotations

import shutil
from pathlib import Path

from compiler.desired import desired_states
from compiler.validate import validate
from runtime.caches.models import FileModelCache

ROOT = Path(__file__).resolve().parents[1]


def test_cached_validation_gives_the_same_project_and_findings(tmp_path: Path) -> None:
    policies = shutil.copytree(ROOT / "policies", tmp_path / "policies")
    (policies / "warn.yaml").write_text(
        "table: shop.orders\ncolumns: [{name: id, type: long}]\nlifecycle:\n  orphan_files: {older_than: 2d}\n")
    cache_file = tmp_path / "models.tsv"
    cold, cold_findings = validate(policies, FileModelCache.open(cache_file))
    warm_cache = FileModelCache.open(cache_file)
    assert len(warm_cache.models) == 6
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
