"""The smaller things a new team met in its first hour (issue 36), each as the user sees it."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pytest
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import IdentityTransform
from pyiceberg.types import IntegerType, LongType, NestedField

from tablepolicy.compiler.diff.changes import PropertyChange, SetProperties
from tablepolicy.compiler.maintenance.due import MaintenancePlan, TableMaintenance
from tablepolicy.compiler.render.health_html import TableReport, render_health_html
from tablepolicy.compiler.render.maintenance_text import render_health
from tablepolicy.runtime.doctor import shortened
from tablepolicy.runtime.health import read_health
from tablepolicy.runtime.scaffold import CATALOG
from tests.cli_runner import tablepolicy

TABLE = "table: a.t\ncolumns:\n  - {name: x, type: int}\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "policies" / "a").mkdir(parents=True)
    (tmp_path / "policies" / "a" / "t.yaml").write_text(TABLE)
    return tmp_path


def embedded(project: Path) -> SqlCatalog:
    """The project's embedded catalog (.lake/ beside policies/), made with pyiceberg: no JVM."""
    (project / ".lake" / "warehouse").mkdir(parents=True)
    return SqlCatalog("lake", uri=f"sqlite:///{project / '.lake' / 'catalog.db'}",
                      warehouse=(project / ".lake" / "warehouse").as_uri())


def test_apply_stamps_read_as_records_not_as_properties_that_were_unset() -> None:
    stamp = SetProperties(table=("a", "t"), changes=(
        PropertyChange(key="tablepolicy.plan-id", old=None, new="0123abcd"),
        PropertyChange(key="tablepolicy.owner", old=None, new="me")))
    assert stamp.summary == "set tablepolicy.plan-id = 0123abcd, tablepolicy.owner: (unset) -> me"


def test_a_top_level_lifecycle_key_is_pointed_under_lifecycle(project: Path) -> None:
    (project / "policies" / "a" / "r.yaml").write_text(
        "table: a.r\ncolumns:\n  - {name: d, type: date}\nretention: {column: d, keep: 30d}\n")
    run = tablepolicy("validate", cwd=project)
    assert run.returncode == 1
    assert ("policies/a/r.yaml:4:1: error TP102: unknown key 'retention' in document\n"
            "    hint: 'retention' belongs under 'lifecycle:' (write lifecycle: {retention: ...})") in run.stderr


def test_validate_of_a_device_says_it_is_no_policy(project: Path) -> None:
    run = tablepolicy("validate", "/dev/null", cwd=project)
    assert run.returncode == 1
    assert "/dev/null is neither a folder nor a policy file (*.yaml, *.yml); give the project's policies/" in run.stderr
    assert "readable" not in run.stderr


@pytest.mark.parametrize("flags", [["--catalog", "a", "--catalog", "b"], ["-c", "a", "--catalog=b"],
                                   ["--env", "prod", "-e", "dev"]], ids=" ".join)
def test_a_target_flag_given_twice_is_refused(project: Path, flags: list[str]) -> None:
    run = tablepolicy("plan", *flags, cwd=project)
    assert run.returncode == 1
    assert "given twice" in run.stderr and "a run targets one; give it once" in run.stderr


def test_fmt_of_a_latin1_file_says_where_and_how_to_convert(project: Path) -> None:
    (project / "policies" / "a" / "l.yaml").write_bytes(b"table: a.l\ndescription: caf\xe9\ncolumns: []\n")
    run = tablepolicy("fmt", cwd=project)
    assert run.returncode == 1
    assert run.stderr == ("error: policies/a/l.yaml: not formatted, not UTF-8: byte 0xe9 at offset 27 cannot be "
                          "decoded (line 2, column 17); save the file as UTF-8 (from Latin-1: iconv -f latin1 -t "
                          "utf-8), then run fmt again\n")


def test_a_json_folder_given_to_apply_is_no_saved_plan(project: Path) -> None:
    (project / "old.json").mkdir()
    run = tablepolicy("apply", "old.json", cwd=project)
    assert run.returncode == 1
    assert run.stderr == ("error: old.json is a folder, not a saved plan: give the file tablepolicy plan --out wrote "
                          "(or a policies folder to plan and apply now)\n")


@pytest.mark.parametrize(("command", "flag"), [(["apply", "--dry-run"], "--json-report"),
                                               (["maintain", "--dry-run"], "--json-report"),
                                               (["erase", "--requests", "r.yaml", "--dry-run"], "--proof")])
def test_an_output_into_a_missing_folder_is_refused_before_any_work(project: Path, command: list[str],
                                                                   flag: str) -> None:
    run = tablepolicy(*command, flag, "missing/report.json", cwd=project)
    assert run.returncode == 1
    assert run.stderr == f"error: {flag} missing/report.json: folder missing does not exist; create it first\n"


def test_doctor_refuses_the_templates_placeholders(project: Path) -> None:
    (project / ".pyiceberg.yaml").write_text(CATALOG)
    run = tablepolicy("doctor", "--catalog", "prod", cwd=project)
    assert run.returncode == 1
    assert "still holds the template's placeholders for the bucket, host, password, user" in run.stdout + run.stderr


