"""docs/api.md's examples run as written: each ```python block, in order, in one fresh Python process (later
blocks use what earlier ones made, as a reader would run them), in a folder holding a copy of this repository's
policies/ and no catalog configuration (so the embedded catalog under .lake/ is used). The blocks before
"## An orchestrator's task" need no JVM; that section applies through real Spark.

A failing example fails here with the block's own traceback; then the test checks what a user would look at:
the output lines the examples print, and the catalog the orchestrator's task changed.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "api.md"
SPARK_SECTION = "## An orchestrator's task"


def blocks(text: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```$", text, flags=re.S | re.M)


def sections() -> tuple[list[str], list[str]]:
    text = DOC.read_text(encoding="utf-8")
    before, after = text.split(SPARK_SECTION, 1)
    return blocks(before), blocks(after)


def run_examples(folder: Path, code: list[str]) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYICEBERG_", "TABLEPOLICY_"))}
    env["HOME"] = str(folder)  # no ~/.pyiceberg.yaml of the machine's user
    return subprocess.run([sys.executable, "-c", "\n".join(code)], cwd=folder, env=env, capture_output=True,
                          text=True, timeout=900)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "policies", tmp_path / "policies")
    return tmp_path


def test_the_document_has_examples_in_both_parts() -> None:
    offline, spark = sections()
    assert len(offline) >= 3 and len(spark) >= 2


def test_the_examples_without_a_jvm_run_and_print_what_they_say(project: Path) -> None:
    offline, _ = sections()
    ran = run_examples(project, offline)
    assert ran.returncode == 0, ran.stderr
    lines = ran.stdout.splitlines()
    assert lines[0] == "6 policy files checked"
    assert lines[1].startswith("Catalog: lake (sql, sqlite:///") and lines[1].endswith(".lake/catalog.db)")
    assert "security.cloudtrail_mgmt ['create table security.cloudtrail_mgmt (30 columns)']" in lines
    assert any(line.startswith("catalog 'warehouse' (--catalog) is not defined: no catalog is configured, only the "
                               "embedded catalog 'lake' exists") for line in lines), lines
    assert "TP104 broken/orders.yaml:5:15 columns.0.required: wrong type: input should be a valid boolean" in lines
    assert not (project / ".lake").exists()  # planning read an empty catalog and created nothing


@pytest.mark.spark
def test_the_orchestrators_task_applies_the_saved_plan_and_maintains(project: Path) -> None:
    _, spark = sections()
    ran = run_examples(project, spark)
    assert ran.returncode == 0, ran.stderr
    assert re.search(r"^\d+ steps applied$", ran.stdout, flags=re.M), ran.stdout
    assert "done create table security.cloudtrail_mgmt" in ran.stdout
    assert re.search(r"^applied plan [0-9a-f]{16}.* by \S+$", ran.stdout, flags=re.M), ran.stdout  # history
    assert "['ads.click_log']" in ran.stdout.splitlines()  # the request reaches the table whose key it names
    assert "[('REQ-1', 'done')]" in ran.stdout.splitlines()
    assert '"complete": true' in (project / "proof.json").read_text()
    from pyiceberg.catalog.sql import SqlCatalog

    catalog = SqlCatalog("lake", uri=f"sqlite:///{project / '.lake' / 'catalog.db'}",
                         warehouse=(project / ".lake" / "warehouse").as_uri())
    assert sorted(catalog.list_tables("security")) == [("security", "cloudtrail_mgmt")]
    assert (project / "plan.json").is_file()
