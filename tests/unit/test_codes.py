"""The registry of codes (compiler/codes.py) against the sources that emit them.

Every code compiler/ or runtime/ writes (a literal such as ``"TM201"`` or a constant ``codes.TP402``)
is registered, every registered code is written somewhere, a finding's severity at the call is the
registered one, and a change kind's or maintenance action's safety is its code's registered safety.
"""

from __future__ import annotations

import ast
import importlib.util
import os
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, get_args

import pytest
from pydantic import ValidationError

from tablepolicy.compiler import codes
from tablepolicy.compiler.diagnostics import Severity
from tablepolicy.compiler.diff.changes import AddColumn, Change, DropColumn, SetProperties, UpdatePartitionSpec
from tablepolicy.compiler.erasure.requests import load_requests
from tablepolicy.compiler.maintenance.actions import Action, ExpireSnapshots
from tablepolicy.compiler.safety import Safety
from tablepolicy.compiler.validate import validate
from tests.imports import absolute, package_of
from tests.unit.test_differ import CASES
from tests.unit.test_plan_file import CASES as PLAN_FILE_CASES

ROOT = Path(__file__).resolve().parents[2]
REGISTRY_FILE = ROOT / "compiler" / "codes.py"
CODE = re.compile(r"T[A-Z]\d{3}")
ALWAYS_ERROR = {"error", "PydanticCustomError", "_Refused", "finding"}  # calls whose findings are errors


@dataclass(frozen=True)
class Use:
    file: str
    line: int
    code: str
    severity: Severity | None  # the severity written at the call, where the call names one

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


def _code_of(node: ast.expr) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and CODE.fullmatch(node.value):
        return node.value
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "codes":
        return node.attr
    return None


def _severity_at(call: ast.Call) -> Severity | None:
    name = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")
    if name in ALWAYS_ERROR:
        return Severity.ERROR
    given = list(call.args[1:2]) + [k.value for k in call.keywords if k.arg == "severity"]
    for arg in given:
        if isinstance(arg, ast.Attribute) and isinstance(arg.value, ast.Name) and arg.value.id == "Severity":
            return Severity[arg.attr]
    return None


def uses_in(text: str, file: str, package: str = "tablepolicy.compiler") -> Iterator[Use]:
    """Every code written in one module: literals, ``codes.X`` and ``from ..codes import X`` (relative imports
    resolved from ``package``, the module's own)."""
    tree = ast.parse(text)
    at_call: dict[int, Severity | None] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args and _code_of(node.args[0]) is not None:
            at_call[id(node.args[0])] = _severity_at(node)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and absolute(node, package).module == "tablepolicy.compiler.codes":
            yield from (Use(file, node.lineno, a.name, None) for a in node.names if CODE.fullmatch(a.name))
        elif isinstance(node, ast.Constant | ast.Attribute) and (code := _code_of(node)) is not None:
            yield Use(file, node.lineno, code, at_call.get(id(node)))


def source_uses() -> list[Use]:
    files = sorted(p for d in ("compiler", "runtime") for p in (ROOT / d).rglob("*.py") if p != REGISTRY_FILE)
    return [u for f in files for u in uses_in(f.read_text(encoding="utf-8"), str(f.relative_to(ROOT)), package_of(f))]


def how_to_register(use: Use) -> str:
    family = codes.FAMILIES.get(use.code[:2])
    if family is None:
        return f"{use}: {use.code} is in no family ({', '.join(codes.FAMILIES)}): add a Family to compiler/codes.py"
    level = (use.severity or Severity.ERROR).name if family.levels is Severity else "SAFE|BREAKING|DESTRUCTIVE"
    return (f"{use}: {use.code} is not registered; add to the {family.prefix} block of compiler/codes.py:\n"
            f'    {use.code} = register("{use.code}", {level}, "<what it means, in one line>")')


def test_every_code_the_sources_write_is_registered() -> None:
    unregistered = sorted((u for u in source_uses() if u.code not in codes.REGISTRY), key=lambda u: (u.file, u.line))
    missing = list(dict.fromkeys(how_to_register(u) for u in unregistered))
    assert missing == [], "\n".join(missing)


def test_every_registered_code_is_written_somewhere() -> None:
    unused = sorted(set(codes.REGISTRY) - {u.code for u in source_uses()})
    assert unused == [], (f"registered but written by no module of compiler/ or runtime/: {unused}; "
                          "delete their lines from compiler/codes.py, or emit them")


def test_a_finding_has_its_registered_severity() -> None:
    wrong = [f"{u}: {u.code} written as {u.severity}, registered as {codes.lookup(u.code).level}"
             for u in source_uses() if u.severity is not None and u.code in codes.REGISTRY
             and codes.lookup(u.code).level != u.severity]
    assert wrong == []


