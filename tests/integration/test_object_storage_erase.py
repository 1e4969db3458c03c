"""erase, drift, import and health --html on object storage: a real S3 server (moto on 127.0.0.1) holds the
warehouse, the catalog is the embedded SQLite one or PostgreSQL. Tables are made as on local disk
(tests/integration/erasure_data.py: pyiceberg appends, then for merge-on-read someone else's DELETE through
Spark's S3A, which writes position delete files), erased through the CLI with its proof, and checked apart from
the engine: every object under the table's prefix listed with boto3, every parquet file read by pyarrow from the
bytes boto3 returns and every avro manifest's column bounds decoded. The secret key is in no output and no file
the runs write.

One moto server, one PostgreSQL server and one Spark session (the CLI's, started by the first apply, reused by
every later command in this process) for the module; all stopped at its end.
"""

from __future__ import annotations

import contextlib
import json
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from pyiceberg.catalog import load_catalog
from pyiceberg.table import Table

from tablepolicy.runtime.erasure.spark_steps import BY_SPARK
from tests.cli_runner import Run, tablepolicy
from tests.integration.erasure_data import ERASED, KEPT, batch, checksum, fill, policy, requests_yaml
from tests.integration.manifest_scan import manifest_bounds
from tests.integration.spark_reset import stop_spark
from tests.pgserver import postgres_server
from tests.s3server import SECRET_KEY, S3Server, s3_server

pytestmark = pytest.mark.spark
BUCKET = "lake-erase"  # a bucket of its own: Hadoop caches file systems by bucket
KEYS = set(ERASED.values())
SQL_KEYS = "'u\\'1', 'u,2\\n'"  # the same keys as Spark SQL literals, for the DELETE someone else runs


@dataclass(frozen=True)
class Store:
    s3: S3Server
    postgres: str  # SQLAlchemy URL of the module's PostgreSQL server
    outputs: list[str]  # everything every command printed, checked for the secret at the end


@pytest.fixture(scope="module")
def store() -> Iterator[Store]:
    with contextlib.ExitStack() as stack:
        stop_spark()  # a session left by another module would keep its Hadoop settings: start ours afresh
        s3 = stack.enter_context(s3_server())
        s3.bucket(BUCKET)
        postgres = stack.enter_context(postgres_server())
        stack.callback(stop_spark)  # the CLI's session, started in this process by the first apply
        yield Store(s3, postgres, [])


@dataclass(frozen=True)
class Project:
    store: Store
    root: Path
    name: str  # the catalog's name: one per test, as the shared session keeps catalog plugins by name
    properties: dict[str, str]

    def cli(self, *args: str) -> Run:
        run = tablepolicy(*args, "--catalog", self.name, cwd=self.root)
        self.store.outputs.extend([run.stdout, run.stderr])
        return run

    def table(self, name: str) -> Table:
        return load_catalog(self.name, **self.properties).load_table(name)


def project(store: Store, kind: str, name: str, root: Path) -> Project:
    uri = store.postgres if kind == "postgresql" else f"sqlite:///{root / 'catalog.db'}"
    scheme = "s3a" if kind.endswith("-s3a") else "s3"  # s3a://: the spelling Hadoop users give the warehouse
    props = {"type": "sql", "uri": uri, "warehouse": f"{scheme}://{BUCKET}/wh-{name}",
             **store.s3.pyiceberg_properties()}
    (root / ".pyiceberg.yaml").write_text(yaml.safe_dump({"catalog": {name: props}}))
    (root / "policies").mkdir()
    return Project(store, root, name, props)


def spark_session() -> Any:
    from pyspark.sql import SparkSession

    spark = SparkSession._instantiatedSession
    assert spark is not None, "the CLI's apply started no session in this process"
    spark._jsparkSession.sessionState().catalogManager().reset()  # see commits made outside this JVM
    return spark


def prefix_of(table: Table) -> str:
    location = urlparse(table.location())
    assert location.scheme in ("s3", "s3a") and location.netloc == BUCKET, table.location()
    return location.path.strip("/") + "/"


