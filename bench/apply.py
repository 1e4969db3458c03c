"""Apply overhead: a 50-step plan applied by tablepolicy against the same SQL statements run raw.

Two comparisons, each printed side by side with its ratio (target: tablepolicy <= 1.10x raw):

* warm session (the default): one process, one Spark session started and warmed up once; each round makes
  two identical tables (``bench.tool_N`` declared in policies, ``bench.raw_N`` beside it) and times
  ``apply`` of the saved plan (the plan file read and its hash checked, locks, fencing reads, the plan derived
  again from the policies and compared, every step prepared, journaled and run) against ``spark.sql`` of the
  same 50 statements on the other table. Rounds alternate which side goes first; best of N and median.
* ``--processes``: each side its own process (Python start and Spark session start counted once on each),
  ``tablepolicy apply plan.json`` against a script running the same statements, on copies of one catalog.

Run: .venv/bin/python bench/apply.py [ROUNDS] [--processes]
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tablepolicy.compiler.desired import desired_states  # noqa: E402
from tablepolicy.compiler.plan.codec import plan_from_json  # noqa: E402
from tablepolicy.compiler.plan.steps import plan_id_of, plan_steps  # noqa: E402
from tablepolicy.compiler.validate import validate  # noqa: E402
from tests.catalog_fixtures import create_like, embedded_catalog  # noqa: E402

STEPS = 50


def policy(name: str) -> tuple[str, str]:
    """The table as created, and as evolved: 49 doc updates, one statement each (column adds would land in
    one ADD COLUMNS)."""
    base = f"table: bench.{name}\ncolumns:\n  - {{name: id, type: long}}\n" + "".join(
        f"  - {{name: c{i:02d}, type: string}}\n" for i in range(STEPS - 1))
    return base, base.replace("type: string}", "type: string, doc: documented}")


RAW = """
import sys, time
from pathlib import Path
from tablepolicy.runtime.catalog.config import resolve_catalog
from tablepolicy.runtime.spark.session import SparkOptions, start_session
spark = start_session(resolve_catalog(None, Path(sys.argv[1])), SparkOptions())
for statement in Path(sys.argv[2]).read_text().split(";\\n\\n"):
    if statement.strip():
        spark.sql(statement)
"""
CLI = "from tablepolicy.cli.app import main; main()"


def declare(policies: Path, name: str, *, plan: bool = True) -> Path:
    """``policies`` with table ``name`` created as first declared, then evolved; the saved plan's path."""
    base, evolved = policy(name)
    policies.mkdir(parents=True)
    (policies / f"{name}.yaml").write_text(base)
    project, _ = validate(policies)
    create_like(embedded_catalog(policies), desired_states(project)[0])
    (policies / f"{name}.yaml").write_text(evolved)
    plan_file = policies.parent / f"{name}.plan.json"
    if not plan:
        return plan_file
    subprocess.run([sys.executable, "-c", CLI, "plan", str(policies), "--out", str(plan_file)], check=True,
                   capture_output=True, cwd=ROOT)
    return plan_file


def statements(plan_file: Path) -> list[str]:
    plan = plan_from_json(plan_file.read_text())
    steps = plan_steps(plan, plan_id_of(plan))
    assert len(steps) == STEPS, len(steps)
    return [s.sql for s in steps]


def summary(label: str, times: list[float]) -> str:
    runs = ", ".join(f"{t:.2f}" for t in times)
    return f"{label:<34} best {min(times):6.3f}s  median {statistics.median(times):6.3f}s  ({runs})"


def report(raw_label: str, raw: list[float], tool_label: str, tool: list[float]) -> None:
    print(summary(raw_label, raw))
    print(summary(tool_label, tool))
    paired = statistics.median(t / r for t, r in zip(tool, raw, strict=True))
    print(f"ratio: best {min(tool) / min(raw):.3f}x, median {statistics.median(tool) / statistics.median(raw):.3f}x, "
          f"median of each round's {paired:.3f}x  (target <= 1.10x)")


