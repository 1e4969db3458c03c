"""The tables a view's SQL reads (sqlglot, Spark dialect), checked at plan against git and the catalog: a view
this plan creates or replaces that reads a table neither git declares nor the catalog holds is TP463 (an
error: Spark refuses to create it at apply), at the view's ``sql:`` with a hint naming the tables nearby. SQL
sqlglot cannot parse is a warning at validate (TP464). No JVM: the catalog is in memory, or the embedded
SQLite catalog of the CLI."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from tablepolicy.compiler.checks import check_project
from tablepolicy.compiler.checks.view_reads import ViewSqlError, tables_read
from tablepolicy.compiler.desired import create_all
from tablepolicy.compiler.plan.model import CatalogRef
from tablepolicy.compiler.plan.planner import make_plan
from tests.cli_runner import tablepolicy
from tests.memory_catalog import MemoryCatalog, applied, declared_state, project_of
from tests.memory_views import applied_view

TABLE = "table: u.t\ncolumns: [{name: id, type: long}]\n"
HELD = "table: u.held\ncolumns: [{name: id, type: long}]\n"  # in the catalog only
OTHER_VIEW = "view: u.w\nsql: SELECT id FROM u.t\n"


@pytest.mark.parametrize(("sql", "names"), [
    ("SELECT id FROM u.t", [("u", "t")]),
    ("WITH c AS (SELECT id FROM u.t) SELECT id FROM c JOIN u.s USING (id)", [("u", "t"), ("u", "s")]),
    ("WITH a AS (SELECT 1 AS id) SELECT * FROM (WITH b AS (SELECT * FROM a) SELECT * FROM b) UNION SELECT * FROM c",
     [("c",)]),
    ("SELECT * FROM `we.ird`.`t-1` x", [("we.ird", "t-1")]),
    ("SELECT * FROM lake.u.t", [("lake", "u", "t")]),
    ("SELECT id FROM u.t WHERE id IN (SELECT id FROM u.r) AND EXISTS (SELECT 1 FROM u.s)",
     [("u", "t"), ("u", "r"), ("u", "s")]),
    ("SELECT * FROM u.t LATERAL VIEW explode(arr) e AS x", [("u", "t")]),
    ("SELECT * FROM range(10)", []),
    ("SELECT * FROM VALUES (1, 2) AS v(a, b)", []),
    ("SELECT * FROM u.t VERSION AS OF 1", [("u", "t")]),
    ("SELECT * FROM u.t.snapshots", [("u", "t", "snapshots")]),
])
def test_the_tables_a_query_reads(sql: str, names: list[tuple[str, ...]]) -> None:
    assert tables_read(sql) == tuple(names)


@pytest.mark.parametrize(("sql", "reason"), [
    ("SELECT FROM WHERE", "line 1, col 17: Expected table name but got 'WHERE'"),
    ("SELECT * FROM (SELECT 1", "line 1, col 23: Expecting )"),
    ("SELECT 1 AS a; SELECT 2", "it holds 2 statements, a view one query"),
    ("DROP TABLE u.t", "it is no query (SELECT, WITH, VALUES, ...) but DROP"),
])
def test_sql_sqlglot_cannot_read(sql: str, reason: str) -> None:
    with pytest.raises(ViewSqlError) as raised:
        tables_read(sql)
    assert str(raised.value) == reason


def findings(sql: str, *, held_view: bool = False, applied_as: str | None = None) -> list[str]:
    """The plan's findings for view u.v reading ``sql``: git declares table u.t and view u.w, the catalog holds
    table u.held (and view u.x with ``held_view``; view u.v as ``applied_as`` declares it)."""
    view = f"view: u.v\nsql: \"{sql}\"\n"
    source = MemoryCatalog.of(applied(declared_state(HELD)))
    if held_view:
        source.views[("u", "x")] = applied_view("view: u.x\nsql: SELECT id FROM u.held\n")
    if applied_as is not None:
        source.views[("u", "v")] = applied_view(applied_as)
    result = make_plan(project_of(TABLE, OTHER_VIEW, view), source, CatalogRef(name="lake"), today=date(2026, 1, 15))
    return [d.render() for d in result.diagnostics if d.code == "TP463"]


AT = "policies/u/v.yaml:2:6: error TP463: view u.v reads table"


@pytest.mark.parametrize(("sql", "expected"), [
    ("SELECT id FROM u.t", []),  # declared in git
    ("SELECT id FROM u.held", []),  # held by the catalog
    ("SELECT id FROM u.w", []),  # a view git declares
    ("SELECT id FROM lake.u.t", []),  # the plan's catalog, named
    ("SELECT * FROM u.t.snapshots JOIN u.held.branch_audit USING (id)", []),  # a metadata table, a branch
    ("SELECT id FROM spark_catalog.db.x", []),  # another catalog: not looked up
    ("SELECT * FROM parquet.`/data/x`", []),  # Spark's SQL on files
    ("WITH missing AS (SELECT id FROM u.t) SELECT id FROM missing", []),  # a CTE name is no table
    ("SELECT id FROM u.tt", [
        f"{AT} u.tt, which git does not declare and catalog 'lake' does not hold\n"
        "    hint: name a table that exists (did you mean u.t?) or declare u.tt in git; namespace u holds u.held, "
        "u.t, u.w"]),
    ("WITH c AS (SELECT id FROM u.gone) SELECT id FROM c", [
        f"{AT} u.gone, which git does not declare and catalog 'lake' does not hold\n"
        "    hint: name a table that exists or declare u.gone in git; namespace u holds u.held, u.t, u.w"]),
    ("SELECT id FROM u.t WHERE id IN (SELECT id FROM sales.orders)", [
        f"{AT} sales.orders, which git does not declare and catalog 'lake' does not hold\n"
        "    hint: name a table that exists or declare sales.orders in git: namespace sales holds none in git or "
        "catalog 'lake'; git declares tables in u"]),
    ("SELECT id FROM lake.u.nope", [
        f"{AT} u.nope, which git does not declare and catalog 'lake' does not hold\n"
        "    hint: name a table that exists or declare u.nope in git; namespace u holds u.held, u.t, u.w"]),
    ("SELECT * FROM u.nope.snapshots", [
        f"{AT} u.nope, which git does not declare and catalog 'lake' does not hold\n"
        "    hint: name a table that exists or declare u.nope in git; namespace u holds u.held, u.t, u.w"]),
    ("SELECT id FROM u.T", [  # names are compared as the JDBC catalog compares them: case counts
        f"{AT} u.T, which git does not declare and catalog 'lake' does not hold\n"
        "    hint: name a table that exists (did you mean u.t?) or declare u.T in git; namespace u holds u.held, "
        "u.t, u.w"]),
    ("SELECT id FROM t", [
        f"{AT} t without a namespace: Spark looks for it in the root of catalog 'lake' (the view's default "
        "namespace is empty), where git declares no table\n"
        "    hint: write the table with its namespace, e.g. u.t"]),
    ("SELECT a.id FROM u.t a JOIN u.x b USING (id) JOIN u.y c USING (id)", [
        f"{AT} u.x, which git does not declare and catalog 'lake' does not hold\n"
        "    hint: name a table that exists or declare u.x in git; namespace u holds u.held, u.t, u.w",
        f"{AT} u.y, which git does not declare and catalog 'lake' does not hold\n"
        "    hint: name a table that exists or declare u.y in git; namespace u holds u.held, u.t, u.w"]),
])
def test_a_view_reading_a_table_nobody_has(sql: str, expected: list[str]) -> None:
    assert findings(sql) == expected


def test_a_view_the_catalog_holds_counts_as_a_table() -> None:
    assert findings("SELECT id FROM u.x") != []
    assert findings("SELECT id FROM u.x", held_view=True) == []


def test_a_view_this_plan_leaves_alone_is_not_checked() -> None:
    """The view in the catalog is as git declares it: the plan runs nothing for it, so nothing of it can fail."""
    sql = "SELECT id FROM u.gone"
    assert findings(sql, applied_as=f"view: u.v\nsql: \"{sql}\"\n") == []
    assert len(findings(sql, applied_as="view: u.v\nsql: SELECT id FROM u.t\n")) == 1  # replaced: checked


def test_sql_sqlglot_cannot_parse_is_a_warning_at_validate_and_no_plan_error() -> None:
    project = project_of(TABLE, "view: u.v\nsql: SELECT FROM WHERE\n")
    assert [d.render() for d in check_project(project)] == [
        "policies/u/v.yaml:2:6: warning TP464: the SQL of view u.v does not parse with sqlglot's Spark dialect "
        "(line 1, col 17: Expected table name but got 'WHERE'): plan cannot check the tables it reads\n"
        "    hint: check the SQL; apply parses it with Spark before it runs any change, and this warning stays if "
        "Spark accepts what sqlglot does not"]
    result = make_plan(project, MemoryCatalog.of(), CatalogRef(name="lake"), today=date(2026, 1, 15))
    assert result.diagnostics.items == []


def test_plan_names_the_missing_table_at_the_views_sql(tmp_path: Path) -> None:
    (tmp_path / "policies" / "u").mkdir(parents=True)
    (tmp_path / "policies" / "u" / "t.yaml").write_text(TABLE)
    (tmp_path / "policies" / "u" / "v.yaml").write_text("view: u.v\nsql: |\n  SELECT id\n  FROM u.events\n")
    run = tablepolicy("plan", cwd=tmp_path)
    assert run.returncode == 1
    assert run.stderr.splitlines()[:2] == [
        "policies/u/v.yaml:2:6: error TP463: view u.v reads table u.events, which git does not declare and catalog "
        "'lake' does not hold",
        "    hint: name a table that exists or declare u.events in git; namespace u holds u.t"]


@pytest.mark.parametrize(("views", "order"), [
    ({"a": "SELECT id FROM u.t", "b": "SELECT id FROM u.t"}, ["a", "b"]),  # independent: by name
    ({"a": "SELECT id FROM u.b", "b": "SELECT id FROM u.t"}, ["b", "a"]),  # a reads b: b first
    ({"a": "SELECT id FROM lake.u.c", "b": "SELECT id FROM u.a", "c": "SELECT id FROM u.t"}, ["c", "a", "b"]),
    ({"a": "WITH b AS (SELECT id FROM u.t) SELECT id FROM b", "b": "SELECT id FROM u.t"}, ["a", "b"]),  # a CTE
    ({"a": "SELECT id FROM u.b", "b": "SELECT id FROM u.a"}, ["a", "b"]),  # a cycle: Spark refuses it at apply
    ({"a": "SELECT FROM WHERE", "b": "SELECT id FROM u.a"}, ["a", "b"]),  # unparsed: keeps its place
])
def test_views_are_planned_after_the_views_they_read(views: dict[str, str], order: list[str]) -> None:
    project = project_of(TABLE, *(f"view: u.{name}\nsql: \"{sql}\"\n" for name, sql in views.items()))
    plan = make_plan(project, MemoryCatalog.of(), CatalogRef(name="lake"), today=date(2026, 1, 15)).plan
    assert [t.table[-1] for t in plan.tables if t.kind == "view"] == order
    offline = order if "lake." not in str(views) else ["a", "b", "c"]  # ddl knows no catalog name: lake.u.c unread
    assert [c.summary for c in create_all(project) if c.action == "create_view"] == [
        f"create view u.{name}" for name in offline]
