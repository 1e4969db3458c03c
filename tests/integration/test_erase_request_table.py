"""erase --requests-table on real Spark (embedded SQLite catalog): the privacy portal
appends requests to an Iceberg table declared like any other (init's policy); erase reads the pending rows, erases
the subjects, then empties their keys in the request table (the ledger's fingerprint instead), expires its older
snapshots and deletes their files, so no byte under the request table's location holds a key. A bad request table
or row refuses the run before anything is erased. Also here: requests on standard input, a requests file in a git
work tree refused, batching over simulated days, and the ledger in the lake seen from a second project folder
(the lake ledger on PostgreSQL and S3: tests/integration/test_lake_ledger.py)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pyarrow as pa
import pytest
from typer.testing import CliRunner

from tablepolicy.cli.app import app
from tablepolicy.runtime.catalog.reader import open_catalog
from tablepolicy.runtime.scaffold import REQUEST_TABLE
from tests.integration.conftest import Lake, sqlite_lake
from tests.integration.evolve import converge

pytestmark = pytest.mark.spark

EVENTS = """
table: privacy.events
columns:
  - {name: event_id, type: long, required: true}
  - {name: user_id, type: string}
  - {name: ts, type: timestamptz}
partition_by: [day(ts)]
lifecycle:
  erasure: {key: [user_id], within: 30d}
