"""tablepolicy's public Python API: Apache Iceberg tables declared in git, from code.

    import tablepolicy

    outcome = tablepolicy.plan("policies", catalog="prod", environment="prod")
    if outcome.plan.blocked:
        raise SystemExit("destructive changes need approval in git")
    tablepolicy.save_plan(outcome.plan, "plan.json")
    report = tablepolicy.apply("plan.json")

This module is the whole surface: the names in ``__all__`` (tests/test_api_surface.py fails when one changes
without tests/golden/api_surface.txt changing with it). docs/api.md documents each with examples that run as
tests. The command line is a client of these functions.
"""

from __future__ import annotations

from compiler import __version__
from compiler.catalog.config import CatalogConfig
from compiler.diagnostics import Diagnostic, Diagnostics, Severity
from compiler.errors import CatalogError, PolicyError, TablePolicyError
from compiler.render.json_plan import PlanFileError
from runtime.importing import ImportRefused, ImportUsageError
from tablepolicy import events
from tablepolicy.api import (
    BlockedPlanError,
    apply,
    catalog,
    drift,
    health,
    import_tables,
    load_plan,
    maintain,
    plan,
    save_plan,
    validate,
)
from tablepolicy.results import DriftOutcome, HealthOutcome, Imported, MaintainOutcome, PlanOutcome, Validation

__all__ = [
    "BlockedPlanError",
    "CatalogConfig",
    "CatalogError",
    "Diagnostic",
    "Diagnostics",
    "DriftOutcome",
    "HealthOutcome",
    "ImportRefused",
    "ImportUsageError",
    "Imported",
    "MaintainOutcome",
    "PlanFileError",
    "PlanOutcome",
    "PolicyError",
    "Severity",
    "TablePolicyError",
    "Validation",
    "__version__",
    "apply",
    "catalog",
    "drift",
    "events",
    "health",
    "import_tables",
    "load_plan",
    "maintain",
    "plan",
    "save_plan",
    "validate",
]
