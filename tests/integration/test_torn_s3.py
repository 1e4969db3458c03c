"""Torn objects on object storage (a moto S3 server on 127.0.0.1, the embedded SQLite catalog): what a writer killed
half way leaves in the bucket (an empty object, a parquet object cut before its footer ends, half an avro manifest).
Erase (its pyarrow path, no JVM) deletes those no snapshot reaches once older than the debris age guard (the object's
LastModified; the run's instant is the CLI's clock, replaced) and proves the key gone, checked apart from the tool by
listing the bucket with boto3; a younger one may be another writer's upload in flight: kept; one a snapshot reaches
stops erase and health with the finding naming the object."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from pyiceberg.catalog import load_catalog
from pyiceberg.table import Table

from tests.cli_runner import Run, pyspark_unimportable, tablepolicy
from tests.s3server import SECRET_KEY, S3Server, s3_server

BUCKET = "lake-torn"
ERASED = "subject-erased"
POLICY = """table: privacy.events
columns:
  - {name: event_id, type: long}
  - {name: user_id, type: string}
lifecycle:
  erasure: {key: [user_id], within: 30d}
"""


@pytest.fixture(scope="module")
def s3() -> Iterator[S3Server]:
    with s3_server() as server:
        server.bucket(BUCKET)
        yield server


class Project:
    def __init__(self, s3: S3Server, root: Path, name: str) -> None:
        self.s3, self.root, self.name = s3, root, name
        self.properties = {"type": "sql", "uri": f"sqlite:///{root / 'catalog.db'}",
                           "warehouse": f"s3://{BUCKET}/wh-{name}", **s3.pyiceberg_properties()}
        (root / ".pyiceberg.yaml").write_text(yaml.safe_dump({"catalog": {name: self.properties}}))
        (root / "policies").mkdir()
        (root / "policies" / "events.yaml").write_text(POLICY)
        (root / "requests.csv").write_text(f"id,received,user_id\nREQ-1,2026-11-02,{ERASED}\n")
        catalog = load_catalog(name, **self.properties)
        catalog.create_namespace("privacy")
        table = catalog.create_table(("privacy", "events"), pa.schema([("event_id", pa.int64()),
                                                                        ("user_id", pa.string())]))
        table.append(pa.table({"event_id": pa.array([1, 2], pa.int64()), "user_id": [ERASED, "kept"]}))
        table.append(pa.table({"event_id": pa.array([3], pa.int64()), "user_id": ["other"]}))

    def table(self) -> Table:
        return load_catalog(self.name, **self.properties).load_table(("privacy", "events"))

    def cli(self, *args: str) -> Run:
        with pyspark_unimportable():
            run = tablepolicy(*args, "--catalog", self.name, cwd=self.root)
        output = run.stdout + run.stderr
        assert "internal error" not in output and "Traceback" not in output, output
        assert SECRET_KEY not in output
        return run

    @property
    def client(self) -> Any:
        return self.s3.client()

    def objects(self) -> dict[str, bytes]:
        prefix = urlparse(self.table().location()).path.strip("/") + "/"
        pages = self.client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix)
        keys = [o["Key"] for page in pages for o in page.get("Contents", [])]
        return {key: self.client.get_object(Bucket=BUCKET, Key=key)["Body"].read() for key in keys}

    def written(self, key: str) -> datetime:
        """The object's LastModified as the bucket lists it (what erase's age guard reads)."""
        listed = self.client.list_objects_v2(Bucket=BUCKET, Prefix=key)["Contents"]
        (found,) = [o["LastModified"] for o in listed if o["Key"] == key]
        return found  # type: ignore[no-any-return]

    def put(self, key: str, body: bytes) -> str:
        self.client.put_object(Bucket=BUCKET, Key=key, Body=body)
        return key


def _key(uri: str) -> str:
    return urlparse(uri).path.lstrip("/")


def _data_key(table: Table) -> str:
    return sorted(_key(t.file.file_path) for t in table.scan().plan_files())[0]


def _manifest_key(table: Table) -> str:
    snapshot = table.current_snapshot()
    assert snapshot is not None
    return _key(snapshot.manifests(table.io)[0].manifest_path)


def _zero_bytes(project: Project) -> str:
    return project.put(_data_key(project.table()).rsplit("/", 1)[0] + "/00009-0-killed-zero.parquet", b"")


def _truncated_footer(project: Project) -> str:
    source = _data_key(project.table())
    body = project.client.get_object(Bucket=BUCKET, Key=source)["Body"].read()
    return project.put(source.rsplit("/", 1)[0] + "/00009-0-killed-footer.parquet", body[:-7])


def _half_manifest(project: Project) -> str:
    source = _manifest_key(project.table())
    body = project.client.get_object(Bucket=BUCKET, Key=source)["Body"].read()
    return project.put(source.rsplit("/", 1)[0] + "/killed-half-m0.avro", body[: len(body) // 2])


PLANTED: dict[str, Callable[[Project], str]] = {
    "zero-byte-parquet": _zero_bytes, "truncated-footer": _truncated_footer, "half-avro-manifest": _half_manifest}


def _keys_in_bucket(project: Project) -> int:
    """Rows holding the erased key in any parquet object under the table's prefix, read apart from the tool."""
    found = 0
    for key, body in project.objects().items():
        if key.endswith(".parquet"):
            with contextlib.suppress(pa.ArrowInvalid):  # a torn object erase was meant to delete is asserted apart
                found += pq.read_table(pa.BufferReader(body)).column("user_id").to_pylist().count(ERASED)
    return found


