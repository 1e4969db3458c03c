"""Any folder of a project works: commands find the project's policies from any folder inside it as git finds a
repository (no higher than the work tree's top), ``-C DIR`` runs as if started there, a table file outside
``policies/`` is a warning naming it, and a file given outside ``policies/`` never plans against a catalog beside
it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from pyiceberg.catalog.sql import SqlCatalog

from tests.cli_runner import tablepolicy

TABLE = "table: analytics.page_views\ncolumns:\n  - {name: viewed_at, type: timestamptz}\n"


@pytest.fixture
def lake(tmp_path: Path) -> Path:
    root = tmp_path / "lake"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)  # the work tree's top
    (root / "policies" / "analytics").mkdir(parents=True)
    (root / "policies" / "analytics" / "page_views.yaml").write_text(TABLE)
    (root / "docs" / "notes").mkdir(parents=True)
    return root


@pytest.mark.parametrize("folder", ["policies/analytics", "policies", "docs/notes", "."], ids=str)
def test_commands_find_the_project_from_any_folder_inside_it(lake: Path, folder: str) -> None:
    run = tablepolicy("validate", cwd=lake / folder)
    assert (run.returncode, run.stderr) == (0, "1 file(s) checked: 0 error(s), 0 warning(s)\n")
    planned = tablepolicy("plan", "--detailed-exitcode", cwd=lake / folder)
    assert planned.returncode == 2, planned.stderr
    assert f"sqlite:///{lake / '.lake' / 'catalog.db'}" in planned.stdout + planned.stderr
    assert not (lake / folder / ".lake").exists() or folder == "."


def test_the_search_stops_at_the_top_of_the_work_tree(tmp_path: Path) -> None:
    (tmp_path / "policies").mkdir()  # a project above the repository is not this repository's
    (tmp_path / "policies" / "t.yaml").write_text(TABLE)
    subprocess.run(["git", "init", "-q", str(tmp_path / "repo")], check=True)
    run = tablepolicy("validate", cwd=tmp_path / "repo")
    assert run.returncode == 1 and "TP000" in run.stderr


def test_chdir_runs_as_if_started_there(lake: Path) -> None:
    for flag in ("-C", "--chdir"):
        run = tablepolicy(flag, str(lake / "policies" / "analytics"), "validate", cwd=lake.parent)
        assert (run.returncode, run.stderr) == (0, "1 file(s) checked: 0 error(s), 0 warning(s)\n")
    missing = tablepolicy("-C", "nowhere", "validate", cwd=lake)
    assert missing.returncode == 1
    assert "Invalid value for '-C' / '--chdir': cannot change to nowhere: No such file or directory" in missing.stderr


def test_a_table_file_outside_policies_is_a_warning_naming_it(lake: Path) -> None:
    (lake / "orders.yaml").write_text("table: sales.orders\ncolumns:\n  - {name: id, type: long}\n")
    (lake / "docs" / "example.yaml").write_text("# not a table\nsite_name: x\n")
    for _ in range(2):  # the second run answers from the validation cache: the warning still shows
        run = tablepolicy("validate", cwd=lake)
        assert run.returncode == 0
        assert run.stderr == (
            "orders.yaml: warning TP010: a table declared outside the project's policies/ folder, so no command "
            "reads it\n    hint: move it under policies (a folder per namespace), or out of the project if it is "
            "not a policy\n1 file(s) checked: 0 error(s), 1 warning(s)\n")
        (lake / ".tablepolicy").mkdir(exist_ok=True)
    planned = tablepolicy("plan", cwd=lake)
    assert "orders.yaml: warning TP010" in planned.stderr


def test_a_file_outside_policies_never_plans_against_a_catalog_beside_it(lake: Path) -> None:
    """Planned alone, a policy file elsewhere in the project plans against the project's own catalog (here the
    embedded one beside policies/), whose namespaces it then does not propose to create again."""
    (lake / ".lake" / "warehouse").mkdir(parents=True)  # the project's embedded catalog, holding analytics
    SqlCatalog("lake", uri=f"sqlite:///{lake / '.lake' / 'catalog.db'}",
               warehouse=(lake / ".lake" / "warehouse").as_uri()).create_namespace("analytics")
    (lake / "drafts").mkdir()
    (lake / "drafts" / "more.yaml").write_text("table: analytics.more\ncolumns:\n  - {name: id, type: long}\n")
    for where, path in ((lake, "drafts/more.yaml"), (lake / "drafts", "more.yaml")):
        run = tablepolicy("plan", path, cwd=where)
        assert run.returncode == 0, run.stderr
        assert f"sqlite:///{lake / '.lake' / 'catalog.db'}" in run.stdout + run.stderr
        assert "+ create table analytics.more" in run.stdout and "create namespace" not in run.stdout
    assert not (lake / "drafts" / ".lake").exists() and not (lake.parent / ".lake").exists()
