"""Atomic creates and partition changes on real catalogs, plan-time checks that keep apply from failing
half-way, and case-sensitive tables.

A created table is one commit whose spec 0 and first sort order are the declared ones; a partition
replace or a multi-field spec update is one commit, also while another process appends; every step is
parsed by Spark before any runs.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

import pytest

from tablepolicy.compiler.desired import desired_states
from tablepolicy.compiler.model.table import TableState, default_partition_name, field_paths
from tablepolicy.compiler.plan.model import CatalogRef
from tablepolicy.compiler.plan.planner import make_plan
from tablepolicy.compiler.plan.steps import Step
from tablepolicy.compiler.sql.statements import change_sql
from tablepolicy.compiler.validate import validate
from tablepolicy.runtime.apply import apply_plan
from tablepolicy.runtime.catalog.reader import CatalogReader, open_catalog
from tablepolicy.runtime.executor import ExecutionError, check_steps
from tablepolicy.runtime.spark.session import SparkOptions
from tests.integration.conftest import Lake, assert_table_matches
from tests.integration.evolve import converge, plan, project_of
from tests.integration.test_ddl_spark import TRICKY

pytestmark = pytest.mark.spark
ROOT = Path(__file__).resolve().parents[2]


def apply_dir(lake: Lake, policies: Path, journal: Path) -> None:
    project, diagnostics = validate(policies)
    assert not diagnostics.has_errors, [d.render() for d in diagnostics]
    with CatalogReader(lake.config) as reader:
        result = make_plan(project, reader, CatalogRef.of(lake.config), today=date(2026, 1, 15))
    assert not result.refused, [d.render() for d in result.diagnostics]
    apply_plan(result.plan, lake.config, SparkOptions(), journal_path=journal, policies=policies)


def assert_created_as_declared(lake: Lake, state: TableState) -> None:
    """pyiceberg's reading: one metadata file, spec 0 and the first sort order exactly as declared."""
    table = open_catalog(lake.config).load_table(state.name)
    paths = field_paths(table.schema().as_struct())
    assert table.metadata.metadata_log == [], "more than one commit"
    assert table.schema().as_struct() == state.columns  # the field ids a fresh CREATE TABLE assigns
    assert tuple(table.schema().identifier_field_ids) == state.identifier_field_ids
    spec0 = table.specs()[0]
    assert [(paths[f.source_id], str(f.transform), f.name) for f in spec0.fields] == [
        (f.source, str(f.transform), f.name or default_partition_name(f)) for f in state.partition]
    sorted_orders = [o for o in table.metadata.sort_orders if not o.is_unsorted]
    declared = [(f.source, str(f.transform), f.direction, f.nulls) for f in state.sort]
    first = [(paths[f.source_id], str(f.transform), f.direction.value, f.null_order.value.removeprefix("nulls-"))
             for f in (sorted_orders[0].fields if sorted_orders else [])]
    assert first == declared


def test_example_tables_are_created_in_one_commit_as_declared(lake: Lake, tmp_path: Path) -> None:
    policies = shutil.copytree(ROOT / "policies", tmp_path / "policies")
    for file in policies.rglob("*.yaml"):
        text = file.read_text()
        for ns in ("ads", "logs", "security"):
            text = text.replace(f"table: {ns}.", f"table: at_{ns}.").replace(f"namespace: {ns}", f"namespace: at_{ns}")
        file.write_text(text)
    apply_dir(lake, policies, tmp_path / "j.jsonl")
    project, _ = validate(policies)
    states = desired_states(project)
    assert any(f.name for s in states for f in s.partition) and any(s.sort for s in states)
    assert any(s.identifier_fields for s in states)
    with CatalogReader(lake.config) as reader:
        for state in states:
            current = reader.table(state.name)
            assert current is not None
            assert_table_matches(current.state, state)
            assert current.state.properties["tablepolicy.plan-id"]  # the stamp apply adds, in the same commit
            assert_created_as_declared(lake, state)


