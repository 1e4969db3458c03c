"""Erasure at scale (issue 22, target 4): `tablepolicy erase` of many subjects against the blunt way, per key layout
and delete mode, with the bytes it writes against Spark's own rewrite of the same files.

The table is bench/erase.py's (seed 001's ad data lake: 30 day partitions x 8 commits of one file, rows sorted by
user id within a file, each user's 10 events over three days), at MILLION_ROWS (default 20), its files written by a
Spark ingest (``--writer pyiceberg``: by pyiceberg, as bench/erase.py's are), with its codec set
(``write.parquet.compression-codec: zstd``: Spark's rewrite and erase's then write the same codec, each at the level
parquet-mr uses, with the table's row group and page sizes). The KEYS subjects (default 10,000) sit:
- ``clustered``: a block of ids first seen mid-month (ids churn): a few files of three days;
- ``random``: drawn at random from the whole id space (seeded): nearly every file holds one.
The table is in mode:
- ``cow``: ``write.delete.mode: copy-on-write``, no delete files;
- ``mor``: ``write.delete.mode: merge-on-read``, and one earlier row-level DELETE by Spark (1% of rows, every 100th
  event) left position delete files (a few per day partition) that apply to every data file: erase reads each file
  it rewrites with its deletes applied (pyiceberg) and drops the delete files that served only the files it replaced.

The table is built once per mode and kept aside; every side of a cell runs on a fresh copy of it restored at the same
path (the metadata holds absolute paths), each side in its own process (Python and Spark start counted on each):
1. the blunt way (bench/erase.py's BASELINE): INSERT OVERWRITE anti-joining the keys, a manifest rewrite, expiry of
   every older snapshot, orphan removal;
2. ``tablepolicy erase`` with one request per subject;
3. Spark's copy-on-write ``DELETE ... WHERE user_id IN (keys)``: only its bytes count (the new data files).
Sides 1 and 2 are verified by the same scan (bench/erase.verified): no parquet file under the location holds a key,
no manifest bound equals one, every other row is still returned.
Targets: erase >= 3x faster than 1; its bytes <= 1.05x those of 3; and <= 0.1x those of 1 when the keys sit in few
files (clustered).
Run: .venv/bin/python bench/erase_matrix.py [MILLION_ROWS] [--keys N] [--layout clustered|random] [--mode cow|mor]
"""

from __future__ import annotations

import argparse
import random
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.erase import (  # noqa: E402
    BASELINE,
    COMMITS_PER_DAY,
    DAYS,
    POLICY,
    ROWS_PER_USER,
    block,
    build_table,
    commits,
    create,
    current_files,
    timed,
    user,
    verified,
    write_requests,
)

LAYOUTS = ("clustered", "random")
MODES = ("cow", "mor")
WRITERS = ("spark", "pyiceberg")
MODE_PROPERTY = {"cow": "copy-on-write", "mor": "merge-on-read"}
SEED = 22
SPEED_TARGET, SPARK_BYTES_TARGET, FULL_BYTES_TARGET = 3.0, 1.05, 0.1

SPARK_PROLOGUE = """
import sys, time
from pathlib import Path
from tablepolicy.runtime.catalog.config import resolve_catalog
from tablepolicy.runtime.spark.session import SparkOptions, start_session
started = time.perf_counter()
spark = start_session(resolve_catalog(None, Path(sys.argv[1])), SparkOptions())
print(f"spark: started: {time.perf_counter() - started:.1f}s", flush=True)
"""
# the earlier row-level DELETE of a merge-on-read table: a position delete file per data file (file granularity)
MASKING = SPARK_PROLOGUE + """
spark.sql("ALTER TABLE lake.bench.events SET TBLPROPERTIES ('write.delete.mode'='merge-on-read')")
spark.sql("DELETE FROM lake.bench.events WHERE event_id % 100 = 7")
print(f"spark: merge-on-read DELETE: {time.perf_counter() - started:.1f}s", flush=True)
"""
# Spark's own rewrite of the files holding a key, copy-on-write whatever the table's mode says
SPARK_DELETE = SPARK_PROLOGUE + """
keys = [line for line in Path(sys.argv[2]).read_text().splitlines() if line]
spark.createDataFrame([(k,) for k in keys], "k string").createOrReplaceTempView("erased")
spark.sql("ALTER TABLE lake.bench.events SET TBLPROPERTIES ('write.delete.mode'='copy-on-write')")
spark.sql("DELETE FROM lake.bench.events WHERE user_id IN (SELECT k FROM erased)")
print(f"spark: copy-on-write DELETE: {time.perf_counter() - started:.1f}s", flush=True)
"""
# the table's files as a Spark ingest writes them: one append per staged file, in order (one file each, rows as
# sorted; no shuffle), with the table's writer settings
SPARK_APPENDS = SPARK_PROLOGUE + """
for path in sorted(Path(sys.argv[2]).glob("*.parquet")):
    spark.read.parquet(str(path)).coalesce(1).writeTo("lake.bench.events").option("distribution-mode", "none").append()
print(f"spark: appended: {time.perf_counter() - started:.1f}s", flush=True)
"""
ERASE = [sys.executable, "-c", "from tablepolicy.cli.app import main; main()", "erase", "{policies}",
         "--requests", "{root}/requests.yaml"]


