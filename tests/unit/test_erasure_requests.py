"""The erasure requests file and which tables a request reaches (no JVM: catalog state is built here)."""

from __future__ import annotations

import json
import sys
import tracemalloc
from datetime import date
from types import FrameType

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from tablepolicy.compiler import yamlsource
from tablepolicy.compiler.desired import desired_table
from tablepolicy.compiler.erasure.plan import erasure_plan
from tablepolicy.compiler.erasure.requests import LoadedRequests, _flow_lines, load_requests
from tablepolicy.compiler.yamlsource import YamlDocument, parse_yaml
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


COMPOSE = yaml.compose


def findings(text: str, file: str = "req.yaml") -> list[str]:
    _, diagnostics = load_requests(text, file)
    return [d.render().splitlines()[0] for d in diagnostics]


def test_bad_requests_files_name_line_and_key() -> None:
    assert findings("requests:\n  - {id: A, received: 2026-02-30, keys: {user_id: u}}\n"
                    "  - {id: A, received: '2026-02-01', keys: {user_id: u}}\n  - {id: B, keys: {}}\n") == [
        "req.yaml:2:23: error TP104: requests.0.received: '2026-02-30' is not a date; write it as YYYY-MM-DD",
        "req.yaml:4:5: error TP103: missing required key 'received'",
        "req.yaml:4:19: error TP112: requests.2.keys: too few items: dictionary should have at least 1 item after "
        "validation, not 0",
    ]
    assert findings("requests:\n  - {id: A, received: '2026-02-01', keys: {user_id: u}}\n"
                    "  - {id: A, received: '2026-02-02', keys: {user_id: v}}\n") == [
        "req.yaml:3:10: error TP601: request 'A' is listed twice, with other content"]
    assert findings("- just a list\n") == [
        "req.yaml:1:1: error TP612: an erasure requests file is a mapping with a 'requests:' list"]


def plan(
    requests_text: str, file: str = "req.yaml", policy: str = POLICY
) -> tuple[list[list[tuple[object, ...]]], list[str]]:
    project = project_of(policy)
    state = desired_table(project, project.tables[0]).state
    requests, diagnostics = load_requests(requests_text, file)
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


# --- CSV and JSON lines ---------------------------------------------------------------------------------------

CSV_HEADER = "id,received,user_id,user.uid\n"
BAD_FILES = [  # (file name, text, the first line of every finding)
    ("r.txt", "x", ["r.txt: error TP604: unknown requests format '.txt': the extension names the format"]),
    ("requests", "x", ["requests: error TP604: unknown requests format '(no extension)': the extension names "
                       "the format"]),
    ("r.csv", "", ["r.csv:1:1: error TP103: the header has no id or received column"]),
    ("r.csv", "id,received\n", ["r.csv:1:1: error TP103: the header names no key column"]),
    ("r.csv", "id,id,received,k\n", ["r.csv:1:4: error TP002: header column 'id' is named twice"]),
    ("r.csv", "id,,received,k\n", ["r.csv:1:4: error TP605: header column 2 has no name"]),
    ("r.csv", CSV_HEADER, ["r.csv:1:1: error TP103: the requests file holds no request"]),
    ("r.csv", CSV_HEADER + 'A,2026-11-02,"u\n1",\nB,2026-13-01,u,\n',
     ["r.csv:4:3: error TP104: '2026-13-01' is not a date; write it as YYYY-MM-DD"]),
    ("r.csv", CSV_HEADER + "A,2026-11-02,,\n", ["r.csv:2:14: error TP103: request 'A' has no key value"]),
    ("r.csv", CSV_HEADER + ",2026-11-02,u,\n", ["r.csv:2:1: error TP103: the request id is missing or not text"]),
    ("r.csv", CSV_HEADER + "A,2026-11-02,u\n", ["r.csv:2:1: error TP605: this record has 3 field(s), the header "
                                                "has 4"]),
    ("r.csv", CSV_HEADER + 'A,2026-11-02,u"x,\n', ["r.csv:2:15: error TP605: a quote inside a field that does "
                                                   "not start with one"]),
    ("r.csv", CSV_HEADER + 'A,2026-11-02,"u"x,\n', ["r.csv:2:17: error TP605: text after a closing quote"]),
    ("r.csv", CSV_HEADER + 'A,2026-11-02,u,\nB,2026-11-02,"never\nclosed,\n',
     ["r.csv:3:14: error TP605: a quoted field is never closed"]),
    ("r.csv", CSV_HEADER + "A,2026-11-02,u,\nA,2026-11-02,v,\n",
     ["r.csv:3:1: error TP601: request 'A' is listed twice, with other content"]),
    ("r.csv", CSV_HEADER + "A\u0007,9999-01-01,u,\n",
     ["r.csv:2:1: error TP610: request id 'A\\x07' holds a control character (U+0007) at position 2",
      "r.csv:2:4: error TP611: received 9999-01-01 is out of range: at most 8999-12-31"]),
    ("r.jsonl", '{"id": "A", "received": "2026-11-02", "keys": {"user": {"uid": 7}}}\n',
     ["r.jsonl:1:48: error TP104: keys.user is an object"]),
    ("r.jsonl", '\n{"id": "A", "received": "2026-11-02", "keys": {"k": true, "n": 1.5, "big": 9223372036854775808}}',
     ["r.jsonl:2:48: error TP104: keys.k = true is no string or integer",
      "r.jsonl:2:59: error TP104: keys.n = 1.5 is no string or integer",
      "r.jsonl:2:69: error TP105: keys.big = 9223372036854775808 is out of range"]),
    ("r.jsonl", '{"id": "A", "received": "2026-11-02", "keys": {"k": "v"}, "note": 1}\n',
     ["r.jsonl:1:59: error TP102: unknown key 'note'"]),
    ("r.jsonl", '{"id": "A", "id": "B"}\n', ["r.jsonl:1:2: error TP002: key 'id' is given twice"]),
    ("r.jsonl", '{"id": "A",\n', ["r.jsonl:1:12: error TP605: not JSON: the text stops being JSON here"]),
    ("r.jsonl", '["A", "2026-11-02"]\n', ["r.jsonl:1:1: error TP605: a line is one JSON object"]),
    ("r.jsonl", '{"id": 7, "received": "2 Nov", "keys": "u"}\n',
     ["r.jsonl:1:32: error TP104: keys is not an object"]),
    ("r.jsonl", '{"id": 7, "received": "2 Nov", "keys": {"u": "v"}}\n',
     ["r.jsonl:1:2: error TP104: the request id is missing or not text",
      "r.jsonl:1:11: error TP104: '2 Nov' is not a date; write it as YYYY-MM-DD"]),
    ("r.ndjson", '{"id": "A", "received": "2026-11-02", "keys": {}}\n',
     ["r.ndjson:1:39: error TP103: request 'A' has no key value"]),
]


