"""What the planner asks of a per-table plan cache: a table's plan is reused while its policy files and its
catalog metadata file are unchanged. runtime/caches/plans.py keeps one in a file between runs."""

from __future__ import annotations

import hashlib
from typing import Protocol

from .model import TablePlan


class PlanCacheStore(Protocol):
    def get(self, table: tuple[str, ...], key: str, metadata_location: str) -> TablePlan | None:
        """The plan kept for ``table`` under ``key`` against that metadata file, or None."""
        ...

    def put(self, table: TablePlan, key: str) -> None: ...


def plan_key(policy_digests: list[str], catalog: str) -> str:
    """sha256 of the catalog name and of the table's policy file and every namespace defaults file it inherits."""
    return hashlib.sha256("\n".join([catalog, *policy_digests]).encode()).hexdigest()
