"""erase on the REST catalog (SeaweedFS, tests/seaweed.py) on copy-on-write and merge-on-read tables, checked apart
from the engine: every object under the table's prefix listed and read with boto3 from the server's S3 store,
every parquet file by plain pyarrow and every manifest's column bounds decoded (the scan of
tests/integration/test_object_storage_erase.py), finding no erased key; then ``erase status`` reads the ledger.

One server and one Spark session (the CLI's, started by the first apply) for the module; both stopped at its end.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from urllib.parse import urlparse

import pytest
import yaml

from tests.cli_runner import Run, tablepolicy
from tests.integration.erasure_data import ERASED, KEPT, checksum, fill, policy, requests_yaml
from tests.integration.spark_reset import stop_spark
from tests.integration.test_object_storage_erase import KEYS, SQL_KEYS, scan, stored
from tests.seaweed import SECRET_KEY, WAREHOUSE, SeaweedServer, seaweed_server

pytestmark = pytest.mark.spark
NAME = "resterase"


@pytest.fixture(scope="module")
def server() -> Iterator[SeaweedServer]:
    with contextlib.ExitStack() as stack:
        stop_spark()  # a session left by another module keeps its Hadoop settings: start ours afresh
        running = stack.enter_context(seaweed_server())
        stack.callback(stop_spark)
        yield running


def cli(root: Path, *args: str) -> Run:
    run = tablepolicy(*args, cwd=root, env={"TABLEPOLICY_CATALOG": NAME})
    assert SECRET_KEY not in run.stdout + run.stderr
    return run


@pytest.mark.parametrize("mode", ["copy-on-write", "merge-on-read"])
def test_erase_on_the_rest_catalog_leaves_no_key_in_any_object(server: SeaweedServer, mode: str,
                                                               tmp_path: Path) -> None:
    root = tmp_path
    (root / ".pyiceberg.yaml").write_text(yaml.safe_dump({"catalog": {NAME: server.catalog_properties()}}))
    name = mode.replace("-", "_")
    (root / "policies").mkdir()
    (root / "policies" / f"{name}.yaml").write_text(policy(name, mode))
    run = cli(root, "apply", "policies", "--auto-approve")
    assert run.returncode == 0, run.stdout + run.stderr
    from pyiceberg.catalog import load_catalog

    catalog = load_catalog(NAME, **server.catalog_properties())
    fill(catalog.load_table(f"privacy.{name}"))
    if mode == "merge-on-read":  # someone else's DELETE through Spark masks the subjects' rows with deletes
        from pyspark.sql import SparkSession

        spark: Any = SparkSession._instantiatedSession
        spark.sql(f"DELETE FROM {NAME}.privacy.{name} WHERE user.uid IN ({SQL_KEYS})")
    table = catalog.load_table(f"privacy.{name}")
    location = urlparse(table.location())
    assert (location.scheme, location.netloc) == ("s3", WAREHOUSE), table.location()
    prefix = location.path.strip("/") + "/"
    store = SimpleNamespace(s3=SimpleNamespace(client=server.s3))  # what the scan reads objects through
    intact = checksum(table)
    before = scan(store, prefix, WAREHOUSE)  # type: ignore[arg-type]
    assert len(before.rows_with_keys) == 9, before  # three snapshots x three day partitions
    assert bool(before.deletes) == (mode == "merge-on-read"), before

    requests, proof_file = root / "requests.yaml", root / "proof.json"
    requests.write_text(requests_yaml())
    run = cli(root, "erase", "policies", "--requests", str(requests), "--proof", str(proof_file))
    assert run.returncode == 0, run.stdout + run.stderr
    assert "erased and proven" in run.stdout, run.stdout
    proof = json.loads(proof_file.read_text())
    (result,) = proof["tables"]
    assert result["state"] == "complete" and result["files_still_stored"] == [] and result["rows_after"] == 0, result

    after = scan(store, prefix, WAREHOUSE)  # type: ignore[arg-type]
    assert after.rows_with_keys == {} and after.bounds_with_keys == {}, after
    assert after.parquet and after.manifests, after  # the check read something
    gone = {f.split("://", 1)[-1].removeprefix(f"{WAREHOUSE}/") for f in result["files_with_keys_before"]}
    assert gone >= set(before.rows_with_keys) and not gone & set(stored(store, prefix, WAREHOUSE)), gone  # type: ignore[arg-type]
    table = catalog.load_table(f"privacy.{name}")
    assert checksum(table) == intact
    assert {r["user"]["uid"] for r in table.scan().to_arrow().to_pylist()} == {*KEPT, "old0", "old1"}
    assert not any(k in json.dumps(proof) for k in KEYS)

    run = cli(root, "erase", "status", "policies", "--format", "json")
    assert run.returncode == 0, run.stdout + run.stderr
    states = {r["id"]: r["state"] for r in json.loads(run.stdout)["requests"]}
    assert states == {request: "done" for request in ERASED}, run.stdout
    # the ledger lives in the lake: the catalog holds it, no project file does, and another runner's clone (its
    # own folder, nothing restored) reads the same answer
    assert catalog.table_exists("tablepolicy.erasure_ledger")
    assert not list(root.rglob("erasure-ledger.db"))
    other = tmp_path / "other-runner"
    (other / "policies").mkdir(parents=True)
    (other / "policies" / f"{name}.yaml").write_text(policy(name, mode))
    (other / ".pyiceberg.yaml").write_text((root / ".pyiceberg.yaml").read_text())
    run = cli(other, "erase", "status", "policies", "--format", "json")
    assert {r["id"]: r["state"] for r in json.loads(run.stdout)["requests"]} == states, run.stdout + run.stderr
    run = cli(root, "erase", "policies", "--requests", str(requests), "--proof", str(proof_file))
    assert run.returncode == 0, run.stdout + run.stderr
    again = json.loads(proof_file.read_text())  # the ledger says done: both skipped
    assert again["tables"] == [] and {s["request"] for s in again["skipped"]} == set(ERASED), again
