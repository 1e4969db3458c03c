"""Maintenance: what deciding from metadata buys against running every procedure everywhere, and what
compaction buys a reader.

  (a) 100 tables, 5 needing work (21 small commits each and an old stray file): `tablepolicy maintain` against
      one Spark session running every procedure (rewrite_data_files, rewrite_position_delete_files,
      rewrite_manifests, expire_snapshots, remove_orphan_files) on every table. Target: >= 3x faster.
  (b) the same 100 tables, none needing work: the same two sides. Target: >= 20x faster (maintain starts no
      JVM: its run here has pyspark made unimportable).
  (c) one table of 2,000 small files: a full-column aggregate (count, sums, min/max of every column) after
      `maintain` against before. Target: >= 5x faster, identical results.

Each side is its own process (interpreter, imports and, where it needs one, Spark start included) and starts
from the same catalog: the tables are built with Spark once, the project copied aside, and put back at the
same path before each side (table locations are absolute paths). After each side the tables are read with
pyiceberg (no JVM) and both sides must reach the same end state: data files, manifests, snapshots, rows and a
row checksum per table, and whether the stray file is gone; (c) compares the aggregate rows.
Run: .venv/bin/python bench/maintain.py [ROUNDS] [TABLES] [SCENARIOS]   (ROUNDS repeats each timed side, the best
is taken; TABLES other than 100 is for a quick look, the targets are for 100; SCENARIOS e.g. "c" or "ab", default abc)
"""

from __future__ import annotations

import gc
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tablepolicy.compiler.desired import desired_states  # noqa: E402
from tablepolicy.compiler.validate import validate  # noqa: E402
from tests.catalog_fixtures import create_like, embedded_catalog  # noqa: E402

TABLES, WORK, COMMITS, SMALL_FILES = 100, 5, 21, 2000
NAMESPACE = "bench_m"
LIFECYCLE = """lifecycle:
  snapshots: {max_age: 1m, min_keep: 1}
  compaction: {min_input_files: 5, target_file_size: 128MB}
  manifests: {min_manifests: 10}
  delete_files: {min_input_files: 1}
  orphan_files: {older_than: 3d}
"""
POLICY = """table: {name}
columns:
  - {{name: id, type: long}}
  - {{name: qty, type: int}}
  - {{name: price, type: "decimal(12,2)"}}
  - {{name: note, type: string}}
"""
ROWS = ("id, CAST(id % 97 AS INT), CAST((id % 10007) / 100 AS DECIMAL(12,2)), concat('n', CAST(id % 1009 AS STRING)) "
        "FROM range({start}, {end})")
TARGET = {"a": 3.0, "b": 20.0, "c": 5.0}

BUILD = """
import sys, time
from pathlib import Path
from tablepolicy.runtime.catalog.config import resolve_catalog
from tablepolicy.runtime.spark.session import SparkOptions, start_session
policies, namespace, tables, work, commits, small, rows = sys.argv[1:8]
spark = start_session(resolve_catalog(None, Path(policies)), SparkOptions())
insert = lambda table, hint, start, end: spark.sql(
    f"INSERT INTO lake.{namespace}.{table} SELECT /*+ {hint} */ " + rows.format(start=start, end=end))
for i in range(int(tables)):
    insert(f"t{i:03d}", "COALESCE(1)", i * 1000, i * 1000 + 1000)
print("healthy", flush=True)
sys.stdin.readline()  # the healthy catalog is copied aside meanwhile
for i in range(int(work)):
    for c in range(int(commits) - 1):
        insert(f"t{i:03d}", "COALESCE(1)", 10**8 + i * 10**5 + c * 100, 10**8 + i * 10**5 + c * 100 + 100)
insert("small", f"REPARTITION({small})", 0, int(small) * 500)
print("built", flush=True)
"""