def key_of(path: str) -> str:
    """The object key of a path the proof names (``bucket/key``, as Iceberg's orphan logic normalizes it)."""
    return path.split("://", 1)[-1].removeprefix(f"{BUCKET}/")


def stored(store: Store, prefix: str, bucket: str = BUCKET) -> dict[str, bytes]:
    """Every object under ``prefix``, read with boto3: key -> bytes (``store``: anything with ``s3.client()``, the
    REST server's store among them: tests/integration/test_rest_erase.py)."""
    client: Any = store.s3.client()
    keys = [o["Key"] for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
            for o in page.get("Contents", [])]
    return {key: client.get_object(Bucket=bucket, Key=key)["Body"].read() for key in keys}


@dataclass(frozen=True)
class Scan:
    parquet: int  # parquet objects read
    deletes: int  # of which position delete files (no key column)
    manifests: int  # avro objects that are manifests
    rows_with_keys: dict[str, int]  # parquet object -> rows holding an erased key
    bounds_with_keys: dict[str, list[str]]  # manifest object -> the erased keys its bounds hold


def scan(store: Store, prefix: str, bucket: str = BUCKET) -> Scan:
    """The independent check: every parquet object read by plain pyarrow from boto3's bytes, by column name;
    every avro object's column bounds decoded by the schema in its own header (tests/integration/manifest_scan)."""
    rows: dict[str, int] = {}
    bounds: dict[str, list[str]] = {}
    parquet = deletes = manifests = 0
    with tempfile.TemporaryDirectory() as folder:
        for key, body in stored(store, prefix, bucket).items():
            if key.endswith(".parquet"):
                parquet += 1
                data = pq.read_table(pa.BufferReader(body)).flatten()
                if "user.uid" not in data.column_names:  # a position delete file: paths and positions only
                    deletes += 1
                elif hits := sum(1 for uid in data.column("user.uid").to_pylist() if uid in KEYS):
                    rows[key] = hits
            elif key.endswith(".avro"):
                local = Path(folder, key.replace("/", "_"))
                local.write_bytes(body)
                found = manifest_bounds(local)
                manifests += bool(found)
                if held := sorted({v for values in found.values() for v in values if v in KEYS}):
                    bounds[key] = held
            elif key.endswith(".json"):
                assert not any(k.encode() in body for k in KEYS), key  # metadata holds no key value either
    return Scan(parquet, deletes, manifests, rows, bounds)


def make(p: Project, mode: str) -> Table:
    """A table as test_erase_engine builds it, on S3: applied through the CLI (Spark), filled by pyiceberg; on
    merge-on-read someone else's DELETE through Spark first masks the subjects' rows with position deletes."""
    name = mode.replace("-", "_")
    (p.root / "policies" / f"{name}.yaml").write_text(policy(name, mode))
    run = p.cli("apply", "policies", "--auto-approve")
    assert run.returncode == 0, run.stdout + run.stderr
    fill(p.table(f"privacy.{name}"))
    if mode == "merge-on-read":
        spark_session().sql(f"DELETE FROM {p.name}.privacy.{name} WHERE user.uid IN ({SQL_KEYS})")
    return p.table(f"privacy.{name}")


def spark_fill(p: Project, name: str) -> None:
    """The rows fill() appends, written by Spark through S3A: its manifests carry every column's bounds, the
    key's too (as test_erase_engine.spark_fill)."""
    spark = spark_session()
    schema = "event_id long, user struct<uid: string, name: string>, ts timestamp"
    for first, users in [(1000, ["old0"]), (2000, ["old1"]),
                         *[(10_000 * (i + 1), [*ERASED.values(), *KEPT]) for i in range(3)]]:
        spark.createDataFrame(batch(first, users).to_pylist(), schema).writeTo(f"{p.name}.privacy.{name}").append()