def test_a_long_message_is_cut_between_sentences_and_says_so() -> None:
    text = "The server refused the login. " * 20
    cut = shortened(text, 100)
    assert cut.startswith("The server refused the login. The server refused the login. The server refused the login.")
    assert cut.endswith(f"({len(text) - cut.index(' (') } more characters not shown)")


def test_health_says_how_many_partitions_it_leaves_out(tmp_path: Path) -> None:
    catalog = SqlCatalog("lake", uri=f"sqlite:///{tmp_path / 'catalog.db'}", warehouse=(tmp_path / "wh").as_uri())
    catalog.create_namespace("logs")
    schema = Schema(NestedField(1, "id", LongType()), NestedField(2, "day", LongType()))
    spec = PartitionSpec(PartitionField(source_id=2, field_id=1000, transform=IdentityTransform(), name="day"))
    table = catalog.create_table("logs.events", schema=schema, partition_spec=spec)
    table.append(pa.table({"id": list(range(31)), "day": list(range(31))}, schema=schema.as_arrow()))
    health = read_health(("logs", "events"), catalog.load_table("logs.events"))
    assert (len(health.partitions), health.partition_count, health.small_partition_count) == (20, 31, 31)
    page = render_health_html([TableReport(health, ())], "catalog 'lake' (sql)", datetime(2026, 11, 28, tzinfo=UTC))
    assert "20 of 31 partitions shown: those with the most small files (31 hold any)" in page
    text = render_health(MaintenancePlan([TableMaintenance(("logs", "events"), health, [])]))
    assert "… and 28 more partition(s) with small files (--format json or --html lists the first 20)" in text


def test_a_stale_plan_names_the_property_keys_that_changed(project: Path) -> None:
    import tablepolicy as api
    from tablepolicy.compiler.plan.steps import plan_id_of
    from tablepolicy.runtime.apply import StalePlanError, check_requirements
    from tablepolicy.runtime.catalog.reader import CatalogReader

    (project / "policies" / "a" / "t.yaml").write_text(TABLE + "properties: {commit.retry.num-retries: '10'}\n")
    catalog = embedded(project)
    catalog.create_namespace("a")
    catalog.create_table("a.t", schema=Schema(NestedField(1, "x", IntegerType(), required=False)))
    assert tablepolicy("plan", "--out", "plan.json", cwd=project).returncode == 0
    with catalog.load_table("a.t").transaction() as change:  # another tool, after the review
        change.set_properties({"write.parquet.compression-codec": "zstd"})
    plan = api.load_plan(project / "plan.json")
    with CatalogReader(api.invocation(project / "policies").catalog) as reader, pytest.raises(StalePlanError) as found:
        check_requirements(plan, reader, plan_id_of(plan), set())
    assert "a.t: changed since the plan was made (table properties changed: write.parquet.compression-codec " \
           "(unset) -> 'zstd')" in str(found.value)


def test_re_applying_a_finished_plan_starts_no_spark(project: Path, tmp_path: Path) -> None:
    """The catalog holds everything the plan does, stamped with its id (applied here before, or by another runner
    without this journal): every step is found applied, in a process where pyspark cannot even be imported."""
    import tablepolicy as api
    from tablepolicy.compiler.plan.steps import plan_id_of, plan_steps
    from tests.cli_runner import pyspark_blocker, tablepolicy_process

    assert tablepolicy("plan", "--out", "plan.json", cwd=project).returncode == 0
    plan = api.load_plan(project / "plan.json")
    [create] = [s.change for s in plan_steps(plan, plan_id_of(plan)) if s.change.action == "create_table"]
    catalog = embedded(project)
    catalog.create_namespace("a")
    catalog.create_table("a.t", schema=Schema(NestedField(1, "x", IntegerType(), required=False)),
                         properties=create.state.properties)  # type: ignore[union-attr]
    run = tablepolicy_process("apply", "plan.json", cwd=project, env=pyspark_blocker(tmp_path / "blocked"))
    assert run.returncode == 0, run.stderr
    assert "[1] create namespace a: skipped (already applied)" in run.stdout
    assert "[2] create table a.t (1 columns): skipped (already applied)" in run.stdout
    assert "Apply complete: 0 statement(s) executed" in run.stdout


def test_a_table_renamed_in_git_is_told_its_data_stays_in_the_old_one(project: Path) -> None:
    catalog = embedded(project)
    catalog.create_namespace("a")
    schema = Schema(NestedField(1, "x", IntegerType(), required=False))
    catalog.create_table("a.old", schema=schema, properties={"tablepolicy.plan-id": "0123abcd"})  # applied before
    catalog.create_table("a.by_hand", schema=schema)  # made by another tool: no reason to think of a rename
    run = tablepolicy("plan", cwd=project)
    assert run.returncode == 0, run.stderr
    assert ("policies/a/t.yaml:1:8: warning TP470: a.t is created empty, and the catalog still holds a.old, which an "
            "earlier apply made and no policy declares now: if the table was renamed in git, its data stays behind\n"
            "    hint: to keep the data, rename it in the catalog first (in Spark: ALTER TABLE a.old RENAME TO a.t), "
            "then plan again; a new table meant to be new needs nothing") in run.stderr
    assert "by_hand" not in run.stderr