EVERYTHING = """
import sys, time
from pathlib import Path
from datetime import UTC, datetime, timedelta
from tablepolicy.runtime.catalog.config import resolve_catalog
from tablepolicy.runtime.spark.session import SparkOptions, start_session
policies, namespace, tables = sys.argv[1], sys.argv[2], int(sys.argv[3])
started = time.perf_counter()
spark = start_session(resolve_catalog(None, Path(policies)), SparkOptions())
spent = {"spark start": time.perf_counter() - started}
now = datetime.now(UTC)
expire_before = (now - timedelta(minutes=1)).strftime("%Y-%m-%d %H:%M:%S.%f+00:00")
orphans_before = (now - timedelta(days=3)).strftime("%Y-%m-%d %H:%M:%S.%f+00:00")
for i in range(tables):
    table = f"'`lake`.`{namespace}`.`t{i:03d}`'"
    for procedure, arguments in (
        ("rewrite_data_files", "strategy => 'binpack', options => map('min-input-files', '5', "
                               "'target-file-size-bytes', '134217728')"),
        ("rewrite_position_delete_files", "options => map('min-input-files', '1')"),
        ("rewrite_manifests", ""),
        ("expire_snapshots", f"older_than => TIMESTAMP '{expire_before}', retain_last => 1"),
        ("remove_orphan_files", f"older_than => TIMESTAMP '{orphans_before}'"),
    ):
        began = time.perf_counter()
        spark.sql(f"CALL `lake`.system.`{procedure}`(table => {table}" + (f", {arguments}" if arguments else "")
                  + ")").collect()
        spent[procedure] = spent.get(procedure, 0.0) + time.perf_counter() - began
print(" ".join(f"{k.replace(' ', '_')}={v:.2f}" for k, v in spent.items()))
"""

AGGREGATE = """
import sys, time
from pathlib import Path
from tablepolicy.runtime.catalog.config import resolve_catalog
from tablepolicy.runtime.spark.session import SparkOptions, start_session
spark = start_session(resolve_catalog(None, Path(sys.argv[1])), SparkOptions())
query = (f"SELECT count(*), sum(id), sum(qty), sum(price), min(note), max(note), sum(length(note)) "
         f"FROM lake.{sys.argv[2]}.small")
rows = spark.sql(query).collect()  # warm-up: the JVM's first query of this shape
times = []
for _ in range(int(sys.argv[3])):
    began = time.perf_counter()
    again = spark.sql(query).collect()
    times.append(time.perf_counter() - began)
    assert again == rows
print(min(times), [str(v) for v in rows[0]])
"""

BLOCK_PYSPARK = "raise ImportError('bench: an idle maintain must not import pyspark')\n"


@dataclass(frozen=True)
class Side:
    seconds: float
    detail: str


