"""apply's view: the statements of a dry run, a line per step as it finishes, the safety notes, the closing
line, and the JSON report (``--json-report``). Only formats and prints; runtime/apply.py does the work."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING

from .output import info, paint

if TYPE_CHECKING:
    from tablepolicy.compiler.plan.steps import Step
    from tablepolicy.runtime.apply import ApplyReport, StepResult


def show_statements(steps: list[Step]) -> None:
    """A dry run: every statement apply would run, in order, each under its step number and summary."""
    for step in steps:
        info(f"-- [{step.index}] {step.summary}\n{step.sql};")


def show_step(result: StepResult) -> None:
    """``  [3] rename column note to comment (field id 3 kept): done (0.4s)``."""
    from tablepolicy.runtime.apply import StepStatus

    took = f" ({result.seconds:.1f}s)" if result.status is StepStatus.DONE else ""
    info(f"  [{result.step.index}] {result.step.summary}: {result.status}{took}")


def show_notice(message: str) -> None:
    info(paint(f"  safety: {message}", "cyan"))


def show_complete(report: ApplyReport) -> None:
    info(f"Apply complete: {report.executed} statement(s) executed, plan {report.plan_id}.")


def report_json(report: ApplyReport, catalog: Mapping[str, str], planned: list[Step]) -> str:
    """The run as CD archives it: the catalog (credentials redacted), the plan id, the safety tags, each step."""
    return _report(catalog, report.plan_id, "applied", planned, report.results, None, report.safety_tags)


def failure_json(catalog: Mapping[str, str], plan_id: str | None, planned: list[Step], results: list[StepResult],
                 error: str, *, step_failed: bool) -> str:
    """A run that ended early, as CD archives it: ``failed`` when a step failed in the engine (the steps before it
    ran), ``refused`` when apply stopped before running anything (a stale or mismatched plan, a lock, a catalog
    error); the steps that ran, the error as printed (credentials masked), and every planned step, so the failure
    report can say what ran and what is left."""
    return _report(catalog, plan_id, "failed" if step_failed else "refused", planned, results, error, None)


def _report(catalog: Mapping[str, str], plan_id: str | None, outcome: str, planned: list[Step],
            results: list[StepResult], error: str | None, tags: list[str] | None) -> str:
    # a failed run's safety tags are in its log (the notices); the report does not claim there were none
    return json.dumps({
        "catalog": dict(catalog),
        "plan_id": plan_id,
        "outcome": outcome,
        **({"error": error} if error is not None else {}),
        **({"safety_tags": tags} if tags is not None else {}),
        "steps": [{"step": r.step.index, "action": r.step.change.action, "summary": r.step.summary,
                   "status": r.status, "seconds": round(r.seconds, 3), "sql": r.step.sql} for r in results],
        "planned": [{"step": s.index, "summary": s.summary} for s in planned],
    }, indent=2) + "\n"