def policy(mode: str) -> str:
    """bench/erase.py's policy with the table's codec and delete mode."""
    return POLICY + (f"write_modes: {{delete: {MODE_PROPERTY[mode]}}}\n"
                     "properties: {write.parquet.compression-codec: zstd}\n")


@dataclass(frozen=True)
class Cell:
    layout: str
    mode: str
    files: int  # data files of the table
    touched: int  # of them, files holding a key
    full: tuple[float, int]  # seconds, bytes written: the blunt way
    erase: tuple[float, int]
    spark_bytes: int  # Spark's copy-on-write DELETE of the same rows

    @property
    def speedup(self) -> float:
        return self.full[0] / self.erase[0]

    @property
    def vs_spark(self) -> float:
        return self.erase[1] / self.spark_bytes

    @property
    def vs_full(self) -> float:
        return self.erase[1] / self.full[1]


class Workspace:
    """The table under one path; each mode's pristine copy kept aside and restored there for every side."""

    def __init__(self, base: Path, rows: int, writer: str) -> None:
        self.base, self.rows, self.writer = base, rows, writer
        self.work = base / "work"
        self.policies = self.work / "policies"

    def pristine(self, mode: str) -> Path:
        return self.base / f"pristine-{mode}"

    def prepare(self, modes: list[str]) -> None:
        started = time.perf_counter()
        if self.writer == "pyiceberg":
            build_table(self.work, self.rows, policy("cow"))
        else:
            create(self.work, policy("cow"))
            staged = self.base / "staged"
            staged.mkdir()
            for number, rows_of_file in enumerate(commits(self.rows)):
                pq.write_table(rows_of_file, staged / f"{number:05d}.parquet")
            timed([sys.executable, "-c", SPARK_APPENDS, str(self.policies), str(staged)])
            shutil.rmtree(staged)
        print(f"built the table: {self.rows:,} rows, {len(current_files(self.policies))} files written by "
              f"{self.writer} ({time.perf_counter() - started:.0f}s)", flush=True)
        if "cow" in modes:
            shutil.copytree(self.work, self.pristine("cow"), symlinks=True)
        if "mor" in modes:
            (self.policies / "events.yaml").write_text(policy("mor"))
            seconds, _ = timed([sys.executable, "-c", MASKING, str(self.policies)])
            print(f"merge-on-read: 1% of rows deleted by Spark into position delete files ({seconds:.0f}s)",
                  flush=True)
            shutil.copytree(self.work, self.pristine("mor"), symlinks=True)

    def restore(self, mode: str, subjects: list[str]) -> None:
        shutil.rmtree(self.work)
        shutil.copytree(self.pristine(mode), self.work, symlinks=True)
        write_requests(self.work, subjects)


def subjects_of(layout: str, rows: int, keys: int) -> list[int]:
    users = rows // ROWS_PER_USER
    if keys > users:
        raise SystemExit(f"--keys {keys}: the table has {users:,} users")
    if layout == "clustered":
        return list(block(rows, keys))
    return sorted(random.Random(SEED).sample(range(users), keys))


def load() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True, check=True).stdout.strip().split("load ")[-1]


