"""The erasure ledger in the lake (runtime/lake_ledger.py): Iceberg tables in the target catalog, on a SQLite
catalog, a PostgreSQL catalog and a SQLite catalog whose warehouse is S3 (moto on 127.0.0.1). What one runner
records, another runner (its own catalog connection, another project folder with no file of the first) reads; a
project file ledger of an earlier version is carried over once, with a message; drift never lists the ledger's
namespace as unmanaged. No JVM: the ledger is written through pyiceberg."""

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
