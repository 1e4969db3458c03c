"""erase and erase status: requests file -> the tables they reach -> the ledger -> Spark -> proof and certificate.

The ledger (runtime/ledger.py) says which (request, table) pairs an earlier run erased and proved: a run
skips them and says so, records every pair it starts as pending, and each table's outcome with its proof
as soon as that table is done. ``status`` reads only the ledger and the catalog (no JVM).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from compiler.catalog.config import CatalogConfig
from compiler.diagnostics import Diagnostic, Diagnostics
from compiler.erasure.ledger import Entry, Outstanding, State, outstanding, planned_entries, statuses, subject_entry
from compiler.erasure.plan import TableErasure, erasure_plan
from compiler.erasure.requests import LoadedRequests, load_requests, requests_format
from compiler.errors import PolicyError, TablePolicyError
from compiler.loader import Project, display_path
from compiler.model.names import format_name
from compiler.render.erasure import render_preview
from compiler.render.erasure_report import proof_json, render_status, status_json
from runtime.caches.folder import cache_dir
from runtime.cli.commands import open_reader, valid_project
from runtime.cli.exits import Exit
from runtime.cli.formats import StatusFormat
from runtime.cli.views import catalog_header, error, info, paint, show_diagnostics
from runtime.erasure.proof import ProofState, TableProof
from runtime.erasure.refs import CHOICES, blocked_text
from runtime.target import resolve_target

if TYPE_CHECKING:
    from runtime.ledger import Ledger
    from runtime.spark.session import SessionOnDemand


@dataclass(frozen=True)
class Reached:
    """A requests file checked against the policies and the catalog: the tables each request reaches."""

    requests: LoadedRequests
    tables: list[TableErasure]
    debris_ages: dict[tuple[str, ...], timedelta]  # table -> its lifecycle.orphan_files.older_than, if declared


def clock() -> datetime:
    """The run's instant (tests replace it: none depends on the real clock)."""
    return datetime.now(UTC)


def debris_min_age(text: str) -> timedelta:
    """``--debris-min-age``: a duration as the policies write them (0s, 1h, 3d)."""
    from compiler.spec.units import Duration

    try:
        return timedelta(milliseconds=Duration.parse(text).millis)
    except ValueError as exc:
        raise TablePolicyError(f"--debris-min-age: {exc}") from None


def read_requests(path: Path, requests_file: Path, reader: Any, environment: str | None = None) -> Reached:
    """Parse the file (format by extension) and plan it on ``path``'s tables (with ``environment``'s overlay:
    its erasure SLA is the one that counts); every finding raises at once."""
    project = valid_project(path, environment=environment)
    name = display_path(requests_file)
    kind = requests_format(name)
    if isinstance(kind, Diagnostic):
        raise PolicyError(Diagnostics([kind]))
    try:
        text = requests_file.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise TablePolicyError(f"--requests {name}: it is not UTF-8 text; save it as UTF-8") from None
    except OSError as exc:
        raise TablePolicyError(f"--requests {name}: cannot read it ({(exc.strerror or 'unreadable').lower()}); give "
                               "the path of a readable requests file") from None
    requests, diagnostics = load_requests(text, name)
    if requests is None:
        raise PolicyError(diagnostics)
    show_diagnostics(diagnostics)  # warnings: a request listed twice alike
    tables, findings = erasure_plan(project, requests, _states(project, reader))
    if findings.has_errors:
        raise PolicyError(findings)
    return Reached(requests, tables, _debris_ages(project))


def _debris_ages(project: Project) -> dict[tuple[str, ...], timedelta]:
    """The orphan guard each table declares: erase keeps unreadable unreferenced files younger than it."""
    from compiler.effective import effective_settings

    ages = {}
    for table in project.tables:
        orphans = effective_settings(project, table).lifecycle.orphan_files
        if orphans is not None and orphans.older_than is not None:
            ages[table.name] = timedelta(milliseconds=orphans.older_than.millis)
    return ages


def _states(project: Project, reader: Any) -> dict[tuple[str, ...], Any]:
    return {t.name: current.state for t in project.tables if (current := reader.table(t.name)) is not None}


