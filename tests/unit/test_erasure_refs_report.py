"""What the certificate, the proof file and the dry run say about tags and branches that kept erased keys, byte
for byte: per ref its decision, where git says so, what happened (kept, rewritten, dropped, blocked) and whose
keys it kept. No JVM: the table proof is built as run_erasure returns it. Rewrite the golden files with

    UPDATE_GOLDEN=1 .venv/bin/pytest -q tests/unit/test_erasure_refs_report.py
"""

from __future__ import annotations

from datetime import UTC, date, datetime

from tablepolicy.compiler.diagnostics import Location
from tablepolicy.compiler.erasure.ledger import Entry, statuses
from tablepolicy.compiler.erasure.plan import ErasurePreview, RefRule, RefStep
from tablepolicy.compiler.render.erasure import render_preview
from tablepolicy.compiler.render.erasure_report import proof_json, render_status
from tablepolicy.runtime.erasure.proof import ProofStep, RefOutcome, TableProof
from tests.unit.test_report_output import CATALOG, check

AT = datetime(2026, 11, 24, 6, 0, tzinfo=UTC)
TODAY = AT.date()
WHERE = "policies/privacy/events.yaml"


def rule(ref: str, decision: str, line: int) -> RefRule:
    return RefRule(ref, decision, Location(WHERE, line, 7))  # type: ignore[arg-type]


def proof() -> TableProof:
    """A run on privacy.events: main and two refs rewritten, one dropped, a legal hold kept, one tag with no
    decision blocking."""
    table = TableProof(("privacy", "events"), ["REQ-1", "REQ-2"], files_with_keys=["d/a.parquet", "d/b.parquet"],
                       rows_before=4, statements=["DELETE ..."], files_rewritten=["d/a.parquet"],
                       snapshots_checked=[11, 21, 31, 41], files_scanned=5, bytes_scanned=5000,
                       files_still_referenced=["d/b.parquet"], files_still_stored=["d/b.parquet"], rows_after=2,
                       held_by={"litigation": ["d/b.parquet"]}, blocking_refs=["forgotten"], seconds=1.5)
    held = rule("litigation", "hold", 12)
    table.refs = [
        RefOutcome("audit", "branch", "rewrite", rule("audit", "rewrite", 13).reason, 2, ["d/a.parquet"], ["REQ-1"],
                   21),
        RefOutcome("forgotten", "tag", None, "no decision in lifecycle.erasure.refs", 3, ["d/b.parquet"],
                   ["REQ-1", "REQ-2"], 3),
        RefOutcome("litigation", "tag", "hold", held.reason, 3, ["d/b.parquet"], ["REQ-1", "REQ-2"], 3),
        RefOutcome("month_end", "tag", "rewrite", rule("month_end", "rewrite", 14).reason, 3, ["d/a.parquet"],
                   ["REQ-1", "REQ-2"], 31),
        RefOutcome("scratch", "branch", "expire", rule("scratch", "expire", 15).reason, 4, ["d/a.parquet"],
                   ["REQ-2"], None)]
    table.steps += [ProofStep("delete_rows", 0.5, 1, 100), ProofStep("rewrite_ref", 0.25, 1, 100),
                    ProofStep("drop_ref", 0.125, 0, 0)]
    return table


def test_the_proof_file_and_certificate_name_each_ref_its_decision_and_why() -> None:
    document = proof().as_json()
    entries = [Entry(r, "privacy.events", date(2026, 11, 2), date(2026, 12, 2), "failed", "s:f", document, AT, None)
               for r in ("REQ-1", "REQ-2")]
    check("erase_proof_refs.json", proof_json(CATALOG, AT, ["REQ-1", "REQ-2"], [document], [], statuses(entries),
                                              TODAY))
    text = render_status(statuses(entries), TODAY, lambda shown, _colour: shown)
    check("erase_certificate_refs.txt", text)
    assert ("tag 'month_end' rewritten without the keys (now snapshot 31, retention kept) (rewrite declared at "
            f"{WHERE}:14; it kept 1 file(s) with a key of REQ-1, REQ-2)") in text
    assert f"tag 'litigation' kept (legal hold declared at {WHERE}:12;" in text
    assert f"branch 'scratch' dropped, its snapshots expirable (expire declared at {WHERE}:15;" in text
    assert "tag 'forgotten' blocked the erasure (no decision in lifecycle.erasure.refs;" in text
    assert "kept by forgotten" not in text  # said once, with its reason
    req1, req2 = text.split("REQ-2  failed")
    assert "branch 'audit'" in req1 and "branch 'audit'" not in req2  # each request names the refs with its keys
    assert "branch 'scratch'" not in req1 and "branch 'scratch'" in req2


def test_a_proof_without_refs_keeps_its_shape() -> None:
    """A run where no ref kept a key writes no refs key: the proofs of earlier runs and their readers stay valid."""
    plain = TableProof(("privacy", "events"), ["REQ-1"])
    assert "refs" not in plain.as_json()


def test_the_dry_run_names_each_ref_and_its_decision() -> None:
    steps = (RefStep("audit", "branch", 2, ("d/a.parquet",), ("REQ-1",), rule("audit", "rewrite", 13)),
             RefStep("forgotten", "tag", 3, ("d/a.parquet", "d/b.parquet"), ("REQ-1", "REQ-2")),
             RefStep("litigation", "tag", 3, ("d/b.parquet",), ("REQ-2",), rule("litigation", "hold", 12)),
             RefStep("month_end", "tag", 3, ("d/a.parquet",), ("REQ-1",), rule("month_end", "rewrite", 14)),
             RefStep("scratch", "branch", 4, ("d/a.parquet",), ("REQ-2",), rule("scratch", "expire", 15)))
    preview = ErasurePreview(table=("privacy", "events"), files=("d/a.parquet", "d/b.parquet"), rows=4,
                             files_current=("d/a.parquet",), rows_current=2, expire=(), orphans=(),
                             held={"litigation": ("d/b.parquet",)}, blocking_refs=("forgotten",), unreadable=(),
                             statements=("ALTER TABLE `lake`.`privacy`.`events` DROP BRANCH `scratch`",),
                             through_refs=steps)
    check("erase_preview_refs.txt", render_preview(preview))
