"""Issue 25: every name Iceberg accepts works in every command, on local disk and on object storage.

The matrix: for each character below, one table whose namespace (``n<c>s``), table name (``t<c>x``) and erasure
key column (``k<c>``) all hold it, on local disk and on the local S3 server (moto), each in a project of its own
(SQLite catalogs). Through the CLI, as a user runs it: validate, plan --out + apply of the plan (Spark), rows
written by Spark and by pyiceberg, health (text, JSON, HTML), the orphan decision (a stray file listed and found),
maintain (on disk Spark's remove_orphan_files deletes the stray), erase with its proof and an independent scan of
storage (every parquet file read by plain pyarrow / boto3: no erased key anywhere, every other row kept), drift,
import (and plan of the import: no changes), unlock of a dead run's lock. No character is refused: Iceberg 1.10
and Spark hold each of them (a refusal would be a validate finding naming the character, TP101's kind).

Erasure key values are data: a table of values holding quotes, backslashes, ``%``, ``_``, non-ASCII, emoji, a
5,000-character value and ``x' OR '1'='1`` is erased by pyarrow (format v2) and by Spark (format v3, which
pyiceberg does not write); exactly the requested values go, near misses (``x``, ``a_b``, ``1%``...) stay.

One S3 server and one Spark session (the CLI's, started by the first apply) for the module; tables are batched
into one project per storage so each command runs once over all names.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from pyiceberg.catalog import Catalog, load_catalog

from tablepolicy.compiler.iceberg.names import format_name
from tablepolicy.compiler.sql.filters import ident
from tablepolicy.runtime.erasure.spark_steps import BY_PYARROW, BY_SPARK
from tablepolicy.runtime.locations import PYICEBERG_IO, fs_path
from tablepolicy.runtime.orphans import scan_orphans
from tests.cli_runner import ROOT, Run, process_env, tablepolicy
from tests.integration.spark_reset import stop_spark
from tests.s3server import S3Server, s3_server

pytestmark = pytest.mark.spark

CHARACTERS = {"quote": "'", "backtick": "`", "double-quote": '"', "space": " ", "semicolon": ";", "dashes": "--",
              "percent-20": "%20", "hash": "#", "question": "?", "backslash": "\\", "non-ascii": "é", "emoji": "🦆"}
ERASED_KEY = "a'b"  # each table's subject
KEPT_KEYS = ["keep", "a'b ", "a''b"]  # every other row, near misses included
BUCKET = "hostile"
STRAY = "stray-old.parquet"  # a file no snapshot references, in each table's data folder
LATER = datetime.now(UTC) + timedelta(days=1)  # S3 cannot back-date an object: the orphan guard moves instead


def names(character: str) -> tuple[tuple[str, str], str]:
    return (f"n{character}s", f"t{character}x"), f"k{character}"


def quoted(text: str) -> str:
    """A YAML double-quoted scalar (JSON is YAML; non-ASCII kept as it is)."""
    return json.dumps(text, ensure_ascii=False)


def policy(character: str) -> str:
    table, key = names(character)
    return (f"table: {quoted(format_name(table))}\ncolumns:\n  - {{name: id, type: long}}\n"
            f"  - {{name: {quoted(key)}, type: string}}\n"
            f"lifecycle:\n  orphan_files: {{older_than: 3d}}\n"
            f"  erasure: {{key: [{quoted(format_name((key,)))}], within: 30d}}\n")


def requests_yaml() -> str:
    lines = ["requests:"]
    for label, character in CHARACTERS.items():
        _, key = names(character)
        lines.append(f'  - {{id: R-{label}, received: "2026-11-02", keys: {{{quoted(format_name((key,)))}: '
                     f"{quoted(ERASED_KEY)}}}}}")
    return "\n".join(lines) + "\n"


@dataclass
class Project:
    root: Path
    catalog: str
    properties: dict[str, str]
    s3: S3Server | None
    runs: dict[str, Run] = field(default_factory=dict)  # what the fixture ran, by step

    def cli(self, *args: str, catalog: bool = True) -> Run:
        return tablepolicy(*args, *(["--catalog", self.catalog] if catalog else []), cwd=self.root)

    def pyiceberg(self) -> Catalog:
        return load_catalog(self.catalog, **{**self.properties, "py-io-impl": PYICEBERG_IO})

    def stored(self, location: str) -> dict[str, bytes]:
        """Every file under a table location, read apart from the engine: path -> bytes."""
        if self.s3 is None:
            root = Path(fs_path(location))
            return {str(p): p.read_bytes() for p in root.rglob("*") if p.is_file()}
        client: Any = self.s3.client()
        prefix = fs_path(location).split("/", 1)[1] + "/"
        keys = [o["Key"] for page in client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix)
                for o in page.get("Contents", [])]
        return {key: client.get_object(Bucket=BUCKET, Key=key)["Body"].read() for key in keys}

    def put(self, location: str, relative: str, body: bytes) -> None:
        if self.s3 is None:
            path = Path(fs_path(location)) / relative
            path.write_bytes(body)
            os.utime(path, (time.time() - 5 * 86_400,) * 2)  # past the 3-day guard
        else:
            client: Any = self.s3.client()
            client.put_object(Bucket=BUCKET, Key=f"{fs_path(location).split('/', 1)[1]}/{relative}", Body=body)


def spark() -> Any:
    from pyspark.sql import SparkSession

    session = SparkSession._instantiatedSession
    assert session is not None, "the CLI's apply started no session in this process"
    session._jsparkSession.sessionState().catalogManager().reset()  # commits made outside this JVM
    return session


def parquet_bytes(table: pa.Table) -> bytes:
    body = pa.BufferOutputStream()
    pq.write_table(table, body)
    return bytes(body.getvalue().to_pybytes())


def build(p: Project) -> None:
    """Policies, validate, plan --out and apply of the plan, rows from Spark and pyiceberg, a stray file."""
    (p.root / "policies").mkdir()
    for label, character in CHARACTERS.items():
        (p.root / "policies" / f"{label}.yaml").write_text(policy(character), encoding="utf-8")
    p.runs["validate"] = p.cli("validate", "policies", catalog=False)
    p.runs["plan"] = p.cli("plan", "policies", "--out", "plan.json")
    p.runs["apply"] = p.cli("apply", "plan.json", "--auto-approve")
    assert p.runs["apply"].returncode == 0, p.runs["apply"].stdout + p.runs["apply"].stderr
    session, catalog = spark(), p.pyiceberg()
    for character in CHARACTERS.values():  # Spark's writes first: its pooled SQLite connection would not see
        table, key = names(character)  # pyiceberg's commits (SQLITE_BUSY_SNAPSHOT)
        rows = [(1, ERASED_KEY), *((2 + i, k) for i, k in enumerate(KEPT_KEYS))]
        session.createDataFrame(rows, f"id long, {ident(key)} string").writeTo(
            f"{p.catalog}.{format_name(table)}").append()
    for character in CHARACTERS.values():
        table, key = names(character)
        loaded = catalog.load_table(table)
        loaded.append(pa.table({"id": pa.array([10, 11], pa.int64()), key: [ERASED_KEY, "pyiceberg"]},
                               schema=loaded.schema().as_arrow()))
        p.put(loaded.location(), f"data/{STRAY}", parquet_bytes(pa.table({"id": pa.array([0], pa.int64())})))


@dataclass(frozen=True)
class World:
    disk: Project
    s3: Project

    def of(self, storage: str) -> Project:
        return self.disk if storage == "disk" else self.s3


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    with contextlib.ExitStack() as stack:
        stop_spark()  # a session left by another module keeps its Hadoop settings: ours starts afresh
        server = stack.enter_context(s3_server())
        server.bucket(BUCKET)
        stack.callback(stop_spark)
        projects = {}
        for storage in ("s3", "disk"):  # S3 first: its apply starts the session with the S3A settings
            root = tmp_path_factory.mktemp(f"hostile-{storage}")
            if storage == "s3":
                props = {"type": "sql", "uri": f"sqlite:///{root / 'catalog.db'}", "warehouse": f"s3://{BUCKET}/wh",
                         **server.pyiceberg_properties()}
            else:
                (root / "wh").mkdir()
                props = {"type": "sql", "uri": f"sqlite:///{root / 'catalog.db'}", "warehouse": (root / "wh").as_uri()}
            name = f"hostile{storage}"
            (root / ".pyiceberg.yaml").write_text(yaml.safe_dump({"catalog": {name: props}}))
            projects[storage] = Project(root, name, props, server if storage == "s3" else None)
            build(projects[storage])
        yield World(projects["disk"], projects["s3"])


STORAGES = ["disk", "s3"]


def every_table(text: str) -> list[str]:
    """The tables a text does not name (as format_name spells them)."""
    return [format_name(names(c)[0]) for c in CHARACTERS.values() if format_name(names(c)[0]) not in text]


@pytest.mark.parametrize("storage", STORAGES)
def test_validate_plan_and_apply_hold_every_name(world: World, storage: str) -> None:
    p = world.of(storage)
    validate, plan, apply = p.runs["validate"], p.runs["plan"], p.runs["apply"]
    assert validate.returncode == 0, validate.stderr
    assert validate.stderr == "12 file(s) checked: 0 error(s), 0 warning(s)\n", validate.stderr
    assert plan.returncode == 0 and every_table(plan.stdout) == [], plan.stdout + plan.stderr
    assert apply.returncode == 0 and "Apply complete: 24 statement(s) executed" in apply.stdout, apply.stdout
    catalog = p.pyiceberg()
    for character in CHARACTERS.values():
        table, key = names(character)
        loaded = catalog.load_table(table)
        assert loaded.schema().find_field(key).name == key
        assert loaded.location().endswith(f"/n{character}s/t{character}x"), loaded.location()  # raw, not encoded
        rows = loaded.scan().to_arrow().column(key).to_pylist()
        assert sorted(rows) == sorted([ERASED_KEY, *KEPT_KEYS, ERASED_KEY, "pyiceberg"])
    again = p.cli("plan", "policies", "--detailed-exitcode")  # what apply made is what the policies say
    assert again.returncode == 0, again.stdout + again.stderr


@pytest.mark.parametrize("storage", STORAGES)
def test_the_orphan_decision_finds_the_stray_file_under_every_name(world: World, storage: str) -> None:
    p = world.of(storage)
    catalog = p.pyiceberg()
    for character in CHARACTERS.values():
        table = catalog.load_table(names(character)[0])
        scan = scan_orphans(table, LATER)
        assert [f.path.rsplit("/", 1)[-1] for f in scan.old] == [STRAY], (character, scan)
        assert scan.refused is None and scan.young == 0, (character, scan)
        assert scan.old[0].path == f"{fs_path(table.location())}/data/{STRAY}"


@pytest.mark.parametrize("storage", STORAGES)
def test_health_in_text_json_and_html_names_every_table(world: World, storage: str) -> None:
    p = world.of(storage)
    text = p.cli("health", "policies")
    assert text.returncode == 0 and every_table(text.stdout) == [], text.stdout + text.stderr
    assert text.stdout.count("rows          6") == len(CHARACTERS), text.stdout
    if storage == "disk":  # the stray is past the guard on disk (S3 cannot back-date it)
        assert text.stdout.count("orphan files  1 (") == len(CHARACTERS), text.stdout
    data = p.cli("health", "policies", "--format", "json")
    assert data.returncode == 0, data.stderr
    shown = {tuple(t["table"]) for t in json.loads(data.stdout)["tables"]}
    assert shown == {names(c)[0] for c in CHARACTERS.values()}, shown
    page = p.root / "health.html"
    html = p.cli("health", "policies", "--html", str(page))
    assert html.returncode == 0, html.stderr
    content = page.read_text(encoding="utf-8")
    import html as escaping

    missing = [n for c in CHARACTERS.values() if escaping.escape(n := format_name(names(c)[0])) not in content]
    assert missing == [], missing


@pytest.mark.parametrize("storage", STORAGES)
def test_erase_leaves_no_key_in_storage_under_every_name(world: World, storage: str) -> None:
    p = world.of(storage)
    (p.root / "requests.yaml").write_text(requests_yaml(), encoding="utf-8")
    run = p.cli("erase", "policies", "--requests", "requests.yaml", "--proof", "proof.json")
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"{len(CHARACTERS)} request(s): 0 pending, {len(CHARACTERS)} done" in run.stdout, run.stdout
    proof = json.loads((p.root / "proof.json").read_text(encoding="utf-8"))
    assert proof["complete"] is True
    assert len(proof["tables"]) == len(CHARACTERS)
    assert all(t["state"] == "complete" and t["files_still_stored"] == [] for t in proof["tables"]), proof
    catalog = p.pyiceberg()
    for character in CHARACTERS.values():
        table, key = names(character)
        loaded = catalog.load_table(table)
        held = []
        for path, body in p.stored(loaded.location()).items():
            if path.endswith(".parquet"):
                data = pq.read_table(io.BytesIO(body))
                if key in data.column_names and ERASED_KEY in data.column(key).to_pylist():
                    held.append(path)
        assert held == [], (character, held)
        assert sorted(loaded.scan().to_arrow().column(key).to_pylist()) == sorted([*KEPT_KEYS, "pyiceberg"])
        assert any(path.endswith(f"/data/{STRAY}") for path in p.stored(loaded.location())), character  # kept


def remove_orphans(p: Project, table: tuple[str, ...], older_than: datetime) -> list[str]:
    """Iceberg's DeleteOrphanFilesSparkAction as maintain's remove_orphan_files runs it (s3a and s3n one store
    with s3, a prefix mismatch an error), with any guard: the files it deleted."""
    session = spark()
    jvm = session._jvm
    loaded = jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(session._jsparkSession,
                                                                       f"{p.catalog}.{format_name(table)}")
    schemes = jvm.java.util.HashMap()
    schemes.put("s3a,s3n", "s3")
    action = (jvm.org.apache.iceberg.spark.actions.SparkActions.get(session._jsparkSession).deleteOrphanFiles(loaded)
              .olderThan(int(older_than.timestamp() * 1000)).equalSchemes(schemes)
              .prefixMismatchMode(jvm.org.apache.iceberg.actions.DeleteOrphanFiles.PrefixMismatchMode.ERROR))
    return sorted(str(path) for path in action.execute().orphanFileLocations())


@pytest.mark.parametrize("storage", STORAGES)
def test_maintain_decides_and_removes_orphans_under_every_name(world: World, storage: str) -> None:
    p = world.of(storage)
    run = p.cli("maintain", "policies")
    assert run.returncode == 0, run.stdout + run.stderr
    assert every_table(run.stdout) == [], run.stdout
    catalog = p.pyiceberg()
    for character in CHARACTERS.values():
        location = catalog.load_table(names(character)[0]).location()
        stray = [path for path in p.stored(location) if path.endswith(f"/data/{STRAY}")]
        if storage == "disk":  # past the guard: Spark's remove_orphan_files deleted it
            assert stray == [], (character, run.stdout)
        else:  # written just now: younger than the guard, kept; Spark's action behind maintain's removal (its
            assert len(stray) == 1, character  # procedure refuses a guard under 24h), with a later guard
            removed = remove_orphans(p, names(character)[0], LATER)
            assert [path.rsplit("/", 1)[-1] for path in removed] == [STRAY], (character, removed)
            assert [path for path in p.stored(location) if path.endswith(f"/data/{STRAY}")] == [], character
            assert catalog.load_table(names(character)[0]).scan().to_arrow().num_rows == len(KEPT_KEYS) + 1, character
    if storage == "disk":
        assert run.stdout.count("remove files no snapshot references") == len(CHARACTERS), run.stdout


@pytest.mark.parametrize("storage", STORAGES)
def test_drift_and_import_read_every_name(world: World, storage: str) -> None:
    p = world.of(storage)
    drift = p.cli("drift", "policies", "--detailed-exitcode")
    assert drift.returncode == 0, drift.stdout + drift.stderr
    session = spark()
    for character in CHARACTERS.values():  # a column added outside tablepolicy, its name as hostile
        table, _ = names(character)
        session.sql(f"ALTER TABLE {p.catalog}.{format_name(table)} ADD COLUMN {ident('d' + character)} string")
    drift = p.cli("drift", "policies", "--detailed-exitcode")
    assert drift.returncode == 2, drift.stdout + drift.stderr
    missing = [c for c in CHARACTERS.values() if format_name(("d" + c,)) not in drift.stdout]
    assert missing == [] and every_table(drift.stdout) == [], drift.stdout
    tables = [format_name(names(c)[0]) for c in CHARACTERS.values() if c != "\\"]
    run = p.cli("import", *tables, "--out", "imported")
    assert run.returncode == 0, run.stdout + run.stderr
    written = sorted((p.root / "imported").rglob("*.yaml"))
    assert len(written) == len(tables), written
    # libyaml's loader, as tablepolicy's: pure-Python PyYAML refuses a plain `k?` in a flow mapping
    columns = {c["name"] for path in written
               for c in yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)["columns"]}
    assert {"d" + c for c in CHARACTERS.values() if c != "\\"} <= columns, columns  # the drift's columns
    plan = p.cli("plan", "imported", "--detailed-exitcode")
    assert plan.returncode == 0, plan.stdout + plan.stderr
    # a backslash cannot be in a file or folder name import --out writes (a path separator on Windows): refused
    # with the way out, and without --out the YAML is printed
    backslash = format_name(names("\\")[0])
    refused = p.cli("import", backslash, "--out", "imported")
    assert refused.returncode == 1
    assert "error: `n\\s`.`t\\x`: 'n\\\\s' cannot be a file or folder name; import the table without --out" \
        in refused.stderr, refused.stderr
    printed = p.cli("import", backslash)
    assert printed.returncode == 0, printed.stderr
    (p.root / "imported" / "backslash.yaml").write_text(printed.stdout, encoding="utf-8")
    plan = p.cli("plan", "imported", "--detailed-exitcode")
    assert plan.returncode == 0, plan.stdout + plan.stderr


HOLD = """
import sys, time
from pathlib import Path
from tablepolicy.runtime.catalog.config import resolve_catalog
from tablepolicy.runtime.catalog.reader import CatalogReader
from tablepolicy.runtime.lock import catalog_locks
catalog, policies, *tables = sys.argv[1:]
with CatalogReader(resolve_catalog(catalog, Path(policies))) as reader, \\
        catalog_locks(reader, tables, Path(policies).parent / ".tablepolicy"):
    print("locked", flush=True)
    time.sleep(600)