def test_names_that_need_quoting_are_created_in_one_commit(lake: Lake) -> None:
    converge(lake, TRICKY)
    [state] = desired_states(project_of(TRICKY))
    assert_created_as_declared(lake, state)


def test_the_plan_shows_the_create_as_one_atomic_statement(lake: Lake) -> None:
    text = (ROOT / "policies/logs/app_events.yaml").read_text().replace("table: logs.", "table: shown.")
    result = plan(lake, text)
    [create] = [c for c in result.plan.changes if c.action == "create_table"]
    [sql] = change_sql(create, "lake")
    assert sql.startswith("-- one atomic create through the Iceberg catalog API")
    assert "PARTITIONED BY (hours(`event_time`), bucket(8, `service`))" in sql
    assert "-- partition field names: bucket(8, `service`) AS `service_shard`" in sql
    assert "-- write order: `service` ASC NULLS FIRST, `event_time` DESC NULLS LAST" in sql
    lake.parse(sql)


WRITER = """
import sys, time
from pathlib import Path
import pyarrow as pa
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.exceptions import CommitFailedException
uri, warehouse, stop, count, name = sys.argv[1:6]
catalog = SqlCatalog("lake", uri=uri, warehouse=warehouse)
written = 0
while not Path(stop).exists():
    try:
        table = catalog.load_table(("atomic", name))
        table.append(pa.table({"id": pa.array([written], pa.int64()),
                               "ts": pa.array([1_700_000_000_000_000 + written * 3_600_000_000],
                                              pa.timestamp("us", tz="UTC"))}))
        written += 1
        Path(count + ".tmp").write_text(str(written))
        Path(count + ".tmp").replace(count)  # atomic: a reader never sees a half-written count
    except (CommitFailedException, IndexError, ValueError):
        time.sleep(0.02)  # lost a race with the apply: load the table again and append once more
print(written)
"""
WRITES = "table: atomic.{name}\ncolumns:\n  - {{name: id, type: long}}\n  - {{name: ts, type: timestamptz}}\n" \
         "partition_by:\n"


def _written(count: Path) -> int:
    text = count.read_text() if count.exists() else ""
    return int(text) if text else 0


def _wait_for(count: Path, at_least: int) -> None:
    deadline = time.time() + 120
    while time.time() < deadline:
        if _written(count) >= at_least:
            return
        time.sleep(0.05)
    raise TimeoutError(f"the writer did not reach {at_least} commits")