def python(*args: str, env: dict[str, str] | None = None, stdin: str | None = None) -> str:
    done = subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=ROOT, input=stdin,
                          env={**os.environ, "NO_COLOR": "1", **(env or {})}, check=False)
    if done.returncode != 0:
        raise SystemExit(f"failed: {' '.join(args[:4])}...\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return done.stdout


def tablepolicy(*args: str, env: dict[str, str] | None = None) -> str:
    return python("-c", "from tablepolicy.cli.app import main; main()", *args, env=env)


def build(root: Path) -> tuple[Path, Path, Path]:
    """The project at ``root/lake`` built with Spark, and two copies of it: all 100 tables healthy, and 5 of
    them needing work (plus the 2,000-file table in both)."""
    project = root / "lake"
    policies = project / "policies"
    for i in range(TABLES):
        (policies / NAMESPACE).mkdir(parents=True, exist_ok=True)
        (policies / NAMESPACE / f"t{i:03d}.yaml").write_text(POLICY.format(name=f"{NAMESPACE}.t{i:03d}") + LIFECYCLE)
    (policies / "small").mkdir(parents=True)
    (policies / "small" / "small.yaml").write_text(POLICY.format(name=f"{NAMESPACE}.small") + LIFECYCLE)
    project_model, diagnostics = validate(policies)
    assert not diagnostics.has_errors, [d.render() for d in diagnostics]
    catalog = embedded_catalog(policies)
    for state in desired_states(project_model):
        create_like(catalog, state)
    builder = subprocess.Popen([sys.executable, "-c", BUILD, str(policies), NAMESPACE, str(TABLES), str(WORK),
                                str(COMMITS), str(SMALL_FILES), ROWS], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               text=True, cwd=ROOT)
    assert builder.stdin is not None and builder.stdout is not None
    assert builder.stdout.readline() == "healthy\n"
    healthy = root / "healthy"
    shutil.copytree(project, healthy)
    builder.stdin.write("\n")
    builder.stdin.flush()
    assert builder.stdout.readline() == "built\n" and builder.wait() == 0
    for i in range(WORK):  # an old file no snapshot references: orphan removal is due on these tables
        stray = Path(str(catalog.load_table((NAMESPACE, f"t{i:03d}")).location()).removeprefix("file:")) / "data"
        (stray / "stray-from-a-failed-write.parquet").write_bytes(b"not referenced by any snapshot")
        five_days_ago = time.time() - 5 * 86400
        os.utime(stray / "stray-from-a-failed-write.parquet", (five_days_ago, five_days_ago))
    if WORK:
        time.sleep(max(0.0, 61 - (time.time() - newest_commit(catalog, WORK))))  # snapshots past max_age 1m
    working = root / "working"
    shutil.copytree(project, working)
    return project, healthy, working


def newest_commit(catalog: object, work: int) -> float:
    tables = [catalog.load_table((NAMESPACE, f"t{i:03d}")) for i in range(work)]  # type: ignore[attr-defined]
    return max(t.current_snapshot().timestamp_ms for t in tables) / 1000


def restore(pristine: Path, project: Path) -> None:
    gc.collect()  # catalogs read meanwhile close their SQLite connections (which delete the WAL files) first
    shutil.rmtree(project, ignore_errors=True)
    if project.exists():
        shutil.rmtree(project)
    shutil.copytree(pristine, project)  # copy2: file times kept (the stray stays 5 days old)


def end_state(project: Path, tables: list[str], since_ms: int) -> dict[str, dict[str, object]]:
    """What a reader of each table sees: files, rows and their checksum, the history kept from before the run
    (``since_ms``: when it started; the snapshots the run itself committed differ by design: running every
    procedure commits a manifest rewrite too), the manifests a scan reads (a compaction's commit also lists the
    manifests it emptied, read by no scan and dropped by the next commit) and whether the stray file is gone."""
    catalog = embedded_catalog(project / "policies")
    state = {}
    for name in tables:
        table = catalog.load_table((NAMESPACE, name))
        snapshot = table.current_snapshot()
        rows = table.scan().to_arrow().sort_by("id")
        checksum = hashlib.sha256(json.dumps(rows.to_pydict(), default=str).encode()).hexdigest()[:16]
        data = Path(str(table.location()).removeprefix("file:")) / "data"
        manifests = snapshot.manifests(table.io) if snapshot else []
        state[name] = {"data_files": len(table.inspect.files()), "rows": rows.num_rows, "checksum": checksum,
                       "snapshots_from_before": sum(s.timestamp_ms < since_ms for s in table.metadata.snapshots),
                       "manifests_read": sum(1 for m in manifests if m.has_added_files() or m.has_existing_files()),
                       "stray": (data / "stray-from-a-failed-write.parquet").exists()}
    return state


def best(rounds: int, run: object) -> Side:
    sides = [run() for _ in range(rounds)]  # type: ignore[operator]
    return min(sides, key=lambda s: s.seconds)


def timed_maintain(pristine: Path, project: Path, *, idle: bool) -> Side:
    restore(pristine, project)
    env = {}
    if idle:
        blocker = project.parent / "no-pyspark" / "pyspark"
        blocker.mkdir(parents=True, exist_ok=True)
        (blocker / "__init__.py").write_text(BLOCK_PYSPARK)
        env["PYTHONPATH"] = f"{blocker.parent}{os.pathsep}{ROOT}"
    report = project / "maintain.json"
    began = time.perf_counter()
    out = tablepolicy("maintain", str(project / "policies" / NAMESPACE), "--json-report", str(report), env=env)
    seconds = time.perf_counter() - began
    tables = json.loads(report.read_text())["tables"]
    steps = [step for table in tables for step in table["steps"]]
    assert not any(table["failed"] for table in tables), out
    if not steps:
        assert "No maintenance due" in out, out
        return Side(seconds, "no action due")
    spent: dict[str, float] = {}
    for step in steps:
        assert step["status"] == "done", step
        spent[step["action"]] = spent.get(step["action"], 0.0) + step["seconds"]
    skipped = sum(1 for table in tables for skip in table["skipped"] if "after" in skip["reason"]
                  or "already" in skip["reason"])
    return Side(seconds, " ".join(f"{k}={v:.2f}" for k, v in spent.items())
                + f"; {len(steps)} action(s) run, {skipped} made unnecessary by the one before")


def timed_everything(pristine: Path, project: Path) -> Side:
    restore(pristine, project)
    began = time.perf_counter()
    out = python("-c", EVERYTHING, str(project / "policies"), NAMESPACE, str(TABLES))
    return Side(time.perf_counter() - began, out.strip())


def decisions_only(pristine: Path, project: Path) -> float:
    """maintain --dry-run: reading the health of every table and deciding, no JVM."""
    restore(pristine, project)
    began = time.perf_counter()
    tablepolicy("maintain", str(project / "policies" / NAMESPACE), "--dry-run")
    return time.perf_counter() - began


def compare(label: str, ours: dict[str, dict[str, object]], theirs: dict[str, dict[str, object]]) -> bool:
    same = ours == theirs
    if not same:
        for name in sorted(ours):
            if ours[name] != theirs[name]:
                print(f"  {label} {name}: maintain {ours[name]} != every procedure {theirs[name]}")
    return same


def scenario(label: str, pristine: Path, project: Path, checked: list[str], rounds: int, *, idle: bool) -> list[str]:
    since_ms = int(time.time() * 1000)  # every snapshot of the pristine copy is older
    everything = best(rounds, lambda: timed_everything(pristine, project))
    theirs = end_state(project, checked, since_ms)
    maintain = best(rounds, lambda: timed_maintain(pristine, project, idle=idle))
    ours = end_state(project, checked, since_ms)
    same = compare(label, ours, theirs)
    dry = decisions_only(pristine, project)
    ratio = everything.seconds / maintain.seconds
    return [f"({label}) every procedure, one session | {everything.seconds:8.2f}s | {everything.detail}",
            f"({label}) tablepolicy maintain          | {maintain.seconds:8.2f}s | {maintain.detail}; "
            f"decisions alone (--dry-run) {dry:.2f}s",
            f"({label}) speed-up {ratio:.1f}x (target >= {TARGET[label]:g}x: "
            f"{'met' if ratio >= TARGET[label] else 'MISSED'}); same end state on {len(checked)} table(s): "
            f"{'yes' if same else 'NO'}"]


def aggregate(project: Path, rounds: int) -> tuple[float, list[str]]:
    out = python("-c", AGGREGATE, str(project / "policies"), NAMESPACE, str(max(rounds, 3)))
    seconds, _, values = out.strip().partition(" ")
    return float(seconds), json.loads(values.replace("'", '"'))


def scenario_c(pristine: Path, project: Path, rounds: int) -> list[str]:
    restore(pristine, project)
    files_before = end_state(project, ["small"], 0)["small"]["data_files"]
    before, result_before = aggregate(project, rounds)
    began = time.perf_counter()
    tablepolicy("maintain", str(project / "policies" / "small"))
    spent = time.perf_counter() - began
    files_after = end_state(project, ["small"], 0)["small"]["data_files"]
    after, result_after = aggregate(project, rounds)
    ratio = before / after
    return [f"(c) aggregate over {files_before} files (before)  | {before:8.3f}s | {result_before}",
            f"(c) aggregate over {files_after} file(s) (after) | {after:8.3f}s | maintain took {spent:.2f}s",
            f"(c) speed-up {ratio:.1f}x (target >= {TARGET['c']:g}x: {'met' if ratio >= TARGET['c'] else 'MISSED'}); "
            f"identical results: {'yes' if result_before == result_after else 'NO'}"]


def main() -> None:
    global TABLES, WORK
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    scenarios = sys.argv[3] if len(sys.argv) > 3 else "abc"
    TABLES = int(sys.argv[2]) if len(sys.argv) > 2 else TABLES
    TABLES = TABLES if {"a", "b"} & set(scenarios) else 0  # (c) alone needs only its table
    WORK = min(WORK, TABLES)
    root = Path(tempfile.mkdtemp(prefix="tp-bench-maintain-"))
    try:
        began = time.perf_counter()
        project, healthy, working = build(root)
        print(f"built {TABLES} tables ({WORK} needing work) and a table of {SMALL_FILES} files with Spark in "
              f"{time.perf_counter() - began:.0f}s; best of {rounds} round(s) per side; {os.cpu_count()} cores",
              flush=True)
        if "a" in scenarios:
            lines = scenario("a", working, project, [f"t{i:03d}" for i in range(WORK)], rounds, idle=False)
            print("\n".join(lines), flush=True)
        if "b" in scenarios:
            lines = scenario("b", healthy, project, [f"t{i:03d}" for i in range(TABLES)], rounds, idle=True)
            print("\n".join(lines), flush=True)
        if "c" in scenarios:
            print("\n".join(scenario_c(working, project, rounds)), flush=True)
        print(f"generated {datetime.now(UTC).replace(microsecond=0).isoformat()}; "
              f"total {timedelta(seconds=round(time.perf_counter() - began))}")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
