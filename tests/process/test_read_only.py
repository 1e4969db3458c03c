"""Read-only commands write nothing: the project's tree (every file and folder, with its bytes) is the same
before and after, whether given the policies folder or one file outside any policies/ folder; --out and --html
write exactly the file asked for. The embedded catalog is made by the first write (apply), caches only live in
a .tablepolicy/ folder the project already has."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from tests.cli_runner import tablepolicy

ROOT = Path(__file__).resolve().parents[2]

READ_ONLY = [
    ["validate", "policies"], ["plan", "policies"], ["plan", "policies", "--detailed-exitcode"],
    ["plan", "policies", "--format", "json"], ["ddl", "policies"], ["drift", "policies"], ["health", "policies"],
    ["health", "policies", "--format", "json"], ["doctor", "policies"], ["maintain", "policies", "--dry-run"],
    ["erase", "status", "policies"],
    ["validate", "loose/app_events.yaml"], ["plan", "loose/app_events.yaml"], ["ddl", "loose/app_events.yaml"],
    ["drift", "loose/app_events.yaml"], ["health", "loose/app_events.yaml"], ["doctor", "loose/app_events.yaml"],
]


def tree(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
            for p in sorted(root.rglob("*"))}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "policies", tmp_path / "policies")
    (tmp_path / "loose").mkdir()  # one table file outside any policies/ folder
    shutil.copy(ROOT / "policies" / "logs" / "app_events.yaml", tmp_path / "loose" / "app_events.yaml")
    return tmp_path


@pytest.mark.parametrize("argv", READ_ONLY, ids=[" ".join(a) for a in READ_ONLY])
def test_a_read_only_command_leaves_the_tree_as_it_was(project: Path, argv: list[str]) -> None:
    before = tree(project)
    run = tablepolicy(*argv, cwd=project)
    assert run.returncode in (0, 2), run.stdout + run.stderr
    assert tree(project) == before


@pytest.mark.parametrize(("argv", "written"), [
    (["plan", "policies", "--out", "plan.json"], "plan.json"),
    (["health", "policies", "--html", "health.html"], "health.html"),
])
def test_told_to_write_it_writes_that_file_only(project: Path, argv: list[str], written: str) -> None:
    before = tree(project)
    run = tablepolicy(*argv, cwd=project)
    assert run.returncode in (0, 2), run.stdout + run.stderr
    after = tree(project)
    assert set(after) - set(before) == {written} and {k: after[k] for k in before} == before


def test_caches_live_where_the_project_keeps_them(project: Path) -> None:
    (project / ".tablepolicy").mkdir()  # what tablepolicy init leaves
    assert tablepolicy("plan", "policies", cwd=project).returncode == 0  # changes: 0 without --detailed-exitcode
    kept = sorted(p.name for p in (project / ".tablepolicy").iterdir())
    assert kept == ["files.json", "models.tsv", "plan-cache.json"]
    assert not (project / ".lake").exists()
