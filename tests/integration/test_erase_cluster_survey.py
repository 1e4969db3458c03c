"""erase's survey and proof on a Spark standalone cluster (a master and one worker on 127.0.0.1): a table listing
more bytes than lifecycle.erasure.cluster_above has its files read by the executors, and the outcome is the one of
the same erase on the same data read in this process (below the default threshold), through the public API.

In the cluster run this process may open no parquet file (pyarrow.parquet.ParquetFile raises here; the executors
are other processes, which import their own pyarrow): the survey, the proof and, with arrow_rewrite.CLUSTER_BYTES
lowered, the rewrite run on the executors. The run below the threshold starts no Spark session at all."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

import tablepolicy
from tablepolicy.compiler.desired import desired_states
from tablepolicy.compiler.validate import validate
from tablepolicy.runtime.erasure import arrow_rewrite
from tests.catalog_fixtures import create_like, embedded_catalog
from tests.integration.erasure_data import ERASED, checksum, events_table, fill, keys_in_storage, policy, requests_yaml
from tests.integration.spark_reset import stop_spark
from tests.integration.test_erase_cluster import executor_tasks

pytestmark = pytest.mark.spark
KEYS = set(ERASED.values())


def project(root: Path, erasure: str = "") -> tuple[Path, str]:
    """privacy.events (nested key user.uid, erasure_data.fill) with an unreferenced copy of a file holding keys
    under its location, the requests of ERASED; (policies, checksum of the rows to keep)."""
    policies = root / "policies"
    policies.mkdir(parents=True)
    (policies / "events.yaml").write_text(policy("events", "copy-on-write", holds=erasure))
    catalog = embedded_catalog(policies)
    for state in desired_states(validate(policies)[0]):
        create_like(catalog, state)
    fill(catalog.load_table(("privacy", "events")))
    holding = sorted(keys_in_storage(events_table(policies).location(), KEYS))[0]
    Path(holding).with_name("orphan-copy.parquet").write_bytes(Path(holding).read_bytes())
    (root / "requests.yaml").write_text(requests_yaml())
    return policies, checksum(events_table(policies))


def erase(root: Path, master: str) -> dict[str, Any]:
    outcome = tablepolicy.erase(root / "policies", requests=root / "requests.yaml", spark_master=master,
                                proof=root / "proof.json")
    assert outcome.complete, (root / "proof.json").read_text()
    (table,) = json.loads((root / "proof.json").read_text())["tables"]
    return dict(table)


def opened_here(source: Any) -> None:
    raise AssertionError(f"this process opened a parquet file ({source}): the executors were to read it")


def test_the_survey_and_proof_on_the_executors_find_what_this_process_finds(
    tmp_path: Path, spark_cluster: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pyspark.sql import SparkSession

    stop_spark()  # an earlier module's local session must not be handed to this run
    monkeypatch.setenv("PYSPARK_PYTHON", sys.executable)  # the executors' Python: the worker's python3 has no pyarrow
    single, kept_single = project(tmp_path / "single")
    spread, kept_spread = project(tmp_path / "spread", ", cluster_above: 1B")
    assert kept_single == kept_spread

    here = erase(tmp_path / "single", spark_cluster)
    assert SparkSession._instantiatedSession is None, "the run below the threshold started Spark"
    monkeypatch.setattr(arrow_rewrite, "CLUSTER_BYTES", 0)  # the rewrite on the executors too
    try:
        with monkeypatch.context() as patched:
            patched.setattr(pq, "ParquetFile", opened_here)
            there = erase(tmp_path / "spread", spark_cluster)
        spark = SparkSession._instantiatedSession
        assert spark is not None, "the cluster run started no Spark session"
        master, tasks = spark.sparkContext.master, executor_tasks(spark)
    finally:
        stop_spark()

    for name, policies, kept in (("single", single, kept_single), ("spread", spread, kept_spread)):
        table = events_table(policies)
        assert keys_in_storage(table.location(), KEYS) == {}, name  # the independent check: no file holds a key
        assert checksum(table.refresh()) == kept, name  # every other row is there
    shape = ("state", "rows_before", "rows_after", "files_still_stored", "files_still_referenced", "unreadable")
    assert {k: there[k] for k in shape} == {k: here[k] for k in shape}
    assert here["state"] == "complete" and here["rows_before"] > 0
    orphans = [sorted(Path(p).name for p in run["orphans_deleted"]) for run in (here, there)]
    assert orphans == [["orphan-copy.parquet"]] * 2  # an unreferenced file holding keys, found by both
    assert len(there["files_with_keys_before"]) == len(here["files_with_keys_before"])
    assert {r: here["reads"][r]["where"] for r in ("survey", "proof")} == {"survey": "this process",
                                                                           "proof": "this process"}
    assert "not above the threshold 10.0 GiB" in here["reads"]["proof"]["why"]
    assert {r: there["reads"][r]["where"] for r in ("survey", "proof")} == {"survey": "cluster", "proof": "cluster"}
    assert "above the threshold 1 bytes" in there["reads"]["proof"]["why"]
    # the reads ran as tasks on the worker's executor: a standalone driver runs none itself
    assert master == spark_cluster
    assert tasks.pop("driver") == 0
    assert tasks and all(count > 0 for count in tasks.values()), tasks
