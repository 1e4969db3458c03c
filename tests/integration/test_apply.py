"""apply through the real runtime: examples from an empty catalog, a series of evolutions checked
against the catalog after every step, stale plans, edited plans, locks and safety tags."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

from tablepolicy.compiler.desired import desired_states
from tablepolicy.compiler.plan.codec import PlanFileError, plan_from_json, plan_to_json
from tablepolicy.compiler.plan.model import CatalogRef
from tablepolicy.compiler.plan.planner import make_plan
from tablepolicy.compiler.validate import validate
from tablepolicy.runtime.apply import PlanMismatchError, StalePlanError, apply_plan
from tablepolicy.runtime.catalog.reader import CatalogReader
from tablepolicy.runtime.lock import LockHeldError, catalog_locks
from tablepolicy.runtime.spark.session import SparkOptions
from tests.integration.conftest import Lake, assert_table_matches

pytestmark = pytest.mark.spark
ROOT = Path(__file__).resolve().parents[2]


def plan_dir(lake: Lake, policies: Path):  # type: ignore[no-untyped-def]
    project, diagnostics = validate(policies)
    assert not diagnostics.has_errors, [d.render() for d in diagnostics]
    with CatalogReader(lake.config) as reader:
        result = make_plan(project, reader, CatalogRef.of(lake.config), today=date(2026, 1, 15))
    assert not result.refused, [d.render() for d in result.diagnostics]
    return project, result.plan


def apply_dir(lake: Lake, policies: Path, tmp: Path) -> None:
    _, plan = plan_dir(lake, policies)
    apply_plan(plan, lake.config, SparkOptions(), journal_path=tmp / "journal.jsonl", policies=policies)


def assert_catalog_equals_policies(lake: Lake, policies: Path, *, ids: bool = True) -> None:
    project, plan = plan_dir(lake, policies)
    assert plan.changes == [], [c.summary for c in plan.changes]
    with CatalogReader(lake.config) as reader:
        for state in desired_states(project):
            current = reader.table(state.name)
            assert current is not None
            assert_table_matches(current.state, state, ids=ids)
            assert current.state.properties["tablepolicy.plan-id"]


EVOLUTION = [
    ("nested add", "        - {name: ip, type: string}", "        - {name: ip, type: string}\n"
                                                        "        - {name: browser, type: string}"),
    ("declared rename", "  - {name: ad_id, type: long}", "  - {name: creative_id, type: long, renamed_from: ad_id}"),
    ("promotion", 'type: "decimal(12,4)"', 'type: "decimal(16,4)"'),
    ("partition evolution", "partition_by: [dt]", "partition_by: [dt, 'bucket(16, user_id)']"),
    ("sort change", "sort_by: [user_id, clicked_at]", "sort_by: [user_id, clicked_at desc]"),
    ("property change", "  snapshots:\n", "  snapshots:\n    max_ref_age: 30d\n"),
]


def test_examples_then_a_series_of_evolutions(lake: Lake, tmp_path: Path) -> None:
    import shutil

    policies = shutil.copytree(ROOT / "policies", tmp_path / f"policies-{lake.config.properties['uri'][:6]}")
    for table in ("ads/click_log.yaml", "logs/app_events.yaml", "security/cloudtrail_mgmt.yaml"):
        text = (policies / table).read_text()
        (policies / table).write_text(text.replace("table: ads.", "table: applied_ads.")
                                      .replace("table: logs.", "table: applied_logs.")
                                      .replace("table: security.", "table: applied_security."))
    for ns in ("security", "logs"):
        text = (policies / ns / "_namespace.yaml").read_text()
        (policies / ns / "_namespace.yaml").write_text(text.replace(f"namespace: {ns}", f"namespace: applied_{ns}"))
    apply_dir(lake, policies, tmp_path)
    assert_catalog_equals_policies(lake, policies)
    lake.spark.sql("INSERT INTO lake.applied_ads.click_log "
                   "SELECT 'e1', 'u1', TIMESTAMP '2026-11-22 12:30:00+00:00', DATE '2026-11-22', NULL, 7, "
                   "1.5, NULL, NULL")
    click_log = policies / "ads/click_log.yaml"
    for step, old, new in EVOLUTION:
        text = click_log.read_text()
        assert old in text, step
        click_log.write_text(text.replace(old, new, 1))
        apply_dir(lake, policies, tmp_path)
        assert_catalog_equals_policies(lake, policies, ids=False)
    row = lake.spark.sql("SELECT event_id, creative_id, cost FROM lake.applied_ads.click_log").collect()
    assert [(r[0], r[1], float(r[2])) for r in row] == [("e1", 7, 1.5)]


BASE = "table: ops.{name}\ncolumns:\n  - {{name: id, type: long}}\n  - {{name: note, type: string}}\n"


def write_policy(tmp_path: Path, name: str, text: str) -> Path:
    policies = tmp_path / name
    policies.mkdir(exist_ok=True)
    (policies / "t.yaml").write_text(text)
    return policies


def test_stale_plan_is_refused_and_nothing_changes(lake: Lake, tmp_path: Path) -> None:
    policies = write_policy(tmp_path, "stale", BASE.format(name="stale"))
    apply_dir(lake, policies, tmp_path)
    (policies / "t.yaml").write_text(BASE.format(name="stale") + "  - {name: extra, type: int}\n")
    _, plan = plan_dir(lake, policies)
    lake.spark.sql("ALTER TABLE lake.ops.stale ADD COLUMN sneaky string")  # out of band, after the plan
    with CatalogReader(lake.config) as reader:
        before = reader.table(("ops", "stale"))
    with pytest.raises(StalePlanError, match=r"ops.stale: changed since the plan was made \(schema id 0 -> 1\)"):
        apply_plan(plan, lake.config, SparkOptions(), journal_path=tmp_path / "j.jsonl", policies=policies)
    with CatalogReader(lake.config) as reader:
        after = reader.table(("ops", "stale"))
    assert before is not None and after is not None
    assert after.metadata_location == before.metadata_location


def test_hand_edited_destructive_plan_is_refused(lake: Lake, tmp_path: Path) -> None:
    policies = write_policy(tmp_path, "edited", BASE.format(name="edited"))
    apply_dir(lake, policies, tmp_path)
    approved = "table: ops.edited\nallow_destructive: [drop_column note]\ncolumns:\n  - {name: id, type: long}\n"
    (policies / "t.yaml").write_text(approved)
    _, plan = plan_dir(lake, policies)
    document = json.loads(plan_to_json(plan))
    [drop] = [c for c in document["tables"][0]["changes"] if c["action"] == "drop_column"]
    drop["safety"] = "safe"
    drop["change"]["safety"] = 0  # disguise the drop as safe
    with pytest.raises(PlanFileError):
        plan_from_json(json.dumps(document))
    (policies / "t.yaml").write_text(BASE.format(name="edited"))  # git no longer approves the drop
    with pytest.raises(PlanMismatchError, match="drop column note"):
        apply_plan(plan, lake.config, SparkOptions(), journal_path=tmp_path / "j2.jsonl", policies=policies)
    with CatalogReader(lake.config) as reader:
        current = reader.table(("ops", "edited"))
    assert current is not None and [f.name for f in current.state.columns.fields] == ["id", "note"]


def test_second_apply_fails_fast_naming_the_lock_holder(lake: Lake, tmp_path: Path) -> None:
    policies = write_policy(tmp_path, "locked", BASE.format(name="locked"))
    _, plan = plan_dir(lake, policies)
    with CatalogReader(lake.config) as reader, catalog_locks(reader, ["ops.locked"], tmp_path), \
                pytest.raises(LockHeldError, match=r"pid \d+ on "):
        apply_plan(plan, lake.config, SparkOptions(), journal_path=tmp_path / "j3.jsonl", policies=policies)


def test_safety_tag_before_a_drop_keeps_the_old_data_readable(lake: Lake, tmp_path: Path) -> None:
    policies = write_policy(tmp_path, "tagged", BASE.format(name="tagged"))
    apply_dir(lake, policies, tmp_path)
    lake.spark.sql("INSERT INTO lake.ops.tagged VALUES (1, 'keep me')")
    (policies / "t.yaml").write_text(
        "table: ops.tagged\nallow_destructive: [drop_column note]\ncolumns:\n  - {name: id, type: long}\n")
    _, plan = plan_dir(lake, policies)
    report = apply_plan(plan, lake.config, SparkOptions(), journal_path=tmp_path / "j4.jsonl", policies=policies)
    [tag_note] = report.safety_tags
    assert "VERSION AS OF 'tablepolicy-before-" in tag_note
    tag = tag_note.split("'")[1]
    old = lake.spark.sql(f"SELECT note FROM lake.ops.tagged VERSION AS OF '{tag}'").collect()
    assert [r[0] for r in old] == ["keep me"]
    assert lake.spark.sql("SELECT * FROM lake.ops.tagged").columns == ["id"]


def test_a_property_removed_from_git_is_unset_and_keys_of_other_tools_stay(lake: Lake, tmp_path: Path) -> None:
    declared = "properties: {write.parquet.compression-codec: zstd, app.team: ads}\n"
    policies = write_policy(tmp_path, "props", BASE.format(name="props") + declared)
    _, created = plan_dir(lake, policies)
    saved = plan_from_json(plan_to_json(created))  # as CD applies it: from the plan file
    apply_plan(saved, lake.config, SparkOptions(), journal_path=tmp_path / "props.jsonl", policies=policies)
    lake.spark.sql("ALTER TABLE lake.ops.props SET TBLPROPERTIES ('other.tool' = 'kept')")
    (policies / "t.yaml").write_text(BASE.format(name="props") + "properties: {app.team: ads}\n")
    _, plan = plan_dir(lake, policies)
    assert [c.summary for c in plan.changes] == ["unset write.parquet.compression-codec (was zstd)"]
    apply_dir(lake, policies, tmp_path)
    with CatalogReader(lake.config) as reader:
        current = reader.table(("ops", "props"))
    assert current is not None
    properties = current.state.properties
    assert "write.parquet.compression-codec" not in properties
    assert (properties["app.team"], properties["other.tool"]) == ("ads", "kept")
    assert properties["tablepolicy.declared-properties"] == '["app.team"]'
    assert plan_dir(lake, policies)[1].changes == []
