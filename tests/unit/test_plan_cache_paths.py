"""A warm plan names files as this run would: the plan cache never hands back paths spelled for another
working folder (a plan's bytes depend on its inputs, not on which run filled the cache)."""

from __future__ import annotations

import shutil
from pathlib import Path

from tablepolicy.compiler.model.table import TableState
from tests.catalog_fixtures import create_examples
from tests.cli_runner import tablepolicy

ROOT = Path(__file__).resolve().parents[2]


def plan_text(cwd: Path, path: str, *flags: str) -> str:
    run = tablepolicy("plan", path, *flags, cwd=cwd)
    assert run.returncode == 0, run.stderr
    return run.stdout


def test_a_cache_filled_from_another_folder_gives_the_uncached_plan(tmp_path: Path) -> None:
    def without_expiry(state: TableState) -> TableState:  # git then sets the expiry keys
        kept = {k: v for k, v in state.properties.items() if not k.startswith("history.expire")}
        return state.model_copy(update={"properties": kept})

    create_examples(shutil.copytree(ROOT / "policies", tmp_path / "policies"), without_expiry)
    assert "from policies/logs/_namespace.yaml" in plan_text(tmp_path, "policies")  # fills the plan cache
    inside = tmp_path / "policies"
    warm = plan_text(inside, "logs/app_events.yaml")
    assert "from logs/_namespace.yaml" in warm
    assert warm == plan_text(inside, "logs/app_events.yaml", "--no-cache")
