"""``health --format prometheus``: the exposition format, checked with a strict parser of the spec
(tests/prometheus_text.py; prometheus_client is not locked), byte for byte against a golden file, and through
the real CLI on tables written with pyiceberg (embedded SQLite catalog, no JVM)."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tablepolicy.cli.app import app
from tablepolicy.compiler.maintenance.actions import SECTIONS, ExpireSnapshots, RewriteDataFiles
from tablepolicy.compiler.maintenance.due import MaintenancePlan, TableMaintenance
from tablepolicy.compiler.maintenance.health import BloomCoverage, OrphanFigures
from tablepolicy.compiler.render.prometheus import render_prometheus
from tests.prometheus_text import ExpositionError, parse
from tests.unit.test_maintenance import health, written  # noqa: F401  (fixture)
from tests.unit.test_plan_cli import policies as example_policies  # noqa: F401  (fixture)

GOLDEN = Path(__file__).parents[1] / "golden" / "reports" / "health.prom"
NOW = datetime(2026, 11, 24, 6, 0, tzinfo=UTC)
HOUR_MS = 3600 * 1000


def table(name: tuple[str, ...], *, due: bool = False, **figures: object) -> TableMaintenance:
    h = health(table=name, **figures)
    actions = [RewriteDataFiles(table=name, reason="r", strategy="binpack", target_file_size=1, min_input_files=2),
               ExpireSnapshots(table=name, reason="r", older_than=NOW, retain_last=1)] if due else []
    return TableMaintenance(name, h, actions)


def plan() -> MaintenancePlan:
    newest = int(NOW.timestamp() * 1000) - 90 * 60 * 1000  # 90 minutes before NOW
    return MaintenancePlan([
        table(("shop", "t10"), due=True, data_files=40, small_files=38, data_bytes=4_000_000, rows=1000,
              snapshot_times=(newest - 48 * HOUR_MS, newest), position_delete_files=3, manifests=4,
              orphans=OrphanFigures(files=2, bytes=2048, young=1),
              bloom_filters=BloomCoverage(columns=("user_id",), files=40, bytes=4_000_000, covered_files=30,
                                          covered_bytes=3_000_000)),
        table(("shop", "t2"), data_files=1, data_bytes=10, rows=1, snapshot_times=(newest + 1500,)),
        table(("shop", "t1")),  # created, never written: no snapshot, no age
        table(('we"ird', "back\\slash"), data_files=2, data_bytes=20, rows=2, equality_delete_files=1,
              snapshot_times=(newest,)),
    ], missing=[("shop", "t3")], now=NOW)


def test_the_output_parses_and_matches_the_golden_file() -> None:
    text = render_prometheus(plan(), "lake", NOW)
    families = parse(text)
    if os.environ.get("UPDATE_GOLDEN"):
        GOLDEN.write_text(text, encoding="utf-8")
    assert text == GOLDEN.read_text(encoding="utf-8")
    assert all(f.type == "gauge" and f.help for f in families.values())
    due = families["tablepolicy_maintenance_due"]
    assert due.value(table="t10", action="rewrite_data_files") == 1
    assert due.value(table="t10", action="expire_snapshots") == 1
    assert due.value(table="t10", action="remove_orphan_files") == 0
    assert due.value(table="t2", action="rewrite_data_files") == 0
    assert len(due.samples) == 4 * len(SECTIONS)
    age = families["tablepolicy_last_snapshot_age_seconds"]
    assert age.value(table="t10") == 90 * 60 and age.value(table="t2") == 90 * 60 - 1.5
    assert not [s for s in age.samples if s[0]["table"] == "t1"]  # no snapshot: no sample, not a zero
    # only the table whose location was listed has orphan figures
    assert families["tablepolicy_orphan_bytes"].samples == [
        ({"catalog": "lake", "namespace": "shop", "table": "t10"}, 2048)]
    assert families["tablepolicy_delete_files"].value(table="t10", kind="position") == 3
    # only the table with filters on its erasure key has a coverage figure
    assert families["tablepolicy_bloom_filter_bytes"].samples == [
        ({"catalog": "lake", "namespace": "shop", "table": "t10"}, 3_000_000)]
    # label values round-trip through the escapes: backslash and double quote
    weird = families["tablepolicy_data_files"].value(table="back\\slash")
    assert weird == 2 and families["tablepolicy_data_files"].value(namespace='`we"ird`') == 2


def test_tables_are_in_natural_order_in_every_family() -> None:
    families = parse(render_prometheus(plan(), "lake", NOW))
    tables = [labels["table"] for labels, _ in families["tablepolicy_data_files"].samples]
    assert tables == ["t1", "t2", "t10", "back\\slash"]


def test_a_newline_in_a_label_value_is_escaped() -> None:
    odd = MaintenancePlan([table(("ns", "line\nfeed"))], now=NOW)
    text = render_prometheus(odd, 'cat"a\\log', NOW)
    assert 'table="line\\nfeed"' in text and 'catalog="cat\\"a\\\\log"' in text
    assert parse(text)["tablepolicy_rows"].samples[0][0] == {
        "catalog": 'cat"a\\log', "namespace": "ns", "table": "line\nfeed"}


def test_the_same_health_prints_the_same_bytes_and_nothing_for_no_table() -> None:
    assert render_prometheus(plan(), "lake", NOW) == render_prometheus(plan(), "lake", NOW)
    assert render_prometheus(MaintenancePlan([], now=NOW), "lake", NOW) == ""


BAD = [  # (exposition text, what the parser says): the parser must be able to fail
    ("m 1", "must end with a line feed"),
    ("m{a=\"x\"} 1\nm{a=\"x\"} 2\n", "second sample"),
    ("m 1\nn 1\nm 2\n", "one group"),
    ("m 1\n# TYPE m gauge\n", "after its samples"),
    ("# TYPE m gauge\n# TYPE m gauge\n", "twice"),
    ("# TYPE m meter\n", "TYPE needs one of"),
    ("# HELP m a\n# HELP m b\n", "second HELP"),
    ("# HELP m a\\tb\n", "invalid escape"),
    ('m{a="x\\t"} 1\n', "invalid escape"),
    ('m{a="x} 1\n', "unterminated"),
    ('m{a="x"b="y"} 1\n', "expected ','"),
    ('m{1a="x"} 1\n', "bad label name"),
    ('m{__name__="x"} 1\n', "reserved"),
    ('m{a="x",a="y"} 1\n', "twice"),
    ("m one\n", "not a number"),
    ("m 1 2.5\n", "bad timestamp"),
    ("m 1 2 3\n", "optional timestamp"),
    ("9m 1\n", "bad metric name"),
    ("m{a=\"x\"}1\n", "expected a space"),
    ("m 1\r\n", "carriage return"),
]


@pytest.mark.parametrize(("text", "message"), BAD, ids=[m for _, m in BAD])
def test_the_parser_refuses_what_the_spec_forbids(text: str, message: str) -> None:
    with pytest.raises(ExpositionError, match=message):
        parse(text)


def test_the_parser_reads_what_the_spec_allows() -> None:
    families = parse('# a comment\n\n# HELP m says \\\\ and \\n\n# TYPE m gauge\nm{a="\\"",} NaN\nm +Inf 123\n'
                     "n -1.5e3\n")
    assert families["m"].help == "says \\ and \n" and families["m"].samples[0][0] == {"a": '"'}
    assert families["n"].samples == [({}, -1500.0)]


def test_health_through_the_cli(written: Path) -> None:  # noqa: F811
    """The examples in an embedded SQLite catalog, logs.app_events written in five commits: the figures are the
    JSON view's, every table has its series, and stdout is nothing but the exposition (no catalog header)."""
    import json

    runner = CliRunner()
    result = runner.invoke(app, ["health", str(written), "--format", "prometheus"])
    assert result.exit_code == 0, result.output
    families = parse(result.stdout)
    document = json.loads(runner.invoke(app, ["health", str(written), "--format", "json"]).stdout)
    for t in document["tables"]:
        labels = {"namespace": t["table"][0], "table": t["table"][1]}
        assert families["tablepolicy_data_files"].value(**labels) == t["health"]["data_files"]
        assert families["tablepolicy_data_bytes"].value(**labels) == t["health"]["data_bytes"]
        assert families["tablepolicy_snapshots"].value(**labels) == len(t["health"]["snapshot_times"])
        due = {a["action"] for a in t["actions"]}
        assert {a for a in SECTIONS if families["tablepolicy_maintenance_due"].value(**labels, action=a)} == due
    assert families["tablepolicy_data_files"].value(table="app_events") == 5
    # present for a table with snapshots; its value, from the run's own clock, is checked with a fixed now by the
    # golden file (test_the_output_parses_and_matches_the_golden_file), not here
    assert families["tablepolicy_last_snapshot_age_seconds"].value(table="app_events") >= 0
    assert {labels["catalog"] for labels, _ in families["tablepolicy_rows"].samples} == {"lake"}
