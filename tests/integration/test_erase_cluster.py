"""erase on a Spark standalone cluster (a master and one worker on 127.0.0.1), through the public API in this
process: a table whose files holding a key are larger than arrow_rewrite.CLUSTER_BYTES is rewritten by the
cluster's executors, not by this process alone, and the proof read from storage afterwards still holds; a table
whose files are not larger is rewritten by pyarrow in the same run. The threshold is lowered to the small
table's bytes (512 MiB of test data would take minutes to write on two shared cores)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from pyiceberg.table import Table

import tablepolicy
from tablepolicy.compiler.desired import desired_states
from tablepolicy.compiler.validate import validate
from tablepolicy.runtime.erasure import arrow_rewrite
from tablepolicy.runtime.erasure.spark_steps import BY_PYARROW, BY_SPARK
from tests.catalog_fixtures import create_like, embedded_catalog
from tests.integration.erasure_data import ERASED, batch, checksum, fill, keys_in_storage, policy, requests_yaml
from tests.integration.spark_reset import stop_spark

pytestmark = pytest.mark.spark
KEYS = set(ERASED.values())
BULK = [f"bulk{i}" for i in range(300)]  # kept users beside the erased ones: the large table's files are larger


def project(root: Path) -> tuple[Path, dict[str, Table]]:
    """privacy.large and privacy.small filled alike (erasure_data.fill); privacy.large also gets one append of
    every day partition holding the erased users among many others."""
    policies = root / "policies"
    policies.mkdir()
    for name in ("large", "small"):
        (policies / f"{name}.yaml").write_text(policy(name, "copy-on-write"))
    catalog = embedded_catalog(policies)
    for state in desired_states(validate(policies)[0]):
        create_like(catalog, state)
    tables = {name: catalog.load_table(("privacy", name)) for name in ("large", "small")}
    for table in tables.values():
        fill(table)
    tables["large"].append(batch(100_000, [*ERASED.values(), *BULK]))
    return policies, {name: table.refresh() for name, table in tables.items()}


def stored_bytes(files: dict[str, int]) -> int:
    return sum(os.path.getsize(f) for f in files)


def executor_tasks(spark: Any) -> dict[str, int]:
    """The tasks each executor of the session completed, as Spark's status store counts them ("driver": the
    driver's own)."""
    summaries = spark.sparkContext._jsc.sc().statusStore().executorList(False)
    return {summaries.apply(i).id(): summaries.apply(i).completedTasks() for i in range(summaries.size())}


def test_a_rewrite_above_the_threshold_runs_on_the_clusters_executors(
    tmp_path: Path, spark_cluster: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pyspark.sql import SparkSession

    policies, tables = project(tmp_path)
    holding = {name: keys_in_storage(t.location(), KEYS) for name, t in tables.items()}
    assert len(holding["large"]) == len(holding["small"]) + 3
    threshold = stored_bytes(holding["small"])  # not above it: pyarrow; above it: the cluster
    assert stored_bytes(holding["large"]) > threshold
    monkeypatch.setattr(arrow_rewrite, "CLUSTER_BYTES", threshold)
    kept = {name: checksum(t) for name, t in tables.items()}
    requests = tmp_path / "requests.yaml"
    requests.write_text(requests_yaml())

    try:
        outcome = tablepolicy.erase(policies, requests=requests, spark_master=spark_cluster,
                                    proof=tmp_path / "proof.json")
        spark = SparkSession._instantiatedSession
        assert spark is not None, "erase started no Spark session"
        master, tasks = spark.sparkContext.master, executor_tasks(spark)
    finally:
        stop_spark()  # the next module's session must not be handed this one, bound to a stopped cluster

    assert outcome.complete
    assert {s.request: s.state.value for s in outcome.certificate} == {"REQ-1": "done", "REQ-2": "done"}
    proofs = {erased.proof.table[-1]: erased.document for erased in outcome.tables}
    for name, table in tables.items():
        document = proofs[name]
        assert document["state"] == "complete" and document["files_still_stored"] == []
        assert keys_in_storage(table.location(), KEYS) == {}  # no file under the location holds a key
        assert checksum(table.refresh()) == kept[name]  # every other row is there
    large, small = proofs["large"]["statements"][0], proofs["small"]["statements"][0]
    assert large.startswith(BY_SPARK) and "the cluster's executors share the work" in large.splitlines()[0]
    assert small.startswith(BY_PYARROW)
    assert (tmp_path / "proof.json").read_text().count("the cluster's executors share the work") == 1
    # the rewrite ran as tasks on the worker's executor: a standalone driver runs none itself
    assert master == spark_cluster
    assert tasks.pop("driver") == 0
    assert tasks and all(count > 0 for count in tasks.values()), tasks