class Clock:
    """Seconds spent inside named functions of apply (the outermost call counts), to say where its time goes."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.depth = 0

    def wrap(self, owner: Any, name: str, label: str) -> None:
        inner = getattr(owner, name, None)
        if inner is None:  # not in this version of apply
            return

        def timed(*args: Any, **kwargs: Any) -> Any:
            self.depth += 1
            start = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                self.depth -= 1
                if not self.depth:
                    self.seconds[label] = self.seconds.get(label, 0.0) + time.perf_counter() - start

        setattr(owner, name, timed)

    def take(self) -> dict[str, float]:
        seconds, self.seconds = self.seconds, {}
        return seconds


SPARK_WORK = "statements run in Spark"


def instrumented() -> Clock:
    from tablepolicy.runtime import apply, executor, journal

    clock = Clock()
    for owner, name, label in [(getattr(executor, "_Engine", None), "run", SPARK_WORK),
                               (executor, "run_sql", SPARK_WORK),  # where a step ran through spark.sql
                               (apply, "prepare", "prepare: each step parsed"),
                               (journal.Journal, "record", "journal"), (journal.Journal, "sync", "journal"),
                               (apply, "check_requirements", "fencing: each table read, compared"),
                               (apply, "check_against_policies", "plan derived again, compared"),
                               (executor, "renew_connections", "SQLite pool renewal")]:
        if owner is not None:
            clock.wrap(owner, name, label)
    return clock


def breakdown(parts: list[dict[str, float]], totals: list[float], raw: list[float]) -> None:
    """Median seconds per part of apply, and what is left (plan file read, plan id and steps rendered, locks,
    catalog reader, case sensitivity); the parts beyond Spark's own work are apply's overhead."""
    labels = sorted({label for part in parts for label in part}, key=lambda label: label != SPARK_WORK)
    print("where apply's time goes (median per round):")
    for label in labels:
        print(f"  {label:<42} {statistics.median(part.get(label, 0.0) for part in parts):6.3f}s")
    rest = [total - sum(part.values()) for part, total in zip(parts, totals, strict=True)]
    print(f"  {'the rest (plan file, locks, rendering)':<42} {statistics.median(rest):6.3f}s")
    over = [total - part.get(SPARK_WORK, 0.0) for part, total in zip(parts, totals, strict=True)]
    print(f"  {'apply beyond running the statements':<42} {statistics.median(over):6.3f}s")
    # steady under load, where the two sides' totals swing by seconds from round to round
    print(f"ratio from the parts: (raw median + apply beyond the statements) / raw median = "
          f"{1 + statistics.median(over) / statistics.median(raw):.3f}x")


def warm_session(rounds: int) -> None:
    from tablepolicy.api import load_plan
    from tablepolicy.runtime.apply import apply_plan
    from tablepolicy.runtime.catalog.config import resolve_catalog
    from tablepolicy.runtime.spark.session import SparkOptions, start_session

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        catalog = resolve_catalog(None, root / "p0")
        options = SparkOptions()
        spark = start_session(catalog, options)
        session: Future[Any] = Future()
        session.set_result(spark)

        def pair(n: int) -> tuple[Callable[[], object], Callable[[], object]]:
            tool_name, raw_name = f"tool_{n:02d}", f"raw_{n:02d}"
            raw_policies = root / f"r{n}"
            declare(raw_policies, raw_name, plan=False)  # the same table, created alike; its plan is not applied
            policies = root / f"p{n}"
            plan_file = declare(policies, tool_name)
            raw_sql = [s.replace(tool_name, raw_name) for s in statements(plan_file)]

            def raw() -> object:
                for sql in raw_sql:
                    spark.sql(sql)
                return None

            def tool() -> object:
                return apply_plan(load_plan(plan_file), catalog, options, policies=policies, session=session,
                                  journal_path=plan_file.with_name(plan_file.name + ".journal"))

            return raw, tool

        clock = instrumented()
        raw_times: list[float] = []
        tool_times: list[float] = []
        parts: list[dict[str, float]] = []
        for n in range(rounds + 1):  # round 0 warms the JVM up (code paths compiled, classes loaded)
            raw, tool = pair(n)
            sides = [(raw, raw_times), (tool, tool_times)]
            for run, times in sides if n % 2 else reversed(sides):
                clock.take()
                start = time.perf_counter()
                run()
                if n:
                    times.append(time.perf_counter() - start)
                    if run is tool:
                        parts.append(clock.take())
        print(f"warm session, {STEPS} steps (49 ALTER COLUMN ... COMMENT + the plan-id stamp), {rounds} rounds "
              "after one warm-up, sides alternating:")
        report("raw spark.sql, same statements:", raw_times, "tablepolicy apply_plan(plan file):", tool_times)
        breakdown(parts, tool_times, raw_times)
        spark.stop()


def timed(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, cwd=ROOT)
    return time.perf_counter() - start


def processes(rounds: int) -> None:
    raw_times: list[float] = []
    tool_times: list[float] = []
    for n in range(rounds):
        with tempfile.TemporaryDirectory() as tmp:
            base = Path(tmp)
            plan_file = declare(base / "a" / "policies", "wide")
            (base / "a" / "steps.sql").write_text(";\n\n".join(statements(plan_file)) + ";\n\n")
            shutil.copytree(base / "a", base / "b")  # the same starting catalog for the raw side
            raw = [sys.executable, "-c", RAW, str(base / "b" / "policies"), str(base / "b" / "steps.sql")]
            tool = [sys.executable, "-c", CLI, "apply", str(plan_file), "--policies", str(base / "a" / "policies")]
            sides = [(raw, raw_times), (tool, tool_times)]
            for command, times in sides if n % 2 else reversed(sides):
                times.append(timed(command))
    print(f"one process per side, {STEPS} steps, {rounds} rounds, sides alternating:")
    report("raw Spark SQL, one session:", raw_times, "tablepolicy apply plan.json:", tool_times)


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    rounds = int(args[0]) if args else 5
    if "--processes" in sys.argv:
        processes(rounds)
    else:
        warm_session(rounds)


if __name__ == "__main__":
    main()
