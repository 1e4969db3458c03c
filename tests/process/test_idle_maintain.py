"""A maintenance run where no table needs work starts no JVM: it runs with pyspark unimportable, even with
orphan removal declared (the location listing finds nothing to remove)."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.catalog_fixtures import create_examples
from tests.cli_runner import pyspark_blocker, tablepolicy_process

ROOT = Path(__file__).resolve().parents[2]


def test_an_idle_maintain_never_imports_pyspark(tmp_path: Path) -> None:
    """In a process of its own: the point is what that process imports."""
    create_examples(shutil.copytree(ROOT / "policies", tmp_path / "policies"))
    run = tablepolicy_process("maintain", "policies", cwd=tmp_path, env=pyspark_blocker(tmp_path / "no-spark"))
    assert run.returncode == 0, run.stdout + run.stderr
    assert "No maintenance due on 4 table(s)." in run.stdout
    assert "no unreferenced file older than" in run.stdout  # declared for logs.* and security.*: listed, skipped
