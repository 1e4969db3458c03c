"""A saved plan is exactly what runs: through the installed CLI on a real embedded catalog with Spark,
every tampering of the plan file (retargeted table, a drop moved onto another column, another catalog, a
re-created table, another tool version, edited SQL) is refused before anything runs, naming the table
and what differs; and an approval left in git after its apply approves nothing else."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tablepolicy.compiler.catalog.config import CatalogConfig
from tablepolicy.compiler.desired import desired_states
from tablepolicy.compiler.diff.changes import DropColumn
from tablepolicy.compiler.plan.codec import plan_from_json, plan_to_json
from tablepolicy.compiler.plan.planner import requirement_of
from tablepolicy.compiler.validate import validate
from tablepolicy.runtime.catalog.reader import CatalogReader
from tests.catalog_fixtures import create_like, embedded_catalog
from tests.cli_runner import CLI_COMMAND

pytestmark = pytest.mark.spark
ROOT = Path(__file__).resolve().parents[2]
ORDERS = """table: shop.orders
owner: shop
columns:
  - {{name: order_id, type: long, required: true}}
  - {{name: qty, type: int}}
{note}{approval}"""
NOTE = "  - {name: note, type: string}\n"
CUSTOMERS = """table: shop.customers
owner: shop
columns:
  - {name: customer_id, type: long}
  - {name: qty, type: int}
  - {name: note, type: string}
"""


def tablepolicy(root: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    run = subprocess.run([*CLI_COMMAND, *args], capture_output=True, text=True, cwd=root, timeout=600, check=False,
                         env={**os.environ, "NO_COLOR": "1", **(env or {})})
    return run.returncode, run.stdout + run.stderr


def orders(note: bool, approval: str | None = None) -> str:
    return ORDERS.format(note=NOTE if note else "", approval=f"allow_destructive: [{approval!r}]\n" if approval else "")


def config(root: Path) -> CatalogConfig:
    lake = root / ".lake"
    return CatalogConfig("lake", {"type": "sql", "uri": f"sqlite:///{lake / 'catalog.db'}",
                                  "warehouse": (lake / "warehouse").as_uri()}, embedded=True)


def columns(root: Path, table: str) -> list[str]:
    with CatalogReader(config(root)) as reader:
        current = reader.table(("shop", table), fresh=True)
    assert current is not None
    return [f.name for f in current.state.columns.fields]


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """shop.orders and shop.customers applied through the CLI; git then drops orders.note, approved."""
    root = tmp_path_factory.mktemp("shop")
    policies = root / "policies" / "shop"
    policies.mkdir(parents=True)
    (policies / "orders.yaml").write_text(orders(note=True))
    (policies / "customers.yaml").write_text(CUSTOMERS)
    code, output = tablepolicy(root, "apply", "policies", "--auto-approve")
    assert code == 0, output
    (policies / "orders.yaml").write_text(orders(note=False, approval="drop_column note"))
    code, output = tablepolicy(root, "plan", "policies", "--out", "plan.json")
    assert code == 0, output
    return root


def edit_model(edit: Callable[[Any, Path], Any]) -> Callable[[Path], None]:
    """A tampering that keeps the file consistent (views re-rendered), as a careful attacker would."""
    def tamper(root: Path) -> None:
        plan = plan_from_json((root / "plan.json").read_text())
        (root / "tampered.json").write_text(plan_to_json(edit(plan, root)))
    return tamper


def edit_json(edit: Callable[[dict[str, Any]], None]) -> Callable[[Path], None]:
    def tamper(root: Path) -> None:
        document = json.loads((root / "plan.json").read_text())
        edit(document)
        (root / "tampered.json").write_text(json.dumps(document, indent=2))
    return tamper


def retarget(plan: Any, root: Path) -> Any:
    """The drop moved onto shop.customers, with customers' own requirement (UUID and metadata)."""
    with CatalogReader(config(root)) as reader:
        current = reader.table(("shop", "customers"))
    assert current is not None
    [table] = [t for t in plan.tables if t.changes]
    drop = table.changes[0].model_copy(update={"table": ("shop", "customers"),
                                               "field_id": current.state.ids_by_path[("note",)]})
    moved = table.model_copy(update={"table": ("shop", "customers"), "requirement": requirement_of(current),
                                     "changes": [drop], "policy_file": "policies/shop/customers.yaml"})
    return plan.model_copy(update={"tables": [moved]})


