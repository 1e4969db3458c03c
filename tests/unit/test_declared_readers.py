"""Declared readers: bad declarations are findings with file, line and fix; validate judges the declared state
and plan each change against the readers in effect (rules, replaced by a namespace's, replaced by a table's)."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from tablepolicy.compiler import codes
from tablepolicy.compiler.diagnostics import Severity
from tablepolicy.compiler.iceberg.readers import ENGINES, FEATURES, ROWS, overlaps, parse_version, support
from tablepolicy.compiler.plan.model import CatalogRef
from tablepolicy.compiler.plan.planner import make_plan
from tablepolicy.compiler.validate import validate
from tests.cli_runner import tablepolicy
from tests.memory_catalog import MemoryCatalog, applied, declared_state, project_of

TABLE = "table: ns.t\n{extra}columns:\n  - {{name: id, type: long}}\n  - {{name: s, type: string}}\n"


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / "policies" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "policies" / name).write_text(text, encoding="utf-8")
    return root / "policies"


def rules(*readers: str, extra: str = "") -> str:
    return "rules:\n" + extra + "  readers:\n" + "".join(f"    - {r}\n" for r in readers)


@pytest.mark.parametrize(("reader", "expected"), [
    ("{engine: trnio, version: '470'}",
     "policies/_rules.yaml:3:16: error TP120: rules.readers.0.engine: unknown reader engine 'trnio'\n"
     "    hint: did you mean 'trino'? Known engines: spark, duckdb, trino, athena, snowflake, bigquery, pyiceberg"),
    ("{engine: sparkle-sql, version: '1'}",
     "policies/_rules.yaml:3:16: error TP120: rules.readers.0.engine: unknown reader engine 'sparkle-sql'\n"
     "    hint: did you mean 'spark'? Known engines: spark, duckdb, trino, athena, snowflake, bigquery, pyiceberg"),
    ("{engine: hive, version: '4'}",
     "policies/_rules.yaml:3:16: error TP120: rules.readers.0.engine: unknown reader engine 'hive'\n"
     "    hint: known engines: spark, duckdb, trino, athena, snowflake, bigquery, pyiceberg"),
    ("{engine: trino, version: latest}",
     "policies/_rules.yaml:3:32: error TP121: rules.readers.0.version: reader version 'latest' is not a version\n"
     "    hint: write the oldest version in use as dotted numbers, e.g. \"3.5\", \"1.5.5\" or \"470\""),
    ("{engine: spark, version: 3.x}",
     "policies/_rules.yaml:3:32: error TP121: rules.readers.0.version: reader version '3.x' is not a version\n"
     "    hint: write the oldest version in use as dotted numbers, e.g. \"3.5\", \"1.5.5\" or \"470\""),
    ("{engine: spark, version: 3.10}",
     "policies/_rules.yaml:3:32: error TP121: rules.readers.0.version: reader version 3.1 is a number, not a "
     "version\n    hint: quote the version as written, e.g. version: \"3.10\" (YAML reads an unquoted 3.10 as the "
     "number 3.1)"),
], ids=["close name", "close to spark", "no close name", "a word", "a pattern", "a number"])
def test_a_bad_reader_is_a_finding_with_its_line_and_fix(tmp_path: Path, reader: str, expected: str) -> None:
    write(tmp_path, {"_rules.yaml": rules(reader), "ns/t.yaml": TABLE.format(extra="")})
    run = tablepolicy("validate", "policies", cwd=tmp_path)
    assert run.returncode == 1
    assert expected in run.stdout + run.stderr


def test_one_engine_twice_at_different_versions(tmp_path: Path) -> None:
    write(tmp_path, {"_rules.yaml": rules("{engine: spark, version: '3.5'}", "{engine: duckdb, version: '1.5.5'}",
                                          "{engine: spark, version: '4.0'}"),
                     "ns/_namespace.yaml": "namespace: ns\nreaders:\n  - {engine: trino, version: '470'}\n"
                                           "  - {engine: trino, version: '470'}\n",
                     "ns/t.yaml": TABLE.format(extra="")})
    run = tablepolicy("validate", "policies", cwd=tmp_path)
    assert run.returncode == 1
    assert ("policies/_rules.yaml:5:32: error TP122: reader spark is declared twice, at versions 3.5 and 4.0\n"
            "    hint: keep one entry with the oldest version in use (first declared at policies/_rules.yaml:3:7)"
            ) in run.stdout + run.stderr
    assert "_namespace.yaml" not in run.stdout + run.stderr  # the same version twice is harmless


def findings(root: Path, files: dict[str, str]) -> list[str]:
    _, diagnostics = validate(write(root, files))
    return [f"{d.location.line}:{d.location.col} {d.severity} {d.code} {d.message}" for d in diagnostics
            if d.code.startswith(("TG112", "TG113"))]


def test_validate_reports_a_declared_feature_a_reader_cannot_read_at_its_line(tmp_path: Path) -> None:
    found = findings(tmp_path, {"_rules.yaml": rules("{engine: athena, version: '3'}"),
                                "ns/t.yaml": TABLE.format(extra="format_version: 3\n")})
    assert found == ["2:17 error TG112 reader athena 3 cannot read format version 3 tables (deletion vectors, row "
                     "lineage): ns.t format_version 3 (source: Athena: querying Iceberg tables (v2 only); Athena "
                     "only creates and operates on Iceberg v2 tables)"]


@pytest.mark.parametrize(("rules_extra", "reader", "severity"), [
    ("", "{engine: athena, version: '3'}", "error"),
    ("  readers_severity: warning\n", "{engine: athena, version: '3'}", "warning"),
    ("", "{engine: athena, version: '3', severity: warning}", "warning"),
    ("  readers_severity: warning\n", "{engine: athena, version: '3', severity: error}", "error"),
], ids=["default", "rules say warning", "reader says warning", "reader says error"])
def test_the_severity_is_the_rules_or_the_readers(tmp_path: Path, rules_extra: str, reader: str,
                                                   severity: str) -> None:
    found = findings(tmp_path, {"_rules.yaml": rules(reader, extra=rules_extra),
                                "ns/t.yaml": TABLE.format(extra="format_version: 3\n")})
    assert [f.split()[1] for f in found] == [severity]


def test_unknown_is_a_warning_never_taken_as_fine(tmp_path: Path) -> None:
    found = findings(tmp_path, {"_rules.yaml": rules("{engine: trino, version: '470'}"),
                                "ns/t.yaml": TABLE.format(extra="format_version: 3\n")})
    assert found == ["2:17 warning TG113 no source says reader trino 470 can read format version 3 tables (deletion "
                     "vectors, row lineage): ns.t format_version 3 (unknown)"]


@pytest.mark.parametrize(("namespace", "table", "expected"), [
    ("", "", ["athena"]),
    ("readers: [{engine: spark, version: '3.5'}]\n", "", []),
    ("readers: [{engine: spark, version: '3.5'}]\n", "readers: [{engine: athena, version: '3'}]\n", ["athena"]),
    ("", "readers: []\n", []),
], ids=["the rules", "the namespace replaces them", "the table replaces both", "nothing else reads this table"])
def test_the_nearest_readers_list_wins(tmp_path: Path, namespace: str, table: str, expected: list[str]) -> None:
    found = findings(tmp_path, {"_rules.yaml": rules("{engine: athena, version: '3'}"),
                                "ns/_namespace.yaml": f"namespace: ns\n{namespace}",
                                "ns/t.yaml": TABLE.format(extra=f"format_version: 3\n{table}")})
    assert [f.split()[4] for f in found] == expected


def test_columns_partitions_and_write_modes_are_found_where_declared(tmp_path: Path) -> None:
    policy = ("table: ns.t\ncolumns:\n  - {name: id, type: long}\n  - {name: t, type: time}\n"
              "partition_by: ['bucket(4, id)']\nwrite_modes: {delete: merge-on-read}\n")
    found = findings(tmp_path, {"_rules.yaml": rules("{engine: athena, version: '3'}", "{engine: bigquery, "
                                                     "version: '2026.5'}"), "ns/t.yaml": policy})
    assert [f.split(" (source")[0].split(" (unknown")[0] for f in found] == [
        "4:21 error TG112 reader athena 3 cannot read time columns: ns.t column t time",
        "4:21 warning TG113 no source says reader bigquery 2026.5 can read time columns: ns.t column t time",
        "5:16 warning TG113 no source says reader bigquery 2026.5 can read bucket partitions: ns.t partition "
        "bucket(4, id)",
        "6:23 warning TG113 no source says reader bigquery 2026.5 can read position delete files (merge-on-read on "
        "format 2): ns.t write_modes.delete: merge-on-read on format 2",
    ]


def test_plan_names_the_change_a_reader_cannot_read() -> None:
    """A blocked format upgrade: the plan's finding names the change, the reader and what would work."""
    rules_text = "rules:\n  readers_severity: warning\n  readers:\n    - {engine: athena, version: '3'}\n"
    before = TABLE.format(extra="")
    after = TABLE.format(extra="format_version: 3\n")
    project = project_of(rules_text, after, files=["policies/_rules.yaml", "policies/ns/t.yaml"])
    source = MemoryCatalog.of(applied(declared_state(before)))
    result = make_plan(project, source, CatalogRef(name="lake"), today=date(2026, 1, 15))
    [finding] = [d for d in result.diagnostics if d.code == codes.TG112]
    assert (finding.severity, str(finding.location)) == (Severity.WARNING, "policies/ns/t.yaml:2:17")
    assert finding.message.startswith("this plan would upgrade format version 2 -> 3 (irreversible; readers must "
                                      "support v3): reader athena 3 cannot read format version 3 tables")
    assert finding.hint == ("instead: stay on format_version: 2; or drop athena from the readers of ns.t (declared "
                            "at policies/_rules.yaml:4:7)")
    unchanged = make_plan(project_of(rules_text, before, files=["policies/_rules.yaml", "policies/ns/t.yaml"]),
                          source, CatalogRef(name="lake"), today=date(2026, 1, 15))
    assert [d for d in unchanged.diagnostics if d.code.startswith("TG")] == []


