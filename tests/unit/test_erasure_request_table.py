"""Requests from where personal data may live, checked before anything is erased: the request table's columns and
rows (compiler/erasure/request_table.py), dates (TP616, TP617), standard input's format, a requests file inside a
git work tree (TP618) and one git tracks (TP619, read from git's index without a git process)."""

from __future__ import annotations

import hashlib
import struct
from datetime import date
from pathlib import Path

import pytest

from tablepolicy.compiler.erasure.request_table import COLUMNS, Row, column_findings, table_requests
from tablepolicy.compiler.erasure.requests import Text, date_findings, load_requests, sniffed_format
from tablepolicy.runtime.erase_run import in_git_finding
from tablepolicy.runtime.tracked_requests import index_paths, tracked_requests

TODAY = date(2026, 11, 20)
GOOD = {name: (kind, required) for name, (kind, required) in COLUMNS.items()}


def row(ident: str | None = "REQ-1", received: date | None = date(2026, 11, 2), keys: object = (("user_id", "u1"),),
        status: str | None = "pending", deadline: date | None = None) -> Row:
    return Row(ident, received, deadline, keys, status, None)  # type: ignore[arg-type]


def messages(findings: object) -> list[str]:
    return [d.render().splitlines()[0] for d in findings.items]  # type: ignore[attr-defined]


def test_the_columns_init_scaffolds_are_accepted_and_others_may_stand_beside_them() -> None:
    assert messages(column_findings("privacy.r", GOOD)) == []
    assert messages(column_findings("privacy.r", {**GOOD, "portal_ref": ("string", False)})) == []
    without_deadline = {k: v for k, v in GOOD.items() if k != "deadline"}
    assert messages(column_findings("privacy.r", without_deadline)) == []  # deadline is optional: the SLA applies


@pytest.mark.parametrize(("columns", "expected"), [
    ({k: v for k, v in GOOD.items() if k != "keys"},
     "privacy.r: error TP615: request table privacy.r has no column keys"),
    ({**GOOD, "received": ("timestamptz", True)},
     "privacy.r: error TP615: request table privacy.r has received of type timestamptz, not date"),
    ({**GOOD, "keys": ("string", True)},
     "privacy.r: error TP615: request table privacy.r has keys of type string, not map<string, string>"),
], ids=["no-keys", "received-timestamp", "keys-string"])
def test_wrong_columns_are_named_with_what_the_table_should_have(columns: dict[str, tuple[str, bool]],
                                                                 expected: str) -> None:
    findings = column_findings("privacy.r", columns)
    assert messages(findings) == [expected]
    assert "id string, received date, deadline date, keys map<string, string>" in (findings.items[0].hint or "")


def test_pending_rows_load_as_requests_and_done_rows_are_skipped() -> None:
    found = table_requests("privacy.r", [row(), row("REQ-0", keys=(), status="done"),
                                         row("REQ-2", keys=(("user_id", "42"),), status=None,
                                             deadline=date(2026, 11, 10))])
    assert messages(found.findings) == []
    assert found.loaded is not None
    requests = found.loaded.model.requests
    assert [(r.id, r.keys, r.deadline) for r in requests] == [("REQ-1", {"user_id": "u1"}, None),
                                                               ("REQ-2", {"user_id": "42"}, date(2026, 11, 10))]
    assert isinstance(requests[1].keys["user_id"], Text)  # the key column's type decides: 42 for a long column


