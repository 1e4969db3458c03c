"""Commits per table per step of the evolution suite, counted from the catalog's metadata files.

Every Iceberg commit writes one metadata file numbered one past the last (``00003-<uuid>.metadata.json``),
so the number in the current file name is the count of commits since the table was created. A created
table is one commit; a partition replace is one; several column adds of one step are one.
Set TABLEPOLICY_COMMITS_OUT to a folder to write the measured table as JSON (for the report).
"""

from __future__ import annotations

import json
import os
import re
import shutil
from datetime import date
from pathlib import Path

import pytest

from tablepolicy.compiler.plan.model import CatalogRef
from tablepolicy.compiler.plan.planner import make_plan
from tablepolicy.compiler.validate import validate
from tablepolicy.runtime.apply import apply_plan
from tablepolicy.runtime.catalog.reader import CatalogReader, open_catalog
from tablepolicy.runtime.spark.session import SparkOptions
from tests.integration.conftest import Lake
from tests.integration.evolve import converge
from tests.integration.test_apply import EVOLUTION
from tests.integration.test_plan_evolution import CASES, policy

pytestmark = pytest.mark.spark
ROOT = Path(__file__).resolve().parents[2]
MEASURED: dict[str, dict[str, int]] = {}

THREE_ADDS = {"partition_by": "  - {name: a, type: string}\n  - {name: b, type: double}\n"
                              "  - {name: c, type: date}\npartition_by"}
ADDS_AND_NESTED = {"  - {name: ratio": "  - {name: channel, type: string}\n  - {name: ratio",
                   "{name: y, type: double}": "{name: y, type: double}, {name: z, type: double}",
                   "partition_by": "  - {name: extra, type: date}\npartition_by"}
REPLACE_TWO = {"  - day(ts)": "  - hour(ts)\n  - bucket(4, id)"}
EXTRA = [("add_three", THREE_ADDS), ("adds_and_nested", ADDS_AND_NESTED), ("partition_replace_and_add", REPLACE_TWO)]
# commits of each step where not one: a move between adds ends a batch (add, move, the other adds); a column
# rename and a partition drop are a schema commit and a spec commit (Spark SQL has no statement doing both)
EXPECTED = {"adds_around_a_move": 3, "partition_drop_after_rename": 2}


def commits(lake: Lake, name: tuple[str, ...]) -> int:
    """Commits since creation plus one (the create itself)."""
    location = open_catalog(lake.config).load_table(name).metadata_location
    found = re.search(r"/(\d+)-[^/]*\.metadata\.json$", location)
    assert found is not None, location
    return int(found[1]) + 1


def record(lake: Lake, suite: str, step: str, count: int) -> None:
    MEASURED.setdefault(f"{suite} ({lake.config.properties['uri'].split(':')[0]})", {})[step] = count
    out = os.environ.get("TABLEPOLICY_COMMITS_OUT")
    if out:
        Path(out).mkdir(parents=True, exist_ok=True)
        (Path(out) / "commits.json").write_text(json.dumps(MEASURED, indent=2) + "\n")


STEPS = [(c[0], c[1]) for c in CASES] + EXTRA


@pytest.mark.parametrize(("name", "edit"), STEPS, ids=[s[0] for s in STEPS])
def test_commits_per_evolution_step(lake: Lake, name: str, edit: dict[str, str]) -> None:
    table = ("evo", f"c_{name}")
    converge(lake, policy(f"c_{name}"))
    created = commits(lake, table)
    record(lake, "create evo base", name, created)
    assert created == 1
    converge(lake, policy(f"c_{name}", **edit))
    step = commits(lake, table) - created
    record(lake, "evolution step", name, step)
    assert step == EXPECTED.get(name, 1), f"{name}: {step} commits"


def test_commits_of_the_examples_and_the_applied_evolution(lake: Lake, tmp_path: Path) -> None:
    """The example tables created by apply (stamp included), then each step of test_apply's evolution."""
    policies = shutil.copytree(ROOT / "policies", tmp_path / "policies")
    for old, new in (("table: ads.", "table: cm_ads."), ("table: logs.", "table: cm_logs."),
                     ("table: security.", "table: cm_security."), ("namespace: logs", "namespace: cm_logs"),
                     ("namespace: security", "namespace: cm_security")):
        for file in policies.rglob("*.yaml"):
            file.write_text(file.read_text().replace(old, new))
    names = [("cm_ads", "click_log"), ("cm_logs", "app_events"), ("cm_security", "cloudtrail_mgmt")]

    def apply_all() -> None:
        project, diagnostics = validate(policies)
        assert not diagnostics.has_errors
        with CatalogReader(lake.config) as reader:
            result = make_plan(project, reader, CatalogRef.of(lake.config), today=date(2026, 1, 15))
        assert not result.refused
        apply_plan(result.plan, lake.config, SparkOptions(), journal_path=tmp_path / "j.jsonl", policies=policies)

    apply_all()
    for name in names:
        record(lake, "apply: create example", ".".join(name), commits(lake, name))
        assert commits(lake, name) == 1, name
    click_log = policies / "ads/click_log.yaml"
    for step, old, new in EVOLUTION:
        before = commits(lake, names[0])
        click_log.write_text(click_log.read_text().replace(old, new, 1))
        apply_all()
        record(lake, "apply: click_log evolution (stamp included)", step, commits(lake, names[0]) - before)