def erase(p: Project) -> tuple[Run, dict[str, Any]]:
    requests, proof = p.root / "requests.yaml", p.root / "proof.json"
    requests.write_text(requests_yaml())
    proof.unlink(missing_ok=True)
    run = p.cli("erase", "policies", "--requests", str(requests), "--proof", str(proof))
    return run, json.loads(proof.read_text()) if proof.exists() else {}


def no_secret_anywhere(p: Project) -> None:
    for output in p.store.outputs:
        assert SECRET_KEY not in output
    if p.properties["uri"].startswith("postgresql"):  # the ledger and its proofs live in the catalog's database
        import sqlalchemy

        engine = sqlalchemy.create_engine(p.properties["uri"])
        try:
            with engine.connect() as connection:
                for name in ("tablepolicy_erasure_ledger", "tablepolicy_erasure_proofs"):
                    if sqlalchemy.inspect(connection).has_table(name):
                        rows = connection.execute(sqlalchemy.text(f"SELECT * FROM {name}")).fetchall()
                        assert SECRET_KEY not in repr(rows), name
        finally:
            engine.dispose()
    for path in p.root.rglob("*"):  # proofs, journals, ledgers, HTML pages, imported policies
        if path.is_file() and path.name != ".pyiceberg.yaml":
            assert SECRET_KEY.encode() not in path.read_bytes(), path


