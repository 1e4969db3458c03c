"""The core loop on object storage: a real S3 server (moto on 127.0.0.1) holds the warehouse, the catalog is the
embedded SQLite one or PostgreSQL, and the CLI applies a policy and its evolution through Spark (S3A), a
writer adds rows, plan shows nothing left to do, health reads the files from S3 and maintain compacts,
expires snapshots and removes an orphan there; the bucket is listed to see the objects really come and go.
``s3a://`` as the warehouse spelling is one case. The secret key is in no output and no file the run writes.

One moto server, one PostgreSQL server and one Spark session (the CLI's, started by the first apply, reused
by every later command in this process) for the module; all stopped at its end.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pyarrow as pa
import pytest
import yaml

from tests.cli_runner import Run, tablepolicy
from tests.integration.spark_reset import stop_spark
from tests.pgserver import postgres_server
from tests.s3server import SECRET_KEY, S3Server, s3_server

pytestmark = pytest.mark.spark
BUCKET = "lake"
POLICY = """table: s3demo.events
owner: data
columns:
  - {{name: id, type: long, required: true}}
  - {{name: ts, type: timestamptz}}
{columns}partition_by: [day(ts)]
lifecycle:
  snapshots: {{max_age: 1d, min_keep: 1}}
  compaction: {{min_input_files: 3, target_file_size: 128MB}}
  orphan_files: {{older_than: 3d}}
