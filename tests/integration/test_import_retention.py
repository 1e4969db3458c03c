"""Import round trip on a table made by hand with Spark DDL; retention estimates from real metadata."""

from __future__ import annotations

from datetime import date

import pytest

from tablepolicy.compiler.importer import policy_yaml
from tests.integration.conftest import Lake
from tests.integration.evolve import converge, plan

pytestmark = pytest.mark.spark
TODAY = date(2026, 11, 22)  # the plans' day (the retention cutoff is its midnight), never the clock's


def test_import_of_a_hand_made_table_plans_no_changes(lake: Lake) -> None:
    lake.spark.sql("CREATE NAMESPACE IF NOT EXISTS lake.hand")
    lake.spark.sql("""
        CREATE TABLE lake.hand.orders (
          id BIGINT NOT NULL COMMENT 'order id',
          ts TIMESTAMP_NTZ,
          placed TIMESTAMP,
          amount DECIMAL(12,2),
          tags ARRAY<STRING>,
          attrs MAP<STRING, INT>,
          buyer STRUCT<name: STRING, address: STRUCT<city: STRING, zip: STRING>> COMMENT 'who',
          `odd name` STRING)
        USING iceberg
        PARTITIONED BY (bucket(4, id), months(ts), truncate(3, `odd name`))
        COMMENT 'made by hand'
        TBLPROPERTIES ('write.delete.mode'='merge-on-read', 'history.expire.min-snapshots-to-keep'='3',
                       'history.expire.max-snapshot-age-ms'='432000000', 'custom.flag'='on')""")
    lake.spark.sql("ALTER TABLE lake.hand.orders WRITE ORDERED BY placed DESC NULLS FIRST, id")
    lake.spark.sql("ALTER TABLE lake.hand.orders SET IDENTIFIER FIELDS id")
    current = lake.reader().table(("hand", "orders"))
    assert current is not None
    text = policy_yaml(current.state)
    assert "{name: ts, type: timestamp}" in text and "{name: placed, type: timestamptz}" in text
    assert "snapshots: {max_age: 5d, min_keep: 3}" in text
    assert "- truncate(3, `odd name`)" in text
    again = plan(lake, text)
    assert again.plan.changes == [], [c.summary for c in again.plan.changes]


def test_retention_tightening_is_estimated_from_metadata(lake: Lake) -> None:
    base = """
table: keep.events
columns:
  - {name: id, type: long}
  - {name: dt, type: date}
lifecycle:
  retention: {column: dt, keep: 20000d}
"""
    converge(lake, base)
    for values in ("(1, DATE'2020-01-01'), (2, DATE'2020-01-02')",   # wholly older than the cutoff
                   "(3, DATE'2020-06-01')",                           # wholly older
                   "(4, DATE'2020-01-01'), (5, DATE'2026-11-20')",   # straddles the cutoff
                   "(6, DATE'2026-11-21'), (7, DATE'2026-11-21')"):  # wholly newer
        # one data file per batch, so the file-level bounds are the batch's
        lake.spark.sql(f"SELECT * FROM VALUES {values} AS t(id, dt)").coalesce(1).writeTo("lake.keep.events").append()
    result = plan(lake, base.replace("20000d", "400d"), today=TODAY)
    [change] = result.plan.changes
    assert change.action == "tighten_retention" and str(change.safety) == "destructive"
    estimate = change.estimate  # type: ignore[union-attr]
    assert estimate is not None
    assert (estimate.files, estimate.rows, estimate.partial_files, estimate.rows_upper) == (2, 3, 1, 5)
    assert estimate.bytes > 0
    assert "2 file(s), 3 row(s)" in change.summary
    assert [b.approval for b in result.plan.blocked] == ["tighten_retention"]
    loosen = plan(lake, base.replace("20000d", "30000d"), today=TODAY)
    assert [(c.action, str(c.safety)) for c in loosen.plan.changes] == [("set_properties", "safe")]