@pytest.mark.parametrize("kind", ["sqlite", "postgresql", "sqlite-s3a"])
@pytest.mark.parametrize("mode", ["copy-on-write", "merge-on-read"])
def test_erase_on_s3_leaves_no_key_in_any_object(store: Store, kind: str, mode: str, tmp_path: Path) -> None:
    p = project(store, kind, f"er{kind[:2]}{kind[-1]}{mode[0]}", tmp_path)
    table = make(p, mode)
    assert table.location().startswith(p.properties["warehouse"].split("/")[0]), table.location()  # s3a:// stays
    prefix = prefix_of(table)
    intact = checksum(table)
    before = scan(store, prefix)
    assert len(before.rows_with_keys) == 9, before  # three snapshots x three day partitions
    assert bool(before.deletes) == (mode == "merge-on-read"), before  # the DELETE only masked the rows there

    requests = p.root / "requests.yaml"
    requests.write_text(requests_yaml())
    run = p.cli("erase", "policies", "--requests", str(requests), "--dry-run")  # reads S3, changes nothing
    assert run.returncode == 0, run.stdout + run.stderr
    assert scan(store, prefix) == before
    assert not any(k in run.stdout for k in KEYS) and "REQ-1" in run.stdout, run.stdout

    run, proof = erase(p)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "erased and proven" in run.stdout, run.stdout
    run = p.cli("erase", "status", "policies", "--format", "json")  # the ledger, read back
    assert run.returncode == 0, run.stdout + run.stderr
    assert "REQ-1" in run.stdout and "done" in run.stdout, run.stdout

    after = scan(store, prefix)
    assert after.rows_with_keys == {} and after.bounds_with_keys == {}, after
    assert after.parquet and after.manifests, after  # the check read something
    (result,) = proof["tables"]
    assert result["state"] == "complete" and result["complete"], result
    assert result["files_still_stored"] == [] and result["rows_after"] == 0, result
    assert proof["complete"] is True
    done = {r["id"]: r["state"] for r in proof["certificate"]["requests"]}
    assert done == {"REQ-1": "done", "REQ-2": "done"}, proof["certificate"]
    erased_objects = {key_of(f) for f in result["files_with_keys_before"]}
    assert erased_objects >= set(before.rows_with_keys), (sorted(erased_objects), sorted(before.rows_with_keys))
    assert not erased_objects & set(stored(store, prefix))
    assert checksum(p.table(f"privacy.{mode.replace('-', '_')}")) == intact  # every other subject's rows
    kept = {r["user"]["uid"] for r in p.table(f"privacy.{mode.replace('-', '_')}").scan().to_arrow().to_pylist()}
    assert kept == {*KEPT, "old0", "old1"}
    text = json.dumps(proof)
    assert not any(k in text for k in KEYS)

    assert list(p.root.glob(".tablepolicy/journal-*.jsonl")) and (p.root / "proof.json").exists()  # checked below
    run, again = erase(p)  # the ledger (beside the SQLite catalog, or in PostgreSQL) says done: skipped
    assert run.returncode == 0, run.stdout + run.stderr
    assert again["tables"] == [] and {s["request"] for s in again["skipped"]} == {"REQ-1", "REQ-2"}
    no_secret_anywhere(p)


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_drift_import_and_health_html_on_s3(store: Store, kind: str, tmp_path: Path) -> None:
    p = project(store, kind, f"dr{kind[:2]}", tmp_path)
    table = make(p, "copy-on-write")

    # a column added outside tablepolicy, through Spark (S3A writes the new metadata)
    spark_session().sql(f"ALTER TABLE {p.name}.privacy.copy_on_write ADD COLUMN channel string")
    run = p.cli("drift", "policies", "--detailed-exitcode")
    assert run.returncode == 2, run.stdout + run.stderr
    assert "channel" in run.stdout and "privacy.copy_on_write" in run.stdout, run.stdout

    # import of the table on S3 into a project of its own, then plan of it: no changes
    imported = tmp_path / "imported"
    imported.mkdir()
    (imported / ".pyiceberg.yaml").write_text((p.root / ".pyiceberg.yaml").read_text())
    run = tablepolicy("import", "privacy.copy_on_write", "--out", "policies", "--catalog", p.name, cwd=imported)
    p.store.outputs.extend([run.stdout, run.stderr])
    assert run.returncode == 0, run.stdout + run.stderr
    written = list((imported / "policies").rglob("*.yaml"))
    assert written and "channel" in written[0].read_text(), written
    run = tablepolicy("plan", "policies", "--detailed-exitcode", "--catalog", p.name, cwd=imported)
    p.store.outputs.extend([run.stdout, run.stderr])
    assert run.returncode == 0, run.stdout + run.stderr
    assert "no changes" in run.stdout.lower(), run.stdout

    # health with its HTML page, read from S3
    page = p.root / "health.html"
    run = p.cli("health", "policies", "--html", str(page))
    assert run.returncode == 0, run.stdout + run.stderr
    html = page.read_text()
    assert "privacy.copy_on_write" in html and "<html" in html.lower(), html[:500]
    assert SECRET_KEY not in html
    assert table.location() and len(stored(store, prefix_of(table))) > 0
    no_secret_anywhere(p)
    for path in imported.rglob("*"):
        if path.is_file() and path.name != ".pyiceberg.yaml":
            assert SECRET_KEY.encode() not in path.read_bytes(), path


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_what_an_interrupted_expiry_left_on_s3_is_found_and_deleted(store: Store, kind: str, tmp_path: Path) -> None:
    """Leftovers on S3: an expiry killed after its commit leaves the data files and the manifests (with the key as
    a column bound) that only the expired snapshots read; erase lists them on S3, deletes them there and rewrites
    the current snapshot's manifests that keep a key as a bound (the DELETE's)."""
    p = project(store, kind, f"lo{kind[:2]}", tmp_path)
    (p.root / "policies" / "leftover.yaml").write_text(policy("leftover", "copy-on-write"))
    run = p.cli("apply", "policies", "--auto-approve")
    assert run.returncode == 0, run.stdout + run.stderr
    spark_fill(p, "leftover")
    table = p.table("privacy.leftover")
    prefix, intact = prefix_of(table), checksum(table)
    spark_session().sql(f"DELETE FROM {p.name}.privacy.leftover WHERE user.uid IN ({SQL_KEYS})")
    table = p.table("privacy.leftover")
    current = table.metadata.current_snapshot_id
    reading = [s.snapshot_id for s in table.metadata.snapshots[2:] if s.snapshot_id != current]
    assert len(reading) == 3
    table.maintenance.expire_snapshots().by_ids(reading).commit()  # the commit, no file deleted: a kill's leftovers
    left = scan(store, prefix)
    assert len(left.rows_with_keys) == 9 and len(left.bounds_with_keys) >= 4, left  # 3 appends' + the DELETE's

    run, proof = erase(p)
    assert run.returncode == 0, run.stdout + run.stderr
    (result,) = proof["tables"]
    assert result["state"] == "complete" and result["manifests_with_keys"] == [], result
    assert {key_of(f) for f in result["orphans_deleted"]} == set(left.rows_with_keys), result
    assert len(result["manifests_deleted"]) == 3, result  # the expired appends' manifests
    assert any(s.startswith("-- rewrite manifests of ") for s in result["statements"]), result
    after = scan(store, prefix)
    assert after.rows_with_keys == {} and after.bounds_with_keys == {}, after
    assert checksum(p.table("privacy.leftover")) == intact
    no_secret_anywhere(p)


