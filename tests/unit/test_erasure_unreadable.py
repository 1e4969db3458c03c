"""A file under the table location named .parquet that is no parquet file (a write that failed half way, a stray of
another tool) cannot be proven free of a key: the survey names it unreadable and reads every other file, and erase
deletes it as debris no snapshot reads once older than the debris age guard (the proof names it), where erase used to
stop with an internal error (ArrowInvalid: Parquet magic bytes not found)."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pytest
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField, StringType

from tablepolicy.compiler.desired import desired_states
from tablepolicy.compiler.validate import validate
from tablepolicy.runtime.erasure.keys import SUBJECT, KeyColumn, KeySet
from tablepolicy.runtime.erasure.survey import FileReader, survey
from tablepolicy.runtime.orphans import normalize
from tests.catalog_fixtures import create_like, embedded_catalog
from tests.cli_runner import pyspark_unimportable, tablepolicy

ERASED = "subject-erased"


def test_a_file_named_parquet_that_is_none_is_unreadable_and_the_rest_is_surveyed(tmp_path: Path) -> None:
    catalog = SqlCatalog("lake", uri=f"sqlite:///{tmp_path / 'catalog.db'}", warehouse=tmp_path.as_uri())
    catalog.create_namespace("privacy")
    schema = Schema(NestedField(1, "event_id", LongType(), required=False),
                    NestedField(2, "user_id", StringType(), required=False))
    table = catalog.create_table(("privacy", "events"), schema)
    table.append(pa.table({"event_id": pa.array([1, 2], pa.int64()), "user_id": [ERASED, "kept"]}))
    table = catalog.load_table(("privacy", "events"))
    stray = Path(table.location().removeprefix("file://")) / "data" / "half-written.parquet"
    stray.write_bytes(b"PAR1 and then nothing a reader understands")
    column = KeyColumn(("user_id",), 2, pa.string())
    keys = KeySet((column,), pa.table({column.alias: [ERASED], SUBJECT: pa.array([0], pa.int32())}), ("REQ-0",))

    found = survey(table, FileReader(keys), {})

    assert found.unreadable == (normalize(str(stray)),)
    assert [f.rows for f in found.held.values()] == [1]  # the table's own file still read: the key is found


POLICY = """table: privacy.events
columns:
  - {name: event_id, type: long}
  - {name: user_id, type: string}
lifecycle:
  erasure: {key: [user_id], within: 30d}
"""


def test_erase_deletes_the_unreadable_file_no_snapshot_reads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    now = datetime(2026, 11, 5, 12, 0, tzinfo=UTC)
    monkeypatch.setattr("tablepolicy.cli.erasure.clock", lambda: now)  # the run's instant, not the real clock
    policies = tmp_path / "policies"
    policies.mkdir()
    (policies / "events.yaml").write_text(POLICY)
    model, diagnostics = validate(policies)
    assert not diagnostics.has_errors
    catalog = embedded_catalog(policies)
    create_like(catalog, desired_states(model)[0])
    table = catalog.load_table(("privacy", "events"))
    table.append(pa.table({"event_id": pa.array([1, 2], pa.int64()), "user_id": [ERASED, "kept"]}))
    stray = Path(table.location().removeprefix("file://")) / "data" / "half-written.parquet"
    stray.parent.mkdir(parents=True, exist_ok=True)
    stray.write_bytes(b"PAR1 and then nothing a reader understands")
    written = datetime(2026, 11, 1, tzinfo=UTC).timestamp()  # 4.5 days before the run: past the 3-day guard
    os.utime(stray, (written, written))
    (tmp_path / "requests.csv").write_text(f"id,received,user_id\nREQ-1,2026-11-02,{ERASED}\n")

    with pyspark_unimportable():  # the pyarrow path: no JVM
        run = tablepolicy("erase", "policies", "--requests", "requests.csv", "--proof", "proof.json", cwd=tmp_path)

    # no snapshot reads it: debris of a killed writer, which might hold a key, so erase deletes it (issue 21;
    # a file a snapshot reads is damage: tests/unit/test_torn_files.py)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "internal error" not in run.stdout + run.stderr
    (proof,) = json.loads((tmp_path / "proof.json").read_text())["tables"]
    assert proof["state"] == "complete" and proof["debris_deleted"] == [normalize(str(stray))], proof
    assert not stray.exists()
    rows = catalog.load_table(("privacy", "events")).scan().to_arrow().column("user_id").to_pylist()
    assert rows == ["kept"]  # everything else was done
