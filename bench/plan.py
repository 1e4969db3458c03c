"""Plan speed: 1,000 tables in an embedded catalog, 100 of them changed in git.

Measured in this process, side by side:
  floor  -- only loading the same 1,000 tables with pyiceberg (catalog.load_table);
  plan   -- tablepolicy's full plan: validate the 1,000 files, read every table, diff (no cache);
  spark  -- the same state read through Spark SQL (DESCRIBE TABLE EXTENDED + SHOW TBLPROPERTIES per
            table; session start not counted), on SPARK_SAMPLE tables, scaled to 1,000;
  replan -- after one change to 1 file, a plan with the cache warm (keys: file hashes + metadata
            locations listed in one catalog query).
  cli    -- end to end, each in a fresh process: `tablepolicy plan --no-cache` against a script that
            only loads the 1,000 tables with pyiceberg (both pay interpreter start and imports).
Targets: plan <= 1.5x floor; plan >= 10x faster than spark; replan <= 0.2x plan.
Run: .venv/bin/python bench/plan.py [TABLES] [SPARK_SAMPLE]
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.validate import generate  # noqa: E402
from tablepolicy.compiler.catalog.config import CatalogConfig  # noqa: E402
from tablepolicy.compiler.desired import desired_states  # noqa: E402
from tablepolicy.compiler.plan.planner import make_plan  # noqa: E402
from tablepolicy.compiler.validate import validate  # noqa: E402
from tablepolicy.runtime.caches.models import FileModelCache  # noqa: E402
from tablepolicy.runtime.caches.plans import PlanCache  # noqa: E402
from tablepolicy.runtime.catalog.reader import CatalogReader  # noqa: E402
from tablepolicy.runtime.forked import FORKED  # noqa: E402
from tests.catalog_fixtures import create_like, embedded_catalog  # noqa: E402


def timed(fn: object) -> float:
    start = time.perf_counter()
    fn()  # type: ignore[operator]
    return time.perf_counter() - start


def full_plan(
    policies: Path, config: CatalogConfig, cache: PlanCache | None = None, models: FileModelCache | None = None
) -> int:
    project, diagnostics = validate(policies, models, workers=FORKED)
    assert not diagnostics.has_errors
    result = make_plan(project, CatalogReader(config), config.name, today=date(2026, 1, 15), cache=cache,
                       workers=FORKED)
    assert not result.refused
    return sum(1 for t in result.plan.tables if t.changes)


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    sample = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    tmp = Path(tempfile.mkdtemp())
    policies = tmp / "policies"
    policies.mkdir()
    files = generate(policies, count)
    catalog = embedded_catalog(policies)
    project, _ = validate(policies)
    started = time.perf_counter()
    names = []
    for state in desired_states(project):
        create_like(catalog, state)
        names.append(state.name)
    print(f"setup: {count} tables created with pyiceberg in {time.perf_counter() - started:.1f}s")
    for file in files[:100]:  # 100 tables changed in git: a new column each
        file.write_text(file.read_text().replace("columns:\n", "columns:\n  - {name: added_in_git, type: string}\n", 1))
    lake = policies.parent / ".lake"
    config = CatalogConfig("lake", {"type": "sql", "uri": f"sqlite:///{lake / 'catalog.db'}",
                                    "warehouse": (lake / "warehouse").as_uri()}, embedded=True)

    def floor() -> None:
        c = embedded_catalog(policies)
        for name in names:
            c.load_table(name)

    changed = full_plan(policies, config)
    assert changed == 100, changed
    t_floor = min(timed(floor) for _ in range(2))
    t_plan = min(timed(lambda: full_plan(policies, config)) for _ in range(2))

    cache = PlanCache(tmp / "cache.json")
    full_plan(policies, config, cache, FileModelCache(path=tmp / "models.tsv"))  # warm both caches
    cache.save()
    one_more = "columns:\n  - {name: one_more, type: int}\n"
    files[500].write_text(files[500].read_text().replace("columns:\n", one_more, 1))

    def replan() -> None:
        warm = PlanCache.open(tmp / "cache.json")
        assert full_plan(policies, config, warm, FileModelCache.open(tmp / "models.tsv")) == 101
        assert warm.hits == count - 1, warm.hits

    t_replan = timed(replan)
    t_floor_cli, t_plan_cli = cli_times(policies)

    t_spark = spark_read(config, names[:sample]) * (count / sample)
    print(f"tables: {count}, changed in git: 100")
    print(f"floor: load {count} tables with pyiceberg:   {t_floor:6.2f}s")
    print(f"tablepolicy plan (validate+read+diff):  {t_plan:6.2f}s  = {t_plan / t_floor:.2f}x floor (target <= 1.5x)")
    print(f"state through Spark SQL (scaled from {sample}): {t_spark:6.2f}s  -> plan is {t_spark / t_plan:.1f}x faster "
          "(target >= 10x)")
    print(f"re-plan after 1 file changed (cache):   {t_replan:6.2f}s  = {t_replan / t_plan:.2f}x full plan "
          "(target <= 0.2x)")
    print(f"end to end, fresh processes: floor {t_floor_cli:.2f}s, `tablepolicy plan --no-cache` {t_plan_cli:.2f}s "
          f"= {t_plan_cli / t_floor_cli:.2f}x floor")
    shutil.rmtree(tmp, ignore_errors=True)


FLOOR_SCRIPT = """
import sys
from pathlib import Path
from tests.catalog_fixtures import embedded_catalog
catalog = embedded_catalog(Path(sys.argv[1]))
for namespace in catalog.list_namespaces():
    for name in catalog.list_tables(namespace):
        catalog.load_table(name)
"""


def cli_times(policies: Path) -> tuple[float, float]:
    """Best of three fresh-process runs of each side."""
    tool = Path(sys.executable).parent / "tablepolicy"

    def run(*command: str) -> float:
        start = time.perf_counter()
        subprocess.run(command, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
        return time.perf_counter() - start

    floor = min(run(sys.executable, "-c", FLOOR_SCRIPT, str(policies)) for _ in range(3))
    plan = min(run(str(tool), "plan", str(policies), "--no-cache") for _ in range(3))
    return floor, plan


def spark_read(config: CatalogConfig, names: list[tuple[str, ...]]) -> float:
    from tablepolicy.runtime.spark.session import SparkOptions, start_session

    spark = start_session(config, SparkOptions())
    spark.sql(f"DESCRIBE TABLE EXTENDED lake.{'.'.join(names[0])}").collect()  # warm the session

    def read() -> None:
        for name in names:
            table = "lake." + ".".join(f"`{p}`" for p in name)
            spark.sql(f"DESCRIBE TABLE EXTENDED {table}").collect()
            spark.sql(f"SHOW TBLPROPERTIES {table}").collect()

    elapsed = timed(read)
    spark.stop()
    return elapsed


if __name__ == "__main__":
    main()
