"""Tiers by folder, as markers: ``tests/unit/`` runs in this process (no subprocess, fork, kill or JVM; the CLI
through the in-process runner), ``tests/process/`` starts processes (the CLI as a process, forked workers, kills,
the wheel) but no JVM or server, ``tests/integration/`` runs Spark, PostgreSQL, S3 and the other servers.
``make unit`` is ``tests/unit/`` alone; ``make test`` runs every tier. A module that imports ``s3_server`` starts
the local S3-compatible server (moto) and is marked ``s3`` too."""

from __future__ import annotations

from pathlib import Path

import pytest

TIERS = ("unit", "process", "integration")
HERE = Path(__file__).resolve().parent


def tier_of(path: Path) -> str | None:
    """The tier a test file belongs to: the first folder under tests/."""
    parts = path.resolve().relative_to(HERE).parts
    return parts[0] if len(parts) > 1 and parts[0] in TIERS else None


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        tier = tier_of(Path(str(item.path)))
        if tier is None:
            raise pytest.UsageError(f"{item.path}: a test module stands in tests/unit/, tests/process/ or "
                                    "tests/integration/ (its tier); move it there")
        item.add_marker(getattr(pytest.mark, tier))
        module = getattr(item, "module", None)
        if module is not None and hasattr(module, "s3_server"):
            item.add_marker(pytest.mark.s3)
