"""View policy files (``view:``): what validate says about each mistake, at its file:line:col with a hint."""

from __future__ import annotations

from pathlib import Path

import pytest

from tablepolicy.compiler.checks import check_project
from tablepolicy.compiler.desired import create_all
from tablepolicy.compiler.diagnostics import Diagnostics
from tablepolicy.compiler.fmt import format_text
from tablepolicy.compiler.loader import Project, load_text
from tablepolicy.compiler.model.view import desired_view
from tablepolicy.compiler.policy.view import query_text
from tests.memory_catalog import project_of

TABLE = ("policies/u/t.yaml", "table: u.t\ncolumns: [{name: id, type: long}]\n")


def findings(*files: tuple[str, str]) -> list[str]:
    project, diagnostics = Project(root=Path("policies")), Diagnostics()
    for file, text in files:
        load_text(text, file, project, diagnostics)
    if not diagnostics.has_errors:
        diagnostics.extend(check_project(project))
    return [d.render() for d in diagnostics]


CASES = [
    ("view: u.v\n", "policies/u/v.yaml:1:1: error TP103: document: missing required key 'sql'\n"
     "    hint: write the view's SELECT, or set 'state: absent' to drop the view"),
    ("view: u.v\nsql: '  '\n", "policies/u/v.yaml:2:6: error TP112: sql: a view needs its SELECT text\n"
     "    hint: write sql: SELECT ..."),
    ("view: u.v\nsql: '-- later /* */'\n", "policies/u/v.yaml:2:6: error TP112: sql: a view needs its SELECT text\n"
     "    hint: write sql: SELECT ..."),
    ("view: u.v\nsql: SELECT 1;\n", "policies/u/v.yaml:2:6: error TP104: sql: the view's SQL ends with ';': Spark "
     "parses one query, without it\n    hint: remove the ';' at the end"),
    ("view: v\nsql: SELECT 1\n", "policies/u/v.yaml:1:7: error TP109: view: view name 'v' has no namespace\n"
     "    hint: write namespace.view"),
    ("view: u.v\nsql: SELECT 1\ncolumns: [id]\n", "policies/u/v.yaml:3:10: error TP104: columns: wrong type: "
     "input should be a valid dictionary\n    hint: write a mapping: {key: value} or one 'key: value' per line"),
    ("view: u.v\nsql: SELECT 1\nsq: x\n", "policies/u/v.yaml:3:1: error TP102: unknown key 'sq' in document\n"
     "    hint: did you mean 'sql'?"),
    ("view: u.v\nsql: SELECT 1\nproperties: {comment: x}\n", "policies/u/v.yaml:3:14: error TP501: 'comment' is a "
     "view property this policy cannot declare\n    hint: write the view's comment as top-level 'description:'"),
    ("view: u.t\nsql: SELECT 1\n", "policies/u/v.yaml:1:7: error TP461: 'u.t' is declared both as a view and as a "
     "table\n    hint: the table is declared at policies/u/t.yaml:1:8; rename one of them (a catalog holds one "
     "table or view per name)"),
]


@pytest.mark.parametrize(("text", "finding"), CASES, ids=[c[1].split(": ")[1].split()[1] + str(i)
                                                         for i, c in enumerate(CASES)])
def test_each_mistake_is_one_finding_with_a_hint(text: str, finding: str) -> None:
    assert findings(TABLE, ("policies/u/v.yaml", text)) == [finding]


def test_a_view_declared_twice() -> None:
    text = "view: u.v\nsql: SELECT 1\n"
    assert findings(("policies/a.yaml", text), ("policies/b.yaml", text)) == [
        "policies/b.yaml:1:7: error TP460: view 'u.v' is declared twice\n"
        "    hint: first declared at policies/a.yaml:1:7; keep one file"]


def test_a_valid_view_is_loaded_beside_tables() -> None:
    project, diagnostics = Project(root=Path("policies")), Diagnostics()
    load_text(TABLE[1], TABLE[0], project, diagnostics)
    load_text("view: u.v\nsql: |\n  SELECT id\n  FROM u.t\ncolumns: {id: the key}\nowner: data\nproperties: {n: 1}\n"
              "state: present\n", "policies/u/v.yaml", project, diagnostics)
    assert not diagnostics.items and [t.declared for t in project.tables] == ["u.t"]
    [view] = project.views
    state = desired_view(view.policy, view.name)
    assert (state.sql, state.columns, state.properties) == (
        "SELECT id\nFROM u.t", (("id", "the key"),), {"n": "1", "tablepolicy.owner": "data"})


def test_an_absent_view_needs_no_sql() -> None:
    assert findings(TABLE, ("policies/u/v.yaml", "view: u.v\nstate: absent\nallow_destructive: [drop_view]\n")) == []


def test_fmt_orders_a_view_file_by_the_view_model() -> None:
    text = ("owner: data  # the team\ncolumns: {id: the key}\nsql: SELECT id FROM u.t\nview: u.v\n"
            "description: ids\n")
    assert format_text(text) == ("view: u.v\nsql: SELECT id FROM u.t\ncolumns: {id: the key}\ndescription: ids\n"
                                 "owner: data  # the team\n")


def test_ddl_creates_the_views_after_every_table() -> None:
    project = project_of("view: a.v\nsql: SELECT id FROM b.t\n", "table: b.t\ncolumns: [{name: id, type: long}]\n")
    assert [c.summary for c in create_all(project)] == [
        "create namespace a", "create namespace b", "create table b.t (1 columns)", "create view a.v"]


@pytest.mark.parametrize(("sql", "stored"), [
    ("  -- how many\n  SELECT count(*) AS n  -- rows\n    FROM t  -- end\n\n",
     "SELECT count(*) AS n  -- rows\n    FROM t"),
    ("/* a */ SELECT '--x' AS a /* c */ FROM t /* tail */", "SELECT '--x' AS a /* c */ FROM t"),
    ('SELECT "a--b" FROM `t--x`', 'SELECT "a--b" FROM `t--x`'),
    ("SELECT 'it\\'s -- no' FROM t -- yes", "SELECT 'it\\'s -- no' FROM t"),
])
def test_the_sql_compared_is_what_spark_stores(sql: str, stored: str) -> None:
    """Spark keeps a view's query from its first token to its last: comments and whitespace around it go."""
    assert query_text(sql) == stored
