"""What each reader of a lake can read: one table, per engine and version range, each row with its source.

A lake is written by one engine and read by many. ``readers:`` in the org rules (narrowed by a namespace or a
table) names the engines that read the tables and the oldest version in use; the checks look each feature a
table uses up here. A feature is a format version, a type, a kind of delete file, column default values, a
partition transform or a name rule. The answer is ``yes``, ``no`` or ``unknown``: unknown is what no source
says, and it is reported as such, never taken as fine.

>>> support("duckdb", "1.5.5", "deletion-vectors").value
'yes'
>>> support("athena", "3", "format-v3").value
'no'
>>> support("trino", "470", "type-variant").value
'unknown'

Versions are dotted numbers, compared number by number (``3.5`` < ``3.10``); Trino's are one number (``470``);
Athena's is its engine version (``3``); Snowflake and BigQuery, which have no versions a user picks, take the
release month as ``YYYY.M`` (``2026.5``). ``spark`` is Spark with the Iceberg 1.10 runtime for its version.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

Support = Literal["yes", "no", "unknown"]
Version = tuple[int, ...]
_VERSION = re.compile(r"[0-9]{1,6}(\.[0-9]{1,6}){0,3}")  # ASCII digits: Python's \d also takes ٣


class VersionError(ValueError):
    """A reader version that is no version (``latest``, ``3.x``, ``v470``)."""


def parse_version(text: str) -> Version:
    """``"3.5"`` -> ``(3, 5)``; dotted whole numbers, at most four parts."""
    if not _VERSION.fullmatch(text):
        raise VersionError(f"'{text}' is not a version")
    return tuple(int(part) for part in text.split("."))


def _key(version: Version) -> Version:
    return version + (0,) * (4 - len(version))


@dataclass(frozen=True)
class Engine:
    name: str
    title: str  # as the README names it
    example: str  # a version as written in readers:


ENGINES: dict[str, Engine] = {e.name: e for e in (
    Engine("spark", "Spark + Iceberg 1.10 runtime", "3.5"),
    Engine("duckdb", "DuckDB iceberg extension", "1.5.5"),
    Engine("trino", "Trino Iceberg connector", "470"),
    Engine("athena", "Amazon Athena", "3"),
    Engine("snowflake", "Snowflake", "2026.5"),
    Engine("bigquery", "BigQuery (BigLake external tables)", "2026.5"),
    Engine("pyiceberg", "PyIceberg", "0.12"),
)}


@dataclass(frozen=True)
class Feature:
    """Something a table can use that a reader may not read; ``instead``: what would work for such a reader."""

    key: str
    group: str  # format, type, deletes, defaults, transform, names
    what: str  # as a finding words it: "format version 3 tables"
    instead: str


FEATURES: dict[str, Feature] = {f.key: f for f in (
    Feature("format-v1", "format", "format version 1 tables", "format_version: 2"),
    Feature("format-v2", "format", "format version 2 tables", "format_version: 1"),
    Feature("format-v3", "format", "format version 3 tables (deletion vectors, row lineage)",
            "stay on format_version: 2"),
    Feature("type-time", "type", "time columns", "a long of microseconds since midnight, or a string"),
    Feature("type-uuid", "type", "uuid columns", "a string column"),
    Feature("type-fixed", "type", "fixed[N] columns", "a binary column"),
    Feature("type-timestamp_ns", "type", "timestamp_ns columns", "timestamp (microseconds)"),
    Feature("type-timestamptz_ns", "type", "timestamptz_ns columns", "timestamptz (microseconds)"),
    Feature("type-variant", "type", "variant columns", "a string of JSON"),
    Feature("type-geometry", "type", "geometry columns", "binary WKB"),
    Feature("type-geography", "type", "geography columns", "binary WKB"),
    Feature("type-unknown", "type", "unknown-typed columns", "a typed, optional column"),
    Feature("position-deletes", "deletes", "position delete files (merge-on-read on format 2)",
            "copy-on-write (write_modes: {delete: copy-on-write, update: copy-on-write, merge: copy-on-write})"),
    Feature("equality-deletes", "deletes", "equality delete files (written by Flink and other streaming writers)",
            "compact the table (rewrite_data_files with delete-file-threshold) or have the writer use "
            "position deletes"),
    Feature("deletion-vectors", "deletes", "deletion vectors (merge-on-read on format 3)",
            "copy-on-write, or stay on format_version: 2"),
    Feature("default-values", "defaults", "column default values (initial-default, format 3)",
            "add the column without a default and backfill it"),
    Feature("transform-bucket", "transform", "bucket partitions", "identity or truncate partitions"),
    Feature("transform-truncate", "transform", "truncate partitions", "identity partitions"),
    Feature("transform-time", "transform", "year, month, day and hour partitions", "identity partitions on a date"),
    Feature("transform-void", "transform", "void partition fields", "drop the field from the spec"),
    Feature("names-case-only", "names", "names that differ only by case",
            "rename one of them (case_sensitive: false)"),
)}


@dataclass(frozen=True)
class Source:
    """Where a row comes from: a page of the engine's documentation or release notes, or a test of this
    repository run against the real engine (``tests/...``)."""

    title: str
    url: str


DUCKDB_DOCS = Source("DuckDB iceberg extension", "https://duckdb.org/docs/stable/core_extensions/iceberg/overview")
DUCKDB_TEST = Source("tested: DuckDB 1.5.5 reads what pyiceberg and Spark read",
                     "tests/integration/test_duckdb_reads.py")
DUCKDB_SPARK_TEST = Source("tested: DuckDB 1.5.5 on tables Spark writes", "tests/integration/test_readers_spark.py")
DUCKDB_OBSERVED = Source("observed: DuckDB 1.5.5 on hand-made v3 tables (research run for issue 39)",
                         "https://duckdb.org/docs/stable/core_extensions/iceberg/overview")
SPARK_TEST = Source("tested: Spark 3.5 + Iceberg 1.10.2 runtime", "tests/integration/test_readers_spark.py")
ICEBERG_ENGINES = Source("Iceberg multi-engine support (1.10 ships Spark 3.5 and 4.0 runtimes)",
                         "https://iceberg.apache.org/multi-engine-support/")
TRINO_DOCS = Source("Trino Iceberg connector", "https://trino.io/docs/current/connector/iceberg.html")
TRINO_V3 = Source("Trino v3 work (not released as of this table)", "https://github.com/trinodb/trino/pull/24882")
ATHENA_DOCS = Source("Athena: querying Iceberg tables (v2 only)",
                     "https://docs.aws.amazon.com/athena/latest/ug/querying-iceberg.html")
ATHENA_TYPES = Source("Athena: supported Iceberg data types",
                      "https://docs.aws.amazon.com/athena/latest/ug/querying-iceberg-supported-data-types.html")
SNOWFLAKE_V3 = Source("Snowflake: Iceberg v3 GA, 2026-05-07",
                      "https://docs.snowflake.com/en/release-notes/2026/other/2026-05-07-iceberg-v3-ga")
BIGQUERY_DOCS = Source("BigQuery: Iceberg external tables (v2)", "https://cloud.google.com/bigquery/docs/iceberg-external-tables")
PYICEBERG_DV = Source("pyiceberg: reading deletion vectors", "https://github.com/apache/iceberg-python/issues/1549")
PYICEBERG_OBSERVED = Source("observed: pyiceberg 0.12 (research run for issue 39)",
                            "https://py.iceberg.apache.org/")
PYICEBERG_TEST = Source("tested: pyiceberg 0.12 reads what Spark writes", "tests/integration/test_readers_spark.py")


@dataclass(frozen=True)
class Row:
    """What ``engine`` at versions ``since`` (inclusive) to ``until`` (exclusive; None: every later one) can
    read of ``features``."""

    engine: str
    since: Version
    until: Version | None
    features: tuple[str, ...]
    support: Support
    source: Source
    note: str = ""

    def covers(self, version: Version) -> bool:
        return _key(self.since) <= _key(version) and (self.until is None or _key(version) < _key(self.until))

    @property
    def versions(self) -> str:
        since = ".".join(map(str, self.since))
        return f">= {since}" if self.until is None else f"{since} to < {'.'.join(map(str, self.until))}"


def _row(engine: str, since: str, until: str | None, features: str, support: Support, source: Source,
         note: str = "") -> Row:
    return Row(engine, parse_version(since), parse_version(until) if until else None, tuple(features.split()),
               support, source, note)


_TIME = "transform-time"
_ALL_TRANSFORMS = f"transform-bucket transform-truncate {_TIME}"
_PLAIN_TYPES = "type-time type-uuid type-fixed"

ROWS: tuple[Row, ...] = (
    # Spark + Iceberg 1.10 runtime. Spark 3.5: what this repository's tests run against the real engine.
    _row("spark", "3.5", "4.0", f"format-v1 format-v2 format-v3 position-deletes deletion-vectors {_ALL_TRANSFORMS} "
         "type-uuid type-fixed", "yes", SPARK_TEST, "uuid reads as string, fixed as binary"),
    _row("spark", "3.5", "4.0", "type-time type-timestamp_ns type-timestamptz_ns", "no", SPARK_TEST,
         "Cannot convert unknown type to Spark"),
    _row("spark", "3.5", "4.0", "names-case-only", "no", SPARK_TEST,
         "SELECT * reads, a query naming either column is AMBIGUOUS_REFERENCE; DDL: COLUMN_ALREADY_EXISTS"),
    _row("spark", "4.0", None, "format-v1 format-v2", "yes", ICEBERG_ENGINES),
    # DuckDB's iceberg extension: 1.5.5 from PyPI, run here.
    _row("duckdb", "1.5.5", None, f"format-v1 format-v2 format-v3 position-deletes deletion-vectors {_PLAIN_TYPES} "
         f"{_ALL_TRANSFORMS}", "yes", DUCKDB_TEST),
    _row("duckdb", "1.5.5", None, "type-timestamp_ns type-geometry equality-deletes default-values", "yes",
         DUCKDB_OBSERVED),
    _row("duckdb", "1.5.5", None, "type-geography type-unknown type-variant", "no", DUCKDB_OBSERVED,
         "geography: Not implemented; unknown: unrecognized type; variant reads as null"),
    _row("duckdb", "1.5.5", None, "type-timestamptz_ns", "no", DUCKDB_SPARK_TEST, "Unrecognized primitive type"),
    # Trino's Iceberg connector: v1 and v2; v3 was in progress in trino#24882.
    _row("trino", "400", None, f"format-v1 format-v2 position-deletes equality-deletes {_PLAIN_TYPES} "
         f"{_ALL_TRANSFORMS} transform-void", "yes", TRINO_DOCS, "time as time(6), uuid as uuid, fixed as varbinary"),
    _row("trino", "400", None, "names-case-only", "no", TRINO_DOCS, "Trino lowercases identifiers"),
    _row("trino", "400", None, "format-v3 deletion-vectors type-timestamp_ns type-timestamptz_ns type-variant "
         "type-geometry type-geography type-unknown default-values", "unknown", TRINO_V3),
    # Athena engine version 3: Iceberg v2 only; no fixed, no time.
    _row("athena", "3", None, f"format-v1 format-v2 position-deletes equality-deletes {_ALL_TRANSFORMS}", "yes",
         ATHENA_DOCS),
    _row("athena", "3", None, "format-v3 deletion-vectors type-timestamp_ns type-timestamptz_ns type-variant "
         "type-geometry type-geography type-unknown default-values", "no", ATHENA_DOCS,
         "Athena only creates and operates on Iceberg v2 tables"),
    _row("athena", "3", None, "type-time type-fixed", "no", ATHENA_TYPES),
    _row("athena", "3", None, "names-case-only", "no", ATHENA_TYPES, "Athena lowercases column names"),
    # Snowflake: v3 generally available in May 2026.
    _row("snowflake", "2026.5", None, "format-v1 format-v2 format-v3 deletion-vectors default-values "
         "type-timestamp_ns type-timestamptz_ns type-variant type-geometry type-geography", "yes", SNOWFLAKE_V3),
    # BigQuery external Iceberg tables: v2.
    _row("bigquery", "2026.5", None, "format-v1 format-v2", "yes", BIGQUERY_DOCS),
    # pyiceberg 0.12.
    _row("pyiceberg", "0.12", None, "format-v1 format-v2 format-v3 position-deletes deletion-vectors", "yes",
         PYICEBERG_TEST),
    _row("pyiceberg", "0.12", None, f"{_PLAIN_TYPES} {_ALL_TRANSFORMS}", "yes", PYICEBERG_OBSERVED),
    _row("pyiceberg", "0.12", None, "equality-deletes type-variant", "no", PYICEBERG_OBSERVED,
         "PyIceberg does not yet support equality deletes; metadata with variant fails to load"),
)

NO_SOURCE = Source("no source", "")


@dataclass(frozen=True)
class Verdict:
    engine: str
    version: str
    feature: Feature
    value: Support
    source: Source
    note: str = ""


def support(engine: str, version: str, feature: str) -> Verdict:
    """What ``engine`` at ``version`` can read of ``feature``: the row covering them, else unknown."""
    wanted = parse_version(version)
    row = next((r for r in ROWS if r.engine == engine and feature in r.features and r.covers(wanted)), None)
    if row is None:
        return Verdict(engine, version, FEATURES[feature], "unknown", NO_SOURCE)
    return Verdict(engine, version, FEATURES[feature], row.support, row.source, row.note)


def overlaps() -> Iterator[tuple[Row, Row, str]]:
    """Rows of one engine that say something of one feature for a shared version (the table must not)."""
    for i, a in enumerate(ROWS):
        for b in ROWS[i + 1:]:
            shared = set(a.features) & set(b.features)
            if a.engine == b.engine and shared and _meet(a, b):
                yield a, b, sorted(shared)[0]


def _meet(a: Row, b: Row) -> bool:
    return (b.until is None or _key(a.since) < _key(b.until)) and (a.until is None or _key(b.since) < _key(a.until))


def markdown_table() -> str:
    """The README's reader table: per engine and versions, what it reads, cannot read, or no source says."""
    lines = ["| Reader | Versions | Support | Features | Source |", "| --- | --- | --- | --- | --- |"]
    for row in ROWS:
        link = f"[{row.source.title}]({row.source.url})" if row.source.url else row.source.title
        note = f" ({row.note})" if row.note else ""
        features = ", ".join(f"`{f}`" for f in row.features)
        lines.append(f"| {row.engine} | {row.versions} | {row.support} | {features}{note} | {link} |")
    lines.append("")
    lines.append("What no row names is `unknown` for that reader: a warning (TG113), never taken as fine. "
                 "Engines: " + ", ".join(f"`{e.name}` ({e.title}, e.g. `{e.example}`)" for e in ENGINES.values())
                 + ".")
    return "\n".join(lines)
