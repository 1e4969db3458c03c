"""`health` and `maintain --dry-run` read each manifest list and manifest once per run, and start no JVM
(issue 22, target 2): the health figures, the retention estimate and the orphan decision share one read; so does
a run of the engine-free actions (expiry's reach of what it may delete, and the health read again after it).

A small fleet of bench/fleet.py's (one table of 10 manifests over two snapshots that share 9 of them, three of
one manifest per snapshot; retention, compaction, manifests, orphan files and erasure declared on all; every
second table with an old unreferenced file), each command in its own process with every avro open counted
and pyspark unimportable (tests/avro_reads.py), JAVA_HOME pointing nowhere."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pyiceberg.catalog.sql import SqlCatalog

from bench.fleet import NAMESPACE, build
from tests.catalog_fixtures import embedded_catalog
from tests.cli_runner import ROOT

COMMANDS = {"health": ["health"], "maintain --dry-run": ["maintain", "--dry-run"]}
# what each command shows of the decisions the reads fed: the orphan found, the estimate, the large table's
# manifests and small files
SHOWN = {
    "health": ["orphan files  1 (30 bytes) past the guard, 0 newer", "manifests     10",
               "rows          4,000 (2,000 in files wholly before the retention cutoff, 0 file(s) partly)"],
    "maintain --dry-run": ["why: 1 unreferenced file(s), 30 bytes, older than 3d", "expire snapshots",
                           "why: the current snapshot has 10 manifests (min_manifests 10)",
                           "why: 100 data file(s) may hold rows before the cutoff (100 wholly, 2,000 row(s))"],
}


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(tmp_path_factory.mktemp("fleet"), tables=4, large=1, files=200, manifests=10, stray=2)


def distinct_metadata(policies: Path) -> dict[str, int]:
    """Every manifest list and manifest any snapshot of the fleet keeps, once each."""
    catalog: SqlCatalog = embedded_catalog(policies)
    found: dict[str, int] = {}
    for name in catalog.list_tables(NAMESPACE):
        table = catalog.load_table(name)
        for snapshot in table.metadata.snapshots:
            found[snapshot.manifest_list] = 1
            found |= {m.manifest_path: 1 for m in snapshot.manifests(table.io)}
    return found


def counted(policies: Path, args: list[str], opens: Path) -> str:
    """stdout of ``tablepolicy ARGS`` in a process counting every avro open into ``opens`` (no JVM possible)."""
    done = subprocess.run([sys.executable, "-m", "tests.avro_reads", str(opens), args[0], str(policies), *args[1:]],
                          cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "JAVA_HOME": "/nonexistent", "NO_COLOR": "1"}, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_each_manifest_is_read_once_and_no_jvm_starts(fleet: Path, tmp_path: Path, command: str) -> None:
    out = counted(fleet, COMMANDS[command], tmp_path / "opens.json")
    for line in SHOWN[command]:
        assert line in out, out
    expected = distinct_metadata(fleet)
    assert len(expected) == 4 * 2 + 10 + 3 * 2  # lists of 2 snapshots each, 10 + 2 + 2 + 2 manifests
    assert json.loads((tmp_path / "opens.json").read_text()) == expected


def test_a_run_of_expiry_and_orphan_removal_reads_each_manifest_once(tmp_path: Path) -> None:
    """Expiry decides what only the expired snapshot reached from the manifests health read, and health read
    again after each action reads nothing new (expiry writes no manifest)."""
    policies = build(tmp_path, tables=4, large=1, files=200, manifests=10, stray=2)
    expected = distinct_metadata(policies)
    out = counted(policies, ["maintain", "--only", "snapshots", "--only", "orphan_files"], tmp_path / "opens.json")
    assert "4 of 4 table(s)" in out or "expired 1 snapshot" in out, out
    assert json.loads((tmp_path / "opens.json").read_text()) == expected
    catalog = embedded_catalog(policies)
    assert [len(catalog.load_table((NAMESPACE, f"t{i:04d}")).metadata.snapshots) for i in range(4)] == [1] * 4
    assert [p.name for p in (tmp_path / ".lake").rglob("stray-*")] == []
