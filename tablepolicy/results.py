"""What the API's functions return: the project's own typed values, with the catalog and environment the run
targeted beside them (the CLI's header and JSON name them)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from tablepolicy.compiler.diagnostics import Diagnostics

if TYPE_CHECKING:  # annotations only: validate's results must not import the planner, maintenance or drift
    from tablepolicy.compiler.drift import Drift
    from tablepolicy.compiler.maintenance.due import MaintenancePlan
    from tablepolicy.compiler.maintenance.report import MaintenanceReport
    from tablepolicy.compiler.maintenance.view_health import ViewsHealth
    from tablepolicy.compiler.plan.model import Plan
    from tablepolicy.runtime.target import Target


@dataclass(frozen=True)
class Validation:
    """Every finding of the policy files (errors and warnings, each with its code and file:line:col) and how many
    files were read. ``ok``: no error (warnings allowed)."""

    findings: Diagnostics
    files: int

    @property
    def ok(self) -> bool:
        return not self.findings.has_errors


@dataclass(frozen=True)
class PlanOutcome:
    """A plan and the findings that came with it (warnings only: a plan with errors raises PolicyError).
    ``plan.has_changes``, ``plan.blocked`` (destructive changes git has not approved) and ``plan.tables`` say what
    apply would do; ``tablepolicy.save_plan`` writes it for a later ``apply``."""

    plan: Plan
    findings: Diagnostics
    target: Target


@dataclass(frozen=True)
class HealthOutcome:
    """Each declared table's health read from its metadata and the maintenance due ``at`` that moment; the views
    of the selected namespaces and whether each is what git declares."""

    decided: MaintenancePlan
    target: Target
    views: ViewsHealth
    # what a declared reader already cannot read in a live table (its format, types, the delete files it holds)
    unreadable: Diagnostics = field(default_factory=Diagnostics)


@dataclass(frozen=True)
class MaintainOutcome:
    """What was due and what each action did (``report.failed``: an action failed; the others still ran)."""

    decided: MaintenancePlan
    report: MaintenanceReport
    target: Target


@dataclass(frozen=True)
class DriftOutcome:
    """What the catalog holds that git does not say (``drift.drifted``), and what git never mentions."""

    drift: Drift
    target: Target


@dataclass(frozen=True)
class Imported:
    """The policy YAML of each imported table or view, by its dotted name, and the files written (with
    ``out``; empty otherwise). ``findings``: what validate says of the written files (an org rule they break)."""

    documents: dict[str, str]
    written: tuple[Path, ...]
    findings: Diagnostics
