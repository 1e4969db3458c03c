"""What the pull request is told when CI or CD fails: the plan comment when no plan could be made (a catalog or
credential error leaves the plan's markdown empty), and the apply job's failure report, which says which of its
causes it was (no reviewed plan, the plan artifact expired or never uploaded, a refused plan, a failed step), which
steps ran and how to resume. Pure text from what the job recorded; runtime/github.py posts it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

LOG_TAIL = 12_000  # characters of a log shown under a failure; the whole log stays in the job


def plan_comment(markdown: str, errors: str) -> str:
    """The plan comment: the plan's markdown, and the error lines when the plan stopped with an error."""
    error_text = errors.strip()
    if not markdown.strip():
        return ("### tablepolicy plan could not be made\n\n"
                "Nothing was compared with the catalog. The error below names the setting or file to fix; fix it and "
                "push again (or re-run this job once a secret or the catalog is fixed).\n\n"
                + fenced(error_text or "tablepolicy printed nothing: see the job's log.") + "\n")
    if error_text and any(line.startswith("error:") for line in error_text.splitlines()):
        return f"{markdown.rstrip()}\n\n**Errors**\n\n{fenced(error_text)}\n"
    return markdown


def fenced(text: str) -> str:
    """A code block that the text cannot close early (a longer fence than any backtick run inside)."""
    longest = max((len(run) for run in text.split("\n") for run in _backtick_runs(run)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{text}\n{fence}"


def _backtick_runs(line: str) -> list[str]:
    runs, current = [], ""
    for char in line:
        if char == "`":
            current += char
        elif current:
            runs.append(current)
            current = ""
    return [*runs, current] if current else runs


@dataclass(frozen=True)
class ApplyJob:
    """What the failed apply job recorded: each step's outcome (``success``, ``failure``, ``skipped``), the
    reviewed plan's artifact and whether GitHub still holds it, the apply report and the log."""

    commit: str
    outcomes: Mapping[str, str]
    artifact: str = ""
    artifact_state: str = ""  # present | expired | missing | "" (not asked)
    reviewed_error: str = ""
    report: Mapping[str, Any] | None = None
    log: str = ""
    plan_run: str = ""


def apply_failure(job: ApplyJob) -> str:
    """The comment for a failed apply job: what happened, what ran, what to do."""
    title = f"### tablepolicy apply failed for {job.commit[:12]}\n\n"
    failed = [name for name, outcome in job.outcomes.items() if outcome == "failure"]
    first = failed[0] if failed else "apply"
    if first == "install":
        body = ("tablepolicy could not be installed, so nothing was applied. Fix the install step of "
                "`.github/workflows/tablepolicy-apply.yml` (see its log), then re-run this job.")
    elif first == "reviewed":
        reason = job.reviewed_error or "see the job's log"
        body = (f"No reviewed plan was found for this merge, so nothing was applied: {reason}\n\nRe-run the pull "
                "request's plan workflow on its head commit, review the plan, then re-run this job.")
    elif first == "download":
        body = _artifact_failure(job)
    else:
        body = _apply_failure(job)
    return title + body + _log(job.log) + "\n"


def _artifact_failure(job: ApplyJob) -> str:
    run = f" (plan run {job.plan_run})" if job.plan_run else ""
    rerun = ("Re-run the plan workflow for the pull request's head commit (Actions → tablepolicy plan → Re-run all "
             "jobs), check that its comment still shows the plan you reviewed, then re-run this job.")
    match job.artifact_state:
        case "expired":
            what = (f"The plan file reviewed on this pull request, artifact `{job.artifact}`{run}, has expired: "
                    "GitHub deleted it at the end of its retention (the plan workflow's `retention-days`). Nothing "
                    "was applied.")
        case "missing":
            what = (f"The reviewed plan run{' ' + job.plan_run if job.plan_run else ''} uploaded no artifact "
                    f"`{job.artifact}`: it ended without a plan file (a plan that failed with exit code 1 uploads "
                    "none). Nothing was applied.")
        case _:
            what = (f"The reviewed plan file, artifact `{job.artifact}`{run}, could not be downloaded. Nothing was "
                    "applied.")
    return f"{what}\n\n{rerun}"


def _apply_failure(job: ApplyJob) -> str:
    report = job.report
    if report is None:
        return ("apply stopped before writing its report; whether any step ran is in the log below. Re-run this job: "
                "apply skips every step a run of this plan already made (each changed table carries the plan id).")
    error = str(report.get("error", "")).strip()
    steps = report.get("steps") or []
    planned = report.get("planned") or []
    if report.get("outcome") == "refused":
        return (f"apply refused the reviewed plan; nothing was applied.\n\n{fenced(error)}\n\nWhen the plan is stale "
                "(the merged policies or the catalog changed since the review), open a new pull request or re-run "
                "the plan on this one to review the current plan. Otherwise fix what the error names and re-run this "
                "job.")
    ran = [s for s in steps if s.get("status") == "done"]
    earlier = [s for s in steps if s.get("status") != "done"]
    done_numbers = {s.get("step") for s in steps}
    failed_at = next((p for p in planned if p.get("step") not in done_numbers), None)
    left = [p for p in planned if p.get("step") not in done_numbers]
    lines = [f"Step {failed_at['step']} of {len(planned)} failed: {failed_at['summary']}." if failed_at else
             "A step failed.", "", fenced(error), ""]
    if ran or earlier:
        lines.append("**Steps that ran** (each is committed in the catalog):")
        lines += [f"- [{s['step']}] {s['summary']}: {s['status']}" for s in steps]
    else:
        lines.append("No step was committed: the catalog is as it was.")
    if left:
        lines += ["", "**Not applied yet:**", *[f"- [{p['step']}] {p['summary']}" for p in left]]
    lines += ["", "Fix what the error names, then re-run this job: apply resumes at the failed step (the steps that "
              "ran are recognised in the catalog by the plan id they stamped, and skipped)."]
    return "\n".join(lines)


def _log(log: str) -> str:
    text = log.strip()
    if not text:
        return ""
    tail = text[-LOG_TAIL:]
    cut = "… (the start is in the job's log)\n" if len(text) > LOG_TAIL else ""
    return f"\n\n<details><summary>apply log</summary>\n\n{fenced(cut + tail)}\n\n</details>"
