"""The PR -> plan -> review -> merge -> apply loop, run from this repository's own workflow files by the
local runner: comments reach a GitHub stub on 127.0.0.1, artifacts a local folder, the catalog is a
real SQLite or PostgreSQL catalog and apply runs Spark."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import typer
from pyiceberg.catalog import load_catalog
from pyiceberg.exceptions import NoSuchTableError

from tablepolicy.runtime.github import COMMENT_LIMIT
from tests.cli_runner import cli_on_path
from tests.github_stub import GitHubState, github_stub
from tests.pgserver import postgres_server
from tests.workflow_runner import JobResult, run_job

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[2]
# the top-level packages the wheel ships, as pyproject.toml's [tool.setuptools.packages.find] includes them
FIND = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"]
PACKAGES = tuple(p.removesuffix("*") for p in FIND["include"])
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


def new_repository(repo: Path, readme: str) -> Path:
    """An empty git repository on main with a README (not committed yet)."""
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "ci@example.com")
    git(repo, "config", "user.name", "ci")
    (repo / "README.md").write_text(readme)
    return repo


@dataclass
class Loop:
    """A policy repository, its catalog, the GitHub stub and the artifact store."""

    repo: Path
    artifacts: Path
    api: str
    github: GitHubState
    secrets: dict[str, str]
    next_pr: int = 1
    workflows: Path = ROOT / ".github" / "workflows"
    path: str = ""  # PATH of the steps; empty: this checkout's CLI first
    skip: frozenset[str] = frozenset({"install"})  # by default the tool under test is this checkout's
    env: dict[str, str] = field(default_factory=dict)

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
               "PATH": self.path or cli_on_path(self.artifacts.parent / "bin"), **self.env}
        return run_job(self.workflows / workflow.name, job, workspace=self.repo, artifacts=self.artifacts,
                       secrets=self.secrets, github={"repository": REPO, **github}, skip=self.skip, extra_env=env)

    def plan(self, pr: int, head: str) -> JobResult:
        git(self.repo, "checkout", "-q", head)
        event = {"pull_request": {"number": pr, "head": {"sha": head}}}
        result = self.job(PLAN, "plan", {"sha": head, "event_name": "pull_request", "event": event})
        if result.success:  # what GitHub's API answers afterwards: this head has a successful plan run
            run_id = len(self.github.runs) + 1
            self.github.runs.setdefault(head, []).append({"id": run_id, "run_number": 1})
            if (self.artifacts / f"plan-{head}").exists():
                self.github.artifacts[run_id] = [{"name": f"plan-{head}", "expired": False}]
        return result

    def expire_artifacts(self) -> None:
        """What GitHub does at the end of an artifact's retention: the file is gone, the record says expired."""
        shutil.rmtree(self.artifacts)
        for artifacts in self.github.artifacts.values():
            for artifact in artifacts:
                artifact["expired"] = True

    def merge(self, pr: int, head: str) -> JobResult:
        git(self.repo, "checkout", "-q", "main")
        git(self.repo, "merge", "-q", "--no-ff", "-m", f"Merge pull request #{pr}", head)
        merged = git(self.repo, "rev-parse", "HEAD")
        self.github.merges[merged] = {"number": pr, "merged_at": "2026-11-23T12:00:00Z", "head": {"sha": head}}
        return self.rerun_apply()

    def rerun_apply(self) -> JobResult:
        """The apply job of main's head commit (again: GitHub's "Re-run jobs"), on a fresh runner."""
        for leftover in ("plan.json", "apply.log", "apply-report.json", "plan.json.journal"):
            (self.repo / leftover).unlink(missing_ok=True)
        return self.job(APPLY, "apply", {"sha": git(self.repo, "rev-parse", "HEAD"), "event_name": "push"})

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
        repo = new_repository(tmp_path / "repo", "policies\n")
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


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This checkout built as the wheel a team would commit into its policy repository (or publish)."""
    source = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "README.md", *PACKAGES):
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(ROOT / name, source / name)
    dist = tmp_path_factory.mktemp("dist")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(dist),
                    str(source)], check=True, capture_output=True)
    [built] = dist.glob("tablepolicy-*.whl")
    return built


def locked_site() -> Path:
    """The folder the locked packages are installed in (this interpreter's, or the one a .pth of it names)."""
    return Path(typer.__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def runner_bin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh runner's Python: a new virtualenv without tablepolicy, whose other packages are the locked ones
    (a .pth to them, so pip installs the workflow's line with no index and resolves every dependency)."""
    venv = tmp_path_factory.mktemp("runner") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
    deps = tmp_path_factory.mktemp("locked-packages")
    site = locked_site()
    for entry in site.iterdir():
        if not entry.name.startswith(("tablepolicy", "__editable__", "_tablepolicy")) and entry.suffix != ".pth":
            (deps / entry.name).symlink_to(entry)
    [runner_site] = (venv / "lib").glob("python3*/site-packages")
    (runner_site / "locked_packages.pth").write_text(f"{deps}\n")
    return venv / "bin"


@pytest.fixture(scope="module")
def user_bin(tmp_path_factory: pytest.TempPathFactory, wheel: Path) -> Path:
    """A new team's machine: tablepolicy installed from a wheel file (as from a release download), which no CI
    runner can install from again."""
    venv = tmp_path_factory.mktemp("user") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
    [site] = (venv / "lib").glob("python3*/site-packages")
    deps = tmp_path_factory.mktemp("user-packages")
    for entry in locked_site().iterdir():
        if not entry.name.startswith(("tablepolicy", "__editable__", "_tablepolicy")) and entry.suffix != ".pth":
            (deps / entry.name).symlink_to(entry)
    (site / "locked_packages.pth").write_text(f"{deps}\n")
    subprocess.run([venv / "bin" / "python", "-m", "pip", "install", "-q", "--no-index", "--no-deps", str(wheel)],
                   check=True, capture_output=True)
    return venv / "bin"


def test_a_repository_made_by_init_installs_its_line_plans_and_applies_prods_values(
        tmp_path: Path, user_bin: Path, runner_bin: Path) -> None:
    """Issue 26's and 36's first hour as a new team runs it: init into an existing git repository with no
    --install and no variable (the tool knows no published or pushed source, so it commits its own wheel, pinned by
    digest), the PR's plan job installs tablepolicy from exactly that file on a runner without it and with no
    package index, comments, uploads; the merge applies the reviewed plan with environments/prod.yaml's values."""
    repo = new_repository(tmp_path / "lake", "our lake\n")
    (repo / ".gitignore").write_text("*.tmp\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "empty")
    git(repo, "checkout", "-q", "-b", "pr-1")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYICEBERG_", "TABLEPOLICY_"))}
    made = subprocess.run([user_bin / "tablepolicy", "init", "."], cwd=repo, capture_output=True, text=True,
                          env=env | {"HOME": str(tmp_path), "PATH": f"{user_bin}{os.pathsep}{env['PATH']}"})
    assert made.returncode == 0, made.stderr
    assert "this tablepolicy's own wheel, written to wheels/tablepolicy-0.1.0-py3-none-any.whl" in made.stdout
    assert (repo / ".gitignore").read_text().startswith("*.tmp\n# tablepolicy:")
    assert (repo / "README.md").read_text() == "our lake\n"
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "tablepolicy init")
    head = git(repo, "rev-parse", "HEAD")
    warehouse = tmp_path / "warehouse"
    warehouse.mkdir()
    uri = f"sqlite:///{tmp_path / 'catalog.db'}"
    with github_stub() as (api, state):
        loop = Loop(repo, tmp_path / "artifacts", api, state,
                    {"TABLEPOLICY_CATALOG_URI": uri, "TABLEPOLICY_CATALOG_URI_READONLY": uri,
                     "TABLEPOLICY_WAREHOUSE": warehouse.as_uri(), "GITHUB_TOKEN": "ghs_test_token"},
                    workflows=repo / ".github" / "workflows",
                    path=os.pathsep.join([str(runner_bin), os.environ["PATH"]]),
                    skip=frozenset(), env={"PIP_NO_INDEX": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1"})
        planned = loop.plan(1, head)
        assert planned.success, planned.log
        install = planned.step("install tablepolicy from this commit")
        assert "Successfully installed tablepolicy-0.1.0" in install.log, install.log
        assert planned.step("plan").outputs["code"] == "2"
        [comment] = loop.comments(1)
        assert "analytics.page_views" in comment and "environment prod" in comment
        applied = loop.merge(1, head)
        assert applied.success, applied.log
    table = load_catalog("prod", type="sql", uri=uri, warehouse=warehouse.as_uri()).load_table(
        ("analytics", "page_views"))
    assert [f.name for f in table.schema().fields] == ["viewed_at", "user_id", "url", "referrer"]
    assert table.properties["history.expire.max-snapshot-age-ms"] == WEEK_MS  # prod's 7d, not the namespace's 5d


def sqlite_only(test: Any) -> Any:
    """Failure reports: what the pull request is told does not depend on the catalog's database."""
    return pytest.mark.parametrize("loop", ["sqlite"], indirect=True)(test)


def apply_comment(loop: Loop, pr: int) -> str:
    [comment] = [c for c in loop.comments(pr) if "<!-- tablepolicy-apply -->" in c]
    return comment


@sqlite_only
def test_a_catalog_error_comments_the_error_and_its_fix_not_an_empty_plan(loop: Loop) -> None:
    loop.write()
    loop.secrets["TABLEPOLICY_CATALOG_URI_READONLY"] = "postgresql+psycopg2://reader:s3cr3t-pw@127.0.0.1:1/lake"
    pr, head = loop.open_pr("sales.orders")
    planned = loop.plan(pr, head)
    assert not planned.success and planned.step("plan").outputs["code"] == "1"
    [comment] = loop.comments(pr)
    assert "### tablepolicy plan could not be made" in comment
    assert "cannot open catalog 'prod'" in comment and "PYICEBERG_CATALOG__PROD__URI" in comment, comment
    assert "s3cr3t-pw" not in comment and "s3cr3t-pw" not in planned.log
    assert not (loop.artifacts / f"plan-{head}").exists()  # no plan file for an apply to take


@sqlite_only
@pytest.mark.parametrize("cause", ["expired", "never-uploaded"])
def test_an_apply_without_its_reviewed_artifact_says_which_cause_it_was(loop: Loop, cause: str) -> None:
    loop.write()
    pr, head = loop.open_pr("sales.orders")
    assert loop.plan(pr, head).success
    if cause == "expired":
        loop.expire_artifacts()
    else:  # the run succeeded but its upload never happened (GitHub lists no artifact of that name)
        shutil.rmtree(loop.artifacts / f"plan-{head}")
        loop.github.artifacts.clear()
    applied = loop.merge(pr, head)
    assert not applied.success and applied.step("download").outcome == "failure"
    comment = apply_comment(loop, pr)
    expected = "has expired: GitHub deleted it" if cause == "expired" else "uploaded no artifact"
    assert expected in comment and f"plan-{head}" in comment and "Nothing was applied." in comment, comment
    assert "Re-run the plan workflow for the pull request's head commit" in comment
    assert "stale" not in comment
    with pytest.raises(NoSuchTableError):
        loop.table()  # nothing was applied


@sqlite_only
def test_a_failed_step_is_reported_with_the_steps_that_ran_and_a_rerun_resumes(loop: Loop, tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the second table's location needs a folder\n")
    refunds = (f"table: sales.refunds\nowner: sales-eng\nlocation: {(blocker / 'refunds').as_uri()}\n"
               "columns:\n  - {name: refund_id, type: long}\n")
    loop.write(**{"sales/refunds.yaml": refunds})
    pr, head = loop.open_pr("orders and refunds")
    assert loop.plan(pr, head).success
    applied = loop.merge(pr, head)
    assert not applied.success and applied.step("apply the reviewed plan").outcome == "failure"
    comment = apply_comment(loop, pr)
    assert "Step 3 of 3 failed: create table sales.refunds (1 columns)." in comment, comment
    assert "**Steps that ran** (each is committed in the catalog):" in comment
    assert "- [2] create table sales.orders (2 columns): done" in comment, comment  # in the catalog
    assert "**Not applied yet:**" in comment and "re-run this job: apply resumes at the failed step" in comment
    report = json.loads((loop.repo / "apply-report.json").read_text())
    assert report["outcome"] == "failed" and [s["status"] for s in report["steps"]][-1] == "done"
    assert loop.table().schema().find_field("order_id")

    blocker.unlink()  # the cause fixed; "Re-run jobs" on a fresh runner (no journal) resumes
    rerun = loop.rerun_apply()
    assert rerun.success, rerun.log
    report = json.loads((loop.repo / "apply-report.json").read_text())
    assert report["outcome"] == "applied"
    assert {s["status"] for s in report["steps"] if "sales.orders" in s["summary"]} == {"skipped (already applied)"}
