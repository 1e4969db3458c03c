"""Soak: a writer commits every second for N minutes while apply, maintain and erase run in a loop on the same
tables (one copy-on-write, one merge-on-read), on the embedded SQLite catalog.

The writer is its own process (pyiceberg, like a micro-batch job): every second it appends rows of subject
``writer`` with fresh ids to both tables and prints what it committed. The loop runs the CLI as the scheduled
workflows do, each command its own process and JVM: ``apply`` (a table property changed each round),
``maintain`` (expiry, compaction, delete files, manifests) and ``erase`` (a new subject's rows, appended just
before, with its request). At the end it checks and prints:

  - no row of the writer lost: every id the writer committed is in each table, exactly once;
  - every erase proven: exit 0, each table's proof ``complete``, and no parquet file under the table locations
    still holds an erased key (read with plain pyarrow, tests/integration/erasure_data.keys_in_storage);
  - every maintain converged: exit 0 and no failed step in its JSON report;
  - every apply converged: exit 0 and ``plan`` right after shows no change;
  - no file left that a snapshot needs: every manifest list, manifest, data and delete file referenced by any
    snapshot still in the metadata exists.

Not in ``make test`` (it runs for minutes).
Run: .venv/bin/python bench/soak.py [--minutes 10] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tablepolicy.compiler.desired import desired_states  # noqa: E402
from tablepolicy.compiler.validate import validate  # noqa: E402
from tests.catalog_fixtures import create_like, embedded_catalog  # noqa: E402
from tests.integration.erasure_data import batch, keys_in_storage  # noqa: E402

TABLES = {"cow": "copy-on-write", "mor": "merge-on-read"}
NAMESPACE = "soak"

POLICY = """table: {namespace}.{name}
columns:
  - {{name: event_id, type: long}}
  - name: user
    type: {{struct: [{{name: uid, type: string}}, {{name: name, type: string}}]}}
  - {{name: ts, type: timestamptz}}
partition_by: [day(ts)]
write_modes: {{delete: {mode}, update: {mode}, merge: {mode}}}
properties:
  commit.retry.num-retries: "20"
  soak.round: "{round}"
lifecycle:
  snapshots: {{max_age: 2m, min_keep: 3}}
  compaction: {{min_input_files: 5, target_file_size: 128MB}}
  delete_files: {{enabled: true, min_input_files: 1}}
  manifests: {{min_manifests: 10}}
  erasure: {{key: [user.uid], within: 30d}}
"""

WRITER = """
import sys, time
from pathlib import Path
from pyiceberg.exceptions import CommitFailedException, ValidationException
from sqlalchemy.exc import OperationalError
from tests.catalog_fixtures import embedded_catalog
from tests.integration.erasure_data import batch
catalog = embedded_catalog(Path(sys.argv[1]))
stop, tables = Path(sys.argv[2]), sys.argv[3].split(",")
written, retries = 0, 0
while not stop.exists():
    began = time.monotonic()
    first = 1_000_000_000 + written * 10
    for name in tables:
        while True:
            try:
                catalog.load_table(("soak", name)).append(batch(first, ["writer"], days=1))
                break
            # lost a race (a locked SQLite too), or the snapshot it started from was expired (its manifest list
            # deleted between load and append: FileNotFoundError): nothing committed
            except (CommitFailedException, ValidationException, OperationalError, FileNotFoundError) as exc:
                retries += 1
                print("retry", name, type(exc).__name__, flush=True)
                time.sleep(0.05)
        print("committed", name, first, flush=True)
    written += 1
    time.sleep(max(0.0, 1.0 - (time.monotonic() - began)))
