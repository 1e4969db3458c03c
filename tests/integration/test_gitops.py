"""The PR -> plan -> review -> merge -> apply loop, run from this repository's own workflow files by the
local runner: comments reach a GitHub stub on 127.0.0.1, artifacts a local folder, the catalog is a
real SQLite or PostgreSQL catalog and apply runs Spark."""

from __future__ import annotations

import contextlib
import json
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pyiceberg.catalog import load_catalog

from runtime.github import COMMENT_LIMIT
from tests.cli_runner import cli_on_path
from tests.github_stub import GitHubState, github_stub
from tests.pgserver import postgres_server
from tests.workflow_runner import JobResult, run_job

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[2]
PLAN = ROOT / ".github" / "workflows" / "tablepolicy-plan.yml"
APPLY = ROOT / ".github" / "workflows" / "tablepolicy-apply.yml"
REPO = "acme/lake"

ORDERS = """\
table: sales.orders
owner: sales-eng
columns:
  - {name: order_id, type: long, required: true}
  - {name: placed_at, type: timestamptz}
{extra}partition_by: [day(placed_at)]
"""
PROD = """\
catalog: prod
defaults:
  lifecycle:
    snapshots: {max_age: 7d}  # the policies declare none: only production's overlay sets it
"""
WEEK_MS = str(7 * 24 * 3600 * 1000)


def git(cwd: Path, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)
    assert proc.returncode == 0, f"git {' '.join(args)}: {proc.stderr}"
    return proc.stdout.strip()


@dataclass
class Loop:
    """A policy repository, its catalog, the GitHub stub and the artifact store."""

    repo: Path
    artifacts: Path
    api: str
    github: GitHubState
    secrets: dict[str, str]
    next_pr: int = 1

    def write(self, extra: str = "", **files: str) -> None:
        (self.repo / "policies" / "sales").mkdir(parents=True, exist_ok=True)
        (self.repo / "policies" / "sales" / "orders.yaml").write_text(ORDERS.replace("{extra}", extra))
        for name, text in files.items():
            (self.repo / "policies" / name).write_text(text)

    def open_pr(self, message: str) -> tuple[int, str]:
        number = self.next_pr
        self.next_pr += 1
        git(self.repo, "checkout", "-q", "-b", f"pr-{number}", "main")
        return number, self.commit(message)

    def commit(self, message: str) -> str:
        git(self.repo, "add", "policies")
        git(self.repo, "commit", "-q", "-m", message)
        return git(self.repo, "rev-parse", "HEAD")

    def job(self, workflow: Path, job: str, github: dict[str, Any]) -> JobResult:
        env = {"GITHUB_API_URL": self.api, "GITHUB_TOKEN": "ghs_test_token",
               "PATH": cli_on_path(self.artifacts.parent / "bin")}
        return run_job(workflow, job, workspace=self.repo, artifacts=self.artifacts, secrets=self.secrets,
                       github={"repository": REPO, **github}, skip=frozenset({"install"}), extra_env=env)

    def plan(self, pr: int, head: str) -> JobResult:
        git(self.repo, "checkout", "-q", head)
        event = {"pull_request": {"number": pr, "head": {"sha": head}}}
        result = self.job(PLAN, "plan", {"sha": head, "event_name": "pull_request", "event": event})
        if result.success:  # what GitHub's API answers afterwards: this head has a successful plan run
            self.github.runs.setdefault(head, []).append({"id": len(self.github.runs) + 1, "run_number": 1})
        return result

    def merge(self, pr: int, head: str) -> JobResult:
        git(self.repo, "checkout", "-q", "main")
        git(self.repo, "merge", "-q", "--no-ff", "-m", f"Merge pull request #{pr}", head)
        merged = git(self.repo, "rev-parse", "HEAD")
        self.github.merges[merged] = {"number": pr, "merged_at": "2026-11-23T12:00:00Z", "head": {"sha": head}}
        return self.job(APPLY, "apply", {"sha": merged, "event_name": "push"})

    def comments(self, pr: int) -> list[str]:
        return [c["body"] for c in self.github.comments.get(pr, [])]

    def table(self) -> Any:
        catalog = load_catalog("prod", type="sql", uri=self.secrets["TABLEPOLICY_CATALOG_URI"],
                               warehouse=self.secrets["TABLEPOLICY_WAREHOUSE"])
        return catalog.load_table(("sales", "orders"))


