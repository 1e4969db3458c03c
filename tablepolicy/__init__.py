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

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the names as a type checker sees them; at run time each module loads on first use
    from tablepolicy.compiler import __version__
    from tablepolicy.compiler.catalog.config import CatalogConfig
    from tablepolicy.compiler.diagnostics import Diagnostic, Diagnostics, Severity
    from tablepolicy.compiler.errors import CatalogError, PolicyError, TablePolicyError
    from tablepolicy.compiler.plan.codec import PlanFileError
    from tablepolicy.runtime.erase_run import ErasedTable, ErasureOutcome, ErasureStatus
    from tablepolicy.runtime.importing import ImportRefused, ImportUsageError
    from tablepolicy.runtime.invocation import Invocation
    from tablepolicy.runtime.target import Target

    from . import events
    from .api import (
        BlockedPlanError,
        apply,
        catalog,
        drift,
        erase,
        erase_status,
        health,
        history,
        import_tables,
        invocation,
        load_plan,
        maintain,
        plan,
        save_plan,
        validate,
    )
    from .results import DriftOutcome, HealthOutcome, Imported, MaintainOutcome, PlanOutcome, Validation

# Where each public name lives. Loaded on first use (PEP 562): ``tablepolicy validate`` needs the policy models,
# not the plan model, the renderers or a catalog client.
_HOMES = {
    "__version__": "tablepolicy.compiler",
    "CatalogConfig": "tablepolicy.compiler.catalog.config",
    **dict.fromkeys(("Diagnostic", "Diagnostics", "Severity"), "tablepolicy.compiler.diagnostics"),
    **dict.fromkeys(("CatalogError", "PolicyError", "TablePolicyError"), "tablepolicy.compiler.errors"),
    "PlanFileError": "tablepolicy.compiler.plan.codec",
    **dict.fromkeys(("ImportRefused", "ImportUsageError"), "tablepolicy.runtime.importing"),
    "Target": "tablepolicy.runtime.target",
    "Invocation": "tablepolicy.runtime.invocation",
    **dict.fromkeys(("BlockedPlanError", "apply", "catalog", "drift", "erase", "erase_status", "health", "history",
                     "import_tables", "invocation", "load_plan", "maintain", "plan", "save_plan", "validate"),
                    "tablepolicy.api"),
    **dict.fromkeys(("ErasedTable", "ErasureOutcome", "ErasureStatus"), "tablepolicy.runtime.erase_run"),
    **dict.fromkeys(("DriftOutcome", "HealthOutcome", "Imported", "MaintainOutcome", "PlanOutcome", "Validation"),
                    "tablepolicy.results"),
}


def __getattr__(name: str) -> Any:
    if name == "events":
        return importlib.import_module("tablepolicy.events")
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'tablepolicy' has no attribute {name!r}; its names: {', '.join(__all__)}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return list(__all__)


__all__ = [
    "BlockedPlanError",
    "CatalogConfig",
    "CatalogError",
    "Diagnostic",
    "Diagnostics",
    "DriftOutcome",
    "ErasedTable",
    "ErasureOutcome",
    "ErasureStatus",
    "HealthOutcome",
    "ImportRefused",
    "ImportUsageError",
    "Imported",
    "Invocation",
    "MaintainOutcome",
    "PlanFileError",
    "PlanOutcome",
    "PolicyError",
    "Severity",
    "TablePolicyError",
    "Target",
    "Validation",
    "__version__",
    "apply",
    "catalog",
    "drift",
    "erase",
    "erase_status",
    "events",
    "health",
    "history",
    "import_tables",
    "invocation",
    "load_plan",
    "maintain",
    "plan",
    "save_plan",
    "validate",
]