"""
ERASED = {"REQ-1": "subject-one@example.com", "REQ-2": "subject-two@example.com"}
KEPT = ["kept-three@example.com", "kept-four@example.com"]


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lake]:
    with sqlite_lake(tmp_path_factory.mktemp("lake")) as made:
        converge(made, EVENTS)
        converge(made, REQUEST_TABLE)
        yield made


@pytest.fixture(scope="module")
def policies(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("project") / "policies"
    (folder / "privacy").mkdir(parents=True)
    (folder / "privacy" / "events.yaml").write_text(EVENTS)
    (folder / "privacy" / "erasure_requests.yaml").write_text(REQUEST_TABLE)
    return folder


def cli(lake: Lake, *args: str, stdin: str | None = None) -> tuple[int, str]:
    env = {f"PYICEBERG_CATALOG__LAKE__{key.upper()}": value for key, value in lake.config.properties.items()}
    result = CliRunner(env={**env, "NO_COLOR": "1"}).invoke(app, [*args, "--catalog", "lake"], input=stdin)
    lake.reload()
    return result.exit_code, result.output


def users(lake: Lake) -> list[str]:
    return sorted(r.user_id for r in lake.spark.sql("SELECT user_id FROM lake.privacy.events").collect())


def append_requests(lake: Lake, rows: list[dict[str, object]]) -> None:
    table = open_catalog(lake.config).load_table(("privacy", "erasure_requests"))
    table.append(pa.Table.from_pylist(
        [{"deadline": None, "status": "pending", "fingerprint": None, **r} for r in rows],
        schema=table.schema().as_arrow()))


def request_rows(lake: Lake) -> dict[str, dict[str, object]]:
    table = open_catalog(lake.config).load_table(("privacy", "erasure_requests"))
    return {r["id"]: r for r in table.scan().to_arrow().to_pylist()}


def every_byte_under(location: str) -> bytes:
    root = Path(location.removeprefix("file:"))
    return b"".join(p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file())


def test_requests_from_the_table_are_erased_and_then_erased_from_the_table(lake: Lake, policies: Path) -> None:
    for commit in range(2):
        lake.spark.sql("INSERT INTO lake.privacy.events VALUES " + ", ".join(
            f"({commit * 10 + i}, '{u}', TIMESTAMP '2026-11-0{commit + 1} 10:00:00+00:00')"
            for i, u in enumerate([*ERASED.values(), *KEPT])))
    today = datetime.now(UTC).date()  # the CLI judges dates by the machine's day: received days before it
    append_requests(lake, [{"id": "REQ-1", "received": today - timedelta(days=3),
                            "keys": [("user_id", ERASED["REQ-1"])]}])
    append_requests(lake, [{"id": "REQ-2", "received": today - timedelta(days=1),
                            "keys": [("user_id", ERASED["REQ-2"])], "deadline": today + timedelta(days=5)}])
    requests = open_catalog(lake.config).load_table(("privacy", "erasure_requests"))
    assert len(requests.metadata.snapshots) == 2
    assert all(v.encode() in every_byte_under(requests.location()) for v in ERASED.values())

    code, output = cli(lake, "erase", "status", str(policies), "--requests-table", "privacy.erasure_requests")
    assert code == 0, output
    assert f"deadline {today + timedelta(days=5)}" in output  # the request's own deadline, before the 30-day SLA

    code, output = cli(lake, "erase", str(policies), "--requests-table", "privacy.erasure_requests")
    assert code == 0, output
    assert users(lake) == sorted(KEPT * 2)  # the subjects' rows are gone, every other row kept
    rows = request_rows(lake)
    assert sorted(rows) == ["REQ-1", "REQ-2"]
    for row in rows.values():
        assert row["keys"] == [] and row["status"] == "done"
        assert isinstance(row["fingerprint"], str) and len(row["fingerprint"].split(":")[1]) == 64
    assert rows["REQ-2"]["deadline"] == today + timedelta(days=5) and rows["REQ-1"]["received"] == \
        today - timedelta(days=3)
    requests = open_catalog(lake.config).load_table(("privacy", "erasure_requests"))
    assert len(requests.metadata.snapshots) == 1  # the snapshots that held the keys are expired
    stored = every_byte_under(requests.location())
    assert not any(v.encode() in stored for v in ERASED.values())  # no data, manifest or metadata file holds a key
    assert "request table privacy.erasure_requests: the keys of REQ-1, REQ-2 replaced by their fingerprint" in output
    assert "subject-one" not in output and "subject-two" not in output

    code, output = cli(lake, "erase", str(policies), "--requests-table", "privacy.erasure_requests")
    assert code == 0, output  # nothing pending: nothing to do
    assert "holds no request" not in output
    code, output = cli(lake, "erase", "status", str(policies))
    assert code == 0 and "REQ-1  done" in output and "REQ-2  done" in output, output

    # the same id again for another subject: refused (the ledger's fingerprint differs), nothing erased
    append_requests(lake, [{"id": "REQ-1", "received": today, "keys": [("user_id", KEPT[0])]}])
    code, output = cli(lake, "erase", str(policies), "--requests-table", "privacy.erasure_requests")
    assert code == 1 and "TP606" in output and "with other key values" in output, output
    assert users(lake) == sorted(KEPT * 2)
    table = open_catalog(lake.config).load_table(("privacy", "erasure_requests"))
    again = [(r["id"], r["status"], r["keys"]) for r in table.scan().to_arrow().to_pylist()]
    assert sorted(again, key=str) == sorted([("REQ-1", "done", []), ("REQ-2", "done", []),
                                             ("REQ-1", "pending", [("user_id", KEPT[0])])], key=str)


def test_requests_on_standard_input_are_erased(lake: Lake, policies: Path) -> None:
    lake.spark.sql("INSERT INTO lake.privacy.events VALUES (100, 'stdin-subject', TIMESTAMP '2026-11-03 10:00:00"
                   "+00:00'), (101, 'stdin-kept', TIMESTAMP '2026-11-03 10:00:00+00:00')")
    received = datetime.now(UTC).date() - timedelta(days=1)
    text = f'{{"id": "REQ-STDIN", "received": "{received}", "keys": {{"user_id": "stdin-subject"}}}}\n'
    code, output = cli(lake, "erase", str(policies), "--requests", "-", stdin=text)
    assert code == 0, output
    found = users(lake)
    assert "stdin-subject" not in found and "stdin-kept" in found


def test_a_requests_file_in_a_git_work_tree_is_refused_before_anything_is_erased(lake: Lake, policies: Path,
                                                                                tmp_path: Path) -> None:
    lake.spark.sql("INSERT INTO lake.privacy.events VALUES (200, 'git-subject', TIMESTAMP '2026-11-03 10:00:00+00:00')")
    (tmp_path / ".git").mkdir()
    file = tmp_path / "requests.csv"
    file.write_text(f"id,received,user_id\nREQ-GIT,{datetime.now(UTC).date()},git-subject\n")
    code, output = cli(lake, "erase", str(policies), "--requests", str(file))
    assert code == 1 and "TP618" in output and "git filter-repo --path requests.csv --invert-paths" in output, output
    assert "git-subject" in users(lake)


@pytest.mark.parametrize(("setup", "code_expected"), [
    (None, "TP614"),
    ("CREATE TABLE lake.privacy.bad_requests (id string, received string, keys map<string,string>, status string,"
     " fingerprint string) USING iceberg", "TP615"),
], ids=["missing", "wrong-columns"])
def test_a_missing_or_wrong_request_table_is_refused(lake: Lake, policies: Path, setup: str | None,
                                                     code_expected: str) -> None:
    before = users(lake)
    if setup is not None:
        lake.spark.sql(setup)
    code, output = cli(lake, "erase", str(policies), "--requests-table", "privacy.bad_requests")
    assert code == 1 and code_expected in output, output
    assert users(lake) == before


@pytest.mark.parametrize(("row", "code_expected"), [
    ({"id": "REQ-NOKEY", "keys": []}, "TP103"),
    ({"id": "REQ-FUTURE", "received": date(2999, 1, 1), "keys": [("user_id", KEPT[1])]}, "TP616"),
    ({"id": "REQ-EARLY", "deadline": date(2020, 1, 1), "keys": [("user_id", KEPT[1])]}, "TP617"),
], ids=["no-key", "future", "deadline-before-received"])
def test_a_bad_row_refuses_the_run_and_erases_nothing(lake: Lake, policies: Path, row: dict[str, object],
                                                      code_expected: str) -> None:
    catalog = open_catalog(lake.config)
    catalog.purge_table(("privacy", "erasure_requests"))
    converge(lake, REQUEST_TABLE)
    lake.spark.sql("INSERT INTO lake.privacy.events VALUES "
                   "(300, 'bad-row-kept', TIMESTAMP '2026-11-03 10:00:00+00:00')")
    before = users(lake)
    today = datetime.now(UTC).date()
    append_requests(lake, [{"id": "REQ-GOOD", "received": today, "keys": [("user_id", "bad-row-kept")]},
                           {"received": today - timedelta(days=1), **row}])
    code, output = cli(lake, "erase", str(policies), "--requests-table", "privacy.erasure_requests")
    assert code == 1 and code_expected in output, output
    assert users(lake) == before  # the good request is not erased either: the table is refused as a whole
    assert request_rows(lake)["REQ-GOOD"]["keys"] == [("user_id", "bad-row-kept")]


BATCHED = """
table: privacy.batched_events
columns:
  - {name: event_id, type: long, required: true}
  - {name: user_id, type: string}