@pytest.mark.parametrize(("name", "new_spec", "expected"), [
    ("replace", "  - hour(ts)\n", [("ts", "hour")]),
    ("replace_and_add", "  - hour(ts)\n  - {field: 'bucket(4, id)', name: shard}\n",
     [("ts", "hour"), ("id", "bucket[4]")]),
], ids=["replace", "replace_and_add"])
def test_partition_change_with_a_writer_in_another_process_is_one_new_spec(
        lake: Lake, tmp_path: Path, name: str, new_spec: str, expected: list[tuple[str, str]]) -> None:
    policies = tmp_path / "policies"
    policies.mkdir()
    (policies / "t.yaml").write_text(WRITES.format(name=name) + "  - day(ts)\n")
    catalog = open_catalog(lake.config)
    apply_dir(lake, policies, tmp_path / "j1.jsonl")
    stop, count = tmp_path / "stop", tmp_path / "count"
    writer = subprocess.Popen([sys.executable, "-c", WRITER, lake.config.properties["uri"],
                               lake.config.properties["warehouse"], str(stop), str(count), name],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _wait_for(count, 3)
        (policies / "t.yaml").write_text(WRITES.format(name=name) + new_spec)
        apply_dir(lake, policies, tmp_path / "j2.jsonl")
        _wait_for(count, _written(count) + 3)
    finally:
        stop.touch()
        out, err = writer.communicate(timeout=120)
    assert writer.returncode == 0, err[-3000:]
    written = int(out.strip())
    table = catalog.load_table(("atomic", name))
    specs = table.specs()
    assert sorted(specs) == [0, 1], f"an intermediate spec was committed: {specs}"
    paths = field_paths(table.schema().as_struct())
    assert [(".".join(paths[f.source_id]), str(f.transform)) for f in specs[1].fields] == expected
    spec_of_files = {m.partition_spec_id for s in table.snapshots() for m in s.manifests(table.io)}
    assert spec_of_files == {0, 1}  # the writer wrote under the old spec, then under the new one
    assert table.scan().to_arrow().num_rows == written
    with CatalogReader(lake.config) as reader:
        project, _ = validate(policies)
        assert make_plan(project, reader, CatalogRef.of(lake.config), today=date(2026, 1, 15)).plan.changes == []


CASED = """table: cased.t
case_sensitive: true
columns:
  - {name: quantity, type: int}
"""


def test_a_case_sensitive_table_applies_and_converges(lake: Lake, tmp_path: Path) -> None:
    policies = tmp_path / "policies"
    policies.mkdir()
    (policies / "t.yaml").write_text(CASED + "  - {name: Quantity, type: long}\n")
    apply_dir(lake, policies, tmp_path / "j1.jsonl")  # created with both names
    (policies / "t.yaml").write_text(CASED + "  - {name: Quantity, type: long}\n  - {name: QUANTITY, type: string}\n"
                                     "  - {name: Note, type: string}\n  - {name: note, type: string}\n")
    apply_dir(lake, policies, tmp_path / "j2.jsonl")  # three adds beside names that differ only by case
    table = open_catalog(lake.config).load_table(("cased", "t"))
    assert [(f.field_id, f.name) for f in table.schema().fields] == [
        (1, "quantity"), (2, "Quantity"), (3, "QUANTITY"), (4, "Note"), (5, "note")]
    with CatalogReader(lake.config) as reader:
        project, _ = validate(policies)
        assert make_plan(project, reader, CatalogRef.of(lake.config), today=date(2026, 1, 15)).plan.changes == []
    assert lake.spark.conf.get("spark.sql.caseSensitive") == "false"  # restored after apply


def test_nothing_runs_when_any_statement_of_the_plan_does_not_parse(lake: Lake) -> None:
    base = "table: parsed.t\ncolumns:\n  - {name: id, type: long}\n"
    converge(lake, base)
    result = plan(lake, base + "  - {name: a, type: int}\nproperties: {app.x: '1'}\n")
    steps = [Step(sql, c, i) for i, c in enumerate(result.plan.changes, start=1) for sql in change_sql(c, "lake")]
    assert len(steps) == 2
    broken = [steps[0], Step(steps[1].sql.replace("SET TBLPROPERTIES", "SET TBLPROPERTY"), steps[1].change, 2)]
    before = open_catalog(lake.config).load_table(("parsed", "t")).metadata_location
    with pytest.raises(ExecutionError, match=r"step 2 \(set app.x: \(unset\) -> 1\) cannot run, nothing of it"):
        check_steps(lake.spark, "lake", broken)
    assert open_catalog(lake.config).load_table(("parsed", "t")).metadata_location == before


SORTED = """table: sortdrop.{name}
allow_destructive: [drop_column ratio]
columns:
  - {{name: id, type: long}}
{columns}sort_by: [{sort}]
"""


@pytest.mark.parametrize(("name", "sort", "added", "kinds"), [
    ("to_existing", "id desc", "", ["set_sort_order", "drop_column"]),
    ("to_new_column", "added", "  - {name: added, type: int}\n",
     ["set_sort_order", "drop_column", "add_column", "set_sort_order"]),
])
def test_dropping_a_sort_source_replaces_the_order_first(lake: Lake, name: str, sort: str, added: str,
                                                         kinds: list[str]) -> None:
    converge(lake, SORTED.format(name=name, columns="  - {name: ratio, type: float}\n", sort="ratio, id"))
    changed = SORTED.format(name=name, columns=added, sort=sort)
    assert [c.action for c in plan(lake, changed).plan.changes] == kinds
    converge(lake, changed)
