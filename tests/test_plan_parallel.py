"""Planning many tables in forked workers gives exactly the plan a single process gives."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

SCRIPT = """
import sys, tempfile
from pathlib import Path
from bench.validate import generate
from compiler.catalog.config import resolve_catalog
from compiler.catalog.reader import CatalogReader
from compiler.desired import desired_states
from compiler.plan import planner
from compiler.render.json_plan import plan_to_json
from compiler.validate import validate
from tests.catalog_fixtures import create_like, embedded_catalog

root = Path(tempfile.mkdtemp())
(root / "policies").mkdir()
files = generate(root / "policies", 240)
project, _ = validate(root / "policies")
catalog = embedded_catalog(root / "policies")
for state in desired_states(project)[:200]:   # 40 tables are new
    create_like(catalog, state)
for file in files[:30]:                       # 30 tables changed in git
    file.write_text(file.read_text().replace("columns:\\n", "columns:\\n  - {name: added, type: string}\\n", 1))
project, _ = validate(root / "policies")
config = resolve_catalog(None, root / "policies")
forks = []
get_context = planner.multiprocessing.get_context
planner.multiprocessing.get_context = lambda method: forks.append(method) or get_context(method)
with CatalogReader(config) as reader:
    parallel = plan_to_json(planner.make_plan(project, reader, "lake").plan)
assert forks == ["fork"], forks
planner.PARALLEL_FROM = 10**9
with CatalogReader(config) as reader:
    serial = plan_to_json(planner.make_plan(project, reader, "lake").plan)
assert parallel == serial, "plans differ"
import json
document = json.loads(parallel)
actions = [c["action"] for t in document["tables"] for c in t["changes"]]
print(actions.count("create_table"), actions.count("add_column") > 0)
"""


def test_forked_plan_equals_single_process_plan() -> None:
    result = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, cwd=ROOT, timeout=300,
                            check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.split() == ["40", "True"]
