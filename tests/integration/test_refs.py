"""Branches and tags declared in git, through real Spark on the embedded SQLite catalog and PostgreSQL: a tag and
a branch created, a re-plan with nothing to do, retention lengthened, shortened (with approval) and unset
without moving the branch, a drop with and without approval, refs made by hand left alone, and a plan made
stale by a ref changed out of band."""

from __future__ import annotations

from pathlib import Path

import pytest

from tablepolicy.compiler.model.table import RefState
from tablepolicy.runtime.apply import PlanMismatchError, StalePlanError, apply_plan
from tablepolicy.runtime.catalog.reader import CatalogReader
from tablepolicy.runtime.spark.session import SparkOptions
from tests.integration.conftest import Lake
from tests.integration.test_apply import apply_dir, plan_dir

pytestmark = pytest.mark.spark
DAY = 86_400_000
BASE = "table: ops.refs_t\ncolumns:\n  - {name: id, type: long}\n"
TAG = "  - {tag: month_end, max_ref_age: 400d}\n"
BRANCH = "  - {branch: audit, max_ref_age: 30d, min_snapshots_to_keep: 3, max_snapshot_age: 2d}\n"


def refs(lake: Lake) -> dict[str, RefState]:
    with CatalogReader(lake.config) as reader:
        table = reader.table(("ops", "refs_t"))
    assert table is not None
    return {r.name: r for r in table.state.refs}


def summaries(lake: Lake, policies: Path) -> list[str]:
    _, plan = plan_dir(lake, policies)
    return [f"{c.code} {c.summary}" for c in plan.changes] + [f"blocked: {b.approval}" for b in plan.blocked]


def test_refs_declared_applied_changed_and_dropped(lake: Lake, tmp_path: Path) -> None:
    policies = tmp_path / "policies"
    policies.mkdir()
    policy = policies / "t.yaml"
    policy.write_text(BASE)
    apply_dir(lake, policies, tmp_path)
    for i in (1, 2):
        lake.spark.sql(f"INSERT INTO lake.ops.refs_t VALUES ({i})")
    with CatalogReader(lake.config) as reader:
        current = reader.table(("ops", "refs_t"))
    assert current is not None and current.snapshot_id is not None
    head = current.snapshot_id

    # a tag and a branch at the current snapshot; then nothing to do
    policy.write_text(BASE + "refs:\n" + TAG + BRANCH)
    assert summaries(lake, policies) == [
        f"TC601 create branch audit at snapshot {head} (the current one); max_ref_age 30d, min_snapshots_to_keep 3, "
        "max_snapshot_age 2d",
        f"TC601 create tag month_end at snapshot {head} (the current one); max_ref_age 400d"]
    apply_dir(lake, policies, tmp_path)
    assert summaries(lake, policies) == []
    made = refs(lake)
    assert (made["month_end"].kind, made["month_end"].snapshot_id, made["month_end"].retention.max_ref_age_ms) == (
        "tag", head, 400 * DAY)
    assert made["audit"].retention.model_dump() == {"max_ref_age_ms": 30 * DAY, "min_snapshots_to_keep": 3,
                                                    "max_snapshot_age_ms": 2 * DAY}

    # writers move the branch; a retention change leaves it where it is. Keeping fewer snapshots needs approval
    lake.spark.sql("INSERT INTO lake.ops.refs_t.branch_audit VALUES (3)")
    branch_head = refs(lake)["audit"].snapshot_id
    assert branch_head != head
    shorter = BRANCH.replace("min_snapshots_to_keep: 3", "min_snapshots_to_keep: 1")
    policy.write_text(BASE + "refs:\n" + TAG.replace("400d", "800d") + shorter)
    changes = summaries(lake, policies)
    assert changes == [
        "TC603 set retention of branch audit: max_ref_age 30d, min_snapshots_to_keep 3, max_snapshot_age 2d -> "
        "max_ref_age 30d, min_snapshots_to_keep 1, max_snapshot_age 2d",
        "TC602 set retention of tag month_end: max_ref_age 400d -> max_ref_age 800d",
        "blocked: shorten_ref audit"]
    _, plan = plan_dir(lake, policies)
    with pytest.raises(PlanMismatchError, match="shorten_ref audit"):
        apply_plan(plan, lake.config, SparkOptions(), journal_path=tmp_path / "blocked.jsonl", policies=policies)
    policy.write_text(BASE + "allow_destructive: [shorten_ref audit]\nrefs:\n" + TAG.replace("400d", "800d")
                      + shorter)
    apply_dir(lake, policies, tmp_path)
    now = refs(lake)
    assert (now["audit"].snapshot_id, now["audit"].retention.min_snapshots_to_keep) == (branch_head, 1)
    assert now["month_end"].retention.max_ref_age_ms == 800 * DAY

    # a value removed from git is unset on the ref (the table's value applies: Iceberg's 5d, longer: safe)
    policy.write_text(BASE + "refs:\n" + TAG.replace("400d", "800d") + shorter.replace(", max_snapshot_age: 2d", ""))
    assert [c.split(":")[0] for c in summaries(lake, policies)] == ["TC602 set retention of branch audit"]
    apply_dir(lake, policies, tmp_path)
    assert refs(lake)["audit"].retention.max_snapshot_age_ms is None
    assert refs(lake)["audit"].snapshot_id == branch_head
    assert summaries(lake, policies) == []

    # a tag made by hand is never touched; the declared tag removed from git is dropped with approval only
    lake.spark.sql(f"ALTER TABLE lake.ops.refs_t CREATE TAG by_hand AS OF VERSION {head}")
    kept = shorter.replace(", max_snapshot_age: 2d", "")
    policy.write_text(BASE + "refs:\n" + kept)
    assert summaries(lake, policies) == [
        f"TC604 drop tag month_end (at snapshot {head}; snapshots only it keeps become expirable)",
        "blocked: drop_tag month_end"]
    policy.write_text(BASE + "allow_destructive: [drop_tag month_end]\nrefs:\n" + kept)
    apply_dir(lake, policies, tmp_path)
    assert sorted(refs(lake)) == ["audit", "by_hand"]
    assert summaries(lake, policies) == []


