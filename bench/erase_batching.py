"""One rewrite serves many requests (issue 35): thirty requests arriving one a day, erase run daily, 30-day SLA.

A table of ROWS rows (default 2,000,000) in ten files, every file holding rows of every user (user ids spread over
the table, the usual case), so every file holds some key of every request. Thirty requests, one a day, each of 30
keys (900 users). Three copies of the same table, each in its own embedded catalog, built identically:

- single: one run erasing all thirty requests' keys at once (the floor);
- batching: ``lifecycle.erasure.batch_margin: 1d``, erase run every simulated day until every request is done;
- daily: no margin (the behaviour before batching), erase run every simulated day.

Simulated days come from fixed dates (each request's received date and each run's instant), never the wall
clock. Bytes written: the parquet files each run added under the table location (listed before and after every
run); time: the wall time of the erase calls. Every run's result is checked: the erased users' rows are gone, every
other row is kept, and no request was erased after its deadline.
Target: batching <= 1.5x single in bytes and time. Run: .venv/bin/python bench/erase_batching.py [ROWS]
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import tablepolicy  # noqa: E402
from tablepolicy.compiler.desired import desired_states  # noqa: E402
from tablepolicy.compiler.validate import validate  # noqa: E402
from tests.catalog_fixtures import create_like, embedded_catalog  # noqa: E402

POLICY = """table: bench.events
columns:
  - {{name: event_id, type: long}}
  - {{name: user_id, type: string}}
  - {{name: payload, type: string}}
lifecycle:
  erasure: {{key: [user_id], within: 30d{margin}}}
"""
FILES = 10
USERS = 9_000
REQUESTS = 30
KEYS = 30  # per request
SLA_DAYS = 30
DAY0 = date(2026, 1, 1)


@dataclass
class Scenario:
    name: str
    margin: str
    root: Path = field(default_factory=lambda: Path(tempfile.mkdtemp()))
    bytes_written: int = 0
    seconds: float = 0.0
    runs: int = 0  # runs that rewrote the table
    erased_on: dict[str, date] = field(default_factory=dict)

    @property
    def policies(self) -> Path:
        return self.root / "policies"


def user(n: int) -> str:
    return f"user{n:05d}"


def requests_upto(day: int) -> str:
    """The requests received on days 0..day as JSON lines: day d's file of 30 subjects (REQ-dd-kk, user d*30+k)."""
    return "".join(json.dumps({"id": f"REQ-{d:02d}-{k:02d}", "received": (DAY0 + timedelta(days=d)).isoformat(),
                               "keys": {"user_id": user(d * KEYS + k)}}) + "\n"
                   for d in range(day + 1) for k in range(KEYS))


def build(scenario: Scenario, rows: int) -> None:
    scenario.policies.mkdir(parents=True)
    (scenario.policies / "events.yaml").write_text(POLICY.format(margin=scenario.margin))
    project, _ = validate(scenario.policies)
    catalog = embedded_catalog(scenario.policies)
    create_like(catalog, desired_states(project)[0])
    table = catalog.load_table("bench.events")
    per_file = rows // FILES
    for f in range(FILES):  # one commit, one file each; user ids spread so that every file holds every user
        numbers = range(f * per_file, (f + 1) * per_file)
        table.append(pa.table({
            "event_id": pa.array(numbers, pa.int64()),
            "user_id": pa.array([user((i * 7919) % USERS) for i in numbers], pa.string()),
            "payload": pa.array([f"event {i} of a session, some bytes to rewrite" for i in numbers], pa.string()),
        }, schema=table.schema().as_arrow()))


def data_files(scenario: Scenario) -> dict[Path, int]:
    return {p: p.stat().st_size for p in (scenario.root / ".lake").rglob("*.parquet")}


def erase_on(scenario: Scenario, day: int) -> None:
    requests = scenario.root / "requests.jsonl"  # outside any git work tree
    requests.write_text(requests_upto(min(day, REQUESTS - 1)))
    before = data_files(scenario)
    started = time.perf_counter()
    outcome = tablepolicy.erase(scenario.policies, requests=requests,
                                now=datetime.combine(DAY0 + timedelta(days=day), datetime.min.time(), UTC)
                                + timedelta(hours=12))
    scenario.seconds += time.perf_counter() - started
    assert outcome.complete, [t.proof.error for t in outcome.tables]
    after = data_files(scenario)
    scenario.bytes_written += sum(size for path, size in after.items() if path not in before)
    if outcome.tables:
        scenario.runs += 1
    for table in outcome.tables:
        for entry in table.entries:
            scenario.erased_on.setdefault(entry.request, DAY0 + timedelta(days=day))


def check(scenario: Scenario, rows: int) -> None:
    catalog = embedded_catalog(scenario.policies)
    users = catalog.load_table("bench.events").scan(selected_fields=("user_id",)).to_arrow().column("user_id")
    erased = {user(n) for n in range(REQUESTS * KEYS)}
    kept = sum(1 for i in range(rows // FILES * FILES) if user((i * 7919) % USERS) not in erased)
    assert not erased & set(pc.unique(users).to_pylist()), f"{scenario.name}: an erased user's rows remain"
    assert len(users) == kept, f"{scenario.name}: {len(users)} rows kept, expected {kept}"
    late = [r for r, day in scenario.erased_on.items()
            if day > DAY0 + timedelta(days=int(r[4:6]) + SLA_DAYS)]
    assert len(scenario.erased_on) == REQUESTS * KEYS and not late, (scenario.name, late)


def main() -> None:
    rows = int(sys.argv[1]) if len(sys.argv) > 1 else 2_000_000
    single, batching, daily = Scenario("single", ""), Scenario("batching", ", batch_margin: 1d"), \
        Scenario("daily", "")
    for scenario in (single, batching, daily):
        build(scenario, rows)
    warm = Scenario("warm-up", "")  # imports and first reads paid before anything is measured
    build(warm, FILES * 1_000)
    erase_on(warm, REQUESTS - 1)
    stored = sum(data_files(single).values())
    print(f"{rows:,} rows in {FILES} files, every file holding keys of every request; {REQUESTS} requests one a "
          f"day ({KEYS} keys each), {SLA_DAYS}-day SLA; {stored / 1e6:.1f} MB of parquet")
    erase_on(single, REQUESTS - 1)  # every request received: one run of all keys
    for day in range(REQUESTS + SLA_DAYS):
        erase_on(batching, day)
        if day < REQUESTS:
            erase_on(daily, day)
        if len(batching.erased_on) == REQUESTS * KEYS and day >= REQUESTS:
            break
    for scenario in (single, batching, daily):
        check(scenario, rows)
    print(f"{'':10} {'rewrites':>8} {'MB written':>11} {'seconds':>8} {'x single (bytes, time)':>24}")
    for scenario in (single, batching, daily):
        print(f"{scenario.name:10} {scenario.runs:>8} {scenario.bytes_written / 1e6:>11.1f} {scenario.seconds:>8.1f} "
              f"{scenario.bytes_written / single.bytes_written:>12.2f}x {scenario.seconds / single.seconds:>9.2f}x")
    print("no request late: every request erased on or before received + 30 days (checked for each scenario)")


if __name__ == "__main__":
    main()
