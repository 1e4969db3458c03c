"""Every kind of evolution, one after another on one table with rows, on object storage: a real S3 server
(moto on 127.0.0.1) holds the warehouse, the catalog is the embedded SQLite one or PostgreSQL; the same
sequence runs on local disk as the reference. Each step is planned, applied as apply runs it
(tests/integration/evolve.py: Spark's parser first, creates and spec updates through the Iceberg API) and
planned again to nothing, the planner's reading of the metadata equal to pyiceberg's full parse of it. After
the last step the field ids and the rows are exactly the expected ones, the same on S3 as on disk, and the
bucket holds the table's metadata and data objects.

One moto server, one PostgreSQL server and one Spark session (with the three catalogs) for the module.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import pytest

from tablepolicy.compiler.catalog.config import CatalogConfig
from tablepolicy.runtime.catalog.reader import CatalogReader
from tablepolicy.runtime.spark.session import SparkOptions, start_session
from tests.integration.conftest import Lake
from tests.integration.evolve import converge
from tests.integration.spark_reset import stop_spark
from tests.integration.test_plan_evolution import BASE
from tests.pgserver import postgres_server
from tests.s3server import SECRET_KEY, S3Server, s3_server

pytestmark = pytest.mark.spark
BUCKET = "lake-evolve"  # a bucket of its own: Hadoop caches file systems by bucket
KINDS = ["disk", "sqlite", "postgresql"]
NAMES = {"disk": "evdisk", "sqlite": "evs3lite", "postgresql": "evs3pg"}

# (step, {old: new}) applied in turn to the policy as it stands; every kind of change apply makes
SEQUENCE: list[tuple[str, dict[str, str]]] = [
    ("add top-level and nested", {"  - {name: ratio": "  - {name: channel, type: string}\n  - {name: ratio",
                                  "{name: y, type: double}": "{name: y, type: double}, {name: z, type: double}"}),
    ("rename", {"{name: qty, type: int}": "{name: quantity, type: int, renamed_from: qty}"}),
    ("widen int, float, decimal", {"{name: quantity, type: int,": "{name: quantity, type: long,",
                                   "{name: ratio, type: float}": "{name: ratio, type: double}",
                                   '"decimal(10,2)"': '"decimal(12,2)"'}),
    ("identifier fields", {"partition_by:": "identifier_fields: [id]\npartition_by:"}),
    ("move", {"  - {name: id, type: long, required: true}\n": "",
              "  - {name: note, type: string, doc: free text}\n":
              "  - {name: note, type: string, doc: free text}\n  - {name: id, type: long, required: true}\n"}),
    ("identifier fields dropped, make optional", {"identifier_fields: [id]\n": "",
                                                  "{name: id, type: long, required: true}": "{name: id, type: long}"}),
    ("drop with approval", {"  - {name: ratio, type: double}\n": "",
                            "partition_by:": "allow_destructive: [drop_column ratio]\npartition_by:"}),
    ("partition add", {"  - day(ts)\n": "  - day(ts)\n  - bucket(8, id)\n"}),
    ("partition replace", {"  - day(ts)\n": "  - hour(ts)\n"}),
    ("partition drop", {"  - bucket(8, id)\n": ""}),
    ("sort order", {"partition_by:": "sort_by: [ts desc, id]\npartition_by:"}),
    ("properties and doc", {"partition_by:": "properties: {commit.retry.num-retries: 7}\npartition_by:",
                            "doc: free text": "doc: the buyer's note"}),
]
# rows written between steps, in the columns of that moment
WRITES: dict[int, dict[str, str]] = {
    0: {"id": "1", "ts": "TIMESTAMP '2026-11-20 10:00:00+00:00'", "qty": "5", "price": "1.25", "ratio": "0.5",
        "note": "'one'"},
    2: {"id": "2", "ts": "TIMESTAMP '2026-11-21 11:00:00+00:00'", "quantity": "6", "price": "2.50",
        "channel": "'web'", "note": "'two'"},
    7: {"id": "3", "ts": "TIMESTAMP '2026-11-22 12:00:00+00:00'", "quantity": "3000000000",
        "price": "1234567890.12", "channel": "'app'", "note": "'three'"},
    9: {"ts": "TIMESTAMP '2026-11-22 13:00:00+00:00'", "quantity": "7", "note": "'no id'"},
}
# the ids the table ends with: each column keeps the id it was created with, through rename, widening and move;
# the added ones take the next free ids (the batch adds point.z first); the dropped ratio's id (5) is gone
FIELD_IDS = {("ts",): 2, ("quantity",): 3, ("price",): 4, ("channel",): 18, ("note",): 6, ("id",): 1,
             ("point",): 7, ("point", "x"): 10, ("point", "y"): 11, ("point", "z"): 17, ("items",): 8,
             ("items", "element"): 12, ("items", "element", "sku"): 13, ("attrs",): 9, ("attrs", "key"): 14,
             ("attrs", "value"): 15, ("attrs", "value", "v"): 16}
ROWS = [(None, 7, None, None, "no id"), (1, 5, Decimal("1.25"), None, "one"), (2, 6, Decimal("2.50"), "web", "two"),
        (3, 3000000000, Decimal("1234567890.12"), "app", "three")]


@dataclass(frozen=True)
class Store:
    s3: S3Server
    lakes: dict[str, Lake]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    root = tmp_path_factory.mktemp("evolve")
    with contextlib.ExitStack() as stack:
        stop_spark()  # a session left by another module would keep its Hadoop settings: start ours afresh
        s3 = stack.enter_context(s3_server())
        s3.bucket(BUCKET)
        postgres = stack.enter_context(postgres_server())
        (root / "warehouse").mkdir()
        configs = {
            "sqlite": CatalogConfig(NAMES["sqlite"], {"type": "sql", "uri": f"sqlite:///{root / 's3.db'}",
                                                      "warehouse": f"s3://{BUCKET}/wh-sqlite",
                                                      **s3.pyiceberg_properties()}),
            "postgresql": CatalogConfig(NAMES["postgresql"], {"type": "sql", "uri": postgres,
                                                              "warehouse": f"s3://{BUCKET}/wh-postgresql",
                                                              **s3.pyiceberg_properties()}),
            "disk": CatalogConfig(NAMES["disk"], {"type": "sql", "uri": f"sqlite:///{root / 'disk.db'}",
                                                  "warehouse": (root / "warehouse").as_uri()}),
        }
        spark = start_session(configs["sqlite"], SparkOptions())  # its Hadoop S3A settings serve both S3 catalogs
        stack.callback(spark.stop)
        lakes = {kind: Lake(config, spark) for kind, config in configs.items()}
        for kind in ("postgresql", "disk"):
            lakes["sqlite"].register(configs[kind])
        yield Store(s3, lakes)


def objects(store: Store, prefix: str) -> list[str]:
    client: Any = store.s3.client()
    return [o["Key"] for page in client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix)
            for o in page.get("Contents", [])]


def write(lake: Lake, table: str, values: dict[str, str]) -> None:
    """One row in the table's columns of the moment, NULL where ``values`` names none."""
    columns = lake.spark.table(table).columns
    lake.spark.sql(f"INSERT INTO {table} SELECT " + ", ".join(values.get(c, "NULL") for c in columns))


