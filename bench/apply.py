"""Apply overhead: a 50-step plan applied by `tablepolicy apply` against the same SQL statements run raw
in one Spark session. Each side is its own process (Python start, Spark session start counted once on
each side), on its own copy of the same embedded catalog. Target: tablepolicy <= 1.10x raw.
Run: .venv/bin/python bench/apply.py [ROUNDS]
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from compiler.desired import desired_states  # noqa: E402
from compiler.plan.codec import plan_from_json  # noqa: E402
from compiler.validate import validate  # noqa: E402
from runtime.apply import plan_id_of, plan_steps  # noqa: E402
from tests.catalog_fixtures import create_like, embedded_catalog  # noqa: E402

# 49 doc updates: one statement each (column adds would land in one ADD COLUMNS)
BASE = "table: bench.wide\ncolumns:\n  - {name: id, type: long}\n" + "".join(
    f"  - {{name: c{i:02d}, type: string}}\n" for i in range(49))
EVOLVED = BASE.replace("type: string}", "type: string, doc: documented}")

RAW = """
import sys, time
from pathlib import Path
from runtime.catalog.config import resolve_catalog
from runtime.spark.session import SparkOptions, start_session
spark = start_session(resolve_catalog(None, Path(sys.argv[1])), SparkOptions())
for statement in Path(sys.argv[2]).read_text().split(";\\n\\n"):
    if statement.strip():
        spark.sql(statement)
"""


def prepare(root: Path) -> tuple[Path, Path, Path]:
    policies = root / "policies"
    policies.mkdir(parents=True)
    (policies / "wide.yaml").write_text(BASE)
    project, _ = validate(policies)
    create_like(embedded_catalog(policies), desired_states(project)[0])
    (policies / "wide.yaml").write_text(EVOLVED)
    plan_file = root / "plan.json"
    subprocess.run([sys.executable, "-c", "from runtime.cli.app import main; main()", "plan", str(policies),
                    "--out", str(plan_file)], check=True, capture_output=True)
    plan = plan_from_json(plan_file.read_text())
    steps = plan_steps(plan, plan_id_of(plan))
    assert len(steps) == 50, len(steps)
    sql_file = root / "steps.sql"
    sql_file.write_text(";\n\n".join(s.sql for s in steps) + ";\n\n")
    return policies, plan_file, sql_file


def timed(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, cwd=ROOT)
    return time.perf_counter() - start


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    raw_times, tool_times = [], []
    for _ in range(rounds):
        with tempfile.TemporaryDirectory() as tmp:
            base = Path(tmp)
            policies, plan_file, _ = prepare(base / "a")
            shutil.copytree(base / "a", base / "b")  # the same starting catalog for the raw side
            raw_times.append(timed([sys.executable, "-c", RAW, str(base / "b" / "policies"),
                                    str(base / "b" / "steps.sql")]))
            tool_times.append(timed([sys.executable, "-c", "from runtime.cli.app import main; main()", "apply",
                                     str(plan_file), "--policies", str(policies)]))
    raw, tool = min(raw_times), min(tool_times)
    print("steps: 50 (49 ALTER COLUMN ... COMMENT + the plan-id stamp)")
    def runs(times: list[float]) -> str:
        return ", ".join(f"{t:.2f}" for t in times)

    print(f"raw Spark SQL, one session:   {raw:6.2f}s  (best of {rounds}: {runs(raw_times)})")
    print(f"tablepolicy apply plan.json:  {tool:6.2f}s  (best of {rounds}: {runs(tool_times)})")
    print(f"ratio: {tool / raw:.3f}x  (target <= 1.10x)")


if __name__ == "__main__":
    main()