def move_drop(plan: Any, _root: Path) -> Any:
    [table] = [t for t in plan.tables if t.changes]
    drop = table.changes[0]
    assert isinstance(drop, DropColumn)
    moved = drop.model_copy(update={"path": ("qty",), "field_id": 2})
    return plan.model_copy(update={"tables": [table.model_copy(update={"changes": [moved]})]})


def edit_sql(document: dict[str, Any]) -> None:
    document["tables"][0]["changes"][0]["sql"] = ["ALTER TABLE `lake`.`shop`.`orders` DROP COLUMN `qty`"]


def other_uri(document: dict[str, Any]) -> None:
    document["catalog"]["uri"] = "postgresql://cd@prod-db/iceberg"


def old_version(document: dict[str, Any]) -> None:
    document["tool_version"] = "0.0.9"


TAMPERINGS: dict[str, tuple[Callable[[Path], None], list[str], list[str]]] = {
    "retargeted table": (edit_model(retarget), [], [
        "shop.customers: the plan file holds 'drop column note", "but the policies and catalog need no change",
        "shop.orders: the policies now change this table ('drop column note"]),
    "drop moved onto another column": (edit_model(move_drop), [], [
        "shop.orders: change 1 of the plan file is 'drop column qty (field id 2; its data is no longer readable)'; "
        "the policies give 'drop column note (field id 3; its data is no longer readable)'"]),
    "edited sql": (edit_json(edit_sql), [], [
        "shop.orders: 'drop column note (field id 3; its data is no longer readable)': sql not what the change "
        "renders"]),
    "plan made against another catalog": (edit_json(other_uri), [], [
        "refusing the plan of shop.orders", "the plan was made against catalog 'lake' (sql, "
        "postgresql://cd@prod-db/iceberg); this apply targets catalog 'lake' (sql, sqlite:///"]),
    "apply --catalog OTHER": (edit_json(lambda _d: None), ["--catalog", "other"], [
        "refusing the plan of shop.orders", "the plan was made against catalog 'lake' (sql, sqlite:///",
        "this apply targets catalog 'other' (sql, sqlite:///"]),
    "changed tool version": (edit_json(old_version), [], [
        "refusing the plan of shop.orders", "the plan was written by tablepolicy 0.0.9; this is "]),
}


@pytest.mark.parametrize("case", list(TAMPERINGS))
def test_a_tampered_plan_is_refused_and_nothing_runs(shop: Path, case: str) -> None:
    tamper, flags, expected = TAMPERINGS[case]
    tamper(shop)
    other = shop / "other"
    env = {"PYICEBERG_CATALOG__OTHER__URI": f"sqlite:///{other / 'catalog.db'}",
           "PYICEBERG_CATALOG__OTHER__WAREHOUSE": (other / "warehouse").as_uri()} if flags else None
    before = {t: columns(shop, t) for t in ("orders", "customers")}
    code, output = tablepolicy(shop, "apply", "tampered.json", *flags, env=env)
    assert code == 1, output
    for text in expected:
        assert text in output, output
    assert "nothing was applied" in output and "Traceback" not in output
    assert {t: columns(shop, t) for t in ("orders", "customers")} == before
    assert not (shop / "tampered.json.journal").exists()


def test_a_table_dropped_and_recreated_with_the_same_schema_is_stale(shop: Path) -> None:
    (shop / "policies/shop/customers.yaml").write_text(CUSTOMERS + "description: customers\n")
    code, output = tablepolicy(shop, "plan", "policies", "--out", "recreated.json")
    assert code == 0, output
    catalog = embedded_catalog(shop / "policies")
    old = catalog.load_table(("shop", "customers"))
    catalog.drop_table(("shop", "customers"))
    project, _ = validate(shop / "policies")
    create_like(catalog, next(s for s in desired_states(project) if s.name == ("shop", "customers")).model_copy(
        update={"comment": None, "properties": {k: v for k, v in old.properties.items() if k != "comment"}}))
    code, output = tablepolicy(shop, "apply", "recreated.json")
    assert code == 1, output
    assert f"shop.customers: dropped and re-created since the plan was made (table UUID {old.metadata.table_uuid}"\
        in output, output
    assert "nothing was applied" in output
    (shop / "policies/shop/customers.yaml").write_text(CUSTOMERS)


