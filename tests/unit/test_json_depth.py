"""Deeply nested JSON in any file the tool reads is a finding or a one-line error, never a RecursionError."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tablepolicy.compiler import jsontext
from tablepolicy.compiler.erasure.requests import load_requests
from tablepolicy.compiler.model.properties import DECLARED_KEYS, declared_in
from tablepolicy.compiler.plan.approvals import APPROVALS_KEY, consumed_in
from tablepolicy.compiler.plan.codec import PlanFileError, plan_from_json
from tests.cli_runner import tablepolicy

ROOT = Path(__file__).resolve().parents[2]
DEEP = 100_000
DEEP_ARRAY = "[" * DEEP + "]" * DEEP
DEEP_OPEN = "[" * DEEP  # not even closed: the depth is refused before the syntax


def test_the_parser_alone_would_raise() -> None:  # the reason for tablepolicy.compiler.jsontext
    with pytest.raises(RecursionError):
        json.loads(DEEP_ARRAY)


@pytest.mark.parametrize("text", [DEEP_ARRAY, DEEP_OPEN, '{"a": ' * DEEP + "1" + "}" * DEEP])
def test_too_deep_is_a_decode_error_at_the_bracket(text: str) -> None:
    with pytest.raises(json.JSONDecodeError) as caught:
        jsontext.loads(text)
    assert "nesting too deep" in caught.value.msg
    assert caught.value.lineno == 1 and caught.value.colno > jsontext.MAX_DEPTH


def test_the_limit_is_exact_and_brackets_in_strings_are_text() -> None:
    ok = "[" * jsontext.MAX_DEPTH + "]" * jsontext.MAX_DEPTH
    assert jsontext.loads(ok) is not None
    with pytest.raises(json.JSONDecodeError):
        jsontext.loads("[" + ok + "]")
    text = json.dumps(["[" * 2000, {"k\\\"[": "{" * 2000}])
    assert jsontext.loads(text) == json.loads(text)


def test_a_plan_file_too_deep_is_a_plan_file_error() -> None:
    for text in (DEEP_ARRAY, '{"format_version": ' + DEEP_ARRAY + "}"):
        with pytest.raises(PlanFileError, match="nesting too deep"):
            plan_from_json(text)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "policies", tmp_path / "policies")
    return tmp_path


def test_apply_of_a_deep_plan_file_is_one_line(project: Path) -> None:
    (project / "plan.json").write_text(DEEP_ARRAY)
    run = tablepolicy("apply", "plan.json", "--policies", "policies", cwd=project)
    assert run.returncode == 1
    assert run.stderr.strip().splitlines() == [
        "error: plan.json: not a valid plan file: nesting too deep (more than 512 levels) at line 1 column 513; plan "
        "again and save it: tablepolicy plan POLICIES --out plan.json (then review it and apply that file)"]
    assert "Traceback" not in run.stdout + run.stderr


@pytest.mark.parametrize("name", ["requests.jsonl", "requests.ndjson"])
def test_deep_requests_lines_are_findings(name: str) -> None:
    good = '{"id": "REQ-1", "received": "2026-11-02", "keys": {"user_id": "u1"}}'
    _loaded, diagnostics = load_requests(f"{good}\n{DEEP_ARRAY}\n{DEEP_OPEN}\n", name)
    found = [(d.code, d.location.line, d.location.col) for d in diagnostics]
    assert found == [("TP605", 2, 513), ("TP605", 3, 513)], [d.render() for d in diagnostics]
    assert all(d.location.file == name for d in diagnostics)


@pytest.mark.parametrize("name", ["requests.jsonl", "requests.ndjson"])
def test_erase_of_deep_requests_is_a_finding(project: Path, name: str) -> None:
    (project / name).write_text(DEEP_ARRAY + "\n")
    run = tablepolicy("erase", "policies", "--requests", name, "--dry-run", cwd=project)
    assert run.returncode == 1
    assert run.stderr.startswith(f"{name}:1:513: error TP605: not JSON: nesting too deep"), run.stderr
    assert "Traceback" not in run.stdout + run.stderr


def test_stamps_in_catalog_properties_too_deep_read_as_unstamped() -> None:
    assert declared_in({DECLARED_KEYS: DEEP_ARRAY}) == set()
    assert consumed_in({APPROVALS_KEY: DEEP_ARRAY}) == ()


def test_runtime_files_too_deep_start_over(tmp_path: Path) -> None:
    from tablepolicy.runtime.caches.models import FileModelCache
    from tablepolicy.runtime.caches.plans import PlanCache
    from tablepolicy.runtime.journal import Journal
    from tablepolicy.runtime.lock import Holder

    deep = tmp_path / "deep.json"
    deep.write_text(DEEP_ARRAY)
    assert PlanCache.open(deep).entries == {}
    FileModelCache.open(deep)
    assert Journal(deep, "plan").completed() == set()
    with pytest.raises(ValueError, match="nesting too deep"):
        Holder.from_json(DEEP_ARRAY, "s.t")
