"""``tablepolicy import 'sales.*'`` / ``--namespace``: every table of a namespace becomes a policy file, and the plan
right after is empty, on the embedded SQLite catalog and on PostgreSQL. The tables are made with pyiceberg alone,
as another team or engine would have made them (no JVM): every shape the importer writes."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from pyiceberg.catalog import Catalog
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.table.sorting import NullOrder, SortDirection, SortField, SortOrder
from pyiceberg.transforms import (
    BucketTransform,
    DayTransform,
    HourTransform,
    IdentityTransform,
    MonthTransform,
    TruncateTransform,
    VoidTransform,
    YearTransform,
)
from pyiceberg.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestampType,
    TimestamptzType,
)
from typer.testing import CliRunner

from tablepolicy.cli.app import app
from tests.catalog_fixtures import embedded_catalog
from tests.cli_runner import tablepolicy_process
from tests.pgserver import postgres_server

runner = CliRunner()


def orders_schema() -> Schema:
    """Every primitive Spark creates, structs in structs, a list of structs, a map; docs and required fields; a
    name that needs quoting; identifier fields, one nested in a required struct."""
    return Schema(
        NestedField(1, "id", LongType(), required=True, doc="order id"),
        NestedField(2, "placed", TimestamptzType(), required=True),
        NestedField(3, "local_ts", TimestampType()),
        NestedField(4, "day", DateType()),
        NestedField(5, "amount", DecimalType(12, 2)),
        NestedField(6, "ratio", FloatType()),
        NestedField(7, "score", DoubleType()),
        NestedField(8, "flag", BooleanType()),
        NestedField(9, "n", IntegerType()),
        NestedField(10, "blob", BinaryType()),
        NestedField(11, "code", StringType()),
        NestedField(12, "buyer", StructType(
            NestedField(13, "name", StringType(), required=True),
            NestedField(14, "address", StructType(NestedField(15, "city", StringType()),
                                                  NestedField(16, "zip", StringType())), doc="where")),
                    required=True, doc="who"),
        NestedField(17, "items", ListType(18, StructType(NestedField(19, "sku", StringType(), required=True),
                                                         NestedField(20, "qty", IntegerType())),
                                          element_required=False)),
        NestedField(21, "tags", ListType(22, StringType(), element_required=False)),
        NestedField(23, "attrs", MapType(24, StringType(), 25, LongType(), value_required=False)),
        NestedField(26, "odd name", StringType()),
        identifier_field_ids=[1, 13],
    )


def create_orders(catalog: Catalog, name: tuple[str, ...]) -> None:
    """Every partition transform (one with a name of its own), a sort order of transforms, directions and null
    orders, the settings the policy format owns, free properties, a comment, owner and tags."""
    spec = PartitionSpec(
        PartitionField(1, 1000, BucketTransform(8), "id_bucket"),
        PartitionField(3, 1001, MonthTransform(), "ts_month_custom"),
        PartitionField(11, 1002, IdentityTransform(), "code"),
        PartitionField(26, 1003, TruncateTransform(3), "odd name_trunc"),
        PartitionField(4, 1004, YearTransform(), "day_year"),
        PartitionField(2, 1005, HourTransform(), "placed_hour"),
    )
    order = SortOrder(
        SortField(2, DayTransform(), SortDirection.DESC, NullOrder.NULLS_FIRST),
        SortField(11, TruncateTransform(2), SortDirection.ASC, NullOrder.NULLS_LAST),
        SortField(1, BucketTransform(4)),
        SortField(13, IdentityTransform(), SortDirection.DESC, NullOrder.NULLS_LAST),
    )
    catalog.create_table(name, orders_schema(), partition_spec=spec, sort_order=order, properties={
        "comment": "made by another team", "tablepolicy.owner": "sales-eng", "tablepolicy.tags": "pii,finance",
        "write.delete.mode": "merge-on-read", "write.update.mode": "copy-on-write", "write.merge.mode": "merge-on-read",
        "write.distribution-mode": "hash",
        "history.expire.max-snapshot-age-ms": "21600000", "history.expire.min-snapshots-to-keep": "3",
        "history.expire.max-ref-age-ms": "604800000",
        "write.metadata.previous-versions-max": "10", "write.metadata.delete-after-commit.enabled": "true",
        "write.target-file-size-bytes": "536870912",
        "custom.flag": "on", "write.parquet.compression-codec": "zstd", "key with spaces": "value: 'quoted'",
    })


def create_returns(catalog: Catalog, name: tuple[str, ...]) -> None:
    """Format version 1, where a dropped partition field stays in the spec as void."""
    schema = Schema(NestedField(1, "id", LongType(), required=True), NestedField(2, "region", StringType()),
                    NestedField(3, "dt", DateType()))
    spec = PartitionSpec(PartitionField(3, 1000, VoidTransform(), "dt_day"),
                         PartitionField(2, 1001, IdentityTransform(), "region"))
    catalog.create_table(name, schema, partition_spec=spec, properties={"format-version": "1"})


def create_audit(catalog: Catalog, name: tuple[str, ...]) -> None:
    """Properties tablepolicy manages (lifecycle settings kept as tablepolicy.* keys), the records apply stamps on
    a table, and the keys Spark and Iceberg set themselves."""
    schema = Schema(NestedField(1, "user_id", StringType(), required=True),
                    NestedField(2, "at", TimestamptzType(), required=True), NestedField(3, "what", StringType()))
    spec = PartitionSpec(PartitionField(2, 1000, DayTransform(), "at_day"))
    catalog.create_table(name, schema, partition_spec=spec, properties={
        "tablepolicy.retention.column": "at", "tablepolicy.retention.keep": "400d",
        "tablepolicy.orphan-files.older-than": "3d", "tablepolicy.erasure.key": "user_id",
        "tablepolicy.erasure.within": "30d", "tablepolicy.compaction.min-input-files": "8",
        "tablepolicy.compaction.skip-recent": "1d", "tablepolicy.manifests.enabled": "true",
        "tablepolicy.manifests.min-manifests": "50", "tablepolicy.delete-files.enabled": "false",
        "tablepolicy.plan-id": "3f1c0ffee", "tablepolicy.git-sha": "0123abcd",
        "tablepolicy.declared-properties": json.dumps(["custom.kept", "custom.gone"]),
        "tablepolicy.approvals": "drop_column old (field id 4)",
        "owner": "spark", "custom.kept": "1",
    })


def create_plain(catalog: Catalog, name: tuple[str, ...]) -> None:
    catalog.create_table(name, Schema(NestedField(1, "id", LongType()), NestedField(2, "name", StringType())))


# namespace -> tables, what every test starts from: the sales namespace holds every shape, one nested level below it
CATALOG = {("sales", "orders"): create_orders, ("sales", "returns"): create_returns, ("sales", "audit"): create_audit,
           ("sales", "eu", "orders"): create_plain, ("hr", "people"): create_plain}
SALES = ["policies/sales/audit.yaml", "policies/sales/orders.yaml", "policies/sales/returns.yaml"]
SALES_DEEP = [*SALES[:1], "policies/sales/eu/orders.yaml", *SALES[1:]]


@dataclass
class Target:
    """A project folder and the catalog the CLI reaches from it: the embedded one, or PostgreSQL by configuration."""

    project: Path
    env: dict[str, str]
    catalog: Catalog

    def cli(self, *args: str) -> tuple[int, str]:
        """The CLI in this process, run from the project folder; output and errors together."""
        result = runner.invoke(app, list(args), env=self.env)
        return result.exit_code, result.output

    def files(self) -> dict[str, bytes]:
        return {p.relative_to(self.project).as_posix(): p.read_bytes()
                for p in sorted((self.project / "policies").rglob("*.yaml"))}


@pytest.fixture(scope="module")
def postgres() -> Iterator[str]:
    with postgres_server() as url:
        yield url


@pytest.fixture(params=["sqlite", "postgresql"])
def target(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Target:
    project = tmp_path / "project"
    (project / "policies").mkdir(parents=True)
    monkeypatch.chdir(project)
    for key in [k for k in os.environ if k.startswith(("PYICEBERG_", "TABLEPOLICY_"))]:
        monkeypatch.delenv(key)
    if request.param == "sqlite":
        env: dict[str, str] = {}
        catalog: Catalog = embedded_catalog(project / "policies")
    else:
        url = request.getfixturevalue("postgres")
        # one catalog per test in the shared server; letters and digits only (an _ in the variable reads as a -)
        name = "pg" + "".join(c for c in tmp_path.name.lower() if c.isalnum())
        (tmp_path / "wh").mkdir()
        env = {f"PYICEBERG_CATALOG__{name.upper()}__URI": url, f"PYICEBERG_CATALOG__{name.upper()}__TYPE": "sql",
               f"PYICEBERG_CATALOG__{name.upper()}__WAREHOUSE": (tmp_path / "wh").as_uri()}
        catalog = SqlCatalog(name, uri=url, warehouse=(tmp_path / "wh").as_uri())
    for name_, create in CATALOG.items():
        catalog.create_namespace_if_not_exists(name_[:-1])
        create(catalog, name_)
    catalog.create_namespace(("empty",))
    return Target(project, env, catalog)


def test_namespace_import_plans_no_changes(target: Target) -> None:
    code, output = target.cli("import", "sales.*", "--out", "policies")
    assert code == 0, output
    assert list(target.files()) == SALES  # one level: sales.eu.orders is not sales.*
    assert [line for line in output.splitlines() if line.startswith("wrote")] == [f"wrote {f}" for f in SALES]
    code, output = target.cli("plan", "policies", "--detailed-exitcode")
    assert (code, output.splitlines()[-2:]) == (0, ["No changes. The catalog matches the policies.",
                                                   "note: policies is not in a git repository: the plan records no "
                                                   "commit"]), output
    assert target.cli("validate", "policies")[0] == 0
    assert target.cli("fmt", "--check", "policies")[0] == 0
    orders = (target.project / "policies/sales/orders.yaml").read_text()
    for line in ("  - {field: month(local_ts), name: ts_month_custom}", "  - truncate(3, `odd name`)",
                 "sort_by: [day(placed) desc nulls first, 'truncate(2, code) nulls last', 'bucket(4, id)', "
                 "buyer.name desc]", "identifier_fields: [id, buyer.name]", "tags: [pii, finance]",
                 "  snapshots: {max_age: 6h, min_keep: 3, max_ref_age: 1w}"):
        assert line in orders.splitlines()
    audit = (target.project / "policies/sales/audit.yaml").read_text()
    assert "tablepolicy.plan-id" not in audit and "owner" not in audit and "custom.kept: '1'" in audit


def test_recursive_import_refuses_every_existing_file_then_overwrites_with_force(target: Target) -> None:
    assert target.cli("import", "--namespace", "sales", "--out", "policies")[0] == 0
    before = target.files()
    code, output = target.cli("import", "--namespace", "sales", "--recursive", "--out", "policies")
    assert code == 1
    assert [line for line in output.splitlines() if line.startswith("error:")] == [
        *(f"error: {f} exists; pass --force to overwrite it" for f in SALES), "error: nothing was written"]
    assert target.files() == before  # sales/eu/orders.yaml was not written either
    code, output = target.cli("import", "sales.**", "--out", "policies", "--force")
    assert code == 0, output
    assert list(target.files()) == SALES_DEEP and target.files()["policies/sales/orders.yaml"] == \
        before["policies/sales/orders.yaml"]
    assert target.cli("plan", "policies", "--detailed-exitcode")[0] == 0


def test_the_files_carry_the_editor_schema_header(target: Target) -> None:
    (target.project / "policy.schema.json").write_text("{}")
    code, output = target.cli("import", "sales.**", "hr.people", "--out", "policies")
    assert code == 0 and "note:" not in output
    headers = {name: text.decode().splitlines()[0] for name, text in target.files().items()}
    assert headers == {
        "policies/hr/people.yaml": "# yaml-language-server: $schema=../../policy.schema.json",
        **{f: "# yaml-language-server: $schema=../../policy.schema.json" for f in SALES},
        "policies/sales/eu/orders.yaml": "# yaml-language-server: $schema=../../../policy.schema.json"}


def test_a_missing_schema_file_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "policies").mkdir()
    catalog = embedded_catalog(tmp_path / "policies")
    catalog.create_namespace(("hr",))
    create_plain(catalog, ("hr", "people"))
    result = runner.invoke(app, ["import", "hr.*", "--out", "policies"])
    assert result.exit_code == 0
    assert result.output.splitlines()[-1] == ("note: the files' editor header points at policy.schema.json, which "
                                              "does not exist; write it with: tablepolicy schema > policy.schema.json")


def test_same_bytes_in_another_process(target: Target, tmp_path: Path) -> None:
    assert target.cli("import", "**", "--out", "policies")[0] == 0
    other = tmp_path / "other"
    (other / "policies").mkdir(parents=True)
    if not target.env:  # the embedded catalog lives beside the project's policies: point at it
        env = {"PYICEBERG_CATALOG__LAKE__URI": f"sqlite:///{target.project / '.lake' / 'catalog.db'}",
               "PYICEBERG_CATALOG__LAKE__WAREHOUSE": (target.project / ".lake" / "warehouse").as_uri()}
    else:
        env = target.env
    result = tablepolicy_process("import", "**", "--out", "policies", cwd=other, env=env | {"PYTHONHASHSEED": "7"})
    assert result.returncode == 0, result.stderr
    theirs = {p.relative_to(other).as_posix(): p.read_bytes() for p in sorted((other / "policies").rglob("*.yaml"))}
    assert theirs == target.files()
    assert list(theirs) == ["policies/hr/people.yaml", *SALES_DEEP]


# (arguments, the error lines): every selector that matches nothing names what exists; nothing is written
ERRORS = [
    pytest.param(["nope.*"], ["nope.*: no namespace nope; namespaces: empty, hr, sales, sales.eu"], id="no-namespace"),
    pytest.param(["empty.*"], ["empty.*: namespace empty holds no tables"], id="empty-namespace"),
    pytest.param(["--namespace", "empty", "--recursive"], ["empty.**: namespace empty holds no tables"],
                 id="empty-recursive"),
    pytest.param(["sales.eu.orders", "sales.nope"],
                 ["sales.nope: no such table; tables of sales: sales.audit, sales.orders, sales.returns"],
                 id="no-table"),
    pytest.param(["nope.t", "hr.*", "nope.*"], ["nope.t: no namespace nope; namespaces: empty, hr, sales, sales.eu",
                                                "nope.*: no namespace nope; namespaces: empty, hr, sales, sales.eu"],
                 id="all-at-once"),
    pytest.param(["sal*.orders"], ["'sal*.orders': a wildcard stands for a whole name at the end: NS.* (the tables "
                                   "of NS), NS.** (and of its nested namespaces) or ** (every table)"], id="glob"),
    pytest.param(["*"], ["'*': a wildcard stands for a whole name at the end: NS.* (the tables of NS), NS.** (and of "
                         "its nested namespaces) or ** (every table)"], id="bare-star"),
    pytest.param(["orders"], ["'orders' is no table name: write namespace.table, NS.* or NS.**"], id="one-part"),
    pytest.param(["--namespace", "sales.*"], ["'sales.*': a namespace is a name, not a pattern (write sales or "
                                              "sales.eu)"], id="namespace-pattern"),
    pytest.param(["--recursive", "sales.*"], ["--recursive applies to --namespace; with a pattern write 'sales.**'"],
                 id="recursive-without-namespace"),
    pytest.param([], ["import: name the tables (sales.orders, 'sales.*', 'sales.**') or give --namespace NS"],
                 id="nothing"),
]


@pytest.mark.parametrize(("args", "errors"), ERRORS)
def test_a_selector_that_matches_nothing_names_what_exists(target: Target, args: list[str],
                                                           errors: list[str]) -> None:
    code, output = target.cli("import", *args, "--out", "policies")
    assert code == 1
    assert [line.removeprefix("error: ") for line in output.splitlines() if line.startswith("error:")] == errors
    assert target.files() == {}
    assert "Traceback" not in output


def test_a_namespace_import_needs_out(target: Target) -> None:
    code, output = target.cli("import", "sales.*")
    assert (code, output.strip()) == (1, "error: a namespace import writes one file per table: give --out DIR "
                                         "(e.g. --out policies/)")


def test_a_table_the_project_declares_elsewhere_is_not_imported_again(target: Target) -> None:
    (target.project / "policies" / "legacy.yaml").write_text(
        "table: sales.returns\ncolumns:\n  - {name: id, type: long, required: true}\n")
    code, output = target.cli("import", "sales.*", "--out", "policies", "--force")
    assert code == 1
    assert "error: sales.returns is already declared in policies/legacy.yaml" in output.splitlines()
    assert list(target.files()) == ["policies/legacy.yaml"]


def test_a_name_that_cannot_be_a_file_is_refused(target: Target) -> None:
    with contextlib.suppress(Exception):
        target.catalog.create_namespace(("odd",))
    create_plain(target.catalog, ("odd", "a/b"))
    code, output = target.cli("import", "odd.*", "--out", "policies")
    assert code == 1
    assert ("error: odd.`a/b`: 'a/b' cannot be a file or folder name; import the table without --out and save its "
            "YAML under a name of your choice") in output.splitlines()
    assert target.files() == {}


def test_what_validate_refuses_in_an_imported_file_is_shown(target: Target) -> None:
    """Iceberg holds required list elements; the policy format refuses them (TP213): the file is written (the user
    decides what to declare instead) and import shows the finding at its line."""
    target.catalog.create_namespace(("strict",))
    target.catalog.create_table(("strict", "t"), Schema(
        NestedField(1, "id", LongType()), NestedField(2, "xs", ListType(3, StringType(), element_required=True))))
    code, output = target.cli("import", "strict.*", "--out", "policies")
    assert code == 0
    assert ("policies/strict/t.yaml:9:25: error TP213: required list elements cannot be created through Spark DDL "
            "(ARRAY elements are nullable)") in output.splitlines()
    assert output.splitlines()[-1] == ("note: validate refuses the imported files as they are (above): edit them, or "
                                       "their namespace defaults, before you plan")
    assert list(target.files()) == ["policies/strict/t.yaml"]
