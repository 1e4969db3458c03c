"""Mutated policies: the validator reports, it never raises."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from tablepolicy.compiler import codes
from tablepolicy.compiler.checks import check_project
from tablepolicy.compiler.diagnostics import Diagnostics
from tablepolicy.compiler.loader import Project, load_text

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = [YAML(typ="safe").load(p.read_text()) for p in sorted((ROOT / "policies").rglob("*.yaml"))]

SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 10**12), st.floats(allow_nan=False),
    st.sampled_from(["", "6h", "0d", "day(ts)", "bucket(0, x)", "`", "a.b", "string", "decimal(3,9)", "uuid",
                     "time_dt", "x" * 300, "日本語", "struct", "512MB", "-1"]),
    st.text(max_size=20),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)),
    max_leaves=8,
)


def paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(node, dict):
        for k, v in node.items():
            out += paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += paths(v, (*prefix, i))
    return out


@st.composite
def mutated(draw: st.DrawFn) -> Any:
    doc = copy.deepcopy(draw(st.sampled_from(EXAMPLES)))
    for _ in range(draw(st.integers(1, 4))):
        target = draw(st.sampled_from(paths(doc)))
        if not target:
            continue
        parent = doc
        for part in target[:-1]:
            parent = parent[part]
        action = draw(st.sampled_from(["replace", "delete", "add"]))
        if action == "replace":
            parent[target[-1]] = draw(VALUES)
        elif action == "delete":
            del parent[target[-1]]
        elif isinstance(parent, dict):
            parent[draw(st.text(max_size=10))] = draw(VALUES)
        else:
            parent.append(draw(VALUES))
    return doc


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_validator_never_raises(doc: Any) -> None:
    import io

    out = io.StringIO()
    YAML(typ="safe").dump(doc, out)
    project = Project(root=Path("."))
    diagnostics = Diagnostics()
    load_text(out.getvalue(), "fuzz.yaml", project, diagnostics)
    diagnostics.extend(check_project(project))
    for finding in diagnostics:
        assert codes.lookup(finding.code) and finding.message, finding.render()
        assert finding.location.file == "fuzz.yaml" and finding.location.line >= 1 and finding.location.col >= 1
        assert finding.hint, finding.render()


# --- Bounded YAML: aliases of aliases, recursive aliases and deep nesting cost what the text's size allows.

@st.composite
def alias_documents(draw: st.DrawFn) -> str:
    """Anchors whose lists repeat earlier anchors (a 'billion laughs' when fan-out and count are high)."""
    count = draw(st.integers(1, 12))
    lines = []
    for i in range(count):
        choices = [f"*a{j}" for j in range(i)] + ['"lol"', "1", "[]", "{x: y}"]
        items = [draw(st.sampled_from(choices)) for _ in range(draw(st.integers(1, 12)))]
        lines.append(f"a{i}: &a{i} [{', '.join(items)}]")
    if draw(st.booleans()):
        lines.append("r: &r {self: [*r]}")
    lines.append(f"table: s.t\ncolumns: *a{count - 1}")
    return "\n".join(lines) + "\n"


def _nodes(data: Any) -> int:
    if isinstance(data, dict):
        return 1 + sum(_nodes(v) for v in data.values())
    if isinstance(data, list):
        return 1 + sum(_nodes(v) for v in data)
    return 1


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(alias_documents())
def test_aliases_expand_within_a_budget(text: str) -> None:
    from tablepolicy.compiler.diagnostics import Diagnostic
    from tablepolicy.compiler.yamlsource import ALIAS_BUDGET, parse_yaml

    parsed = parse_yaml(text, "fuzz.yaml")
    if isinstance(parsed, Diagnostic):
        assert parsed.code == "TP004" and parsed.location.line >= 1, parsed.render()
    else:
        assert _nodes(parsed.data) <= ALIAS_BUDGET * len(text) + 10_000


NESTING = st.lists(st.sampled_from(["[", "{a: ", "- ", "\n  ", "]", "}", "x", ", "]), max_size=2000).map("".join)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(1, 3000), NESTING)
def test_nesting_never_raises(depth: int, noise: str) -> None:
    from tablepolicy.compiler.yamlsource import MAX_DEPTH

    text = "table: s.t\ncolumns: " + "[" * depth + noise + "]" * depth + "\n"
    project, diagnostics = Project(root=Path(".")), Diagnostics()
    load_text(text, "fuzz.yaml", project, diagnostics)
    codes = [d.code for d in diagnostics]
    if depth > MAX_DEPTH:  # too deep, unless a syntax error stops the parse first
        assert codes in (["TP005"], ["TP001"]), codes


# --- Strict numbers: no boolean, float or out-of-range integer is ever taken for an int field.

INT_FIELDS = [
    ("format_version",), ("lifecycle", "snapshots", "min_keep"), ("lifecycle", "metadata", "previous_versions_max"),
    ("lifecycle", "compaction", "min_input_files"), ("lifecycle", "manifests", "min_manifests"),
    ("lifecycle", "delete_files", "min_input_files"), ("columns", 0, "id"),
]
NOT_AN_INT32 = st.one_of(st.booleans(), st.floats(allow_nan=False), st.integers(2**31, 2**80),
                         st.integers(-(2**80), 0), st.text(st.characters(categories=["L", "N", "P"]), max_size=5))


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(INT_FIELDS), NOT_AN_INT32)
def test_int_fields_take_only_whole_numbers_in_range(path: tuple[Any, ...], value: Any) -> None:
    import json

    doc: dict[str, Any] = {"table": "s.t", "columns": [{"name": "id", "type": "long"}], "lifecycle": {}}
    node: Any = doc
    for part in path[:-1]:
        node = node.setdefault(part, {}) if isinstance(part, str) else node[part]
    node[path[-1]] = value
    project, diagnostics = Project(root=Path(".")), Diagnostics()
    load_text(json.dumps(doc, ensure_ascii=False), "fuzz.yaml", project, diagnostics)  # JSON is YAML
    assert not project.tables, (path, value)
    assert {d.code for d in diagnostics} & {"TP104", "TP105", "TP106", "TP112"}, [d.render() for d in diagnostics]
