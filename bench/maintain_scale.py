"""Maintenance at fleet scale (issue 22, target 3): `tablepolicy maintain` against running everything.

  (a) 100 tables, 5 needing work; target >= 3x.   (d) 1,000 tables, 10 needing work; target >= 10x.
  (e) 100 tables, 5 needing only expiry and orphan removal (3 commits: no compaction due): maintain starts no JVM.

Orphan removal is declared on every table (bench/maintain.py's lifecycle). A table needing work has 21 small
commits (compaction, manifests, expiry due) and an old stray file (orphan removal due); in (e) 3 commits and the
stray (compared on data files, rows, checksum and the stray: the baseline also rewrites the 3 manifests, which
the policy's min_manifests 10 does not call for, and its expiry then drops one more snapshot). "Running
everything" is bench/maintain.py's: one Spark session calling rewrite_data_files, rewrite_position_delete_files,
rewrite_manifests, expire_snapshots and remove_orphan_files on every table.
The tables are written with pyiceberg (one append per healthy table), so building 1,000 needs no JVM.

Each side is its own process from the same copy of the project (put back at the same path before each side);
both must reach the same end state on the working tables and on a sample of the others (bench/maintain.py's
``end_state``). With SAMPLE (an int), the everything side of a scenario above 100 tables runs on the working
tables and SAMPLE healthy ones only, and its time for the rest is extrapolated from the healthy tables' mean
(printed as such): at 1,000 tables the full baseline is an hour on 2 cores.

Run: .venv/bin/python bench/maintain_scale.py [SCENARIOS] [SAMPLE]   (SCENARIOS e.g. "ade", default "ad")
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import pyarrow as pa  # noqa: E402

from bench.maintain import (  # noqa: E402
    EVERYTHING,
    LIFECYCLE,
    NAMESPACE,
    POLICY,
    Side,
    compare,
    end_state,
    python,
    restore,
    timed_maintain,
)
from tablepolicy.compiler.desired import desired_states  # noqa: E402
from tablepolicy.compiler.validate import validate  # noqa: E402
from tests.catalog_fixtures import create_like, embedded_catalog  # noqa: E402

SCENARIOS = {"a": (100, 5, 21, 3.0), "d": (1000, 10, 21, 10.0), "e": (100, 5, 3, 3.0)}  # tables, work, commits, x
CHECKED_HEALTHY = 5  # healthy tables compared after both sides besides the working ones
MIN_MANIFESTS = 10  # LIFECYCLE's manifests.min_manifests: below it, the policy does not rewrite manifests
REWRITE_DEPENDENT = ("snapshots_from_before", "manifests_read")  # what a manifest rewrite (and the expiry after) change
SAMPLED_ABOVE = 100  # SAMPLE applies to scenarios of more tables than this: 100 tables always run in full


def rows(start: int, count: int) -> pa.Table:
    ids = list(range(start, start + count))
    return pa.table({"id": pa.array(ids, pa.int64()), "qty": pa.array([i % 97 for i in ids], pa.int32()),
                     "price": pa.array([None] * count, pa.decimal128(12, 2)),
                     "note": pa.array([f"n{i % 1009}" for i in ids], pa.string())})


def name(i: int) -> str:
    return f"t{i:04d}"


def build(root: Path, tables: int, work: int, commits: int) -> tuple[Path, Path]:
    """The project at ``root/lake`` and a pristine copy of it: ``work`` tables with ``commits`` commits each and
    an old stray file, the others one append each; returns (project, pristine)."""
    project = root / "lake"
    policies = project / "policies" / NAMESPACE
    policies.mkdir(parents=True)
    for i in range(tables):
        (policies / f"{name(i)}.yaml").write_text(POLICY.format(name=f"{NAMESPACE}.{name(i)}") + LIFECYCLE)
    model, diagnostics = validate(policies.parent)
    assert not diagnostics.has_errors, [d.render() for d in diagnostics]
    catalog = embedded_catalog(policies.parent)
    for state in desired_states(model):
        create_like(catalog, state)
    newest = 0.0
    for i in range(tables):
        table = catalog.load_table((NAMESPACE, name(i)))
        for c in range(commits if i < work else 1):
            table.append(rows(i * 10**5 + c * 100, 100))
        if i < work:
            data = Path(str(table.location()).removeprefix("file://").removeprefix("file:")) / "data"
            data.mkdir(parents=True, exist_ok=True)
            stray = data / "stray-from-a-failed-write.parquet"
            stray.write_bytes(b"not referenced by any snapshot")
            os.utime(stray, (time.time() - 5 * 86400,) * 2)
            newest = time.time()
    time.sleep(max(0.0, 61 - (time.time() - newest)))  # the working tables' snapshots past max_age 1m
    pristine = root / "pristine"
    shutil.copytree(project, pristine)
    return project, pristine


def timed_everything(pristine: Path, project: Path, tables: list[str]) -> Side:
    restore(pristine, project)
    script = EVERYTHING.replace('table = f"\'`lake`.`{namespace}`.`t{i:03d}`\'"',
                                'table = f"\'`lake`.`{namespace}`.`{names[i]}`\'"').replace(
        "policies, namespace, tables = sys.argv[1], sys.argv[2], int(sys.argv[3])",
        "policies, namespace, names = sys.argv[1], sys.argv[2], sys.argv[3].split(','); tables = len(names)")
    assert "names[i]" in script and "split(',')" in script, "bench/maintain.py's EVERYTHING changed"
    began = time.perf_counter()
    out = python("-c", script, str(project / "policies"), NAMESPACE, ",".join(tables))
    return Side(time.perf_counter() - began, out.strip())


def scenario(label: str, sample: int | None) -> list[str]:
    tables, work, commits, target = SCENARIOS[label]
    root = Path(tempfile.mkdtemp(prefix=f"tp-bench-maintain-{label}-"))
    try:
        began = time.perf_counter()
        project, pristine = build(root, tables, work, commits)
        built = time.perf_counter() - began
        names = [name(i) for i in range(tables)]
        healthy = names[work:]
        sampled = sample is not None and tables > SAMPLED_ABOVE
        chosen = healthy[:: max(1, len(healthy) // max(sample or 1, 1))][:sample] if sampled else healthy
        checked = names[:work] + chosen[:CHECKED_HEALTHY]
        since_ms = int(time.time() * 1000)
        everything = timed_everything(pristine, project, names[:work] + chosen)
        theirs = end_state(project, checked, since_ms)
        baseline, note = everything.seconds, ""
        if len(chosen) < len(healthy):
            per_table = per_healthy_table(pristine, project, chosen)
            baseline = everything.seconds + per_table * (len(healthy) - len(chosen))
            note = (f" (ran on {work} working + {len(chosen)} healthy tables in {everything.seconds:.1f}s; the other "
                    f"{len(healthy) - len(chosen)} healthy tables extrapolated at {per_table:.2f}s each, measured "
                    "as that session's time per healthy table)")
        maintain = timed_maintain(pristine, project, idle=False)
        ours = end_state(project, checked, since_ms)
        if commits < MIN_MANIFESTS:  # the baseline's manifest rewrite commits a snapshot that maintain's does not
            ours, theirs = ({t: {k: v for k, v in s.items() if k not in REWRITE_DEPENDENT} for t, s in side.items()}
                            for side in (ours, theirs))
        same = compare(label, ours, theirs)
        report = json.loads((project / "maintain.json").read_text())
        ratio = baseline / maintain.seconds
        return [f"({label}) {tables} tables, {work} needing work ({commits} commits each), built in {built:.0f}s",
                f"({label}) every procedure, one session | {baseline:8.2f}s |{note} {everything.detail}",
                f"({label}) tablepolicy maintain          | {maintain.seconds:8.2f}s | {maintain.detail}; "
                f"JVM started: {'yes' if spark_started(report) else 'no'}",
                f"({label}) speed-up {ratio:.1f}x (target >= {target:g}x: {'met' if ratio >= target else 'MISSED'}); "
                f"same end state on {len(checked)} table(s): {'yes' if same else 'NO'}"]
    finally:
        shutil.rmtree(root, ignore_errors=True)


def per_healthy_table(pristine: Path, project: Path, chosen: list[str]) -> float:
    """Seconds per healthy table of the everything side: a session on the chosen healthy tables alone, less its
    own start (printed by the script as spark_start)."""
    side = timed_everything(pristine, project, chosen)
    spent = dict(part.split("=") for part in side.detail.split())
    return (side.seconds - float(spent["spark_start"])) / len(chosen)


def spark_started(report: dict[str, object]) -> bool:
    steps = [s for t in report["tables"] for s in t["steps"]]  # type: ignore[attr-defined]
    return any(not str(s["sql"]).startswith("-- without Spark") for s in steps)


def main() -> None:
    labels = sys.argv[1] if len(sys.argv) > 1 else "ad"
    sample = int(sys.argv[2]) if len(sys.argv) > 2 else None
    began = time.perf_counter()
    print(f"{os.cpu_count()} cores; load {os.getloadavg()[0]:.1f}", flush=True)
    for label in labels:
        print("\n".join(scenario(label, sample)), flush=True)
    print(f"generated {datetime.now(UTC).replace(microsecond=0).isoformat()}; "
          f"total {timedelta(seconds=round(time.perf_counter() - began))}; load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
