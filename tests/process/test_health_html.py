"""The HTML health report: one self-contained page, rendered for real in headless Chromium."""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pytest
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import IdentityTransform
from pyiceberg.types import LongType, NestedField, StringType

from tablepolicy.compiler.maintenance.actions import RewriteDataFiles
from tablepolicy.compiler.render.health_html import TableReport, render_health_html
from tablepolicy.runtime.health import read_health

NOW = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--hide-scrollbars"]


@pytest.fixture
def report(tmp_path: Path) -> str:
    catalog = SqlCatalog("lake", uri=f"sqlite:///{tmp_path / 'catalog.db'}", warehouse=(tmp_path / "wh").as_uri())
    catalog.create_namespace("logs")
    schema = Schema(NestedField(1, "id", LongType()), NestedField(2, "region", StringType()))
    spec = PartitionSpec(PartitionField(source_id=2, field_id=1000, transform=IdentityTransform(), name="region"))
    table = catalog.create_table("logs.app_events", schema=schema, partition_spec=spec)
    arrow = schema.as_arrow()
    for i in range(6):  # six small appends, each touching both partitions
        table.append(pa.table({"id": [i, i + 100], "region": ["eu", "us" if i % 2 else "eu"]}, schema=arrow))
    table.manage_snapshots().create_tag(table.metadata.snapshots[2].snapshot_id, "audit-2026").commit()
    health = read_health(("logs", "app_events"), catalog.load_table("logs.app_events"))
    due = [RewriteDataFiles(table=("logs", "app_events"), strategy="binpack", target_file_size=health.target_file_size,
                            min_input_files=5, reason=f"{health.small_files} small data files in region=eu <&>")]
    empty = read_health(("logs", "empty"), catalog.create_table("logs.empty", schema=schema))
    return render_health_html([TableReport(health, due), TableReport(empty, ())], "catalog 'lake' (sql)", NOW)


def test_page_is_self_contained_and_escaped(report: str) -> None:
    assert not re.search(r"""(src|href)=["']?(https?:|//)""", report), "nothing may be fetched at view time"
    assert "region=eu &lt;&amp;&gt;" in report and "<&>" not in report
    assert report.count('<section class="card"') == 2
    assert "audit-2026" in report  # the tag is marked on the snapshot timeline
    assert "Data file sizes" in report and "Small files per partition" in report and "nothing due" in report


def test_headless_chromium_renders_the_page(report: str, tmp_path: Path) -> None:
    chromium = shutil.which("chromium")
    assert chromium, "Debian's chromium is installed by `make dev` (scripts/system-deps.sh dev; make test runs it)"
    page, shot = tmp_path / "health.html", tmp_path / "health.png"
    page.write_text(report, encoding="utf-8")
    profile = tmp_path / "profile"
    dom = subprocess.run([chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--dump-dom", page.as_uri()],
                         capture_output=True, text=True, timeout=120)
    assert "<h1>Table health</h1>" in dom.stdout and "logs.app_events" in dom.stdout, dom.stderr[-2000:]
    subprocess.run([chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", f"--screenshot={shot}",
                    "--window-size=1280,1400", page.as_uri()], capture_output=True, timeout=120, check=True)
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", data[16:24]) == (1280, 1400)
    assert len(data) > 20_000  # a page of text and charts, not a blank or an error tab
    keep = Path(__file__).resolve().parents[2] / ".tablepolicy" / "health-report.png"
    keep.parent.mkdir(exist_ok=True)
    shutil.copy(shot, keep)  # for a person to look at after the run


def test_a_table_without_snapshots_says_so(report: str) -> None:
    assert "no snapshots" in report and "no data files" in report