def test_a_ref_changed_since_the_plan_makes_it_stale(lake: Lake, tmp_path: Path) -> None:
    policies = tmp_path / "stale"
    policies.mkdir()
    text = BASE.replace("refs_t", "refs_stale") + "refs:\n" + TAG
    (policies / "t.yaml").write_text(BASE.replace("refs_t", "refs_stale"))
    apply_dir(lake, policies, tmp_path)
    lake.spark.sql("INSERT INTO lake.ops.refs_stale VALUES (1)")
    (policies / "t.yaml").write_text(text)
    apply_dir(lake, policies, tmp_path)
    (policies / "t.yaml").write_text(text.replace("400d", "500d"))
    _, plan = plan_dir(lake, policies)
    lake.spark.sql("ALTER TABLE lake.ops.refs_stale CREATE TAG other")  # out of band, after the plan
    with pytest.raises(StalePlanError, match=r"ops.refs_stale: changed since the plan was made \(branches or tags "
                       r"changed: other added\)"):  # the stale error names what changed
        apply_plan(plan, lake.config, SparkOptions(), journal_path=tmp_path / "stale.jsonl", policies=policies)


def test_a_new_table_with_a_branch_then_the_branch_dropped(lake: Lake, tmp_path: Path) -> None:
    """The branch of a table created in the same apply starts on an empty snapshot of its own (Spark's CREATE
    BRANCH without AS OF VERSION); a tag there waits for the first write (TP452)."""
    policies = tmp_path / "new"
    policies.mkdir()
    text = BASE.replace("refs_t", "refs_new") + "refs:\n  - {branch: staging, max_ref_age: 7d}\n  - {tag: first}\n"
    (policies / "t.yaml").write_text(text)
    assert summaries(lake, policies)[-1] == "TC601 create branch staging on a new empty snapshot; max_ref_age 7d, " \
                                            "min_snapshots_to_keep the table's, max_snapshot_age the table's"
    apply_dir(lake, policies, tmp_path)
    with CatalogReader(lake.config) as reader:
        table = reader.table(("ops", "refs_new"))
    assert table is not None and table.snapshot_id is None  # main has no snapshot; the branch has its own
    assert [(r.name, r.kind, r.retention.max_ref_age_ms) for r in table.state.refs] == [("staging", "branch", 7 * DAY)]
    lake.spark.sql("INSERT INTO lake.ops.refs_new VALUES (1)")
    assert summaries(lake, policies) == [f"TC601 create tag first at snapshot {_head(lake)} (the current one); "
                                         "max_ref_age the table's"]
    (policies / "t.yaml").write_text(BASE.replace("refs_t", "refs_new") + "allow_destructive: [drop_branch staging]\n")
    apply_dir(lake, policies, tmp_path)
    with CatalogReader(lake.config) as reader:
        after = reader.table(("ops", "refs_new"))
    assert after is not None and after.state.refs == ()


def _head(lake: Lake) -> int | None:
    with CatalogReader(lake.config) as reader:
        table = reader.table(("ops", "refs_new"))
    return table.snapshot_id if table is not None else None