@pytest.mark.parametrize(("rows", "expected"), [
    ([row(keys=())], "privacy.r[REQ-1].keys: error TP103: request 'REQ-1' has no key value"),
    ([row(keys=None)], "privacy.r[REQ-1].keys: error TP103: request 'REQ-1' has no key value"),
    ([row(keys=(("user_id", ""),))],
     "privacy.r[REQ-1].keys: error TP112: request 'REQ-1': a key column's name or value is empty"),
    ([row(ident="")], "privacy.r[row 1].id: error TP103: the request id is empty"),
    ([row(received=None)], "privacy.r[REQ-1].received: error TP103: request 'REQ-1' has no received date"),
    ([row(status="erased")], "privacy.r[REQ-1].status: error TP620: status 'erased' is neither pending nor done"),
    ([row(), row(keys=(("user_id", "u2"),))],
     "privacy.r[REQ-1].id: error TP601: request 'REQ-1' is listed twice, with other content"),
], ids=["no-key", "null-keys", "empty-value", "no-id", "no-received", "unknown-status", "id-reused"])
def test_a_bad_row_refuses_the_whole_table(rows: list[Row], expected: str) -> None:
    found = table_requests("privacy.r", rows)
    assert found.loaded is None  # nothing is erased from a table with a bad row
    assert messages(found.findings)[:1] == [expected]
    assert all(d.hint for d in found.findings.items)


def test_the_same_request_twice_is_erased_once() -> None:
    found = table_requests("privacy.r", [row(), row()])
    assert found.loaded is not None and [r.id for r in found.loaded.model.requests] == ["REQ-1"]
    assert [d.code for d in found.findings.items] == ["TP613"]


def test_a_request_from_the_future_or_due_before_it_arrived_is_refused() -> None:
    found = table_requests("privacy.r", [row("REQ-F", received=date(2026, 11, 21)),
                                         row("REQ-D", received=date(2026, 11, 5), deadline=date(2026, 11, 4)),
                                         row("REQ-OK", received=TODAY)])
    assert found.loaded is not None
    assert messages(date_findings(found.loaded, TODAY)) == [
        "privacy.r[REQ-F].received: error TP616: request 'REQ-F' was received on 2026-11-21, after today (2026-11-20)",
        "privacy.r[REQ-D].deadline: error TP617: request 'REQ-D' has deadline 2026-11-04, before it was received "
        "(2026-11-05)"]


def test_a_file_request_received_in_the_future_is_refused_at_its_line() -> None:
    loaded, _ = load_requests("id,received,user_id\nREQ-1,2026-11-02,u1\nREQ-2,2026-12-01,u2\n", "r.csv")
    assert loaded is not None
    assert messages(date_findings(loaded, TODAY)) == [
        "r.csv:3:7: error TP616: request 'REQ-2' was received on 2026-12-01, after today (2026-11-20)"]


@pytest.mark.parametrize(("text", "kind"), [
    ('{"id": "A", "received": "2026-11-02", "keys": {"u": "a"}}\n', "jsonl"),
    ("requests:\n  - {id: A, received: '2026-11-02', keys: {u: a}}\n", "yaml"),
    ("# a comment\nrequests: []\n", "yaml"),
    ("\ufeffid,received,u\nA,2026-11-02,a\n", "csv"),
    ("", "csv"),
], ids=["jsonl", "yaml", "yaml-comment", "csv-bom", "empty"])
def test_standard_input_is_read_in_the_format_its_first_line_shows(text: str, kind: str) -> None:
    assert sniffed_format(text) == kind


def test_requests_on_standard_input_load_as_a_file_of_that_format_does() -> None:
    text = '{"id": "A", "received": "2026-11-02", "keys": {"user_id": "a"}}\n'
    loaded, findings = load_requests(text, "<stdin>", sniffed_format(text))
    assert loaded is not None and not findings.items
    assert loaded.model.requests[0].keys == {"user_id": "a"}
    _, findings = load_requests("id,received\nA,2026-11-02\n", "<stdin>", "csv")
    assert messages(findings) == ["<stdin>:1:1: error TP103: the header names no key column"]


def test_a_requests_file_inside_a_git_work_tree_is_refused_with_the_fix(tmp_path: Path) -> None:
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "repo" / "privacy").mkdir()
    inside, outside = tmp_path / "repo" / "privacy" / "requests.csv", tmp_path / "requests.csv"
    finding = in_git_finding(inside)
    assert finding is not None and finding.code == "TP618"
    assert "would enter git history" in finding.message
    assert finding.hint is not None
    assert "--requests - < FILE" in finding.hint and "--requests-table" in finding.hint
    assert "git filter-repo --path privacy/requests.csv --invert-paths" in finding.hint
    assert in_git_finding(outside) is None


