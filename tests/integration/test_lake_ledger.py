"""The erasure ledger in the lake (runtime/lake_ledger.py): Iceberg tables in the target catalog, on a SQLite
catalog, a PostgreSQL catalog and a SQLite catalog whose warehouse is S3 (moto on 127.0.0.1). What one runner
records, another runner (its own catalog connection, another project folder with no file of the first) reads; a
project file ledger of an earlier version is carried over once, with a message; drift never lists the ledger's
namespace as unmanaged; and the request table is erased of its done requests' keys on each store
(runtime/request_table.py). No JVM: both are written through pyiceberg."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path

import pytest
from pyiceberg.catalog import Catalog, load_catalog
from sqlalchemy import create_engine

from tablepolicy.compiler.catalog.config import CatalogConfig
from tablepolicy.compiler.erasure.ledger import Entry, State
from tablepolicy.runtime.lake_ledger import LEDGER, LakeLedger
from tablepolicy.runtime.ledger import LEDGER_FILE, Ledger, metadata, opened_ledger
from tests.pgserver import postgres_server
from tests.s3server import s3_server

NOW = datetime(2026, 11, 20, 9, 30, tzinfo=UTC)
PROOF = {"table": "ads.clicks", "requests": ["A", "B"], "complete": True, "rows_before": 6, "rows_after": 0}


@dataclass(frozen=True)
class Reader:
    """What opened_ledger reads of a CatalogReader: the catalog and its definition."""

    catalog: Catalog
    config: CatalogConfig


@pytest.fixture(scope="module", params=["sqlite", "postgresql", "s3"])
def properties(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    root = tmp_path_factory.mktemp("lake")
    with contextlib.ExitStack() as stack:
        uri = f"sqlite:///{root / 'catalog.db'}"
        warehouse = (root / "warehouse").as_uri()
        extra: dict[str, str] = {}
        if request.param == "postgresql":
            uri = stack.enter_context(postgres_server())
        elif request.param == "s3":
            s3 = stack.enter_context(s3_server())
            warehouse = s3.bucket("ledger") + "/wh"
            extra = s3.pyiceberg_properties()
        yield {"type": "sql", "uri": uri, "warehouse": warehouse, "tablepolicy-ledger": "table", **extra}


def catalog_of(properties: dict[str, str], name: str) -> Reader:
    """A runner's own connection to the catalog (a catalog name per test: the database is shared)."""
    return Reader(load_catalog(name, **properties), CatalogConfig(name, dict(properties)))


def entry(request: str, state: State, deadline: date = date(2026, 12, 2)) -> Entry:
    return Entry(request, "ads.clicks", date(2026, 11, 2), deadline, state, f"salt:{request.lower() * 64}"[:70])


def test_what_one_runner_records_another_reads(properties: dict[str, str], tmp_path: Path) -> None:
    name = f"lake_{tmp_path.name[-12:]}".replace("-", "_")
    first, second = tmp_path / "runner-1", tmp_path / "runner-2"
    with opened_ledger(catalog_of(properties, name), first, create=True) as ledger:
        assert isinstance(ledger, LakeLedger) and ledger.note is None
        ledger.record_pending([entry("A", State.PENDING), entry("B", State.PENDING)], NOW)
        ledger.record([entry("A", State.DONE)], PROOF, NOW)
        ledger.record_pending([entry("A", State.PENDING)], NOW)  # a pending note never undoes a done entry
    assert not (first / LEDGER_FILE).exists()  # nothing on the runner's disk
    with opened_ledger(catalog_of(properties, name), second, create=False) as other:
        found = other.entries(["ads.clicks"])
    assert {k: v.state for k, v in found.items()} == {("A", "ads.clicks"): State.DONE,
                                                      ("B", "ads.clicks"): State.PENDING}
    done = found[("A", "ads.clicks")]
    assert done.proof == PROOF and done.done_at == NOW and done.fingerprint.startswith("salt:")
    assert other.entries(["other.table"]) == {}
    with opened_ledger(catalog_of(properties, f"{name}_x"), second, create=False) as unrelated:
        assert unrelated.entries() == {}  # another catalog's rows are not this one's


def test_a_project_file_ledger_is_carried_over_once(properties: dict[str, str], tmp_path: Path) -> None:
    name = f"lake_{tmp_path.name[-12:]}".replace("-", "_")
    old = tmp_path / LEDGER_FILE
    engine = create_engine(f"sqlite:///{old}")
    metadata.create_all(engine)
    Ledger(engine, name, str(old), own_engine=True).record([entry("OLD", State.DONE)], PROOF, NOW)
    engine.dispose()

    with opened_ledger(catalog_of(properties, name), tmp_path, create=False) as reading:  # status: writes nothing
        assert "not carried over" in (reading.note or "") and ("OLD", "ads.clicks") in reading.entries()
    assert old.exists()
    with opened_ledger(catalog_of(properties, name), tmp_path, create=True) as ledger:
        assert "was carried over" in (ledger.note or "") and "1 entr(ies) and 1 proof(s)" in (ledger.note or "")
        assert ledger.entries()[("OLD", "ads.clicks")].proof == PROOF
    assert not old.exists() and (tmp_path / (LEDGER_FILE + ".carried-over")).exists()
    with opened_ledger(catalog_of(properties, name), tmp_path, create=True) as again:
        assert again.note is None  # once
        assert list(again.entries()) == [("OLD", "ads.clicks")]