@pytest.mark.parametrize(("uri", "said"), [
    ("sqlite:///{folder}", "{folder} is a folder, not a SQLite database file; set 'uri' of catalog 'x' "
                           "(.pyiceberg.yaml, or PYICEBERG_CATALOG__X__URI) to a file in it, e.g. "
                           "sqlite:///{folder}/catalog.db"),
    ("sqlite:///{garbage}", "{garbage} is not a SQLite database (SQLite: file is not a database); set 'uri' of "
                            "catalog 'x' (.pyiceberg.yaml, or PYICEBERG_CATALOG__X__URI) to the catalog's database "
                            "file, or move this file away"),
    ("sqlite:///:memory:", "an in-memory SQLite catalog (sqlite:///:memory:) is empty for every connection that "
                           "opens it, and apply's Spark would see another: set 'uri' of catalog 'x'"),
    ("", "it has no uri; set 'uri' of catalog 'x' (.pyiceberg.yaml, or PYICEBERG_CATALOG__X__URI): sqlite:///PATH"),
], ids=["folder", "garbage-file", "in-memory", "no-uri"])
@pytest.mark.parametrize("command", [["plan"], ["apply", "--auto-approve"]], ids=" ".join)
def test_a_catalog_that_cannot_be_opened_says_why_and_what_to_set(project: Path, tmp_path: Path, uri: str,
                                                                  said: str, command: list[str]) -> None:
    folder, garbage = tmp_path / "afolder", tmp_path / "garbage.db"
    folder.mkdir()
    garbage.write_bytes(bytes(range(256)) * 8)
    env = {"PYICEBERG_CATALOG__X__WAREHOUSE": (tmp_path / "wh").as_uri()}
    if uri:
        env["PYICEBERG_CATALOG__X__URI"] = uri.format(folder=folder, garbage=garbage)
    run = tablepolicy(*command, "--catalog", "x", cwd=project, env=env)
    assert run.returncode == 1
    assert said.format(folder=folder, garbage=garbage) in run.stderr, run.stderr
    assert "OperationalError" not in run.stderr and "--uri" not in run.stderr


def test_history_lists_each_apply_with_its_commit_and_user_and_each_data_commit(project: Path) -> None:
    catalog = embedded(project)
    catalog.create_namespace("a")
    schema = Schema(NestedField(1, "x", IntegerType(), required=False))
    first = {"tablepolicy.plan-id": "1111aaaa", "tablepolicy.git-sha": "ab" * 20, "tablepolicy.applied-by": "ann@ci"}
    table = catalog.create_table("a.t", schema=schema, properties=first)
    table.append(pa.table({"x": pa.array([1, 2, 3], pa.int32())}))
    with catalog.load_table("a.t").transaction() as change:  # an apply's stamp commit
        change.set_properties({"tablepolicy.plan-id": "2222bbbb", "tablepolicy.git-sha": "cd" * 20,
                               "tablepolicy.applied-by": "github:bob"})
    with catalog.load_table("a.t").transaction() as change:  # another tool's property: no new apply
        change.set_properties({"comment": "by hand"})
    run = tablepolicy("history", "a.t", cwd=project)
    assert run.returncode == 0, run.stderr
    lines = [line.split("Z  ", 1)[1] for line in run.stdout.splitlines()[1:]]
    snapshot = catalog.load_table("a.t").metadata.snapshots[0].snapshot_id
    assert lines == [f"applied plan 1111aaaa from commit {'ab' * 6} by ann@ci",
                     f"snapshot {snapshot}: append (added records 3, added data files 1)",
                     f"applied plan 2222bbbb from commit {'cd' * 6} by github:bob"]
    as_json = tablepolicy("history", "a.t", "--format", "json", cwd=project)
    assert '"applied_by": "github:bob"' in as_json.stdout
    missing = tablepolicy("history", "a.nope", cwd=project)
    assert missing.returncode == 1 and "the catalog holds no table a.nope" in missing.stderr


def test_a_blocked_plan_is_saved_with_what_unblocks_it_not_how_to_apply_it(project: Path) -> None:
    catalog = embedded(project)
    catalog.create_namespace("a")
    catalog.create_table("a.t", schema=Schema(NestedField(1, "x", IntegerType(), required=False),
                                              NestedField(2, "gone", IntegerType(), required=False)))
    run = tablepolicy("plan", "--out", "plan.json", cwd=project)  # the policy drops 'gone': destructive
    assert run.returncode == 3, run.stderr
    assert ("Saved the plan to plan.json; it holds destructive changes git has not approved, so apply refuses it: "
            "approve them in the policies (or drop them), then plan again") in run.stderr
    assert "apply it with" not in run.stderr
