"""erase and erase_status: requests file -> the tables they reach -> the ledger -> Spark -> proof and certificate.

The ledger (runtime/ledger.py) says which (request, table) pairs an earlier run erased and proved: a run skips
them, records every pair it starts as pending, and each table's outcome with its proof as soon as that table is
done. ``erase_status`` reads only the ledger and the catalog (no JVM). What a run decides and does is told to the
``progress`` callback as tablepolicy.events values, so the CLI shows it while the run goes on.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tablepolicy.compiler.diagnostics import Diagnostic, Diagnostics
from tablepolicy.compiler.erasure.ledger import (
    Entry,
    RequestStatus,
    State,
    outstanding,
    planned_entries,
    statuses,
    subject_entries,
)
from tablepolicy.compiler.erasure.plan import ErasurePreview, TableErasure, erasure_plan
from tablepolicy.compiler.erasure.requests import LoadedRequests, load_requests, requests_format
from tablepolicy.compiler.errors import PolicyError, TablePolicyError
from tablepolicy.compiler.iceberg.names import format_name
from tablepolicy.compiler.loader import Project, display_path

from .caches.folder import cache_dir
from .erasure.proof import ProofState, TableProof
from .events import ErasureDecided, ErasureProgress, LedgerNote, ProgressCallback, TableErased
from .target import Target

if TYPE_CHECKING:
    from tablepolicy.compiler.catalog.config import CatalogConfig
    from tablepolicy.compiler.paths import ProjectPaths

    from .catalog.reader import CatalogReader
    from .ledger import Ledger
    from .spark.session import SessionOnDemand


@dataclass(frozen=True)
class Reached:
    """A requests file checked against the policies and the catalog: the tables each request reaches."""

    requests: LoadedRequests
    tables: list[TableErasure]
    debris_ages: dict[tuple[str, ...], timedelta]  # table -> its lifecycle.orphan_files.older_than, if declared
    findings: Diagnostics  # warnings: a request listed twice alike


@dataclass(frozen=True)
class ErasedTable:
    """One table's erasure: its proof, the ledger entries recorded for it, and the proof document as recorded
    (no key value in it)."""

    proof: TableProof
    entries: tuple[Entry, ...]
    document: dict[str, Any]


@dataclass(frozen=True)
class ErasureOutcome:
    """What a run of ``erase`` found and did. ``tables``: each table erased (empty in a dry run);
    ``skipped``: the (request, table) pairs the ledger had done before; ``certificate``: each pair's status."""

    target: Target
    reached: Reached
    todo: tuple[TableErasure, ...]
    skipped: tuple[Entry, ...]
    tables: tuple[ErasedTable, ...]
    certificate: tuple[RequestStatus, ...]
    today: date
    dry_run: bool

    @property
    def complete(self) -> bool:
        """Every table erased and proven, or held by a declared legal hold."""
        return all(t.proof.state in (ProofState.COMPLETE, ProofState.HELD) for t in self.tables)


@dataclass(frozen=True)
class ErasureStatus:
    """Each request the ledger knows (or the requests file names) on the selected tables, as of ``today``."""

    target: Target
    statuses: tuple[RequestStatus, ...]
    today: date
    ledger: str  # where the ledger is kept ("catalog database" or its file)
    note: str | None  # why the ledger is not kept with the catalog, when it is not

    @property
    def overdue(self) -> bool:
        return any(s.overdue(self.today) for s in self.statuses)


def debris_min_age(text: str, flag: str = "--debris-min-age") -> timedelta:
    """A duration as the policies write them (0s, 1h, 3d)."""
    from tablepolicy.compiler.policy.units import Duration

    try:
        return timedelta(milliseconds=Duration.parse(text).millis)
    except ValueError as exc:
        raise TablePolicyError(f"{flag}: {exc}") from None


def read_requests(project: Project, requests_file: Path, reader: CatalogReader) -> Reached:
    """Parse the file (format by extension) and plan it on the project's tables; every finding raises at once."""
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
    states = {t.name: current.state for t in project.tables if (current := reader.table(t.name)) is not None}
    tables, findings = erasure_plan(project, requests, states)
    if findings.has_errors:
        raise PolicyError(findings)
    return Reached(requests, tables, _debris_ages(project), diagnostics)


def _debris_ages(project: Project) -> dict[tuple[str, ...], timedelta]:
    """The orphan guard each table declares: erase keeps unreadable unreferenced files younger than it."""
    from tablepolicy.compiler.effective import effective_settings

    ages = {}
    for table in project.tables:
        orphans = effective_settings(project, table).lifecycle.orphan_files
        if orphans is not None and orphans.older_than is not None:
            ages[table.name] = timedelta(milliseconds=orphans.older_than.millis)
    return ages


