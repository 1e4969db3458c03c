"""Golden plans: the text, markdown and JSON plan of each example under policies/ (against an empty
catalog) and of each change kind (one case of tests/unit/test_differ.py per kind), byte for byte.

A change to the differ, planner or a renderer that changes what a reviewer or CD reads fails here.
When the change is meant, rewrite the files and review their diff like code:

    UPDATE_GOLDEN=1 .venv/bin/pytest -q tests/process/test_golden_plans.py

No JVM and no catalog: the current tables live in memory (tests/memory_catalog.py); the plan's date,
policies commit and catalog are fixed inputs, so the bytes are the same in any process.
"""

from __future__ import annotations

import difflib
import hashlib
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tablepolicy.compiler.catalog.config import CatalogConfig
from tablepolicy.compiler.desired import desired_table
from tablepolicy.compiler.loader import Project
from tablepolicy.compiler.plan.codec import plan_from_json, plan_to_json
from tablepolicy.compiler.plan.model import CatalogRef
from tablepolicy.compiler.plan.planner import PlanResult, make_plan
from tablepolicy.compiler.render.markdown import render_markdown
from tablepolicy.compiler.render.text import render_text
from tests.memory_catalog import MemoryCatalog, applied, project_of
from tests.unit.test_differ import CASES, GIT_SHA, TODAY, Case, plan_case

REPO = Path(__file__).parents[2]
GOLDEN = Path(__file__).parents[1] / "golden"
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"
# A catalog with a password in its URI: the golden files also prove it never reaches a plan.
PASSWORD = "s3cret-golden"
CONFIG = CatalogConfig("lake", {"type": "sql", "uri": f"postgresql://planner:{PASSWORD}@db.internal:5432/lake"})


def renderings(result: PlanResult) -> dict[str, str]:
    """What ``tablepolicy plan --format text|markdown|json`` prints (tablepolicy/cli/commands.py RENDERERS),
    without colour."""
    return {
        "txt": CONFIG.header() + "\n" + render_text(result.plan),
        "md": render_markdown(result.plan, result.diagnostics, catalog=CONFIG.header()),
        "json": plan_to_json(result.plan),
    }


def example_project() -> Project:
    policies = REPO / "policies"
    files = sorted(p for p in policies.rglob("*") if p.suffix.lower() in (".yaml", ".yml"))
    names = [f"policies/{p.relative_to(policies).as_posix()}" for p in files]
    return project_of(*(p.read_text(encoding="utf-8") for p in files), files=names)


def example_plan(name: str) -> PlanResult:
    """One example table planned against an empty catalog, with its namespace defaults."""
    project = example_project()
    [table] = [t for t in project.tables if ".".join(t.name) == name]
    only = Project(root=project.root, tables=[table], namespaces=project.namespaces)
    return make_plan(only, MemoryCatalog(), CatalogRef.of(CONFIG), git_sha=GIT_SHA, today=TODAY)


def kind_case(kind: str) -> Case:
    """The case of the differ table that plans this kind with the fewest other kinds (the first of those),
    neither refused nor wrong."""
    cases = [c for c in CASES if not c.xfail and not any(" error " in r for r in c.refused)
             and kind in {action for action, *_ in c.changes}]
    return min(cases, key=lambda c: len({action for action, *_ in c.changes}))


EXAMPLES = sorted(".".join(t.name) for t in example_project().tables)
KINDS = sorted({action for c in CASES for action, *_ in c.changes})
PLANS: dict[str, Callable[[], PlanResult]] = {
    **{f"examples/{name}": (lambda name=name: example_plan(name)) for name in EXAMPLES},
    **{f"changes/{kind}": (lambda kind=kind: plan_case(kind_case(kind), CatalogRef.of(CONFIG))) for kind in KINDS},
}


def expected_files() -> set[Path]:
    return {GOLDEN / f"{key}.{suffix}" for key in PLANS for suffix in ("txt", "md", "json")}


@pytest.mark.parametrize("key", sorted(PLANS))
def test_golden_plan(key: str) -> None:
    result = PLANS[key]()
    assert not result.refused, [d.render() for d in result.diagnostics]
    assert plan_from_json(plan_to_json(result.plan)) == result.plan.model_copy(
        update={"tables": [t for t in result.plan.tables if t.changes]})
    stale = []
    for suffix, text in renderings(result).items():
        assert PASSWORD not in text
        path = GOLDEN / f"{key}.{suffix}"
        if UPDATE:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            continue
        old = path.read_text(encoding="utf-8") if path.exists() else ""
        if old != text:
            stale.append("".join(difflib.unified_diff(old.splitlines(True), text.splitlines(True),
                                                      f"{path.relative_to(REPO)} (golden)", "(rendered now)")))
    assert not stale, ("the rendered plan changed; if that is meant, rewrite the golden files with "
                       "UPDATE_GOLDEN=1 .venv/bin/pytest -q tests/process/test_golden_plans.py and review their diff:\n"
                       + "\n".join(stale))


def test_no_golden_file_is_left_over() -> None:
    """A golden file no plan renders any more (a kind removed, an example renamed) is deleted, not kept."""
    present = {p for folder in ("examples", "changes") for p in (GOLDEN / folder).rglob("*") if p.is_file()}
    extra = present - expected_files()
    if UPDATE:
        for path in extra:
            path.unlink()
        return
    assert not extra, f"golden files no test renders (UPDATE_GOLDEN=1 deletes them): {sorted(map(str, extra))}"


@pytest.mark.parametrize("name", EXAMPLES)
def test_an_example_as_applied_plans_nothing(name: str) -> None:
    """An example table as an apply leaves it (Iceberg metadata from its desired state) needs no change."""
    project = example_project()
    [table] = [t for t in project.tables if ".".join(t.name) == name]
    current = applied(desired_table(project, table).state)
    only = Project(root=project.root, tables=[table], namespaces=project.namespaces)
    result = make_plan(only, MemoryCatalog.of(current), CatalogRef.of(CONFIG), git_sha=GIT_SHA, today=TODAY)
    assert not result.refused and result.plan.changes == [], [c.summary for c in result.plan.changes]


RENDER_ALL = """
import hashlib, sys
from tests.process.test_golden_plans import PLANS, renderings
for key in sorted(PLANS):
    for suffix, text in renderings(PLANS[key]()).items():
        print(key, suffix, hashlib.sha256(text.encode()).hexdigest())
"""


def test_the_bytes_are_the_same_in_another_process() -> None:
    """Another interpreter with another string hash seed renders the same bytes (nothing follows set order)."""
    here = "".join(f"{key} {suffix} {hashlib.sha256(text.encode()).hexdigest()}\n"
                   for key in sorted(PLANS) for suffix, text in renderings(PLANS[key]()).items())
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    there = subprocess.run([sys.executable, "-c", RENDER_ALL], cwd=REPO, env=env, capture_output=True, text=True,
                           check=True, timeout=120).stdout
    assert there == here
