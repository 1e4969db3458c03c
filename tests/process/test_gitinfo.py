"""The commit stamped into a plan tells the truth: ``<sha>-dirty`` when the policies in the work tree are not
the commit's (modified, staged, deleted or new files under the policies folder), the bare sha when they are,
None outside git; changes outside the policies folder do not count."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tablepolicy.compiler.plan.codec import plan_id
from tablepolicy.compiler.plan.model import CatalogRef, Plan
from tablepolicy.compiler.render.markdown import render_markdown
from tablepolicy.runtime.gitinfo import git_sha, is_dirty

TABLE = "table: shop.orders\ncolumns:\n  - {name: id, type: long}\n"


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args], cwd=root,
                          check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / "policies").mkdir()
    (tmp_path / "policies" / "orders.yaml").write_text(TABLE)
    (tmp_path / "README.md").write_text("docs\n")
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-qm", "first")
    return tmp_path


def modified(root: Path) -> None:
    (root / "policies" / "orders.yaml").write_text(TABLE + "  - {name: note, type: string}\n")


def staged(root: Path) -> None:
    modified(root)
    git(root, "add", "policies")


def deleted(root: Path) -> None:
    (root / "policies" / "orders.yaml").unlink()


def untracked(root: Path) -> None:
    (root / "policies" / "new").mkdir()
    (root / "policies" / "new" / "items.yaml").write_text(TABLE.replace("orders", "items"))


def outside(root: Path) -> None:
    (root / "README.md").write_text("edited\n")
    (root / "scratch.txt").write_text("not a policy\n")


CASES: list[tuple[str, Callable[[Path], None], bool]] = [
    ("clean", lambda root: None, False),
    ("modified", modified, True),
    ("staged", staged, True),
    ("deleted", deleted, True),
    ("untracked", untracked, True),
    ("outside_the_policies", outside, False),
]


@pytest.mark.parametrize(("case", "change", "dirty"), CASES, ids=[c[0] for c in CASES])
def test_the_sha_says_whether_the_policies_are_the_commits(repo: Path, case: str, change: Callable[[Path], None],
                                                           dirty: bool) -> None:
    head = git(repo, "rev-parse", "HEAD")
    change(repo)
    assert git_sha(repo / "policies") == (head + "-dirty" if dirty else head)
    assert is_dirty(git_sha(repo / "policies")) is dirty


def test_a_single_file_counts_only_itself(repo: Path) -> None:
    head = git(repo, "rev-parse", "HEAD")
    untracked(repo)
    assert git_sha(repo / "policies" / "orders.yaml") == head
    modified(repo)
    assert git_sha(repo / "policies" / "orders.yaml") == head + "-dirty"


def test_outside_git_there_is_no_sha(tmp_path: Path) -> None:
    (tmp_path / "policies").mkdir()
    assert git_sha(tmp_path / "policies") is None and not is_dirty(None)


@pytest.mark.parametrize(("sha", "line"), [
    ("a" * 40, "plan `{id}` · policies `aaaaaaaaaaaa` · tablepolicy {version}"),
    ("a" * 40 + "-dirty", "plan `{id}` · policies `aaaaaaaaaaaa-dirty` (uncommitted policy changes: no commit holds "
                          "what was planned) · tablepolicy {version}"),
    (None, "plan `{id}` · tablepolicy {version}"),
])
def test_the_comment_names_the_commit_or_says_there_is_none(sha: str | None, line: str) -> None:
    plan = Plan(catalog_ref=CatalogRef(name="prod", type="sql"), git_sha=sha)
    assert render_markdown(plan).splitlines()[2] == line.format(id=plan_id(plan), version=plan.tool_version)


def test_an_environments_folder_passed_beside_counts(repo: Path) -> None:
    head = git(repo, "rev-parse", "HEAD")
    (repo / "environments").mkdir()
    (repo / "environments" / "prod.yaml").write_text("catalog: prod\n")
    assert git_sha(repo / "policies") == head
    assert git_sha(repo / "policies", repo / "environments") == head + "-dirty"


def test_the_cli_says_once_what_the_plan_records(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    import json
    import shutil

    from tests.cli_runner import tablepolicy

    untracked(repo)
    run = tablepolicy("plan", "policies", "--format", "json", cwd=repo)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["git_sha"] == git(repo, "rev-parse", "HEAD") + "-dirty"
    notes = [line for line in run.stderr.splitlines() if line.startswith("note:")]
    assert notes == [f"note: policies has uncommitted changes: the plan records {git(repo, 'rev-parse', 'HEAD')[:12]}"
                     "-dirty, which no commit holds; commit them to plan a reviewable state"]
    outside = tmp_path_factory.mktemp("outside")
    shutil.copytree(repo / "policies", outside / "policies")
    run = tablepolicy("plan", "policies", cwd=outside)
    assert [line for line in run.stderr.splitlines() if line.startswith("note:")] == [
        "note: policies is not in a git repository: the plan records no commit"]
