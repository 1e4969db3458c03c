"""The plan file through the CLI, no JVM: byte-identical in separate processes whatever the hash seed (and in
this one, where the other tests run it), the catalog recorded, and approvals that approve nothing reported
(TA101)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tablepolicy.compiler.desired import desired_states
from tablepolicy.compiler.validate import validate
from tests.catalog_fixtures import create_like, embedded_catalog
from tests.cli_runner import Run, tablepolicy_process, tablepolicy_runs_in_a_process
from tests.cli_runner import tablepolicy as in_process

ROOT = Path(__file__).resolve().parents[2]
NEW_TABLE = """table: ads.orders
owner: shop
columns:
  - {name: order_id, type: long, id: 1, required: true}
  - {name: total, type: "decimal(10,2)", renamed_from: amount}
  - {name: placed_at, type: timestamptz}
  - {name: api, type: {struct: [{name: uid, type: string, renamed_from: user}]}}
partition_by:
  - {field: day(placed_at), name: placed_day}
identifier_fields: [order_id]
properties: {write.z: "1", write.a: "2", write.m: "3", write.q: "4"}
ignore_properties: [k.z, k.a, k.m]
"""


def tablepolicy(*args: str, cwd: Path, seed: str | None = None) -> Run:
    """The CLI in this process; with a hash ``seed``, in a process of its own."""
    if seed is not None:
        return tablepolicy_process(*args, cwd=cwd, env={"PYTHONHASHSEED": seed})
    return in_process(*args, cwd=cwd)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The example policies, every table in the embedded catalog as declared, then changed in git: a new
    table with renames, pinned ids and a named partition field, an added column, a property change and
    an approved drop."""
    policies = shutil.copytree(ROOT / "policies", tmp_path / "policies")
    catalog = embedded_catalog(policies)
    parsed, _ = validate(policies)
    for state in desired_states(parsed):
        create_like(catalog, state)
    (policies / "ads/orders.yaml").write_text(NEW_TABLE)
    click = policies / "ads/click_log.yaml"
    text = click.read_text().replace("  - {name: ad_id, type: long}\n", "")
    text = text.replace("  - {name: campaign_id, type: long}", "  - {name: campaign_id, type: long}\n"
                        "  - {name: placement, type: string}")
    click.write_text(text.replace("tags: [pii]", 'tags: [pii]\nallow_destructive: ["drop_column ad_id"]'))
    events = policies / "logs/app_events.yaml"
    events.write_text(events.read_text().replace("min_input_files: 5", "min_input_files: 8"))
    return tmp_path


def test_the_same_inputs_give_the_same_bytes_in_any_process(project: Path) -> None:
    outputs = []
    # two processes (the second fills the plan cache), then this one: uncached, and warm from their cache
    for n, (seed, cache) in enumerate((("1", "--no-cache"), ("2", None), (None, "--no-cache"), (None, None))):
        out = project / f"plan-{n}.json"
        run = tablepolicy("plan", "policies", "--format", "json", "--out", str(out), *([cache] if cache else []),
                          cwd=project, seed=seed)
        assert run.returncode == 0, run.stderr
        outputs.append((run.stdout, out.read_bytes()))
    assert all(o == outputs[0] for o in outputs)
    stdout, saved = outputs[0]
    assert stdout.encode() == saved
    document = json.loads(saved)
    actions = {c["action"] for t in document["tables"] for c in t["changes"]}
    assert {"add_column", "create_table", "drop_column", "set_properties"} <= actions


def test_the_review_views_are_the_same_in_any_process(project: Path) -> None:
    views = [("plan", "policies", "--format", output, "--no-cache") for output in ("text", "markdown")]
    there = tablepolicy_runs_in_a_process(views, cwd=project, env={"PYTHONHASHSEED": "5"})
    here = [tablepolicy(*view, cwd=project) for view in views]
    assert all(run.returncode == 0 for run in there + here), [run.stderr for run in there + here]
    assert there == here
    assert all("ads.orders" in run.stdout for run in here)


def test_the_plan_file_records_the_catalog_and_reads_back(project: Path) -> None:
    run = tablepolicy("plan", "policies", "--out", "plan.json", cwd=project)
    assert run.returncode == 0, run.stderr
    document = json.loads((project / "plan.json").read_text())
    assert document["catalog"] == {"name": "lake", "type": "sql",
                                   "uri": f"sqlite:///{project.resolve() / '.lake' / 'catalog.db'}"}
    existing = [t for t in document["tables"] if t["requirement"]["exists"]]
    assert existing and all(len(t["requirement"]["uuid"]) == 36 for t in existing)
    dry = tablepolicy("apply", "plan.json", "--dry-run", cwd=project)
    assert dry.returncode == 0, dry.stderr
    assert "`placed_day`" in dry.stdout and "DROP COLUMN `ad_id`" in dry.stdout


@pytest.mark.parametrize("output", ["text", "markdown"])
def test_an_approval_that_approves_nothing_is_a_warning_with_the_line_to_delete(project: Path, output: str) -> None:
    click = project / "policies/ads/click_log.yaml"
    click.write_text(click.read_text().replace('allow_destructive: ["drop_column ad_id"]',
                                               'allow_destructive: ["drop_column ad_id", "drop_column cost"]'))
    run = tablepolicy("plan", "policies", "--format", output, cwd=project)
    assert run.returncode == 0, run.stderr
    both = run.stdout + run.stderr
    line = next(n for n, text in enumerate(click.read_text().splitlines(), start=1) if "allow_destructive" in text)
    assert (f"policies/ads/click_log.yaml:{line}:" in both and "warning TA101: allow_destructive entry "
            "'drop_column cost' approves no change in this plan" in both), both
    assert "delete this line" in both
    assert "'drop_column ad_id' approves" not in both
