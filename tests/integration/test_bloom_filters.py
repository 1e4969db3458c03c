"""Bloom filters on the erasure key through real Spark: a table declaring ``lifecycle.erasure.key`` is planned
Iceberg's per-column bloom filter properties (with their owning setting), apply sets them and planning again
finds nothing; Spark's next INSERT writes parquet footers with a filter on each key column (a nested one too,
named by its dotted path); ``health`` counts the files written before the filters as uncovered until
compaction (``maintain``'s rewrite_data_files) rewrites them with filters; erase's own rewrite (pyarrow) writes
them too; a renamed key column takes its filter along, and removing erasure unsets what it owned while a filter
written by hand stays."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from tablepolicy.cli.app import app
from tablepolicy.compiler.diff.changes import SetProperties
from tablepolicy.compiler.maintenance.due import maintenance_plan
from tablepolicy.compiler.maintenance.health import BloomCoverage
from tablepolicy.compiler.validate import validate
from tablepolicy.runtime.catalog.reader import CatalogReader
from tablepolicy.runtime.health import CatalogHealth, read_health
from tablepolicy.runtime.maintain import run_maintenance
from tablepolicy.runtime.spark.session import SparkOptions
from tests.integration.conftest import Lake, sqlite_lake
from tests.integration.evolve import apply, converge, plan

pytestmark = pytest.mark.spark

COLUMNS = """table: bloom.events
columns:
  - {{name: id, type: long}}
  - {{name: {account}, type: string{renamed}}}
  - {{name: who, type: {{struct: [{{name: uid, type: long}}]}}}}
  - {{name: note, type: string}}
{rest}"""
COMPACTION = "  compaction: {min_input_files: 2}\n"
ON = "write.parquet.bloom-filter-enabled.column."


def policy(rest: str, account: str = "account", renamed: str = "") -> str:
    return COLUMNS.format(account=account, renamed=f", renamed_from: {renamed}" if renamed else "", rest=rest)


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lake]:
    """One Spark session for the module, on the embedded SQLite catalog."""
    with sqlite_lake(tmp_path_factory.mktemp("lake")) as made:
        yield made


def data_files(lake: Lake) -> list[str]:
    return sorted(r.file_path.removeprefix("file:") for r in
                  lake.spark.sql("SELECT file_path FROM lake.bloom.events.files WHERE content = 0").collect())


def filtered_columns(path: str) -> set[str]:
    """The columns whose chunk carries a bloom filter in every row group of ``path``."""
    meta = pq.ParquetFile(path).metadata
    columns = {meta.row_group(0).column(i).path_in_schema for i in range(meta.num_columns)}
    return {c for c in columns if all(
        (chunk := next(meta.row_group(g).column(i) for i in range(meta.num_columns)
                       if meta.row_group(g).column(i).path_in_schema == c)).bloom_filter_offset is not None
        and (chunk.bloom_filter_length or 0) > 0 for g in range(meta.num_row_groups))}


def coverage(lake: Lake) -> BloomCoverage | None:
    with CatalogReader(lake.config) as reader:
        table = reader.pyiceberg_table(("bloom", "events"))
        assert table is not None
        return read_health(("bloom", "events"), table, footers=True).bloom_filters


def test_filters_planned_written_counted_and_compacted_in(lake: Lake, tmp_path: Path) -> None:
    converge(lake, policy("lifecycle:\n" + COMPACTION))
    lake.spark.sql("INSERT INTO lake.bloom.events VALUES (1, 'a-1', named_struct('uid', 11), 'before')")
    [before] = data_files(lake)
    assert filtered_columns(before) == set()
    assert coverage(lake) is None  # no erasure key: no footer is read

    erasure = policy("lifecycle:\n" + COMPACTION + "  erasure: {key: [account, who.uid], within: 30d}\n")
    result = plan(lake, erasure)
    owned = {(c.key, c.new, c.setting) for change in result.plan.changes if isinstance(change, SetProperties)
             for c in change.changes if c.key.startswith("write.parquet.bloom-filter")}
    assert owned == {(ON + "account", "true", "lifecycle.erasure.bloom_filter"),
                     (ON + "who.uid", "true", "lifecycle.erasure.bloom_filter")}
    assert {str(c.safety) for c in result.plan.changes} == {"safe"}
    converge(lake, erasure)  # applies it; planning again finds nothing

    lake.spark.sql("INSERT INTO lake.bloom.events VALUES (2, 'a-2', named_struct('uid', 12), 'after')")
    [after] = [f for f in data_files(lake) if f != before]
    assert filtered_columns(after) == {"account", "who.uid"}  # Spark wrote them; none on id or note
    found = coverage(lake)
    assert found is not None and (found.columns, found.files, found.covered_files, found.unread) == (
        ("account", "who.uid"), 2, 1, 0)
    assert found.bytes == sum(Path(f).stat().st_size for f in (before, after))
    assert found.covered_bytes == Path(after).stat().st_size

    policies = tmp_path / "policies"
    policies.mkdir()
    (policies / "t.yaml").write_text(erasure)
    project, diagnostics = validate(policies)
    assert not diagnostics.has_errors, [d.render() for d in diagnostics]
    now = datetime.now(UTC) + timedelta(days=1)
    with CatalogReader(lake.config) as reader:
        due = maintenance_plan(project, CatalogHealth(reader, None, footers=True), now)
    assert [a.action for t in due.tables for a in t.actions] == ["rewrite_data_files"]
    assert due.tables[0].health.bloom_filters == found  # health's own figure, as the CLI shows it
    report = run_maintenance(due, lake.config, SparkOptions(), lock_dir=tmp_path)
    assert not report.failed, [s.error for s in report.steps]
    [compacted] = data_files(lake)
    assert filtered_columns(compacted) == {"account", "who.uid"}
    found = coverage(lake)
    assert found is not None and (found.files, found.covered_files) == (1, 1)


def test_a_renamed_key_takes_its_filter_and_erasure_removed_unsets_them(lake: Lake) -> None:
    lake.spark.sql("CREATE NAMESPACE IF NOT EXISTS lake.bloom")
    lake.spark.sql("DROP TABLE IF EXISTS lake.bloom.events")
    converge(lake, policy("properties: {write.parquet.bloom-filter-enabled.column.note: true}\n"
                          "lifecycle:\n  erasure: {key: [account], within: 30d, bloom_filter: {fpp: 0.001}}\n"))
    renamed = policy("properties: {write.parquet.bloom-filter-enabled.column.note: true}\n"
                     "lifecycle:\n  erasure: {key: [subject], within: 30d, bloom_filter: {fpp: 0.001}}\n",
                     account="subject", renamed="account")
    result = plan(lake, renamed)
    assert [c.summary for c in result.plan.changes] == [  # the old column's keys unset, the new one's set
        "rename column account to subject (field id 2 kept)",
        "set tablepolicy.erasure.key: account -> subject, write.parquet.bloom-filter-enabled.column.subject: (unset) "
        "-> true, write.parquet.bloom-filter-fpp.column.subject: (unset) -> 0.001",
        "unset write.parquet.bloom-filter-enabled.column.account (was true), write.parquet.bloom-filter-fpp.column."
        "account (was 0.001)"]
    apply(lake, result)
    again = plan(lake, renamed)
    assert again.plan.changes == [], [c.summary for c in again.plan.changes]
    with CatalogReader(lake.config) as reader:
        table = reader.table(("bloom", "events"))
    assert table is not None
    filters = {k: v for k, v in table.state.properties.items() if k.startswith("write.parquet.bloom-filter")}
    assert filters == {ON + "subject": "true", "write.parquet.bloom-filter-fpp.column.subject": "0.001",
                       ON + "note": "true"}
    lake.spark.sql("INSERT INTO lake.bloom.events VALUES (3, 'a-3', named_struct('uid', 13), 'renamed')")
    assert all(filtered_columns(f) == {"subject", "note"} for f in data_files(lake))

    converge(lake, policy("properties: {write.parquet.bloom-filter-enabled.column.note: true}\n",
                          account="subject"))
    with CatalogReader(lake.config) as reader:
        table = reader.table(("bloom", "events"))
    assert table is not None
    assert {k: v for k, v in table.state.properties.items() if k.startswith("write.parquet.bloom-filter")} == {
        ON + "note": "true"}


def test_erase_rewrites_a_file_with_its_filters(lake: Lake, tmp_path: Path) -> None:
    lake.spark.sql("DROP TABLE IF EXISTS lake.bloom.events")
    text = policy("lifecycle:\n  erasure: {key: [account], within: 30d, bloom_filter: {fpp: 0.02}}\n")
    converge(lake, text)
    for i in (1, 2):  # one file each, holding a subject and another
        lake.spark.sql(f"INSERT INTO lake.bloom.events SELECT /*+ REPARTITION(1) */ * FROM VALUES "
                       f"({i}, 'a-{i}', named_struct('uid', {i}), 'x'), "
                       f"({i + 10}, 'b-{i}', named_struct('uid', {i + 10}), 'y') AS v(id, account, who, note)")
    before = data_files(lake)
    assert len(before) == 2
    policies = tmp_path / "policies"
    policies.mkdir()
    (policies / "t.yaml").write_text(text)
    requests = tmp_path / "requests.csv"
    requests.write_text(f"id,received,account\nREQ-1,{datetime.now(UTC).date()},a-1\n")
    env = {f"PYICEBERG_CATALOG__LAKE__{key.upper()}": value for key, value in lake.config.properties.items()}
    result = CliRunner(env={**env, "NO_COLOR": "1"}).invoke(
        app, ["erase", str(policies), "--requests", str(requests), "--catalog", "lake"])
    lake.reload()  # erase commits through pyiceberg
    assert result.exit_code == 0, result.output
    assert sorted(r.account for r in lake.spark.sql("SELECT account FROM lake.bloom.events").collect()) == [
        "a-2", "b-1", "b-2"]
    [rewritten] = [f for f in data_files(lake) if f not in before]
    assert filtered_columns(rewritten) == {"account"}  # pyarrow wrote it, as Spark writes the others
    found = coverage(lake)
    assert found is not None and (found.files, found.covered_files) == (2, 2)
