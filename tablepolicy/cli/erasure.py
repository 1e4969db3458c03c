"""erase and erase status: tablepolicy.erase and tablepolicy.erase_status rendered while they run.

What the run decides and does arrives as tablepolicy.events values: the tables the requests reach (and, in a dry
run, what holds the keys), each step, each table erased and proven; then the certificate and the proof file.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, date, datetime
from pathlib import Path

import typer

import tablepolicy
from tablepolicy.compiler.erasure.ledger import Entry
from tablepolicy.compiler.erasure.plan import TableErasure
from tablepolicy.compiler.iceberg.names import format_name
from tablepolicy.compiler.render.erasure import render_preview
from tablepolicy.compiler.render.erasure_report import dry_run_json, render_status, status_json
from tablepolicy.compiler.render.maintenance_report import byte_size
from tablepolicy.runtime.erase_run import ErasureOutcome, debris_min_age, proof_document
from tablepolicy.runtime.erase_run import cluster_above as size_flag
from tablepolicy.runtime.erasure.proof import ProofState, TableProof
from tablepolicy.runtime.erasure.pruning import Evidence
from tablepolicy.runtime.erasure.refs import CHOICES, blocked_text

from ..events import ErasureDecided, ErasureProgress, Event, LedgerNote, TableErased
from .exits import Exit
from .formats import StatusFormat
from .output import catalog_header, error, info, paint, show_diagnostics


def clock() -> datetime:
    """The run's instant (tests replace it: none depends on the real clock)."""
    return datetime.now(UTC)


def erase(
    path: Path, requests_file: Path | None, catalog: str | None, *, dry_run: bool, proof: Path | None, master: str,
    conf: list[str], environment: str | None = None, debris_age: str | None = None, requests_table: str | None = None,
    prune: bool = True, cluster_above: str | None = None, output: StatusFormat = StatusFormat.text,
) -> int:
    """``debris_age``: ``--debris-min-age``, overriding each table's orphan guard (3d when none is declared);
    ``cluster_above``: ``--cluster-above``, overriding each table's lifecycle.erasure.cluster_above."""
    override = debris_min_age(debris_age) if debris_age is not None else None
    threshold = size_flag(cluster_above) if cluster_above is not None else None
    run = tablepolicy.invocation(path, catalog=catalog, environment=environment, now=clock())  # once: the API takes it
    machine = output is StatusFormat.json  # stdout holds the JSON alone; progress goes to stderr
    catalog_header(run.target, err=machine)

    blocked: list[str] = []  # a dry run's tables whose erasure a tag or branch would block

    def told(event: Event) -> None:
        if machine:
            _told_machine(event, blocked)
            return
        match event:
            case LedgerNote(text):
                _ledger_note(text)
            case ErasureDecided():
                show_diagnostics(event.findings)  # warnings: a request listed twice alike
                _show_plan(event)
                blocked.extend(f"{format_name(p.table)} (by {', '.join(p.blocking_refs)})" for p in event.previews
                               if p.blocking_refs)
            case ErasureProgress(message):
                info(f"  {message}")
            case TableErased(proof_of_table, _, document):
                _show_table(proof_of_table, document)
            case _:
                pass  # maintain's events: not sent by erase

    outcome = tablepolicy.erase(run, requests=requests_file, requests_table=requests_table, dry_run=dry_run,
                                proof=proof, spark_master=master,
                                spark_conf=dict(item.split("=", 1) for item in conf), debris_min_age=override,
                                cluster_above=threshold, progress=told, prune=prune)
    if machine:
        typer.echo(_json(outcome, run.now), nl=False)
    if dry_run:
        if blocked:  # the run would stop there: the dry run says so with its exit code, not only in its text
            error(f"the erasure would be blocked on {', '.join(blocked)}: a tag or branch keeps a file holding a "
                  "key and lifecycle.erasure.refs decides nothing for it; declare hold, rewrite or expire for it, "
                  "then run again")
            return Exit.ERROR
        return Exit.OK
    if outcome.certificate:
        info("Certificate (no key values):")
        info(_indent(render_status(list(outcome.certificate), outcome.today, lambda t, c: paint(t, c))))
        for line in _debris_lines([t.proof for t in outcome.tables]):
            info(f"  {line}")
    for batch in outcome.batches:
        if batch.joined:
            info(f"  {batch.table}: one rewrite for {len(batch.due) + len(batch.joined)} request(s): due "
                 f"{_few(batch.due)}; batched with them before their own run day: {_few(batch.joined)}")
    if outcome.request_store is not None:
        store = outcome.request_store
        info(f"  request table {store.table}: the keys of {', '.join(store.requests)} replaced by their fingerprint; "
             f"{store.snapshots_expired} older snapshot(s) expired, {store.files_deleted} file(s) deleted; "
             f"{store.snapshots_checked} snapshot(s) left, none holds their keys")
    return Exit.OK if outcome.complete else Exit.ERROR