"""


@pytest.mark.parametrize("storage", STORAGES)
def test_unlock_takes_over_a_dead_runs_lock_under_every_name(world: World, storage: str) -> None:
    p = world.of(storage)
    tables = [format_name(names(c)[0]) for c in CHARACTERS.values()]
    holder = subprocess.Popen([sys.executable, "-c", HOLD, p.catalog, str(p.root / "policies"), *tables],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=p.root,
                              env={**process_env(p.root), "PYTHONPATH": str(ROOT)})
    assert holder.stdout is not None
    line = holder.stdout.readline()
    assert line == "locked\n", line + holder.communicate()[1]
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    for table in tables:
        run = p.cli("unlock", table)
        assert run.returncode == 0, run.stdout + run.stderr
        assert f"Took over the dead run's lock on {table}" in run.stdout, run.stdout


# Erasure key values: erased exactly, near misses kept
ERASED_VALUES = ["x' OR '1'='1", "it's", "back\\slash", "100%", "_", "%", "é", "🦆", 'q"uote', "L" * 5000,
                 "semi;colon --", "tab\there"]
KEPT_VALUES = ["x", "x' OR '1'='2", "its", "back\\\\slash", "backslash", "100", "1%", "a_b", "a%b", "e", "🦆🦆",
               "L" * 4999, "'", "", "semi;colon", "tab"]


def equality_delete(p: Project, name: str, event_id: int) -> None:
    """Someone else's equality delete of the row ``id = event_id`` (as Flink's upserts write them), committed through
    Iceberg's Java API (as tests/integration/test_object_storage_erase does): pyiceberg cannot read a file an
    equality delete applies to, so erasure leaves the rewrite to Spark."""
    session = spark()
    jvm = session._jvm
    table = jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(session._jsparkSession, f"{p.catalog}.vals.{name}")
    field_id = table.schema().findField("id").fieldId()
    location = f"{table.location()}/data/equality-delete-{event_id}.parquet"
    schema = pa.schema([pa.field("id", pa.int64(), False, {b"PARQUET:field_id": str(field_id).encode()})])
    data = parquet_bytes(pa.table({"id": pa.array([event_id], pa.int64())}, schema=schema))
    Path(fs_path(location)).write_bytes(data)
    ids = session.sparkContext._gateway.new_array(jvm.int, 1)
    ids[0] = field_id
    delete = (jvm.org.apache.iceberg.FileMetadata.deleteFileBuilder(table.spec()).ofEqualityDeletes(ids)
              .withPath(location).withFormat(jvm.org.apache.iceberg.FileFormat.PARQUET)
              .withFileSizeInBytes(len(data)).withRecordCount(1).build())
    table.newRowDelta().addDeletes(delete).commit()


@pytest.mark.parametrize("engine", ["pyarrow", "spark"])
def test_key_values_are_data_erased_exactly(world: World, engine: str) -> None:
    """pyarrow rewrites the files holding a key; with an equality delete on the table (which pyiceberg cannot
    read) Spark does, the keys a view of data, never SQL text."""
    p = world.disk
    name = f"values_{engine}"
    (p.root / "values").mkdir(exist_ok=True)
    (p.root / "values" / f"{name}.yaml").write_text(
        f"table: vals.{name}\ncolumns:\n  - {{name: id, type: long}}\n"
        "  - {name: k, type: string}\nlifecycle:\n  erasure: {key: [k], within: 30d}\n", encoding="utf-8")
    (p.root / "values" / f"{name}-requests.yaml").write_text(yaml.safe_dump({"requests": [
        {"id": f"V-{i}", "received": "2026-11-02", "keys": {"k": value}} for i, value in enumerate(ERASED_VALUES)]},
        allow_unicode=True), encoding="utf-8")
    apply = p.cli("apply", f"values/{name}.yaml", "--auto-approve")
    assert apply.returncode == 0, apply.stdout + apply.stderr
    values = [*ERASED_VALUES, *KEPT_VALUES, "gone"]
    spark().createDataFrame(list(enumerate(values)), "id long, k string").writeTo(
        f"{p.catalog}.vals.{name}").append()
    if engine == "spark":
        equality_delete(p, name, len(values) - 1)  # the row "gone": deleted by someone else, stays deleted
    proof = p.root / "values" / f"{name}-proof.json"
    run = p.cli("erase", f"values/{name}.yaml", "--requests", f"values/{name}-requests.yaml", "--proof", str(proof))
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"{len(ERASED_VALUES)} request(s): 0 pending, {len(ERASED_VALUES)} done" in run.stdout, run.stdout
    (table,) = json.loads(proof.read_text(encoding="utf-8"))["tables"]
    assert table["statements"][0].startswith(BY_SPARK if engine == "spark" else BY_PYARROW), table["statements"]
    kept = sorted(r[0] for r in spark().sql(f"SELECT k FROM {p.catalog}.vals.{name}").collect())
    assert kept == sorted(KEPT_VALUES + ([] if engine == "spark" else ["gone"]))
    location = p.pyiceberg().load_table(("vals", name)).location()
    left = [v for path, body in p.stored(location).items() if path.endswith(".parquet")
            for v in (pq.read_table(io.BytesIO(body)).to_pydict().get("k") or []) if v in ERASED_VALUES]
    assert left == []