def test_the_source_scan_finds_each_way_of_writing_a_code() -> None:
    """The scan above must not go blind: each form a module may use is found, with its severity."""
    text = ("from tablepolicy.compiler.codes import TP101\n"
            "Diagnostic('TP211', Severity.WARNING, where, 'm')\n"
            "Diagnostic(codes.TP402, Severity.ERROR, where, 'm')\n"
            "diagnostics.error('TP000', where, 'm')\n"
            "code: Literal['TC408', 'TC409'] = 'TC408'\n"
            "x = 'TM201 is not a code'  # a longer text is no use\n")
    found = [(u.line, u.code, u.severity) for u in uses_in(text, "m.py")]
    assert sorted(found) == [(1, "TP101", None), (2, "TP211", Severity.WARNING), (3, "TP402", Severity.ERROR),
                             (4, "TP000", Severity.ERROR), (5, "TC408", None), (5, "TC408", None),
                             (5, "TC409", None)]


def test_an_unregistered_code_says_the_line_to_add() -> None:
    [use] = uses_in("Diagnostic('TP998', Severity.WARNING, where, 'held')\n", "compiler/erasure/holds.py")
    assert use.code not in codes.REGISTRY
    assert how_to_register(use) == (
        "compiler/erasure/holds.py:1: TP998 is not registered; add to the TP block of compiler/codes.py:\n"
        '    TP998 = register("TP998", WARNING, "<what it means, in one line>")')


@pytest.mark.parametrize(("code", "level", "title", "error"), [
    ("TP402", Severity.ERROR, "again", "TP402 is registered twice: 'defaults of one namespace declared twice' "
                                       "and 'again'"),
    ("TX101", Severity.ERROR, "x", "'TX101' is no code: two letters of TP, TG, TC, TR, TA, TM, then three digits"),
    ("TP10", Severity.ERROR, "x", "'TP10' is no code: two letters of TP, TG, TC, TR, TA, TM, then three digits"),
    ("TC999", Severity.ERROR, "x", "TC999: a TC code carries a Safety, not <Severity.ERROR: 2>"),
    ("TP999", Safety.SAFE, "x", "TP999: a TP code carries a Severity, not <Safety.SAFE: 0>"),
    ("TP999", Severity.ERROR, "a | b", "TP999: the title is one line without '|' (it is a README table cell)"),
], ids=["duplicate", "family", "shape", "change with severity", "finding with safety", "title"])
def test_a_bad_registration_raises_and_registers_nothing(code: str, level: Any, title: str, error: str) -> None:
    before = dict(codes.REGISTRY)
    with pytest.raises((codes.DuplicateCode, ValueError)) as raised:
        codes.register(code, level, title)
    assert str(raised.value) == error
    assert dict(codes.REGISTRY) == before


def test_a_duplicate_line_in_the_registry_fails_its_import(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = REGISTRY_FILE.read_text(encoding="utf-8")
    line = next(x for x in text.splitlines() if x.startswith("TM203 = "))
    copy = tmp_path / "codes_copy.py"
    copy.write_text(text.replace(line, f"{line}\n{line}"), encoding="utf-8")
    # a module of the compiler package (its relative imports resolve there), under a name of its own
    spec = importlib.util.spec_from_file_location("tablepolicy.compiler.codes_copy", copy)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "tablepolicy.compiler.codes_copy", module)
    with pytest.raises(ValueError) as raised:  # the copy's own DuplicateCode class
        spec.loader.exec_module(module)
    assert type(raised.value).__name__ == "DuplicateCode"
    assert str(raised.value) == "TM203 is registered twice: 'rewrite manifests' and 'rewrite manifests'"


def test_lookup() -> None:
    assert codes.lookup("TC301") == codes.Code("TC301", Safety.DESTRUCTIVE, "drop a column")
    with pytest.raises(codes.UnknownCode) as raised:
        codes.lookup("TA102")
    assert str(raised.value) == "unknown code 'TA102': the TA codes are TA101"
    with pytest.raises(codes.UnknownCode, match="unknown code 'TZ101': families: TP, TG, TC, TR, TA, TM"):
        codes.lookup("TZ101")


def kinds(union: Any) -> tuple[Any, ...]:
    return get_args(get_args(union)[0])


@pytest.mark.parametrize("kind", [*kinds(Change), *kinds(Action)], ids=lambda k: k.__name__)
def test_a_kind_takes_its_safety_from_its_codes_registration(kind: Any) -> None:
    """No change kind or maintenance action declares a safety of its own: the registry is its one source,
    and every code a kind allows is registered in the kind's family."""
    assert "safety" not in vars(kind).get("__annotations__", {})
    family = "TC" if kind in kinds(Change) else "TM"
    assert all(codes.lookup(c).family.prefix == family for c in get_args(kind.model_fields["code"].annotation))