def _told_machine(event: Event, blocked: list[str]) -> None:
    """--format json: what a terminal would read goes to stderr as plain lines; the JSON comes at the end."""
    match event:
        case ErasureDecided():
            blocked.extend(f"{format_name(p.table)} (by {', '.join(p.blocking_refs)})" for p in event.previews
                           if p.blocking_refs)
        case ErasureProgress(message):
            typer.echo(f"  {message}", err=True)
        case LedgerNote(text):
            typer.echo(text, err=True)
        case TableErased(_, _, document) if document["error"]:  # in the JSON too; a person reading stderr sees why
            error(str(document["error"]))
        case _:
            pass


def _json(outcome: ErasureOutcome, now: datetime) -> str:
    """A dry run's previews (what holds the keys, the statements, the cost), else the run's proof document."""
    if not outcome.dry_run:
        return proof_document(outcome, now)
    held = [{"table": format_name(t.table), "requests": t.requests()} for t in outcome.held]
    return dry_run_json(outcome.target.catalog.summary(), outcome.today, [p.as_json() for p in outcome.previews],
                        held)


def _show_plan(decided: ErasureDecided) -> None:
    _show_reached(list(decided.reached), list(decided.todo), list(decided.done), decided.today)
    for warning in decided.preview_warnings:
        info(f"  {warning}")
    for preview in decided.previews:
        info(render_preview(preview).rstrip("\n"))
    for table in decided.held:
        day = min(s.deadline - table.margin for s in table.subjects if table.margin is not None)
        deadline = min(s.deadline for s in table.subjects)
        info(f"- {format_name(table.table)}: {len(table.subjects)} request(s) held for batching "
             f"(lifecycle.erasure.batch_margin): runs on {day}, earliest deadline {deadline}")
    if not decided.todo and not decided.held:
        info("Nothing to erase: every request is done on every table it reaches.")
    elif not decided.todo:
        info("Nothing to erase today: every pending request is held for batching.")


def _show_reached(reached: list[TableErasure], todo: list[TableErasure], done: list[Entry], today: date) -> None:
    skipped: dict[str, list[Entry]] = {}
    for entry in done:
        skipped.setdefault(entry.table, []).append(entry)
    remaining = {t.table: t for t in todo}
    for table in reached:
        name = format_name(table.table)
        if name in skipped:
            last = max((e.done_at for e in skipped[name] if e.done_at), default=None)
            info(f"- {name}: skipped {len(skipped[name])} request(s) already erased and proven"
                 + (f" (last on {last.date()})" if last else "") + " (the ledger says so)")
        current = remaining.get(table.table)
        if current is None:
            continue
        deadline = min(s.deadline for s in current.subjects)
        late = sorted({s.request for s in current.subjects if s.deadline < today})
        info(paint(f"- {current.summary} (earliest deadline {deadline})", "red")
             + (paint(f"; overdue: {_few(late)}", "red", bold=True) if late else ""))


def _show_table(proof: TableProof, document: dict[str, object]) -> None:
    """One table's outcome as soon as it is recorded: erased and proven, held, or not complete and why."""
    from tablepolicy.runtime.erase import age_text

    verdict = (paint("erased and proven", "green") if proof.complete else paint("held", "yellow", bold=True)
               if proof.state is ProofState.HELD else paint("NOT complete", "red", bold=True))
    info(f"  {format_name(proof.table)}: {proof.rows_before} row(s) in {len(proof.files_with_keys)} file(s): "
         f"{verdict}; {len(proof.snapshots_checked)} snapshot(s) checked, {proof.rows_after} row(s) found after")
    if proof.files_scanned:
        info(f"  {format_name(proof.table)}: {_pruning_text(proof)}")
    if proof.survey_ran is not None and proof.proof_ran is not None:
        info(f"  {format_name(proof.table)}: files read by the survey in {proof.survey_ran.text}; by the proof in "
             f"{proof.proof_ran.text}")
    for ref, files in proof.held_by.items():
        info(f"  {format_name(proof.table)}: legal hold '{ref}' keeps {len(files)} file(s) holding a key")
    for outcome in proof.refs:
        if outcome.decision in ("rewrite", "expire"):
            info(f"  {format_name(proof.table)}: {outcome.kind} '{outcome.ref}' {outcome.outcome} "
                 f"({outcome.reason}); it kept {len(outcome.files)} file(s) holding a key of "
                 f"{', '.join(outcome.requests)}")
    if document["error"]:
        error(str(document["error"]))
    pending = {d.path for d in proof.debris_pending}
    for debris in proof.debris_pending:
        error(f"{format_name(proof.table)}: {debris.path} cannot be read and no snapshot reads it, but it was written "
              f"at {_utc(debris.mtime)}, less than {age_text(debris.retry_after - debris.mtime)} ago (the debris age "
              "guard): it may be a write in flight (another "
              f"writer's file not committed yet), so it was kept; run erase again after {_utc(debris.retry_after)}, "
              "or pass --debris-min-age 0s when no writer can be running (after a known crash)")
    for unreadable in proof.unreadable:
        if unreadable in pending:
            continue
        error(f"{format_name(proof.table)}: {unreadable} cannot be read as parquet, so the proof cannot show it holds "
              "no key; repair or remove it and run erase again")
    blocked = {o.ref: o for o in proof.refs if o.decision is None}
    for ref in proof.blocking_refs:
        if (found := blocked.get(ref)) is not None:
            error(blocked_text(proof.table, found.kind, ref, found.snapshot_before, len(found.files), found.requests))
        else:
            error(f"{format_name(proof.table)}: '{ref}' still keeps a snapshot whose files hold the keys; declare "
                  f"lifecycle.erasure.refs: {{{ref}: hold | rewrite | expire}} ({CHOICES}) and run erase again")


