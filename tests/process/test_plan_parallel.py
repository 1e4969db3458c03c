"""Validating and planning many files in forked workers gives exactly what a single process gives."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import sys, tempfile
from datetime import date
DAY = date(2026, 1, 15)
from pathlib import Path
from bench.validate import generate
from tablepolicy.runtime.catalog.config import resolve_catalog
from tablepolicy.runtime.catalog.reader import CatalogReader
from tablepolicy.compiler.desired import desired_states
from tablepolicy.runtime import forked
from tablepolicy.compiler.plan import planner
from tablepolicy.compiler.plan.codec import plan_to_json
from tablepolicy.compiler.validate import validate
from tests.catalog_fixtures import create_like, embedded_catalog

planner.PARALLEL_FROM = 24  # a CLI run forks from 200 tables; the forked path is the same, for 5x less setup
root = Path(tempfile.mkdtemp())
(root / "policies").mkdir()
files = generate(root / "policies", 48)
project, _ = validate(root / "policies")
catalog = embedded_catalog(root / "policies")
for state in desired_states(project)[:40]:    # 8 tables are new
    create_like(catalog, state)
for file in files[:6]:                        # 6 tables changed in git
    file.write_text(file.read_text().replace("columns:\\n", "columns:\\n  - {name: added, type: string}\\n", 1))
project, _ = validate(root / "policies")
config = resolve_catalog(None, root / "policies")
forks = []
import multiprocessing  # runtime.forked loads it when it forks
get_context = multiprocessing.get_context
multiprocessing.get_context = lambda method: forks.append(method) or get_context(method)
with CatalogReader(config) as reader:
    parallel = plan_to_json(planner.make_plan(project, reader, "lake", today=DAY, workers=forked.FORKED).plan)
assert forks == ["fork"], forks
planner.PARALLEL_FROM = 10**9
with CatalogReader(config) as reader:
    serial = plan_to_json(planner.make_plan(project, reader, "lake", today=DAY, workers=forked.FORKED).plan)
assert parallel == serial, "plans differ"
import json
document = json.loads(parallel)
actions = [c["action"] for t in document["tables"] for c in t["changes"]]
print(actions.count("create_table"), actions.count("add_column") > 0)
import shutil
shutil.rmtree(root)
"""


def test_forked_plan_equals_single_process_plan() -> None:
    result = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, cwd=ROOT, timeout=300,
                            check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.split() == ["8", "True"]


VALIDATE_SCRIPT = """
import shutil, tempfile
from pathlib import Path
from bench.validate import generate
from tablepolicy.compiler import validate as validation
from tablepolicy.runtime import forked
from tablepolicy.runtime.caches.models import FileModelCache

root = Path(tempfile.mkdtemp())
policies = root / "policies"
policies.mkdir()
generate(policies, 300)
defaults = Path("policies/logs/_namespace.yaml").read_text()
for n in (1, 2):  # defaults that tables inherit; one sets an expiry shorter than a table's time travel
    text = defaults.replace("namespace: logs", f"namespace: logs_{n}").replace("max_age: 1d", f"max_age: {n}h")
    (policies / f"ns_{n}" / "_namespace.yaml").write_text(text)
shutil.copytree("tests/corpus", policies / "corpus")  # every kind of bad file, namespace files included

forks = []
import multiprocessing  # runtime.forked loads it when it forks
get_context = multiprocessing.get_context
multiprocessing.get_context = lambda method: forks.append(method) or get_context(method)

def outcome(cache=None):
    project, diagnostics = validation.validate(policies, cache, workers=forked.FORKED)
    return ([d.render() for d in diagnostics], [t.policy.model_dump_json() for t in project.tables],
            [n.defaults.model_dump_json() for n in project.namespaces], [t.source.file for t in project.tables])

parallel = outcome()
assert forks == ["fork"], forks
cached = FileModelCache(path=root / "models.tsv")
first, warm = outcome(cached), outcome(cached)
validation.PARALLEL_FROM = 10**9
serial = outcome()
assert forks == ["fork", "fork"], forks
assert parallel == serial, "forked validation differs"
assert first == serial and warm == serial, "cached validation differs"
findings = serial[0]
print(len(serial[1]), len(serial[2]), len(findings), sum(": error " in f for f in findings))
shutil.rmtree(root)
"""


def test_forked_validation_equals_single_process_validation() -> None:
    result = subprocess.run([sys.executable, "-c", VALIDATE_SCRIPT], capture_output=True, text=True, cwd=ROOT,
                            timeout=300, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    tables, namespaces, findings, errors = map(int, result.stdout.split())
    assert tables >= 300 and namespaces >= 2 and errors >= 90 and findings > errors, result.stdout
