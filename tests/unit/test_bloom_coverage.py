"""health's bloom filter coverage (runtime/bloom_coverage.py): a data file counts as covered when its footer holds
a filter on every erasure key column asked for, in every row group; columns are matched by field id, so a file
written before a key column was renamed is read right. Real parquet files, read through pyiceberg's FileIO."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.io.pyarrow import PyArrowFileIO
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField, StringType, StructType

import tablepolicy
from tablepolicy.compiler.catalog.config import CatalogConfig
from tablepolicy.compiler.maintenance.due import HealthRequest
from tablepolicy.compiler.render.health_html import TableReport, refs_of, render_health_html
from tablepolicy.compiler.render.maintenance_text import bloom_lines, maintenance_json, render_health
from tablepolicy.runtime.bloom_coverage import coverage, key_filters
from tablepolicy.runtime.catalog.reader import CatalogReader
from tablepolicy.runtime.health import CatalogHealth

SCHEMA = Schema(NestedField(1, "id", LongType(), required=False),
                NestedField(2, "account", StringType(), required=False),
                NestedField(3, "s", StructType(NestedField(4, "x", LongType(), required=False)), required=False))
ON = "write.parquet.bloom-filter-enabled.column."
PROPERTIES = {"tablepolicy.erasure.key": "account,s.x", ON + "account": "true", ON + "s.x": "true", ON + "id": "true"}


def write(path: Path, filters: list[str], account: str = "account") -> tuple[str, int]:
    """A file of two row groups of 100 rows, with a bloom filter on each column of ``filters``."""
    def field(name: str, kind: pa.DataType, field_id: int) -> pa.Field:
        return pa.field(name, kind, metadata={b"PARQUET:field_id": str(field_id).encode()})
    schema = pa.schema([field("id", pa.int64(), 1), field(account, pa.string(), 2),
                        field("s", pa.struct([field("x", pa.int64(), 4)]), 3)])
    rows = pa.table({"id": range(200), account: [f"a{i}" for i in range(200)], "s": [{"x": i} for i in range(200)]},
                    schema=schema)
    pq.write_table(rows, path, row_group_size=100, bloom_filter_options={f: True for f in filters} or None)
    assert pq.ParquetFile(path).metadata.num_row_groups == 2
    return str(path), path.stat().st_size


CASES = [  # (id, files: name -> (filters, the account column's name in the file), covered names)
    ("a file without filters is not covered", {"old": ([], "account")}, []),
    ("a filter on every key column in every row group", {"new": (["account", "s.x"], "account")}, ["new"]),
    ("one key column without: not covered", {"half": (["account"], "account"), "id": (["id"], "account")}, []),
    ("a file written before the key column's rename, by field id",
     {"renamed": (["subject", "s.x"], "subject"), "old": ([], "account")}, ["renamed"]),
]


@pytest.mark.parametrize(("files", "covered"), [pytest.param(f, c, id=i) for i, f, c in CASES])
def test_coverage(tmp_path: Path, files: dict[str, tuple[list[str], str]], covered: list[str]) -> None:
    columns = key_filters(PROPERTIES, SCHEMA)
    assert columns == {"account": 2, "s.x": 4}  # the key columns asked for, not id (a filter by hand)
    listed = {name: write(tmp_path / f"{name}.parquet", *spec) for name, spec in files.items()}
    found = coverage(PyArrowFileIO(), columns, listed.values())
    assert (found.files, found.covered_files, found.unread) == (len(files), len(covered), 0)
    assert (found.bytes, found.covered_bytes) == (sum(s for _, s in listed.values()),
                                                  sum(listed[n][1] for n in covered))


def test_an_unreadable_footer_is_counted_and_said(tmp_path: Path) -> None:
    good = write(tmp_path / "good.parquet", ["account", "s.x"])
    (tmp_path / "torn.parquet").write_bytes(b"PAR1 torn")
    found = coverage(PyArrowFileIO(), key_filters(PROPERTIES, SCHEMA), [good, (str(tmp_path / "torn.parquet"), 9),
                                                                        (str(tmp_path / "gone.parquet"), 9)])
    assert (found.files, found.covered_files, found.unread) == (3, 1, 2)
    assert bloom_lines(found) == [
        f"1 of 3 data file(s) ({good[1]:,} of {good[1] + 18:,} bytes, {good[1] / (good[1] + 18):.0%}) have a filter "
        "on account, s.x; 2 footer(s) could not be read",
        "files written before the filters were set have none: erase reads them whole until compaction "
        "(tablepolicy maintain) rewrites them with filters"]


@pytest.mark.parametrize(("properties", "columns"), [
    ({}, {}),  # no erasure key: no coverage figure (and no footer read)
    ({ON + "account": "true"}, {}),  # a filter by hand, no erasure key
    ({"tablepolicy.erasure.key": "account"}, {}),  # filters turned off
    ({"tablepolicy.erasure.key": "account,gone", ON + "account": "true", ON + "gone": "true"}, {"account": 2}),
])
def test_which_columns_are_counted(properties: dict[str, str], columns: dict[str, int]) -> None:
    assert key_filters(properties, SCHEMA) == columns


def test_health_shows_the_coverage_in_text_json_and_html(tmp_path: Path) -> None:
    """Through the API on a real SQLite catalog: two files pyiceberg wrote (it writes no filters) and one written
    with a filter on the key, added to the table; maintain's decisions read no footer."""
    config = CatalogConfig("lake", {"type": "sql", "uri": f"sqlite:///{tmp_path / 'catalog.db'}",
                                    "warehouse": (tmp_path / "wh").as_uri()})
    catalog = SqlCatalog("lake", **config.properties)
    catalog.create_namespace("u")
    schema = Schema(NestedField(1, "id", LongType(), required=False),
                    NestedField(2, "account", StringType(), required=False))
    table = catalog.create_table("u.t", schema, properties={"tablepolicy.erasure.key": "account",
                                                            ON + "account": "true"})
    for i in range(2):
        table.append(pa.table({"id": [i], "account": [f"a{i}"]}, schema=schema.as_arrow()))
    filtered = tmp_path / "filtered.parquet"  # no field ids, as add_files wants: matched by name
    pq.write_table(pa.table({"id": [2], "account": ["a2"]}), filtered, bloom_filter_options={"account": True})
    table.add_files([str(filtered)])
    policies = tmp_path / "policies" / "u"
    policies.mkdir(parents=True)
    (policies / "t.yaml").write_text("table: u.t\ncolumns: [{name: id, type: long}, {name: account, type: string}]\n"
                                     "lifecycle: {erasure: {key: [account], within: 30d}}\n")
    outcome = tablepolicy.health(tmp_path / "policies", catalog=config, now=datetime(2026, 1, 15, tzinfo=UTC))
    [decided] = outcome.decided.tables
    found = decided.health.bloom_filters
    assert found is not None and (found.columns, found.files, found.covered_files, found.unread) == (
        ("account",), 3, 1, 0)
    assert found.covered_bytes == filtered.stat().st_size
    text = render_health(outcome.decided)
    assert (f"  bloom filters 1 of 3 data file(s) ({found.covered_bytes:,} of {found.bytes:,} bytes, "
            f"{found.covered_bytes / found.bytes:.0%}) have a filter on account\n") in text
    assert "compaction (tablepolicy maintain) rewrites them with filters" in text
    [document] = json.loads(maintenance_json(outcome.decided, "lake"))["tables"]
    assert document["health"]["bloom_filters"] == found.model_dump(mode="json")
    page = render_health_html([TableReport(t.health, t.actions, refs_of(t)) for t in outcome.decided.tables],
                              "lake", datetime(2026, 1, 15, tzinfo=UTC))
    assert '<p class="bloom">Bloom filters: 1 of 3 data file(s)' in page
    with CatalogReader(config) as reader:  # maintain: no footer read, no figure
        assert CatalogHealth(reader).health(("u", "t"), HealthRequest(None, None, None)).bloom_filters is None
