"""REST errors with the fix, against the server (SeaweedFS, tests/seaweed.py): a wrong or missing credential names
the ``credential`` setting first (plan and doctor), an unknown warehouse names ``warehouse``, a table changed by
another client after the plan is refused as stale with nothing applied, and a stopped server ends plan with an error
naming the catalog, while Spark's writes to the store of a stopped server fail instead of retrying for minutes
(the bounded S3A and REST client settings of runtime/spark/catalog_conf.py); restarted, the loop converges.

One server for the module (stopped and started again by the last test); the CLI's Spark session stopped at its end.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cli_runner import Run, tablepolicy
from tests.seaweed import ACCESS_KEY, SECRET_KEY, SeaweedServer, seaweed_server_with_fresh_spark

pytestmark = pytest.mark.spark
NAME = "resterr"
POLICY = "table: ops.events\ncolumns:\n  - {name: id, type: long}\n  - {name: note, type: string}\n"


@pytest.fixture(scope="module")
def server() -> Iterator[SeaweedServer]:
    with seaweed_server_with_fresh_spark() as running:
        yield running


def project(root: Path, props: dict[str, str], policy: str = POLICY) -> Path:
    (root / ".pyiceberg.yaml").write_text(yaml.safe_dump({"catalog": {NAME: props}}))
    (root / "policies" / "ops").mkdir(parents=True, exist_ok=True)
    (root / "policies" / "ops" / "events.yaml").write_text(policy)
    return root


def cli(root: Path, *args: str) -> Run:
    run = tablepolicy(*args, cwd=root, env={"TABLEPOLICY_CATALOG": NAME})
    assert SECRET_KEY not in run.stdout + run.stderr and "Traceback" not in run.stderr, run.stderr
    return run


CREDENTIAL_CASES = [
    ("wrong-credential", {"credential": f"{ACCESS_KEY}:not-the-secret"}, "invalid_client"),
    ("no-credential", {"credential": None}, "NotAuthorizedException"),
]


@pytest.mark.parametrize(("change", "said"), [c[1:] for c in CREDENTIAL_CASES], ids=[c[0] for c in CREDENTIAL_CASES])
def test_a_refused_credential_names_the_credential_setting(server: SeaweedServer, tmp_path: Path,
                                                           change: dict[str, str | None], said: str) -> None:
    props = {k: v for k, v in {**server.catalog_properties(), **change}.items() if v is not None}
    root = project(tmp_path, props)
    run = cli(root, "plan", "policies")
    assert run.returncode == 1, run.stdout + run.stderr
    assert "the REST server refused the catalog's credentials" in run.stderr and said in run.stderr, run.stderr
    assert f"check 'credential' of catalog '{NAME}'" in run.stderr, run.stderr
    run = cli(root, "doctor", "policies", "--format", "json")
    checks = {c["check"]: c for c in json.loads(run.stdout)["checks"]}
    assert run.returncode == 1 and not checks["connection"]["ok"], checks
    assert checks["connection"]["fix"].startswith("fix the catalog's credential"), checks["connection"]


def test_an_unknown_warehouse_names_the_warehouse_setting(server: SeaweedServer, tmp_path: Path) -> None:
    root = project(tmp_path, {**server.catalog_properties(), "warehouse": "no-such-warehouse"})
    run = cli(root, "plan", "policies")
    assert run.returncode == 1, run.stdout + run.stderr  # was: a plan creating the namespace, which apply fails
    assert "table bucket no-such-warehouse not found" in run.stderr, run.stderr
    assert f"set 'warehouse' of catalog '{NAME}'" in run.stderr and "a warehouse the REST server serves" in run.stderr


def test_a_table_changed_by_another_client_after_the_plan_is_refused(server: SeaweedServer, tmp_path: Path) -> None:
    root = project(tmp_path, server.catalog_properties())
    run = cli(root, "apply", "policies", "--auto-approve")
    assert run.returncode == 0, run.stdout + run.stderr
    (root / "policies" / "ops" / "events.yaml").write_text(POLICY + "properties: {commit.retry.num-retries: '6'}\n")
    run = cli(root, "plan", "policies", "--out", "plan.json")
    assert run.returncode == 0, run.stdout + run.stderr
    from pyiceberg.catalog import load_catalog
    from pyiceberg.types import StringType

    table = load_catalog(NAME, **server.catalog_properties()).load_table("ops.events")
    with table.update_schema() as update:  # another client's commit between plan and apply
        update.add_column("added_elsewhere", StringType())
    run = cli(root, "apply", "plan.json", "--auto-approve")
    assert run.returncode == 1, run.stdout + run.stderr
    assert "stale" in (run.stdout + run.stderr).lower(), run.stdout + run.stderr
    table = load_catalog(NAME, **server.catalog_properties()).load_table("ops.events")
    assert "commit.retry.num-retries" not in table.properties  # nothing applied


def test_a_stopped_server_ends_the_run_with_an_error_and_a_restart_converges(server: SeaweedServer,
                                                                             tmp_path: Path) -> None:
    root = project(tmp_path, server.catalog_properties(), POLICY.replace("ops.events", "ops.stopped"))
    run = cli(root, "apply", "policies", "--auto-approve")
    assert run.returncode == 0, run.stdout + run.stderr
    from pyspark.sql import SparkSession

    spark: Any = SparkSession._instantiatedSession
    assert spark is not None
    spark.sql(f"INSERT INTO {NAME}.ops.stopped VALUES (1, 'before')")
    server.stop()
    try:
        run = cli(root, "plan", "policies")
        assert run.returncode == 1, run.stdout + run.stderr
        assert f"catalog '{NAME}' (rest, {server.uri})" in run.stderr and "cannot be reached" in run.stderr, \
            run.stderr
        started = time.monotonic()
        with pytest.raises(Exception) as failed:  # Spark's write to the stopped store: an error, not a hang
            spark.sql(f"INSERT INTO {NAME}.ops.stopped VALUES (2, 'while stopped')")
        print(f"Spark's INSERT against the stopped server failed after {time.monotonic() - started:.1f} s")
        assert "Connection refused" in str(failed.value) or "connect" in str(failed.value).lower(), failed.value
    finally:
        server.start()
    spark._jsparkSession.sessionState().catalogManager().reset()
    assert [r.id for r in spark.sql(f"SELECT id FROM {NAME}.ops.stopped").collect()] == [1]  # nothing half-written
    run = cli(root, "plan", "policies", "--detailed-exitcode")
    assert run.returncode == 0, run.stdout + run.stderr
