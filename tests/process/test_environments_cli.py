"""Environment overlays through the CLI, no JVM (in this process; the plan bytes also in processes of their
own): the example project's dev and prod plans differ in exactly the overlaid values, --env and --catalog that
resolve to nothing or to each other's conflict are one-line errors, a plan file keeps its environment, and plan
bytes and caches follow the overlay's content."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pyiceberg.catalog.sql import SqlCatalog

from tablepolicy.compiler.desired import desired_states
from tablepolicy.compiler.model.properties import MANAGED_PROPERTIES
from tablepolicy.compiler.validate import validate
from tests.catalog_fixtures import create_like
from tests.cli_runner import Run, tablepolicy, tablepolicy_runs_in_a_process

ROOT = Path(__file__).resolve().parents[2]
CATALOGS = ("dev", "prod")


def catalog_env(root: Path) -> dict[str, str]:
    """A SQLite catalog per environment, as .pyiceberg.yaml would define them."""
    env = {}
    for name in CATALOGS:
        env[f"PYICEBERG_CATALOG__{name.upper()}__URI"] = f"sqlite:///{root / (name + '.db')}"
        env[f"PYICEBERG_CATALOG__{name.upper()}__WAREHOUSE"] = (root / f"wh-{name}").as_uri()
    return env


def tool(*args: str, cwd: Path, **extra: str) -> Run:
    """The CLI, in this process, with the dev and prod catalogs."""
    return tablepolicy(*args, cwd=cwd, env=catalog_env(cwd) | extra)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """This repository's example policies and environment overlays; empty dev and prod catalogs."""
    shutil.copytree(ROOT / "policies", tmp_path / "policies")
    shutil.copytree(ROOT / "environments", tmp_path / "environments")
    for name in CATALOGS:
        (tmp_path / f"wh-{name}").mkdir()
    return tmp_path