lifecycle:
  erasure: {key: [user_id], within: 30d, batch_margin: 1d}
"""


def test_held_requests_are_erased_together_in_one_rewrite_before_their_deadline(
        lake: Lake, policies: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Simulated days from fixed dates (the run's instant is given): requests of day 0 and day 10 wait, and the run
    of day 29 (day 0's deadline minus the 1-day margin) erases both with one rewrite."""
    import tablepolicy

    for key, value in lake.config.properties.items():
        monkeypatch.setenv(f"PYICEBERG_CATALOG__LAKE__{key.upper()}", value)
    converge(lake, BATCHED)
    (policies / "privacy" / "batched_events.yaml").write_text(BATCHED)
    lake.spark.sql("INSERT INTO lake.privacy.batched_events VALUES " + ", ".join(
        f"({i}, '{u}')" for i, u in enumerate(["b-zero", "b-ten", "b-kept"] * 3)))
    lake.reload()
    requests = tmp_path / "requests.jsonl"  # outside any git work tree
    day = datetime(2026, 11, 1, 9, tzinfo=UTC)
    lines = ['{"id": "REQ-B0", "received": "2026-11-01", "keys": {"user_id": "b-zero"}}']

    def run(on: datetime) -> tablepolicy.ErasureOutcome:
        requests.write_text("\n".join(lines) + "\n")
        outcome = tablepolicy.erase(policies, requests=requests, catalog="lake", now=on)
        lake.reload()
        return outcome

    def batched_users() -> list[str]:
        return sorted(r.user_id for r in lake.spark.sql("SELECT user_id FROM lake.privacy.batched_events").collect())

    first = run(day)  # privacy.events (no margin) erases the request at once; batched_events holds it
    assert [t.table for t in first.held] == [("privacy", "batched_events")]
    assert [t.proof.table for t in first.tables] == [("privacy", "events")]
    assert batched_users() == sorted(["b-zero", "b-ten", "b-kept"] * 3)
    lines.append('{"id": "REQ-B10", "received": "2026-11-11", "keys": {"user_id": "b-ten"}}')
    assert [t.table for t in run(day + timedelta(days=10)).held] == [("privacy", "batched_events")]
    status = tablepolicy.erase_status(policies, catalog="lake", requests=requests, today=date(2026, 11, 11))
    runs = {s.request: (s.runs_on, s.deadline) for s in status.statuses}
    assert runs == {"REQ-B0": (date(2026, 11, 30), date(2026, 12, 1)), "REQ-B10": (date(2026, 12, 10),
                                                                                   date(2026, 12, 11))}

    last = run(day + timedelta(days=29))
    assert [(b.due, b.joined) for b in last.batches] == [(("REQ-B0",), ("REQ-B10",))]
    assert len(last.tables) == 1 and last.complete
    assert batched_users() == ["b-kept"] * 3
    assert all(s.deadline >= date(2026, 11, 30) for s in last.certificate)  # erased on day 29: none late