@pytest.mark.parametrize(("file", "text", "expected"), BAD_FILES)
def test_bad_csv_and_json_lines_name_the_line_and_column(file: str, text: str, expected: list[str]) -> None:
    assert findings(text, file) == expected


def loaded(text: str, file: str) -> list[tuple[str, str, dict[str, object]]]:
    requests, diagnostics = load_requests(text, file)
    assert requests is not None, [d.render() for d in diagnostics]
    return [(r.id, r.received.isoformat(), dict(r.keys)) for r in requests.model.requests]


GOOD = [  # the same two requests, in every format: quotes, commas, line breaks, unicode, a nested key column
    ("r.yaml", "requests:\n  - {id: A, received: '2026-11-02', keys: {user_id: \"o'n, \\\"x\\\"\\nü\"}}\n"
               "  - {id: B, received: '2026-11-03', keys: {user.uid: '7'}}\n"),
    ("r.CSV", '\ufeffid,received,user_id,user.uid\r\nA,2026-11-02,"o\'n, ""x""\nü",\r\n\r\nB,2026-11-03,,7\r\n'),
    ("r.jsonl", '{"id": "A", "received": "2026-11-02", "keys": {"user_id": "o\'n, \\"x\\"\\nü"}}\n\n'
                '{"id": "B", "received": "2026-11-03", "keys": {"user.uid": "7"}}'),
]


@pytest.mark.parametrize(("file", "text"), GOOD)
def test_every_format_loads_the_same_requests(file: str, text: str) -> None:
    assert loaded(text, file) == [("A", "2026-11-02", {"user_id": "o'n, \"x\"\nü"}),
                                  ("B", "2026-11-03", {"user.uid": "7"})]


def test_a_request_listed_twice_alike_is_erased_once_with_a_warning() -> None:
    text = CSV_HEADER + "A,2026-11-02,u,\nB,2026-11-02,v,\nA,2026-11-02,u,\n"
    assert findings(text, "r.csv") == ["r.csv:4:1: warning TP613: request 'A' is listed twice"]
    assert [r[0] for r in loaded(text, "r.csv")] == ["A", "B"]


NESTED = POLICY.replace("  - {name: account, type: long}\n", "  - {name: account, type: long}\n"
                        "  - name: user\n    type: {struct: [{name: uid, type: long}]}\n").replace(
    "key: [user_id, account]", "key: [user_id, user.uid]")


