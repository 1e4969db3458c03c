"""Mutated policies: the validator reports, it never raises."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from compiler.checks import check_project
from compiler.diagnostics import Diagnostics
from compiler.loader import Project, load_text

ROOT = Path(__file__).resolve().parents[1]
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
        assert finding.code.startswith("TP") and finding.message
