"""drift against a real embedded SQLite catalog: --format json (its documented shape), namespaces and tables git
never mentions (listed, never drift), rules.ignore_unmanaged in _rules.yaml, and the exit codes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField
from ruamel.yaml import YAML

from tablepolicy.compiler.desired import desired_states
from tablepolicy.compiler.policy.rules import RulesFile
from tablepolicy.compiler.validate import validate
from tests.catalog_fixtures import create_examples, create_like, embedded_catalog
from tests.cli_runner import tablepolicy

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = Schema(NestedField(1, "id", LongType(), required=False))
# beside the example policies (ads, logs, security) and a nested declared table org.team.events:
NAMESPACES = [("scratch",), ("scratch", "tmp"), ("staging",)]
OTHERS = [("scratch", "t1"), ("scratch", "t2"), ("scratch", "tmp", "t3"), ("org", "x")]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """Every declared table in the catalog as declared, plus namespaces and tables git never mentions: scratch
    (with a nested scratch.tmp), an empty staging, and org.x beside the declared org.team.events."""
    policies = shutil.copytree(ROOT / "policies", tmp_path / "policies")
    (policies / "org" / "team").mkdir(parents=True)
    (policies / "org" / "team" / "events.yaml").write_text("table: org.team.events\ncolumns:\n"
                                                           "  - {name: id, type: long}\n")
    create_examples(policies)
    catalog = embedded_catalog(policies)
    for namespace in NAMESPACES:
        catalog.create_namespace(namespace)
    for table in OTHERS:
        catalog.create_table(table, schema=SCHEMA)
    return tmp_path


def drift_json(project: Path, *args: str) -> tuple[int, dict[str, Any]]:
    run = tablepolicy("drift", "policies", "--format", "json", *args, cwd=project)
    assert run.stderr == f"Catalog: lake (sql, sqlite:///{project / '.lake' / 'catalog.db'})\n", run.stderr
    return run.returncode, json.loads(run.stdout)


def names(items: list[dict[str, Any]], key: str = "table") -> list[str]:
    return [item[key] for item in items]


def test_json_lists_unmanaged_namespaces_and_tables(project: Path) -> None:
    code, document = drift_json(project, "--detailed-exitcode")
    assert code == 0  # unmanaged namespaces and tables are listed, never drift
    assert list(document) == ["drift_format", "catalog", "environment", "drift", "tables", "undeclared", "unmanaged",
                              "ignored"]
    assert document["drift_format"] == 1 and document["drift"] is False and document["environment"] is None
    assert document["catalog"] == {"name": "lake", "type": "sql",
                                   "uri": f"sqlite:///{project / '.lake' / 'catalog.db'}"}
    assert [(t["table"], t["status"]) for t in document["tables"]] == [
        ("ads.click_log", "in_sync"), ("logs.app_events", "in_sync"), ("org.team.events", "in_sync"),
        ("privacy.erasure_requests", "in_sync"), ("security.cloudtrail_mgmt", "in_sync")]
    assert document["undeclared"] == []
    assert document["unmanaged"] == {
        "namespaces": [{"namespace": "scratch", "name": ["scratch"], "tables": 2},
                       {"namespace": "scratch.tmp", "name": ["scratch", "tmp"], "tables": 1},
                       {"namespace": "staging", "name": ["staging"], "tables": 0}],
        "tables": [{"table": "org.x", "name": ["org", "x"]}, {"table": "scratch.t1", "name": ["scratch", "t1"]},
                   {"table": "scratch.t2", "name": ["scratch", "t2"]},
                   {"table": "scratch.tmp.t3", "name": ["scratch", "tmp", "t3"]}]}
    assert document["ignored"] == {"patterns": [], "namespaces": [], "tables": []}


def test_json_reports_drift_and_exit_codes(project: Path) -> None:
    catalog = embedded_catalog(project / "policies")
    table = catalog.load_table(("ads", "click_log"))
    with table.transaction() as tx:
        tx.set_properties({"history.expire.min-snapshots-to-keep": "5", "other.tool.setting": "x"})
    catalog.create_table(("ads", "shadow"), schema=SCHEMA)
    catalog.drop_table(("logs", "app_events"))
    code, document = drift_json(project, "--detailed-exitcode")
    assert code == 2 and document["drift"] is True
    tables = {t["table"]: t for t in document["tables"]}
    assert tables["logs.app_events"] == {"table": "logs.app_events", "name": ["logs", "app_events"],
                                         "status": "missing", "changes": [], "unowned_properties": {},
                                         "unowned_refs": []}
    click_log = tables["ads.click_log"]
    assert click_log["status"] == "differs" and click_log["unowned_properties"] == {"other.tool.setting": "x"}
    assert [(c["action"], c["safety"], c["summary"]) for c in click_log["changes"]] == [
        ("set_properties", "safe", "set history.expire.min-snapshots-to-keep: 5 -> 1")]
    assert names(document["undeclared"]) == ["ads.shadow"]
    assert drift_json(project)[0] == 0  # without the flag, drift is success


def test_text_lists_unmanaged_after_drift(project: Path) -> None:
    embedded_catalog(project / "policies").create_table(("ads", "shadow"), schema=SCHEMA)
    run = tablepolicy("drift", "policies", "--detailed-exitcode", cwd=project)
    assert (run.returncode, run.stdout.splitlines()[1:]) == (2, [
        "table ads.shadow: in a managed namespace, not declared in git",
        "namespace scratch: unmanaged, git never mentions it (2 tables)",
        "namespace scratch.tmp: unmanaged, git never mentions it (1 table)",
        "namespace staging: unmanaged, git never mentions it (0 tables)",
        "table org.x: unmanaged, no policy declares a table of namespace org",
        "note: unmanaged is not drift; hide what the team does not manage with rules.ignore_unmanaged (_rules.yaml)",
    ])


IGNORE = [  # rules.ignore_unmanaged -> (namespaces still listed, tables still listed, namespaces, tables ignored)
    (["scratch"], ["staging"], ["org.x"], ["scratch", "scratch.tmp"], ["scratch.t1", "scratch.t2", "scratch.tmp.t3"]),
    (["scratch.*"], ["scratch", "staging"], ["org.x"], ["scratch.tmp"],  # * spans dots: nested ones too
     ["scratch.t1", "scratch.t2", "scratch.tmp.t3"]),
    (["scratch.tmp"], ["scratch", "staging"], ["org.x", "scratch.t1", "scratch.t2"], ["scratch.tmp"],
     ["scratch.tmp.t3"]),
    (["s*"], [], ["org.x"], ["scratch", "scratch.tmp", "staging"], ["scratch.t1", "scratch.t2", "scratch.tmp.t3"]),
    (["org.x", "scratch.t?"], ["scratch", "scratch.tmp", "staging"], ["scratch.tmp.t3"], [],
     ["org.x", "scratch.t1", "scratch.t2"]),
    (["org"], ["scratch", "scratch.tmp", "staging"], ["scratch.t1", "scratch.t2", "scratch.tmp.t3"], [], ["org.x"]),
    (["SCRATCH", "nothing.*"], ["scratch", "scratch.tmp", "staging"],  # case-sensitive; a pattern may match none
     ["org.x", "scratch.t1", "scratch.t2", "scratch.tmp.t3"], [], []),
]


@pytest.mark.parametrize(("patterns", "namespaces", "tables", "hidden_namespaces", "hidden_tables"), IGNORE,
                         ids=lambda v: ",".join(v) if isinstance(v, list) else None)
def test_ignore_list(project: Path, patterns: list[str], namespaces: list[str], tables: list[str],
                     hidden_namespaces: list[str], hidden_tables: list[str]) -> None:
    (project / "policies" / "_rules.yaml").write_text(f"rules:\n  ignore_unmanaged: {json.dumps(patterns)}\n")
    code, document = drift_json(project)
    assert code == 0
    assert (names(document["unmanaged"]["namespaces"], "namespace"), names(document["unmanaged"]["tables"])) == (
        namespaces, tables)
    assert document["ignored"]["patterns"] == patterns
    assert (names(document["ignored"]["namespaces"], "namespace"), names(document["ignored"]["tables"])) == (
        hidden_namespaces, hidden_tables)


def test_ignore_list_covers_undeclared_tables_of_managed_namespaces(project: Path) -> None:
    """A table the team leaves to another tool in a namespace git manages: ignored, it is no longer drift."""
    embedded_catalog(project / "policies").create_table(("ads", "shadow_tmp"), schema=SCHEMA)
    assert tablepolicy("drift", "policies", "--detailed-exitcode", cwd=project).returncode == 2
    (project / "policies" / "_rules.yaml").write_text("rules:\n  ignore_unmanaged: ['ads.*_tmp', scratch, staging, "
                                                      "org.x]\n")
    run = tablepolicy("drift", "policies", "--detailed-exitcode", cwd=project)
    assert (run.returncode, run.stdout.splitlines()[1:]) == (0, [
        "ignored by rules.ignore_unmanaged: 3 namespaces, 5 tables",
        "No drift: the catalog holds what git declares.",
    ])


def test_part_of_the_project_does_not_look_for_unmanaged(project: Path) -> None:
    run = tablepolicy("drift", "policies/ads/click_log.yaml", "--format", "json", cwd=project)
    assert run.returncode == 0 and json.loads(run.stdout)["unmanaged"] is None
    text = tablepolicy("drift", "policies/ads", cwd=project)
    assert text.stdout.splitlines()[1:] == [
        "note: unmanaged namespaces and tables are looked for when drift runs on the whole project",
        "No drift: the catalog holds what git declares."]


RULES = [  # _rules.yaml -> the finding validate reports (drift refuses the same)
    ("rules:\n  ignore_unmanaged: scratch\n",
     "policies/_rules.yaml:2:21: error TP104: rules.ignore_unmanaged: wrong type: input should be a valid list"),
    ("rules:\n  ignore_unmanaged: ['']\n", "policies/_rules.yaml:2:22: error TP112: rules.ignore_unmanaged.0: "
                                           "must not be empty: string should have at least 1 character"),
]


@pytest.mark.parametrize(("rules", "finding"), RULES)
def test_a_bad_ignore_list_is_a_finding(project: Path, rules: str, finding: str) -> None:
    (project / "policies" / "_rules.yaml").write_text(rules)
    for command in ("validate", "drift"):
        run = tablepolicy(command, "policies", cwd=project)
        assert run.returncode == 1 and run.stderr.splitlines()[0] == finding, run.stderr
    assert list(jsonschema.Draft202012Validator(RulesFile.model_json_schema()).iter_errors(
        YAML(typ="safe").load(rules))) != []  # the schema of the rules file says so too


def test_the_rules_file_schema_has_the_ignore_list() -> None:
    document = {"rules": {"owner_required": True, "ignore_unmanaged": ["scratch", "analytics.tmp_*"]}}
    assert list(jsonschema.Draft202012Validator(RulesFile.model_json_schema()).iter_errors(document)) == []


def test_json_names_the_environment_and_compares_its_values(project: Path) -> None:
    """With --env, the overlay's catalog and values are what git declares: dev's 1d snapshot age is drift on a
    table the catalog holds with the base policy's 2d."""
    shutil.copytree(ROOT / "environments", project / "environments")
    (project / "dev").mkdir()
    uri, warehouse = f"sqlite:///{project / 'dev' / 'catalog.db'}", (project / "dev").as_uri()
    dev = SqlCatalog("dev", uri=uri, warehouse=warehouse)
    for state in desired_states(validate(project / "policies")[0]):
        create_like(dev, state)
    dev.create_namespace(("scratch",))
    env = {"PYICEBERG_CATALOG__DEV__URI": uri, "PYICEBERG_CATALOG__DEV__TYPE": "sql",
           "PYICEBERG_CATALOG__DEV__WAREHOUSE": warehouse}
    run = tablepolicy("drift", "policies", "--env", "dev", "--format", "json", "--detailed-exitcode", cwd=project,
                      env=env)
    document = json.loads(run.stdout)
    assert (run.returncode, document["environment"], document["drift"]) == (2, "dev", True), run.stderr
    assert document["catalog"] == {"name": "dev", "type": "sql", "uri": uri}
    changes = {t["table"]: [c["summary"] for c in t["changes"]] for t in document["tables"]}
    assert "set history.expire.max-snapshot-age-ms: 172800000 -> 86400000" in changes["ads.click_log"], changes
    assert names(document["unmanaged"]["namespaces"], "namespace") == ["scratch"]