def erase(
    path: Path, requests_file: Path, catalog: str | None, *, dry_run: bool, proof: Path | None, master: str,
    conf: list[str], environment: str | None = None, debris_age: str | None = None,
) -> int:
    """``debris_age``: ``--debris-min-age``, overriding each table's orphan guard (3d when none is declared)."""
    from runtime.ledger import opened_ledger

    override = debris_min_age(debris_age) if debris_age is not None else None
    now = clock()

    target = resolve_target(path, catalog, environment)
    config = target.catalog
    catalog_header(target)
    with open_reader(config) as reader:
        reached = read_requests(path, requests_file, reader, environment)  # every finding before the ledger is touched
        with opened_ledger(reader, cache_dir(path), create=not dry_run) as ledger:
            outcomes, todo, today = _run(reached, ledger, config, path, dry_run=dry_run, master=master, conf=conf,
                                         now=now, debris_age=override)
    if outcomes is None:
        return Exit.OK
    entries = todo.done + [e for _, recorded in outcomes for e in recorded]
    if entries:
        info("Certificate (no key values):")
        info(_indent(render_status(statuses(entries), today, lambda t, c: paint(t, c))))
        for line in _debris_lines([p for p, _ in outcomes or []]):
            info(f"  {line}")
    if proof is not None:
        tables = [_scrubbed(p.as_json(), table) for (p, _), table in zip(outcomes, todo.tables, strict=True)]
        ids = [r.id for r in reached.requests.model.requests]
        proof.write_text(proof_json(config.summary(), clock(), ids, tables, todo.done, statuses(entries),
                                    today), encoding="utf-8")
    return Exit.OK if all(p.state in (ProofState.COMPLETE, ProofState.HELD) for p, _ in outcomes) else Exit.ERROR


def _run(
    reached: Reached, ledger: Ledger, config: CatalogConfig, path: Path, *, dry_run: bool, master: str,
    conf: list[str], now: datetime, debris_age: timedelta | None,
) -> tuple[list[tuple[TableProof, list[Entry]]] | None, Outstanding, date]:
    """Skip what the ledger says is done, show the rest, and (unless a dry run) erase it table by table."""
    from runtime.ledger import new_salt, now_utc

    _ledger_note(ledger)
    todo = outstanding(reached.tables, ledger.entries(format_name(t.table) for t in reached.tables),
                       reached.requests)
    if todo.findings.has_errors:
        raise PolicyError(todo.findings)
    today = now.date()
    session = None
    if todo.tables and not dry_run:  # started only if a step needs Spark (runtime/erasure/commits.py says why)
        from runtime.spark.session import SessionOnDemand, SparkOptions

        session = SessionOnDemand(config, SparkOptions.from_flags(master, conf))
    _show_plan(reached.tables, todo.tables, todo.done, config, today, dry_run=dry_run)
    if dry_run:
        return None, todo, today
    received = {r.id: r.received for r in reached.requests.model.requests}
    salt = new_salt()
    ledger.record_pending([subject_entry(t, s, received[s.request], State.PENDING, salt)
                           for t in todo.tables for s in t.subjects], now_utc())
    outcomes = [_erase_table(table, config, ledger, received, salt, path, session, now,
                             debris_age if debris_age is not None else reached.debris_ages.get(table.table))
                for table in todo.tables if session is not None]
    return outcomes, todo, today


def _show_plan(
    reached: list[TableErasure], todo: list[TableErasure], done: list[Entry], config: CatalogConfig, today: date,
    *, dry_run: bool,
) -> None:
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
    if dry_run and todo:  # what holds the keys and every statement a run starts with, read without a JVM
        from runtime.erase import preview_erasure

        for preview in preview_erasure(todo, config, lambda warning: info(f"  {warning}")):
            info(render_preview(preview).rstrip("\n"))
    if not todo:
        info("Nothing to erase: every request is done on every table it reaches.")


