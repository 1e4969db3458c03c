"""The report files runs leave for CD and auditors, byte for byte: ``apply --json-report`` and ``erase --proof``
(their views: tablepolicy/cli/apply_output.py, compiler/render/erasure_report.py). No JVM: the runs' results are
built here as the runs return them. A changed byte fails with a diff; when meant, rewrite the files with

    UPDATE_GOLDEN=1 .venv/bin/pytest -q tests/test_report_views.py
"""

from __future__ import annotations

import difflib
import json
import os
from datetime import UTC, date, datetime
from pathlib import Path

from tablepolicy.cli.apply_output import failure_json, report_json
from tablepolicy.compiler.diff.changes import AddColumn, DropColumn, PropertyChange, SetProperties
from tablepolicy.compiler.erasure.ledger import Entry, statuses
from tablepolicy.compiler.plan.steps import Step
from tablepolicy.compiler.render.erasure_report import proof_json
from tablepolicy.runtime.apply import ApplyReport, StepResult, StepStatus

GOLDEN = Path(__file__).parents[1] / "golden" / "reports"
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"
CATALOG = {"name": "lake", "type": "sql", "uri": "postgresql://planner:***@db.internal:5432/lake"}
T = ("shop", "orders")


def check(name: str, text: str) -> None:
    path = GOLDEN / name
    if UPDATE:
        path.write_text(text, encoding="utf-8")
        return
    old = path.read_text(encoding="utf-8")
    assert text == old, "".join(difflib.unified_diff(old.splitlines(True), text.splitlines(True),
                                                     f"{name} (golden)", "(rendered now)"))


def test_the_apply_report() -> None:
    stamp = SetProperties(table=T, changes=(PropertyChange(key="tablepolicy.plan-id", old=None, new="0123abcd"),))
    add = AddColumn(table=T, path=("note",), type="string")
    drop = DropColumn(table=T, path=("legacy",), field_id=4)
    steps = [Step("ALTER TABLE `lake`.`shop`.`orders` SET TBLPROPERTIES ('tablepolicy.plan-id' = '0123abcd')",
                  stamp, 1),
             Step("ALTER TABLE `lake`.`shop`.`orders` ADD COLUMN `note` STRING", add, 2),
             Step("ALTER TABLE `lake`.`shop`.`orders` DROP COLUMN `legacy`", drop, 3)]
    report = ApplyReport("0123abcd", [StepResult(steps[0], StepStatus.JOURNALED),
                                      StepResult(steps[1], StepStatus.ALREADY_APPLIED),
                                      StepResult(steps[2], StepStatus.DONE, 0.41234)],
                         ["tagged snapshot 7 of shop.orders as 'tablepolicy-before-0123abcd'"])
    check("apply_report.json", report_json(report, CATALOG, steps))
    failed = failure_json(CATALOG, "0123abcd", steps, report.results[:2], "step 3 (drop column legacy) failed: "
                          "the engine said no\n  statement: ALTER TABLE ...", step_failed=True)
    check("apply_report_failed.json", failed)
    refused = failure_json(CATALOG, "0123abcd", steps, [], "refusing the plan of shop.orders, nothing was applied",
                           step_failed=False)
    assert json.loads(refused)["outcome"] == "refused" and json.loads(failed)["outcome"] == "failed"


PROOF = {"table": "shop.orders", "requests": ["r-1", "r-2"], "state": "complete", "complete": True,
         "rows_before": 3, "rows_after": 0, "files_with_keys_before": ["a.parquet"], "statements": ["DELETE ..."],
         "files_rewritten": 1, "snapshots_expired": [], "orphans_deleted": [], "snapshots_checked": [1, 2],
         "files_scanned": 2, "bytes_scanned": 2048, "files_still_referenced": [], "files_still_stored": [],
         "held_by": {}, "blocking_refs": [], "unreadable": [], "error": None, "seconds": 1.25}
AT = datetime(2026, 3, 2, 9, 30, 0, 123456, tzinfo=UTC)
EARLIER = Entry("r-0", "shop.orders", date(2026, 2, 1), date(2026, 3, 3), "done", "s:f", {"complete": True},
                AT, datetime(2026, 2, 10, 8, 0, tzinfo=UTC))
ERASED = [Entry(r, "shop.orders", date(2026, 3, 1), date(2026, 3, 31), "done", "s:f", PROOF, AT, AT)
          for r in ("r-1", "r-2")]


def test_the_erase_proof_file() -> None:
    text = proof_json(CATALOG, AT, ["r-1", "r-2"], [PROOF], [EARLIER], statuses([EARLIER, *ERASED]),
                      date(2026, 3, 2))
    check("erase_proof.json", text)


def test_a_proof_is_complete_only_when_every_tables_is() -> None:
    held = {**PROOF, "table": "shop.customers", "state": "held", "complete": False}
    text = proof_json(CATALOG, AT, ["r-1"], [PROOF, held], [], statuses(ERASED), date(2026, 3, 2))
    assert '\n  "complete": false,\n' in text


def test_the_certificate_counts_the_debris_erase_deleted_and_kept() -> None:
    """Unreadable leftovers of a killed writer: deleted ones are counted; ones younger than the age guard keep
    the erasure unverified, and the status says why and what to do."""
    from tablepolicy.compiler.render.erasure_report import render_status

    cleaned = {**PROOF, "debris_deleted": ["t/data/torn-1.parquet", "t/data/torn-2.parquet"]}
    pending = {**PROOF, "complete": False, "debris_pending": [{"path": "t/data/young.parquet", "age_seconds": 60}]}
    shown = {}
    for name, proof in (("cleaned", cleaned), ("pending", pending)):
        entry = Entry("r-1", "shop.orders", date(2026, 3, 1), date(2026, 3, 31), "done", "s:f", proof, AT, AT)
        shown[name] = render_status(statuses([entry]), date(2026, 3, 2), lambda text, _color: text)
    assert "2 unreadable leftover file(s) of a killed writer deleted, verified: no key" in shown["cleaned"]
    assert ("NOT verified: 0 row(s), 0 referenced and 0 stored file(s) still hold a key; 1 unreadable file(s) "
            "younger than the debris age guard kept (maybe a write in flight): run erase again once they are "
            "older") in shown["pending"], shown["pending"]