print("done", written, retries, flush=True)
"""


@dataclass
class Tally:
    runs: Counter[str] = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)
    erased_subjects: int = 0
    maintain_steps: Counter[str] = field(default_factory=Counter)

    def fail(self, what: str) -> None:
        self.failures.append(what)
        print(f"  FAILED: {what}", flush=True)


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", "from tablepolicy.cli.app import main; main()", *args],
                          capture_output=True, text=True, cwd=cwd, check=False, timeout=1800,
                          env={**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(ROOT)})


def write_policies(policies: Path, round_: int) -> None:
    for name, mode in TABLES.items():
        (policies / f"{name}.yaml").write_text(POLICY.format(namespace=NAMESPACE, name=name, mode=mode,
                                                             round=round_))


def setup(root: Path) -> Path:
    project = root / "lake"
    policies = project / "policies"
    policies.mkdir(parents=True)
    write_policies(policies, 0)
    model, diagnostics = validate(policies)
    assert not diagnostics.has_errors, [d.render() for d in diagnostics]
    catalog = embedded_catalog(policies)
    for state in desired_states(model):
        create_like(catalog, state)
    for name in TABLES:  # history the run starts from, without any writer row
        table = catalog.load_table((NAMESPACE, name))
        for i in range(3):
            table.append(batch(10_000 * (i + 1), ["kept1", "kept2"]))
    return policies


def apply_round(policies: Path, round_: int, tally: Tally) -> None:
    write_policies(policies, round_)
    project = policies.parent
    done = cli("apply", str(policies), "--auto-approve", "--policies", str(policies), cwd=project)
    if done.returncode != 0:
        tally.fail(f"apply round {round_}: exit {done.returncode}: {(done.stdout + done.stderr)[-1500:]}")
        return
    again = cli("plan", str(policies), "--detailed-exitcode", cwd=project)
    if again.returncode != 0:
        tally.fail(f"apply round {round_} did not converge: plan after it exit {again.returncode}: "
                   f"{(again.stdout + again.stderr)[-1500:]}")


def maintain_round(policies: Path, round_: int, tally: Tally) -> None:
    report = policies.parent / f"maintain-{round_}.json"
    done = cli("maintain", str(policies), "--json-report", str(report), cwd=policies.parent)
    if done.returncode != 0 or not report.exists():
        tally.fail(f"maintain round {round_}: exit {done.returncode}: {(done.stdout + done.stderr)[-1500:]}")
        return
    for outcome in json.loads(report.read_text())["tables"]:
        for step in outcome.get("steps", []):
            tally.maintain_steps[f"{step['action']} {step['status']}"] += 1
            if step["status"] == "failed":
                tally.fail(f"maintain round {round_}: {outcome['table']} {step['action']} failed: {step}")


def erase_round(policies: Path, round_: int, tally: Tally) -> None:
    catalog = embedded_catalog(policies)
    subject = f"subject-{round_}"
    for name in TABLES:  # the subject's rows, committed between the writer's
        for attempt in range(50):
            try:
                catalog.load_table((NAMESPACE, name)).append(batch(2_000_000_000 + round_ * 100, [subject]))
                break
            except Exception as exc:  # a lost race with the writer: try again
                if attempt == 49:
                    raise
                print(f"  subject append retried: {type(exc).__name__}", flush=True)
                time.sleep(0.1)
    requests = policies.parent / f"requests-{round_}.yaml"
    requests.write_text(f'requests:\n  - {{id: REQ-{round_}, received: "2026-11-02", keys: {{user.uid: {subject}}}}}\n')
    proof = policies.parent / f"proof-{round_}.json"
    done = cli("erase", str(policies), "--requests", str(requests), "--proof", str(proof), cwd=policies.parent)
    if done.returncode != 0 or not proof.exists():
        tally.fail(f"erase round {round_}: exit {done.returncode}: {(done.stdout + done.stderr)[-1500:]}")
        return
    states = {t["table"]: t["state"] for t in json.loads(proof.read_text())["tables"]}
    if set(states.values()) != {"complete"} or len(states) != len(TABLES):
        tally.fail(f"erase round {round_}: proof states {states}")
    for name in TABLES:
        left = keys_in_storage(catalog.load_table((NAMESPACE, name)).location(), {subject})
        if left:
            tally.fail(f"erase round {round_}: {subject} still stored in {name}: {left}")
    tally.erased_subjects += 1


def missing_files(policies: Path) -> tuple[int, list[str]]:
    """Every file any snapshot still in the metadata references, and those of them that do not exist."""
    catalog = embedded_catalog(policies)
    referenced: set[str] = set()
    for name in TABLES:
        table = catalog.load_table((NAMESPACE, name))
        io = table.io
        for snapshot in table.metadata.snapshots:
            referenced.add(snapshot.manifest_list)
            for manifest in snapshot.manifests(io):
                referenced.add(manifest.manifest_path)
                for entry in manifest.fetch_manifest_entry(io, discard_deleted=True):
                    referenced.add(entry.data_file.file_path)
    paths = sorted(referenced)
    return len(paths), [p for p in paths if not Path(p.removeprefix("file:").removeprefix("//")).exists()]


def writer_rows(policies: Path, committed: dict[str, list[int]]) -> dict[str, tuple[int, int, int]]:
    """Per table: (ids the writer committed, of them found exactly once, writer rows in the table)."""
    catalog = embedded_catalog(policies)
    out = {}
    for name in TABLES:
        rows = catalog.load_table((NAMESPACE, name)).scan(row_filter="user.uid == 'writer'",
                                                          selected_fields=("event_id",)).to_arrow()
        found = Counter(rows.column("event_id").to_pylist())
        ids = committed[name]
        out[name] = (len(ids), sum(1 for i in ids if found[i] == 1), rows.num_rows)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=10.0, help="how long the writer commits (default 10)")
    parser.add_argument("--keep", type=Path, help="run in this directory and keep it (default: a temporary one)")
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="tablepolicy-soak-"))
    root.mkdir(parents=True, exist_ok=True)
    policies = setup(root)
    stop = root / "stop"
    writer_log = (root / "writer.log").open("w")
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(policies), str(stop), ",".join(TABLES)],
                              stdout=writer_log, stderr=subprocess.STDOUT, text=True, cwd=ROOT,
                              env={**os.environ, "PYTHONPATH": str(ROOT)})
    tally = Tally()
    started = time.monotonic()
    end = started + args.minutes * 60
    round_ = 0
    steps = (("apply", apply_round), ("maintain", maintain_round), ("erase", erase_round))
    try:
        while time.monotonic() < end:
            round_ += 1
            for what, step in steps:
                if time.monotonic() >= end:
                    break
                began = time.monotonic()
                print(f"[{began - started:6.0f}s] round {round_}: {what}", flush=True)
                step(policies, round_, tally)
                tally.runs[what] += 1
                tally.seconds[what] = tally.seconds.get(what, 0.0) + time.monotonic() - began
    finally:
        stop.touch()
        writer.wait(timeout=600)
        writer_log.close()
    log = (root / "writer.log").read_text().splitlines()
    committed: dict[str, list[int]] = {name: [] for name in TABLES}
    retries = 0
    for line in log:
        parts = line.split()
        if parts and parts[0] == "committed":
            committed[parts[1]].append(int(parts[2]))
        elif parts and parts[0] == "retry":
            retries += 1
    if writer.returncode != 0:
        tally.fail(f"writer exit {writer.returncode}: {log[-20:]}")
    rows = writer_rows(policies, committed)
    for name, (ids, once, total) in rows.items():
        if once != ids or total != ids:
            tally.fail(f"writer rows in {name}: {ids} committed, {once} found exactly once, {total} writer rows")
    referenced, missing = missing_files(policies)
    if missing:
        tally.fail(f"{len(missing)} file(s) a snapshot references are missing: {missing[:5]}")
    last_maintain = cli("maintain", str(policies), "--dry-run", cwd=policies.parent)
    minutes = (time.monotonic() - started) / 60
    print(f"\nsoak: {minutes:.1f} min wall, writer {args.minutes:g} min, directory {root}")
    for name, (ids, once, total) in rows.items():
        print(f"  writer -> {NAMESPACE}.{name} ({TABLES[name]}): {ids} commits, {once} found exactly once, "
              f"{total} writer rows in the table")
    print(f"  writer commit retries (lost races): {retries}")
    for what, _ in steps:
        runs = tally.runs[what]
        mean = tally.seconds.get(what, 0.0) / runs if runs else 0.0
        print(f"  {what}: {runs} runs, {mean:.1f}s each on average")
    print(f"  erased subjects proven: {tally.erased_subjects}")
    print("  maintain steps: " + ", ".join(f"{k} x{v}" for k, v in sorted(tally.maintain_steps.items())))
    print(f"  files referenced by the snapshots kept: {referenced}, missing: {len(missing)}")
    print(f"  maintain --dry-run at the end: exit {last_maintain.returncode}")
    print(f"  failures: {len(tally.failures)}")
    for failure in tally.failures:
        print(f"    - {failure[:2000]}")
    return 1 if tally.failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
