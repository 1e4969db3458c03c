"""Views declared in git, through real Spark on the embedded SQLite catalog and PostgreSQL (Iceberg's JDBC catalog,
schema V1): a table and a view over it created in one plan, a re-plan with nothing to do, the SQL, a column comment
and a property changed -> one CREATE OR REPLACE (one new view version), the view read through Spark, the property
removed from git -> unset, a plan made stale by a replace out of band, and a drop with state: absent only with
'drop_view'."""

from __future__ import annotations

from pathlib import Path

import pytest

from tablepolicy.compiler.importer import view_policy_yaml
from tablepolicy.compiler.model.view import CurrentView
from tablepolicy.runtime.apply import PlanMismatchError, StalePlanError, apply_plan
from tablepolicy.runtime.catalog.reader import CatalogReader
from tablepolicy.runtime.spark.session import SparkOptions
from tests.integration.conftest import Lake
from tests.integration.test_apply import apply_dir, plan_dir
from tests.integration.test_refs import summaries

pytestmark = pytest.mark.spark
TABLE = "table: ops.vt\ncolumns:\n  - {name: id, type: long}\n  - {name: name, type: string}\n"
VIEW = "view: ops.v\nsql: SELECT id, name FROM ops.vt\ncolumns: {id: the key, name: null}\ndescription: names\n"


def view(lake: Lake, name: str = "v") -> CurrentView | None:
    with CatalogReader(lake.config) as reader:
        return reader.view(("ops", name))


def test_a_view_created_replaced_and_dropped(lake: Lake, tmp_path: Path) -> None:
    policies = tmp_path / "policies"
    policies.mkdir()
    (policies / "t.yaml").write_text(TABLE)
    policy = policies / "v.yaml"
    policy.write_text(VIEW)
    assert summaries(lake, policies) == ["TC101 create namespace ops", "TC102 create table ops.vt (2 columns)",
                                         "TC701 create view ops.v"]
    apply_dir(lake, policies, tmp_path)
    assert summaries(lake, policies) == []
    made = view(lake)
    assert made is not None
    assert (made.state.sql, made.state.columns, made.state.comment, made.version_id) == (
        "SELECT id, name FROM ops.vt", (("id", "the key"), ("name", None)), "names", 1)
    with CatalogReader(lake.config) as reader:  # a view is no table: not listed, not unmanaged
        assert reader.tables_in(("ops",)) == [("ops", "vt")]
    lake.spark.sql("INSERT INTO lake.ops.vt VALUES (1, 'a'), (2, 'b')")
    assert [r.id for r in lake.spark.sql("SELECT id FROM lake.ops.v ORDER BY id").collect()] == [1, 2]

    # SQL, a comment and a property changed: one commit, one new version
    policy.write_text(VIEW.replace("FROM ops.vt", "FROM ops.vt WHERE id > 1").replace("the key", "the id")
                      + "owner: data\n")
    assert summaries(lake, policies) == ["TC702 replace view ops.v (version 1): new sql, columns, properties"]
    apply_dir(lake, policies, tmp_path)
    assert summaries(lake, policies) == []
    replaced = view(lake)
    assert replaced is not None and replaced.uuid == made.uuid
    assert (replaced.version_id, replaced.state.columns[0], replaced.state.properties["tablepolicy.owner"]) == (
        2, ("id", "the id"), "data")
    lake.reload()
    assert [r.id for r in lake.spark.sql("SELECT id FROM lake.ops.v").collect()] == [2]

    # a property removed from git is unset (Iceberg's replace would keep it); Spark's own keys stay
    policy.write_text(VIEW.replace("FROM ops.vt", "FROM ops.vt WHERE id > 1").replace("the key", "the id"))
    assert summaries(lake, policies) == ["TC704 unset properties of view ops.v (removed from git): "
                                         "tablepolicy.declared-properties, tablepolicy.owner"]
    apply_dir(lake, policies, tmp_path)
    assert summaries(lake, policies) == []
    unset = view(lake)
    assert unset is not None and not {k for k in unset.state.properties if k.startswith("tablepolicy.")}
    assert "engine_version" in unset.state.properties

    # import writes the view as Spark left it: planned against the catalog, nothing to do
    policy.write_text(view_policy_yaml(unset))
    assert summaries(lake, policies) == []

    # state: absent drops it only with the approval
    policy.write_text("view: ops.v\nstate: absent\n")
    assert summaries(lake, policies) == ["TC703 drop view ops.v (state: absent)", "blocked: drop_view"]
    _, plan = plan_dir(lake, policies)
    with pytest.raises(PlanMismatchError, match="drop_view"):
        apply_plan(plan, lake.config, SparkOptions(), journal_path=tmp_path / "blocked.jsonl", policies=policies)
    assert view(lake) is not None
    policy.write_text("view: ops.v\nstate: absent\nallow_destructive: [drop_view]\n")
    apply_dir(lake, policies, tmp_path)
    assert view(lake) is None
    assert summaries(lake, policies) == []


def test_a_view_replaced_since_the_plan_makes_it_stale(lake: Lake, tmp_path: Path) -> None:
    policies = tmp_path / "stale"
    policies.mkdir()
    (policies / "t.yaml").write_text(TABLE)
    text = VIEW.replace("ops.v\n", "ops.sv\n")
    (policies / "v.yaml").write_text(text)
    apply_dir(lake, policies, tmp_path)
    (policies / "v.yaml").write_text(text.replace("names", "all names"))
    _, plan = plan_dir(lake, policies)
    lake.reload()
    lake.spark.sql("CREATE OR REPLACE VIEW lake.ops.sv AS SELECT id FROM lake.ops.vt")  # out of band
    with pytest.raises(StalePlanError, match=r"view ops.sv: replaced since the plan was made \(version 2 now\)"):
        apply_plan(plan, lake.config, SparkOptions(), journal_path=tmp_path / "stale.jsonl", policies=policies)


def test_a_view_name_spark_must_quote(lake: Lake, tmp_path: Path) -> None:
    """A name with a space, a dot and a backtick, and SQL over lines with comments: planned, created, read back
    (the query as Spark keeps it: from its first token to its last) and planned again as nothing."""
    policies = tmp_path / "quoted"
    policies.mkdir()
    (policies / "t.yaml").write_text(TABLE)
    (policies / "v.yaml").write_text("view: ops.`a v.w``x`\nsql: |\n  -- how many\n  SELECT count(*) AS n  -- rows\n"
                                     "    FROM ops.vt  -- the table\n\n")
    assert summaries(lake, policies)[-1] == "TC701 create view ops.`a v.w``x`"  # after the table, if new
    apply_dir(lake, policies, tmp_path)
    assert summaries(lake, policies) == []
    made = view(lake, "a v.w`x")
    assert made is not None and made.state.sql == "SELECT count(*) AS n  -- rows\n  FROM ops.vt"
    lake.reload()
    assert lake.spark.sql("SELECT n FROM lake.ops.`a v.w``x`").collect()[0].n >= 0
