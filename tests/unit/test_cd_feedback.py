"""What a pull request is told when CI or CD fails (runtime/cd_feedback.py): each cause its own words, the steps
that ran, and the way forward. Pure text: the workflow runs are in tests/integration/test_gitops.py."""

from __future__ import annotations

from typing import Any

import pytest

from tablepolicy.runtime.cd_feedback import ApplyJob, apply_failure, fenced, plan_comment

CATALOG_ERROR = ("error: cannot open catalog 'prod' (sql, postgresql+psycopg2://u:***@db:5432/x): the catalog cannot "
                 "be reached or opened (connection refused); check that it runs and that 'uri' of catalog 'prod' "
                 "(.pyiceberg.yaml, or PYICEBERG_CATALOG__PROD__URI) names the right host, port, database and "
                 "credentials")


def test_a_plan_that_could_not_be_made_comments_its_error_and_fix() -> None:
    body = plan_comment("", CATALOG_ERROR + "\n")
    assert body.splitlines()[0] == "### tablepolicy plan could not be made"
    assert CATALOG_ERROR in body and "PYICEBERG_CATALOG__PROD__URI" in body and "push again" in body


def test_a_plan_comment_keeps_the_plan_and_adds_errors_only_when_there_are_any() -> None:
    assert plan_comment("### plan\n", "note: the policies have uncommitted changes\n") == "### plan\n"
    with_error = plan_comment("### plan\n", "error: something\n")
    assert with_error.startswith("### plan\n\n**Errors**") and "error: something" in with_error


def test_fenced_text_cannot_close_its_block() -> None:
    assert fenced("a ```` b") == "`````\na ```` b\n`````"
    assert fenced("plain") == "```\nplain\n```"


PLANNED = [{"step": 1, "summary": "create table sales.orders"}, {"step": 2, "summary": "create table sales.refunds"},
           {"step": 3, "summary": "set sales.refunds properties"}]


def report(outcome: str, steps: list[dict[str, Any]], error: str) -> dict[str, Any]:
    return {"outcome": outcome, "error": error, "steps": steps, "planned": PLANNED}


CASES = [
    pytest.param(ApplyJob("f" * 40, {"install": "success", "reviewed": "failure"}, reviewed_error=(
        "no successful tablepolicy-plan.yml run for the head abc of pull request #7: its plan was never reviewed")),
        ["No reviewed plan was found for this merge, so nothing was applied: no successful tablepolicy-plan.yml "
         "run for the head abc of pull request #7: its plan was never reviewed",
         "Re-run the pull request's plan workflow on its head commit, review the plan, then re-run this job."],
        id="no-reviewed-plan"),
    pytest.param(ApplyJob("f" * 40, {"reviewed": "success", "download": "failure"}, "plan-abc", "expired",
                          plan_run="12"),
                 ["The plan file reviewed on this pull request, artifact `plan-abc` (plan run 12), has expired: GitHub "
                  "deleted it at the end of its retention (the plan workflow's `retention-days`). Nothing was "
                  "applied.", "Re-run the plan workflow for the pull request's head commit (Actions → tablepolicy "
                  "plan → Re-run all jobs), check that its comment still shows the plan you reviewed, then re-run "
                  "this job."], id="artifact-expired"),
    pytest.param(ApplyJob("f" * 40, {"reviewed": "success", "download": "failure"}, "plan-abc", "missing",
                          plan_run="12"),
                 ["The reviewed plan run 12 uploaded no artifact `plan-abc`: it ended without a plan file (a plan "
                  "that failed with exit code 1 uploads none). Nothing was applied."], id="artifact-never-uploaded"),
    pytest.param(ApplyJob("f" * 40, {"download": "success", "apply": "failure"}, report=report(
        "refused", [], "refusing the plan of sales.orders, nothing was applied: the catalog changed")),
        ["apply refused the reviewed plan; nothing was applied.",
         "refusing the plan of sales.orders, nothing was applied: the catalog changed"], id="refused"),
    pytest.param(ApplyJob("f" * 40, {"download": "success", "apply": "failure"}, report=report(
        "failed", [{"step": 1, "summary": "create table sales.orders", "status": "done"}],
        "step 2 (create table sales.refunds) failed: Mkdirs failed")),
        ["Step 2 of 3 failed: create table sales.refunds.", "**Steps that ran** (each is committed in the catalog):",
         "- [1] create table sales.orders: done", "**Not applied yet:**", "- [2] create table sales.refunds",
         "- [3] set sales.refunds properties",
         "Fix what the error names, then re-run this job: apply resumes at the failed step (the steps that ran are "
         "recognised in the catalog by the plan id they stamped, and skipped)."], id="failed-after-a-step"),
    pytest.param(ApplyJob("f" * 40, {"download": "success", "apply": "failure"}, report=report(
        "failed", [], "step 1 (create table sales.orders) failed: boom")),
        ["Step 1 of 3 failed: create table sales.orders.", "No step was committed: the catalog is as it was."],
        id="failed-first-step"),
    pytest.param(ApplyJob("f" * 40, {"download": "success", "apply": "failure"}, log="Traceback? no: killed\n"),
                 ["apply stopped before writing its report; whether any step ran is in the log below. Re-run this "
                  "job: apply skips every step a run of this plan already made (each changed table carries the plan "
                  "id).", "killed"], id="no-report"),
]


@pytest.mark.parametrize(("job", "lines"), CASES)
def test_each_apply_failure_says_what_happened_and_what_to_do(job: ApplyJob, lines: list[str]) -> None:
    body = apply_failure(job)
    assert body.startswith("### tablepolicy apply failed for ffffffffffff\n")
    for line in lines:
        assert line in body, f"{line!r} not in:\n{body}"


def test_a_long_log_keeps_its_end() -> None:
    body = apply_failure(ApplyJob("f" * 40, {"apply": "failure"}, log="x" * 50_000 + "THE END"))
    assert "THE END" in body and "the start is in the job's log" in body and len(body) < 20_000
