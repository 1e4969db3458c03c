"""Erasure pruned by metadata on a table Spark writes with bloom filters on the key
(``write.parquet.bloom-filter-enabled.column.user_id``): the filters Spark and Iceberg write are the format
runtime/erasure/bloom.py reads (every value written tests "maybe", values never written "no"), and an erase through
the CLI excludes files by manifest bounds and by bloom filters, reads the rest, and proves it: the test's own reader,
which reads every file's key column and shares no code with the tool, finds no key in any file afterwards."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from tablepolicy.cli.app import app
from tablepolicy.runtime.erasure.bloom import Probe, encode, read_filter
from tests.integration.conftest import Lake
from tests.integration.erasure_data import keys_in_storage
from tests.integration.evolve import converge
from tests.integration.test_erase import cli

pytestmark = pytest.mark.spark

POLICY = """
table: privacy.pruned_events
columns:
  - {name: event_id, type: long, required: true}
  - {name: user_id, type: string}
lifecycle:
  erasure: {key: [user_id], within: 30d}
"""
KEYS = {"u'1", "u2"}
REQUESTS = """requests:
  - {id: REQ-1, received: "2026-11-02", keys: {user_id: "u'1"}}
  - {id: REQ-2, received: "2026-11-03", keys: {user_id: u2}}
"""
WIDE = ["a", *(f"user-{i:03}" for i in range(300)), "zz"]  # bounds a..zz cover the keys; the filter excludes them
NARROW = ["a", "b"]  # bounds exclude the keys
HOLDING = ["u'1", "u2", "u3"]


def insert(lake: Lake, first: int, users: list[str]) -> None:
    values = ", ".join(f"({first + i}, '{u.replace(chr(39), chr(92) + chr(39))}')" for i, u in enumerate(users))
    lake.spark.sql("INSERT INTO lake.privacy.pruned_events SELECT /*+ COALESCE(1) */ * FROM VALUES "
                   f"{values} AS v(event_id, user_id)")  # one file per insert


def data_files(location: str) -> dict[str, set[str]]:
    """Every data file under the location with its user ids (plain pyarrow)."""
    root = Path(location.removeprefix("file:").removeprefix("//"))
    return {str(p): set(pq.read_table(p, columns=["user_id"]).column(0).to_pylist())
            for p in root.rglob("*.parquet")}


def test_erase_excludes_files_by_bounds_and_bloom_filters_and_proves_it(lake: Lake, tmp_path: Path) -> None:
    policies = tmp_path / "policies"
    policies.mkdir()
    converge(lake, POLICY)
    (policies / "events.yaml").write_text(POLICY)
    lake.spark.sql("ALTER TABLE lake.privacy.pruned_events SET TBLPROPERTIES "
                   "('write.parquet.bloom-filter-enabled.column.user_id' = 'true')")
    insert(lake, 0, WIDE)
    insert(lake, 1000, NARROW)
    insert(lake, 2000, HOLDING)
    location = lake.reader().pyiceberg_table(("privacy", "pruned_events")).location()
    files = data_files(location)
    assert len(files) == 3

    (wide,) = [p for p, users in files.items() if users == set(WIDE)]
    chunk = pq.ParquetFile(wide).metadata.row_group(0).column(1)
    assert chunk.path_in_schema == "user_id" and chunk.bloom_filter_offset is not None  # Spark wrote a filter
    with open(wide, "rb") as handle:
        handle.seek(chunk.bloom_filter_offset)
        bloom = read_filter(handle.read(chunk.bloom_filter_length or 2 << 20))
    assert all(bloom.may_hold(Probe.of(encode(u, "BYTE_ARRAY") or b"")) for u in WIDE)
    absent = [f"absent-{i}" for i in range(2000)] + sorted(KEYS)
    assert sum(bloom.may_hold(Probe.of(encode(u, "BYTE_ARRAY") or b"")) for u in absent) < 20
    assert not any(bloom.may_hold(Probe.of(encode(u, "BYTE_ARRAY") or b"")) for u in KEYS)

    requests = tmp_path / "requests.yaml"
    requests.write_text(REQUESTS)
    holding = next(p for p, users in files.items() if users == set(HOLDING))
    # the cost before the work: what the run will read after pruning, rewrite, and where; nothing changes
    env = {f"PYICEBERG_CATALOG__LAKE__{key.upper()}": value for key, value in lake.config.properties.items()}
    dry = CliRunner(env=env).invoke(app, ["erase", str(policies), "--requests", str(requests), "--dry-run",
                                          "--format", "json", "--catalog", "lake"])
    assert dry.exit_code == 0, dry.output
    (preview,) = json.loads(dry.stdout)["tables"]  # stdout is the JSON alone
    cost = preview["cost"]
    assert {k: cost[k] for k in ("files_listed", "files_read", "files_rewritten", "files_deleted", "pruned")} == {
        "files_listed": 3, "files_read": 1, "files_rewritten": 1, "files_deleted": 0, "pruned": True}
    assert {e: v["files"] for e, v in cost["excluded"].items()} == {
        "bounds": 1, "statistics": 0, "bloom_filter": 1, "no_key_column": 0}
    assert cost["bytes_read"] == cost["bytes_rewritten"] == Path(holding).stat().st_size
    assert cost["bytes_listed"] == sum(Path(f).stat().st_size for f in files)
    assert cost["reads"] == {"where": "this process", "why": "local master local[2]"}
    assert cost["rewrite"]["where"] == "this process" and cost["rewrite"]["why"].startswith("pyarrow")
    text = CliRunner(env=env).invoke(app, ["erase", str(policies), "--requests", str(requests), "--dry-run",
                                           "--catalog", "lake"])
    assert "cost: the survey reads the key columns of 1 of 3 file(s)" in text.output, text.output
    assert "excluded unread: 1 by manifest bounds, 1 by bloom filters)" in text.output, text.output
    assert data_files(location) == files  # a dry run changes nothing
    proof_file = tmp_path / "proof.json"
    code, output = cli(lake, "erase", str(policies), "--requests", str(requests), "--proof", str(proof_file))

    assert code == 0, output
    (proof,) = json.loads(proof_file.read_text())["tables"]
    assert proof["complete"] and proof["rows_before"] == 2 and proof["rows_after"] == 0
    pruning = proof["pruning"]
    # left in storage: the wide file (its filter), the narrow one and the rewrite holding u3 (their bounds)
    assert pruning["enabled"] and pruning["excluded_by_bloom_filter"] == 1, pruning
    assert pruning["excluded_by_bounds"] == 2 and pruning["files_read"] == 0, pruning
    assert "excluded unread: 2 by manifest bounds, 1 by bloom filters" in output, output
    assert keys_in_storage(location, KEYS, column="user_id") == {}  # every file read, by the test's own reader
    assert sorted(u for users in data_files(location).values() for u in users) == sorted(
        [*WIDE, *NARROW, "u3"])
