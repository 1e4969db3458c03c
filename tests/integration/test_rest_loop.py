"""The loop on a real Iceberg REST catalog: SeaweedFS's ``weed mini`` (tests/seaweed.py) serves the REST API and the
S3 store holding the tables; tablepolicy reads it through pyiceberg's RESTCatalog and applies through Spark's.

doctor, validate, plan, apply (create, a column added, a type widened, partition and sort changed, properties),
writers through Spark and pyiceberg, plan with no changes after each, health (text, JSON, HTML), maintain
(compaction, expiry, orphan removal), drift, import then plan with no changes, branches and tags. The server
adds ``schema.name-mapping.default`` to every table and rewrites it after every commit: it is never imported and
never planned (compiler/model/properties.py SERVER_PROPERTIES).

One server and one Spark session (the CLI's, started by the first apply) for the module; both stopped at its end.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
import yaml

from tests.cli_runner import Run, tablepolicy
from tests.integration.spark_reset import stop_spark
from tests.seaweed import SECRET_KEY, WAREHOUSE, SeaweedServer, seaweed_server

pytestmark = pytest.mark.spark
NAME = "rest"
LOCKS = "tablepolicy-locks"  # a plain bucket beside the table bucket: the runs' locks, seen by every runner
NAME_MAPPING = "schema.name-mapping.default"


@dataclass
class Rest:
    server: SeaweedServer
    root: Path
    outputs: list[str]

    def cli(self, *args: str) -> Run:
        run = tablepolicy(*args, cwd=self.root, env={"TABLEPOLICY_CATALOG": NAME})
        self.outputs += [run.stdout, run.stderr]
        return run

    def ok(self, *args: str) -> Run:
        run = self.cli(*args)
        assert run.returncode == 0, f"{args}: {run.stdout}{run.stderr}"
        return run

    def catalog(self) -> Any:
        from pyiceberg.catalog import load_catalog

        return load_catalog(NAME, **self.server.catalog_properties(), **{"view-endpoints-supported": "true"})

    def write(self, relative: str, text: str) -> Path:
        path = self.root / "policies" / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path

    def no_changes(self) -> None:
        run = self.cli("plan", "policies", "--detailed-exitcode")
        assert run.returncode == 0, run.stdout + run.stderr
        assert "no changes" in run.stdout.lower(), run.stdout


@pytest.fixture(scope="module")
def rest(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rest]:
    root = tmp_path_factory.mktemp("rest-project")
    with contextlib.ExitStack() as stack:
        stop_spark()  # a session left by another module keeps its Hadoop settings: start ours afresh
        server = stack.enter_context(seaweed_server())
        server.s3().create_bucket(Bucket=LOCKS)  # type: ignore[attr-defined]
        locked = {**server.catalog_properties(), "tablepolicy.lock-location": f"s3://{LOCKS}/loop"}
        (root / ".pyiceberg.yaml").write_text(yaml.safe_dump({"catalog": {NAME: locked}}))
        (root / "policies").mkdir()
        stack.callback(stop_spark)  # the CLI's session, started in this process by the first apply
        rest = Rest(server, root, [])
        yield rest
        for output in rest.outputs:
            assert SECRET_KEY not in output


def spark_session() -> Any:
    from pyspark.sql import SparkSession

    spark = SparkSession._instantiatedSession
    assert spark is not None, "the CLI's apply started no session in this process"
    return spark


ORDERS = """table: shop.orders
owner: data
columns:
  - {{name: id, type: long, required: true}}
  - {{name: ts, type: timestamptz}}
  - {{name: qty, type: {qty}}}
{more}{layout}properties: {{{props}}}
lifecycle:
  snapshots: {{max_age: 1d, min_keep: 1}}
  compaction: {{min_input_files: 3, target_file_size: 128MB}}
  orphan_files: {{older_than: 24h}}
