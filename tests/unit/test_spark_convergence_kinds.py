"""Every change kind has a Spark convergence case, checked without a JVM: a kind is applied by Spark and planned
again to nothing either in a row of tests/integration/test_plan_evolution.py's CASES (test_change_kind asserts
the row's kinds, applies them and converges) or in the test CONVERGED_ELSEWHERE names for it. A new kind in
neither fails here, as a kind without a differ case fails tests/unit/test_differ.py."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import get_args

from tablepolicy.compiler.diff.changes import Change
from tests.integration.test_plan_evolution import CASES, CONVERGED_ELSEWHERE

ROOT = Path(__file__).resolve().parents[2]
ALL_KINDS = {kind.model_fields["action"].default for kind in get_args(get_args(Change)[0])}


def test_every_change_kind_has_a_spark_convergence_case() -> None:
    in_cases = {action for _, _, kinds, _ in CASES for action, _ in kinds}
    missing = sorted(ALL_KINDS - in_cases - set(CONVERGED_ELSEWHERE))
    assert missing == [], (f"no Spark test applies and converges {missing}: add a row to CASES in "
                           "tests/integration/test_plan_evolution.py, or name the test in CONVERGED_ELSEWHERE")


def test_the_registry_names_kinds_and_tests_that_exist() -> None:
    assert sorted(set(CONVERGED_ELSEWHERE) - ALL_KINDS) == []
    absent = []
    for kind, node in sorted(CONVERGED_ELSEWHERE.items()):
        file, _, function = node.partition("::")
        path = ROOT / file
        defined = path.is_file() and any(isinstance(n, ast.FunctionDef) and n.name == function
                                         for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"))))
        if not defined:
            absent.append(f"{kind}: {node}")
    assert absent == []
