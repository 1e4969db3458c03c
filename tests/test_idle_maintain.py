"""A maintenance run where no table needs work starts no JVM: it runs with pyspark unimportable, even with
orphan removal declared (the location listing finds nothing to remove)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from tests.catalog_fixtures import create_examples

ROOT = Path(__file__).resolve().parents[1]
TABLEPOLICY = str(Path(os.environ.get("VIRTUAL_ENV", ROOT / ".venv")) / "bin" / "tablepolicy")


def test_an_idle_maintain_never_imports_pyspark(tmp_path: Path) -> None:
    create_examples(shutil.copytree(ROOT / "policies", tmp_path / "policies"))
    blocker = tmp_path / "no-spark" / "pyspark"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text("raise ImportError('pyspark must not be imported by an idle run')\n")
    env = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": f"{blocker.parent}{os.pathsep}{ROOT}"}
    run = subprocess.run([TABLEPOLICY, "maintain", "policies"], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "No maintenance due on 3 table(s)." in run.stdout
    assert "no unreferenced file older than" in run.stdout  # declared for logs.* and security.*: listed, skipped