"""


def orders(qty: str = "int", more: str = "", layout: str = "", props: str = "commit.retry.num-retries: 5") -> str:
    return ORDERS.format(qty=qty, more=more, layout=layout, props=props)


def test_doctor_validate_and_a_first_plan(rest: Rest) -> None:
    rest.write("shop/orders.yaml", orders())
    run = rest.ok("doctor")
    assert "rest" in run.stdout and "s3a jars" in run.stdout, run.stdout
    assert f"objects under s3://{LOCKS}/loop, taken with S3 conditional writes" in run.stdout, run.stdout
    rest.ok("validate", "policies")
    run = rest.cli("plan", "policies", "--detailed-exitcode")
    assert run.returncode == 2, run.stdout + run.stderr
    assert "create" in run.stdout.lower() and "shop.orders" in run.stdout, run.stdout


# each change kind applied in turn; after each, the table is as declared and a plan finds nothing to do, the
# server's name mapping naming every column
CHANGES = [
    ("create", orders()),
    ("add column", orders(more="  - {name: note, type: string}\n")),
    ("widen type", orders(qty="long", more="  - {name: note, type: string}\n")),
    ("partition", orders(qty="long", more="  - {name: note, type: string}\n", layout="partition_by: [day(ts)]\n")),
    ("sort", orders(qty="long", more="  - {name: note, type: string}\n",
                    layout="partition_by: [day(ts)]\nsort_by: [id]\n")),
    ("properties", orders(qty="long", more="  - {name: note, type: string}\n",
                          layout="partition_by: [day(ts)]\nsort_by: [id]\n",
                          props="commit.retry.num-retries: 7, write.parquet.compression-codec: zstd")),
]


def test_each_change_kind_applies_and_converges(rest: Rest) -> None:
    for kind, text in CHANGES:
        rest.write("shop/orders.yaml", text)
        run = rest.ok("apply", "policies", "--auto-approve")
        assert "shop.orders" in run.stdout, (kind, run.stdout)
        rest.no_changes()
        table = rest.catalog().load_table("shop.orders")
        mapping = json.loads(table.properties[NAME_MAPPING])  # the server's, kept up to date by it
        assert {n for m in mapping for n in m["names"]} == {f.name for f in table.schema().fields}, (kind, mapping)
    table = rest.catalog().load_table("shop.orders")
    assert [f.name for f in table.schema().fields] == ["id", "ts", "qty", "note"]
    assert str(table.schema().find_field("qty").field_type) == "long"
    assert [f.transform.__class__.__name__ for f in table.spec().fields] == ["DayTransform"]
    assert [f.source_id for f in table.sort_order().fields] == [table.schema().find_field("id").field_id]
    assert table.properties["write.parquet.compression-codec"] == "zstd"
    assert table.location() == f"s3://{WAREHOUSE}/shop/orders"


def test_writers_health_and_maintain(rest: Rest, monkeypatch: pytest.MonkeyPatch) -> None:
    spark = spark_session()
    day = (datetime.now(UTC) - timedelta(days=1)).replace(hour=12, minute=0, second=0, microsecond=0)
    for i in range(3):
        spark.sql(f"INSERT INTO {NAME}.shop.orders VALUES ({i}, TIMESTAMP '{day.isoformat(' ')}', {i}, 'spark')")
    table = rest.catalog().load_table("shop.orders")
    table.append(pa.Table.from_pylist([{"id": 3, "ts": day, "qty": 3, "note": "pyiceberg"}],
                                      schema=table.schema().as_arrow()))
    data = {k for k in rest.server.keys(WAREHOUSE, "shop/orders/data/") if k.endswith(".parquet")}
    assert len(data) == 4, data
    rest.no_changes()

    run = rest.ok("health", "policies", "--html", str(rest.root / "health.html"))
    assert "shop.orders" in run.stdout
    assert "shop.orders" in (rest.root / "health.html").read_text()
    [health] = json.loads(rest.ok("health", "policies", "--format", "json").stdout)["tables"]
    assert health["health"]["data_files"] == 4, health

    # compaction and expiry, the run's clock ten days on (every older snapshot past its 1-day max age)
    with monkeypatch.context() as clock:
        clock.setattr("tablepolicy.runtime.invocation.datetime", Later)  # the run's instant, read once
        run = rest.ok("maintain", "policies", "--only", "compaction", "--only", "snapshots", "--format", "json")
    assert steps(run) == [("rewrite_data_files", "done"), ("expire_snapshots", "done")], run.stdout
    live = {k for k in rest.server.keys(WAREHOUSE, "shop/orders/data/") if k.endswith(".parquet")}
    assert len(live) == 1 and not live & data, (sorted(data), sorted(live))  # compacted, the inputs deleted
    assert sorted(tuple(r) for r in spark.sql(f"SELECT id, qty, note FROM {NAME}.shop.orders").collect()) == [
        (0, 0, "spark"), (1, 1, "spark"), (2, 2, "spark"), (3, 3, "pyiceberg")]

    # an orphan in the table's data folder, removed past the declared 24h guard (the run's clock two days on)
    orphan = "shop/orders/data/stray-orphan.parquet"
    rest.server.s3().put_object(Bucket=WAREHOUSE, Key=orphan, Body=b"\0" * 64)  # type: ignore[attr-defined]
    with monkeypatch.context() as clock:
        clock.setattr("tablepolicy.runtime.invocation.datetime", Later)
        run = rest.ok("maintain", "policies", "--only", "orphan_files", "--format", "json")
    assert steps(run) == [("remove_orphan_files", "done")], run.stdout
    [step] = json.loads(run.stdout)["tables"][0]["steps"]
    assert step["effect"]["files_removed"] == 1, step
    after = rest.server.keys(WAREHOUSE, "shop/orders/")
    assert orphan not in after and live <= set(after), sorted(after)
    rest.no_changes()


class Later(datetime):
    """The clock ten days on."""

    @classmethod
    def now(cls, tz: Any = None) -> Any:
        return datetime.now(tz) + timedelta(days=10)


def steps(run: Run) -> list[tuple[str, str]]:
    return [(s["action"], s["status"]) for t in json.loads(run.stdout)["tables"] for s in t["steps"]]


def test_drift_names_a_change_made_outside_git(rest: Rest) -> None:
    table = rest.catalog().load_table("shop.orders")
    with table.transaction() as tx:
        tx.set_properties({"write.parquet.compression-codec": "snappy"})
    run = rest.cli("drift", "policies", "--detailed-exitcode")
    assert run.returncode == 2, run.stdout + run.stderr
    assert "write.parquet.compression-codec" in run.stdout, run.stdout
    assert NAME_MAPPING not in run.stdout, run.stdout  # the server's, not drift
    rest.ok("apply", "policies", "--auto-approve")
    assert rest.catalog().load_table("shop.orders").properties["write.parquet.compression-codec"] == "zstd"
    run = rest.cli("drift", "policies", "--detailed-exitcode")
    assert run.returncode == 0, run.stdout + run.stderr


def test_import_then_plan_has_no_changes(rest: Rest) -> None:
    """A table made by another client (pyiceberg), imported: the server's name mapping is not in the file, and
    plan finds nothing to do, again after a column is added in git and applied."""
    from pyiceberg.schema import Schema
    from pyiceberg.types import LongType, NestedField, StringType

    rest.catalog().create_table("shop.imported", Schema(NestedField(1, "id", LongType(), required=True),
                                                        NestedField(2, "name", StringType())),
                                properties={"write.metadata.previous-versions-max": "5"})
    assert NAME_MAPPING in rest.catalog().load_table("shop.imported").properties
    rest.ok("import", "shop.imported", "--out", "policies")
    path = rest.root / "policies" / "shop" / "imported.yaml"
    text = path.read_text()
    assert "name-mapping" not in text, text
    rest.no_changes()
    path.write_text(text.replace("columns:\n", "columns:\n", 1).rstrip("\n") + "\n")
    doc = yaml.safe_load(path.read_text())
    doc["columns"].append({"name": "added", "type": "string"})
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    rest.ok("apply", "policies", "--auto-approve")
    rest.no_changes()
    mapping = json.loads(rest.catalog().load_table("shop.imported").properties[NAME_MAPPING])
    assert {n for m in mapping for n in m["names"]} == {"id", "name", "added"}, mapping


def test_branches_and_tags(rest: Rest) -> None:
    path = rest.root / "policies" / "shop" / "orders.yaml"
    doc = yaml.safe_load(path.read_text())
    doc["refs"] = [{"branch": "audit", "max_ref_age": "7d"}, {"tag": "baseline"}]
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    rest.ok("apply", "policies", "--auto-approve")
    rest.no_changes()
    refs = rest.catalog().load_table("shop.orders").metadata.refs
    assert refs["audit"].snapshot_ref_type == "branch" and refs["baseline"].snapshot_ref_type == "tag", refs
    assert refs["audit"].max_ref_age_ms == 7 * 24 * 3600 * 1000


VIEW = "view: shop.big_orders\nsql: SELECT id, qty FROM shop.orders WHERE qty > 1\ncolumns: {id: the key, qty: null}\n"


def test_views_on_the_rest_catalog(rest: Rest) -> None:
    """SeaweedFS serves Iceberg views though its /v1/config lists no endpoints: both engines are told to ask
    (view-endpoints-supported). Created, re-planned to nothing, its SQL changed (one replace), read through Spark."""
    rest.write("shop/big_orders.yaml", VIEW)
    run = rest.ok("apply", "policies", "--auto-approve")
    assert "shop.big_orders" in run.stdout, run.stdout
    rest.no_changes()
    view = rest.catalog().load_view("shop.big_orders")
    assert "qty > 1" in view.metadata.versions[-1].representations[0].root.sql
    rest.write("shop/big_orders.yaml", VIEW.replace("qty > 1", "qty > 2"))
    rest.ok("apply", "policies", "--auto-approve")
    rest.no_changes()
    rows = spark_session().sql(f"SELECT id FROM {NAME}.shop.big_orders ORDER BY id").collect()
    assert [r.id for r in rows] == [3], rows
    run = rest.ok("import", "shop.big_orders", "--out", str(rest.root / "imported"))
    assert list((rest.root / "imported").rglob("big_orders.yaml")), run.stdout


def test_a_server_without_views_refuses_the_views_alone(rest: Rest, tmp_path: Path) -> None:
    """With views turned off for the catalog (as for a server serving none), the view is refused at its file naming
    why (TP465, a warning), left out of the plan, while the table beside it plans and applies."""
    props = {**rest.server.catalog_properties(), "view-endpoints-supported": "false"}
    (tmp_path / ".pyiceberg.yaml").write_text(yaml.safe_dump({"catalog": {NAME: props}}))
    (tmp_path / "policies" / "shop").mkdir(parents=True)
    (tmp_path / "policies" / "shop" / "big_orders.yaml").write_text(VIEW)
    orders = (rest.root / "policies" / "shop" / "orders.yaml").read_text()
    (tmp_path / "policies" / "shop" / "orders.yaml").write_text(orders.replace("commit.retry.num-retries: 7",
                                                                               "commit.retry.num-retries: 9"))
    run = tablepolicy("plan", "policies", cwd=tmp_path, env={"TABLEPOLICY_CATALOG": NAME})
    rest.outputs += [run.stdout, run.stderr]
    assert run.returncode == 0, run.stdout + run.stderr
    assert "big_orders.yaml:1:1: warning TP465: view shop.big_orders is not planned: cannot read view" in run.stderr, \
        run.stderr
    assert "view-endpoints-supported" in run.stderr, run.stderr
    assert "7 -> 9" in run.stdout and "big_orders" not in run.stdout, run.stdout
    run = tablepolicy("apply", "policies", "--auto-approve", cwd=tmp_path, env={"TABLEPOLICY_CATALOG": NAME})
    rest.outputs += [run.stdout, run.stderr]
    assert run.returncode == 0 and "TP465" in run.stderr, run.stdout + run.stderr
    assert rest.catalog().load_table("shop.orders").properties["commit.retry.num-retries"] == "9"
    assert "qty > 2" in rest.catalog().load_view("shop.big_orders").metadata.versions[-1].representations[0].root.sql


def test_doctor_asks_for_the_s3a_jars_where_a_selected_table_is_on_s3(rest: Rest, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A REST definition naming its warehouse and no S3 settings (keys from the environment, as on a cloud
    runner): the definition alone does not say S3, the table's location does. With the S3A jars hidden, doctor
    names them, and the table that needs them."""
    props = {k: v for k, v in rest.server.catalog_properties().items() if not k.startswith("s3.")}
    (tmp_path / ".pyiceberg.yaml").write_text(yaml.safe_dump({"catalog": {NAME: props}}))
    (tmp_path / "policies" / "shop").mkdir(parents=True)
    (tmp_path / "policies" / "shop" / "orders.yaml").write_text(
        (rest.root / "policies" / "shop" / "orders.yaml").read_text())
    monkeypatch.setattr("tablepolicy.runtime.spark.jars.s3a_jar_dir", lambda: tmp_path / "no-jars")
    run = tablepolicy("doctor", "policies", "--format", "json", cwd=tmp_path, env={"TABLEPOLICY_CATALOG": NAME})
    rest.outputs += [run.stdout, run.stderr]
    checks = {c["check"]: c for c in json.loads(run.stdout)["checks"]}
    assert "s3a jars" in checks, checks
    # and this definition names no lock location: runs in another clone would not see this one's locks
    assert not checks["locks"]["ok"] and "set tablepolicy.lock-location: s3://" in checks["locks"]["fix"], checks
    assert str(tmp_path / "no-jars") in checks["s3a jars"]["detail"], checks["s3a jars"]
    assert "needed for the tables on S3: shop.orders" in checks["s3a jars"]["detail"], checks["s3a jars"]
    (tmp_path / "policies" / "shop" / "orders.yaml").unlink()  # no table selected on S3: nothing asks for them
    run = tablepolicy("doctor", "policies", "--format", "json", cwd=tmp_path, env={"TABLEPOLICY_CATALOG": NAME})
    assert "s3a jars" not in {c["check"] for c in json.loads(run.stdout)["checks"]}, run.stdout


def test_the_server_vends_no_credentials(rest: Rest) -> None:
    """Asked for vended credentials (the header pyiceberg sends, and Spark's side is told to send), SeaweedFS 4.48
    answers loadTable with an empty config: both engines read the table files with the definition's own s3.* keys
    (README, "Catalogs")."""
    import urllib.request

    token = rest.server.token()
    request = urllib.request.Request(f"{rest.server.uri}/v1/{WAREHOUSE}/namespaces/shop/tables/orders",
                                     headers={"Authorization": f"Bearer {token}",
                                              "X-Iceberg-Access-Delegation": "vended-credentials"})
    with urllib.request.urlopen(request, timeout=10) as response:
        answer = json.load(response)
    assert answer["metadata-location"].startswith(f"s3://{WAREHOUSE}/shop/orders/metadata/")
    assert answer.get("config", {}) == {} and not answer.get("storage-credentials"), answer.get("config")