def _index(paths: list[str], version: int = 2) -> bytes:
    """A git index (versions 2 and 4) listing ``paths``, as git writes it: enough for index_paths."""
    body, previous = b"", b""
    for text in paths:
        path = text.encode()
        entry = b"\0" * 40 + hashlib.sha1(path).digest() + struct.pack(">H", min(len(path), 0xFFF))
        if version == 4:
            common = len(next((previous[:i] for i in range(min(len(previous), len(path)), -1, -1)
                               if previous[:i] == path[:i]), b""))
            strip = len(previous) - common
            assert strip < 128
            body += entry + bytes([strip]) + path[common:] + b"\0"
        else:
            size = len(entry) + len(path)
            body += entry + path + b"\0" * ((size + 8) // 8 * 8 - size)
        previous = path
    data = b"DIRC" + struct.pack(">II", version, len(paths)) + body
    return data + hashlib.sha1(data).digest()


@pytest.mark.parametrize("version", [2, 4])
def test_the_index_lists_what_git_tracks(tmp_path: Path, version: int) -> None:
    (tmp_path / ".git").mkdir()
    paths = ["README.md", "policies/a.yaml", "policies/ab.yaml", "privacy/requests.csv", "z/" + "long" * 40]
    (tmp_path / ".git" / "index").write_bytes(_index(paths, version))
    assert index_paths(tmp_path) == paths


def test_a_tracked_requests_file_is_a_finding_and_a_policy_or_untracked_file_is_not(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "policies").mkdir()
    (tmp_path / "privacy").mkdir()
    (tmp_path / "policies" / "t.yaml").write_text("table: a.t\ncolumns: [{name: id, type: long}]\n")
    (tmp_path / "privacy" / "requests.csv").write_text("id,received,user_id\nREQ-1,2026-11-02,u1\n")
    (tmp_path / "privacy" / "untracked.jsonl").write_text(
        '{"id": "A", "received": "2026-11-02", "keys": {"user_id": "a"}}\n')
    (tmp_path / ".git" / "index").write_bytes(_index(["policies/t.yaml", "privacy/requests.csv"]))
    findings = tracked_requests(tmp_path / "policies")
    assert [(d.code, d.location.file.endswith("privacy/requests.csv")) for d in findings.items] == [("TP619", True)]
    assert "holding the key values of 1 request(s)" in findings.items[0].message
    assert "git filter-repo --path privacy/requests.csv --invert-paths" in (findings.items[0].hint or "")


def test_a_table_request_whose_key_does_not_fit_its_column_is_refused_with_its_id() -> None:
    from tablepolicy.compiler.desired import desired_table
    from tablepolicy.compiler.erasure.plan import erasure_plan
    from tests.integration.evolve import project_of

    project = project_of("""
table: ads.clicks
columns:
  - {name: account, type: long}
lifecycle:
  erasure: {key: [account], within: 30d, batch_margin: 2d}
""")
    state = desired_table(project, project.tables[0]).state
    found = table_requests("privacy.r", [row("REQ-7", keys=(("account", "7"),)),
                                         row("REQ-X", keys=(("account", "x7"),), deadline=date(2026, 11, 20))])
    assert found.loaded is not None
    tables, findings = erasure_plan(project, found.loaded, {state.name: state})
    assert messages(findings) == ["privacy.r[REQ-X].keys: error TP603: request 'REQ-X': account = 'x7' does not fit "
                                  "the integer key column of ads.clicks"]
    [table] = tables
    assert [(s.request, s.values, s.deadline) for s in table.subjects] == [
        ("REQ-7", (7,), date(2026, 12, 2)), ("REQ-X", ("x7",), date(2026, 11, 20))]  # its own earlier deadline
    assert table.margin is not None and table.margin.days == 2
