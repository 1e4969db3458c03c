"""`maintain --dry-run` then `maintain` on the same table, through the CLI, on the embedded SQLite catalog: what the
dry run promised for compaction holds for what Spark then did.

The table (target file size 16 KiB, min_input_files 5) has three partitions of small files written one row per
commit by pyiceberg, as a streaming writer leaves them:
  a: 30 files of ~1.5 KiB, ~45 KiB together: Spark takes them and reads them in splits of ~20 KiB: 3 files;
  b: 4 files of ~1.5 KiB: below min_input_files and the target, left alone;
  c: 2 files of ~8 KiB: below min_input_files, but more than the target together: Spark takes them too, 1 file.
So 32 files are rewritten into 4, which the dry run predicts exactly (the packing leaves no doubt here; the unit
tests in tests/unit/test_compaction_estimate.py cover the cases where it gives a range). The bytes Spark writes cannot
be known before (it re-encodes 32 footers into 4): the dry run gives the bytes it reads, exactly, and a range for
the average file size after, which must hold the run's figure.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyiceberg.catalog.sql import SqlCatalog

pytestmark = pytest.mark.spark

BIN = Path(sys.executable).parent
POLICY = """\
table: est.events
columns:
  - {name: id, type: long, required: true}
  - {name: part, type: string}
  - {name: payload, type: string}
partition_by: [part]
lifecycle:
  compaction: {target_file_size: 16KB, min_input_files: 5}
"""


def tablepolicy(cwd: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYICEBERG_", "TABLEPOLICY_"))}
    env |= {"PATH": f"{BIN}{os.pathsep}{env.get('PATH', '')}", "HOME": str(cwd), "NO_COLOR": "1"}
    result = subprocess.run(["tablepolicy", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=900,
                            check=False)
    assert result.returncode == 0, f"tablepolicy {' '.join(args)}\n{result.stdout}{result.stderr}"
    return result.stdout


def load_rows(cwd: Path) -> dict[str, list[int]]:
    """One commit per row; returns the file sizes per partition."""
    lake = cwd / ".lake"
    table = SqlCatalog("lake", uri=f"sqlite:///{lake}/catalog.db",
                       warehouse=(lake / "warehouse").as_uri()).load_table("est.events")
    rng = random.Random(7)  # incompressible payload for c, the same on every run
    rows = ([(i, "a", f"row {i}") for i in range(30)] + [(100 + i, "b", f"row {i}") for i in range(4)]
            + [(200 + i, "c", "".join(rng.choice("0123456789abcdef") for _ in range(14000))) for i in range(2)])
    for id_, part, payload in rows:
        table.append(pa.Table.from_pylist([{"id": id_, "part": part, "payload": payload}],
                                          schema=table.schema().as_arrow()))
    sizes: dict[str, list[int]] = {}
    for task in table.refresh().scan().plan_files():
        sizes.setdefault(task.file.partition[0], []).append(task.file.file_size_in_bytes)
    return sizes


def compaction(report: dict[str, Any]) -> tuple[dict[str, Any], dict[str, int]]:
    (table,) = report["tables"]
    (step,) = [s for s in table["steps"] if s["section"] == "compaction"]
    return table, step["effect"]


def within(value: int, bounds: list[int]) -> bool:
    return bounds[0] <= value <= bounds[1]


def test_the_dry_run_estimate_holds_what_the_run_then_reports(tmp_path: Path) -> None:
    (tmp_path / "policies" / "est").mkdir(parents=True)
    (tmp_path / "policies" / "est" / "events.yaml").write_text(POLICY)
    tablepolicy(tmp_path, "apply", "--auto-approve")
    sizes = load_rows(tmp_path)
    assert {part: len(files) for part, files in sizes.items()} == {"a": 30, "b": 4, "c": 2}
    assert max(max(files) for files in sizes.values()) < 12 * 1024  # all small (under 75% of 16 KiB)
    assert sum(sizes["c"]) > 16 * 1024 > sum(sizes["b"])  # c has enough content, b has neither files nor bytes

    dry_text = tablepolicy(tmp_path, "maintain", "--dry-run", "--json-report", "dry.json")
    run_text = tablepolicy(tmp_path, "maintain", "--json-report", "run.json")
    dry, estimate = compaction(json.loads((tmp_path / "dry.json").read_text()))
    run, done = compaction(json.loads((tmp_path / "run.json").read_text()))

    taken = sum(sizes["a"]) + sum(sizes["c"])
    assert dry["before"] == run["before"]  # the same table: nothing wrote between the two
    # what metadata decides is exact: the files taken and the bytes read (Spark's rewritten_bytes_count)
    assert (estimate["rewritten"], estimate["bytes_rewritten"]) == (done["rewritten"], done["bytes_rewritten"]) == (
        32, taken)
    # the files written: 3 for a, 1 for c, predicted without a range, and so many written
    assert "written_most" not in estimate and estimate["written"] == done["written"] == 4
    assert within(run["after"]["data_files"], dry["after_range"]["data_files"]) and run["after"]["data_files"] == 8
    # the bytes written are unknown to the dry run (it says so) and known to the run
    assert "bytes_written" not in estimate and done["bytes_written"] == run["after"]["data_bytes"] - sum(sizes["b"])
    assert within(run["after"]["data_bytes"], dry["after_range"]["data_bytes"])
    assert within(run["after"]["average_file_size"], dry["after_range"]["average_file_size"]), (dry, run)
    assert run["after_range"]["average_file_size"] == [run["after"]["average_file_size"]] * 2  # the run is exact

    kib = f"{taken / 1024:.1f} KiB"
    assert f"compaction    would run (rewrote 32 files ({kib}) into 4, their size known after the run)" in dry_text
    low, high = dry["after_range"]["average_file_size"]
    assert f"{low:,} bytes–{high / 1024:.1f} KiB" in dry_text  # a range, never the bytes read as if kept
    written = f"{done['bytes_written'] / 1024:.1f} KiB"
    assert f"(rewrote 32 files ({kib}) into 4 ({written}))" in run_text