def test_the_capability_table_is_well_formed() -> None:
    assert list(overlaps()) == []
    for row in ROWS:
        assert row.engine in ENGINES and set(row.features) <= set(FEATURES), row
        assert row.source.title and (row.source.url or row.support == "unknown"), row
    assert support("duckdb", "1.4", "format-v3").value == "unknown"  # no source covers 1.4
    assert support("spark", "3.5.6", "type-timestamp_ns").value == "no"
    assert parse_version("3.10") > parse_version("3.9")


CICD = Path(__file__).resolve().parents[2] / "docs" / "cicd.md"


def test_the_manuals_reader_table_is_the_module_rendered() -> None:
    from tablepolicy.compiler.iceberg.readers import markdown_table

    text = CICD.read_text(encoding="utf-8")
    block = text.split("<!-- readers:begin -->\n", 1)[1].split("<!-- readers:end -->", 1)[0]
    assert block == markdown_table() + "\n", ("docs/cicd.md's reader table differs from compiler/iceberg/readers.py: "
                                              "run make docs (scripts/docgen.py renders it)")


def test_plan_says_a_reader_warning_once_for_the_change_that_brings_it(tmp_path: Path) -> None:
    """With warnings, validate's finding of the declared state and the plan's finding of the change stand at one
    line: plan shows the plan's (it names the change), once."""
    write(tmp_path, {"_rules.yaml": rules("{engine: athena, version: '3'}", extra="  readers_severity: warning\n"),
                     "ns/t.yaml": TABLE.format(extra="format_version: 3\n")})
    run = tablepolicy("plan", "policies", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    said = [line for line in run.stderr.splitlines() if "TG112" in line]
    assert len(said) == 1 and said[0].startswith("policies/ns/t.yaml:2:17: warning TG112"), run.stderr


def test_health_reports_what_a_reader_already_cannot_read_in_a_live_table(tmp_path: Path) -> None:
    """A column added outside git that a declared reader cannot read: validate cannot know it, health reads the
    catalog and says it, naming the reader, the table and the column."""
    from pyiceberg.schema import Schema
    from pyiceberg.types import LongType, NestedField, StringType, TimeType

    from tests.catalog_fixtures import embedded_catalog

    policies = write(tmp_path, {"_rules.yaml": rules("{engine: spark, version: '3.5'}"),
                                "ns/t.yaml": TABLE.format(extra="")})
    assert tablepolicy("validate", "policies", cwd=tmp_path).returncode == 0  # git declares nothing spark cannot read
    catalog = embedded_catalog(policies)
    catalog.create_namespace("ns")
    catalog.create_table("ns.t", Schema(NestedField(1, "id", LongType()), NestedField(2, "s", StringType()),
                                        NestedField(3, "at", TimeType())))
    run = tablepolicy("health", "policies", cwd=tmp_path)
    assert ("policies/ns/t.yaml:3:3: error TG112: reader spark 3.5 cannot read time columns: ns.t column at time"
            in run.stderr), run.stderr
    as_json = tablepolicy("health", "policies", "--format", "json", cwd=tmp_path)
    assert "TG112: reader spark 3.5" in as_json.stderr and as_json.stdout.startswith("{")
