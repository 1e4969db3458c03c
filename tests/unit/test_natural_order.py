"""Table names in natural order everywhere a list is shown: ``t2`` before ``t10`` (compiler/iceberg/names.natural_key),
in plan text, markdown and JSON, health text, JSON and prometheus, maintain's dry run, drift and erase status."""

from __future__ import annotations

import json
import re
from datetime import date
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tablepolicy.cli.app import app
from tablepolicy.compiler.erasure.ledger import Entry, State, statuses
from tablepolicy.compiler.iceberg.names import natural_key
from tests.catalog_fixtures import create_examples

runner = CliRunner()
# written in an order neither the files' nor plain string order gives back
TABLES = ("t10", "t2", "t1")
POLICY = """table: shop.{name}
columns:
  - {{name: id, type: long}}
lifecycle:
  snapshots: {{max_age: 1d}}
"""


@pytest.mark.parametrize(("names", "ordered"), [
    (["t10", "t2", "t1"], ["t1", "t2", "t10"]),
    (["a10b2", "a10b10", "a2b30", "a"], ["a", "a2b30", "a10b2", "a10b10"]),
    (["t01", "t1", "t001"], ["t001", "t01", "t1"]),  # equal as numbers: the name breaks the tie
    (["T2", "t1", "t10"], ["T2", "t1", "t10"]),  # case is kept: upper case first, as plain order
    (["x10", "x9", "x", "x9y"], ["x", "x9", "x9y", "x10"]),
])
def test_the_key(names: list[str], ordered: list[str]) -> None:
    assert sorted(names, key=natural_key) == ordered


def test_names_compare_part_by_part() -> None:
    names = [("ns10", "a"), ("ns2", "b"), ("ns2", "a10"), ("ns2", "a9")]
    assert sorted(names, key=natural_key) == [("ns2", "a9"), ("ns2", "a10"), ("ns2", "b"), ("ns10", "a")]


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    policies = tmp_path / "policies"
    (policies / "shop").mkdir(parents=True)
    for i, name in enumerate(TABLES):  # file names in yet another order
        (policies / "shop" / f"{'cab'[i]}.yaml").write_text(POLICY.format(name=name), encoding="utf-8")
    (tmp_path / ".tablepolicy").mkdir()
    return policies


def order(text: str, pattern: str = r"shop\.(t\d+)") -> list[str]:
    seen: list[str] = []
    for found in re.findall(pattern, text):
        if found not in seen:
            seen.append(found)
    return seen


def test_plan_lists_tables_in_natural_order(shop: Path) -> None:
    for fmt in ("text", "markdown"):
        result = runner.invoke(app, ["plan", str(shop), "--format", fmt])
        assert result.exit_code in (0, 2), result.output
        assert order(result.stdout) == ["t1", "t2", "t10"], fmt
    document = json.loads(runner.invoke(app, ["plan", str(shop), "--format", "json"]).stdout)
    assert [t["table"] for t in document["tables"]] == ["shop.t1", "shop.t2", "shop.t10"]


def test_health_maintain_and_drift_list_tables_in_natural_order(shop: Path) -> None:
    create_examples(shop)
    health = runner.invoke(app, ["health", str(shop)])
    assert health.exit_code == 0, health.output
    assert order(health.stdout) == ["t1", "t2", "t10"]
    document = json.loads(runner.invoke(app, ["health", str(shop), "--format", "json"]).stdout)
    assert [t["table"][-1] for t in document["tables"]] == ["t1", "t2", "t10"]
    metrics = runner.invoke(app, ["health", str(shop), "--format", "prometheus"]).stdout
    assert order(metrics, r'table="(t\d+)"') == ["t1", "t2", "t10"]
    dry = json.loads(runner.invoke(app, ["maintain", str(shop), "--dry-run", "--format", "json"]).stdout)
    assert [t["table"][-1] for t in dry["tables"]] == ["t1", "t2", "t10"]
    (shop / "shop" / "a.yaml").unlink()  # shop.t2 and shop.t10 no longer declared: drift lists them undeclared
    (shop / "shop" / "c.yaml").unlink()
    drift = json.loads(runner.invoke(app, ["drift", str(shop), "--format", "json"]).stdout)
    assert [t["table"] for t in drift["undeclared"]] == ["shop.t2", "shop.t10"]


def test_erase_status_lists_a_requests_tables_in_natural_order() -> None:
    entries = [Entry(request="r-1", table=f"shop.{name}", received=date(2026, 11, 1), deadline=date(2026, 12, 1),
                     state=State.PENDING) for name in TABLES]
    (status,) = statuses(entries)
    assert [e.table for e in status.entries] == ["shop.t1", "shop.t2", "shop.t10"]
