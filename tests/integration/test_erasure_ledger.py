"""The erasure request ledger on a real SQLite file and a real PostgreSQL server, and ``erase status`` read
from it with pyspark unimportable (no JVM), before and after a run is recorded, with an overdue request."""

from __future__ import annotations

import dataclasses
import json
import shutil
from collections.abc import Iterator
from datetime import UTC, date, datetime
from pathlib import Path

import pytest
from sqlalchemy import create_engine, event, text

from tablepolicy.compiler.desired import desired_table
from tablepolicy.compiler.erasure.ledger import (
    Entry,
    State,
    keys_fingerprint,
    outstanding,
    subject_entries,
    subject_entry,
)
from tablepolicy.compiler.erasure.plan import erasure_plan
from tablepolicy.compiler.erasure.requests import load_requests
from tablepolicy.runtime.ledger import LEDGER_FILE, SQLITE_LEDGER_FILE, Ledger
from tests.catalog_fixtures import create_examples
from tests.cli_runner import pyspark_blocker, pyspark_unimportable, tablepolicy, tablepolicy_process
from tests.integration.evolve import project_of
from tests.pgserver import postgres_server

ROOT = Path(__file__).resolve().parents[2]
NOW = datetime(2026, 11, 20, 9, 30, tzinfo=UTC)
POLICY = """
table: ads.clicks
columns:
  - {name: user_id, type: string}
lifecycle:
  erasure: {key: [user_id], within: 30d}
"""
PROOF = {"table": "ads.clicks", "requests": ["A", "B"], "complete": True, "rows_before": 6, "rows_after": 0,
         "files_with_keys_before": ["f1", "f2"], "snapshots_checked": [1, 2, 3], "files_still_referenced": [],
         "files_still_stored": [], "blocking_refs": [], "error": None}


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def engine(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    if request.param == "postgresql":
        with postgres_server() as url:
            yield create_engine(url)
    else:
        yield create_engine(f"sqlite:///{tmp_path_factory.mktemp('ledger') / 'catalog.db'}")


def planned(requests_text: str) -> tuple[object, list[object]]:
    project = project_of(POLICY)
    state = desired_table(project, project.tables[0]).state
    requests, diagnostics = load_requests(requests_text, "r.csv")
    assert requests is not None, [d.render() for d in diagnostics]
    tables, found = erasure_plan(project, requests, {state.name: state})
    assert not found.has_errors
    return requests, tables


def test_a_run_is_recorded_read_back_and_skipped_the_next_time(engine: object, tmp_path: Path) -> None:
    catalog = f"lake_{tmp_path.name[-20:]}".replace("-", "_")  # a catalog per case: the database is shared
    ledger = Ledger.open(engine, catalog, "sql", tmp_path, create=True)  # type: ignore[arg-type]
    requests, (table,) = planned("id,received,user_id\nA,2026-11-02,\"o'n,\"\"x\"\"\"\nB,2026-11-03,b\n")
    received = {r.id: r.received for r in requests.model.requests}  # type: ignore[attr-defined]
    pending = [subject_entry(table, s, received[s.request], "pending", "salt") for s in table.subjects]
    ledger.record_pending(pending, NOW)
    ledger.record_pending(pending, NOW)  # a second start changes nothing
    assert {k: e.state for k, e in ledger.entries().items()} == {("A", "ads.clicks"): "pending",
                                                                ("B", "ads.clicks"): "pending"}
    done = [subject_entry(table, s, received[s.request], "done", "salt") for s in table.subjects[:1]]
    ledger.record(done, PROOF, NOW)
    ledger.record_pending(pending, NOW)  # a later run's start keeps what is done
    entries = ledger.entries(["ads.clicks"])
    a, b = entries[("A", "ads.clicks")], entries[("B", "ads.clicks")]
    assert (a.state, a.deadline, a.done_at, a.proof) == ("done", date(2026, 12, 2), NOW, PROOF)
    assert (b.state, b.done_at, b.proof) == ("pending", None, None)
    assert ledger.entries(["other.table"]) == {}

    todo = outstanding([table], entries, requests)  # type: ignore[arg-type]
    assert [s.request for t in todo.tables for s in t.subjects] == ["B"] and [e.request for e in todo.done] == ["A"]
    with ledger.engine.connect() as connection:
        stored = json.dumps([list(r) for r in connection.execute(text(
            "SELECT * FROM tablepolicy_erasure_ledger l LEFT JOIN tablepolicy_erasure_proofs p "
            "ON p.proof_id = l.proof_id"))])
    assert "o'n" not in stored and "o\\'n" not in stored  # a salted hash of the keys, never the values

    reused, (again,) = planned("id,received,user_id\nA,2026-11-02,someone else\n")
    todo = outstanding([again], entries, reused)  # type: ignore[arg-type]
    assert [d.render().splitlines()[0] for d in todo.findings] == [
        "r.csv:2:14: error TP606: request 'A' was erased from ads.clicks on 2026-11-20 with other key values"]


def test_thousands_of_requests_are_recorded_by_one_statement_each(engine: object, tmp_path: Path) -> None:
    """A run's pending rows are one statement run for every row (compiled once), its outcome one more beside the
    proof's: a multi-row VALUES statement per 500 rows was compiled each time (1.3 s per 10,000 requests)."""
    catalog = f"bulk_{tmp_path.name[-20:]}".replace("-", "_")
    ledger = Ledger.open(engine, catalog, "sql", tmp_path, create=True)  # type: ignore[arg-type]
    entries = [Entry(f"R{i:05}", "ads.clicks", date(2026, 11, 2), date(2026, 12, 2), "done", "s:h")
               for i in range(1_234)]
    statements: list[str] = []
    listener = lambda _conn, clause, *_rest: statements.append(str(clause).split(" ", 2)[:2])  # noqa: E731
    event.listen(ledger.engine, "before_execute", listener)
    try:
        ledger.record_pending([dataclasses.replace(e, state=State.PENDING) for e in entries], NOW)
        ledger.record_pending([], NOW)  # nothing to note: no statement
        ledger.record(entries, PROOF, NOW)
    finally:
        event.remove(ledger.engine, "before_execute", listener)
    assert statements == [["INSERT", "INTO"]] * 3
    found = ledger.entries()
    assert len(found) == 1_234 and {e.state for e in found.values()} == {"done"}
    assert {id(e.proof) for e in found.values()} == {id(found[("R00000", "ads.clicks")].proof)}  # parsed once


def test_a_catalog_without_a_database_keeps_the_ledger_in_a_project_file_and_says_so(tmp_path: Path) -> None:
    reading = Ledger.open(None, "rest_cat", "rest", tmp_path / ".tablepolicy", create=False)
    assert reading.entries() == {} and not (tmp_path / ".tablepolicy").exists()  # status creates nothing
    ledger = Ledger.open(None, "rest_cat", "rest", tmp_path / ".tablepolicy", create=True)
    assert "catalog 'rest_cat' (rest) has no PostgreSQL or SQLite database file" in (ledger.note or "")
    ledger.record([Entry("A", "t.x", date(2026, 1, 1), date(2026, 1, 31), "held", "s:h")], PROOF, NOW)
    ledger.close()
    assert (tmp_path / ".tablepolicy" / LEDGER_FILE).is_file()
    again = Ledger.open(None, "rest_cat", "rest", tmp_path / ".tablepolicy", create=False)
    assert [e.state for e in again.entries().values()] == ["held"]


# --- erase status through the CLI, with no JVM -----------------------------------------------------------------


def status(project: Path, *args: str, process: bool = False) -> tuple[int, str, str]:
    """``erase status`` where importing pyspark raises: in this process, or in a process of its own."""
    if process:
        run = tablepolicy_process("erase", "status", "policies", *args, cwd=project,
                                  env=pyspark_blocker(project / "no-spark"))
    else:
        with pyspark_unimportable():
            run = tablepolicy("erase", "status", "policies", *args, cwd=project)
    return run.returncode, run.stdout, run.stderr


def test_status_before_and_after_a_recorded_run_flags_the_overdue_request(tmp_path: Path) -> None:
    policies = shutil.copytree(ROOT / "policies", tmp_path / "policies")
    create_examples(policies)
    requests = tmp_path / "requests.jsonl"
    requests.write_text('{"id": "OLD-1", "received": "2020-01-02", "keys": {"user_id": "u1"}}\n'
                        '{"id": "NEW-2", "received": "2999-01-02", "keys": {"user_id": "u2"}}\n')

    code, out, err = status(tmp_path)
    assert (code, err) == (0, "")
    assert out.splitlines()[1:] == [
        f"No erasure request recorded for these tables in {tmp_path.resolve() / '.lake' / SQLITE_LEDGER_FILE}."]
    code, out, _ = status(tmp_path, "--requests", str(requests))
    assert code == 1
    assert out.splitlines()[1:] == [
        "NEW-2  pending  received 2999-01-02, deadline 2999-02-01",
        "    ads.click_log: pending",
        "OLD-1  OVERDUE  received 2020-01-02, deadline 2020-02-01",
        "    ads.click_log: pending (OVERDUE since 2020-02-01)",
        "2 request(s): 2 pending, 0 done, 0 held, 0 failed; 1 OVERDUE"]

    # what erase records: the old request done (late), the new one pending
    engine = create_engine(f"sqlite:///{tmp_path / '.lake' / 'catalog.db'}")
    ledger = Ledger.open(engine, "lake", "sql", tmp_path / ".tablepolicy", create=True)
    ledger.record([Entry("OLD-1", "ads.click_log", date(2020, 1, 2), date(2020, 2, 1), "done", "s:h")], PROOF, NOW)
    ledger.record_pending([Entry("NEW-2", "ads.click_log", date(2999, 1, 2), date(2999, 2, 1), "pending", "s:h")],
                          NOW)
    engine.dispose()
    assert ledger.where == str(tmp_path / ".lake" / SQLITE_LEDGER_FILE)  # kept with the catalog's database
    code, out, _ = status(tmp_path)
    assert code == 0
    assert out.splitlines()[1:] == [
        "NEW-2  pending  received 2999-01-02, deadline 2999-02-01",
        "    ads.click_log: pending",
        "OLD-1  done     received 2020-01-02, deadline 2020-02-01; SLA MISSED",
        "    ads.click_log: done 2026-11-20: 6 row(s) in 2 file(s) (a run of 2 request(s)), verified: no key in 3 "
        "snapshot(s) kept or in storage",
        "2 request(s): 1 pending, 1 done, 0 held, 0 failed; 1 done after the deadline"]
    code, out, _ = status(tmp_path, "--format", "json")
    document = json.loads(out)
    assert code == 0 and document["catalog"]["name"] == "lake"
    assert document["counts"] == {"pending": 1, "done": 1, "held": 0, "failed": 0, "overdue": 0, "sla_missed": 1}
    old = document["requests"][1]
    assert (old["id"], old["state"], old["sla_met"], old["tables"][0]["proof"]["verified"]) == (
        "OLD-1", "done", False, True)
    assert status(tmp_path, "--format", "json", process=True) == (0, out, "")  # the same ledger, the same bytes


def test_status_refuses_what_resolves_to_nothing(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "policies", tmp_path / "policies")
    create_examples(tmp_path / "policies")
    code, _, err = status(tmp_path, "--requests", "missing.csv")
    assert code == 1 and "error: --requests missing.csv: cannot read it" in err
    (tmp_path / "r.txt").write_text("x")
    code, _, err = status(tmp_path, "--requests", "r.txt")
    assert code == 1 and "r.txt: error TP604: unknown requests format '.txt'" in err
    code, _, err = status(tmp_path, "-c", "nowhere")
    assert code == 1 and "nowhere" in err


def test_a_tables_entries_carry_the_fingerprints_earlier_runs_stored() -> None:
    """A ledger written by an earlier release is read with the same fingerprints (the canonical JSON of the typed
    values is fixed), and a table's entries are made at once as one by one."""
    assert keys_fingerprint(["user_id", "user.uid"], ("o'neil, \"jr\" ü", 7), "salt") == \
        "salt:ead22f6277e011b43017ca3f847e1110c38ddeb34a003101324df5d914776e33"
    assert keys_fingerprint(["b", "a"], ("\ud800x", -5), "s2") == \
        "s2:e91ecaa4cd7667b2d1363472134ba2269aadefa7d20f9ce4d13f21079acaa762"
    requests, (table,) = planned("id,received,user_id\nA,2026-11-02,\"o'n,\"\"x\"\"\"\nB,2026-11-03,b\n")
    received = {r.id: r.received for r in requests.model.requests}  # type: ignore[attr-defined]
    assert subject_entries(table, received, State.DONE, "s") == [  # type: ignore[arg-type]
        subject_entry(table, s, received[s.request], State.DONE, "s") for s in table.subjects]  # type: ignore[attr-defined]