def test_the_untampered_plan_applies_and_its_approval_then_approves_nothing_else(shop: Path) -> None:
    code, output = tablepolicy(shop, "apply", "plan.json")
    assert code == 0, output
    assert columns(shop, "orders") == ["order_id", "qty"]
    policy = shop / "policies/shop/orders.yaml"
    policy.write_text(orders(note=True, approval="drop_column note"))  # re-added; the old line stays in git
    code, output = tablepolicy(shop, "apply", "policies", "--auto-approve")
    assert code == 0, output
    assert "warning TA101: allow_destructive entry 'drop_column note' approves no change in this plan" in output
    policy.write_text(orders(note=False, approval="drop_column note"))  # and removed again: not approved
    code, output = tablepolicy(shop, "plan", "policies")
    assert code == 3, output
    assert "the entry 'drop_column note' in git was consumed by an earlier apply (field id 3); it does not " \
           "approve this change (field id 4)" in output, output
    assert 'allow_destructive: ["drop_column note (field id 4)"]' in output
    assert "policies/shop/orders.yaml:6:21: warning TA101: allow_destructive entry 'drop_column note' approves " \
           "no change in this plan; an earlier apply consumed it for field id 3" in output, output
    assert "delete this line" in output
    policy.write_text(orders(note=False, approval="drop_column note (field id 4)"))
    code, output = tablepolicy(shop, "plan", "policies", "--detailed-exitcode")
    assert code == 2, output
    assert "TA101" not in output
    code, output = tablepolicy(shop, "apply", "policies", "--auto-approve")
    assert code == 0, output
    assert columns(shop, "orders") == ["order_id", "qty"]
    with CatalogReader(config(shop)) as reader:
        current = reader.table(("shop", "orders"))
    assert current is not None
    assert json.loads(current.state.properties["tablepolicy.approvals"]) == [
        "drop_column note (field id 3)", "drop_column note (field id 4)"]


def test_a_saved_plan_of_one_file_applies_while_other_tables_have_changes_too(tmp_path: Path) -> None:
    """The plan of one file records its selection; apply compares only that table with the plan it derives
    from all of git, so the other table's pending change neither blocks it nor runs."""
    policies = tmp_path / "policies" / "shop"
    policies.mkdir(parents=True)
    (policies / "orders.yaml").write_text(orders(note=False))
    (policies / "customers.yaml").write_text(CUSTOMERS)
    code, output = tablepolicy(tmp_path, "apply", "policies", "--auto-approve")
    assert code == 0, output
    (policies / "orders.yaml").write_text(orders(note=True))
    (policies / "customers.yaml").write_text(CUSTOMERS + "  - {name: email, type: string}\n")
    code, output = tablepolicy(tmp_path, "plan", "policies/shop/customers.yaml", "--out", "plan.json")
    assert code == 0, output
    assert json.loads((tmp_path / "plan.json").read_text())["selected"] == [["shop", "customers"]]
    code, output = tablepolicy(tmp_path, "apply", "plan.json")
    assert code == 0, output
    assert columns(tmp_path, "customers") == ["customer_id", "qty", "note", "email"]
    assert columns(tmp_path, "orders") == ["order_id", "qty"]  # its change was not in the reviewed plan


def test_a_drop_table_approval_left_in_git_does_not_drop_the_table_created_again(tmp_path: Path) -> None:
    policies = tmp_path / "policies" / "shop"
    policies.mkdir(parents=True)
    approved = orders(note=False, approval="drop_table")
    (policies / "orders.yaml").write_text(orders(note=False))
    assert tablepolicy(tmp_path, "apply", "policies", "--auto-approve")[0] == 0
    (policies / "orders.yaml").write_text(approved + "state: absent\n")  # the reviewed drop
    code, output = tablepolicy(tmp_path, "apply", "policies", "--auto-approve")
    assert code == 0, output  # approved: dropped
    (policies / "orders.yaml").write_text(approved)  # created again; the approval still in the file
    code, output = tablepolicy(tmp_path, "apply", "policies", "--auto-approve")
    assert code == 0 and "TA101" in output, output
    (policies / "orders.yaml").write_text(approved + "state: absent\n")
    code, output = tablepolicy(tmp_path, "plan", "policies")
    assert code == 3, output
    assert "before this table was created" in output and "drop_table (table uuid " in output
    assert columns(tmp_path, "orders") == ["order_id", "qty"]
