"""Markers by what a module starts: a test module that imports ``s3_server`` starts the local S3-compatible
server (moto) and is marked ``s3``, so ``make unit`` (no JVM, no servers) can leave it to ``make test``."""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        module = getattr(item, "module", None)
        if module is not None and hasattr(module, "s3_server"):
            item.add_marker(pytest.mark.s3)