def leaves(node: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    if isinstance(node, dict):
        for key, value in node.items():
            yield from leaves(value, (*path, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from leaves(value, (*path, index))
    else:
        yield path, node


def plan_json(project: Path, env: str) -> dict[str, Any]:
    run = tool("plan", "policies", "--env", env, "--format", "json", cwd=project)
    assert run.returncode == 0, run.stderr
    document: dict[str, Any] = json.loads(run.stdout)
    return document


def test_the_same_policy_planned_for_two_environments_differs_in_exactly_the_overlaid_values(project: Path) -> None:
    dev, prod = plan_json(project, "dev"), plan_json(project, "prod")
    # what each overlay sets, table by table, as its plan lists it
    settings = {name: {(s["table"], s["setting"]): s["value"] for s in doc["environment"]["settings"]}
                for name, doc in (("dev", dev), ("prod", prod))}
    assert all(s["origin"].startswith(f"environments/{name}.yaml:") for name, doc in (("dev", dev), ("prod", prod))
               for s in doc["environment"]["settings"])
    overlaid = {*settings["dev"], *settings["prod"]}
    assert ("security.cloudtrail_mgmt", "lifecycle.retention.keep") in overlaid
    assert settings["dev"][("logs.app_events", "lifecycle.compaction.target_file_size")] == "128MB"
    assert settings["prod"][("security.cloudtrail_mgmt", "lifecycle.snapshots.max_age")] == "6h"

    # the SQL names the catalog it runs in: compared with the catalog's name left out
    flat = {name: {path: value.replace(f"`{name}`.", "`<catalog>`.") if "sql" in path else value
                   for path, value in leaves({k: v for k, v in doc.items() if k != "environment"})}
            for name, doc in (("dev", dev), ("prod", prod))}
    differing = {p for p in {*flat["dev"], *flat["prod"]} if flat["dev"].get(p, "<absent>") !=
                 flat["prod"].get(p, "<absent>")}
    found: set[tuple[str, str]] = set()
    sql: set[str] = set()
    for path in differing:
        match path:
            case ("catalog", "name" | "uri"):
                found.add(("*", "catalog"))  # the overlays' catalog: values
            case ("tables", int(i), "changes", int(), "change", "state", "properties", str(key)):
                found.add((dev["tables"][i]["table"], MANAGED_PROPERTIES[key]))
            case ("tables", int(i), "changes", int(), "sql", *_):
                sql.add(dev["tables"][i]["table"])  # the same properties, rendered
            case _:
                pytest.fail(f"{path} differs between dev and prod, and no overlay sets it")
    # every overlaid value the plan carries (all of the example's are recorded as table properties) differs,
    # nothing else does: same tables, same columns, same partitioning, same SQL but for those properties
    assert found == {("*", "catalog"), *overlaid}
    assert sql == {table for table, _ in overlaid}


# (argv after "plan policies", extra environment, the error line)
REFUSED = [
    pytest.param(["--env", "qa"], {}, "error: --env qa: no environment 'qa'; environments/ defines: dev, prod",
                 id="unknown-env"),
    pytest.param([], {"TABLEPOLICY_ENV": "qa"}, "error: TABLEPOLICY_ENV qa: no environment 'qa'; environments/ "
                 "defines: dev, prod", id="unknown-env-variable"),
    pytest.param(["--env", "prod", "-c", "dev"], {}, "error: --catalog dev conflicts with environment 'prod', which "
                 "targets catalog 'prod' (environments/prod.yaml:4:10); drop --catalog, or select the environment of "
                 "catalog 'dev'", id="conflicting-catalog"),
    pytest.param(["--env", "prod"], {"TABLEPOLICY_CATALOG": "dev"}, "error: TABLEPOLICY_CATALOG dev conflicts with "
                 "environment 'prod', which targets catalog 'prod' (environments/prod.yaml:4:10); drop "
                 "TABLEPOLICY_CATALOG, or select the environment of catalog 'dev'", id="conflicting-catalog-variable"),
]


@pytest.mark.parametrize(("argv", "extra", "line"), REFUSED)
def test_what_resolves_to_nothing_or_conflicts_is_one_line(project: Path, argv: list[str], extra: dict[str, str],
                                                          line: str) -> None:
    run = tool("plan", "policies", *argv, cwd=project, **extra)
    assert (run.returncode, run.stderr.splitlines(), run.stdout) == (1, [line], "")


def test_env_without_environments_folder_is_an_error(project: Path) -> None:
    shutil.rmtree(project / "environments")
    run = tool("plan", "policies", "--env", "prod", cwd=project)
    assert (run.returncode, run.stderr.splitlines()) == (1, [
        "error: --env prod: the project defines no environments (environments/ holds no *.yaml overlay); create "
        "environments/prod.yaml or drop --env"])


@pytest.mark.parametrize(("argv", "header"), [
    (["--env", "prod"], "Catalog: prod (sql, sqlite:///"),
    (["--env", "prod", "-c", "PROD"], "Catalog: prod (sql, sqlite:///"),  # the environment's own catalog
    (["--env", "dev"], "Catalog: dev (sql, sqlite:///"),
])
def test_the_environment_selects_its_catalog_and_the_header_names_both(project: Path, argv: list[str],
                                                                       header: str) -> None:
    run = tool("plan", "policies", *argv, cwd=project)
    assert run.returncode == 0, run.stderr
    first = run.stdout.splitlines()[0]
    env = argv[1]
    assert first.startswith(header) and first.endswith(f" · environment {env} (environments/{env}.yaml)")
    assert f"Environment {env} (environments/{env}.yaml) sets" in run.stdout


@pytest.mark.parametrize("command", [["plan", "policies"], ["drift", "policies"], ["health", "policies"],
                                     ["ddl", "policies"], ["apply", "policies", "--auto-approve", "--dry-run"],
                                     ["maintain", "policies", "--dry-run"]], ids=lambda c: c[0])
@pytest.mark.parametrize(("given", "flags"), [("--catalog", ["--catalog", "prod"]), ("TABLEPOLICY_CATALOG", [])])
def test_a_catalog_bound_to_an_environment_is_refused_without_it(project: Path, command: list[str], given: str,
                                                                flags: list[str]) -> None:
    """Without --env the run would reach prod's catalog with the policies' bare values (issue 26: CI planned 5d
    where prod declares 7d), so it is refused with the fix, before anything is read or written."""
    run = tool(*command, *flags, cwd=project, **({"TABLEPOLICY_CATALOG": "prod"} if not flags else {}))
    assert (run.returncode, run.stderr.splitlines()[-1]) == (1, (
        "error: catalog 'prod' is the catalog of environment 'prod' (environments/prod.yaml:4:10), and no "
        "environment is selected: the run would use the policies' values without the environment's; pass --env "
        "prod (or set TABLEPOLICY_ENV), or target another catalog")), run.stderr
    assert not (project / "prod.db").exists() or not SqlCatalog(
        "prod", uri=f"sqlite:///{project / 'prod.db'}", warehouse=(project / "wh-prod").as_uri()).list_namespaces()


def test_without_env_no_overlay_applies(project: Path) -> None:
    """A catalog no environment is bound to takes the policies' own values."""
    extra = {"PYICEBERG_CATALOG__SCRATCH__URI": f"sqlite:///{project / 'scratch.db'}",
             "PYICEBERG_CATALOG__SCRATCH__WAREHOUSE": (project / "wh-dev").as_uri()}
    run = tool("plan", "policies", "--format", "json", cwd=project, TABLEPOLICY_CATALOG="scratch", **extra)
    assert run.returncode == 0, run.stderr
    document = json.loads(run.stdout)
    assert "environment" not in document
    created = {t["table"]: t["changes"][0]["change"]["state"]["properties"] for t in document["tables"]}
    assert created["security.cloudtrail_mgmt"]["history.expire.max-snapshot-age-ms"] == "21600000"  # 6h, the file's
    assert created["ads.click_log"]["history.expire.max-snapshot-age-ms"] == str(2 * 86_400_000)


def test_markdown_shows_the_environment_values_folded(project: Path) -> None:
    run = tool("plan", "policies", "--env", "dev", "--format", "markdown", cwd=project)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("### tablepolicy plan · Catalog: dev (sql, ")
    assert "<details><summary>Environment <b>dev</b>: 5 value(s) from <code>environments/dev.yaml</code>" in run.stdout
    assert ("| `lifecycle.compaction.target_file_size` | `128MB` | `environments/dev.yaml:15:38` | logs.app_events |"
            in run.stdout)


def test_a_plan_file_keeps_its_environment_and_apply_refuses_another(project: Path) -> None:
    run = tool("plan", "policies", "--env", "prod", "--out", "plan.json", cwd=project)
    assert run.returncode == 0, run.stderr
    document = json.loads((project / "plan.json").read_text())
    assert document["environment"]["name"] == "prod" and document["catalog"]["name"] == "prod"
    refused = tool("apply", "plan.json", "--env", "dev", cwd=project)
    assert refused.returncode == 1
    assert "  the plan was made for environment 'prod'; this apply is for environment 'dev'" in refused.stderr
    assert not (project / "plan.json.journal").exists()
    # the file reads back to the same plan (its environment included)
    from tablepolicy.compiler.plan.codec import plan_from_json, plan_to_json

    assert plan_to_json(plan_from_json((project / "plan.json").read_text())) == (project / "plan.json").read_text()


def created_catalog(project: Path, name: str) -> None:
    """Every example table in catalog ``name``, as the policies declare them without an overlay."""
    catalog = SqlCatalog(name, uri=f"sqlite:///{project / (name + '.db')}", warehouse=(project / f"wh-{name}").as_uri())
    parsed, _ = validate(project / "policies")
    for state in desired_states(parsed):
        create_like(catalog, state)


def test_plan_bytes_are_deterministic_and_the_cache_follows_the_overlay(project: Path) -> None:
    created_catalog(project, "prod")
    argv = ("plan", "policies", "--env", "prod", "--format", "json")
    runs = tablepolicy_runs_in_a_process([(*argv, "--no-cache"), argv], cwd=project,  # the second fills the cache
                                         env=catalog_env(project) | {"PYTHONHASHSEED": "1"})
    runs.append(tool(*argv, cwd=project))  # this process, from that one's cache
    assert all(r.returncode == 0 for r in runs), runs[0].stderr
    assert runs[0].stdout == runs[1].stdout == runs[2].stdout
    changed = {c["change"]["table"][-1]: c for t in json.loads(runs[0].stdout)["tables"] for c in t["changes"]}
    click = {p["key"]: p for p in changed["click_log"]["change"]["changes"]}
    assert click["history.expire.max-snapshot-age-ms"]["new"] == str(7 * 86_400_000)
    assert click["history.expire.max-snapshot-age-ms"]["origin"].startswith("environments/prod.yaml:8:")

    overlay = project / "environments/prod.yaml"
    overlay.write_text(overlay.read_text().replace("snapshots: {max_age: 7d}", "snapshots: {max_age: 3d}"))
    warm = tool("plan", "policies", "--env", "prod", "--format", "json", cwd=project)
    cold = tool("plan", "policies", "--env", "prod", "--format", "json", "--no-cache", cwd=project)
    assert warm.stdout == cold.stdout
    assert f'"new": "{3 * 86_400_000}"' in warm.stdout


def test_maintenance_reads_the_environment_lifecycle(project: Path) -> None:
    created_catalog(project, "prod")
    run = tool("maintain", "policies", "--dry-run", "--env", "prod", cwd=project)
    assert run.returncode == 0, run.stderr
    lines = [line for line in run.stdout.splitlines() if "expire_snapshots" in line]
    header = run.stdout.splitlines()[0]
    for command in (["health"], ["erase", "status"]):  # every command's first line names the environment
        other = tool(*command, "policies", "--env", "prod", cwd=project)
        assert other.returncode == 0, other.stderr
        assert other.stdout.splitlines()[0] == header, command
    assert header.startswith("Catalog: prod (sql, sqlite:///") and header.endswith(
        " · environment prod (environments/prod.yaml)")
    assert lines == [  # prod's 7d over the files' 2d and 1d (the request table's too); the 6h is the table file's own
        "  - skip expire_snapshots  [TM301]: none of 0 snapshot(s) is older than 7d beyond the newest 1 (min_keep)",
        "  - skip expire_snapshots  [TM301]: none of 0 snapshot(s) is older than 7d beyond the newest 10 (min_keep)",
        "  - skip expire_snapshots  [TM301]: none of 0 snapshot(s) is older than 7d beyond the newest 1 (min_keep)",
        "  - skip expire_snapshots  [TM301]: none of 0 snapshot(s) is older than 6h beyond the newest 1 (min_keep)"]
