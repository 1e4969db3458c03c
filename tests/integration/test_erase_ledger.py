"""erase with the request ledger on real Spark (embedded SQLite catalog): a run records each request, prints a
certificate and writes it into the proof; a re-run skips what is done and erases only the new request;
``erase status`` then lists them done; the old command forms keep working."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tablepolicy.cli.app import app
from tests.integration.conftest import Lake, sqlite_lake
from tests.integration.evolve import converge

pytestmark = pytest.mark.spark

POLICY = """
table: privacy.events
columns:
  - {name: event_id, type: long, required: true}
  - {name: user, type: {struct: [{name: uid, type: long}]}}
  - {name: ts, type: timestamptz}
partition_by: [day(ts)]
lifecycle:
  erasure: {key: [user.uid], within: 30d}
"""


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lake]:
    """One Spark session for the module, on the embedded SQLite catalog only (PostgreSQL: test_erasure_ledger)."""
    with sqlite_lake(tmp_path_factory.mktemp("lake")) as made:
        yield made


def cli(lake: Lake, *args: str) -> tuple[int, str]:
    env = {f"PYICEBERG_CATALOG__LAKE__{key.upper()}": value for key, value in lake.config.properties.items()}
    result = CliRunner(env={**env, "NO_COLOR": "1"}).invoke(app, [*args, "--catalog", "lake"])
    lake.reload()  # erase commits through pyiceberg: Spark reads the catalog afresh
    return result.exit_code, result.output


def uids(lake: Lake) -> list[int]:
    return sorted(r.uid for r in lake.spark.sql("SELECT user.uid AS uid FROM lake.privacy.events").collect())


def test_a_rerun_skips_done_requests_and_status_lists_them(lake: Lake, tmp_path: Path) -> None:
    policies = tmp_path / "policies"
    policies.mkdir()
    (policies / "events.yaml").write_text(POLICY)
    converge(lake, POLICY)
    for commit in range(2):
        lake.spark.sql("INSERT INTO lake.privacy.events VALUES " + ", ".join(
            f"({commit * 10 + u}, named_struct('uid', {u}), TIMESTAMP '2026-11-0{commit + 1} 10:00:00+00:00')"
            for u in (1, 2, 3, 4)))
    # erase records the day it runs and judges the SLA by it (the CLI reads the machine's clock): the requests
    # arrived two days and one day before this test, so their 30-day deadlines are ahead whatever the date
    today = datetime.now(UTC).date()
    received, later = today - timedelta(days=2), today - timedelta(days=1)
    first = tmp_path / "first.csv"
    first.write_text(f"id,received,user.uid\nREQ-1,{received},1\n")

    code, output = cli(lake, "erase", str(policies), "--requests", str(first), "--dry-run")
    assert code == 0, output  # the dry run shows the statements; the keys reach Spark as data, never in them
    assert "DELETE FROM `lake`.`privacy`.`events` WHERE `user`.`uid` IN (SELECT" in output
    assert uids(lake) == [1, 1, 2, 2, 3, 3, 4, 4]  # a dry run changes nothing, and records nothing:
    code, output = cli(lake, "erase", "status", str(policies))
    assert code == 0 and "No erasure request recorded" in output

    proof = tmp_path / "proof.json"
    code, output = cli(lake, "erase", str(policies), "--requests", str(first), "--proof", str(proof))
    assert code == 0, output
    assert uids(lake) == [2, 2, 3, 3, 4, 4]
    assert "Certificate (no key values):" in output
    assert f"  REQ-1  done     received {received}, deadline {received + timedelta(days=30)}; SLA met" in output
    document = json.loads(proof.read_text())
    assert document["complete"] and document["skipped"] == []
    assert document["certificate"]["requests"][0]["tables"][0]["proof"]["rows"] == 2

    second = tmp_path / "second.jsonl"  # the same request again, and a new one
    second.write_text(f'{{"id": "REQ-1", "received": "{received}", "keys": {{"user.uid": 1}}}}\n'
                      f'{{"id": "REQ-2", "received": "{later}", "keys": {{"user.uid": 3}}}}\n')
    code, output = cli(lake, "erase", str(policies), "--requests", str(second), "--proof", str(proof))
    assert code == 0, output
    assert "- privacy.events: skipped 1 request(s) already erased and proven" in output
    assert "- erase 1 subject(s) from privacy.events by user.uid" in output
    assert uids(lake) == [2, 2, 4, 4]
    document = json.loads(proof.read_text())
    assert [s["request"] for s in document["skipped"]] == ["REQ-1"]
    assert [t["requests"] for t in document["tables"]] == [["REQ-2"]] and document["complete"]
    assert [r["state"] for r in document["certificate"]["requests"]] == ["done", "done"]
    assert '"3"' not in proof.read_text() and "uid = 3" not in proof.read_text()

    code, output = cli(lake, "erase", str(policies), "--requests", str(second))
    assert code == 0 and "Nothing to erase: every request is done on every table it reaches." in output

    code, output = cli(lake, "erase", "status", str(policies), "--format", "json")
    assert code == 0
    assert [(r["id"], r["state"], r["sla_met"]) for r in json.loads(output)["requests"]] == [
        ("REQ-1", "done", True), ("REQ-2", "done", True)]


def test_help_shows_the_run_options_and_the_status_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runner = CliRunner(env={"NO_COLOR": "1", "COLUMNS": "120"})
    run_help = runner.invoke(app, ["erase", "--help"]).output
    assert "Usage: tablepolicy erase [OPTIONS] [path]" in run_help
    assert "--requests" in run_help and "--dry-run" in run_help and "tablepolicy erase status" in run_help
    status_help = runner.invoke(app, ["erase", "status", "--help"]).output
    assert "Usage: tablepolicy erase status [OPTIONS] [path]" in status_help and "--format" in status_help
    assert "erase" in runner.invoke(app, ["--help"]).output
    missing = runner.invoke(app, ["erase", "policies"])
    assert missing.exit_code == 2 and "give exactly one of --requests FILE" in missing.output
    monkeypatch.chdir(tmp_path)  # the oldest form: no path (policies/ of the working directory), no subcommand
    (tmp_path / "policies").mkdir()
    (tmp_path / "policies" / "events.yaml").write_text(POLICY)
    (tmp_path / "requests.txt").write_text("x")
    default = runner.invoke(app, ["erase", "--requests", "requests.txt", "--dry-run"])
    assert default.exit_code == 1
    assert "requests.txt: error TP604: unknown requests format '.txt'" in default.output