@pytest.mark.parametrize("plant", PLANTED.values(), ids=PLANTED.keys())
def test_unreachable_torn_object_is_deleted_by_erase(s3: S3Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     plant: Callable[[Project], str]) -> None:
    project = Project(s3, tmp_path, f"torn_{plant.__name__.strip('_')}")
    torn = plant(project)
    run_at = project.written(torn) + timedelta(days=3, minutes=1)  # past Iceberg's 3-day guard
    monkeypatch.setattr("tablepolicy.cli.erasure.clock", lambda: run_at)

    run = project.cli("erase", "policies", "--requests", "requests.csv", "--proof", "proof.json")

    assert run.returncode == 0, run.stdout + run.stderr
    (proof,) = json.loads((tmp_path / "proof.json").read_text())["tables"]
    assert proof["state"] == "complete", proof
    assert proof["debris_deleted"] == [f"{BUCKET}/{torn}"], proof  # as Iceberg's orphan logic spells it
    assert torn not in project.objects()
    assert _keys_in_bucket(project) == 0
    rows = project.table().scan().to_arrow().column("user_id").to_pylist()
    assert sorted(rows) == ["kept", "other"]


@pytest.mark.parametrize("plant", PLANTED.values(), ids=PLANTED.keys())
def test_fresh_unreachable_torn_object_is_kept_until_it_ages(s3: S3Server, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch,
                                                            plant: Callable[[Project], str]) -> None:
    project = Project(s3, tmp_path, f"fresh_{plant.__name__.strip('_')}")
    torn = plant(project)
    body, written = project.objects()[torn], project.written(torn)
    monkeypatch.setattr("tablepolicy.cli.erasure.clock", lambda: written + timedelta(hours=1))  # a write in flight?

    run = project.cli("erase", "policies", "--requests", "requests.csv", "--proof", "proof.json")

    output = " ".join((run.stdout + run.stderr).split())
    assert run.returncode == 1, output
    assert project.objects()[torn] == body  # kept: another writer's commit may still name it
    (proof,) = json.loads((tmp_path / "proof.json").read_text())["tables"]
    stamp, after = written.strftime("%Y-%m-%dT%H:%M:%SZ"), (written + timedelta(days=3)).strftime("%Y-%m-%d %H:%M:%S")
    assert proof["state"] == "incomplete" and proof["debris_deleted"] == [], proof
    assert proof["debris_pending"] == [{"path": f"{BUCKET}/{torn}", "mtime": stamp,
                                        "retry_after": (written + timedelta(days=3)).strftime("%Y-%m-%dT%H:%M:%SZ")}]
    assert f"{BUCKET}/{torn} cannot be read and no snapshot reads it, but it was written at " in output, output
    assert "it may be a write in flight" in output, output
    assert f"run erase again after {after} UTC, or pass --debris-min-age 0s when no writer can be running" in output

    run = project.cli("erase", "policies", "--requests", "requests.csv", "--proof", "proof.json",
                      "--debris-min-age", "0s")

    assert run.returncode == 0, run.stdout + run.stderr
    (proof,) = json.loads((tmp_path / "proof.json").read_text())["tables"]
    assert proof["state"] == "complete" and proof["debris_deleted"] == [f"{BUCKET}/{torn}"], proof
    assert torn not in project.objects() and _keys_in_bucket(project) == 0


