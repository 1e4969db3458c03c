"""Torn files (what a writer killed half way leaves: zero bytes, a truncated parquet footer, a half-written avro
manifest) never stop erase with a traceback. One no snapshot reaches is debris: erase deletes it (it might hold a
key) and the proof says so and is complete. One a snapshot reaches is damage: erase stops that table with a finding
naming the file and what to do, and the rows are untouched. No JVM: the pyarrow path."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pytest
from pyiceberg.table import Table

from compiler.desired import desired_states
from compiler.validate import validate
from runtime.orphans import normalize
from tests.catalog_fixtures import create_like, embedded_catalog
from tests.cli_runner import pyspark_unimportable, tablepolicy

ERASED = "subject-erased"
POLICY = """table: privacy.events
columns:
  - {name: event_id, type: long}
  - {name: user_id, type: string}
lifecycle:
  erasure: {key: [user_id], within: 30d}
"""


def _table(tmp_path: Path) -> Table:
    policies = tmp_path / "policies"
    policies.mkdir()
    (policies / "events.yaml").write_text(POLICY)
    model, diagnostics = validate(policies)
    assert not diagnostics.has_errors
    catalog = embedded_catalog(policies)
    create_like(catalog, desired_states(model)[0])
    table = catalog.load_table(("privacy", "events"))
    table.append(pa.table({"event_id": pa.array([1, 2], pa.int64()), "user_id": [ERASED, "kept"]}))
    table.append(pa.table({"event_id": pa.array([3], pa.int64()), "user_id": ["other"]}))
    (tmp_path / "requests.csv").write_text(f"id,received,user_id\nREQ-1,2026-11-02,{ERASED}\n")
    return catalog.load_table(("privacy", "events"))


def _local(uri: str) -> Path:
    return Path(uri.removeprefix("file://").removeprefix("file:"))


def _data_files(table: Table) -> list[Path]:
    return sorted(_local(t.file.file_path) for t in table.scan().plan_files())


def _manifest(table: Table) -> Path:
    snapshot = table.current_snapshot()
    assert snapshot is not None
    return _local(snapshot.manifests(table.io)[0].manifest_path)


def _erase(tmp_path: Path) -> tuple[int, str, dict[str, object]]:
    with pyspark_unimportable():
        run = tablepolicy("erase", "policies", "--requests", "requests.csv", "--proof", "proof.json", cwd=tmp_path)
    output = run.stdout + run.stderr
    assert "internal error" not in output and "Traceback" not in output, output
    (proof,) = json.loads((tmp_path / "proof.json").read_text())["tables"]
    return run.returncode, output, proof


def _rows(tmp_path: Path) -> list[str]:
    catalog = embedded_catalog(tmp_path / "policies")
    return sorted(catalog.load_table(("privacy", "events")).scan().to_arrow().column("user_id").to_pylist())


def _zero_bytes(table: Table) -> Path:
    stray = _data_files(table)[0].parent / "00009-0-killed-zero.parquet"
    stray.write_bytes(b"")
    return stray


def _truncated_footer(table: Table) -> Path:
    source = _data_files(table)[0]
    stray = source.parent / "00009-0-killed-footer.parquet"
    stray.write_bytes(source.read_bytes()[:-7])  # the key's row is in it; the footer is cut
    return stray


def _half_manifest(table: Table) -> Path:
    source = _manifest(table)
    stray = source.parent / "killed-half-m0.avro"
    stray.write_bytes(source.read_bytes()[: source.stat().st_size // 2])
    return stray


PLANTED: dict[str, Callable[[Table], Path]] = {
    "zero-byte-parquet": _zero_bytes, "truncated-footer": _truncated_footer, "half-avro-manifest": _half_manifest}


@pytest.mark.parametrize("plant", PLANTED.values(), ids=PLANTED.keys())
def test_unreachable_torn_file_is_debris_erase_deletes_and_proves(tmp_path: Path,
                                                                  plant: Callable[[Table], Path]) -> None:
    stray = plant(_table(tmp_path))

    code, output, proof = _erase(tmp_path)

    assert code == 0, output
    assert proof["state"] == "complete", proof
    assert proof["debris_deleted"] == [normalize(str(stray))], proof
    assert proof["unreadable"] == [] and proof["rows_after"] == 0, proof
    assert not stray.exists()
    assert _rows(tmp_path) == ["kept", "other"]
    with pyspark_unimportable():  # converged: the request is done, nothing left to do
        again = tablepolicy("erase", "policies", "--requests", "requests.csv", cwd=tmp_path)
    assert again.returncode == 0, again.stdout + again.stderr


def _tear_data_file(table: Table) -> Path:
    target = _data_files(table)[-1]
    target.write_bytes(target.read_bytes()[:-7])
    return target


def _empty_data_file(table: Table) -> Path:
    target = _data_files(table)[-1]
    target.write_bytes(b"")
    return target


def _tear_manifest(table: Table) -> Path:
    target = _manifest(table)
    target.write_bytes(target.read_bytes()[: target.stat().st_size // 2])
    return target


REACHED: dict[str, Callable[[Table], Path]] = {
    "truncated-footer": _tear_data_file, "zero-byte-parquet": _empty_data_file, "half-avro-manifest": _tear_manifest}


@pytest.mark.parametrize("tear", REACHED.values(), ids=REACHED.keys())
def test_reachable_torn_file_is_damage_erase_stops_naming_it(tmp_path: Path, tear: Callable[[Table], Path]) -> None:
    table = _table(tmp_path)
    kept = {p: p.read_bytes() for p in _data_files(table)}
    torn = tear(table)

    code, output, proof = _erase(tmp_path)

    assert code == 1, output
    assert f"the table is damaged: {torn.as_uri()} (" in output, output
    assert "roll the table back to a snapshot that does not read it" in output, output
    assert proof["state"] == "failed" and proof["debris_deleted"] == [], proof
    assert torn.exists()  # damage is never deleted
    for path, content in kept.items():  # nothing rewritten or deleted
        if path != torn:
            assert path.read_bytes() == content
    shutil.rmtree(tmp_path / ".lake", ignore_errors=True)


LIFECYCLE = POLICY + """  orphan_files: {older_than: 3d}
  compaction: {target_file_size: 128MB, min_input_files: 2}