"""
FIRST = "  - {name: qty, type: int}\n  - {name: note, type: string}\n"
# the evolution: a column added, int widened to long, note renamed
EVOLVED = ("  - {name: qty, type: long}\n  - {name: comment, type: string, renamed_from: note}\n"
           "  - {name: source, type: string}\n")


@dataclass(frozen=True)
class Store:
    s3: S3Server
    postgres: str  # SQLAlchemy URL of the module's PostgreSQL server
    outputs: list[str]  # everything every command printed, checked for the secret at the end


# S3 objects cannot be back-dated as files can (os.utime): the moto server's clock runs ten days behind, so the
# orphan put there is past maintain's 3-day guard by the real clock, which Spark's remove_orphan_files checks
# too (it refuses a guard less than a day in the past)
MOTO_CLOCK = """import datetime
import moto.core.utils as utils
_now = utils.utcnow
utils.utcnow = lambda: _now() - datetime.timedelta(days=10)
"""


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    clock = tmp_path_factory.mktemp("moto-clock")
    (clock / "sitecustomize.py").write_text(MOTO_CLOCK)
    with contextlib.ExitStack() as stack:
        stop_spark()  # a session left by another module would keep its Hadoop settings: start ours afresh
        with pytest.MonkeyPatch.context() as env:  # the environment moto_server starts with
            env.setenv("PYTHONPATH", str(clock))
            s3 = stack.enter_context(s3_server())
        s3.bucket(BUCKET)
        postgres = stack.enter_context(postgres_server())
        stack.callback(stop_spark)  # the CLI's session, started in this process by the first apply
        yield Store(s3, postgres, [])


def catalog_properties(store: Store, kind: str, root: Path) -> dict[str, str]:
    warehouse = {"sqlite": f"s3://{BUCKET}/wh-sqlite", "postgresql": f"s3://{BUCKET}/wh-postgresql",
                 "sqlite-s3a": f"s3a://{BUCKET}/wh-s3a"}[kind]
    uri = store.postgres if kind == "postgresql" else f"sqlite:///{root / 'catalog.db'}"
    return {"type": "sql", "uri": uri, "warehouse": warehouse, **store.s3.pyiceberg_properties()}


# a catalog name each: the CLI's runs share this process's session, whose catalog plugins stay loaded by name
NAMES = {"sqlite": "s3lite", "postgresql": "s3pg", "sqlite-s3a": "s3alite"}


def cli(store: Store, root: Path, *args: str) -> Run:
    name = yaml.safe_load((root / ".pyiceberg.yaml").read_text())["catalog"].popitem()[0]
    run = tablepolicy(*args, "--catalog", name, cwd=root)
    store.outputs.extend([run.stdout, run.stderr])
    return run


def objects(store: Store, prefix: str) -> dict[str, datetime]:
    client: Any = store.s3.client()
    found: dict[str, datetime] = {}
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix):
        found |= {o["Key"]: o["LastModified"] for o in page.get("Contents", [])}
    return found


def spark_session() -> Any:
    from pyspark.sql import SparkSession

    spark = SparkSession._instantiatedSession
    assert spark is not None, "the CLI's apply started no session in this process"
    spark._jsparkSession.sessionState().catalogManager().reset()  # see commits made outside this JVM
    return spark


class Later(datetime):
    """The clock ten days on: every snapshot but the current one is past its 1-day max age."""

    @classmethod
    def now(cls, tz: Any = None) -> Any:
        return datetime.now(tz) + timedelta(days=10)


def steps(run: Run) -> list[tuple[str, str]]:
    report = json.loads(run.stdout)
    # the storage listed before and after by pyiceberg (through the catalog's S3 settings, no JVM)
    assert all(t["stored_bytes"] is not None for t in report["tables"]), run.stdout
    return [(s["action"], s["status"]) for t in report["tables"] for s in t["steps"]]


@pytest.mark.parametrize("kind", ["sqlite", "postgresql", "sqlite-s3a"])
def test_core_loop_on_s3(store: Store, kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path
    props = catalog_properties(store, kind, root)
    name = NAMES[kind]
    (root / ".pyiceberg.yaml").write_text(yaml.safe_dump({"catalog": {name: props}}))
    policy = root / "policies" / "s3demo" / "events.yaml"
    policy.parent.mkdir(parents=True)
    prefix = props["warehouse"].split(f"{BUCKET}/", 1)[1] + "/"

    # create, then evolve
    policy.write_text(POLICY.format(columns=FIRST))
    run = cli(store, root, "apply", "policies", "--auto-approve")
    assert run.returncode == 0, run.stdout + run.stderr
    created = objects(store, prefix)
    assert any(k.endswith(".metadata.json") for k in created), created
    policy.write_text(POLICY.format(columns=EVOLVED))
    run = cli(store, root, "apply", "policies", "--auto-approve")
    assert run.returncode == 0, run.stdout + run.stderr

    # rows from two writers: Spark (three small commits into one day) and pyiceberg
    spark = spark_session()
    day = (datetime.now(UTC) - timedelta(days=1)).replace(hour=12, minute=0, second=0, microsecond=0)
    for i in range(3):
        spark.sql(f"INSERT INTO {name}.s3demo.events VALUES ({i}, TIMESTAMP '{day.isoformat(' ')}', {i * 10}, "
                  f"'spark {i}', 'spark')")
    from pyiceberg.catalog import load_catalog

    table = load_catalog(name, **props).load_table("s3demo.events")
    table.append(pa.Table.from_pylist([{"id": 3, "ts": day, "qty": 30, "comment": "pyiceberg", "source": "py"}],
                                      schema=table.schema().as_arrow()))
    written = objects(store, prefix)
    data = {k for k in written if "/data/" in k and k.endswith(".parquet")}
    assert len(data) == 4, sorted(written)
    rows = spark_session().sql(f"SELECT id FROM {name}.s3demo.events ORDER BY id").collect()
    assert [r.id for r in rows] == [0, 1, 2, 3]

    # nothing left to do
    run = cli(store, root, "plan", "policies", "--detailed-exitcode")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "no changes" in run.stdout.lower(), run.stdout

    # health, read from S3
    run = cli(store, root, "health", "policies")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "s3demo.events" in run.stdout
    run = cli(store, root, "health", "policies", "--format", "json")
    assert run.returncode == 0, run.stderr
    [health] = json.loads(run.stdout)["tables"]
    assert health["table"] == ["s3demo", "events"] and health["health"]["data_files"] == 4, health
    assert health["health"]["orphans"] is not None, health  # the location listed on S3 by pyiceberg

    # compaction and expiry (ten days on), then an orphan in the table's data folder and maintain again
    with monkeypatch.context() as clock:
        clock.setattr("tablepolicy.runtime.invocation.datetime", Later)  # the run's instant (runtime/invocation.py)
        run = cli(store, root, "maintain", "policies", "--only", "compaction", "--only", "snapshots", "--format",
                  "json")
    assert run.returncode == 0, run.stdout + run.stderr
    assert steps(run) == [("rewrite_data_files", "done"), ("expire_snapshots", "done")]
    location = urlparse(table.location())
    assert location.scheme == props["warehouse"].split(":")[0] and location.netloc == BUCKET, table.location()
    orphan = f"{location.path.strip('/')}/data/stray-orphan.parquet"
    store.s3.client().put_object(Bucket=BUCKET, Key=orphan, Body=b"\0" * 64)  # type: ignore[attr-defined]
    assert objects(store, prefix)[orphan] < datetime.now(UTC) - timedelta(days=3)
    run = cli(store, root, "maintain", "policies", "--format", "json")
    assert run.returncode == 0, run.stdout + run.stderr
    assert steps(run) == [("remove_orphan_files", "done")], run.stdout
    [orphan_step] = json.loads(run.stdout)["tables"][0]["steps"]
    assert orphan_step["effect"]["files_removed"] == 1, orphan_step
    assert not orphan_step["reason"].startswith("declared"), orphan_step  # found by listing S3, not assumed
    after = objects(store, prefix)
    assert orphan not in after, run.stdout
    live = {k for k in after if "/data/" in k and k.endswith(".parquet")}
    assert len(live) == 1 and not live & data, (sorted(data), sorted(live))  # compacted, the inputs expired
    assert sorted((r.id, r.qty, r.comment) for r in spark_session().sql(
        f"SELECT id, qty, comment FROM {name}.s3demo.events").collect()) == [
        (0, 0, "spark 0"), (1, 10, "spark 1"), (2, 20, "spark 2"), (3, 30, "pyiceberg")]

    # the secret key: in no output, and in no file the runs wrote but the definition itself
    for output in store.outputs:
        assert SECRET_KEY not in output
    for path in root.rglob("*"):
        if path.is_file() and path.name != ".pyiceberg.yaml":
            assert SECRET_KEY.encode() not in path.read_bytes(), path


RETAINED = """table: s3maint.events
owner: data
columns:
  - {name: id, type: long, required: true}
  - {name: ts, type: timestamptz}
  - {name: payload, type: string}