def run_cell(space: Workspace, layout: str, mode: str, keys: int) -> Cell:
    print(f"\n== {layout} / {mode}: {load()}", flush=True)
    subjects = [user(u) for u in subjects_of(layout, space.rows, keys)]
    wanted = set(subjects)
    space.restore(mode, subjects)
    files = current_files(space.policies)
    touched = sum(1 for path in files if _holds(path, wanted))
    full = verified(space.work, space.policies, subjects, [sys.executable, "-c", BASELINE, "{policies}",
                                                          "{root}/keys.txt"])
    _show("full rewrite", full[2])
    space.restore(mode, subjects)
    erase = verified(space.work, space.policies, subjects, ERASE)
    _show("erase", erase[2])
    space.restore(mode, subjects)
    before = current_files(space.policies)
    seconds, lines = timed([sys.executable, "-c", SPARK_DELETE, str(space.policies), str(space.work / "keys.txt")])
    spark_bytes = sum(size for path, size in current_files(space.policies).items() if path not in before)
    _show("spark DELETE", lines)
    cell = Cell(layout, mode, len(files), touched, full[:2], erase[:2], spark_bytes)
    print(f"   {touched} of {len(files)} files hold a key; full {full[0]:.1f}s {full[1] / 2**20:.2f} MiB, erase "
          f"{erase[0]:.1f}s {erase[1] / 2**20:.2f} MiB, Spark DELETE {seconds:.1f}s {spark_bytes / 2**20:.2f} MiB; "
          f"{load()}", flush=True)
    return cell


def _holds(path: str, wanted: set[str]) -> bool:
    column = pq.read_table(path.removeprefix("file://"), columns=["user_id"]).column("user_id")
    return not wanted.isdisjoint(column.unique().to_pylist())


def _show(side: str, lines: list[tuple[float, str]]) -> None:
    for second, line in lines:
        if line.startswith(("baseline: ", "spark: ", "  bench.events: ")):
            print(f"   {side:>12} {second:7.1f}s  {line.strip()[:110]}", flush=True)


def report(cells: list[Cell], rows: int, keys: int, writer: str) -> None:
    print(f"\n{rows:,} rows ({DAYS} days x {COMMITS_PER_DAY} files written by {writer}), {keys:,} keys "
          f"({keys * ROWS_PER_USER:,} rows); "
          f"targets: speed-up >= {SPEED_TARGET:g}x, bytes <= {SPARK_BYTES_TARGET}x Spark's DELETE, "
          f"<= {FULL_BYTES_TARGET}x the full rewrite's when the keys sit in few files (clustered)")
    header = (f"{'layout':<10} {'mode':<4} {'files':>9} {'full s':>7} {'erase s':>7} {'speed-up':>12} "
              f"{'erase MiB':>9} {'Spark MiB':>9} {'vs Spark':>12} {'full MiB':>8} {'vs full':>12}")
    print(header)
    for c in cells:
        full_target = (f"{c.vs_full:.3f}x {_met(c.vs_full <= FULL_BYTES_TARGET)}" if c.layout == "clustered"
                       else f"{c.vs_full:.3f}x  n/a")
        print(f"{c.layout:<10} {c.mode:<4} {f'{c.touched}/{c.files}':>9} {c.full[0]:7.1f} {c.erase[0]:7.1f} "
              f"{f'{c.speedup:.2f}x {_met(c.speedup >= SPEED_TARGET)}':>12} {c.erase[1] / 2**20:9.2f} "
              f"{c.spark_bytes / 2**20:9.2f} {f'{c.vs_spark:.3f}x {_met(c.vs_spark <= SPARK_BYTES_TARGET)}':>12} "
              f"{c.full[1] / 2**20:8.2f} {full_target:>12}")


def _met(ok: bool) -> str:
    return "met" if ok else "MISS"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("million_rows", nargs="?", type=float, default=20.0)
    parser.add_argument("--keys", type=int, default=10_000)
    parser.add_argument("--layout", choices=LAYOUTS)
    parser.add_argument("--mode", choices=MODES)
    parser.add_argument("--writer", choices=WRITERS, default="spark",
                        help="who writes the table's files: a Spark ingest (default) or pyiceberg (bench/erase.py's)")
    args = parser.parse_args()
    rows = int(args.million_rows * 1_000_000)
    layouts = [args.layout] if args.layout else list(LAYOUTS)
    modes = [args.mode] if args.mode else list(MODES)
    started = time.perf_counter()
    print(f"start: {load()}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        space = Workspace(Path(tmp), rows, args.writer)
        space.prepare(modes)
        cells = [run_cell(space, layout, mode, args.keys) for mode in modes for layout in layouts]
    report(cells, rows, args.keys, args.writer)
    print(f"end: {load()}; {time.perf_counter() - started:.0f}s in all")


if __name__ == "__main__":
    main()