def _pruning_text(proof: TableProof) -> str:
    """What the proof read: the files whose key columns it read, and those metadata excluded, by evidence."""
    pruning = proof.pruning
    read = (f"the proof read the key columns of {pruning.files_read} of {proof.files_scanned} file(s) "
            f"({byte_size(pruning.bytes_read)} of {byte_size(proof.bytes_scanned)})")
    if not pruning.enabled:
        return read + "; pruning off (--no-prune)"
    excluded = [f"{n} by {what}" for evidence, what in ((Evidence.BOUNDS, "manifest bounds"),
                                                        (Evidence.STATISTICS, "row-group statistics"),
                                                        (Evidence.BLOOM_FILTER, "bloom filters"),
                                                        (Evidence.NO_KEY_COLUMN, "a footer without a key column"))
                if (n := pruning.excluded(evidence))]
    return read + (f"; excluded unread: {', '.join(excluded)}" if excluded else "")


def _debris_lines(proofs: list[TableProof]) -> list[str]:
    """The certificate's deletions of unreadable files no snapshot read (render_status counts only the rows'
    files and snapshots), and those kept as maybe a write in flight."""
    lines = []
    for proof in proofs:
        name = format_name(proof.table)
        if proof.debris_deleted:
            lines.append(f"{name}: {len(proof.debris_deleted)} unreadable file(s) no snapshot read deleted (debris a "
                         "killed writer left; it might have held a key)")
        if proof.debris_pending:
            after = max(d.retry_after for d in proof.debris_pending)
            lines.append(paint(f"{name}: {len(proof.debris_pending)} unreadable file(s) no snapshot reads kept: "
                               f"maybe a write in flight; run erase again after {_utc(after)}", "yellow"))
    return lines


def _utc(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def status(
    path: Path, catalog: str | None, *, requests_file: Path | None, output: StatusFormat,
    environment: str | None = None, requests_table: str | None = None,
) -> int:
    """Each request of the ledger (or of ``requests_file``) on the tables of ``path``; exit 1 if one is overdue."""
    run = tablepolicy.invocation(path, catalog=catalog, environment=environment)
    target = run.target
    if output is StatusFormat.text:
        catalog_header(target)
    found = tablepolicy.erase_status(run, requests=requests_file, requests_table=requests_table)
    if found.note:
        _ledger_note(found.note)
    if output is StatusFormat.json:
        typer.echo(status_json(list(found.statuses), found.today, target.catalog.summary()), nl=False)
    elif not found.statuses:
        info(f"No erasure request recorded for these tables in {found.ledger}.")
    else:
        typer.echo(render_status(list(found.statuses), found.today, lambda t, c: paint(t, c)), nl=False)
    return Exit.ERROR if found.overdue else Exit.OK


def _ledger_note(note: str) -> None:
    """A warning, not an error: the run goes on with the project's ledger file."""
    typer.echo(f"{paint('warning:', 'yellow', err=True)} {note}", err=True)


def _few(items: Iterable[str], limit: int = 10) -> str:
    listed = list(items)
    return ", ".join(listed[:limit]) + (f" and {len(listed) - limit} more" if len(listed) > limit else "")


def _indent(text: str) -> str:
    return "".join(f"  {line}\n" for line in text.splitlines())