@pytest.mark.parametrize("change", list(PLAN_FILE_CASES.values()), ids=list(PLAN_FILE_CASES))
def test_a_change_built_without_a_safety_has_its_codes(change: Any) -> None:
    assert change.safety is codes.safety_of(change.code)


@pytest.mark.parametrize(("kind", "fields", "code", "safety"), [
    (AddColumn, {"path": ("a",), "type": "int"}, "TC201", Safety.SAFE),
    (AddColumn, {"path": ("a",), "type": "int", "readded": True}, "TC207", Safety.BREAKING),
    (SetProperties, {"changes": ()}, "TC501", Safety.SAFE),
    (SetProperties, {"changes": ()}, "TC505", Safety.BREAKING),
    (UpdatePartitionSpec, {}, "TC408", Safety.SAFE),
    (UpdatePartitionSpec, {}, "TC409", Safety.BREAKING),
], ids=["TC201", "TC207", "TC501", "TC505", "TC408", "TC409"])
def test_a_kind_with_two_codes_has_each_codes_safety(kind: Any, fields: dict[str, Any], code: str,
                                                      safety: Safety) -> None:
    assert kind(table=("t", "x"), code=code, **fields).safety is safety


def test_a_safety_other_than_the_codes_is_refused() -> None:
    with pytest.raises(ValidationError, match="TC301 is destructive, not safe: its safety is its code's"):
        DropColumn(table=("t", "x"), path=("a",), field_id=1, safety=Safety.SAFE)
    with pytest.raises(ValidationError, match="TC505 is breaking, not safe"):
        SetProperties.model_validate({"table": ["t", "x"], "code": "TC505", "safety": 0, "changes": []})
    with pytest.raises(ValidationError, match="TM301 is destructive, not safe"):
        ExpireSnapshots(table=("t", "x"), reason="r", older_than=datetime(2026, 1, 1), retain_last=1,
                        safety=Safety.SAFE)


def test_every_planned_change_has_its_codes_registered_safety() -> None:
    planned = {(code, safety) for case in CASES for _, safety, code, _ in case.changes}
    assert {code for code, _ in planned} == set(codes.codes_of(["TC"]))
    assert sorted((code, safety) for code, safety in planned if str(codes.lookup(code).level) != safety) == []


SPLIT = [  # problems that shared a code before each got its own; the rest are in tests/corpus/
    ("TP000", lambda tmp: validate(tmp / "nowhere"), "nowhere: error TP000: no such file or directory"),
    ("TP006", lambda tmp: validate(tmp), ".: error TP006: no policy files (*.yaml, *.yml) in this folder"),
    ("TP007", lambda tmp: validate(Path("/proc/self/mem")),  # a file even root cannot read
     "{mem}: error TP007: cannot read policy file: Input/output error"),
    ("TP601", lambda tmp: load_requests("requests:\n  - {id: A, received: '2026-02-01', keys: {u: a}}\n"
                                        "  - {id: A, received: '2026-02-01', keys: {u: b}}\n", "r.yaml"),
     "r.yaml:3:10: error TP601: request 'A' is listed twice, with other content"),
    ("TP613", lambda tmp: load_requests("requests:\n  - {id: A, received: '2026-02-01', keys: {u: a}}\n"
                                        "  - {id: A, received: '2026-02-01', keys: {u: a}}\n", "r.yaml"),
     "r.yaml:3:10: warning TP613: request 'A' is listed twice"),
    ("TP610", lambda tmp: load_requests("requests:\n  - {id: \"A\\x01\", received: '2026-02-01', keys: {u: a}}\n",
                                        "r.yaml"),
     "r.yaml:2:10: error TP610: requests.0.id: request id 'A\\x01' holds a control character (U+0001) at position 2"),
    ("TP611", lambda tmp: load_requests("requests:\n  - {id: A, received: '9999-01-01', keys: {u: a}}\n", "r.yaml"),
     "r.yaml:2:23: error TP611: requests.0.received: received 9999-01-01 is out of range: at most 8999-12-31"),
    ("TP612", lambda tmp: load_requests("- {id: A}\n", "r.yaml"),
     "r.yaml:1:1: error TP612: an erasure requests file is a mapping with a 'requests:' list"),
]


@pytest.mark.parametrize(("code", "run", "first_line"), SPLIT, ids=[c for c, *_ in SPLIT])
def test_a_split_code_names_its_own_problem(code: str, run: Any, first_line: str, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    _, diagnostics = run(tmp_path)
    expected = first_line.replace("{mem}", os.path.relpath("/proc/self/mem"))
    assert [d.render().splitlines()[0] for d in diagnostics][:1] == [expected]
    assert all(d.hint for d in diagnostics)
