"""Plan at fleet scale, end to end in fresh processes: 100, 1,000 and 10,000 tables (issue 22, target 1).

For each size, side by side on the same embedded catalog and policies (10% of the tables changed in git):
  floor -- a fresh Python process that lists the catalog's namespaces and tables and loads each with pyiceberg
           (what any planner must at least do: interpreter start, pyiceberg import, one metadata read per table);
  plan  -- `tablepolicy plan POLICIES --no-cache` in a fresh process (imports, validation, reads, diff, render).
Each side: best wall time of three runs and its peak resident memory (the child's ru_maxrss).
Also: `tablepolicy --help` and `tablepolicy validate ONE_FILE`, best of five, against `python -c pass`.
Targets: plan <= 1.2x floor at every size, linear in tables (seconds per 1,000 tables flat); peak memory <= 2x the
floor's; --help and validate of one file under 0.3 s.
Run: .venv/bin/python bench/plan_scale.py [SIZES...]   (default 100 1000 10000; 10,000 takes minutes to set up)
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.validate import generate  # noqa: E402
from compiler.desired import desired_states  # noqa: E402
from compiler.validate import validate  # noqa: E402
from tests.catalog_fixtures import create_like, embedded_catalog  # noqa: E402

TOOL = Path(sys.executable).parent / "tablepolicy"
FLOOR = """
import sys
from pathlib import Path
from pyiceberg.catalog.sql import SqlCatalog
root = Path(sys.argv[1]).resolve().parent / ".lake"
catalog = SqlCatalog("lake", uri=f"sqlite:///{root / 'catalog.db'}", warehouse=(root / "warehouse").as_uri())
for namespace in catalog.list_namespaces():
    for name in catalog.list_tables(namespace):
        catalog.load_table(name)
"""


def run(*command: str) -> float:
    """Wall seconds of one child process."""
    start = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                          env={**os.environ, "NO_COLOR": "1"})
    elapsed = time.perf_counter() - start
    if done.returncode not in (0, 2):
        raise SystemExit(f"{' '.join(command)} exited {done.returncode}: {done.stderr[-2000:]}")
    return elapsed


def measured(*command: str, repeat: int = 3) -> tuple[float, int]:
    """Best wall time of ``repeat`` runs, and the peak RSS of one run measured alone (in a helper process, so one
    side's peak never hides the other's)."""
    best = min(run(*command) for _ in range(repeat))
    probe = subprocess.run([sys.executable, "-c", (
        "import resource, subprocess, sys; subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, "
        "stderr=subprocess.DEVNULL); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"), *command],
        cwd=ROOT, capture_output=True, text=True, check=True)
    return best, int(probe.stdout.strip())


def setup(count: int, tmp: Path) -> Path:
    policies = tmp / "policies"
    policies.mkdir()
    files = generate(policies, count)
    catalog = embedded_catalog(policies)
    project, diagnostics = validate(policies)
    assert not diagnostics.has_errors
    started = time.perf_counter()
    for state in desired_states(project):
        create_like(catalog, state)
    for file in files[: max(1, count // 10)]:  # a tenth of the tables changed in git: a new column each
        file.write_text(file.read_text().replace("columns:\n", "columns:\n  - {name: added_in_git, type: string}\n", 1))
    print(f"  setup: {count} tables created with pyiceberg in {time.perf_counter() - started:.0f}s", flush=True)
    return policies


def main() -> None:
    sizes = [int(a) for a in sys.argv[1:]] or [100, 1000, 10000]
    rows = []
    for count in sizes:
        tmp = Path(tempfile.mkdtemp())
        try:
            print(f"{count} tables", flush=True)
            policies = setup(count, tmp)
            floor = measured(sys.executable, "-c", FLOOR, str(policies))
            plan = measured(str(TOOL), "plan", str(policies), "--no-cache")
            rows.append((count, floor, plan))
            print(f"  floor {floor[0]:.2f}s {floor[1] / 1024:.0f} MB · plan {plan[0]:.2f}s {plan[1] / 1024:.0f} MB "
                  f"= {plan[0] / floor[0]:.2f}x time, {plan[1] / floor[1]:.2f}x memory", flush=True)
            one = next(policies.rglob("*.yaml"))
            small = {"help": measured(str(TOOL), "--help", repeat=5),
                     "validate one file": measured(str(TOOL), "validate", str(one), repeat=5),
                     "python -c pass": measured(sys.executable, "-c", "pass", repeat=5)}
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    print()
    print(f"{'tables':>7} | {'floor s':>8} | {'plan s':>8} | {'time x':>6} | {'s/1k tables':>11} | {'floor MB':>8} | "
          f"{'plan MB':>8} | {'memory x':>8}")
    for count, floor, plan in rows:
        print(f"{count:>7} | {floor[0]:>8.2f} | {plan[0]:>8.2f} | {plan[0] / floor[0]:>6.2f} | "
              f"{plan[0] / count * 1000:>11.2f} | {floor[1] / 1024:>8.0f} | {plan[1] / 1024:>8.0f} | "
              f"{plan[1] / floor[1]:>8.2f}")
    print("targets: time x <= 1.2, memory x <= 2.0, s/1k tables flat")
    for what, (seconds, _) in small.items():
        print(f"{what:>20}: {seconds:.3f}s" + ("" if what.startswith("python") else "  (target < 0.3s)"))


if __name__ == "__main__":
    main()
