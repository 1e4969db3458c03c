"""Demo privacy portal: two users of the sample rows ask to be forgotten; their requests are appended to the
request table privacy.erasure_requests in the catalog (never to a file in git). The subjects are picked from
the rows at run time, so no key value is written in this repository."""

from __future__ import annotations

import sys
from datetime import date, timedelta
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from tablepolicy.runtime.catalog.config import resolve_catalog
from tablepolicy.runtime.catalog.reader import open_catalog


def main(policies: Path) -> None:
    catalog = open_catalog(resolve_catalog(None, policies))
    users = pc.unique(catalog.load_table(("ads", "click_log")).scan(selected_fields=("user_id",)).to_arrow()
                      .column("user_id")).to_pylist()
    chosen = sorted(users)[:2]
    today = date.today()
    requests = catalog.load_table(("privacy", "erasure_requests"))
    rows = [{"id": f"REQ-DEMO-{n + 1}", "received": today - timedelta(days=2 - n), "deadline": None,
             "keys": [("user_id", user)], "status": "pending", "fingerprint": None} for n, user in enumerate(chosen)]
    requests.append(pa.Table.from_pylist(rows, schema=requests.schema().as_arrow()))
    print(f"  privacy.erasure_requests: {len(rows)} pending request(s) appended (REQ-DEMO-1, REQ-DEMO-2)")


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "policies"))
