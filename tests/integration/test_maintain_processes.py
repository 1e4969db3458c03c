"""maintain as the scheduler runs it, in its own process, while a streaming writer keeps appending
(seed 004: the optimizer compacts while Flink commits): every row written survives, and the small files
written before are compacted."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.catalog_fixtures import embedded_catalog
from tests.integration.test_apply_processes import BASE, ROWS, WRITER, base_table, cli

pytestmark = pytest.mark.spark

LIFECYCLE = """lifecycle:
  compaction: {min_input_files: 3}
  manifests: {min_manifests: 3}
"""


def test_maintenance_beside_a_streaming_writer_loses_no_row(tmp_path: Path) -> None:
    policies = base_table(tmp_path)  # one commit of three rows
    (policies / "events.yaml").write_text(BASE + LIFECYCLE)
    table = embedded_catalog(policies).load_table(("crash", "events"))
    for _ in range(5):  # five more small commits into the same day partition
        table.append(ROWS)
    files_before = len(table.inspect.files())
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), "60"], stdout=subprocess.PIPE, text=True)
    report = tmp_path / "maintain.json"
    maintained = cli("maintain", str(policies), "--json-report", str(report))
    out, _ = writer.communicate(timeout=300)
    assert maintained.returncode == 0, maintained.stdout + maintained.stderr
    assert maintained.stdout.startswith("Catalog: lake (sql, ")
    # stderr holds the progress lines only: no Spark banner or log line
    assert all(line.startswith(("Starting Spark", "[1/1] crash.events: ")) for line in maintained.stderr.splitlines())
    assert "[1/1] crash.events: compaction ... done in " in maintained.stderr
    # decided again after compaction on the health read then: the manifests compaction merged need no rewrite,
    # unless the writer's appends meanwhile (one manifest each) brought the table back over min_manifests
    # (tests/integration/test_maintain.py checks the skip without a writer)
    (manifests,) = [line for line in maintained.stderr.splitlines() if " manifests ... " in line]
    assert manifests.startswith(("[1/1] crash.events: manifests ... skipped: manifests already merged by compaction",
                                 "[1/1] crash.events: manifests ... done in ")), manifests
    written = int(out.strip())
    assert written == 60
    table = embedded_catalog(policies).load_table(("crash", "events"))
    ids = table.scan(selected_fields=("id",)).to_arrow().column("id").to_pylist()
    assert len(ids) == 18 + written and set(range(1000, 1000 + written)) <= set(ids)
    assert files_before == 6
    (outcome,) = json.loads(report.read_text())["tables"]
    (compaction,) = [s for s in outcome["steps"] if s["action"] == "rewrite_data_files"]
    assert compaction["status"] == "done" and compaction["output"]["rewritten_data_files_count"] >= files_before