@pytest.fixture(params=["sqlite", "postgresql"])
def loop(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Loop]:
    with contextlib.ExitStack() as stack:
        warehouse = tmp_path / "warehouse"
        warehouse.mkdir()
        if request.param == "postgresql":
            uri = stack.enter_context(postgres_server())
        else:
            uri = f"sqlite:///{tmp_path / 'catalog.db'}"
        api, state = stack.enter_context(github_stub())
        repo = tmp_path / "repo"
        repo.mkdir()
        git(repo, "init", "-q", "-b", "main")
        git(repo, "config", "user.email", "ci@example.com")
        git(repo, "config", "user.name", "ci")
        (repo / "README.md").write_text("policies\n")
        (repo / ".gitignore").write_text("plan.json\nplan.md\n*.log\n*-report.json\n")
        (repo / "environments").mkdir()
        (repo / "environments" / "prod.yaml").write_text(PROD)  # the workflows run with TABLEPOLICY_ENV=prod
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "init")
        secrets = {"TABLEPOLICY_CATALOG_URI": uri, "TABLEPOLICY_CATALOG_URI_READONLY": uri,
                   "TABLEPOLICY_WAREHOUSE": warehouse.as_uri(), "GITHUB_TOKEN": "ghs_test_token"}
        yield Loop(repo, tmp_path / "artifacts", api, state, secrets)


def test_pr_plan_comment_artifact_then_merge_applies_the_reviewed_plan(loop: Loop) -> None:
    loop.write()
    pr, head = loop.open_pr("sales.orders")
    planned = loop.plan(pr, head)
    assert planned.success, planned.log
    assert planned.step("plan").outputs["code"] == "2"
    assert (loop.artifacts / f"plan-{head}" / "plan.json").exists()
    [comment] = loop.comments(pr)
    assert "sales.orders" in comment and "<!-- tablepolicy-plan -->" in comment

    loop.write(extra="  - {name: channel, type: string}\n")  # a second push to the same pull request
    head = loop.commit("add channel")
    planned = loop.plan(pr, head)
    assert planned.success, planned.log
    [comment] = loop.comments(pr)  # updated in place, never a second comment
    assert "channel" in comment
    assert [r.method for r in loop.github.writes()] == ["POST", "PATCH"]

    applied = loop.merge(pr, head)
    assert applied.success, applied.log
    assert [f.name for f in loop.table().schema().fields] == ["order_id", "placed_at", "channel"]
    # CI ran with production's values (environments/prod.yaml), not the policies' bare ones
    assert loop.table().properties.get("history.expire.max-snapshot-age-ms") == WEEK_MS
    report = json.loads((loop.repo / "apply-report.json").read_text())
    assert report["steps"]


def test_catalog_change_between_review_and_merge_refuses_and_says_so_on_the_pr(loop: Loop) -> None:
    loop.write()
    pr, head = loop.open_pr("sales.orders")
    assert loop.plan(pr, head).success
    assert loop.merge(pr, head).success

    loop.write(extra="  - {name: channel, type: string}\n")
    pr, head = loop.open_pr("add channel")
    assert loop.plan(pr, head).success
    with loop.table().update_schema() as update:  # someone changes the table by hand after the review
        update.add_column("note", __import__("pyiceberg.types", fromlist=["StringType"]).StringType())
    applied = loop.merge(pr, head)
    assert not applied.success
    assert "channel" not in [f.name for f in loop.table().schema().fields]  # nothing was applied
    refused = [c for c in loop.comments(pr) if "<!-- tablepolicy-apply -->" in c]
    assert len(refused) == 1 and "refused" in refused[0] and "sales.orders" in refused[0]


def test_a_failing_plan_comments_its_findings(loop: Loop) -> None:
    loop.write(extra="  - {name: total, type: 'decimal(40,2)'}\n")
    pr, head = loop.open_pr("bad type")
    planned = loop.plan(pr, head)
    assert not planned.success
    assert planned.step("plan").outputs["code"] == "1"
    [comment] = loop.comments(pr)
    assert "policies/sales/orders.yaml:6" in comment and "TP" in comment and "could not be made" in comment
    assert "::error file=policies/sales/orders.yaml,line=6" in planned.step("validate").log


def test_a_120_table_plan_comment_fits(loop: Loop) -> None:
    loop.write()
    for i in range(120):
        columns = "".join(f"  - {{name: column_{c}, type: string, doc: 'a column with a long description'}}\n"
                          for c in range(30))
        (loop.repo / "policies" / "sales" / f"t{i:03}.yaml").write_text(
            f"table: sales.t{i:03}\nowner: sales-eng\ncolumns:\n{columns}")
    pr, head = loop.open_pr("120 tables")
    assert loop.plan(pr, head).success
    [comment] = loop.comments(pr)
    assert len(comment) <= COMMENT_LIMIT
    assert "sales.t119" in comment and "artifact" in comment