def equality_delete(p: Project, name: str, event_id: int) -> None:
    """Someone else's equality delete of one row by ``event_id`` (as Flink's upserts write them), put on S3 with
    boto3 in the partition of the file holding the row and committed through Iceberg's Java API (as
    test_erase_engine.equality_delete does on local disk)."""
    spark = spark_session()
    jvm = spark._jvm
    (held,) = [r[0] for r in spark.sql(f"SELECT _file FROM {p.name}.privacy.{name} WHERE event_id = {event_id}")
               .collect()]
    table = jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(spark._jsparkSession, f"{p.name}.privacy.{name}")
    tasks, partition = table.newScan().planFiles().iterator(), None
    while tasks.hasNext():
        task = tasks.next()
        if task.file().location() == held:
            partition = task.file().partition()
    field_id = table.schema().findField("event_id").fieldId()
    location = f"{table.location()}/data/equality-delete-{event_id}.parquet"
    schema = pa.schema([pa.field("event_id", pa.int64(), False, {b"PARQUET:field_id": str(field_id).encode()})])
    body = pa.BufferOutputStream()
    pq.write_table(pa.table({"event_id": pa.array([event_id], pa.int64())}, schema=schema), body)
    data = body.getvalue().to_pybytes()
    p.store.s3.client().put_object(Bucket=BUCKET, Key=key_of(location), Body=data)  # type: ignore[attr-defined]
    ids = spark.sparkContext._gateway.new_array(jvm.int, 1)
    ids[0] = field_id
    delete = (jvm.org.apache.iceberg.FileMetadata.deleteFileBuilder(table.spec()).ofEqualityDeletes(ids)
              .withPath(location).withFormat(jvm.org.apache.iceberg.FileFormat.PARQUET)
              .withFileSizeInBytes(len(data)).withPartition(partition).withRecordCount(1).build())
    table.newRowDelta().addDeletes(delete).commit()


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_files_an_equality_delete_applies_to_are_rewritten_by_spark_on_s3(store: Store, kind: str,
                                                                          tmp_path: Path) -> None:
    """erase's Spark step on S3: pyiceberg cannot read a file an equality delete applies to, so Spark (S3A)
    rewrites the files holding a key; the row the equality delete removed does not come back."""
    p = project(store, kind, f"eq{kind[:2]}", tmp_path)
    table = make(p, "copy-on-write")
    prefix = prefix_of(table)
    gone = 30_000 + 2 * 3  # u3's event in day 0 of the last append, in a file holding the keys
    equality_delete(p, "copy_on_write", gone)
    rows = lambda: {r[0] for r in spark_session().sql(  # noqa: E731
        f"SELECT event_id FROM {p.name}.privacy.copy_on_write WHERE user.uid NOT IN ({SQL_KEYS})").collect()}
    events = rows()
    assert gone not in events and len(events) == 2 * 3 + 3 * 3 * 2 - 1

    run, proof = erase(p)
    assert run.returncode == 0, run.stdout + run.stderr
    (result,) = proof["tables"]
    assert result["state"] == "complete", result
    assert result["statements"][0].startswith(BY_SPARK), result["statements"]
    after = scan(store, prefix)
    assert after.rows_with_keys == {} and after.bounds_with_keys == {}, after
    assert rows() == events
    no_secret_anywhere(p)
