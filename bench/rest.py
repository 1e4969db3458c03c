"""The REST catalog's overhead per action: `tablepolicy plan` of TABLES tables, `maintain` (compaction and expiry
through Spark) and `erase` of one table, on SeaweedFS's Iceberg REST catalog with its S3 store (tests/seaweed.py)
against the same tables on the embedded-style SQLite catalog with an S3 warehouse on moto (tests/s3server.py), side
by side in one run. Both stores are S3 servers on 127.0.0.1: what differs is the catalog (REST calls with OAuth2
against SQL queries on a local file) and the S3 server.

Each command is its own CLI process (interpreter start, and for maintain Spark's start, included in the wall
time); maintain's and erase's own step times come from their JSON reports. Both sides are checked to end in the
same state (rows left, erased rows gone).

Run: .venv/bin/python bench/rest.py [TABLES]   (default 100; a few minutes on 2 cores)
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.integration.erasure_data import ERASED, fill, policy, requests_yaml  # noqa: E402
from tests.s3server import s3_server  # noqa: E402
from tests.seaweed import seaweed_server  # noqa: E402

CLI = [sys.executable, "-c", "from tablepolicy.cli.app import main; main()"]
NAME = "bench"
TABLE = """table: fleet.t{i:03d}
columns:
  - {{name: id, type: long, required: true}}
  - {{name: name, type: string}}
properties: {{commit.retry.num-retries: '4'}}
"""
MAINTAINED = """table: fleet.busy
columns:
  - {name: id, type: long}
  - {name: note, type: string}
lifecycle:
  snapshots: {max_age: 1s, min_keep: 1}
  compaction: {min_input_files: 5, target_file_size: 128MB}
"""


@dataclass
class Side:
    label: str
    props: dict[str, str]
    wall: dict[str, float] = field(default_factory=dict)
    steps: dict[str, float] = field(default_factory=dict)
    end: dict[str, object] = field(default_factory=dict)


def cli(root: Path, *args: str) -> tuple[float, str]:
    started = time.perf_counter()
    env = {**os.environ, "PYICEBERG_HOME": str(root), "HOME": str(root), "PYTHONPATH": str(ROOT)}
    done = subprocess.run([*CLI, *args, "--catalog", NAME], cwd=root, capture_output=True, text=True, timeout=1800,
                          check=False, env=env)
    elapsed = time.perf_counter() - started
    if done.returncode not in (0, 2):
        raise RuntimeError(f"{args}: exit {done.returncode}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    return elapsed, done.stdout


def catalog(side: Side) -> Any:
    from pyiceberg.catalog import load_catalog

    return load_catalog(NAME, **side.props)


def run_side(side: Side, root: Path, tables: int) -> None:
    (root / ".pyiceberg.yaml").write_text(yaml.safe_dump({"catalog": {NAME: side.props}}))
    fleet = root / "policies" / "fleet"
    fleet.mkdir(parents=True)
    for i in range(tables):
        (fleet / f"t{i:03d}.yaml").write_text(TABLE.format(i=i))
    (fleet / "busy.yaml").write_text(MAINTAINED)
    (root / "policies" / "privacy").mkdir()
    (root / "policies" / "privacy" / "subjects.yaml").write_text(policy("subjects", "copy-on-write"))
    side.wall["apply (create)"], _ = cli(root, "apply", "policies", "--auto-approve")
    side.wall[f"plan of {tables + 2} tables"], out = cli(root, "plan", "policies", "--detailed-exitcode")
    assert "no changes" in out.lower(), out[-500:]

    busy = catalog(side).load_table("fleet.busy")
    for i in range(8):
        busy.append(pa.Table.from_pylist([{"id": i, "note": f"n{i}"}], schema=busy.schema().as_arrow()))
    time.sleep(1.5)  # every snapshot but the newest older than the declared 1s
    report = root / "maintain.json"
    side.wall["maintain"], _ = cli(root, "maintain", "policies", "--table", "fleet.busy", "--json-report", str(report))
    for step in json.loads(report.read_text())["tables"][0]["steps"]:
        side.steps[step["action"]] = step["seconds"]

    fill(catalog(side).load_table("privacy.subjects"))
    requests, proof = root / "requests.yaml", root / "proof.json"
    requests.write_text(requests_yaml())
    side.wall["erase"], _ = cli(root, "erase", "policies", "--requests", str(requests), "--proof", str(proof))
    side.steps["erase"] = json.loads(proof.read_text())["tables"][0]["seconds"]  # the table's erasure itself
    rows = catalog(side).load_table("privacy.subjects").scan().to_arrow().to_pylist()
    side.end = {"busy rows": len(catalog(side).load_table("fleet.busy").scan().to_arrow()),
                "subject rows": len(rows), "erased keys left": sum(r["user"]["uid"] in ERASED.values() for r in rows),
                "proof complete": json.loads(proof.read_text())["complete"]}


@contextlib.contextmanager
def sides(base: Path) -> Iterator[tuple[Side, Side]]:
    with seaweed_server() as rest, s3_server() as moto:
        moto.bucket("bench")
        sql = {"type": "sql", "uri": f"sqlite:///{base / 'sql' / 'catalog.db'}", "warehouse": "s3://bench/wh",
               **moto.pyiceberg_properties()}
        yield Side("REST (SeaweedFS)", rest.catalog_properties()), Side("SQLite + S3 (moto)", sql)


def main() -> None:
    tables = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        with sides(base) as (rest, sql):
            for side, folder in ((rest, "rest"), (sql, "sql")):
                (base / folder).mkdir(exist_ok=True)
                run_side(side, base / folder, tables)
    assert rest.end == sql.end, (rest.end, sql.end)
    print(f"{'':28} {rest.label:>18} {sql.label:>20} {'ratio':>7}")
    for key in rest.wall:
        r, s = rest.wall[key], sql.wall[key]
        print(f"{key + ' (wall s)':28} {r:18.2f} {s:20.2f} {r / s:7.2f}")
    for key in rest.steps:
        r, s = rest.steps[key], sql.steps.get(key, 0.0)
        print(f"{key + ' (step s)':28} {r:18.2f} {s:20.2f} {(r / s if s else float('nan')):7.2f}")
    print("end state (both sides):", rest.end)


if __name__ == "__main__":
    main()