partition_by: [day(ts)]
lifecycle:
  retention: {column: ts, keep: 30d}
  manifests: {min_manifests: 3}
"""
MAINT_NAMES = {"sqlite": "s3mlite", "postgresql": "s3mpg"}


def manifest_keys(keys: Iterable[str]) -> set[str]:
    """Manifest objects (``<uuid>-m<n>.avro``), not manifest lists (``snap-*.avro``)."""
    return {k for k in keys
            if "/metadata/" in k and k.endswith(".avro") and not k.rsplit("/", 1)[1].startswith("snap-")}


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_maintain_retention_and_manifest_rewrite_on_s3(store: Store, kind: str, tmp_path: Path) -> None:
    """Rows past the retention cutoff deleted, as many as health and the dry run said; the table's six
    manifests (one per commit) merged; every row inside the cutoff still there, unchanged."""
    root = tmp_path
    props = catalog_properties(store, kind, root)
    props["warehouse"] += "-maint"
    name = MAINT_NAMES[kind]
    (root / ".pyiceberg.yaml").write_text(yaml.safe_dump({"catalog": {name: props}}))
    policy = root / "policies" / "s3maint" / "events.yaml"
    policy.parent.mkdir(parents=True)
    policy.write_text(RETAINED)
    prefix = props["warehouse"].split(f"{BUCKET}/", 1)[1] + "/"
    run = cli(store, root, "apply", "policies", "--auto-approve")
    assert run.returncode == 0, run.stdout + run.stderr

    # six commits of two rows: ids 1xx sixty days before yesterday's noon, 2xx within yesterday (one fixed
    # instant whatever the hour, as test_maintain.py), so 30d retention takes exactly the six 1xx rows
    noon = datetime.now(UTC).replace(hour=12, minute=0, second=0, microsecond=0) - timedelta(days=1)
    spark = spark_session()
    for i in range(6):
        old, recent = noon - timedelta(days=60, hours=i), noon - timedelta(hours=i)
        spark.sql(f"INSERT INTO {name}.s3maint.events VALUES ({100 + i}, TIMESTAMP '{old.isoformat(' ')}', 'old'), "
                  f"({200 + i}, TIMESTAMP '{recent.isoformat(' ')}', 'recent')")
    recent_rows = sorted(tuple(r) for r in spark.sql(
        f"SELECT id, ts, payload FROM {name}.s3maint.events WHERE payload = 'recent'").collect())
    assert len(recent_rows) == 6
    before = objects(store, prefix)
    data_before = {k for k in before if "/data/" in k and k.endswith(".parquet")}
    assert len(data_before) == 12 and len(manifest_keys(before)) == 6, sorted(before)

    # health says what is due and how much, the dry run counts the same
    run = cli(store, root, "health", "policies", "--format", "json")
    assert run.returncode == 0, run.stderr
    [health] = json.loads(run.stdout)["tables"]
    assert health["health"]["rows"] == 12 and health["health"]["manifests"] == 6, health
    assert health["health"]["expired"]["rows"] == 6, health
    assert [a["action"] for a in health["actions"]] == ["delete_expired_rows", "rewrite_manifests"], health
    run = cli(store, root, "maintain", "policies", "--dry-run", "--format", "json")
    assert run.returncode == 0, run.stdout + run.stderr
    [dry] = json.loads(run.stdout)["tables"]
    assert dry["rows_deleted"] == 6, dry

    run = cli(store, root, "maintain", "policies", "--format", "json")
    assert run.returncode == 0, run.stdout + run.stderr
    assert steps(run) == [("delete_expired_rows", "done"), ("rewrite_manifests", "done")], run.stdout
    [done] = json.loads(run.stdout)["tables"]
    assert done["rows_deleted"] == dry["rows_deleted"] == 6, done
    assert done["steps"][0]["effect"] == {"rows_deleted": 6}, done

    # read back: the old rows gone, the recent ones as they were; fewer live manifests, each an object in the
    # bucket; the deleted rows' files stay until a snapshot expiry (none declared) and nothing was lost
    spark = spark_session()
    assert sorted(tuple(r) for r in spark.sql(f"SELECT id, ts, payload FROM {name}.s3maint.events").collect()
                  ) == recent_rows
    from pyiceberg.catalog import load_catalog

    table = load_catalog(name, **props).load_table("s3maint.events")
    snapshot = table.current_snapshot()
    assert snapshot is not None
    live = [m.manifest_path for m in snapshot.manifests(table.io)]
    assert 0 < len(live) < 6, live
    after = objects(store, prefix)
    assert {urlparse(p).path.lstrip("/") for p in live} <= manifest_keys(after), (live, sorted(after))
    assert manifest_keys(after) - manifest_keys(before), "rewrite_manifests wrote no manifest"
    assert data_before <= set(after)
    run = cli(store, root, "health", "policies", "--format", "json")
    [health] = json.loads(run.stdout)["tables"]
    assert health["health"]["rows"] == 6 and health["health"]["manifests"] == len(live), health
    assert health["actions"] == [], health  # nothing left due


BROKEN = """table: s3broken.events
owner: data
columns:
  - {name: id, type: long}
  - {name: ts, type: timestamptz}