def erase(
    paths: ProjectPaths, requests_file: Path, chosen: Target, project: Project, *, dry_run: bool,
    spark: Mapping[str, Any], now: datetime, debris_age: timedelta | None, progress: ProgressCallback,
) -> ErasureOutcome:
    """The body of tablepolicy.erase (tablepolicy/api.py checks the arguments and finds the project)."""
    from .catalog.reader import CatalogReader
    from .ledger import new_salt, now_utc, opened_ledger

    config = chosen.catalog
    with CatalogReader(config, create=False) as reader:
        reached = read_requests(project, requests_file, reader)  # every finding before the ledger is touched
        with opened_ledger(reader, cache_dir(paths), create=not dry_run) as ledger:
            if ledger.note:
                progress(LedgerNote(ledger.note))
            todo = outstanding(reached.tables, ledger.entries(format_name(t.table) for t in reached.tables),
                               reached.requests)
            if todo.findings.has_errors:
                raise PolicyError(todo.findings)
            today = now.date()
            session = None
            if todo.tables and not dry_run:  # started only if a step needs Spark (runtime/erasure/commits.py)
                from .spark.session import SessionOnDemand, SparkOptions

                session = SessionOnDemand(config, SparkOptions.from_flags(spark["master"], spark["conf"]))
            previews: tuple[ErasurePreview, ...] = ()
            warnings: list[str] = []
            if dry_run and todo.tables:  # what holds the keys and every statement a run starts with, no JVM
                from .erase import preview_erasure

                previews = tuple(preview_erasure(todo.tables, config, warnings.append))
            progress(ErasureDecided(tuple(reached.tables), tuple(todo.tables), tuple(todo.done), today, dry_run,
                                    previews, tuple(warnings), reached.findings))
            erased: list[ErasedTable] = []
            if not dry_run and session is not None:
                received = {r.id: r.received for r in reached.requests.model.requests}
                salt = new_salt()
                pending = [e for t in todo.tables for e in subject_entries(t, received, State.PENDING, salt)]
                ledger.record_pending(pending, now_utc())
                for table in todo.tables:
                    age = debris_age if debris_age is not None else reached.debris_ages.get(table.table)
                    done = _erase_table(table, config, ledger, received, salt, paths, session, now, age, progress)
                    erased.append(done)
                    progress(TableErased(done.proof, done.entries, done.document))
    entries = [*todo.done, *(e for t in erased for e in t.entries)]
    return ErasureOutcome(chosen, reached, tuple(todo.tables), tuple(todo.done), tuple(erased),
                          tuple(statuses(entries)), today, dry_run)


def _erase_table(
    table: TableErasure, config: CatalogConfig, ledger: Ledger, received: dict[str, date], salt: str,
    paths: ProjectPaths, session: SessionOnDemand, started: datetime, debris_age: timedelta | None,
    progress: ProgressCallback,
) -> ErasedTable:
    """Erase one table and record its outcome at once: a run stopped later keeps what this table achieved.
    ``debris_age``: the table's debris guard (None: Iceberg's 3-day orphan default)."""
    from .erase import run_erasure
    from .erasure.leftovers import DEBRIS_MIN_AGE
    from .ledger import now_utc

    (proof,) = run_erasure([table], config, session.options, lock_dir=cache_dir(paths),
                           on_progress=lambda message: progress(ErasureProgress(message)), session=session,
                           now=started, debris_min_age=DEBRIS_MIN_AGE if debris_age is None else debris_age)
    state = State.DONE if proof.complete else State.HELD if proof.state is ProofState.HELD else State.FAILED
    now = now_utc()
    document = scrubbed(proof.as_json(), table)
    entries = subject_entries(table, received, state, salt)
    ledger.record(entries, document, now)
    recorded = tuple(Entry(e.request, e.table, e.received, e.deadline, e.state, e.fingerprint, document, now,
                           now if state == State.DONE else None) for e in entries)
    return ErasedTable(proof, recorded, document)


def proof_document(outcome: ErasureOutcome, erased_at: datetime) -> str:
    """The proof file of a run (``erase --proof``): no key value in it."""
    from tablepolicy.compiler.render.erasure_report import proof_json

    ids = [r.id for r in outcome.reached.requests.model.requests]
    return proof_json(outcome.target.catalog.summary(), erased_at, ids, [t.document for t in outcome.tables],
                      list(outcome.skipped), list(outcome.certificate), outcome.today)


def erase_status(paths: ProjectPaths, chosen: Target, project: Project, requests_file: Path | None, today: date
                 ) -> ErasureStatus:
    """The body of tablepolicy.erase_status."""
    from .catalog.reader import CatalogReader
    from .ledger import opened_ledger

    with CatalogReader(chosen.catalog, create=False) as reader, \
            opened_ledger(reader, cache_dir(paths), create=False) as ledger:
        if requests_file is not None:
            reached = read_requests(project, requests_file, reader)
            recorded = ledger.entries([format_name(t.table) for t in reached.tables])
            received = {r.id: r.received for r in reached.requests.model.requests}
            entries = [recorded.get((e.request, e.table), e) for e in planned_entries(reached.tables, received)]
        else:
            entries = list(ledger.entries(format_name(t.name) for t in project.tables).values())
        return ErasureStatus(chosen, tuple(statuses(entries)), today, ledger.where, ledger.note)


def mask_value(text: str, value: str) -> str:
    """``text`` with ``value`` masked wherever it stands as a value: a word-like value (``u1``, ``_``) only as a
    whole word, so it is not masked inside identifiers (``vals.values_spark``) or longer values; any other
    value wherever it occurs (masking too much is safe, too little is not)."""
    if re.fullmatch(r"\w+", value):
        return re.sub(rf"(?<!\w){re.escape(value)}(?!\w)", "***", text)
    return text.replace(value, "***")


def scrubbed(proof: dict[str, Any], table: TableErasure) -> dict[str, Any]:
    """The proof with no key value in it: an error's statement (which holds the keys) is cut, and any value
    Spark quoted in its first line is masked."""
    message = proof.get("error")
    if message:
        message = str(message).split("\n", 1)[0]
        for value in sorted({str(v) for s in table.subjects for v in s.values}, key=len, reverse=True):
            message = mask_value(message, value)
        proof = {**proof, "error": message + " (statement withheld: it holds key values)"}
    return proof
