"""The erasure requests file and which tables a request reaches (no JVM: catalog state is built here)."""

from __future__ import annotations

from datetime import date

from compiler.desired import desired_table
from compiler.erasure.plan import erasure_plan
from compiler.erasure.requests import load_requests
from tests.integration.evolve import project_of

POLICY = """
table: ads.clicks
columns:
  - {name: user_id, type: string}
  - {name: account, type: long}
  - {name: ts, type: timestamptz}
lifecycle:
  erasure: {key: [user_id, account], within: 30d}
"""


def findings(text: str) -> list[str]:
    _, diagnostics = load_requests(text, "req.yaml")
    return [d.render().splitlines()[0] for d in diagnostics]


def test_bad_requests_files_name_line_and_key() -> None:
    assert findings("requests:\n  - {id: A, received: 2026-02-30, keys: {user_id: u}}\n"
                    "  - {id: A, received: '2026-02-01', keys: {user_id: u}}\n  - {id: B, keys: {}}\n") == [
        "req.yaml:2:23: error TP104: requests.0.received: wrong type: value error, '2026-02-30' is not a date; "
        "write it as YYYY-MM-DD",
        "req.yaml:4:5: error TP103: missing required key 'received'",
        "req.yaml:4:19: error TP105: requests.2.keys: too few items: dictionary should have at least 1 item after "
        "validation, not 0",
    ]
    assert findings("requests:\n  - {id: A, received: '2026-02-01', keys: {user_id: u}}\n"
                    "  - {id: A, received: '2026-02-02', keys: {user_id: v}}\n") == [
        "req.yaml:3:10: error TP601: request 'A' is listed twice"]
    assert findings("- just a list\n") == [
        "req.yaml:1:1: error TP003: an erasure requests file is a mapping with a 'requests:' list"]


def plan(requests_text: str) -> tuple[list[list[tuple[object, ...]]], list[str]]:
    project = project_of(POLICY)
    state = desired_table(project, project.tables[0]).state
    requests, diagnostics = load_requests(requests_text, "req.yaml")
    assert requests is not None, [d.render() for d in diagnostics]
    tables, found = erasure_plan(project, requests, {state.name: state})
    return [[s.values for s in t.subjects] for t in tables], [d.render().splitlines()[0] for d in found]


def test_values_are_quoted_for_their_columns_and_checked_against_them() -> None:
    values, found = plan("requests:\n  - {id: A, received: '2026-11-01', keys: {user_id: \"o'neil\", account: 7}}\n"
                             "  - {id: B, received: '2026-11-02', keys: {account: 8, user_id: b}}\n")
    assert found == []
    assert values == [[("o'neil", 7), ("b", 8)]]  # in the order of the table's key columns
    _, found = plan("requests:\n  - {id: A, received: '2026-11-01', keys: {user_id: u, account: '7'}}\n")
    assert found == ["req.yaml:2:65: error TP603: request 'A': account = '7' does not fit the integer key column "
                     "of ads.clicks"]
    _, found = plan("requests:\n  - {id: C, received: '2026-11-01', keys: {user_id: u}}\n")
    assert found == ["req.yaml:2:43: error TP602: request 'C': no table declares erasure keyed on user_id"]


def test_deadline_is_received_plus_within() -> None:
    project = project_of(POLICY)
    state = desired_table(project, project.tables[0]).state
    requests, _ = load_requests("requests:\n  - {id: A, received: '2026-11-01', keys: {user_id: u, account: 1}}\n",
                                "req.yaml")
    assert requests is not None
    (table,), _ = erasure_plan(project, requests, {state.name: state})
    assert [s.deadline for s in table.subjects] == [date(2026, 12, 1)]


def test_the_live_column_type_decides_how_a_value_must_be_written() -> None:
    project = project_of(POLICY)
    live = project_of(POLICY.replace("{name: user_id, type: string}", "{name: user_id, type: long}"))
    state = desired_table(live, live.tables[0]).state  # the catalog holds user_id as long
    requests, _ = load_requests("requests:\n  - {id: A, received: '2026-11-01', keys: {user_id: u1, account: 1}}\n",
                                "req.yaml")
    assert requests is not None
    _, found = erasure_plan(project, requests, {state.name: state})
    assert [d.render().splitlines()[0] for d in found] == [
        "req.yaml:2:53: error TP603: request 'A': user_id = 'u1' does not fit the integer key column of ads.clicks"]