"""


@pytest.mark.parametrize("command", [("health", "policies"), ("maintain", "policies", "--dry-run")],
                         ids=["health", "maintain-dry-run"])
@pytest.mark.parametrize("tear", [_tear_manifest], ids=["half-avro-manifest"])
def test_reachable_torn_manifest_stops_health_and_maintain_naming_it(
        tmp_path: Path, command: tuple[str, ...], tear: Callable[[Table], Path]) -> None:
    table = _table(tmp_path)
    (tmp_path / "policies" / "events.yaml").write_text(LIFECYCLE)
    torn = tear(table)

    with pyspark_unimportable():
        run = tablepolicy(*command, cwd=tmp_path)

    output = run.stdout + run.stderr
    assert run.returncode == 1, output
    assert "internal error" not in output and "Traceback" not in output, output
    finding = f"error: the table is damaged: {torn.as_uri()} (a manifest a snapshot reads) cannot be read"
    assert finding in output, output


def test_unreachable_torn_files_do_not_disturb_health(tmp_path: Path) -> None:
    table = _table(tmp_path)
    (tmp_path / "policies" / "events.yaml").write_text(LIFECYCLE)
    for plant in PLANTED.values():
        plant(table)

    with pyspark_unimportable():
        run = tablepolicy("health", "policies", cwd=tmp_path)

    assert run.returncode == 0, run.stdout + run.stderr
    assert "damaged" not in run.stdout + run.stderr