def test_the_ledger_in_the_lake_is_seen_by_a_runner_on_another_machine(lake: Lake, policies: Path,
                                                                        tmp_path: Path) -> None:
    """``tablepolicy-ledger: table``: the ledger is Iceberg tables of the catalog; a second project folder (another
    runner, no file of the first) skips what the first erased."""
    from tablepolicy.runtime.lake_ledger import LEDGER

    lake.spark.sql("INSERT INTO lake.privacy.events VALUES (400, 'lake-ledger-subject', "
                   "TIMESTAMP '2026-11-03 10:00:00+00:00')")
    other = tmp_path / "runner-2" / "policies"
    other.mkdir(parents=True)
    for file in (policies / "privacy").iterdir():
        (other / file.name).write_text(file.read_text())
    received = datetime.now(UTC).date()
    text = f'{{"id": "REQ-LAKE", "received": "{received}", "keys": {{"user_id": "lake-ledger-subject"}}}}\n'
    setting = {"PYICEBERG_CATALOG__LAKE__TABLEPOLICY_LEDGER": "table"}
    env = {f"PYICEBERG_CATALOG__LAKE__{key.upper()}": value for key, value in lake.config.properties.items()}
    runner = CliRunner(env={**env, **setting, "NO_COLOR": "1"})

    first = runner.invoke(app, ["erase", str(policies), "--requests", "-", "--catalog", "lake"], input=text)
    lake.reload()
    assert first.exit_code == 0, first.output
    assert "lake-ledger-subject" not in users(lake)
    rows = open_catalog(lake.config).load_table(LEDGER).scan().to_arrow().to_pylist()
    assert [(r["request_id"], r["state"]) for r in rows if r["request_id"] == "REQ-LAKE"] == [("REQ-LAKE", "done")]
    second = runner.invoke(app, ["erase", str(other), "--requests", "-", "--catalog", "lake"], input=text)
    assert second.exit_code == 0, second.output
    assert "skipped 1 request(s) already erased and proven" in second.output
    status = runner.invoke(app, ["erase", "status", str(other), "--catalog", "lake"])
    assert "REQ-LAKE  done" in status.output, status.output
