"""A maintenance run where no table needs work starts no JVM: it runs with pyspark unimportable, even with
orphan removal declared (the location listing finds nothing to remove)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from compiler.desired import desired_states
from compiler.validate import validate
from tests.catalog_fixtures import create_like, embedded_catalog

ROOT = Path(__file__).resolve().parents[1]
TABLEPOLICY = str(Path(os.environ.get("VIRTUAL_ENV", ROOT / ".venv")) / "bin" / "tablepolicy")


def test_an_idle_maintain_never_imports_pyspark(tmp_path: Path) -> None:
    policies = shutil.copytree(ROOT / "policies", tmp_path / "policies")
    project, _ = validate(policies)
    catalog = embedded_catalog(policies)
    for state in desired_states(project):
        catalog.create_namespace_if_not_exists(state.name[:-1])
        create_like(catalog, state)
    blocker = tmp_path / "no-spark" / "pyspark"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text("raise ImportError('pyspark must not be imported by an idle run')\n")
    env = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": f"{blocker.parent}{os.pathsep}{ROOT}"}
    run = subprocess.run([TABLEPOLICY, "maintain", "policies"], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "No maintenance due on 3 table(s)." in run.stdout
    assert "no unreferenced file older than" in run.stdout  # declared for logs.* and security.*: listed, skipped
