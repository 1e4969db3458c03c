"""Torn files (what a writer killed half way leaves: zero bytes, a truncated parquet footer, a half-written avro
manifest) never stop erase with a traceback. One no snapshot reaches is debris: erase deletes it (it might hold a
key) and the proof says so and is complete, once it is older than the debris age guard (3 days, or the table's
orphan_files.older_than): a younger one may be a file another writer is still writing, so it is kept and the proof
says when a run will delete it (or ``--debris-min-age 0s`` after a known crash). One a snapshot reaches is damage:
erase stops that table with a finding naming the file and what to do, and the rows are untouched. No JVM: the pyarrow
path."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyarrow as pa
import pytest
from pyiceberg.table import Table

from tablepolicy.compiler.desired import desired_states
from tablepolicy.compiler.validate import validate
from tablepolicy.runtime.orphans import normalize
from tests.catalog_fixtures import create_like, embedded_catalog
from tests.cli_runner import pyspark_unimportable, tablepolicy

ERASED = "subject-erased"
NOW = datetime(2026, 11, 5, 12, 0, tzinfo=UTC)  # the run's instant: the CLI's clock, replaced


@pytest.fixture(autouse=True)
def fixed_clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr("tablepolicy.cli.erasure.clock", lambda: NOW)
    yield


def _written(path: Path, ago: timedelta) -> None:
    """Date ``path``'s modification time ``ago`` before the run's instant."""
    moment = (NOW - ago).timestamp()
    os.utime(path, (moment, moment))
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


def _erase(tmp_path: Path, *extra: str) -> tuple[int, str, dict[str, object]]:
    with pyspark_unimportable():
        run = tablepolicy("erase", "policies", "--requests", "requests.csv", "--proof", "proof.json", *extra,
                          cwd=tmp_path)
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
    _written(stray, timedelta(days=3, minutes=1))  # older than the guard: no writer is still at it

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


@pytest.mark.parametrize("plant", PLANTED.values(), ids=PLANTED.keys())
def test_fresh_unreachable_torn_file_is_kept_as_a_write_in_flight(tmp_path: Path,
                                                                  plant: Callable[[Table], Path]) -> None:
    stray = plant(_table(tmp_path))
    content = stray.read_bytes()
    _written(stray, timedelta(hours=1))  # another writer (a user's Spark job) may still be writing it

    code, output, proof = _erase(tmp_path)

    assert code == 1, output
    assert stray.read_bytes() == content  # kept: deleting it would break that writer's commit
    assert proof["state"] == "incomplete" and proof["debris_deleted"] == [], proof
    written, after = "2026-11-05T11:00:00Z", "2026-11-08T11:00:00Z"  # NOW - 1h, then + 3d (Iceberg's default)
    assert proof["debris_pending"] == [{"path": normalize(str(stray)), "mtime": written, "retry_after": after}]
    assert proof["rows_after"] == 0 and _rows(tmp_path) == ["kept", "other"]  # the rest is done
    message = (f"error: privacy.events: {normalize(str(stray))} cannot be read and no snapshot reads it, but it was "
               "written at 2026-11-05 11:00:00 UTC, less than 3d ago (the debris age guard): it may be a write in "
               "flight (another writer's file not committed yet), so it was kept; run erase again after 2026-11-08 "
               "11:00:00 UTC, or pass --debris-min-age 0s when no writer can be running (after a known crash)")
    assert message in " ".join(output.split()), output
    assert "cannot be read as parquet" not in output  # one message per file, the one that says what to do
    assert ("privacy.events: 1 unreadable file(s) no snapshot reads kept: maybe a write in flight; run erase again "
            "after 2026-11-08 11:00:00 UTC") in output, output  # the certificate says so too

    code, output, proof = _erase(tmp_path, "--debris-min-age", "0s")  # the operator knows no writer runs

    assert code == 0, output
    assert proof["state"] == "complete" and proof["debris_deleted"] == [normalize(str(stray))], proof
    assert proof["debris_pending"] == [] and not stray.exists()
    assert "privacy.events: 1 unreadable file(s) no snapshot read deleted" in output, output  # in the certificate


def test_the_debris_guard_is_the_tables_orphan_guard(tmp_path: Path) -> None:
    stray = _zero_bytes(_table(tmp_path))
    (tmp_path / "policies" / "events.yaml").write_text(POLICY + "  orphan_files: {older_than: 5d}\n")
    _written(stray, timedelta(days=4))  # older than Iceberg's 3d, younger than the table's 5d

    code, output, proof = _erase(tmp_path)

    assert code == 1 and stray.exists(), output
    assert proof["debris_pending"] == [{"path": normalize(str(stray)), "mtime": "2026-11-01T12:00:00Z",
                                        "retry_after": "2026-11-06T12:00:00Z"}], proof
    assert "less than 5d ago (the debris age guard)" in " ".join(output.split()), output

    code, output, proof = _erase(tmp_path, "--debris-min-age", "3d")  # the flag overrides the table's guard

    assert code == 0 and not stray.exists(), output
    assert proof["debris_deleted"] == [normalize(str(stray))], proof


@pytest.mark.parametrize("value", ["3 days", "-1h", "soon", ""])
def test_a_malformed_debris_min_age_is_one_line_naming_the_flag(tmp_path: Path, value: str) -> None:
    stray = _zero_bytes(_table(tmp_path))

    with pyspark_unimportable():
        run = tablepolicy("erase", "policies", "--requests", "requests.csv", "--debris-min-age", value, cwd=tmp_path)

    assert run.returncode != 0 and stray.exists()
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: --debris-min-age: "), run.stderr
    assert "Traceback" not in run.stdout + run.stderr


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
