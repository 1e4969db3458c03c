"""The engine-free expiry on object storage (the local S3 server): through the catalog's S3 properties it
removes what retain_last and the refs do not keep and deletes exactly the objects only the expired snapshots
reached; every remaining snapshot still reads. (Its equivalence with Spark's procedure is shown on disk:
tests/integration/test_expiry_equivalence.py.)"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyarrow as pa
import pytest
from pyiceberg.table import Table

from tablepolicy.runtime.erasure.leftovers import reached
from tablepolicy.runtime.erasure.survey import table_reach
from tablepolicy.runtime.expiry import expire
from tablepolicy.runtime.orphans import stored_files
from tests.integration.test_orphans_s3 import BUCKET, SCHEMA, make_table
from tests.s3server import S3Server, s3_server


@pytest.fixture(scope="module")
def s3() -> Iterator[S3Server]:
    with s3_server() as server:
        server.bucket(BUCKET)
        yield server


def listed(table: Table) -> set[str]:
    return set(stored_files(table.location(), table.io.properties))


def test_expiry_on_s3_deletes_what_only_the_expired_snapshots_reached(s3: S3Server, tmp_path: Path) -> None:
    catalog, table = make_table(s3, tmp_path, appends=3)
    table.overwrite(pa.table({"id": [7], "msg": ["y"]}, schema=SCHEMA.as_arrow()))  # the appends' files: old only
    table = catalog.load_table("logs.events")
    history = [s.snapshot_id for s in sorted(table.metadata.snapshots, key=lambda s: s.timestamp_ms)]
    table.manage_snapshots().create_tag(history[0], "first").commit()
    table = catalog.load_table("logs.events")
    before, reach = listed(table), table_reach(table)
    later = datetime.now(UTC) + timedelta(days=1)

    expired = expire("logs.events", lambda: catalog.load_table("logs.events"), older_than=later, retain_last=1,
                     clock=lambda: later)

    table = catalog.load_table("logs.events")
    kept = {history[0], history[-1]}  # the tag's and main's head
    assert {s.snapshot_id for s in table.metadata.snapshots} == kept
    assert set(expired.snapshots) == set(history) - kept
    only_expired = reach.reached_by(set(history) - kept) - reach.reached_by(kept)
    assert only_expired and before - listed(table) == only_expired == set(expired.deleted)
    assert reached(table_reach(table)) <= listed(table)
    assert table.scan(snapshot_id=history[0]).to_arrow().num_rows == 1
    assert table.scan().to_arrow()["id"].to_pylist() == [7]
