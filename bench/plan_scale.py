"""Plan at fleet scale, end to end in fresh processes: 100, 1,000 and 10,000 tables (issue 22, target 1).

For each size, side by side on the same embedded catalog and policies (10% of the tables changed in git):
  floor -- a fresh Python process that lists the catalog's namespaces and tables and loads each with pyiceberg
           (what any planner must at least do: interpreter start, pyiceberg import, one metadata read per table);
  plan  -- `tablepolicy plan POLICIES --no-cache` in a fresh process (imports, validation, reads, diff, render).
The project has no .tablepolicy/ folder, so neither the model cache nor the plan cache is read or written (checked
after the runs), with or without --no-cache.
The sides are interleaved (floor, plan, floor, plan, ...) so both see the same load on a shared machine. Each run
is measured with os.wait4 by a small launcher process: wall time, CPU time (user+sys of the child and the workers
it forked and reaped) and peak resident memory (the largest of the child and its reaped workers). Reported: best
wall and best CPU of each side, their ratios, the median of the per-pair wall ratios, the largest peak memory, and
the load average (before and after each size, and at each run's start). CPU time is the steadier figure when other
sessions load the machine.
Also: `tablepolicy --help` and `tablepolicy validate ONE_FILE`, best of five, against `python -c pass`.
Targets: plan <= 1.2x floor at every size, linear in tables (seconds per 1,000 tables flat); peak memory <= 2x the
floor's; --help and validate of one file under 0.3 s.
Run: .venv/bin/python bench/plan_scale.py [--repeat N] [SIZES...]   (default 3 runs a side, 100 1000 10000;
10,000 takes minutes to set up)
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.validate import generate  # noqa: E402
from tablepolicy.compiler.desired import desired_states  # noqa: E402
from tablepolicy.compiler.validate import validate  # noqa: E402
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


@dataclass(frozen=True)
class Run:
    wall: float  # seconds
    cpu: float  # user+sys seconds of the child and its reaped descendants
    rss: int  # peak resident KiB of the largest of them
    load: float  # 1-minute load average when the run started


def load_average() -> float:
    return os.getloadavg()[0]


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()


# The child is started by this small process: a process forked from the bench itself would count the bench's own
# resident memory in its peak (Linux carries the pre-exec address space's high-water mark into ru_maxrss).
LAUNCHER = """
import os, sys, time
actions = [(os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0)]
start = time.perf_counter()
pid = os.posix_spawn(sys.argv[1], sys.argv[1:], os.environ, file_actions=actions)
_, status, usage = os.wait4(pid, 0)
print(time.perf_counter() - start, usage.ru_utime + usage.ru_stime, usage.ru_maxrss, os.waitstatus_to_exitcode(status))
"""


def run(*command: str) -> Run:
    """One child process, measured by os.wait4 in a launcher (its rusage covers the workers it forked and waited
    for)."""
    load = load_average()
    done = subprocess.run([sys.executable, "-S", "-c", LAUNCHER, *command], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "NO_COLOR": "1"}, check=False)
    try:
        wall, cpu, rss, code = done.stdout.split()
    except ValueError:
        raise SystemExit(f"launcher of {' '.join(command)} failed: {done.stderr[-2000:]}") from None
    if int(code) not in (0, 2):
        raise SystemExit(f"{' '.join(command)} exited {code}: {done.stderr[-2000:]}")
    return Run(float(wall), float(cpu), int(rss), load)


def interleaved(repeat: int, *commands: tuple[str, ...]) -> list[list[Run]]:
    """``repeat`` rounds, each running every command once in turn: the runs of each command."""
    runs: list[list[Run]] = [[] for _ in commands]
    for _ in range(repeat):
        for done, command in zip(runs, commands, strict=True):
            done.append(run(*command))
    return runs


def best(runs: list[Run]) -> tuple[float, float, int]:
    """Best wall, best CPU, largest peak memory (KiB)."""
    return min(r.wall for r in runs), min(r.cpu for r in runs), max(r.rss for r in runs)


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


def show_runs(name: str, runs: list[Run]) -> None:
    print(f"  {name:>5}: " + " · ".join(f"{r.wall:.2f}s wall {r.cpu:.2f}s cpu {r.rss / 1024:.0f} MB (load {r.load:.1f})"
                                        for r in runs), flush=True)


def main() -> None:
    args = sys.argv[1:]
    repeat = 3
    if args[:1] == ["--repeat"]:
        repeat, args = int(args[1]), args[2:]
    sizes = [int(a) for a in args] or [100, 1000, 10000]
    rows = []
    small: dict[str, tuple[float, float, int]] = {}
    for count in sizes:
        tmp = Path(tempfile.mkdtemp())
        try:
            print(f"{count} tables", flush=True)
            policies = setup(count, tmp)
            print(f"  before: {uptime()}", flush=True)
            floor_runs, plan_runs = interleaved(repeat, (sys.executable, "-c", FLOOR, str(policies)),
                                                (str(TOOL), "plan", str(policies), "--no-cache"))
            print(f"  after:  {uptime()}", flush=True)
            if (tmp / ".tablepolicy").exists():
                raise SystemExit(f"plan made {tmp / '.tablepolicy'}: a cache was written, the runs are not cold")
            show_runs("floor", floor_runs)
            show_runs("plan", plan_runs)
            pairs = statistics.median(p.wall / f.wall for f, p in zip(floor_runs, plan_runs, strict=True))
            loads = [r.load for r in (*floor_runs, *plan_runs)]
            floor, plan = best(floor_runs), best(plan_runs)
            rows.append((count, floor, plan, pairs, min(loads), max(loads)))
            print(f"  = {plan[0] / floor[0]:.2f}x wall (pairs' median {pairs:.2f}x), {plan[1] / floor[1]:.2f}x cpu, "
                  f"{plan[2] / floor[2]:.2f}x memory", flush=True)
            one = next(policies.rglob("*.yaml"))
            small = {what: best([run(*command) for _ in range(5)]) for what, command in (
                ("help", (str(TOOL), "--help")),
                ("validate one file (no cache)", (str(TOOL), "validate", str(one))),
                ("python -c pass", (sys.executable, "-c", "pass")))}
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    print()
    print(f"{'tables':>7} | {'floor s':>7} | {'plan s':>7} | {'wall x':>6} | {'pairs x':>7} | {'floor cpu':>9} | "
          f"{'plan cpu':>8} | {'cpu x':>5} | {'cpu s/1k more':>13} | {'floor MB':>8} | {'plan MB':>7} | {'mem x':>5} | "
          f"{'load':>9}")
    previous: tuple[int, float, float] | None = None
    for count, floor, plan, pairs, low, high in rows:
        # CPU per 1,000 tables added since the previous size (plan / floor): flat when plan is linear in tables
        more = (f"{(plan[1] - previous[2]) / (count - previous[0]) * 1000:.2f} / "
                f"{(floor[1] - previous[1]) / (count - previous[0]) * 1000:.2f}") if previous else "-"
        previous = (count, floor[1], plan[1])
        print(f"{count:>7} | {floor[0]:>7.2f} | {plan[0]:>7.2f} | {plan[0] / floor[0]:>6.2f} | {pairs:>7.2f} | "
              f"{floor[1]:>9.2f} | {plan[1]:>8.2f} | {plan[1] / floor[1]:>5.2f} | {more:>13} | "
              f"{floor[2] / 1024:>8.0f} | {plan[2] / 1024:>7.0f} | {plan[2] / floor[2]:>5.2f} | "
              f"{low:>4.1f}-{high:<4.1f}")
    print("targets: wall x and cpu x <= 1.2, mem x <= 2.0, cpu s/1k more flat across sizes (plan / floor)")
    for what, (seconds, cpu, _) in small.items():
        print(f"{what:>30}: {seconds:.3f}s wall {cpu:.3f}s cpu" + ("" if what.startswith("python") else
                                                                  "  (target < 0.3s)"))
    print("(the last size's project, which has no .tablepolicy/: every file is parsed; bench/validate.py one-file "
          "measures one file of a project whose caches are on)")


if __name__ == "__main__":
    main()