lifecycle:
  compaction: {min_input_files: 3, target_file_size: 128MB}
"""


def test_a_spark_failure_naming_the_secret_is_masked_everywhere(store: Store, tmp_path: Path) -> None:
    """Spark fails with the secret key in its message (compaction reads data files whose names hold it, gone
    from the bucket): the step's error reaches the output, the JSON report and nothing else with it masked."""
    import pyarrow.parquet as pq

    root = tmp_path
    props = catalog_properties(store, "sqlite", root)
    props["warehouse"] += "-broken"
    name = "s3broken"
    (root / ".pyiceberg.yaml").write_text(yaml.safe_dump({"catalog": {name: props}}))
    policy = root / "policies" / "s3broken" / "events.yaml"
    policy.parent.mkdir(parents=True)
    policy.write_text(BROKEN)
    run = cli(store, root, "apply", "policies", "--auto-approve")
    assert run.returncode == 0, run.stdout + run.stderr

    from pyiceberg.catalog import load_catalog

    table = load_catalog(name, **props).load_table("s3broken.events")
    location = urlparse(table.location())
    client: Any = store.s3.client()
    paths = []
    for i in range(3):  # three small files someone added by path, their names holding the secret
        key = f"{location.path.strip('/')}/data/{SECRET_KEY}-{i}.parquet"
        buffer = pa.BufferOutputStream()
        pq.write_table(pa.table({"id": pa.array([i], pa.int64()),
                                 "ts": pa.array([datetime(2026, 11, 22, 12, tzinfo=UTC)], pa.timestamp("us", "UTC"))}),
                       buffer)
        client.put_object(Bucket=BUCKET, Key=key, Body=buffer.getvalue().to_pybytes())
        paths.append(f"{location.scheme}://{BUCKET}/{key}")
    table.add_files(paths)
    for path in paths:  # then deleted from the bucket by hand: Spark's read of them fails, naming them
        client.delete_object(Bucket=BUCKET, Key=path.split(f"{BUCKET}/", 1)[1])

    report = root / "maintain.json"
    for output in ("text", "json"):
        run = cli(store, root, "maintain", "policies", "--format", output, "--json-report", str(report))
        assert run.returncode == 1, run.stdout + run.stderr
        shown = run.stdout + run.stderr
        assert "rewrite_data_files" in shown or "compact" in shown, shown
        assert SECRET_KEY not in shown, shown
        assert "***" in shown, shown  # the path was there, masked
        written = json.loads(report.read_text())
        [step] = written["tables"][0]["steps"]
        assert step["action"] == "rewrite_data_files" and step["status"] == "failed", step
        assert "***" in step["error"] and SECRET_KEY not in report.read_text(), step
    for path in root.rglob("*"):  # no journal, cache or report of the run holds it
        if path.is_file() and path.name != ".pyiceberg.yaml":
            assert SECRET_KEY.encode() not in path.read_bytes(), path
