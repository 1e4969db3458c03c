"""compiler/ never imports runtime/ or pyspark: plans run on CI machines without a JVM."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FORBIDDEN = ("runtime", "pyspark", "py4j")


def test_compiler_imports_nothing_from_runtime_or_spark() -> None:
    offenders = []
    for file in (ROOT / "compiler").rglob("*.py"):
        for node in ast.walk(ast.parse(file.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            offenders += [f"{file.relative_to(ROOT)}: {n}" for n in names if n.split(".")[0] in FORBIDDEN]
    assert offenders == []


def test_validate_ddl_and_plan_run_with_pyspark_unimportable(tmp_path: Path) -> None:
    """Run the real CLI where `import pyspark` raises."""
    blocker = tmp_path / "block"
    blocker.mkdir()
    (blocker / "pyspark").mkdir()
    (blocker / "pyspark" / "__init__.py").write_text("raise ImportError('pyspark is blocked in this test')\n")
    policies = shutil.copytree(ROOT / "policies", tmp_path / "policies")
    for command in (["validate"], ["ddl"], ["plan", "--detailed-exitcode"]):
        result = subprocess.run(
            [sys.executable, "-c", "from runtime.cli.app import main; main()", *command, str(policies)],
            capture_output=True, text=True, cwd=tmp_path,
            env={"PYTHONPATH": f"{blocker}:{ROOT}", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
            check=False,
        )
        assert result.returncode in (0, 2), result.stderr
        assert "blocked" not in result.stderr
