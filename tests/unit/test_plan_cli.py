"""plan through the real CLI against the embedded catalog (pyiceberg only, no JVM): exit codes,
formats, deterministic plan files, import round trip."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tablepolicy.cli.app import app
from tablepolicy.compiler.desired import desired_states
from tablepolicy.compiler.plan.codec import plan_from_json, plan_to_json
from tablepolicy.compiler.validate import validate
from tests.catalog_fixtures import create_like, embedded_catalog

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()


@pytest.fixture
def policies(tmp_path: Path) -> Path:
    """The example policies, with every table already in the embedded catalog exactly as declared."""
    target = shutil.copytree(ROOT / "policies", tmp_path / "policies")
    (tmp_path / ".tablepolicy").mkdir()  # caches on, as tablepolicy init leaves a project
    catalog = embedded_catalog(target)
    project, _ = validate(target)
    for state in desired_states(project):
        create_like(catalog, state)
    return target


def plan(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["plan", *args])
    return result.exit_code, result.output


def test_exit_0_when_catalog_matches(policies: Path) -> None:
    code, output = plan(str(policies), "--detailed-exitcode")
    lake = policies.parent / ".lake" / "catalog.db"
    assert (code, output.strip()) == (0, f"Catalog: lake (sql, sqlite:///{lake})\n"
                                         "No changes. The catalog matches the policies.\n"
                                         f"note: {policies} is not in a git repository: the plan records no commit")


def test_exit_2_with_changes(policies: Path) -> None:
    table = policies / "ads/click_log.yaml"
    table.write_text(table.read_text().replace("  - {name: ad_id, type: long}",
                                               "  - {name: ad_id, type: long}\n  - {name: placement, type: string}"))
    code, output = plan(str(policies), "--detailed-exitcode")
    assert code == 2
    assert "+ add column placement string" in output
    assert plan(str(policies))[0] == 0  # without the flag, changes are success


def test_exit_3_when_destructive_change_is_not_approved(policies: Path) -> None:
    table = policies / "ads/click_log.yaml"
    table.write_text(table.read_text().replace("  - {name: ad_id, type: long}\n", ""))
    code, output = plan(str(policies), "--detailed-exitcode")
    assert code == 3
    assert "- drop column ad_id" in output
    assert 'allow_destructive: ["drop_column ad_id"]' in output


def test_exit_1_for_an_illegal_change_names_the_line(policies: Path) -> None:
    table = policies / "ads/click_log.yaml"
    table.write_text(table.read_text().replace("  - {name: ad_id, type: long}", "  - {name: ad_id, type: int}"))
    code, output = plan(str(policies), "--detailed-exitcode")
    assert code == 1
    [line] = [x for x in output.splitlines() if "TR101" in x]
    assert line.endswith("click_log.yaml:14:5: error TR101: ad_id cannot change from long to int")
    assert "add a new column with the new type" in output
    assert "Traceback" not in output


def test_exit_1_for_invalid_policy(policies: Path) -> None:
    (policies / "broken.yaml").write_text("table: x.y\ncolumns: [{name: a, type: varchar}]\n")
    code, output = plan(str(policies), "--detailed-exitcode")
    assert code == 1 and "TP201" in output


def test_catalog_unreachable_is_one_clean_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYICEBERG_CATALOG__PROD__URI", "postgresql+psycopg2://app:s3cret@127.0.0.1:1/nope")
    monkeypatch.setenv("PYICEBERG_CATALOG__PROD__TYPE", "sql")
    code, output = plan(str(ROOT / "policies"), "--env", "prod")
    assert code == 1
    assert "cannot open catalog 'prod'" in output
    assert "s3cret" not in output and "Traceback" not in output


def test_plan_file_is_deterministic_and_complete(policies: Path) -> None:
    table = policies / "logs/app_events.yaml"
    table.write_text(table.read_text().replace("min_input_files: 5", "min_input_files: 8"))
    first, second = policies.parent / "a.json", policies.parent / "b.json"
    assert plan(str(policies), "--out", str(first))[0] == 0
    assert plan(str(policies), "--out", str(second))[0] == 0
    assert first.read_bytes() == second.read_bytes()
    assert plan_to_json(plan_from_json(first.read_text())) == first.read_text()  # nothing is lost on the way back
    document = json.loads(first.read_text())
    assert document["format_version"] == 3
    [entry] = document["tables"]
    assert entry["table"] == "logs.app_events"
    assert entry["requirement"]["metadata_location"].endswith(".metadata.json")
    assert entry["declared_properties"] == ["commit.retry.num-retries", "write.parquet.compression-codec"]
    [change] = entry["changes"]
    assert change["action"] == "set_properties" and change["safety"] == "safe"
    assert change["sql"] == ["ALTER TABLE `lake`.`logs`.`app_events` SET TBLPROPERTIES (\n"
                             "  'tablepolicy.compaction.min-input-files' = '8'\n)"]


def test_markdown_shows_origin_and_sql(policies: Path) -> None:
    ns = policies / "logs/_namespace.yaml"
    ns.write_text(ns.read_text().replace("{max_age: 1d, min_keep: 10}", "{max_age: 2d, min_keep: 10}"))
    code, output = plan(str(policies), "--format", "markdown")
    assert code == 0
    assert "| `logs.app_events` | 1 | 0 | 0 |" in output
    assert "'history.expire.max-snapshot-age-ms' = '172800000'" in output
    text = plan(str(policies))[1]
    assert "history.expire.max-snapshot-age-ms: from " in text and "logs/_namespace.yaml:6:" in text


def test_import_round_trip_of_every_example(policies: Path, tmp_path: Path) -> None:
    imported = tmp_path / "imported"
    names = ["ads.click_log", "logs.app_events", "security.cloudtrail_mgmt"]
    result = runner.invoke(app, ["import", *names, "--policies", str(policies), "--out", str(imported)])
    assert result.exit_code == 0, result.output
    # the imported files, planned against the same catalog, hold nothing to do
    code, output = plan(str(imported), "--catalog", "lake", "--detailed-exitcode")
    assert code == 0, output
    assert runner.invoke(app, ["validate", str(imported)]).exit_code == 0


def test_plan_cache_is_invalidated_by_catalog_commits_and_policy_edits(policies: Path) -> None:
    assert plan(str(policies), "--detailed-exitcode")[0] == 0
    cache = policies.parent / ".tablepolicy" / "plan-cache.json"
    assert (policies.parent / ".tablepolicy" / "models.tsv").exists()
    assert len(json.loads(cache.read_text())["entries"]) == 4
    # out of band: another tool changes an owned property; the metadata location moves, the cache misses
    table = embedded_catalog(policies).load_table(("logs", "app_events"))
    with table.transaction() as tx:
        tx.set_properties({"write.target-file-size-bytes": "1024"})
    code, output = plan(str(policies), "--detailed-exitcode")
    assert code == 2 and "write.target-file-size-bytes: 1024 -> 536870912" in output
    # a policy edit changes the key, the cache misses too
    policy = policies / "ads/click_log.yaml"
    policy.write_text(policy.read_text().replace("max_age: 2d", "max_age: 3d"))
    assert "history.expire.max-snapshot-age-ms: 172800000 -> 259200000" in plan(str(policies))[1]


def test_drift_shows_what_git_does_not_say(policies: Path) -> None:
    result = runner.invoke(app, ["drift", str(policies), "--detailed-exitcode"])
    header = f"Catalog: lake (sql, sqlite:///{policies.parent / '.lake' / 'catalog.db'})"
    assert (result.exit_code, result.output.strip()) == (0, f"{header}\nNo drift: the catalog holds what git declares.")
    table = embedded_catalog(policies).load_table(("ads", "click_log"))
    with table.transaction() as tx:
        tx.set_properties({"history.expire.min-snapshots-to-keep": "5", "other.tool.setting": "x"})
    embedded_catalog(policies).create_table(("ads", "shadow"), schema=table.schema())
    result = runner.invoke(app, ["drift", str(policies), "--detailed-exitcode"])
    assert result.exit_code == 2
    assert "catalog differs: apply would set history.expire.min-snapshots-to-keep: 5 -> 1" in result.output
    assert "not in git: property other.tool.setting = x" in result.output
    assert "table ads.shadow: in a managed namespace, not declared in git" in result.output