def csv_plan(text: str) -> tuple[list[list[tuple[object, ...]]], list[str]]:
    return plan(text, "r.csv", NESTED)


def test_csv_cells_take_the_type_of_their_key_column() -> None:
    values, found = csv_plan("id,received,user_id,user.uid\nA,2026-11-02,42,42\nB,2026-11-02,x,-7\n")
    assert found == []
    assert values == [[("42", 42), ("x", -7)]]  # the string column keeps '42' as text, the long column gets 42
    _, found = csv_plan("id,received,user_id,user.uid\nA,2026-11-02,u, 4\nB,2026-11-02,u,99999999999999999999\n")
    assert found == [
        "r.csv:2:16: error TP603: request 'A': user.uid = ' 4' does not fit the integer key column of ads.clicks",
        "r.csv:3:16: error TP603: request 'B': user.uid = '99999999999999999999' does not fit the integer key "
        "column of ads.clicks"]


def requests_text(file: str, n: int) -> str:
    match file:
        case "r.csv":
            return "id,received,user_id\n" + "".join(f"REQ-{i},2026-11-02,\"user,{i}\"\n" for i in range(n))
        case "r.jsonl":
            return "".join(json.dumps({"id": f"REQ-{i}", "received": "2026-11-02", "keys": {"user_id": f"u{i}"}})
                           + "\n" for i in range(n))
        case _:
            return "requests:\n" + "".join(f"  - {{id: REQ-{i}, received: '2026-11-02', keys: {{user_id: u{i}}}}}\n"
                                           for i in range(n))


def loading_work(file: str, n: int) -> tuple[int, int, LoadedRequests | None]:
    """Loading n requests: the function calls made (Python and C), the peak of memory allocated meanwhile, and
    what loaded. Counts of work, not seconds: the same on a loaded machine as on an idle one."""
    text, calls = requests_text(file, n), 0

    def count(_frame: FrameType, event: str, _arg: object) -> None:
        nonlocal calls
        if event in ("call", "c_call"):
            calls += 1

    previous, tracing = sys.getprofile(), tracemalloc.is_tracing()
    if tracing:  # started by someone else (PYTHONTRACEMALLOC): measured from here, and left running
        tracemalloc.reset_peak()
    else:
        tracemalloc.start()
    before, _ = tracemalloc.get_traced_memory()
    sys.setprofile(count)
    try:
        loaded, _ = load_requests(text, file)
    finally:
        sys.setprofile(previous)
        _, peak = tracemalloc.get_traced_memory()
        if not tracing:
            tracemalloc.stop()
    return calls, peak - before, loaded


# per request: function calls and bytes of peak memory (measured at 36, 47, 90 calls and 0.6, 0.7, 1.8 KB
# on Python 3.11; building a pydantic model per row costs 11 calls more; YAML composed by libyaml, a node and two
# marks per scalar, took 115 calls and 4.6 KB)
BUDGET = {"r.csv": (50, 1500), "r.jsonl": (60, 1500), "r.yaml": (110, 2500)}