@pytest.mark.parametrize("kind", KINDS)
def test_every_kind_of_evolution_lands_the_same_ids_and_rows(store: Store, kind: str) -> None:
    lake = store.lakes[kind]
    table = f"{lake.config.name}.evo.seq"
    text = BASE.format(name="seq", extra="")
    converge(lake, text)
    for i, (step, edits) in enumerate(SEQUENCE):
        if i in WRITES:
            write(lake, table, WRITES[i])
        for old, new in edits.items():
            assert text.count(old) == 1, (step, old)
            text = text.replace(old, new)
        converge(lake, text)  # planned, applied, planned again to nothing

    with CatalogReader(lake.config) as reader:
        current = reader.table(("evo", "seq"))
    assert current is not None
    state = current.state
    assert state.ids_by_path == FIELD_IDS
    assert [f.name for f in state.columns.fields] == ["ts", "quantity", "price", "channel", "note", "id", "point",
                                                      "items", "attrs"]
    assert not any(f.required for f in state.columns.fields)
    assert state.identifier_field_ids == ()
    assert [(p.source, str(p.transform)) for p in state.partition] == [(("ts",), "hour")]
    assert [(s.source, s.direction) for s in state.sort] == [(("ts",), "desc"), (("id",), "asc")]
    assert state.properties["commit.retry.num-retries"] == "7"
    lake.reload()
    rows = lake.spark.sql(f"SELECT id, quantity, price, channel, note FROM {table} ORDER BY id NULLS FIRST").collect()
    assert [tuple(r) for r in rows] == ROWS

    if kind != "disk":  # the table lives in the bucket: its metadata and data objects listed with boto3
        assert current.state.location is not None
        assert current.state.location.startswith(f"s3://{BUCKET}/wh-{kind}/"), current.state.location
        keys = objects(store, current.state.location.removeprefix(f"s3://{BUCKET}/") + "/")
        assert sum(k.endswith(".metadata.json") for k in keys) >= len(SEQUENCE) + 1, keys
        assert sum(k.endswith(".parquet") and "/data/" in k for k in keys) == len(WRITES), keys
        assert SECRET_KEY not in current.metadata_location
