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
    from compiler import __version__
    from compiler.catalog.config import CatalogConfig
    from compiler.diagnostics import Diagnostic, Diagnostics, Severity
    from compiler.errors import CatalogError, PolicyError, TablePolicyError
    from compiler.plan.codec import PlanFileError
    from runtime.importing import ImportRefused, ImportUsageError
    from runtime.target import Target
    from tablepolicy import events
    from tablepolicy.api import (
        BlockedPlanError,
        apply,
        catalog,
        drift,
        erase,
        erase_status,
        health,
        import_tables,
        load_plan,
        maintain,
        plan,
        save_plan,
        validate,
    )
    from tablepolicy.erasure import ErasedTable, ErasureOutcome, ErasureStatus
    from tablepolicy.results import DriftOutcome, HealthOutcome, Imported, MaintainOutcome, PlanOutcome, Validation

# Where each public name lives. Loaded on first use (PEP 562): ``tablepolicy validate`` needs the policy models,
# not the plan model, the renderers or a catalog client.
_HOMES = {
    "__version__": "compiler",
    "CatalogConfig": "compiler.catalog.config",
    **dict.fromkeys(("Diagnostic", "Diagnostics", "Severity"), "compiler.diagnostics"),
    **dict.fromkeys(("CatalogError", "PolicyError", "TablePolicyError"), "compiler.errors"),
    "PlanFileError": "compiler.plan.codec",
    **dict.fromkeys(("ImportRefused", "ImportUsageError"), "runtime.importing"),
    "Target": "runtime.target",
    **dict.fromkeys(("BlockedPlanError", "apply", "catalog", "drift", "erase", "erase_status", "health",
                     "import_tables", "load_plan", "maintain", "plan", "save_plan", "validate"), "tablepolicy.api"),
    **dict.fromkeys(("ErasedTable", "ErasureOutcome", "ErasureStatus"), "tablepolicy.erasure"),
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
    "import_tables",
    "load_plan",
    "maintain",
    "plan",
    "save_plan",
    "validate",
]