def test_the_ledger_tables_are_iceberg_tables_of_the_catalog_and_never_unmanaged(properties: dict[str, str],
                                                                                   tmp_path: Path) -> None:
    from tablepolicy.compiler.drift import unmanaged
    from tablepolicy.compiler.importer import Inventory
    from tablepolicy.compiler.loader import Project

    name = f"lake_{tmp_path.name[-12:]}".replace("-", "_")
    reader = catalog_of(properties, name)
    with opened_ledger(reader, tmp_path, create=True) as ledger:
        ledger.record_pending([entry("A", State.PENDING)], NOW)
    table = reader.catalog.load_table(LEDGER)
    assert table.scan().to_arrow().num_rows >= 1
    inventory = Inventory(frozenset({("tablepolicy",), ("ads",)}), frozenset({LEDGER, ("ads", "x")}))
    listed, _ = unmanaged(Project(root=tmp_path), inventory)
    assert listed.namespaces == (("ads",),) and listed.tables == (("ads", "x"),)


def stored_bytes(properties: dict[str, str], location: str) -> bytes:
    """Every object under ``location`` (a local folder or an S3 prefix), read apart from pyiceberg."""
    if location.startswith("s3"):
        import boto3

        bucket, _, prefix = location.split("://", 1)[1].partition("/")
        client = boto3.client("s3", endpoint_url=properties["s3.endpoint"], region_name=properties["s3.region"],
                              aws_access_key_id=properties["s3.access-key-id"],
                              aws_secret_access_key=properties["s3.secret-access-key"])
        keys = [o["Key"] for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
                for o in page.get("Contents", [])]
        return b"".join(client.get_object(Bucket=bucket, Key=k)["Body"].read() for k in sorted(keys))
    root = Path(location.removeprefix("file:"))
    return b"".join(p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file())


def test_the_request_table_is_erased_of_its_keys_in_every_store(properties: dict[str, str], tmp_path: Path) -> None:
    """runtime/request_table.py on each store: the done requests' rows keep only the fingerprint, the snapshots that
    held the keys are expired and no object under the table's location holds a key; a pending request is kept."""
    import pyarrow as pa
    from pyiceberg.schema import Schema
    from pyiceberg.types import DateType, MapType, NestedField, StringType

    from tablepolicy.runtime.request_table import read_table, scrub

    name = f"lake_{tmp_path.name[-12:]}".replace("-", "_")
    catalog = catalog_of(properties, name).catalog
    namespace = f"privacy_{name}"
    catalog.create_namespace(namespace)
    table = catalog.create_table((namespace, "requests"), schema=Schema(
        NestedField(1, "id", StringType(), required=True), NestedField(2, "received", DateType(), required=True),
        NestedField(3, "deadline", DateType()),
        NestedField(4, "keys", MapType(5, StringType(), 6, StringType(), value_required=False), required=True),
        NestedField(7, "status", StringType()), NestedField(8, "fingerprint", StringType())))
    subjects = {"REQ-1": "first-subject@example.com", "REQ-2": "second-subject@example.com",
                "REQ-3": "still-pending@example.com"}
    for request, key in subjects.items():  # a commit each, as a portal appends them
        table.append(pa.Table.from_pylist([{"id": request, "received": date(2026, 11, 2), "deadline": None,
                                            "keys": [("user_id", key)], "status": "pending", "fingerprint": None}],
                                          schema=table.schema().as_arrow()))
    found = read_table(catalog, (namespace, "requests"))
    assert found.loaded is not None and [r.id for r in found.loaded.model.requests] == ["REQ-1", "REQ-2", "REQ-3"]

    done = scrub(catalog, (namespace, "requests"), {"REQ-1": "salt:" + "a" * 64, "REQ-2": "salt:" + "b" * 64},
                 lambda _message: None)
    assert done.requests == ("REQ-1", "REQ-2") and done.snapshots_checked == 1 and done.snapshots_expired >= 3
    table = catalog.load_table((namespace, "requests"))
    rows = {r["id"]: (r["status"], r["keys"], r["fingerprint"]) for r in table.scan().to_arrow().to_pylist()}
    assert rows == {"REQ-1": ("done", [], "salt:" + "a" * 64), "REQ-2": ("done", [], "salt:" + "b" * 64),
                    "REQ-3": ("pending", [("user_id", subjects["REQ-3"])], None)}
    stored = stored_bytes(properties, table.location())
    assert subjects["REQ-1"].encode() not in stored and subjects["REQ-2"].encode() not in stored
    assert subjects["REQ-3"].encode() in stored  # the check reads what is there: the pending key is found
    again = read_table(catalog, (namespace, "requests"))
    assert again.loaded is not None and [r.id for r in again.loaded.model.requests] == ["REQ-3"]
