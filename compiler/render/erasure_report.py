"""Where erasure requests stand, for people and for auditors: ``erase status``, the certificate a run ends with
and the proof file (``erase --proof``) that carries it.

Both read the same request statuses (compiler/erasure/ledger.py); nothing here knows a key value, and the
output depends only on the statuses and ``today`` (requests by id, tables by name), so the same ledger
prints the same bytes in any process.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from datetime import date, datetime
from typing import Any

from ..erasure.ledger import STATES, Entry, RequestStatus

Paint = Callable[[str, str], str]  # (text, colour) -> text, coloured or not
_COLOURS = {"done": "green", "pending": "yellow", "held": "magenta", "failed": "red", "OVERDUE": "red"}
# Counts the erasure engine may add to a table proof: shown when present, under these names.
_OPTIONAL_COUNTS = (("files_rewritten", "file(s) rewritten"), ("files_deleted", "file(s) deleted"),
                    ("snapshots_expired", "snapshot(s) expired"),
                    ("debris_deleted", "unreadable leftover file(s) of a killed writer deleted"))


def _count(value: Any) -> int:
    return len(value) if isinstance(value, list | tuple | dict) else int(value or 0)


def proof_summary(proof: Mapping[str, Any] | None, request: str | None = None) -> dict[str, Any] | None:
    """The figures of a table proof an auditor reads: counts and the verdict, never file names or values.
    ``request``: the refs listed are those that kept a key of this request (the proof is the table's)."""
    if proof is None:
        return None
    summary: dict[str, Any] = {
        "requests_in_run": _count(proof.get("requests")),
        "rows": _count(proof.get("rows_before")),
        "files_with_keys": _count(proof.get("files_with_keys_before")),
        "snapshots_checked": _count(proof.get("snapshots_checked")),
        "verified": bool(proof.get("complete")),
        "rows_after": _count(proof.get("rows_after")),
        "files_still_referenced": _count(proof.get("files_still_referenced")),
        "files_still_stored": _count(proof.get("files_still_stored")),
        "blocking_refs": list(proof.get("blocking_refs") or []),
        # unreadable files no snapshot reads, younger than the age guard: a write in flight, or debris that may
        # hold a key; the erasure is not verified while they stay
        "debris_pending": _count(proof.get("debris_pending")),
    }
    for key, _ in _OPTIONAL_COUNTS:
        if key in proof:
            summary[key] = _count(proof[key])
    refs = [r for r in proof.get("refs") or () if request is None or request in r["requests"]]
    if refs:  # each tag or branch that kept a key (of the request): what erasure did with it and why
        summary["refs"] = [{"ref": r["ref"], "kind": r["kind"], "decision": r["decision"], "outcome": r["outcome"],
                            "reason": r["reason"], "files": _count(r["files"]), "requests": list(r["requests"])}
                           for r in refs]
    return summary


def _refs_text(summary: dict[str, Any]) -> str:
    """Which refs kept a key, what happened to each and why (the policy's line, or that it decides nothing)."""
    return "".join(f"; {r['kind']} '{r['ref']}' {r['outcome']} ({r['reason']}; it kept {r['files']} file(s) with "
                   f"a key of {', '.join(r['requests'])})" for r in summary.get("refs", ()))


def _proof_text(summary: dict[str, Any]) -> str:
    parts = [f"{summary['rows']} row(s) in {summary['files_with_keys']} file(s)"
             + (f" (a run of {summary['requests_in_run']} request(s))" if summary["requests_in_run"] > 1 else "")]
    parts += [f"{summary[key]} {label}" for key, label in _OPTIONAL_COUNTS if key in summary]
    if summary["verified"]:
        parts.append(f"verified: no key in {summary['snapshots_checked']} snapshot(s) kept or in storage"
                     + _refs_text(summary))
    else:
        parts.append(f"NOT verified: {summary['rows_after']} row(s), {summary['files_still_referenced']} "
                     f"referenced and {summary['files_still_stored']} stored file(s) still hold a key"
                     + (f"; kept by {', '.join(summary['blocking_refs'])}"
                        if summary["blocking_refs"] and "refs" not in summary else "")
                     + (f"; {summary['debris_pending']} unreadable file(s) younger than the debris age guard kept "
                        "(maybe a write in flight): run erase again once they are older"
                        if summary["debris_pending"] else "") + _refs_text(summary))
    return ", ".join(parts)


def _label(status: RequestStatus | Entry, today: date) -> str:
    return "OVERDUE" if status.overdue(today) else status.state


def _sla(met: bool | None) -> str:
    return "" if met is None else ("; SLA met" if met else "; SLA MISSED")


def counts(statuses: list[RequestStatus], today: date) -> dict[str, int]:
    found: dict[str, int] = {state: sum(s.state == state for s in statuses) for state in STATES}
    return {**found, "overdue": sum(s.overdue(today) for s in statuses), "sla_missed": sum(
        s.sla_met is False for s in statuses)}


def render_status(statuses: list[RequestStatus], today: date, paint: Paint) -> str:
    """A line per request (state, received, deadline, SLA), a line per table it reaches, then the totals."""
    width = max((len(s.request) for s in statuses), default=0)
    lines = []
    for status in statuses:
        label = _label(status, today)
        lines.append(f"{status.request.ljust(width)}  {paint(label.ljust(7), _COLOURS[label])}  received "
                     f"{status.received}, deadline {status.deadline}{_runs(status, today)}{_sla(status.sla_met)}")
        for entry in status.entries:
            when = f" {entry.done_at.date()}" if entry.state == "done" and entry.done_at else ""
            summary = proof_summary(entry.proof, entry.request)
            detail = f": {_proof_text(summary)}" if summary is not None and entry.state != "pending" else ""
            overdue = f" (OVERDUE since {entry.deadline})" if entry.overdue(today) else ""
            held = (f" (held for batching: runs on {entry.runs_on})" if entry.state == "pending" and entry.runs_on
                    and entry.runs_on > today else "")
            lines.append(f"    {entry.table}: {entry.state}{when}{held}{overdue}{detail}")
    total = counts(statuses, today)
    lines.append(f"{len(statuses)} request(s): " + ", ".join(f"{total[s]} {s}" for s in STATES)
                 + (paint(f"; {total['overdue']} OVERDUE", "red") if total["overdue"] else "")
                 + (paint(f"; {total['sla_missed']} done after the deadline", "red") if total["sla_missed"] else ""))
    return "\n".join(lines) + "\n"


def _runs(status: RequestStatus, today: date) -> str:
    """When a pending request held for batching runs: its day, or the next run once that day has come."""
    day = status.runs_on
    if status.state != "pending" or day is None:
        return ""
    return f", runs on {day}" if day > today else ", runs on the next erase"


def status_document(statuses: list[RequestStatus], today: date) -> dict[str, Any]:
    """The same as JSON: for monitoring, and as the certificate inside the proof file."""
    return {"today": today.isoformat(), "counts": counts(statuses, today), "requests": [{
        "id": s.request, "received": s.received.isoformat(), "deadline": s.deadline.isoformat(), "state": s.state,
        "runs_on": s.runs_on.isoformat() if s.runs_on else None,
        "overdue": s.overdue(today), "sla_met": s.sla_met, "tables": [{
            "table": e.table, "state": e.state, "deadline": e.deadline.isoformat(), "overdue": e.overdue(today),
            "done_at": e.done_at.isoformat() if e.done_at else None, "sla_met": e.sla_met,
            "proof": proof_summary(e.proof, e.request)} for e in s.entries]} for s in statuses]}


def status_json(statuses: list[RequestStatus], today: date, catalog: Mapping[str, str]) -> str:
    return json.dumps({"catalog": dict(catalog), **status_document(statuses, today)}, indent=2,
                      ensure_ascii=False) + "\n"


def dry_run_json(catalog: Mapping[str, str], today: date, previews: list[dict[str, Any]],
                 held: list[dict[str, Any]]) -> str:
    """erase --dry-run --format json: per table what holds the keys, the statements and the cost (no key value)."""
    return json.dumps({"catalog": dict(catalog), "dry_run": True, "today": today.isoformat(), "tables": previews,
                       "held": held}, indent=2, ensure_ascii=False) + "\n"


def proof_json(
    catalog: Mapping[str, str], erased_at: datetime, requests: list[str], tables: list[dict[str, Any]],
    skipped: list[Entry], certificate: list[RequestStatus], today: date, batches: list[dict[str, Any]] | None = None,
) -> str:
    """The proof file of one run: the requests it read, each table's proof as the engine wrote it (with no key
    value left in it), complete when every table's is, the (request, table) pairs the ledger had done
    before, and the certificate of every pair the run touched or skipped."""
    return json.dumps({
        "catalog": dict(catalog), "erased_at": erased_at.isoformat(), "requests": requests,
        "complete": all(t["complete"] for t in tables), "tables": tables,
        "skipped": [{"request": e.request, "table": e.table, "done_at": e.done_at.isoformat() if e.done_at else None}
                    for e in skipped],
        "batches": batches or [],
        "certificate": status_document(certificate, today)}, indent=2, ensure_ascii=False) + "\n"