def _tear_data(project: Project) -> str:
    target = sorted(_key(t.file.file_path) for t in project.table().scan().plan_files())[-1]
    body = project.client.get_object(Bucket=BUCKET, Key=target)["Body"].read()
    return project.put(target, body[:-7])


def _tear_manifest(project: Project) -> str:
    target = _manifest_key(project.table())
    body = project.client.get_object(Bucket=BUCKET, Key=target)["Body"].read()
    return project.put(target, body[: len(body) // 2])


REACHED: dict[str, Callable[[Project], str]] = {"truncated-footer": _tear_data, "half-avro-manifest": _tear_manifest}


@pytest.mark.parametrize("tear", REACHED.values(), ids=REACHED.keys())
def test_reachable_torn_object_stops_erase_naming_it(s3: S3Server, tmp_path: Path,
                                                     tear: Callable[[Project], str]) -> None:
    project = Project(s3, tmp_path, f"damaged_{tear.__name__.strip('_')}")
    torn = tear(project)
    before = project.objects()

    run = project.cli("erase", "policies", "--requests", "requests.csv", "--proof", "proof.json")

    assert run.returncode == 1, run.stdout + run.stderr
    assert f"the table is damaged: s3://{BUCKET}/{torn} (" in run.stdout + run.stderr, run.stdout + run.stderr
    (proof,) = json.loads((tmp_path / "proof.json").read_text())["tables"]
    assert proof["state"] == "failed" and proof["debris_deleted"] == [], proof
    assert project.objects() == before  # nothing deleted or rewritten


def test_reachable_torn_manifest_stops_health_naming_it(s3: S3Server, tmp_path: Path) -> None:
    project = Project(s3, tmp_path, "damaged_health")
    torn = _tear_manifest(project)

    run = project.cli("health", "policies")

    assert run.returncode == 1, run.stdout + run.stderr
    assert f"error: the table is damaged: s3://{BUCKET}/{torn} (a manifest a snapshot reads) cannot be read" \
        in run.stdout + run.stderr, run.stdout + run.stderr


@pytest.mark.parametrize("point", [("data", 1), ("manifest", 1), ("list", 1)], ids=["data1", "manifest1", "list1"])
def test_erase_killed_mid_upload_converges_on_s3(s3: S3Server, tmp_path: Path, point: tuple[str, int]) -> None:
    """The kill of tests/integration/test_torn_kill.py on the bucket: half of the object is uploaded, then the
    process is killed; erase run again ends proven and no object under the prefix is torn or holds the key."""
    import os
    import signal
    import subprocess
    import sys

    from tests.cli_runner import ROOT
    from tests.integration.test_torn_kill import KILLER

    project = Project(s3, tmp_path, f"killed_{point[0]}")
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("PYICEBERG_CATALOG__")}, "PYTHONPATH": str(ROOT)}
    args = ["erase", "policies", "--requests", "requests.csv", "--proof", "proof.json", "--catalog", project.name]
    killed = subprocess.run([sys.executable, "-c", KILLER, point[0], str(point[1]), "half", *args], cwd=tmp_path,
                            capture_output=True, text=True, env=env, timeout=600, check=False)
    assert killed.returncode == -signal.SIGKILL, killed.stdout + killed.stderr
    assert _torn_objects(project), "the kill left no torn object"

    run = project.cli(*args[:-2], "--debris-min-age", "0s")  # the operator knows the writer was killed

    assert run.returncode == 0, run.stdout + run.stderr
    (proof,) = json.loads((tmp_path / "proof.json").read_text())["tables"]
    assert proof["state"] == "complete", proof
    assert _torn_objects(project) == []
    assert _keys_in_bucket(project) == 0
    assert sorted(project.table().scan().to_arrow().column("user_id").to_pylist()) == ["kept", "other"]


def _torn_objects(project: Project) -> list[str]:
    from pyiceberg.avro.file import AvroFile
    from pyiceberg.io.pyarrow import PyArrowFileIO

    torn = []
    for key, body in project.objects().items():
        try:
            if key.endswith(".parquet"):
                pq.ParquetFile(pa.BufferReader(body))
            elif key.endswith(".avro"):
                path = Path(tempfile_dir(project)) / key.replace("/", "_")
                path.write_bytes(body)
                with AvroFile[Any](PyArrowFileIO().new_input(str(path))) as records:
                    for _ in records:
                        pass
        except Exception:  # torn is the answer asked for
            torn.append(key)
    return torn


def tempfile_dir(project: Project) -> Path:
    folder = project.root / "objects"
    folder.mkdir(exist_ok=True)
    return folder