@pytest.mark.parametrize("file", ["r.csv", "r.jsonl", "r.yaml"])
def test_ten_thousand_requests_load_in_linear_work(file: str) -> None:
    """bench/erase_requests.py measures the time against bare parsing; here the work is bounded: twice the
    requests make at most 2.2 times the calls and the memory (a per-row rescan or copy would make about 4 times),
    and each request stays within a call and memory budget."""
    n = 10_000
    calls, peak, loaded = loading_work(file, n)
    assert loaded is not None and len(loaded.model.requests) == n
    assert loaded.model.requests[-1].id == f"REQ-{n - 1}"
    half_calls, half_peak, _ = loading_work(file, n // 2)
    assert calls <= 2.2 * half_calls and peak <= 2.2 * half_peak, (calls, half_calls, peak, half_peak)
    most_calls, most_bytes = BUDGET[file]
    assert calls <= most_calls * n and peak <= most_bytes * n, (calls / n, peak / n)


# --- a YAML file of one request per line is read without composing it, into the same data -------------------

FLOW_KEYS = ["user_id", "user.uid", "account", "true", "Null", "a-b", "_k", "x" * 101, "id", "1", "a b", "'q'"]
FLOW_VALUES = ["REQ-1", "u1", "user-0000003", "2026-11-02", "'2026-11-02'", '"2026-11-02"', "-5", "+5", ".5", "0x1F",
               "0o17", "1e3", "1_000", "-.inf", ".nan", "~", "null", "true", "yes", "a@b.c", "-a", ".a", "_",
               "'it''s'", "'a, b'", "''", '""', '"o\'n, \\"jr\\""', '"a\\\\"', '"\u00fc\u65e5 \U0001f600"',
               "'\\'", '"#"']
FLOW_ODD = ["a b", "a:b", "a#b", "a #b", "http://x", "@a", "*a", "&a", "!a", "%a", "`a", "|", ">", "-", "?a",
            "9" * 101, '"a\\tb"', '"a\\"', '"\u2028"', '"\x85"', '"\ufeff"', '"\t"', "[a]", "{}", "{a: 1}", "'a"]


def rarely(common: list[str], odd: list[str]) -> st.SearchStrategy[str]:
    """Mostly one of ``common``, one time in 25 one of ``odd``."""
    return st.integers(0, 24).flatmap(lambda n: st.sampled_from(odd if n == 13 else common))


@st.composite
def flow_files(draw: st.DrawFn) -> str:
    """Files of requests:, then one flow mapping per line, mostly well formed, with tricky keys, scalars and gaps;
    now and then something that is no such file."""
    prefix = draw(rarely(["  - ", "- "], ["    - ", "  -  ", "  -", " - "]))
    value, colon, gap = rarely(FLOW_VALUES, FLOW_ODD), rarely([": "], [":  ", ":", " : "]), rarely([" ", ""], ["  "])
    lines = []
    for _ in range(draw(st.integers(1, 3))):
        fields = draw(st.permutations(["id", "received", "keys"]))[:int(draw(rarely(["3"], ["1", "2"])))]
        pairs = [(k, draw(value)) for k in fields if k != "keys"]
        pairs += [(draw(rarely(["id", "received"], ["keys"])), draw(value))] if draw(st.integers(0, 9)) == 5 else []
        inner = f"{draw(gap)},{draw(gap)}".join(
            f"{draw(rarely(FLOW_KEYS[:3], FLOW_KEYS[3:]))}{draw(colon)}{draw(value)}"
            for _ in range(int(draw(rarely(["1", "2"], ["0", "3"])))))
        pairs += [("keys", f"{{{inner}}}")] if "keys" in fields else []
        body = f"{draw(gap)},{draw(gap)}".join(f"{k}{draw(colon)}{v}" for k, v in pairs)
        lines.append(prefix + f"{{{draw(gap)}{body}{draw(gap)}}}" + draw(rarely([""], [" ", " # c", ",", "}", "\r"])))
        if draw(st.integers(0, 9)) == 5:
            lines.append(draw(st.sampled_from(["", "  ", "# c", "other: 1", "\t", "  - {id: X", "  ..."])))
    return draw(rarely(["requests:"], ["requests: ", "---\nrequests:", "\ufeffrequests:"])) + "\n" + "\n".join(lines)


@settings(max_examples=600, derandomize=True, deadline=None)
@given(flow_files())
def test_a_file_of_one_request_per_line_is_read_as_parse_yaml_reads_it(text: str) -> None:
    fast = _flow_lines(text)
    if fast is None:  # another shape: parse_yaml reads it (and finds its errors)
        return
    parsed = parse_yaml(text, "r.yaml")
    assert isinstance(parsed, YamlDocument), (text, parsed)
    assert repr(fast) == repr(parsed.data), text  # repr: nan is no nan's equal


@pytest.mark.parametrize("line", [
    "{id: REQ-1, received: '2026-11-02', keys: {user_id: u1}}",
    '{id: "o\'n, \\"jr\\"", received: "2026-11-02", keys: {user_id: -5, user.uid: 0x1F}}',
    "{ keys: {a: 'it''s', user.uid: 7} , received: '2026-11-02',id: R7 }",
])
def test_such_a_file_is_not_composed_and_positions_are_found_when_a_finding_needs_them(
    line: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A valid file is never composed; a finding composes it then and points at the value."""
    text = f"requests:\n  - {line}\n  - {{id: B, received: '2026-11-02', keys: {{user_id: ''}}}}\n"
    assert _flow_lines(text) == parse_yaml(text, "r.yaml").data  # type: ignore[union-attr]
    composed = []
    monkeypatch.setattr(yamlsource.yaml, "compose", lambda *a, **k: composed.append(1) or COMPOSE(*a, **k))
    assert findings(text.split("\n  - {id: B")[0] + "\n") == [] and composed == []
    assert findings(text)[-1] == "req.yaml:3:53: error TP112: requests.1.keys.user_id: must not be empty: string " \
                                 "should have at least 1 character"
    assert composed
