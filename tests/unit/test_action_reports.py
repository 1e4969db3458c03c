"""Each action's duration and bytes in the JSON reports runs leave: ``maintain --json-report`` (every step:
``seconds`` and ``bytes`` with one set of keys) and ``erase --proof`` (every step of a table's erasure:
``seconds``, ``files`` and ``bytes``). No JVM: the runs' results are built as the runs return them (the
effects measured by compiler/maintenance/measured.py from health before and after), then rendered byte for byte
against tests/golden/reports; rewrite with ``UPDATE_GOLDEN=1 .venv/bin/pytest -q tests/unit/test_action_reports.py``.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tablepolicy.compiler.erasure.cost import Placement
from tablepolicy.compiler.maintenance.actions import (
    ExpireSnapshots,
    RemoveOrphanFiles,
    RewriteDataFiles,
    RewriteManifests,
)
from tablepolicy.compiler.maintenance.decide import Skip
from tablepolicy.compiler.maintenance.health import OrphanFigures
from tablepolicy.compiler.maintenance.measured import measured
from tablepolicy.compiler.maintenance.report import ActionRun, MaintenanceReport, Status, TableOutcome
from tablepolicy.compiler.render.erasure_report import proof_json
from tablepolicy.compiler.render.maintenance_report import report_json
from tablepolicy.runtime.erasure.proof import ProofStep, TableProof
from tablepolicy.runtime.erasure.pruning import Evidence, Pruning
from tests.cli_runner import pyspark_unimportable, tablepolicy
from tests.unit.test_maintenance import health
from tests.unit.test_report_output import CATALOG, check
from tests.unit.test_torn_files import _table as torn_files_table

NOW = datetime(2026, 11, 24, 6, 0, tzinfo=UTC)
T = ("shop", "t2")
BYTES_KEYS = ["data_before", "data_after", "read", "written", "removed"]


def maintain_report() -> MaintenanceReport:
    """Compaction, expiry and orphan removal done, a manifest rewrite failed, on shop.t2; shop.t10 idle."""
    start = health(table=T, data_files=40, small_files=40, data_bytes=40_000, rows=400, snapshot_times=(1, 2, 3),
                   orphans=OrphanFigures(files=2, bytes=512))
    compacted = start.model_copy(update={"data_files": 2, "small_files": 0, "data_bytes": 12_000})
    expired = compacted.model_copy(update={"snapshot_times": (3,), "snapshot_log": start.snapshot_log[2:]})
    cleaned = expired.model_copy(update={"orphans": OrphanFigures(files=0, bytes=0)})
    compact = RewriteDataFiles(table=T, reason="40 small files", strategy="binpack", target_file_size=1 << 20,
                               min_input_files=5)
    expire = ExpireSnapshots(table=T, reason="2 snapshots older than 1d", older_than=NOW, retain_last=1)
    orphans = RemoveOrphanFiles(table=T, reason="2 unreferenced files", older_than=NOW)
    manifests = RewriteManifests(table=T, reason="100 manifests")
    output = {"rewritten_data_files_count": 40, "added_data_files_count": 2, "rewritten_bytes_count": 40_000}
    steps = (
        ActionRun(compact, "CALL ...rewrite_data_files", Status.DONE, measured(compact, [output], start, compacted),
             12.3456, output),
        ActionRun(expire, "CALL ...expire_snapshots", Status.DONE, measured(expire, [{}], compacted, expired), 1.5),
        ActionRun(orphans, "CALL ...remove_orphan_files", Status.DONE,
             measured(orphans, [{"orphan_file_location": "a"}, {"orphan_file_location": "b"}], expired, cleaned),
             0.25),
        ActionRun(manifests, "CALL ...rewrite_manifests", Status.FAILED, seconds=3.0, error="the engine said no"),
    )
    idle = health(table=("shop", "t10"), data_files=1, data_bytes=10, rows=1, snapshot_times=(5,))
    return MaintenanceReport(CATALOG, False, (
        TableOutcome(T, start, cleaned, steps, (Skip("TM202", "rewrite_position_delete_files", "no delete files"),),
                     stored_bytes=(52_000, 12_000), freed_bytes=40_512),
        TableOutcome(("shop", "t10"), idle, idle)))


def test_the_maintain_report_gives_each_steps_seconds_and_bytes() -> None:
    text = report_json(maintain_report())
    check("maintain_report.json", text)
    steps = json.loads(text)["tables"][0]["steps"]
    assert [(s["action"], s["seconds"]) for s in steps] == [
        ("rewrite_data_files", 12.346), ("expire_snapshots", 1.5), ("remove_orphan_files", 0.25),
        ("rewrite_manifests", 3.0)]
    assert all(list(s["bytes"]) == BYTES_KEYS for s in steps)  # one set of keys, null when unknown
    compaction, expiry, removal, failed = (s["bytes"] for s in steps)
    assert compaction == {"data_before": 40_000, "data_after": 12_000, "read": 40_000, "written": 12_000,
                          "removed": None}
    assert (expiry["data_before"], expiry["data_after"]) == (12_000, 12_000)
    assert removal["removed"] == 512
    assert failed == dict.fromkeys(BYTES_KEYS)  # it did not run to the end: nothing measured


def test_a_dry_runs_steps_have_the_same_keys() -> None:
    report = maintain_report()
    dry = MaintenanceReport(CATALOG, True, tuple(
        TableOutcome(t.table, t.before, t.after, tuple(
            ActionRun(s.action, s.sql, Status.ESTIMATED, type(s.effect)(bytes_rewritten=s.effect.bytes_rewritten))
            for s in t.steps)) for t in report.tables))
    steps = json.loads(report_json(dry))["tables"][0]["steps"]
    assert [s["seconds"] for s in steps] == [0.0] * 4
    assert steps[0]["bytes"] == {**dict.fromkeys(BYTES_KEYS), "read": 40_000}  # what compaction will read


def erase_proof() -> TableProof:
    """A table's erasure as run_erasure returns it: the rows deleted (pyarrow), the expiry of the snapshot that
    still read them, an orphan deleted; sizes as the listing before each step gave them."""
    proof = TableProof(("privacy", "events"), ["REQ-1"], files_with_keys=["data/a.parquet"], rows_before=1,
                       statements=["DELETE ..."], files_rewritten=["data/a.parquet"],
                       snapshots_checked=[3], files_scanned=4, bytes_scanned=3600, seconds=2.4567,
                       pruning=Pruning(True, {Evidence.BOUNDS: 2, Evidence.BLOOM_FILTER: 1, Evidence.READ: 1},
                                       {Evidence.BOUNDS: 1800, Evidence.BLOOM_FILTER: 900, Evidence.READ: 900}),
                       survey_ran=Placement(True, "12,884,901,888 bytes listed, above the threshold 10.0 GiB"),
                       proof_ran=Placement(False, "local master local[2]"))
    proof.steps += [ProofStep("delete_rows", 1.23456, 1, 1024), ProofStep("expire_snapshots", 0.5, 3, 5120),
                    ProofStep("delete_orphans", 0.125, 1, None)]
    return proof


def test_the_erase_proof_gives_each_steps_seconds_files_and_bytes() -> None:
    text = proof_json(CATALOG, NOW, ["REQ-1"], [erase_proof().as_json()], [], [], NOW.date())
    check("erase_proof_steps.json", text)
    (table,) = json.loads(text)["tables"]
    assert table["steps"] == [
        {"action": "delete_rows", "seconds": 1.235, "files": 1, "bytes": 1024},
        {"action": "expire_snapshots", "seconds": 0.5, "files": 3, "bytes": 5120},
        {"action": "delete_orphans", "seconds": 0.125, "files": 1, "bytes": None}]  # not under a listed location
    assert table["seconds"] == 2.457
    assert table["pruning"] == {"enabled": True, "excluded_by_bounds": 2, "excluded_by_statistics": 0,
                                "excluded_by_bloom_filter": 1, "no_key_column": 0, "files_read": 1, "bytes_read": 900,
                                "bytes_skipped": 2700}


@pytest.mark.parametrize("flags", [(), ("--no-prune",)], ids=["pruned", "no-prune"])
def test_a_real_erasure_records_its_steps(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flags: tuple[str, ...]
                                          ) -> None:
    """Through the CLI with no JVM (the pyarrow path) on test_torn_files' table (two files, one holding the
    key): that file is replaced, then the snapshots that still read it expire, each step with the bytes of the
    files it took as listed before it. The proof's two files ("kept", "other") are excluded by their manifest
    bounds, or with --no-prune both read; the output says which."""
    monkeypatch.setattr("tablepolicy.cli.erasure.clock", lambda: NOW)
    table = torn_files_table(tmp_path)
    [holding] = [t.file.file_size_in_bytes for t in table.scan().plan_files() if t.file.record_count == 2]
    with pyspark_unimportable():
        run = tablepolicy("erase", "policies", "--requests", "requests.csv", "--proof", "proof.json", *flags,
                          cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    (proof,) = json.loads((tmp_path / "proof.json").read_text())["tables"]
    pruned = not flags
    assert proof["pruning"]["enabled"] is pruned and proof["files_scanned"] == 2
    assert proof["pruning"]["excluded_by_bounds"] == (2 if pruned else 0)
    assert proof["pruning"]["files_read"] == (0 if pruned else 2)
    assert ("the proof read the key columns of 0 of 2 file(s)" if pruned
            else "the proof read the key columns of 2 of 2 file(s)") in run.stdout, run.stdout
    assert ("excluded unread: 2 by manifest bounds" if pruned else "pruning off (--no-prune)") in run.stdout
    steps = {s["action"]: s for s in proof["steps"]}
    assert proof["steps"][0]["action"] == "delete_rows" and steps["delete_rows"]["files"] == 1
    assert steps["delete_rows"]["bytes"] == holding  # the data file that held the key, as listed
    assert "expire_snapshots" in steps and steps["expire_snapshots"]["files"] >= 1
    assert all(s["seconds"] >= 0 and s["bytes"] is not None for s in proof["steps"]), proof["steps"]
