"""Demo data: a thousand ad clicks (one commit) and log events (five commits), appended with pyiceberg."""

from __future__ import annotations

import random
import sys
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pyarrow as pa

from tablepolicy.runtime.catalog.config import resolve_catalog
from tablepolicy.runtime.catalog.reader import open_catalog

BATCHES = 5


def main(policies: Path) -> None:
    catalog = open_catalog(resolve_catalog(None, policies))
    rng = random.Random(7)
    now = datetime(2026, 11, 22, 12, tzinfo=UTC)
    clicks = catalog.load_table(("ads", "click_log"))
    times = [now - timedelta(minutes=rng.randrange(0, 60 * 24 * 30)) for _ in range(1000)]
    clicks.append(pa.Table.from_pylist(
        [{"event_id": f"e{i:05d}", "user_id": f"u{rng.randrange(200):03d}", "clicked_at": t, "dt": t.date(),
          "campaign_id": rng.randrange(10), "ad_id": rng.randrange(100), "cost": Decimal(rng.randrange(1, 5000)) / 100,
          "device": {"os": rng.choice(["ios", "android"]), "model": None, "ip": None}, "context": None}
         for i, t in enumerate(times)],
        schema=clicks.schema().as_arrow()))
    events = catalog.load_table(("logs", "app_events"))
    rows = [{"event_time": now - timedelta(seconds=rng.randrange(86_400)), "service": rng.choice(["api", "web", "batch"]),
             "host": f"h{rng.randrange(8)}", "level": rng.choice(["INFO", "WARN", "ERROR"]), "message": "demo",
             "attributes": None, "trace": None, "tags": None} for _ in range(1000)]
    for batch in range(BATCHES):  # a streaming writer: many small commits, small files in every hour
        events.append(pa.Table.from_pylist(rows[batch::BATCHES], schema=events.schema().as_arrow()))
    for name in (("ads", "click_log"), ("logs", "app_events")):
        table = catalog.load_table(name)
        files = len(table.inspect.files())
        print(f"  {'.'.join(name)}: {table.scan().to_arrow().num_rows} rows in {files} data file(s)")


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "policies"))