def _erase_table(
    table: TableErasure, config: CatalogConfig, ledger: Ledger, received: dict[str, date], salt: str, path: Path,
    session: SessionOnDemand, started: datetime, debris_age: timedelta | None,
) -> tuple[TableProof, list[Entry]]:
    """Erase one table and record its outcome at once: a run stopped later keeps what this table achieved.
    ``debris_age``: the table's debris guard (None: Iceberg's 3-day orphan default)."""
    from runtime.erase import age_text, run_erasure
    from runtime.erasure.leftovers import DEBRIS_MIN_AGE
    from runtime.ledger import now_utc

    (proof,) = run_erasure([table], config, session.options, lock_dir=cache_dir(path),
                           on_progress=lambda message: info(f"  {message}"), session=session, now=started,
                           debris_min_age=DEBRIS_MIN_AGE if debris_age is None else debris_age)
    state = State.DONE if proof.complete else State.HELD if proof.state is ProofState.HELD else State.FAILED
    now = now_utc()
    document = _scrubbed(proof.as_json(), table)
    entries = [subject_entry(table, s, received[s.request], state, salt) for s in table.subjects]
    ledger.record(entries, document, now)
    verdict = (paint("erased and proven", "green") if proof.complete else paint("held", "yellow", bold=True)
               if proof.state is ProofState.HELD else paint("NOT complete", "red", bold=True))
    info(f"  {format_name(proof.table)}: {proof.rows_before} row(s) in {len(proof.files_with_keys)} file(s): "
         f"{verdict}; {len(proof.snapshots_checked)} snapshot(s) checked, {proof.rows_after} row(s) found after")
    for ref, files in proof.held_by.items():
        info(f"  {format_name(proof.table)}: legal hold '{ref}' keeps {len(files)} file(s) holding a key")
    for outcome in proof.refs:
        if outcome.decision in ("rewrite", "expire"):
            info(f"  {format_name(proof.table)}: {outcome.kind} '{outcome.ref}' {outcome.outcome} "
                 f"({outcome.reason}); it kept {len(outcome.files)} file(s) holding a key of "
                 f"{', '.join(outcome.requests)}")
    if document["error"]:
        error(document["error"])
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
    recorded = [Entry(e.request, e.table, e.received, e.deadline, e.state, e.fingerprint, document, now,
                      now if state == State.DONE else None) for e in entries]
    return proof, recorded


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


def mask_value(text: str, value: str) -> str:
    """``text`` with ``value`` masked wherever it stands as a value: a word-like value (``u1``, ``_``) only as a
    whole word, so it is not masked inside identifiers (``vals.values_spark``) or longer values; any other
    value wherever it occurs (masking too much is safe, too little is not)."""
    if re.fullmatch(r"\w+", value):
        return re.sub(rf"(?<!\w){re.escape(value)}(?!\w)", "***", text)
    return text.replace(value, "***")


def _scrubbed(proof: dict[str, Any], table: TableErasure) -> dict[str, Any]:
    """The proof with no key value in it: an error's statement (which holds the keys) is cut, and any value
    Spark quoted in its first line is masked."""
    message = proof.get("error")
    if message:
        message = str(message).split("\n", 1)[0]
        for value in sorted({str(v) for s in table.subjects for v in s.values}, key=len, reverse=True):
            message = mask_value(message, value)
        proof = {**proof, "error": message + " (statement withheld: it holds key values)"}
    return proof


def status(
    path: Path, catalog: str | None, *, requests_file: Path | None, output: StatusFormat,
    environment: str | None = None,
) -> int:
    """Each request of the ledger (or of ``requests_file``) on the tables of ``path``; exit 1 if one is overdue."""
    from runtime.ledger import opened_ledger

    target = resolve_target(path, catalog, environment)
    config = target.catalog
    if output is StatusFormat.text:
        catalog_header(target)
    today = datetime.now(UTC).date()
    with open_reader(config) as reader, opened_ledger(reader, cache_dir(path), create=False) as ledger:
        _ledger_note(ledger)
        if requests_file is not None:
            reached = read_requests(path, requests_file, reader, environment)
            names = [format_name(t.table) for t in reached.tables]
            recorded = ledger.entries(names)
            received = {r.id: r.received for r in reached.requests.model.requests}
            entries = [recorded.get((e.request, e.table), e) for e in planned_entries(reached.tables, received)]
        else:
            project = valid_project(path, environment=environment)
            entries = list(ledger.entries(format_name(t.name) for t in project.tables).values())
    found = statuses(entries)
    if output is StatusFormat.json:
        typer.echo(status_json(found, today, config.summary()), nl=False)
    elif not found:
        info(f"No erasure request recorded for these tables in {ledger.where}.")
    else:
        typer.echo(render_status(found, today, lambda t, c: paint(t, c)), nl=False)
    return Exit.ERROR if any(s.overdue(today) for s in found) else Exit.OK


def _ledger_note(ledger: Ledger) -> None:
    if ledger.note:  # a warning, not an error: the run goes on with the project's ledger file
        typer.echo(f"{paint('warning:', 'yellow', err=True)} {ledger.note}", err=True)


def _few(items: Iterable[str], limit: int = 10) -> str:
    listed = list(items)
    return ", ".join(listed[:limit]) + (f" and {len(listed) - limit} more" if len(listed) > limit else "")


def _indent(text: str) -> str:
    return "".join(f"  {line}\n" for line in text.splitlines())
